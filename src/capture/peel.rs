//! One entry point from whatever the user opened or pasted to the payloads in it: pcap files are
//! reassembled, text and HTTP layers peeled, gRPC bodies split into their messages.
//!
//! Every payload keeps its layer chain (provenance). A fault part-way keeps what was found before
//! it, with the error beside it.

use super::layers::{unwrap, CaptureError, Layer, Payload};
use super::pcap;
use crate::codec::protobuf::framing::split_grpc;
use crate::codec::{json, DecodeOptions, Format};
use crate::limits::Limits;
use crate::model::Span;

/// The payloads found in an input, in stream order, and the fault that stopped the search early.
#[derive(Debug, Clone)]
pub struct Peeled {
    /// What was found.
    pub payloads: Vec<Payload>,
    /// Why the search stopped before the end, if it did.
    pub error: Option<CaptureError>,
    /// Notes on what was skipped or cut (pcap gaps, truncated packets).
    pub warnings: Vec<String>,
}

/// Finds the payloads in `input`.
///
/// ```
/// use wirelens::capture::peel;
///
/// let peeled = peel(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"a\":1}");
/// assert_eq!(peeled.payloads.len(), 1);
/// assert_eq!(peeled.payloads[0].bytes, b"{\"a\":1}");
/// ```
pub fn peel(input: &[u8]) -> Peeled {
    peel_with(input, &Limits::default())
}

/// Like [`peel`], within `limits` (decompression, layers, pcap reassembly, payloads kept).
pub fn peel_with(input: &[u8], limits: &Limits) -> Peeled {
    let options = limits.unwrap_options();
    let mut out = Peeled {
        payloads: Vec::new(),
        error: None,
        warnings: Vec::new(),
    };
    if pcap::is_pcap(input) {
        match pcap::extract(input, &limits.pcap_limits()) {
            Ok(capture) => {
                out.warnings.extend(capture.warnings.iter().cloned());
                for stream_payload in pcap::payloads(&capture) {
                    // HTTP messages (or anything else peelable) inside each direction of a stream.
                    match unwrap(&stream_payload.bytes, &options) {
                        Ok(found) => out
                            .payloads
                            .extend(found.into_iter().map(|p| under(&stream_payload, p))),
                        Err(e) => {
                            out.payloads.extend(
                                e.extracted
                                    .iter()
                                    .cloned()
                                    .map(|p| under(&stream_payload, p)),
                            );
                            out.warnings.push(format!(
                                "{} ({}): {e}",
                                stream_payload
                                    .layers
                                    .last()
                                    .map_or("stream", |l| l.name.as_str()),
                                stream_payload.meta_value("direction").unwrap_or("")
                            ));
                        }
                    }
                }
            }
            Err(e) => {
                out.payloads = e.extracted.clone();
                out.error = Some(e);
            }
        }
    } else {
        match unwrap(input, &options) {
            Ok(found) => out.payloads = found,
            Err(e) => {
                out.payloads = e.extracted.clone();
                out.error = Some(e);
            }
        }
    }
    out.payloads = out
        .payloads
        .into_iter()
        .flat_map(split_grpc_body)
        .flat_map(split_json_lines)
        .collect();
    if out.payloads.len() > limits.max_payloads {
        out.warnings.push(format!(
            "{} payloads found; only the first {} are kept (limit payloads)",
            out.payloads.len(),
            limits.max_payloads
        ));
        out.payloads.truncate(limits.max_payloads);
    }
    out
}

/// NDJSON / JSON Lines (text that is not one JSON document, but whose every non-blank line is)
/// as one payload per line; anything else as it is.
fn split_json_lines(payload: Payload) -> Vec<Payload> {
    let options = DecodeOptions::default();
    let Ok(text) = std::str::from_utf8(&payload.bytes) else {
        return vec![payload];
    };
    let mut lines = Vec::new();
    let mut start = 0usize;
    for line in text.split_inclusive('\n') {
        let span = Span::new(start, start + line.len());
        start = span.end;
        if !line.trim().is_empty() {
            lines.push(span);
        }
    }
    let line_bytes = |span: &Span| payload.bytes[span.range()].trim_ascii().to_vec();
    // Lines first: a pretty-printed document fails on its first line, so a large JSON file is not
    // decoded again here; the whole text is tried only when every line is JSON on its own.
    if lines.len() < 2
        || !lines
            .iter()
            .all(|span| json::decode(&line_bytes(span), &options).is_ok())
        || json::decode(&payload.bytes, &options).is_ok()
    {
        return vec![payload];
    }
    let count = lines.len();
    lines
        .iter()
        .enumerate()
        .map(|(i, span)| {
            let mut p = payload.clone();
            p.layers.push(Layer {
                name: "JSON Lines".into(),
                detail: format!("line {} of {count}", i + 1),
                span: *span,
            });
            p.hint = Some(Format::Json);
            p.bytes = line_bytes(span);
            p
        })
        .collect()
}

/// `inner`, found inside `outer`, with `outer`'s layers in front of its own.
fn under(outer: &Payload, mut inner: Payload) -> Payload {
    let mut layers = outer.layers.clone();
    layers.append(&mut inner.layers);
    inner.layers = layers;
    let mut meta = outer.meta.clone();
    meta.append(&mut inner.meta);
    inner.meta = meta;
    inner
}

