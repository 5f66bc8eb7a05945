//! Raw HTTP/1.x messages: start line, headers, body framing and content codings.
//!
//! Users paste a request or response from a terminal (`curl -i`, `nc`), a proxy log or a
//! capture. This module splits the input into messages (a request then its response, or
//! pipelined ones), and for each gives the body as a [`Payload`] with its layers: the message,
//! `chunked` if the body was chunked, and one layer per `Content-Encoding` undone (gzip, deflate
//! in its zlib and raw forms, br, zstd), outermost first.
//!
//! Conventions: CRLF and bare LF line ends are both accepted; header names keep their case in
//! `meta` (start line first under `start-line`, trailers as `trailer <name>`); a body's framing
//! follows RFC 9112 (chunked, else Content-Length, else no body for requests and for 1xx/204/304
//! responses, else the rest of the input). `Content-Type` sets the payload's format hint.
//! Decompression is bounded by [`UnwrapOptions::decompression_limit`], each stream on its own and,
//! when peeling, all the streams of one input together (nested codings, pipelined messages).
//!
//! gRPC-Web-text bodies (`application/grpc-web-text`) are base64-decoded here, chunk by chunk
//! (a `gRPC-Web-text` layer), so the body is binary frames like any gRPC body.
//!
//! Responses are paired with their requests in order (`Pairing`): a response to HEAD, a `1xx`,
//! `204` or `304` response and a `2xx` to `CONNECT` have no body whatever their headers say; a
//! `101 Switching Protocols` or a `CONNECT` tunnel ends HTTP/1.x on the connection (`Switch`).
//! Pasted input pairs the requests and responses it holds; a capture pairs the client's requests
//! with the server's responses (`super::conn`).
//!
//! Not done here: HTTP/2 (`super::http2`) and HTTP/3 framing, gRPC frame splitting (bodies of
//! gRPC content types are marked `grpc-body = true` for a later stage), multipart bodies.

pub use super::media::hint_for_media_type;
use std::io::Read;

use crate::limits::Limits;
use crate::model::Span;

use super::payload::{Budget, CaptureError, Layer, Payload, UnwrapOptions};

/// Whether `input` begins (after blank space) with an HTTP/1.x request or status line.
pub fn looks_like_http(input: &[u8]) -> bool {
    let start = skip_blank(input, 0);
    let line = input.get(start..).unwrap_or(&[]);
    let end = line
        .iter()
        .position(|&c| c == b'\n')
        .unwrap_or(line.len())
        .min(8192);
    let line = trim_cr(line.get(..end).unwrap_or(&[]));
    parse_start_line(line).is_some()
}

/// The start line, split.
enum StartLine<'a> {
    Request { method: &'a str, version: &'a str },
    Response { version: &'a str, status: u16 },
}

fn parse_start_line(line: &[u8]) -> Option<StartLine<'_>> {
    let line = std::str::from_utf8(line).ok()?;
    if let Some(rest) = line.strip_prefix("HTTP/1.") {
        let version = line.get(..8)?;
        let mut parts = rest.get(1..)?.strip_prefix(' ')?.splitn(2, ' ');
        let code = parts.next()?;
        if !matches!(rest.as_bytes().first(), Some(b'0' | b'1'))
            || code.len() != 3
            || !code.bytes().all(|c| c.is_ascii_digit())
        {
            return None;
        }
        let status = code.parse().ok()?;
        return Some(StartLine::Response { version, status });
    }
    let mut parts = line.split(' ');
    let method = parts.next()?;
    let target = parts.next()?;
    let version = parts.next()?;
    if parts.next().is_some()
        || !is_method(method)
        || target.is_empty()
        || !(version == "HTTP/1.1" || version == "HTTP/1.0")
    {
        return None;
    }
    Some(StartLine::Request { method, version })
}

/// Whether `method` is a request method: a token (RFC 9110 §9.1, §5.6.2), so extension methods
/// such as Exchange's `RPC_IN_DATA` or WebDAV's `VERSION-CONTROL` are requests too. Bounded in
/// length, as no registered method is near it, so that a long first word of other text is not
/// taken for one.
fn is_method(method: &str) -> bool {
    (1..=32).contains(&method.len())
        && method
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c))
}

fn skip_blank(input: &[u8], mut pos: usize) -> usize {
    while input
        .get(pos)
        .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
    {
        pos += 1;
    }
    pos
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The line starting at `pos`: its bytes (without CR LF) and the offset after its LF (or the
/// end of the input when it has none).
fn line_at(input: &[u8], pos: usize) -> (&[u8], usize, bool) {
    let rest = input.get(pos..).unwrap_or(&[]);
    match rest.iter().position(|&c| c == b'\n') {
        Some(n) => (trim_cr(rest.get(..n).unwrap_or(&[])), pos + n + 1, true),
        None => (trim_cr(rest), input.len(), false),
    }
}

fn is_grpc(content_type: &str) -> bool {
    let media = super::media::media_type(content_type);
    media == "application/grpc"
        || media.starts_with("application/grpc+")
        || media.starts_with("application/grpc-web")
}

fn is_grpc_web_text(content_type: &str) -> bool {
    let media = super::media::media_type(content_type);
    media == "application/grpc-web-text" || media.starts_with("application/grpc-web-text+")
}

/// Splits `input` into HTTP/1.x messages and returns each body as a payload.
///
/// Every message gives one payload, bodiless ones too (with empty bytes), so a request stays
/// paired with its response. Errors name the layer ("HTTP/1.1 response", "chunked", "gzip", …)
/// and the offset in `input`, and carry the payloads found before, plus the partial body.
pub fn parse_messages(input: &[u8], options: &UnwrapOptions) -> Result<Vec<Payload>, CaptureError> {
    parse_messages_within(input, options, &mut Budget::unlimited())
}

/// [`parse_messages`], every decompression also within what is left of `budget`. A switch of
/// protocols (`101`, a `CONNECT` tunnel) ends the HTTP messages; the bytes after it are one more
/// payload, with a layer saying what they are.
pub(crate) fn parse_messages_within(
    input: &[u8],
    options: &UnwrapOptions,
    budget: &mut Budget,
) -> Result<Vec<Payload>, CaptureError> {
    let mut pairing = Pairing::default();
    let mut parsed = parse_side(input, 0, options, budget, &mut pairing);
    if !parsed.errors.is_empty() {
        // Pasted text has no warnings beside its payloads: the first fault is the error, with
        // every message found (those after it too).
        let mut e = parsed.errors.swap_remove(0).error;
        e.extracted = parsed.payloads;
        return Err(e);
    }
    let mut found = parsed.payloads;
    if let Some(switch) = parsed.switched {
        if switch.at < input.len() {
            found.push(Payload {
                message: None,
                avro: None,
                bytes: input.get(switch.at..).unwrap_or(&[]).into(),
                layers: vec![Layer {
                    name: switch.layer_name(),
                    detail: format!("bytes {}.. after the switch", switch.at),
                    span: Span::new(switch.at, input.len()),
                }],
                hint: None,
                meta: Default::default(),
                cut: None,
                protocol: None,
            });
        }
    }
    Ok(found)
}

/// What the responses of a connection answer: the methods of the requests not answered yet,
/// oldest first. HTTP/1.1 answers in order (pipelined requests too), and whether a response has a
/// body depends on its request (RFC 9112 §6.3: none for HEAD, none for a `2xx` to `CONNECT`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Pairing {
    methods: std::collections::VecDeque<String>,
}

/// Where HTTP/1.x ends on a connection: after a `101 Switching Protocols` (to `protocol`, the
/// `Upgrade` token) or a `CONNECT` tunnel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Switch {
    /// The offset after the message that switched.
    pub(crate) at: usize,
    /// The protocol switched to, lowercase (`websocket`, `h2c`), or `tunnel` after `CONNECT`.
    pub(crate) protocol: String,
}

