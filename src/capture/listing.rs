//! One line per payload for a list of them (the app's payload list): the exchange it belongs to
//! (method, status, URL, direction), its content type and the format that type names, read from
//! what the layers put in the payload's meta; and a filter by URL text and content type.
//!
//! Works the same for a HAR's entries (`method`, `url`, `status` from the entry), HTTP/1.x
//! messages of a capture (the start line and the `Host` header) and HTTP/2 streams (the
//! pseudo-headers). What a layer did not say is `None`, never guessed.

use super::Payload;
use crate::codec::Format;

/// What a payload's meta says about the exchange it came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Exchange {
    /// The request's method (`GET`), for the request and, where it is known, its response.
    pub method: Option<String>,
    /// The response's status code (`200`): a HAR entry's, or an HTTP response's start line.
    pub status: Option<String>,
    /// The request's URL: a HAR entry's `request.url`; for a captured HTTP/1.x request, its
    /// `Host` and request target (`127.0.0.1:5719/ingest`, no scheme: the capture does not say
    /// it); for HTTP/2, `:scheme://:authority:path`.
    pub url: Option<String>,
    /// `request`, `response`, `send`, `receive` (a WebSocket message), as the layer put it.
    pub direction: Option<String>,
    /// The media type of the body, lowercase, without parameters (`application/json`).
    pub content_type: Option<String>,
    /// The format the layers announced (from the content type), not a detection.
    pub format: Option<Format>,
}

/// The payload a user came for, unless they pick one: a gRPC message, else a body whose media
/// type names a data format, else any other data, a raw stream only when no layer decoded
/// anything, then text, and never a verdict's payload (encrypted records, DNS…) while another
/// has bytes. The first of the best kind, by index; 0 when none has bytes.
pub fn default_payload(payloads: &[Payload]) -> usize {
    let mut best = (u8::MAX, 0);
    for (i, p) in payloads.iter().enumerate() {
        let r = payload_rank(p);
        if r < best.0 {
            best = (r, i);
            if r == 0 {
                break;
            }
        }
    }
    best.1
}

/// How [`default_payload`] ranks a payload, best (0, a gRPC message) first: the first payload
/// of the lowest rank is the default. A list seen one payload at a time (a capture read as it
/// arrives) keeps the first of the lowest rank so far.
pub fn payload_rank(p: &Payload) -> u8 {
    if p.bytes.is_empty() {
        return u8::MAX;
    }
    match super::verdict::verdict(p) {
        Some(v) if v.is_data() => return 4,
        Some(_) => return 5,
        None => {}
    }
    let raw = p
        .layers
        .last()
        .is_some_and(|l| l.name.starts_with("TCP ") || l.name.starts_with("UDP "));
    if p.meta_value("grpc-body") == Some("true") || p.grpc_call().is_some() {
        0
    } else if p.hint.is_some() && !raw {
        1
    } else if !raw {
        2
    } else {
        3
    }
}

impl Payload {
    /// The exchange this payload is part of, from its meta (see [`Exchange`]).
    pub fn exchange(&self) -> Exchange {
        let meta = |key: &str| {
            self.meta
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(key))
                .map(|(_, v)| v)
                .filter(|v| !v.is_empty())
        };
        let start_line = meta("start-line");
        let (line_method, line_target, line_status) = match start_line {
            Some(line) if line.starts_with("HTTP/") => (
                None,
                None,
                line.split_whitespace().nth(1).map(str::to_string),
            ),
            Some(line) => {
                let mut words = line.split_whitespace();
                (
                    words.next().map(str::to_string),
                    words.next().map(str::to_string),
                    None,
                )
            }
            None => (None, None, None),
        };
        let method = meta("method")
            .or_else(|| meta("request-method"))
            .or_else(|| meta(":method"))
            .map(str::to_string)
            .or(line_method);
        let status = meta("status")
            .or_else(|| meta(":status"))
            .map(str::to_string)
            .or(line_status);
        let url = meta("url").map(str::to_string).or_else(|| {
            if let Some(path) = meta(":path") {
                let authority = meta(":authority").unwrap_or("");
                return Some(match meta(":scheme") {
                    Some(s) if !authority.is_empty() => format!("{s}://{authority}{path}"),
                    _ => format!("{authority}{path}"),
                });
            }
            let target = line_target?;
            match meta("host") {
                Some(host) if target.starts_with('/') => Some(format!("{host}{target}")),
                _ => Some(target),
            }
        });
        let content_type = self.media_type().map(|m| m.name);
        Exchange {
            method,
            status,
            url,
            direction: meta("direction").map(str::to_string),
            content_type,
            format: self.hint,
        }
    }
}