/// A gRPC body (marked by its HTTP layer, or bytes that are exactly a run of gRPC frames) as one
/// payload per message; anything else as it is.
fn split_grpc_body(payload: Payload) -> Vec<Payload> {
    let marked = payload.meta_value("grpc-body") == Some("true");
    if !marked && !looks_like_grpc(&payload.bytes) {
        return vec![payload];
    }
    // A marked body with a bad frame keeps the frames before it, and the rest as one payload
    // marked truncated, whose layer says where and why.
    let (frames, fault) = match split_grpc(&payload.bytes) {
        Ok(frames) => (frames, None),
        Err(e) if marked => (e.frames_before.clone(), Some(e)),
        Err(_) => return vec![payload],
    };
    let count = frames.iter().filter(|f| !f.trailers).count();
    let mut out: Vec<Payload> = frames
        .into_iter()
        .filter(|f| !f.trailers)
        .enumerate()
        .map(|(i, f)| {
            let mut p = payload.clone();
            p.layers.push(Layer {
                name: "gRPC frame".into(),
                detail: format!(
                    "message {} of {count}{}",
                    i + 1,
                    if f.compressed {
                        ", gzip-compressed"
                    } else {
                        ""
                    }
                ),
                span: f.span,
            });
            p.hint = Some(Format::Protobuf);
            p.bytes = f.data;
            p
        })
        .collect();
    if let Some(e) = fault {
        let start = out
            .last()
            .map_or(0, |p| p.layers.last().map_or(0, |l| l.span.end));
        let mut rest = payload.clone();
        rest.layers.push(Layer {
            name: "gRPC frame".into(),
            detail: format!("error {e}"),
            span: Span::new(start, payload.bytes.len()),
        });
        rest.bytes = payload.bytes.get(start..).unwrap_or(&[]).to_vec();
        rest.meta.push(("truncated".into(), "true".into()));
        rest.meta.push(("error".into(), format!("gRPC frame {e}")));
        out.push(rest);
    }
    out
}

/// Whether `bytes` is exactly a run of uncompressed gRPC frames (flag 0, big-endian length), at
/// least one, each message non-empty.
fn looks_like_grpc(bytes: &[u8]) -> bool {
    let mut pos = 0usize;
    let mut frames = 0usize;
    while pos < bytes.len() {
        let Some(head) = bytes.get(pos..pos + 5) else {
            return false;
        };
        if head[0] != 0 {
            return false;
        }
        let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
        if len == 0 {
            return false;
        }
        pos = match (pos + 5).checked_add(len) {
            Some(end) if end <= bytes.len() => end,
            _ => return false,
        };
        frames += 1;
    }
    frames > 0
}

impl Payload {
    /// The value of the first `meta` entry named `key`.
    pub fn meta_value(&self, key: &str) -> Option<&str> {
        self.meta
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The layer chain in one line: `pcap → TCP … → HTTP/1.1 response → gzip`, or `raw bytes`.
    pub fn provenance(&self) -> String {
        if self.layers.is_empty() {
            "raw bytes".into()
        } else {
            self.layers
                .iter()
                .map(|l| l.name.as_str())
                .collect::<Vec<_>>()
                .join(" → ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::protobuf::framing::grpc_frame;

    #[test]
    fn a_grpc_body_becomes_one_payload_per_message() {
        let mut body = grpc_frame(b"\x08\x01", false);
        body.extend(grpc_frame(b"\x08\x02", false));
        let peeled = peel(&body);
        assert_eq!(peeled.payloads.len(), 2);
        assert_eq!(peeled.payloads[1].bytes, b"\x08\x02");
        assert_eq!(peeled.payloads[1].provenance(), "gRPC frame");
        assert_eq!(peeled.payloads[1].hint, Some(Format::Protobuf));
        assert_eq!(peeled.payloads[1].layers[0].span, Span::new(7, 14));
    }

    #[test]
    fn json_lines_become_one_payload_per_line() {
        let peeled = peel(b"{\"id\":1}\n\n{\"id\":2}\r\n[3]\n");
        let bodies: Vec<&[u8]> = peeled.payloads.iter().map(|p| p.bytes.as_slice()).collect();
        assert_eq!(bodies, [&b"{\"id\":1}"[..], b"{\"id\":2}", b"[3]"]);
        assert_eq!(peeled.payloads[1].layers[0].detail, "line 2 of 3");
        assert_eq!(peeled.payloads[1].layers[0].span, Span::new(10, 20));
        // One JSON document over several lines stays one payload.
        assert_eq!(peel(b"{\n\"id\": 1\n}\n").payloads.len(), 1);
    }

    #[test]
    fn plain_payloads_pass_through() {
        let peeled = peel(b"\x82\xa1a\x01\xa1b\x02");
        assert_eq!(peeled.payloads.len(), 1);
        assert_eq!(peeled.payloads[0].bytes, b"\x82\xa1a\x01\xa1b\x02");
        assert!(peeled.error.is_none());
        assert!(!looks_like_grpc(b"\x00\x00\x00\x00\x05abc"));
    }
}