impl Switch {
    /// How the bytes after the switch are named in their layer.
    pub(crate) fn layer_name(&self) -> String {
        match self.protocol.as_str() {
            "tunnel" => "CONNECT tunnel".to_string(),
            p => format!("{p} (after 101 Switching Protocols)"),
        }
    }
}

/// One direction's HTTP/1.x messages.
#[derive(Debug, Clone, Default)]
pub(crate) struct Side {
    /// One payload per message (bodiless ones too).
    pub(crate) payloads: Vec<Payload>,
    /// Where the connection stopped speaking HTTP/1.x, if it did.
    pub(crate) switched: Option<Switch>,
    /// Messages that failed, each on its own: its partial payload is among `payloads` (marked
    /// `truncated`), and reading went on at the next message.
    pub(crate) errors: Vec<Failed>,
}

/// One message that failed: why (its offset in the failing layer's own input; nothing in
/// `extracted`), and the bytes of the message in the side's input, which name its frames.
#[derive(Debug, Clone)]
pub(crate) struct Failed {
    pub(crate) error: CaptureError,
    pub(crate) message: Span,
}

/// The messages of one direction from `start`, requests adding to `pairing` and responses taking
/// from it. A request that asks to switch (`Upgrade`, `CONNECT`) ends the direction when the
/// bytes after it are not another HTTP message; a `101` response or a `2xx` to `CONNECT` ends it
/// always.
///
/// A message that fails is one failed message ([`Side::errors`]): a body whose coding does not
/// undo keeps its place (the message's framing said where it ends), and bytes that are no
/// message are skipped to the next request or status line ([`next_message_start`]), as tshark
/// resynchronises. Only a message cut by the end of the input ends the direction.
pub(crate) fn parse_side(
    input: &[u8],
    start: usize,
    options: &UnwrapOptions,
    budget: &mut Budget,
    pairing: &mut Pairing,
) -> Side {
    let mut side = Side::default();
    let mut pos = skip_blank(input, start);
    while pos < input.len() {
        let answering = pairing.methods.front().cloned();
        match parse_one(input, pos, options, budget, answering.as_deref()) {
            Ok((payload, next, info, problem)) => {
                side.payloads.push(payload);
                side.errors.extend(problem.map(|error| Failed {
                    error,
                    message: Span::new(pos, next.max(pos)),
                }));
                let next = next.max(pos + 1);
                match info {
                    Info::Request { method, upgrade } => {
                        let asks = method == "CONNECT" || upgrade.is_some();
                        pairing.methods.push_back(method.clone());
                        if asks && !looks_like_http(input.get(next..).unwrap_or(&[])) {
                            side.switched = Some(Switch {
                                at: next,
                                protocol: if method == "CONNECT" {
                                    "tunnel".to_string()
                                } else {
                                    upgrade.unwrap_or_default()
                                },
                            });
                            return side;
                        }
                    }
                    Info::Response { status, upgrade } => {
                        if (100..200).contains(&status) && status != 101 {
                            // An interim response: the final one for the same request follows.
                        } else {
                            let method = pairing.methods.pop_front();
                            let tunnel = method.as_deref() == Some("CONNECT")
                                && (200..300).contains(&status);
                            if status == 101 || tunnel {
                                side.switched = Some(Switch {
                                    at: next,
                                    protocol: if tunnel {
                                        "tunnel".to_string()
                                    } else {
                                        upgrade.unwrap_or_else(|| "an unnamed protocol".into())
                                    },
                                });
                                return side;
                            }
                        }
                    }
                }
                pos = skip_blank(input, next);
            }
            Err(mut e) => {
                // A response that began and failed still answered its request.
                let response = e
                    .extracted
                    .first()
                    .and_then(|p| p.layers.first())
                    .is_some_and(|l| l.name.ends_with(" response"));
                if response {
                    pairing.methods.pop_front();
                }
                side.payloads.append(&mut e.extracted);
                side.errors.push(Failed {
                    error: e,
                    message: Span::new(pos, input.len()),
                });
                match next_message_start(input, pos + 1) {
                    Some(next) => pos = next,
                    None => break,
                }
            }
        }
    }
    side
}

/// The start of the next line at or after `from` that is an HTTP/1.x request or status line
/// (a line start: the input's start or just after a LF).
pub(crate) fn next_message_start(input: &[u8], from: usize) -> Option<usize> {
    next_message_start_among(input, from, &[])
}

/// [`next_message_start`], also trying each offset of `boundaries` (in order: where TCP
/// segments began, since a message after a body with no final newline starts mid-line but at a
/// segment's first byte, where tshark looks for it too).
pub(crate) fn next_message_start_among(
    input: &[u8],
    from: usize,
    boundaries: &[usize],
) -> Option<usize> {
    let starts_message = |at: usize| {
        let (line, _, _) = line_at(input, at);
        line.len() <= 8192 && parse_start_line(line).is_some()
    };
    let mut at = from;
    let mut next_boundary = boundaries.partition_point(|&b| b < from);
    while at < input.len() {
        let line_start = if at == 0 || input.get(at - 1) == Some(&b'\n') {
            Some(at)
        } else {
            input
                .get(at..)
                .and_then(|rest| rest.iter().position(|&c| c == b'\n'))
                .map(|n| at + n + 1)
        };
        // A segment boundary before the next line start is tried first.
        while let Some(&b) = boundaries.get(next_boundary) {
            if line_start.is_some_and(|l| b >= l) || b >= input.len() {
                break;
            }
            next_boundary += 1;
            if starts_message(b) {
                return Some(b);
            }
        }
        let line_start = line_start?;
        if line_start < input.len() && starts_message(line_start) {
            return Some(line_start);
        }
        at = line_start + 1;
    }
    None
}

