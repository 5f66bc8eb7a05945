//! How the cost grows with the payload, and what it costs end to end over a link.
//!
//! **Scaling.** Most API payloads are a list of records, at the root or under a key (`$.data`).
//! [`find_records`] finds that list (the root array, else `data`, else the longest array under a
//! top-level key); [`slice_records`] keeps its first *n* records and everything around them, so a
//! sweep measures the same payload at 1, 10, 100, 1 000, 10 000… records.
//!
//! **Transfer.** [`estimate`] adds the measured encode time, the time the bytes take on a
//! [`Link`] (size / bandwidth + one round trip), and the decode time; with compression it adds
//! the measured gzip compress and decompress times and sends the gzip size instead. It is a
//! model, not a measurement: no TCP slow start, no TLS, one round trip per payload.

use serde::Serialize;

use crate::codec::Format;
use crate::model::{CompactText, Value};

use super::bench::Measurement;
use super::libs::Library;

/// Where the records of a payload are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Records {
    /// `$` for a root array, else `$.key`.
    pub path: String,
    /// The top-level key holding them (`None` for a root array).
    #[serde(skip)]
    pub key: Option<String>,
    /// How many records there are.
    pub count: usize,
}

/// The list of records in `value`: the root array, else the array under `data`, else the
/// longest array under a top-level text key (with at least 2 items). `None` when there is none.
pub fn find_records(value: &Value) -> Option<Records> {
    match value {
        Value::Array(items) => Some(Records {
            path: "$".into(),
            key: None,
            count: items.len(),
        }),
        Value::Map(entries) => {
            let arrays = entries.iter().filter_map(|(k, v)| match (k, v) {
                (Value::Text(k), Value::Array(items)) => Some((k, items.len())),
                _ => None,
            });
            let data = entries.iter().find_map(|(k, v)| match (k, v) {
                (Value::Text(k), Value::Array(items)) if k == "data" => Some((k, items.len())),
                _ => None,
            });
            let (key, count) = data.or_else(|| {
                arrays.filter(|&(_, n)| n >= 2).fold(
                    None,
                    |best: Option<(&CompactText, usize)>, (k, n)| match best {
                        Some((_, m)) if m >= n => best,
                        _ => Some((k, n)),
                    },
                )
            })?;
            let path = crate::model::Path::root()
                .child(crate::model::PathSegment::Key(key.to_string()))
                .to_string();
            Some(Records {
                path,
                key: Some(key.to_string()),
                count,
            })
        }
        _ => None,
    }
}

/// `value` with only the first `n` of its records (as [`find_records`] found them).
pub fn slice_records(value: &Value, records: &Records, n: usize) -> Value {
    match (value, &records.key) {
        (Value::Array(items), None) => Value::Array(items.iter().take(n).cloned().collect()),
        (Value::Map(entries), Some(key)) => {
            let mut done = false;
            Value::Map(
                entries
                    .iter()
                    .map(|(k, v)| match (k, v) {
                        (Value::Text(t), Value::Array(items)) if !done && t == key => {
                            done = true;
                            (
                                k.clone(),
                                Value::Array(items.iter().take(n).cloned().collect()),
                            )
                        }
                        _ => (k.clone(), v.clone()),
                    })
                    .collect(),
            )
        }
        _ => value.clone(),
    }
}

/// The record counts a sweep measures: each of `counts` below the payload's count, then the
/// payload's own count when `include_all`.
pub fn sweep_counts(counts: &[usize], total: usize, include_all: bool) -> Vec<usize> {
    let mut out: Vec<usize> = counts
        .iter()
        .copied()
        .filter(|&c| c > 0 && c < total)
        .collect();
    if include_all || out.is_empty() {
        out.push(total);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// One point of a sweep: one format at one record count.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepPoint {
    /// Records in the slice.
    pub records: usize,
    /// The format.
    #[serde(serialize_with = "super::ser_format")]
    pub format: Format,
    /// The library timed ([`Library::reference`]).
    pub library: Library,
    /// wirelens' encoding size.
    pub bytes: usize,
    /// Its gzip size.
    pub gzip: Option<usize>,
    /// Encode timing.
    pub encode: Option<Measurement>,
    /// Decode timing.
    pub decode: Option<Measurement>,
    /// Why the point could not be measured.
    pub error: Option<String>,
}

/// A payload's scaling sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    /// Where the records are.
    pub records: Records,
    /// Points, by record count then format.
    pub points: Vec<SweepPoint>,
    /// Other runtimes' measurements of the slices below the whole payload (the whole payload's
    /// are the file's own runtime reports), by runtime then record count.
    pub runtimes: Vec<RuntimeSweepPoint>,
}

/// One runtime's harness run on one slice of the sweep: every library it has, timed on the
/// first `records` records.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuntimeSweepPoint {
    /// Records in the slice.
    pub records: usize,
    /// What the harness measured on it.
    pub report: super::runtimes::RuntimeReport,
}