/// Which payloads of a list to show: those that pass the filter's text (URL words, method,
/// status, media type, protocol, size; see [`Query`]) and whose content type is the one chosen.
/// The default shows every payload.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PayloadFilter {
    /// The filter's text ([`Query::parse`]): words the URL must hold, and `method:`, `status:`,
    /// `type:`, `proto:` and `size` terms. Empty: every payload.
    pub text: String,
    /// The content type to show: `None` shows every type, `Some(None)` the payloads without
    /// one, `Some(Some(t))` those of media type `t`.
    pub content_type: Option<Option<String>>,
}

impl PayloadFilter {
    /// Whether the filter hides nothing.
    pub fn is_empty(&self) -> bool {
        self.text.trim().is_empty() && self.content_type.is_none()
    }

    /// Whether `payload` passes (a text that does not parse passes every payload).
    pub fn matches(&self, payload: &Payload) -> bool {
        let query = Query::parse(&self.text).unwrap_or_default();
        self.matches_with(&query, &payload.exchange(), payload)
    }

    /// Whether a payload with this [`Exchange`] passes `query` (this filter's text, parsed
    /// once for a whole list) and the content-type choice.
    pub fn matches_with(&self, query: &Query, exchange: &Exchange, payload: &Payload) -> bool {
        let type_ok = match &self.content_type {
            None => true,
            Some(want) => exchange.content_type == *want,
        };
        type_ok && query.matches(exchange, payload)
    }
}

/// A payload filter's text, parsed: terms separated by spaces, all of which must hold.
///
/// - `method:POST`: the request method (any case);
/// - `status:404`, `status:4xx`: the response status, or its class;
/// - `type:json`: text the media type holds (`application/json`, `application/x-ndjson`);
/// - `proto:grpc`: text a layer's name holds (`HTTP/2`, `gRPC`, `WebSocket`, `TLS`, `Avro`), or
///   the protocol named for a payload that is no data format (`DNS`);
/// - `size>10k`, `size<2m`, `size>=100`, `size<=1g`: the payload's bytes (k, m, g: 1,024,
///   1,048,576, 1,073,741,824);
/// - any other word: text the URL holds (any case).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    url: Vec<String>,
    method: Vec<String>,
    status: Vec<String>,
    media: Vec<String>,
    protocol: Vec<String>,
    /// At least this many bytes.
    min: Option<u64>,
    /// At most this many bytes.
    max: Option<u64>,
}

/// A filter term [`Query::parse`] refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueryError {
    /// `size>…` or `size<…` without a size.
    BadSize {
        /// The term as typed.
        term: String,
    },
    /// `method:`, `status:`, `type:` or `proto:` without a value.
    NoValue {
        /// The term as typed.
        term: String,
    },
    /// A status that is neither a code (404) nor a class (4xx).
    BadStatus {
        /// The term as typed.
        term: String,
    },
}

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QueryError::BadSize { term } => {
                write!(f, "{term}: a size is a number with k, m or g (size>10k)")
            }
            QueryError::NoValue { term } => write!(f, "{term} needs a value"),
            QueryError::BadStatus { term } => {
                write!(f, "{term}: a status is a code (404) or a class (4xx)")
            }
        }
    }
}

impl std::error::Error for QueryError {}