/// What a parsed message tells the messages after it.
enum Info {
    Request {
        method: String,
        /// The `Upgrade` header's first token, lowercase.
        upgrade: Option<String>,
    },
    Response {
        status: u16,
        upgrade: Option<String>,
    },
}

fn err(layer: &str, offset: usize, message: String, extracted: Vec<Payload>) -> CaptureError {
    CaptureError {
        layer: layer.to_string(),
        offset,
        message,
        extracted,
    }
}

/// One message at `start`: its payload, the offset after it and what it tells the messages after
/// it. `answering` is the method of the request a response answers, when it is known.
///
/// A body whose content coding or gRPC-Web-text does not undo is no reason to lose the messages
/// after it: the message is returned with its body as far as it was undone (marked
/// `truncated`), and the fault beside it.
#[allow(clippy::type_complexity)]
fn parse_one(
    input: &[u8],
    start: usize,
    options: &UnwrapOptions,
    budget: &mut Budget,
    answering: Option<&str>,
) -> Result<(Payload, usize, Info, Option<CaptureError>), CaptureError> {
    let (line, pos, _) = line_at(input, start);
    let start_line = parse_start_line(line).ok_or_else(|| {
        err(
            "HTTP",
            start,
            "expected an HTTP/1.x request or status line".to_string(),
            Vec::new(),
        )
    })?;
    let (layer_name, has_body_by_default, no_body) = body_rule(&start_line, answering);
    let start_text = String::from_utf8_lossy(line).into_owned();
    let mut meta = crate::capture::Meta::from([("start-line", start_text.as_str())]);
    if let StartLine::Request { method, .. } = start_line {
        meta.push(("method".to_string(), method.to_string()));
    }
    if let (StartLine::Response { .. }, Some(method)) = (&start_line, answering) {
        meta.push(("request-method".to_string(), method.to_string()));
    }
    let headers = Headers::read(input, pos, start, &layer_name, options, &mut meta)?;
    let detail = message_detail(start_text, &headers, no_body.as_deref());
    let info = match start_line {
        StartLine::Request { method, .. } => Info::Request {
            method: method.to_string(),
            upgrade: headers.upgrade.clone(),
        },
        StartLine::Response { status, .. } => Info::Response {
            status,
            upgrade: headers.upgrade.clone(),
        },
    };
    let hint = headers
        .content_type
        .as_deref()
        .and_then(hint_for_media_type);
    if headers.content_type.as_deref().is_some_and(is_grpc) {
        meta.push(("grpc-body".to_string(), "true".to_string()));
    }
    let message = MessageRead {
        input,
        start,
        layer_name,
        has_body_by_default,
        no_body,
        headers,
    };
    let mut parts = Parts {
        layers: Vec::new(),
        hint,
        meta,
    };
    let (body, end) = message.framed_body(detail, &mut parts)?;
    match message.decode_body(body, &mut parts, options, budget) {
        Ok(body) => Ok((parts.into_payload(body, None), end, info, None)),
        Err(fault) => {
            let cut = format!("{}: {}", fault.layer, fault.message);
            let partial = parts.into_payload(fault.partial, Some(cut));
            let fault = err(fault.layer, fault.offset, fault.message, Vec::new());
            Ok((partial, end, info, Some(fault)))
        }
    }
}

/// What a start line says of its message's body: the message layer's name, whether a body
/// runs to the end of the input when no header frames it (responses), and why the message has
/// no body whatever its headers say.
///
/// RFC 9112 §6.3: responses to HEAD, 1xx, 204 and 304 responses and 2xx responses to CONNECT
/// have no body, whatever their headers say (a 304's Content-Length describes the resource).
fn body_rule(start_line: &StartLine, answering: Option<&str>) -> (String, bool, Option<String>) {
    match *start_line {
        StartLine::Request { version, .. } => (format!("{version} request"), false, None),
        StartLine::Response { version, status } => {
            let why = if answering == Some("HEAD") {
                Some("a response to HEAD has no body".to_string())
            } else if (100..200).contains(&status) || status == 204 || status == 304 {
                Some(format!("a {status} response has no body"))
            } else if answering == Some("CONNECT") && (200..300).contains(&status) {
                Some("a 2xx response to CONNECT has no body: the tunnel follows".to_string())
            } else {
                None
            };
            (format!("{version} response"), true, why)
        }
    }
}

/// The header fields of one message that its framing and its payload need.
#[derive(Default)]
struct Headers {
    /// Content-Length.
    content_length: Option<usize>,
    /// Content-Type.
    content_type: Option<String>,
    /// Transfer-Encoding's codings, in order.
    transfer_codings: Vec<String>,
    /// Content-Encoding's codings, in the order they were applied.
    content_codings: Vec<String>,
    /// The `Upgrade` header's first token, lowercase.
    upgrade: Option<String>,
    /// Whether the empty line that ends the headers came.
    ended: bool,
    /// Where the headers end (after the empty line, or at the end of the input).
    end: usize,
}

impl Headers {
    /// Reads the header lines from `pos` to the empty line (or the end of the input), each
    /// field added to `meta` while the header limits hold; past them the fields are still read
    /// for the message's framing, not kept, and a warning in `meta` counts them.
    fn read(
        input: &[u8],
        mut pos: usize,
        start: usize,
        layer_name: &str,
        options: &UnwrapOptions,
        meta: &mut crate::capture::Meta,
    ) -> Result<Headers, CaptureError> {
        let mut headers = Headers::default();
        // The header list's size as HTTP/2 counts it (name + value + 32 per field) and its
        // fields.
        let (mut list_size, mut fields) = (0usize, 0usize);
        let mut over: Option<String> = None;
        while pos < input.len() {
            let (hline, next, _) = line_at(input, pos);
            if hline.is_empty() {
                pos = next;
                headers.ended = true;
                break;
            }
            let text = String::from_utf8_lossy(hline);
            let Some((name, value)) = text.split_once(':') else {
                return Err(err(
                    layer_name,
                    pos,
                    format!("header line \"{}\" has no colon", truncate(&text, 60)),
                    Vec::new(),
                ));
            };
            let (name, value) = (name.trim(), value.trim());
            headers.take(name, value, layer_name, pos)?;
            fields += 1;
            list_size = list_size
                .saturating_add(name.len())
                .saturating_add(value.len())
                .saturating_add(32);
            if over.is_none() {
                over = header_limit_passed(fields, list_size, options);
            }
            if over.is_none() {
                meta.push((name.to_string(), value.to_string()));
            }
            pos = next;
        }
        if let Some(why) = over {
            meta.push((
                "warning".to_string(),
                format!(
                    "the {layer_name} at byte {start} has {why}: {fields} fields, {list_size} bytes; the fields past the limit are not kept"
                ),
            ));
        }
        headers.end = pos;
        Ok(headers)
    }