impl Sweep {
    /// The record counts below the whole payload's, each once, ascending: the slices a runtime
    /// harness is run on (the whole payload is timed by the file's own harness run).
    pub fn slice_counts(&self) -> Vec<usize> {
        let mut out: Vec<usize> = self
            .points
            .iter()
            .map(|p| p.records)
            .filter(|&n| n < self.records.count)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// `runtime`'s measurements at each record count, ascending, the whole payload's (`whole`,
    /// the file's own report of that runtime) last.
    pub fn runtime_points<'a>(
        &'a self,
        runtime: super::runtimes::Runtime,
        whole: Option<&'a super::runtimes::RuntimeReport>,
    ) -> Vec<(usize, &'a super::runtimes::RuntimeReport)> {
        let mut out: Vec<(usize, &super::runtimes::RuntimeReport)> = self
            .runtimes
            .iter()
            .filter(|p| p.report.runtime == runtime)
            .map(|p| (p.records, &p.report))
            .collect();
        out.sort_by_key(|(n, _)| *n);
        if let Some(w) = whole {
            out.push((self.records.count, w));
        }
        out
    }
}

/// A network link: bandwidth and round-trip time.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Link {
    /// A short name (`mobile`).
    pub name: String,
    /// Bandwidth in bits per second.
    pub bits_per_second: f64,
    /// Round-trip time in seconds.
    pub rtt_seconds: f64,
}

impl Link {
    /// mobile (10 Mbit/s, 60 ms), broadband (100 Mbit/s, 20 ms), datacenter (10 Gbit/s, 0.2 ms).
    pub fn defaults() -> Vec<Link> {
        vec![
            Link::new("mobile", 10e6, 0.060),
            Link::new("broadband", 100e6, 0.020),
            Link::new("datacenter", 10e9, 0.0002),
        ]
    }

    /// A link from its name, bandwidth (bit/s) and round trip (s).
    pub fn new(name: &str, bits_per_second: f64, rtt_seconds: f64) -> Link {
        Link {
            name: name.into(),
            bits_per_second,
            rtt_seconds,
        }
    }

    /// Parses `NAME=BANDWIDTH,RTT`, e.g. `wifi=50mbit,15ms` (units: bit, kbit, mbit, gbit;
    /// s, ms, us).
    pub fn parse(text: &str) -> Result<Link, LinkError> {
        let err = || LinkError {
            text: text.to_string(),
        };
        let (name, rest) = text.split_once('=').ok_or_else(err)?;
        let (bw, rtt) = rest.split_once(',').ok_or_else(err)?;
        let name = name.trim();
        if name.is_empty() {
            return Err(err());
        }
        let bw = bw.trim().to_ascii_lowercase();
        let rtt = rtt.trim().to_ascii_lowercase();
        let number = |s: &str, units: &[(&str, f64)]| -> Option<f64> {
            units.iter().find_map(|(u, scale)| {
                s.strip_suffix(u)
                    .and_then(|n| n.trim().parse::<f64>().ok())
                    .filter(|n| n.is_finite() && *n >= 0.0)
                    .map(|n| n * scale)
            })
        };
        let bits = number(
            &bw,
            &[("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3), ("bit", 1.0)],
        )
        .filter(|b| *b > 0.0)
        .ok_or_else(err)?;
        let secs = number(&rtt, &[("ms", 1e-3), ("us", 1e-6), ("s", 1.0)]).ok_or_else(err)?;
        Ok(Link::new(name, bits, secs))
    }
}

/// A link [`Link::parse`] could not read: not `NAME=BANDWIDTH,RTT` with a positive bandwidth
/// and a round trip in its units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkError {
    /// The text as given.
    pub text: String,
}

impl std::fmt::Display for LinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "link `{}`: expected NAME=BANDWIDTH,RTT like wifi=50mbit,15ms",
            self.text
        )
    }
}

impl std::error::Error for LinkError {}

/// End-to-end time of one payload in one format over one link.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Transfer {
    /// The format.
    #[serde(serialize_with = "super::ser_format")]
    pub format: Format,
    /// The library whose encode and decode times are used.
    pub library: Library,
    /// The link's name.
    pub link: String,
    /// Whether the bytes were gzip-compressed for the wire.
    pub compressed: bool,
    /// Bytes on the wire.
    pub wire_bytes: usize,
    /// Encode (plus compress) time, seconds.
    pub cpu_send: f64,
    /// Size / bandwidth + round trip, seconds.
    pub wire: f64,
    /// (Decompress plus) decode time, seconds.
    pub cpu_receive: f64,
}

impl Transfer {
    /// The whole estimate, seconds.
    pub fn total(&self) -> f64 {
        self.cpu_send + self.wire + self.cpu_receive
    }
}