impl Query {
    /// Parses a filter's text; a term whose value is not one its key takes is an error naming
    /// it (a word with another key, such as `127.0.0.1:8080`, is a URL word).
    pub fn parse(text: &str) -> Result<Query, QueryError> {
        let mut q = Query::default();
        for term in text.split_whitespace() {
            let lower = term.to_ascii_lowercase();
            if let Some(rest) = lower.strip_prefix("size") {
                let (op, number) = match rest.as_bytes() {
                    [b'>', b'=', ..] => (">=", &rest[2..]),
                    [b'<', b'=', ..] => ("<=", &rest[2..]),
                    [b'>', ..] => (">", &rest[1..]),
                    [b'<', ..] => ("<", &rest[1..]),
                    _ => ("", rest),
                };
                if !op.is_empty() {
                    let n = size_of(number).ok_or_else(|| QueryError::BadSize {
                        term: term.to_string(),
                    })?;
                    match op {
                        ">=" => q.min = Some(n),
                        ">" => q.min = Some(n.saturating_add(1)),
                        "<=" => q.max = Some(n),
                        _ => q.max = Some(n.saturating_sub(1)),
                    }
                    continue;
                }
            }
            let keyed = lower.split_once(':').and_then(|(key, value)| {
                let list = match key {
                    "method" => &mut q.method,
                    "status" => &mut q.status,
                    "type" => &mut q.media,
                    "proto" | "protocol" => &mut q.protocol,
                    _ => return None,
                };
                Some((list, key, value.to_string()))
            });
            match keyed {
                Some((_, _, value)) if value.is_empty() => {
                    return Err(QueryError::NoValue {
                        term: term.to_string(),
                    });
                }
                Some((_, "status", value))
                    if !(value.len() == 3
                        && value.bytes().next().is_some_and(|b| b.is_ascii_digit())
                        && (value.bytes().all(|b| b.is_ascii_digit()) || &value[1..] == "xx")) =>
                {
                    return Err(QueryError::BadStatus {
                        term: term.to_string(),
                    });
                }
                Some((list, _, value)) => list.push(value),
                None => q.url.push(lower),
            }
        }
        Ok(q)
    }

    /// Whether a payload with this [`Exchange`] passes every term.
    pub fn matches(&self, exchange: &Exchange, payload: &Payload) -> bool {
        let lower = |t: &Option<String>| t.as_deref().map(str::to_ascii_lowercase);
        let holds_all = |field: Option<String>, words: &[String]| {
            words.is_empty() || field.is_some_and(|f| words.iter().all(|w| f.contains(w.as_str())))
        };
        if !holds_all(lower(&exchange.url), &self.url)
            || !holds_all(lower(&exchange.content_type), &self.media)
        {
            return false;
        }
        let method = lower(&exchange.method);
        if !self.method.iter().all(|m| method.as_deref() == Some(m)) {
            return false;
        }
        let status = exchange.status.as_deref().unwrap_or_default();
        let status_ok = |want: &String| match want.strip_suffix("xx") {
            Some(class) => status.len() == 3 && status.starts_with(class),
            None => status == want,
        };
        if !self.status.iter().all(status_ok) {
            return false;
        }
        let layered = |word: &String| {
            payload
                .layers
                .iter()
                .any(|l| l.name.to_ascii_lowercase().contains(word.as_str()))
                || payload
                    .protocol
                    .as_deref()
                    .is_some_and(|p| p.to_ascii_lowercase().contains(word.as_str()))
        };
        if !self.protocol.iter().all(layered) {
            return false;
        }
        let len = payload.bytes.len() as u64;
        self.min.is_none_or(|m| len >= m) && self.max.is_none_or(|m| len <= m)
    }
}

/// `10k` as 10,240, `2m`, `1g`, `100`; `None` for anything else.
fn size_of(text: &str) -> Option<u64> {
    let (digits, unit) = match text.as_bytes().last()? {
        b'k' => (&text[..text.len() - 1], 1u64 << 10),
        b'm' => (&text[..text.len() - 1], 1 << 20),
        b'g' => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(unit)
}

/// The HAR entry a payload came from (its first layer's name, `HAR entry 3`), for payloads read
/// from a HAR export.
pub fn har_entry(p: &Payload) -> Option<&str> {
    p.layers
        .first()
        .filter(|l| l.name.starts_with(super::har::ENTRY_LAYER))
        .map(|l| l.name.as_str())
}

/// How many HAR entries `payloads` come from (0 when none is a HAR entry's): consecutive
/// payloads of one entry count once.
pub fn har_entries<'a>(payloads: impl IntoIterator<Item = &'a Payload>) -> usize {
    let mut last = None;
    let mut count = 0;
    for entry in payloads.into_iter().filter_map(har_entry) {
        if last != Some(entry) {
            count += 1;
            last = Some(entry);
        }
    }
    count
}