    /// Notes the field `name: value` (of the line at `pos`) if the message's framing or payload
    /// needs it; a Content-Length that is no byte count, or disagrees with an earlier one, is
    /// a fault.
    fn take(
        &mut self,
        name: &str,
        value: &str,
        layer_name: &str,
        pos: usize,
    ) -> Result<(), CaptureError> {
        match name.to_ascii_lowercase().as_str() {
            "content-length" => {
                let n: usize = value.parse().map_err(|_| {
                    err(
                        layer_name,
                        pos,
                        format!("Content-Length \"{value}\" is not a byte count"),
                        Vec::new(),
                    )
                })?;
                if self.content_length.is_some_and(|c| c != n) {
                    return Err(err(
                        layer_name,
                        pos,
                        "two Content-Length headers disagree".to_string(),
                        Vec::new(),
                    ));
                }
                self.content_length = Some(n);
            }
            "content-type" => self.content_type = Some(value.to_string()),
            "transfer-encoding" => self.transfer_codings.extend(codings(value)),
            "content-encoding" => self.content_codings.extend(codings(value)),
            "upgrade" => {
                self.upgrade = value
                    .split(',')
                    .next()
                    .map(|t| t.trim().to_ascii_lowercase())
                    .filter(|t| !t.is_empty());
            }
            _ => {}
        }
        Ok(())
    }
}

/// Which header limit a list of `fields` fields and `list_size` bytes (as HTTP/2 counts them)
/// passes, in words.
fn header_limit_passed(fields: usize, list_size: usize, options: &UnwrapOptions) -> Option<String> {
    if fields > options.max_headers {
        Some(format!(
            "more than {} header fields ({})",
            options.max_headers,
            Limits::hint("headers")
        ))
    } else if list_size > options.max_header_list {
        Some(format!(
            "header fields of more than {} bytes (name + value + 32 per field; {})",
            options.max_header_list,
            Limits::hint("header-list")
        ))
    } else {
        None
    }
}

/// The message layer's detail: the start line, the Content-Type, and why there is no body
/// (naming the framing headers that are then no body).
fn message_detail(start_text: String, headers: &Headers, no_body: Option<&str>) -> String {
    let mut detail = start_text;
    if let Some(ct) = &headers.content_type {
        detail.push_str(&format!("; Content-Type: {ct}"));
    }
    if let Some(why) = no_body {
        let ignored = match (headers.content_length, headers.transfer_codings.is_empty()) {
            (Some(n), _) if n > 0 => format!(" (its Content-Length: {n} is not a body)"),
            (_, false) => " (its Transfer-Encoding is not a body)".to_string(),
            _ => String::new(),
        };
        detail.push_str(&format!("; {why}{ignored}"));
    }
    detail
}

/// What one message gathers on its way to a payload: its layers, the format its Content-Type
/// announces and its facts.
#[derive(Default)]
struct Parts {
    /// The layers peeled, outermost first.
    layers: Vec<Layer>,
    /// The format the Content-Type announces.
    hint: Option<crate::codec::Format>,
    /// Start line, headers, trailers and flags.
    meta: crate::capture::Meta,
}

impl Parts {
    /// The payload of `bytes` with these layers and facts, cut short for `cut` when given.
    fn into_payload(self, bytes: Vec<u8>, cut: Option<String>) -> Payload {
        Payload {
            message: None,
            avro: None,
            bytes: bytes.into(),
            layers: self.layers,
            hint: self.hint,
            meta: self.meta,
            cut,
            protocol: None,
        }
    }
}

/// A body whose content coding or gRPC-Web-text does not undo.
struct BodyFault {
    /// The body as far as it was undone.
    partial: Vec<u8>,
    /// The layer that failed (the coding's name, `gRPC-Web-text`).
    layer: &'static str,
    /// Where in its input the layer failed.
    offset: usize,
    /// Why.
    message: String,
}

/// One HTTP/1.x message past its headers: where it starts, what its start line says of its
/// body, and its headers.
struct MessageRead<'i> {
    /// The whole input.
    input: &'i [u8],
    /// Where the message's start line begins.
    start: usize,
    /// The message layer's name (`HTTP/1.1 request`).
    layer_name: String,
    /// Whether a body runs to the end of the input when no header frames it.
    has_body_by_default: bool,
    /// Why the message has no body whatever its headers say.
    no_body: Option<String>,
    /// Its headers.
    headers: Headers,
}