/// What [`estimate`] needs about one format × library.
#[derive(Debug, Clone, Copy)]
pub struct Costs<'a> {
    /// The format.
    pub format: Format,
    /// The library.
    pub library: Library,
    /// Raw bytes.
    pub bytes: usize,
    /// gzip bytes.
    pub gzip: Option<usize>,
    /// Encode timing.
    pub encode: &'a Measurement,
    /// Decode timing.
    pub decode: &'a Measurement,
    /// gzip compress timing of these bytes.
    pub compress: Option<&'a Measurement>,
    /// gzip decompress timing.
    pub decompress: Option<&'a Measurement>,
}

/// Estimates per link, without and (when the gzip numbers are there) with compression, from
/// median times.
pub fn estimate(costs: &Costs<'_>, links: &[Link]) -> Vec<Transfer> {
    let secs = |m: &Measurement| m.ns.median / 1e9;
    let mut out = Vec::new();
    for link in links {
        let wire = |bytes: usize| bytes as f64 * 8.0 / link.bits_per_second + link.rtt_seconds;
        out.push(Transfer {
            format: costs.format,
            library: costs.library,
            link: link.name.clone(),
            compressed: false,
            wire_bytes: costs.bytes,
            cpu_send: secs(costs.encode),
            wire: wire(costs.bytes),
            cpu_receive: secs(costs.decode),
        });
        if let (Some(gz), Some(c), Some(d)) = (costs.gzip, costs.compress, costs.decompress) {
            out.push(Transfer {
                format: costs.format,
                library: costs.library,
                link: link.name.clone(),
                compressed: true,
                wire_bytes: gz,
                cpu_send: secs(costs.encode) + secs(c),
                wire: wire(gz),
                cpu_receive: secs(d) + secs(costs.decode),
            });
        }
    }
    out
}

/// End-to-end time of one payload in one format over one link with another runtime's times:
/// its fastest library for the format (encode + decode medians), and with gzip its own gzip
/// timings, or Rust's where the runtime's were not measured (`fallback` says so).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuntimeTransfer {
    /// The format.
    #[serde(serialize_with = "super::ser_format")]
    pub format: Format,
    /// The runtime's library whose encode and decode times are used.
    pub library: String,
    /// The link's name.
    pub link: String,
    /// Whether the bytes were gzip-compressed for the wire.
    pub compressed: bool,
    /// Bytes on the wire.
    pub wire_bytes: usize,
    /// Encode (plus compress) time, seconds.
    pub cpu_send: f64,
    /// Size / bandwidth + round trip, seconds.
    pub wire: f64,
    /// (Decompress plus) decode time, seconds.
    pub cpu_receive: f64,
    /// Whose gzip times are used when they are not the runtime's own (`Rust's gzip: Python's
    /// gzip was not measured`).
    pub fallback: Option<String>,
}

impl RuntimeTransfer {
    /// The whole estimate, seconds.
    pub fn total(&self) -> f64 {
        self.cpu_send + self.wire + self.cpu_receive
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_slices_records() {
        let v = Value::object([
            ("total", Value::int(3)),
            (
                "data",
                Value::Array(vec![Value::int(1), Value::int(2), Value::int(3)]),
            ),
        ]);
        let r = find_records(&v).expect("records");
        assert_eq!((r.path.as_str(), r.count), ("$.data", 3));
        let s = slice_records(&v, &r, 2);
        assert_eq!(
            s.get("data").and_then(Value::as_array).map(<[Value]>::len),
            Some(2)
        );
        assert_eq!(s.get("total"), Some(&Value::int(3)));
        let root = Value::Array(vec![Value::Null; 5]);
        assert_eq!(find_records(&root).map(|r| r.count), Some(5));
        assert_eq!(find_records(&Value::int(1)), None);
        let other = Value::object([
            ("a", Value::Array(vec![Value::Null; 2])),
            ("b", Value::Array(vec![Value::Null; 4])),
        ]);
        assert_eq!(
            find_records(&other).map(|r| r.path),
            Some("$.b".to_string())
        );
        assert_eq!(
            sweep_counts(&[1, 10, 100, 1000], 150, true),
            vec![1, 10, 100, 150]
        );
        assert_eq!(sweep_counts(&[1, 10, 100], 5, false), vec![1]);
        assert_eq!(sweep_counts(&[10, 100], 5, false), vec![5]);
    }

    #[test]
    fn parses_links() {
        let l = Link::parse("wifi=50mbit,15ms").expect("link");
        assert_eq!(l, Link::new("wifi", 50e6, 0.015));
        let err = Link::parse("wifi=50,15ms").expect_err("no unit");
        assert_eq!(err.text, "wifi=50,15ms");
        assert!(err.to_string().contains("NAME=BANDWIDTH,RTT"), "{err}");
        assert!(Link::parse("=1mbit,1ms").is_err());
        assert!(Link::parse("x=0mbit,1ms").is_err());
    }
}