/// What the payload list says of a whole listing before any filter: its content types with
/// their counts and how many HAR entries it comes from. Made once per listing (on a worker, for
/// hundreds of thousands of payloads), not every time the list is drawn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListingSummary {
    /// [`content_types`] of the listing's exchanges.
    pub content_types: Vec<(Option<String>, usize)>,
    /// [`har_entries`] of its payloads.
    pub har_entries: usize,
    /// The most layers any payload has (how far the list's peel choice reaches).
    pub deepest: usize,
    /// The payload to start on ([`default_payload`], which may glance at every payload's
    /// bytes: on a worker, not on the frame the list appears).
    pub default_payload: usize,
}

/// The content types present among `exchanges`, each with how many payloads have it, in the
/// order they first appear; payloads without one are counted under `None`.
pub fn content_types<'a>(
    exchanges: impl IntoIterator<Item = &'a Exchange>,
) -> Vec<(Option<String>, usize)> {
    let mut out: Vec<(Option<String>, usize)> = Vec::new();
    for e in exchanges {
        match out.iter_mut().find(|(t, _)| *t == e.content_type) {
            Some((_, n)) => *n += 1,
            None => out.push((e.content_type.clone(), 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::{peel, PeelOptions};

    fn payload(meta: &[(&str, &str)]) -> Payload {
        Payload {
            meta: meta
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Payload::default()
        }
    }

    #[test]
    fn http1_request_and_response_from_a_raw_exchange() {
        let peeled = peel(b"POST /ingest HTTP/1.1\r\nHost: 127.0.0.1:5719\r\nContent-Type: application/msgpack\r\nContent-Length: 1\r\n\r\n\xc0", &PeelOptions::default());
        let e = peeled.payloads[0].exchange();
        assert_eq!(e.method.as_deref(), Some("POST"));
        assert_eq!(e.url.as_deref(), Some("127.0.0.1:5719/ingest"));
        assert_eq!(e.status, None);
        assert_eq!(e.content_type.as_deref(), Some("application/msgpack"));
        assert_eq!(e.format, Some(Format::MessagePack));
        let peeled = peel(b"HTTP/1.1 404 Not Found\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}", &PeelOptions::default());
        let e = peeled.payloads[0].exchange();
        assert_eq!(e.status.as_deref(), Some("404"));
        assert_eq!(e.content_type.as_deref(), Some("application/json"));
        assert_eq!(e.url, None);
    }

    #[test]
    fn http2_pseudo_headers_make_the_url() {
        let p = payload(&[
            (":method", "POST"),
            (":scheme", "https"),
            (":authority", "api.example"),
            (":path", "/pkg.Svc/Get"),
        ]);
        let e = p.exchange();
        assert_eq!(e.url.as_deref(), Some("https://api.example/pkg.Svc/Get"));
        assert_eq!(e.method.as_deref(), Some("POST"));
    }

    /// The filter's terms: method, status or its class, media type, a layer's protocol, size
    /// bounds, URL words; all must hold, and a bad value is named.
    #[test]
    fn the_filter_text_takes_method_status_type_protocol_and_size_terms() {
        let exchange = |p: &Payload| p.exchange();
        let layer = |name: &str| crate::capture::Layer {
            name: name.into(),
            detail: String::new(),
            span: crate::model::Span::new(0, 0),
        };
        let post = Payload {
            bytes: vec![0u8; 2048].into(),
            layers: vec![
                layer("HTTP/2 stream 3"),
                layer("gRPC frame (message 1 of 1)"),
            ],
            ..payload(&[
                (":method", "POST"),
                (":scheme", "http"),
                (":authority", "api.example"),
                (":path", "/shop.Orders/Get"),
                ("content-type", "application/grpc"),
            ])
        };
        let not_found = Payload {
            bytes: vec![b'{', b'}'].into(),
            layers: vec![layer("HTTP/1.1 response")],
            ..payload(&[
                ("status", "404"),
                ("url", "http://api.example/users/7"),
                ("content-type", "application/problem+json"),
            ])
        };
        let dns = Payload {
            bytes: vec![0u8; 40].into(),
            protocol: Some("DNS".into()),
            ..payload(&[])
        };
        let all = [&post, &not_found, &dns];
        let passing = |text: &str| -> Vec<usize> {
            let q = Query::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            (0..all.len())
                .filter(|&i| q.matches(&exchange(all[i]), all[i]))
                .collect()
        };
        assert_eq!(passing(""), [0, 1, 2]);
        assert_eq!(passing("method:post"), [0]);
        assert_eq!(passing("status:4xx"), [1]);
        assert_eq!(passing("status:404 users"), [1]);
        assert_eq!(passing("status:200"), Vec::<usize>::new());
        assert_eq!(passing("type:json"), [1]);
        assert_eq!(passing("proto:grpc"), [0]);
        assert_eq!(passing("proto:http"), [0, 1]);
        assert_eq!(passing("proto:dns"), [2]);
        assert_eq!(passing("size>1k"), [0]);
        assert_eq!(passing("size>=2k"), [0]);
        assert_eq!(passing("size>2k"), Vec::<usize>::new());
        assert_eq!(passing("size<40"), [1]);
        assert_eq!(passing("size<=40"), [1, 2]);
        assert_eq!(passing("api.example size<1m"), [0, 1]);
        // A word with another key is part of a URL.
        assert_eq!(passing("http://api.example/users"), [1]);
        for (bad, says) in [
            (
                "size>lots",
                "size>lots: a size is a number with k, m or g (size>10k)",
            ),
            (
                "status:4x",
                "status:4x: a status is a code (404) or a class (4xx)",
            ),
            ("method:", "method: needs a value"),
        ] {
            assert_eq!(Query::parse(bad).expect_err(bad).to_string(), says);
        }
    }

    #[test]
    fn the_filter_takes_url_text_and_a_content_type() {
        let a = payload(&[
            ("url", "https://API.example/orders/1"),
            ("mime-type", "application/x-protobuf"),
        ]);
        let b = payload(&[
            ("url", "https://api.example/users"),
            ("content-type", "application/json"),
        ]);
        let c = payload(&[]);
        let mut f = PayloadFilter::default();
        assert!(f.is_empty());
        assert!([&a, &b, &c].iter().all(|p| f.matches(p)));
        f.text = "api.EXAMPLE/ord".into();
        assert!(f.matches(&a) && !f.matches(&b) && !f.matches(&c));
        f.text.clear();
        f.content_type = Some(Some("application/json".into()));
        assert!(!f.matches(&a) && f.matches(&b) && !f.matches(&c));
        f.content_type = Some(None);
        assert!(!f.matches(&a) && !f.matches(&b) && f.matches(&c));
        let exchanges: Vec<Exchange> = [&a, &b, &c, &b].iter().map(|p| p.exchange()).collect();
        assert_eq!(
            content_types(&exchanges),
            [
                (Some("application/x-protobuf".to_string()), 1),
                (Some("application/json".to_string()), 2),
                (None, 1)
            ]
        );
    }

    /// HAR entries are counted once however many payloads each gives (a request and a
    /// response), and payloads of anything else not at all.
    #[test]
    fn har_entries_count_each_entry_once() {
        let from = |layer: &str| Payload {
            layers: vec![crate::capture::Layer {
                name: layer.to_string(),
                detail: String::new(),
                span: crate::model::Span::new(0, 0),
            }],
            ..Payload::default()
        };
        let payloads = [
            from("HAR entry 1"),
            from("HAR entry 1"),
            from("HAR entry 2"),
            from("pcap"),
            from("HAR entry 3"),
        ];
        assert_eq!(har_entries(&payloads), 3);
        assert_eq!(har_entries(&payloads[3..4]), 0);
        assert_eq!(har_entry(&payloads[2]), Some("HAR entry 2"));
        assert_eq!(har_entry(&payloads[3]), None);
    }
}