impl MessageRead<'_> {
    /// The body as Transfer-Encoding: chunked or Content-Length frame it, and the offset after
    /// the message; the message layer (with `detail`) and the chunked layer join `parts`. A
    /// body cut short is a fault carrying the message as far as it goes.
    fn framed_body(
        &self,
        detail: String,
        parts: &mut Parts,
    ) -> Result<(Vec<u8>, usize), CaptureError> {
        let (input, start, headers_end) = (self.input, self.start, self.headers.end);
        let chunked = self.no_body.is_none()
            && self
                .headers
                .transfer_codings
                .last()
                .is_some_and(|c| c == "chunked");
        let mut message_layer = Layer {
            name: self.layer_name.clone(),
            detail,
            span: Span::new(start, headers_end),
        };
        if chunked {
            return match dechunk(input, headers_end, &mut parts.meta) {
                Ok((body, end, chunks)) => {
                    message_layer.span = Span::new(start, end);
                    parts.layers.push(message_layer);
                    parts.layers.push(Layer {
                        name: "chunked".to_string(),
                        detail: format!("{chunks} chunks, {} bytes", body.len()),
                        span: Span::new(0, end.saturating_sub(headers_end)),
                    });
                    Ok((body, end))
                }
                Err((offset, message, partial)) => {
                    message_layer.span = Span::new(start, input.len());
                    parts.layers.push(message_layer);
                    let cut = Some(format!("chunked: {message}"));
                    let partial = std::mem::take(parts).into_payload(partial, cut);
                    Err(err("chunked", offset, message, vec![partial]))
                }
            };
        }
        let available = input.len().saturating_sub(headers_end);
        let length = match self.headers.content_length {
            _ if self.no_body.is_some() => 0,
            Some(n) => n,
            None if self.has_body_by_default && self.headers.ended => available,
            None => 0,
        };
        if length > available {
            let body = input.get(headers_end..).unwrap_or(&[]).to_vec();
            message_layer.span = Span::new(start, input.len());
            parts.layers.push(message_layer);
            let why =
                format!("the body has {available} of the {length} bytes Content-Length announces");
            let partial = std::mem::take(parts).into_payload(body, Some(why.clone()));
            return Err(err(&self.layer_name, input.len(), why, vec![partial]));
        }
        let end = headers_end + length;
        message_layer.span = Span::new(start, end);
        parts.layers.push(message_layer);
        Ok((input.get(headers_end..end).unwrap_or(&[]).to_vec(), end))
    }

    /// Undoes the body's content codings, then gRPC-Web-text's base64, each adding a layer to
    /// `parts`. On a fault: the body as far as it was undone, and the layer's fault.
    fn decode_body(
        &self,
        mut body: Vec<u8>,
        parts: &mut Parts,
        options: &UnwrapOptions,
        budget: &mut Budget,
    ) -> Result<Vec<u8>, BodyFault> {
        // An empty body is empty whatever Content-Encoding says (a 304 or a HEAD answer keeps
        // the resource's headers).
        let codings: &[String] = if body.is_empty() {
            &[]
        } else {
            &self.headers.content_codings
        };
        match undo_content_codings(
            codings,
            body,
            &mut parts.layers,
            &mut parts.meta,
            options,
            budget,
        ) {
            Ok(undone) => body = undone,
            Err((layer, message, partial)) => {
                return Err(BodyFault {
                    partial,
                    layer,
                    offset: 0,
                    message,
                });
            }
        }
        // gRPC-Web-text: the frames are base64, often one padded chunk per frame.
        if self
            .headers
            .content_type
            .as_deref()
            .is_some_and(is_grpc_web_text)
        {
            match super::grpcweb::base64_chunks(&body) {
                Ok((bytes, chunks)) => {
                    parts.layers.push(Layer {
                        name: "gRPC-Web-text".to_string(),
                        detail: format!(
                            "base64 in {chunks} chunk(s), {} → {} bytes",
                            body.len(),
                            bytes.len()
                        ),
                        span: Span::new(0, body.len()),
                    });
                    body = bytes;
                }
                Err((offset, message)) => {
                    return Err(BodyFault {
                        partial: body,
                        layer: "gRPC-Web-text",
                        offset,
                        message,
                    });
                }
            }
        }
        Ok(body)
    }
}

fn truncate(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// Undoes the content codings of a body (`codings` as its Content-Encoding lists them, in the
/// order they were applied: the last applied is undone first), each within `budget`, each
/// adding a layer. An unknown coding leaves the body as it is from there, with a warning in
/// `meta`. On a fault: the coding's name, why, and the body as far as it was undone.
pub(crate) fn undo_content_codings(
    codings: &[String],
    mut body: Vec<u8>,
    layers: &mut Vec<Layer>,
    meta: &mut crate::capture::Meta,
    options: &UnwrapOptions,
    budget: &mut Budget,
) -> Result<Vec<u8>, (&'static str, String, Vec<u8>)> {
    for coding in codings.iter().rev() {
        if coding == "identity" {
            continue;
        }
        let name = match coding.as_str() {
            "gzip" | "x-gzip" => "gzip",
            "deflate" => "deflate",
            "br" => "br",
            "zstd" => "zstd",
            other => {
                meta.push((
                    "warning".to_string(),
                    format!("unknown Content-Encoding \"{other}\"; the body is left encoded"),
                ));
                break;
            }
        };
        match decompress_noted(name, &body, options, budget) {
            Ok((out, note)) => {
                let mut detail = format!("{} → {} bytes", body.len(), out.len());
                if let Some(note) = note {
                    detail.push_str("; ");
                    detail.push_str(note);
                }
                layers.push(Layer {
                    name: name.to_string(),
                    detail,
                    span: Span::new(0, body.len()),
                });
                body = out;
            }
            Err(e) => return Err((name, e.to_string(), body)),
        }
    }
    Ok(body)
}

/// The content codings that are undone, by the names of the layers that undo them.
pub(crate) const CONTENT_CODINGS: [&str; 4] = ["gzip", "deflate", "br", "zstd"];

/// The codings a Content-Encoding or Transfer-Encoding header lists, lowercase.
pub(crate) fn codings(value: &str) -> impl Iterator<Item = String> + '_ {
    value
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty())
}

/// Undoes chunked transfer coding from `pos`: the body, the offset after the trailers and the
/// number of data chunks; or the fault's offset, message and the body so far.
#[allow(clippy::type_complexity)]
fn dechunk(
    input: &[u8],
    pos: usize,
    meta: &mut crate::capture::Meta,
) -> Result<(Vec<u8>, usize, usize), (usize, String, Vec<u8>)> {
    let join = |spans: &[Span]| {
        let mut body = Vec::with_capacity(spans.iter().map(|s| s.len()).sum());
        for s in spans {
            body.extend_from_slice(input.get(s.start..s.end).unwrap_or(&[]));
        }
        body
    };
    let (spans, mut pos) =
        chunk_data(input, pos).map_err(|(at, why, spans)| (at, why, join(&spans)))?;
    // Trailers, up to an empty line or the end of the input.
    while pos < input.len() {
        let (line, next, _) = line_at(input, pos);
        pos = next;
        if line.is_empty() {
            break;
        }
        let text = String::from_utf8_lossy(line);
        if let Some((name, value)) = text.split_once(':') {
            meta.push((format!("trailer {}", name.trim()), value.trim().to_string()));
        }
    }
    Ok((join(&spans), pos, spans.len()))
}

