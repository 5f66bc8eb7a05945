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
    let rank = |p: &Payload| -> u8 {
        if p.bytes.is_empty() {
            return u8::MAX;
        }
        match super::detect::verdict(p) {
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
    };
    let mut best = (u8::MAX, 0);
    for (i, p) in payloads.iter().enumerate() {
        let r = rank(p);
        if r < best.0 {
            best = (r, i);
            if r == 0 {
                break;
            }
        }
    }
    best.1
}

impl Payload {
    /// The exchange this payload is part of, from its meta (see [`Exchange`]).
    pub fn exchange(&self) -> Exchange {
        let meta = |key: &str| {
            self.meta
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(key))
                .map(|(_, v)| v.as_str())
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

/// Which payloads of a list to show: those whose URL holds some text and whose content type is
/// one chosen. The default shows every payload.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PayloadFilter {
    /// Text the URL must hold (ignoring ASCII case); empty: any URL, and payloads without one.
    pub url: String,
    /// The content type to show: `None` shows every type, `Some(None)` the payloads without
    /// one, `Some(Some(t))` those of media type `t`.
    pub content_type: Option<Option<String>>,
}

impl PayloadFilter {
    /// Whether the filter hides nothing.
    pub fn is_empty(&self) -> bool {
        self.url.trim().is_empty() && self.content_type.is_none()
    }

    /// Whether `payload` passes.
    pub fn matches(&self, payload: &Payload) -> bool {
        self.matches_exchange(&payload.exchange())
    }

    /// Whether a payload with this [`Exchange`] passes.
    pub fn matches_exchange(&self, exchange: &Exchange) -> bool {
        let text = self.url.trim();
        if !text.is_empty() {
            let Some(url) = &exchange.url else {
                return false;
            };
            if !url
                .to_ascii_lowercase()
                .contains(&text.to_ascii_lowercase())
            {
                return false;
            }
        }
        match &self.content_type {
            None => true,
            Some(want) => exchange.content_type == *want,
        }
    }
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
        f.url = "api.EXAMPLE/ord".into();
        assert!(f.matches(&a) && !f.matches(&b) && !f.matches(&c));
        f.url.clear();
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
}