/// Where the data of each chunk of a chunked body from `pos` lies in `input`, in order, and the
/// offset after the last (zero-size) chunk's line; or the fault's offset, message and the data
/// found before it (a chunk the input cuts short counted as far as it goes).
#[allow(clippy::type_complexity)]
pub(crate) fn chunk_data(
    input: &[u8],
    mut pos: usize,
) -> Result<(Vec<Span>, usize), (usize, String, Vec<Span>)> {
    let mut spans = Vec::new();
    loop {
        let (line, next, complete) = line_at(input, pos);
        if !complete {
            return Err((
                pos,
                "the input ends inside a chunk-size line".to_string(),
                spans,
            ));
        }
        let size_text = line.split(|&c| c == b';').next().unwrap_or(&[]);
        let size_text = String::from_utf8_lossy(size_text);
        let size_text = size_text.trim();
        // HEXDIG only (no sign), leading zeros allowed.
        let hex = !size_text.is_empty() && size_text.bytes().all(|c| c.is_ascii_hexdigit());
        let Some(size) = usize::from_str_radix(size_text, 16).ok().filter(|_| hex) else {
            let why = if hex {
                format!(
                    "chunk size \"{}\" is too large: more than {} bytes",
                    truncate(size_text, 20),
                    usize::MAX
                )
            } else {
                format!(
                    "chunk size \"{}\" is not a hex number",
                    truncate(size_text, 20)
                )
            };
            return Err((pos, why, spans));
        };
        pos = next;
        if size == 0 {
            return Ok((spans, pos));
        }
        let available = input.len().saturating_sub(pos);
        if size > available {
            spans.push(Span::new(pos, input.len().max(pos)));
            return Err((
                input.len(),
                format!(
                    "chunk of {size} bytes runs past the end of the input ({available} bytes left)"
                ),
                spans,
            ));
        }
        spans.push(Span::new(pos, pos + size));
        pos += size;
        // CRLF (or LF) after the data.
        match input.get(pos..) {
            Some([b'\r', b'\n', ..]) => pos += 2,
            Some([b'\n', ..]) => pos += 1,
            Some([]) | None => {
                return Err((
                    pos,
                    "the input ends after a chunk's data".to_string(),
                    spans,
                ))
            }
            Some(_) => {
                return Err((
                    pos,
                    "a chunk's data is not followed by a line end".to_string(),
                    spans,
                ))
            }
        }
    }
}

/// Decompresses `data` with `encoding` ("gzip", "deflate" (zlib or raw), "br", "zstd"), bounded by
/// [`UnwrapOptions::decompression_limit`]. The error says why, in the words a layer's fault
/// shows.
pub fn decompress(
    encoding: &str,
    data: &[u8],
    options: &UnwrapOptions,
) -> Result<Vec<u8>, DecompressError> {
    decompress_within(encoding, data, options, &mut Budget::unlimited())
}

/// [`decompress`], also within what is left of `budget`, which the output is taken from.
pub(crate) fn decompress_within(
    encoding: &str,
    data: &[u8],
    options: &UnwrapOptions,
    budget: &mut Budget,
) -> Result<Vec<u8>, DecompressError> {
    decompress_noted(encoding, data, options, budget).map(|(out, _)| out)
}

/// [`decompress_within`], and what a layer's detail should say of a stream that decoded but
/// ended unusually (a deflate stream without a final block).
pub(crate) fn decompress_noted(
    encoding: &str,
    data: &[u8],
    options: &UnwrapOptions,
    budget: &mut Budget,
) -> Result<(Vec<u8>, Option<&'static str>), DecompressError> {
    let own = options.decompression_limit(data.len());
    let bound = if budget.left < own {
        Bound::Overall(budget.left, budget.total)
    } else {
        Bound::Own(own)
    };
    let mut note = None;
    let out = match encoding {
        "gzip" => read_bounded(flate2::read::MultiGzDecoder::new(data), bound, encoding),
        "deflate" => {
            // RFC 9110 §8.4.1.2 says zlib; servers send raw deflate as often. Either may end
            // at a sync flush (`00 00 ff ff`) with no final block, as streaming compressors
            // leave it: what was inflated is the body.
            let zlib = matches!(data, [cmf, flg, ..]
                if cmf & 0x0f == 8 && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0);
            let (out, ended) =
                inflate_bounded(data, zlib, bound, if zlib { "zlib" } else { "raw deflate" })?;
            if !ended {
                note = Some("no final block: the stream ends at a flush");
            }
            Ok(out)
        }
        "br" => read_bounded(
            brotli_decompressor::Decompressor::new(data, 4096),
            bound,
            encoding,
        ),
        "zstd" => {
            let decoder = ruzstd::decoding::StreamingDecoder::new(data)
                .map_err(|e| DecompressError::ZstdHeader(e.to_string()))?;
            read_bounded(decoder, bound, encoding)
        }
        other => Err(DecompressError::UnknownCoding(other.to_string())),
    }?;
    budget.left = budget.left.saturating_sub(out.len());
    Ok((out, note))
}

/// Inflates a zlib or raw deflate stream within `bound`: the output, and whether the stream
/// reached its final block (a stream that stops at a block boundary, as a sync flush leaves
/// it, is read as far as it goes, as zlib's own inflate and tshark read it).
fn inflate_bounded(
    data: &[u8],
    zlib: bool,
    bound: Bound,
    what: &str,
) -> Result<(Vec<u8>, bool), DecompressError> {
    let limit = match bound {
        Bound::Own(n) | Bound::Overall(n, _) => n,
    };
    let mut inflater = flate2::Decompress::new(zlib);
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let (read, wrote) = (inflater.total_in(), inflater.total_out());
        let at = usize::try_from(read).unwrap_or(usize::MAX);
        let input = data.get(at..).unwrap_or(&[]);
        let status = inflater
            .decompress(input, &mut buf, flate2::FlushDecompress::None)
            .map_err(|e| DecompressError::Corrupt {
                stream: what.to_string(),
                output: out.len(),
                reason: e.to_string(),
            })?;
        let produced = usize::try_from(inflater.total_out() - wrote).unwrap_or(0);
        if out.len().saturating_add(produced) > limit {
            return Err(over_bound(bound, what));
        }
        out.extend_from_slice(buf.get(..produced).unwrap_or(&[]));
        if status == flate2::Status::StreamEnd {
            return Ok((out, true));
        }
        if produced == 0 && inflater.total_in() == read {
            // No progress: the input is used up without a final block.
            return Ok((out, false));
        }
    }
}

/// The fault of a decompression stopped by `bound`.
fn over_bound(bound: Bound, what: &str) -> DecompressError {
    let stream = what.to_string();
    match bound {
        Bound::Own(limit) => DecompressError::OverLimit { stream, limit },
        Bound::Overall(left, total) => DecompressError::OverBudget {
            stream,
            left,
            total,
        },
    }
}

/// Why a body's content coding (or a compressed stream) does not undo.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecompressError {
    /// A coding other than `gzip`, `deflate`, `br` and `zstd`.
    #[error("unknown content coding \"{0}\"")]
    UnknownCoding(String),
    /// A zstd frame header that does not read, with the decoder's words.
    #[error("the zstd frame header is invalid: {0}")]
    ZstdHeader(String),
    /// A stream that stops decoding: the stream's name (`gzip`, `zlib`, `raw deflate`…), the
    /// bytes it had given, and the decoder's words.
    #[error("the {stream} stream is corrupt after {output} bytes of output: {reason}")]
    Corrupt {
        /// The stream's name.
        stream: String,
        /// Bytes of output before the fault.
        output: usize,
        /// The decoder's words.
        reason: String,
    },
    /// A stream that expands past its own limit (by size and by ratio to its input).
    #[error(
        "the {stream} stream expands past the limit of {limit} bytes (bounded by size and by ratio: limit decompressed or ratio; `--limit decompressed=N` or `--limit ratio=N` raises it)"
    )]
    OverLimit {
        /// The stream's name.
        stream: String,
        /// The limit, in bytes.
        limit: usize,
    },
    /// A stream that expands past what is left of the input's overall decompression budget.
    #[error(
        "the {stream} stream expands past the overall limit of {total} decompressed bytes for one input ({left} left after the layers before it; bounded by size and by ratio to the input: limit decompressed or ratio; `--limit decompressed=N` or `--limit ratio=N` raises it)"
    )]
    OverBudget {
        /// The stream's name.
        stream: String,
        /// Bytes left of the budget when the stream began.
        left: usize,
        /// The whole budget, in bytes.
        total: usize,
    },
}

/// What stops one decompression: its own limit, or what is left of the input's overall budget
/// (left, total).
#[derive(Debug, Clone, Copy)]
enum Bound {
    Own(usize),
    Overall(usize, usize),
}

/// Reads `reader` to its end within `bound`, naming the stream `what` in a fault.
fn read_bounded<R: Read>(
    mut reader: R,
    bound: Bound,
    what: &str,
) -> Result<Vec<u8>, DecompressError> {
    let limit = match bound {
        Bound::Own(n) | Bound::Overall(n, _) => n,
    };
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = reader
            .read(&mut buf)
            .map_err(|e| DecompressError::Corrupt {
                stream: what.to_string(),
                output: out.len(),
                reason: e.to_string(),
            })?;
        if n == 0 {
            return Ok(out);
        }
        if out.len().saturating_add(n) > limit {
            return Err(over_bound(bound, what));
        }
        out.extend_from_slice(buf.get(..n).unwrap_or(&[]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_lines() {
        assert!(looks_like_http(b"\r\nHTTP/1.1 204 No Content\r\n\r\n"));
        assert!(looks_like_http(b"POST /x HTTP/1.0\n"));
        assert!(!looks_like_http(b"HTTP/2 200\r\n"));
        // A method is any token: extension methods are requests too (and methods are
        // case-sensitive, so `get` is a method, if an unknown one).
        assert!(looks_like_http(
            b"RPC_IN_DATA /rpc/rpcproxy.dll?x:6001 HTTP/1.1\r\n"
        ));
        assert!(looks_like_http(b"VERSION-CONTROL /doc HTTP/1.1\r\n"));
        assert!(looks_like_http(b"get / HTTP/1.1\r\n"));
        assert!(!looks_like_http(b"GET{} / HTTP/1.1\r\n"));
        assert!(!looks_like_http(b" / HTTP/1.1\r\n"));
        let long = format!("{} / HTTP/1.1\r\n", "A".repeat(33));
        assert!(!looks_like_http(long.as_bytes()));
        assert!(!looks_like_http(b"GET / HTTP/1.1 extra\r\n"));
        assert!(!looks_like_http(b"HTTP/1.1 20 OK\r\n"));
    }

    #[test]
    fn a_chunk_size_past_the_machine_is_too_large_not_unreadable() {
        // Zeek's 2^64 chunk-size trace: valid hex, only too big for any body.
        let (at, why, _) =
            chunk_data(b"10000000000000000\r\nab\r\n0\r\n\r\n", 0).expect_err("too large");
        assert_eq!(at, 0);
        assert!(why.contains("\"10000000000000000\" is too large"), "{why}");
        let (_, why, _) = chunk_data(b"1g\r\nab\r\n", 0).expect_err("not hex");
        assert!(why.contains("\"1g\" is not a hex number"), "{why}");
        let (_, why, _) = chunk_data(b"+2\r\nab\r\n0\r\n\r\n", 0).expect_err("a sign");
        assert!(why.contains("\"+2\" is not a hex number"), "{why}");
        // Leading zeros are digits like any other.
        let (spans, end) =
            chunk_data(b"00000000000000000002\r\nab\r\n0\r\n\r\n", 0).expect("a chunk");
        assert_eq!((spans.len(), end), (1, 29));
    }

    #[test]
    fn grpc_content_types() {
        assert!(is_grpc("application/grpc"));
        assert!(!is_grpc("application/grpcx"));
    }

    #[test]
    fn an_empty_body_is_empty_whatever_its_coding_says() {
        // A 304 keeps the resource's Content-Encoding; a 200 with no bytes is as empty.
        let input = b"HTTP/1.1 304 Not Modified\r\nContent-Encoding: gzip\r\n\r\nHTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
        let found = parse_messages(input, &UnwrapOptions::default()).expect("three messages");
        let bodies: Vec<&[u8]> = found.iter().map(|p| p.bytes.as_slice()).collect();
        assert_eq!(bodies, [&b""[..], b"", b"hi"]);
        assert!(found.iter().all(|p| p.cut.is_none()));
    }

    #[test]
    fn a_body_that_does_not_undo_is_one_failed_message() {
        // A gzip body that is no gzip: its message fails, the next is read.
        let input = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\nnopeHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
        let side = parse_side(
            input,
            0,
            &UnwrapOptions::default(),
            &mut Budget::unlimited(),
            &mut Pairing::default(),
        );
        assert_eq!(side.errors.len(), 1, "{:?}", side.errors);
        assert_eq!(side.errors[0].error.layer, "gzip");
        assert_eq!(
            side.errors[0].error.offset, 0,
            "in the gzip layer's own input"
        );
        assert_eq!(
            side.errors[0].message,
            Span::new(0, 66),
            "the failed message"
        );
        assert_eq!(side.payloads.len(), 2);
        assert!(side.payloads[0].cut.is_some());
        assert_eq!(side.payloads[1].bytes, b"hi");
    }

    #[test]
    fn bytes_that_are_no_message_are_skipped_to_the_next_start_line() {
        let input = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi\r\ngarbage here\r\nmore\nHTTP/1.1 201 Created\r\nContent-Length: 3\r\n\r\nyes";
        let side = parse_side(
            input,
            0,
            &UnwrapOptions::default(),
            &mut Budget::unlimited(),
            &mut Pairing::default(),
        );
        assert_eq!(side.errors.len(), 1);
        assert!(side.errors[0]
            .error
            .message
            .contains("expected an HTTP/1.x request or status line"));
        let bodies: Vec<&[u8]> = side.payloads.iter().map(|p| p.bytes.as_slice()).collect();
        assert_eq!(bodies, [&b"hi"[..], b"yes"]);
    }

    #[test]
    fn a_message_after_a_body_without_newline_is_found_at_a_segment_start() {
        let input = b"{\"a\":1}HTTP/1.1 200 OK\r\n\r\n";
        assert_eq!(next_message_start(input, 0), None, "not at a line start");
        assert_eq!(next_message_start_among(input, 0, &[3, 7]), Some(7));
        assert_eq!(next_message_start_among(input, 0, &[3]), None);
        let later = b"xx\nGET / HTTP/1.1\r\n";
        assert_eq!(next_message_start_among(later, 0, &[1]), Some(3));
    }

    #[test]
    fn deflate_ending_at_a_sync_flush_inflates() {
        // `{"a":1}` deflated with a sync flush and no final block, raw and zlib-wrapped (as
        // Python's zlib writes them with Z_SYNC_FLUSH).
        let raw = [
            0xaa, 0x56, 0x4a, 0x54, 0xb2, 0x32, 0xac, 0x05, 0x00, 0x00, 0x00, 0xff, 0xff,
        ];
        let options = UnwrapOptions::default();
        let (out, note) =
            decompress_noted("deflate", &raw, &options, &mut Budget::unlimited()).expect("raw");
        assert_eq!(out, br#"{"a":1}"#);
        assert!(note.is_some_and(|n| n.contains("no final block")));
        let mut zlib = vec![0x78, 0x9c];
        zlib.extend_from_slice(&raw);
        assert_eq!(
            decompress("deflate", &zlib, &options).expect("zlib"),
            br#"{"a":1}"#
        );
        // A whole stream has its final block and says nothing.
        let whole = [0xab, 0x56, 0x4a, 0x54, 0xb2, 0x32, 0xac, 0x05, 0x00];
        let (out, note) =
            decompress_noted("deflate", &whole, &options, &mut Budget::unlimited()).expect("ok");
        assert_eq!((out.as_slice(), note), (&br#"{"a":1}"#[..], None));
        // Corrupt bytes are still an error.
        assert!(decompress("deflate", &[0xff, 0xff, 0xff], &options).is_err());
    }

    #[test]
    fn no_body_statuses_and_requests() {
        let input = b"HTTP/1.1 304 Not Modified\r\nETag: x\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
        let found = parse_messages(input, &UnwrapOptions::default()).expect("two messages");
        assert_eq!(found.len(), 2);
        assert!(found[0].bytes.is_empty());
        assert_eq!(found[1].bytes, b"hi");
    }

    #[test]
    fn responses_are_paired_with_their_requests() {
        // A HEAD's response and a 304 announce bodies they do not have (RFC 9112 §6.3).
        let requests = b"HEAD /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nIf-None-Match: \"e\"\r\n\r\nGET /c HTTP/1.1\r\n\r\n";
        let responses = b"HTTP/1.1 200 OK\r\nContent-Length: 30\r\n\r\nHTTP/1.1 304 Not Modified\r\nContent-Length: 30\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
        let options = UnwrapOptions::default();
        let mut budget = Budget::unlimited();
        let mut pairing = Pairing::default();
        let reqs = parse_side(requests, 0, &options, &mut budget, &mut pairing);
        assert!(reqs.errors.is_empty());
        assert_eq!(reqs.payloads.len(), 3);
        let resps = parse_side(responses, 0, &options, &mut budget, &mut pairing);
        assert!(resps.errors.is_empty());
        let bodies: Vec<&[u8]> = resps.payloads.iter().map(|p| p.bytes.as_slice()).collect();
        assert_eq!(bodies, [&b""[..], b"", b"hi"]);
        assert!(resps.payloads[0].layers[0]
            .detail
            .contains("a response to HEAD has no body (its Content-Length: 30 is not a body)"));
        assert_eq!(resps.payloads[0].meta_value("request-method"), Some("HEAD"));
        // Pasted as one exchange, the same pairing holds.
        let mut both = requests[..29].to_vec();
        both.extend_from_slice(&responses[..39]);
        both.extend_from_slice(
            b"GET /c HTTP/1.1\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi",
        );
        let found = parse_messages(&both, &options).expect("pasted");
        assert_eq!(found.len(), 4);
        assert_eq!(found[3].bytes, b"hi");
    }

    #[test]
    fn a_switch_of_protocols_ends_http() {
        let input = b"GET /chat HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nHTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n\x81\x05Hello";
        let found = parse_messages(input, &UnwrapOptions::default()).expect("parses");
        assert_eq!(found.len(), 3);
        assert_eq!(found[2].bytes, b"\x81\x05Hello");
        assert_eq!(
            found[2].layers[0].name,
            "websocket (after 101 Switching Protocols)"
        );
        // An interim 100 Continue does not answer the request: the 200 after it does.
        let input = b"POST /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nabHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nz";
        let found = parse_messages(input, &UnwrapOptions::default()).expect("parses");
        let bodies: Vec<&[u8]> = found.iter().map(|p| p.bytes.as_slice()).collect();
        assert_eq!(bodies, [&b"ab"[..], b"", b"z"]);
        assert_eq!(found[2].meta_value("request-method"), Some("POST"));
    }

    #[test]
    fn a_connect_tunnel_ends_http_and_keeps_its_bytes() {
        let input = b"CONNECT api.example.test:443 HTTP/1.1\r\nHost: api.example.test:443\r\n\r\nHTTP/1.1 200 Connection established\r\nContent-Length: 99\r\n\r\n\x16\x03\x01\x00\x05hello";
        let found = parse_messages(input, &UnwrapOptions::default()).expect("parses");
        assert_eq!(found.len(), 3);
        assert!(found[1].bytes.is_empty(), "a 2xx to CONNECT has no body");
        assert!(found[1].layers[0].detail.contains("the tunnel follows"));
        assert_eq!(found[2].layers[0].name, "CONNECT tunnel");
        assert_eq!(found[2].bytes, b"\x16\x03\x01\x00\x05hello");
    }

    #[test]
    fn unknown_coding_leaves_the_body() {
        let input = b"HTTP/1.1 200 OK\r\nContent-Encoding: compress\r\nContent-Length: 2\r\n\r\nhi";
        let found = parse_messages(input, &UnwrapOptions::default()).expect("parses");
        assert_eq!(found[0].bytes, b"hi");
        assert!(found[0].meta.iter().any(|(k, _)| k == "warning"));
    }

    #[test]
    fn header_without_colon_is_an_error() {
        let e = parse_messages(
            b"HTTP/1.1 200 OK\r\nbroken\r\n\r\n",
            &UnwrapOptions::default(),
        )
        .expect_err("no colon");
        assert_eq!(e.layer, "HTTP/1.1 response");
        assert_eq!(e.offset, 17);
    }
}
