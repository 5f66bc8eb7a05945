//! HAR 1.2 files (browser DevTools, Charles, Fiddler, mitmproxy exports): one payload per request
//! body, response body and WebSocket message.
//!
//! A HAR is recognised by content: a JSON object whose `log` holds `entries`. Each body becomes a
//! payload under two layers, `HAR entry N` (N is the index in `log.entries`, from 0; its detail is
//! `GET https://… → 200 → application/x-protobuf`) and `request body`, `response body` or
//! `WebSocket message`. The format hint comes from the Content-Type header (else the HAR's
//! `mimeType`) through [`super::media::hint_for_media_type`]; gRPC and Connect streaming bodies are marked
//! `grpc-body = true` so they split into messages as HTTP bodies do, and gRPC-Web-text bodies are
//! base64-decoded. A HAR holds bodies with their `Content-Encoding` already undone, so nothing is
//! decompressed here on the headers' word (bytes that still start with a gzip header are
//! peeled by the next step as any gzip is).
//!
//! Meta of each payload: `har-entry`, `direction` (`request`, `response`, `send`, `receive`),
//! `method`, `url`, `status`, `mime-type`, the side's headers (as HTTP payloads have them),
//! `started`, `time-ms`, `timings`, `body-size`, `headers-size`, `content-size`,
//! `content-compression`, `transfer-size`, for bodies the export cut or left out
//! cut ([`Payload::cut`]) with a `warning`, and for binary bodies the export wrote as UTF-8 text
//! with U+FFFD in place of the bytes that were not (Playwright's request bodies) `lossy = true`
//! with a `warning`.
//!
//! Memory: the JSON is parsed once into borrowed views of the input (strings without escapes are
//! not copied, optional ones included: see `borrowed`). A body that is its text's own UTF-8 is a
//! view of the file; a base64 body that lies in the file is [`SharedBytes::lazy`]: its length is
//! found from its text (a scan of the alphabet and a decode of the last group), and its bytes
//! are decoded from the file when someone first reads them (peeling and splitting only peek), so a large HAR's bodies
//! are not all in memory at once. Text with escapes, and bytes stored as characters, are decoded
//! at once.

use std::borrow::Cow;
use std::fmt;

use base64::Engine;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;

use super::grpcweb;
use super::media::media_type;
use super::payload::{CaptureError, Layer, Payload};
use super::SharedBytes;
use crate::codec::Format;
use crate::model::Span;

/// Names of the layers this module adds (the first layer of every HAR payload).
pub const ENTRY_LAYER: &str = "HAR entry";

/// Whether `bytes` may be a HAR: a JSON object whose first key is near `"log"`. Cheap; `parse`
/// decides.
pub fn looks_like_har(bytes: &[u8]) -> bool {
    let bytes = without_bom(bytes);
    let start = match bytes.iter().position(|c| !c.is_ascii_whitespace()) {
        Some(i) => i,
        None => return false,
    };
    if bytes.get(start) != Some(&b'{') {
        return false;
    }
    let head = bytes.get(start..).unwrap_or(&[]);
    let head = head.get(..head.len().min(4096)).unwrap_or(head);
    head.windows(5).any(|w| w == b"\"log\"")
}

/// `bytes` without a UTF-8 byte-order mark in front.
fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes)
}

/// Whether a payload came out of a HAR or a pasted snippet (its first layer is a HAR entry or
/// a snippet's): such readings rank before the input's own text or JSON.
pub fn is_export_payload(payload: &Payload) -> bool {
    payload.layers.first().is_some_and(|l| {
        l.name.starts_with(ENTRY_LAYER) || super::payload::SNIPPET_LAYERS.contains(&l.name.as_str())
    })
}

/// The warnings of payloads read from exports and snippets (bodies cut or left out, `@file`
/// bodies), each naming its entry and JSON path, for the list of warnings beside the payloads.
pub(crate) fn export_warnings(payloads: &[Payload]) -> Vec<String> {
    payloads
        .iter()
        .filter(|p| is_export_payload(p))
        .flat_map(|p| {
            p.meta
                .iter()
                .filter(|(k, _)| *k == "warning")
                .map(|(_, v)| v.to_string())
        })
        .collect()
}

#[derive(Deserialize)]
struct Har<'a> {
    #[serde(borrow)]
    log: Log<'a>,
}

#[derive(Deserialize)]
struct Log<'a> {
    #[serde(borrow, deserialize_with = "entries")]
    entries: Vec<Entry<'a>>,
}

#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(
        borrow,
        deserialize_with = "borrowed",
        default,
        rename = "startedDateTime"
    )]
    started: Option<Cow<'a, str>>,
    #[serde(default)]
    time: Num,
    #[serde(borrow, default)]
    request: Option<Request<'a>>,
    #[serde(borrow, default)]
    response: Option<Response<'a>>,
    #[serde(default)]
    timings: Option<Timings>,
    #[serde(borrow, default, rename = "_webSocketMessages")]
    websocket: Option<Vec<WsMessage<'a>>>,
    #[serde(borrow, deserialize_with = "borrowed", default)]
    comment: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
struct Request<'a> {
    #[serde(borrow, deserialize_with = "borrowed", default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "borrowed", default)]
    url: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    headers: Option<Vec<Header<'a>>>,
    #[serde(borrow, default, rename = "postData")]
    post_data: Option<PostData<'a>>,
    #[serde(default, rename = "bodySize")]
    body_size: Num,
    #[serde(default, rename = "headersSize")]
    headers_size: Num,
}

#[derive(Deserialize)]
struct Response<'a> {
    #[serde(default)]
    status: Num,
    #[serde(borrow, default)]
    headers: Option<Vec<Header<'a>>>,
    #[serde(borrow, default)]
    content: Option<Content<'a>>,
    #[serde(default, rename = "bodySize")]
    body_size: Num,
    #[serde(default, rename = "headersSize")]
    headers_size: Num,
    #[serde(default, rename = "_transferSize")]
    transfer_size: Num,
    #[serde(borrow, deserialize_with = "borrowed", default)]
    comment: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Header<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, deserialize_with = "borrowed", default)]
    value: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct PostData<'a> {
    #[serde(borrow, deserialize_with = "borrowed", default, rename = "mimeType")]
    mime_type: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "borrowed", default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<Vec<Param<'a>>>,
    #[serde(borrow, deserialize_with = "borrowed", default)]
    comment: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Param<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, deserialize_with = "borrowed", default)]
    value: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "borrowed", default, rename = "fileName")]
    file_name: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Content<'a> {
    #[serde(default)]
    size: Num,
    #[serde(default)]
    compression: Num,
    #[serde(borrow, deserialize_with = "borrowed", default, rename = "mimeType")]
    mime_type: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "borrowed", default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "borrowed", default)]
    encoding: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "borrowed", default)]
    comment: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Timings {
    #[serde(default)]
    blocked: Num,
    #[serde(default)]
    dns: Num,
    #[serde(default)]
    connect: Num,
    #[serde(default)]
    ssl: Num,
    #[serde(default)]
    send: Num,
    #[serde(default)]
    wait: Num,
    #[serde(default)]
    receive: Num,
}

#[derive(Deserialize)]
struct WsMessage<'a> {
    #[serde(borrow, deserialize_with = "borrowed", default, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(default)]
    time: Num,
    #[serde(default)]
    opcode: Num,
    #[serde(borrow, deserialize_with = "borrowed", default)]
    data: Option<Cow<'a, str>>,
}

/// An optional string, borrowed from the input when it has no escapes. serde borrows a
/// `Cow<str>` only where it is the field's own type, so an `Option<Cow<str>>` field would be
/// copied: each base64 body of a large HAR a second time.
fn borrowed<'de: 'a, 'a, D: Deserializer<'de>>(d: D) -> Result<Option<Cow<'a, str>>, D::Error> {
    #[derive(Deserialize)]
    struct Text<'a>(#[serde(borrow)] Cow<'a, str>);
    Ok(Option::<Text<'a>>::deserialize(d)?.map(|t| t.0))
}

/// A number as exporters write it: a number, a numeric string, or `null`/absent/anything else
/// (none).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Num(Option<f64>);

impl Num {
    /// The value when it is a real size or time (exporters write -1 for "unknown").
    fn known(self) -> Option<f64> {
        self.0.filter(|v| v.is_finite() && *v >= 0.0)
    }

    fn bytes(self) -> Option<usize> {
        self.known().map(|v| v as usize)
    }
}

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(v) if v.fract() == 0.0 && v.abs() < 1e15 => write!(f, "{}", v as i64),
            Some(v) => write!(f, "{:.3}", v),
            None => write!(f, "?"),
        }
    }
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
                Ok(Num(Some(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                Ok(Num(Some(v as f64)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num(Some(v as f64)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Num, E> {
                Ok(Num(v.trim().parse().ok()))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Num, D::Error> {
                Num::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Num, A::Error> {
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(Num(None))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Num, A::Error> {
                // serde_json with `arbitrary_precision` (which a dependency turns on) hands
                // floats over as a one-entry map holding the number's text.
                let mut value = None;
                if map.next_key::<de::IgnoredAny>()?.is_some() {
                    let v: serde_json::Value = map.next_value()?;
                    value = v
                        .as_f64()
                        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()));
                }
                while map
                    .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Num(value))
            }
        }
        d.deserialize_any(V)
    }
}

/// Prefix of the errors [`entries`] gives, to tell a HAR with a bad entry from JSON that is no HAR.
const ENTRY_ERROR: &str = "log.entries[";

/// `log.entries`, each entry's fault named by its index.
fn entries<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Entry<'de>>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Vec<Entry<'de>>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an array of HAR entries")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            loop {
                match seq.next_element::<Entry<'de>>() {
                    Ok(Some(e)) => out.push(e),
                    Ok(None) => return Ok(out),
                    Err(e) => {
                        return Err(de::Error::custom(format!(
                            "{ENTRY_ERROR}{}]: {e}",
                            out.len()
                        )))
                    }
                }
            }
        }
    }
    d.deserialize_seq(V)
}

/// The payloads of a HAR, or `None` when `bytes` is not one (then it is ordinary JSON). A HAR
/// whose entries do not parse (or whose JSON is cut short) is an error naming the entry and the
/// byte.
pub(crate) fn parse(input: impl Into<SharedBytes>) -> Option<Result<Vec<Payload>, CaptureError>> {
    let input = &input.into();
    let bytes: &[u8] = input;
    if !looks_like_har(bytes) {
        return None;
    }
    // Windows tools (Fiddler, some browser exports) write a byte-order mark; the text after it
    // is the HAR, and spans stay offsets into the whole input.
    let json = without_bom(bytes);
    let bom = bytes.len() - json.len();
    let har: Har<'_> = match serde_json::from_slice(json) {
        Ok(h) => h,
        Err(e) => {
            let message = e.to_string();
            let broken_har = message.starts_with(ENTRY_ERROR) || e.is_eof();
            if !broken_har {
                return None;
            }
            return Some(Err(CaptureError {
                layer: "HAR".to_string(),
                offset: bom + offset_of(json, e.line(), e.column()),
                message: format!("the HAR does not parse: {message}"),
                extracted: Vec::new(),
            }));
        }
    };
    // JSON whose `log.entries` are not requests (an application's log) is no HAR.
    if har
        .log
        .entries
        .iter()
        .any(|e| e.request.is_none() && e.response.is_none())
    {
        return None;
    }
    let mut out = Vec::new();
    for (index, entry) in har.log.entries.iter().enumerate() {
        entry_payloads(input, index, entry, &mut out);
    }
    Some(Ok(out))
}

/// Byte offset of a 1-based line and column in `bytes`.
fn offset_of(bytes: &[u8], line: usize, column: usize) -> usize {
    let mut offset = 0usize;
    for _ in 1..line {
        match bytes
            .get(offset..)
            .and_then(|rest| rest.iter().position(|&c| c == b'\n'))
        {
            Some(i) => offset += i + 1,
            None => return bytes.len(),
        }
    }
    offset
        .saturating_add(column.saturating_sub(1))
        .min(bytes.len())
}

/// Where `text` lies in `input`, when it is a view of it (a JSON string without escapes).
fn span_in(input: &[u8], text: &str) -> Option<Span> {
    let base = input.as_ptr() as usize;
    let start = (text.as_ptr() as usize).checked_sub(base)?;
    (start + text.len() <= input.len()).then(|| Span::new(start, start + text.len()))
}

fn header<'h>(headers: &'h Option<Vec<Header<'_>>>, name: &str) -> Option<&'h str> {
    headers
        .as_deref()?
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case(name))
        .and_then(|h| h.value.as_deref())
}

/// gRPC, gRPC-Web and Connect streaming bodies: 5-byte-prefixed frames.
fn is_framed_rpc(media: &str) -> bool {
    media == "application/grpc"
        || media.starts_with("application/grpc+")
        || media.starts_with("application/grpc-web")
        || media.starts_with("application/connect+")
}

/// The format a Content-Type names, as HTTP reads it, plus Connect's streaming types.
fn hint_for(content_type: &str) -> Option<Format> {
    match media_type(content_type).as_str() {
        "application/connect+proto" => Some(Format::Protobuf),
        "application/connect+json" => Some(Format::Json),
        _ => super::media::hint_for_media_type(content_type),
    }
}

/// Whether text of this type is text (UTF-8) rather than binary bytes an exporter stored as
/// characters.
fn is_textual(content_type: &str) -> bool {
    let media = media_type(content_type);
    content_type.to_ascii_lowercase().contains("charset=")
        || media.is_empty()
        || media.starts_with("text/")
        || media.ends_with("json")
        || media.ends_with("xml")
        || media.contains("javascript")
        || media.contains("x-www-form-urlencoded")
        || media.starts_with("multipart/")
        || media.contains("graphql")
}

/// The bytes of a body given as HAR text. Exporters that store binary bodies as text (mitmproxy
/// does, for bodies it does not find "mostly binary") map each byte to the character of the same
/// number; such text of a binary type is read back byte for byte. Returns the bytes (the text's
/// own UTF-8 borrowed, not copied) and how they were read.
pub(crate) fn text_bytes<'t>(text: &'t str, content_type: &str) -> (Cow<'t, [u8]>, &'static str) {
    if !is_textual(content_type) && text.chars().any(|c| c as u32 >= 0x80) {
        let latin1: Option<Vec<u8>> = text.chars().map(|c| u8::try_from(c as u32).ok()).collect();
        if let Some(bytes) = latin1 {
            return (
                Cow::Owned(bytes),
                "text, one byte per character (a binary type)",
            );
        }
    }
    (Cow::Borrowed(text.as_bytes()), "text, UTF-8")
}

/// How HAR exporters write base64: the standard alphabet, padding optional, line breaks allowed.
const BASE64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
);

/// Whether every byte of `text` is a base64 letter (not padding, not white space). Written as
/// whole blocks without early exits so that it runs over many bytes at a time: this scans whole
/// bodies of large HARs.
fn all_in_alphabet(text: &[u8]) -> bool {
    let outside = |c: u8| {
        let letter = (c | 0x20).wrapping_sub(b'a') < 26;
        !(letter | (c.wrapping_sub(b'0') < 10) | (c == b'+') | (c == b'/'))
    };
    !any_in_blocks(text, outside)
}

/// Whether `text` has white space in it (what `u8::is_ascii_whitespace` calls so), in the same
/// way as [`all_in_alphabet`].
fn any_white_space(text: &[u8]) -> bool {
    any_in_blocks(text, |c| {
        (c == b' ') | (c == b'\t') | (c == b'\n') | (c == 0x0c) | (c == b'\r')
    })
}

fn any_in_blocks(text: &[u8], hit: impl Fn(u8) -> bool) -> bool {
    let mut blocks = text.chunks_exact(64);
    let in_blocks = blocks
        .by_ref()
        .any(|block| block.iter().fold(0u8, |any, &c| any | u8::from(hit(c))) != 0);
    in_blocks || blocks.remainder().iter().any(|&c| hit(c))
}

fn base64_decode(text: &[u8]) -> Result<Vec<u8>, String> {
    if !any_white_space(text) {
        return BASE64.decode(text).map_err(|e| e.to_string());
    }
    let clean: Vec<u8> = text
        .iter()
        .copied()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    BASE64.decode(&clean).map_err(|e| e.to_string())
}

/// How many bytes `text` decodes to, found without decoding it into anything the size of the
/// body; `None` where [`base64_decode`] might not agree (an error, or padding before the last
/// piece), and then the caller decodes it whole.
fn base64_len(text: &[u8]) -> Option<usize> {
    // The usual body, one line of the alphabet: every whole group of four before the last group
    // decodes to three bytes, so only the last group needs decoding.
    let whole = text.len().saturating_sub(1) / 4 * 4;
    let (groups, last) = text.split_at(whole);
    if all_in_alphabet(groups) {
        let mut out = [0u8; 3];
        if let Ok(tail) = BASE64.decode_slice(last, &mut out) {
            return Some(whole / 4 * 3 + tail);
        }
    }
    base64_len_in_pieces(text)
}

/// [`base64_len`] of text with line breaks (or an error somewhere), decoded in pieces.
fn base64_len_in_pieces(text: &[u8]) -> Option<usize> {
    const PIECE: usize = 16 * 1024; // a multiple of 4: pieces decode as the whole would
    let mut piece = Vec::with_capacity(PIECE);
    let mut out = vec![0u8; PIECE / 4 * 3];
    let mut total = 0usize;
    let mut chars = text
        .iter()
        .copied()
        .filter(|c| !c.is_ascii_whitespace())
        .peekable();
    loop {
        piece.clear();
        piece.extend(chars.by_ref().take(PIECE));
        let last = chars.peek().is_none();
        if !last && piece.contains(&b'=') {
            return None;
        }
        total += BASE64.decode_slice(&piece, &mut out).ok()?;
        if last {
            return Some(total);
        }
    }
}

/// The bytes of a base64 body whose text is `text`: when the text lies in `input` (no JSON
/// escapes) and decodes, bytes decoded from the file when first read (a large HAR's bodies are
/// not all held at once); otherwise decoded now, or the error.
fn base64_body(input: &SharedBytes, text: &str) -> Result<SharedBytes, String> {
    let lazy = span_in(input, text).and_then(|span| {
        let len = base64_len(text.as_bytes())?;
        let file = input.clone();
        let range = span.start..span.end;
        let make =
            move || base64_decode(file.get(range.clone()).unwrap_or(&[])).unwrap_or_default();
        Some(SharedBytes::lazy(len, Box::new(make)))
    });
    match lazy {
        Some(bytes) => Ok(bytes),
        None => base64_decode(text.as_bytes()).map(SharedBytes::from),
    }
}

/// [`text_bytes`], as a view of `input` where the body is the text's own UTF-8 and the text
/// lies in the file.
fn text_body(input: &SharedBytes, text: &str, content_type: &str) -> (SharedBytes, &'static str) {
    let (bytes, how) = text_bytes(text, content_type);
    match (&bytes, span_in(input, text)) {
        (Cow::Borrowed(_), Some(span)) => (input.slice(span.start..span.end), how),
        _ => (bytes.into_owned().into(), how),
    }
}

/// Whether a comment says the export left the body out or cut it.
fn says_omitted(comment: Option<&str>) -> bool {
    comment.is_some_and(|c| {
        let c = c.to_ascii_lowercase();
        [
            "omit",
            "truncat",
            "not included",
            "removed",
            "too large",
            "cut",
        ]
        .iter()
        .any(|w| c.contains(w))
    })
}

fn push(meta: &mut crate::capture::Meta, key: &str, value: impl ToString) {
    meta.push((key.to_string(), value.to_string()));
}

fn push_num(meta: &mut crate::capture::Meta, key: &str, value: Num) {
    if value.0.is_some() {
        push(meta, key, value);
    }
}

/// Adds the payloads of one entry to `out`: its request body (when it has one), its response
/// body, and its WebSocket messages.
fn entry_payloads(input: &SharedBytes, index: usize, entry: &Entry<'_>, out: &mut Vec<Payload>) {
    let no_request = Request::default();
    let request = entry.request.as_ref().unwrap_or(&no_request);
    let method = request.method.as_deref().unwrap_or("?");
    let url = request.url.as_deref().unwrap_or("?");
    let response = entry.response.as_ref();
    let status = response.map(|r| r.status).unwrap_or_default();
    let response_type = response
        .and_then(|r| header(&r.headers, "content-type").map(str::to_string))
        .or_else(|| {
            response
                .and_then(|r| r.content.as_ref())
                .and_then(|c| c.mime_type.as_deref())
                .filter(|m| !m.is_empty())
                .map(str::to_string)
        });
    let mut detail = format!("{method} {url} → {status}");
    if let Some(t) = &response_type {
        detail.push_str(&format!(" → {}", media_type(t)));
    }
    let cx = EntryCx {
        input,
        index,
        detail,
        common: common_meta(index, entry, method, url, status),
        whole: Span::new(0, input.len()),
    };
    if let Some(post) = &request.post_data {
        out.push(cx.request_body(request, post));
    }
    // Every entry has a response body, an empty one included, so every entry is listed.
    if let Some(resp) = response {
        out.push(cx.response_body(resp, response_type.clone().unwrap_or_default()));
    }
    // WebSocket messages (Chrome's and mitmproxy's `_webSocketMessages`).
    for (i, m) in entry.websocket.iter().flatten().enumerate() {
        out.push(cx.websocket_message(i, m));
    }
}

/// The facts every payload of an entry carries: its index, method, URL and status, when it
/// started, its timings and its comment.
fn common_meta(
    index: usize,
    entry: &Entry<'_>,
    method: &str,
    url: &str,
    status: Num,
) -> crate::capture::Meta {
    let mut common = crate::capture::Meta::new();
    push(&mut common, "har-entry", index);
    push(&mut common, "method", method);
    push(&mut common, "url", url);
    push_num(&mut common, "status", status);
    if let Some(s) = &entry.started {
        push(&mut common, "started", s);
    }
    push_num(&mut common, "time-ms", entry.time);
    if let Some(t) = &entry.timings {
        let parts: Vec<String> = [
            ("blocked", t.blocked),
            ("dns", t.dns),
            ("connect", t.connect),
            ("ssl", t.ssl),
            ("send", t.send),
            ("wait", t.wait),
            ("receive", t.receive),
        ]
        .iter()
        .filter(|(_, v)| v.known().is_some())
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
        if !parts.is_empty() {
            push(&mut common, "timings", format!("{} (ms)", parts.join(", ")));
        }
    }
    if let Some(c) = &entry.comment {
        push(&mut common, "comment", c);
    }
    common
}

/// What the payloads of one entry share.
struct EntryCx<'i> {
    /// The whole HAR.
    input: &'i SharedBytes,
    /// The entry's index in `log.entries`.
    index: usize,
    /// `method url → status → media type`, the entry layer's detail.
    detail: String,
    /// The facts every payload of the entry carries.
    common: crate::capture::Meta,
    /// The whole input, the span of what has no place of its own in it.
    whole: Span,
}

impl EntryCx<'_> {
    /// The entry's layer, spanning `span`.
    fn entry_layer(&self, span: Span) -> Layer {
        Layer {
            name: format!("{ENTRY_LAYER} {}", self.index),
            detail: self.detail.clone(),
            span,
        }
    }

    /// The request body: `postData.text`, or its `params` written as form fields.
    fn request_body(&self, request: &Request<'_>, post: &PostData<'_>) -> Payload {
        let (input, index) = (self.input, self.index);
        let path = format!("log.entries[{index}].request.postData");
        let content_type = header(&request.headers, "content-type")
            .map(str::to_string)
            .or_else(|| post.mime_type.as_deref().map(str::to_string))
            .unwrap_or_default();
        let mut meta = self.common.clone();
        push(&mut meta, "direction", "request");
        push_headers(&mut meta, &request.headers);
        push_num(&mut meta, "body-size", request.body_size);
        push_num(&mut meta, "headers-size", request.headers_size);
        let params = post.params.as_deref().unwrap_or(&[]);
        let (bytes, how, span) = match &post.text {
            Some(text) => {
                let (bytes, how) = text_body(input, text, &content_type);
                mark_lossy(&mut meta, &format!("{path}.text"), text, &content_type);
                (bytes, format!("postData.text, {how}"), span_in(input, text))
            }
            None if !params.is_empty() => (
                form_body(params, &path, &mut meta),
                "postData.params, written as form fields (name=value&…)".to_string(),
                None,
            ),
            None => (
                SharedBytes::default(),
                "postData without text".to_string(),
                None,
            ),
        };
        let encoded = header(&request.headers, "content-encoding")
            .is_some_and(|e| !e.eq_ignore_ascii_case("identity"));
        let missing = post.text.is_none() && params.is_empty();
        let short = !encoded
            && post.text.is_some()
            && request.body_size.bytes().is_some_and(|n| n > bytes.len());
        let cut = (missing || short || says_omitted(post.comment.as_deref()))
            .then(|| cut_reason(&mut meta, &path, bytes.len(), request.body_size.bytes()));
        let layers = vec![
            self.entry_layer(span.unwrap_or(self.whole)),
            Layer {
                name: "request body".to_string(),
                detail: format!("{}: {how}, {} bytes", self.detail, bytes.len()),
                span: span.unwrap_or(self.whole),
            },
        ];
        body_payload(bytes, layers, &content_type, (meta, cut), &path)
    }

    /// The response body: `content.text`, as text or base64, of media type `content_type`.
    fn response_body(&self, resp: &Response<'_>, content_type: String) -> Payload {
        let (input, index) = (self.input, self.index);
        let path = format!("log.entries[{index}].response.content");
        let mut meta = self.common.clone();
        push(&mut meta, "direction", "response");
        push_headers(&mut meta, &resp.headers);
        if !content_type.is_empty() {
            push(&mut meta, "mime-type", &content_type);
        }
        push_num(&mut meta, "body-size", resp.body_size);
        push_num(&mut meta, "headers-size", resp.headers_size);
        push_num(&mut meta, "transfer-size", resp.transfer_size);
        let content = resp.content.as_ref();
        if let Some(c) = content {
            push_num(&mut meta, "content-size", c.size);
            push_num(&mut meta, "content-compression", c.compression);
        }
        let encoding = header(&resp.headers, "content-encoding")
            .filter(|e| !e.eq_ignore_ascii_case("identity"));
        let text = content.and_then(|c| c.text.as_ref());
        let base64 = content
            .and_then(|c| c.encoding.as_deref())
            .is_some_and(|e| e.eq_ignore_ascii_case("base64"));
        let mut warnings = Vec::new();
        let (bytes, mut how, span) = match text {
            Some(text) if base64 => match base64_body(input, text) {
                Ok(b) => (b, "content.text, base64".to_string(), span_in(input, text)),
                Err(e) => {
                    warnings.push(format!(
                        "{path}.text: says base64 but does not decode ({e}); shown as text"
                    ));
                    (
                        text_body(input, text, "text/plain").0,
                        "content.text (bad base64)".to_string(),
                        span_in(input, text),
                    )
                }
            },
            Some(text) => {
                let (b, how) = text_body(input, text, &content_type);
                mark_lossy(&mut meta, &format!("{path}.text"), text, &content_type);
                (b, format!("content.text, {how}"), span_in(input, text))
            }
            None => (SharedBytes::default(), "no content.text".to_string(), None),
        };
        let size = content.and_then(|c| c.size.bytes());
        // content.size is the decoded size; some exporters (mitmproxy) write the size on the wire
        // there instead, so a compressed body whose size equals bodySize says nothing of its
        // decoded length.
        let size_is_decoded = encoding.is_none() || size != resp.body_size.bytes();
        let short = size_is_decoded && size.is_some_and(|n| n > bytes.len());
        let missing = text.is_none() && size.is_some_and(|n| n > 0);
        let omitted = says_omitted(content.and_then(|c| c.comment.as_deref()))
            || says_omitted(resp.comment.as_deref());
        for w in warnings {
            push(&mut meta, "warning", w);
        }
        let cut =
            (short || missing || omitted).then(|| cut_reason(&mut meta, &path, bytes.len(), size));
        if let Some(e) = encoding {
            how.push_str(&format!(
                "; Content-Encoding: {e} already undone by the export"
            ));
        }
        let layers = vec![
            self.entry_layer(span.unwrap_or(self.whole)),
            Layer {
                name: "response body".to_string(),
                detail: format!("{}: {how}, {} bytes", self.detail, bytes.len()),
                span: span.unwrap_or(self.whole),
            },
        ];
        body_payload(bytes, layers, &content_type, (meta, cut), &path)
    }

    /// WebSocket message `i` of the entry: text, binary (base64) or a control frame.
    fn websocket_message(&self, i: usize, m: &WsMessage<'_>) -> Payload {
        let (input, index) = (self.input, self.index);
        let path = format!("log.entries[{index}]._webSocketMessages[{i}]");
        let kind = m.kind.as_deref().unwrap_or("?");
        let opcode = m.opcode.known().map(|v| v as u32);
        let data = m.data.as_deref().unwrap_or("");
        let mut meta = self.common.clone();
        push(&mut meta, "direction", kind);
        push_num(&mut meta, "opcode", m.opcode);
        push_num(&mut meta, "ws-time", m.time);
        let as_text = || text_body(input, data, "text/plain").0;
        let (bytes, what) = if opcode == Some(2) {
            match base64_body(input, data) {
                Ok(b) => (b, "binary, base64"),
                Err(e) => {
                    push(
                        &mut meta,
                        "warning",
                        format!(
                            "{path}.data: a binary message that is not base64 ({e}); shown as text"
                        ),
                    );
                    (as_text(), "binary, bad base64")
                }
            }
        } else if opcode == Some(1) {
            // A text message is text, as in a capture (`detect::verdict`): JSON when it is.
            push(&mut meta, "websocket opcode", "text");
            (as_text(), "text")
        } else {
            (as_text(), "control frame")
        };
        let span = span_in(input, data).unwrap_or(self.whole);
        let json = opcode == Some(1)
            && crate::codec::json::is_json(&bytes, &crate::limits::Limits::default());
        Payload {
            message: None,
            avro: None,
            bytes: bytes.clone(),
            layers: vec![
                self.entry_layer(span),
                Layer {
                    name: "WebSocket message".to_string(),
                    detail: format!(
                        "{}: #{i} {kind}, {what}, {} bytes",
                        self.detail,
                        bytes.len()
                    ),
                    span,
                },
            ],
            hint: json.then_some(Format::Json),
            meta,
            cut: None,
            protocol: None,
        }
    }
}

/// A request's `params` written as form fields (`name=value&…`), each field also in `meta`; a
/// file field, whose file the HAR does not hold, is warned of.
fn form_body(params: &[Param<'_>], path: &str, meta: &mut crate::capture::Meta) -> SharedBytes {
    let mut form = String::new();
    for (i, p) in params.iter().enumerate() {
        if i > 0 {
            form.push('&');
        }
        form.push_str(&form_encode(&p.name));
        form.push('=');
        form.push_str(&form_encode(p.value.as_deref().unwrap_or("")));
        push(
            meta,
            "form-field",
            format!("{}={}", p.name, p.value.as_deref().unwrap_or("")),
        );
        if let Some(f) = &p.file_name {
            push(
                meta,
                "warning",
                format!("{path}.params[{i}]: the file {f:?} is not in the HAR, only its field"),
            );
        }
    }
    form.into_bytes().into()
}

fn push_headers(meta: &mut crate::capture::Meta, headers: &Option<Vec<Header<'_>>>) {
    for h in headers.as_deref().unwrap_or(&[]) {
        push(meta, &h.name, h.value.as_deref().unwrap_or(""));
    }
}

/// Why a body the export cut or left out is not whole, also pushed as the payload's warning.
fn cut_reason(
    meta: &mut crate::capture::Meta,
    path: &str,
    have: usize,
    size: Option<usize>,
) -> String {
    let what = match size {
        Some(n) if n > have => format!("{path}: the export holds {have} of the body's {n} bytes"),
        _ if have == 0 => format!("{path}: the export left the body out"),
        _ => format!("{path}: the export says the body was cut or left out"),
    };
    push(meta, "warning", what.clone());
    what
}

/// A binary body an exporter wrote as text after decoding it as UTF-8 (Playwright's HAR does,
/// for request bodies): each byte sequence that is not UTF-8 became U+FFFD, so the bytes sent
/// are lost. Marked `lossy = true` with a warning; the bytes kept are the text's.
fn mark_lossy(meta: &mut crate::capture::Meta, path: &str, text: &str, content_type: &str) {
    if is_textual(content_type) {
        return;
    }
    let replaced = text.chars().filter(|&c| c == '\u{FFFD}').count();
    if replaced == 0 {
        return;
    }
    push(meta, "lossy", "true");
    push(
        meta,
        "warning",
        format!(
            "{path}: a binary body written as text, with {replaced} byte sequence(s) that were not \
             UTF-8 replaced by U+FFFD: these are not the bytes sent"
        ),
    );
}

fn body_payload(
    bytes: SharedBytes,
    mut layers: Vec<Layer>,
    content_type: &str,
    (mut meta, cut): (crate::capture::Meta, Option<String>),
    path: &str,
) -> Payload {
    if cut.is_some() {
        if let Some(body) = layers.last_mut() {
            body.detail = format!(
                "NOT COMPLETE (cut or left out by the export); {}",
                body.detail
            );
        }
    }
    if meta.iter().any(|(k, v)| k == "lossy" && v == "true") {
        if let Some(body) = layers.last_mut() {
            body.detail = format!(
                "NOT THE BYTES SENT (the export replaced bytes with U+FFFD); {}",
                body.detail
            );
        }
    }
    let media = media_type(content_type);
    let hint = hint_for(content_type);
    let mut bytes = bytes;
    if is_framed_rpc(&media) {
        push(&mut meta, "grpc-body", "true");
    }
    if media.starts_with("application/grpc-web-text") && !bytes.is_empty() {
        match grpcweb::base64_chunks(&bytes) {
            Ok((frames, chunks)) => {
                layers.push(Layer {
                    name: "gRPC-Web-text".to_string(),
                    detail: format!(
                        "base64 in {chunks} chunk(s), {} → {} bytes",
                        bytes.len(),
                        frames.len()
                    ),
                    span: Span::new(0, bytes.len()),
                });
                bytes = frames.into();
            }
            Err((offset, message)) => push(
                &mut meta,
                "warning",
                format!("{path}: gRPC-Web-text body does not decode at byte {offset}: {message}"),
            ),
        }
    }
    Payload {
        message: None,
        avro: None,
        bytes,
        layers,
        hint,
        meta,
        cut,
        protocol: None,
    }
}

/// `application/x-www-form-urlencoded` of one key or value, as browsers and Python's `quote_plus`
/// write it: letters, digits and `-_.~` as they are, a blank as `+`, every other byte `%XX`.
pub(crate) fn form_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A HAR's base64 bodies stay unread after peeling (its layers and its splitting only peek),
    /// and read as their decoded bytes when someone looks.
    #[test]
    fn base64_bodies_stay_unread_until_looked_at() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/capture/har/mitmproxy.har"
        );
        let bytes = std::fs::read(path).expect("the fixture");
        let peeled = crate::capture::peel(bytes, &crate::capture::PeelOptions::default());
        let lazy: Vec<&Payload> = peeled
            .payloads
            .iter()
            .filter(|p| p.bytes.is_unmade())
            .collect();
        assert!(!lazy.is_empty(), "base64 bodies held as base64");
        for p in lazy {
            let len = p.bytes.len();
            assert_eq!(p.bytes.as_slice().len(), len);
            assert!(!p.bytes.is_unmade());
        }
    }

    #[test]
    fn the_block_scans_agree_with_the_byte_tests() {
        for c in 0..=255u8 {
            let base64 = c.is_ascii_alphanumeric() || c == b'+' || c == b'/';
            // 64 bytes: one whole block; 1 byte: the remainder alone.
            for n in [64, 1] {
                assert_eq!(all_in_alphabet(&vec![c; n]), base64, "{c:#04x} × {n}");
                let white = c.is_ascii_whitespace();
                assert_eq!(any_white_space(&vec![c; n]), white, "{c:#04x} × {n}");
            }
        }
    }

    #[test]
    fn base64_len_agrees_with_decoding_or_declines() {
        use base64::Engine as _;
        let std = base64::engine::general_purpose::STANDARD;
        for n in 0..40usize {
            let bytes: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            let padded = std.encode(&bytes);
            let bare = padded.trim_end_matches('=').to_string();
            let wrapped: String = padded
                .as_bytes()
                .chunks(8)
                .map(|c| format!("{}\r\n", String::from_utf8_lossy(c)))
                .collect();
            for text in [&padded, &bare, &wrapped] {
                assert_eq!(base64_len(text.as_bytes()), Some(n), "{text:?}");
                assert_eq!(base64_decode(text.as_bytes()).map(|b| b.len()), Ok(n));
            }
        }
        for bad in ["Q", "QUJD=RA", "QU*D", "QUJD\nR", "QQ==="] {
            assert_eq!(base64_len(bad.as_bytes()), None, "{bad:?}");
        }
    }

    fn payloads(har: &str) -> Vec<Payload> {
        match parse(har.as_bytes()) {
            Some(Ok(p)) => p,
            Some(Err(e)) => panic!("not parsed: {e}"),
            None => panic!("not recognised as a HAR"),
        }
    }

    #[test]
    fn base64_body_and_provenance() {
        let p = payloads(
            r#"{"log":{"version":"1.2","entries":[{"request":{"method":"GET","url":"https://api.example/orders","headers":[]},
            "response":{"status":200,"headers":[{"name":"Content-Type","value":"application/x-protobuf"}],
            "content":{"size":3,"mimeType":"application/x-protobuf","text":"CJYB","encoding":"base64"},"_transferSize":120}}]}}"#,
        );
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].bytes, [0x08, 0x96, 0x01]);
        assert_eq!(p[0].hint, Some(Format::Protobuf));
        assert_eq!(p[0].layers[0].name, "HAR entry 0");
        assert_eq!(
            p[0].layers[0].detail,
            "GET https://api.example/orders → 200 → application/x-protobuf"
        );
        assert_eq!(p[0].meta_value("transfer-size"), Some("120"));
        assert_eq!(p[0].cut, None);
    }

    #[test]
    fn bodies_without_escapes_are_read_in_place() {
        // The body's span is where its text lies in the input: the text was borrowed, not
        // copied (a copy has no place in the input, and the span would be the whole file).
        let har = r#"{"log":{"entries":[{"request":{"method":"GET","url":"u"},"response":{"status":200,"content":{"size":3,"mimeType":"application/x-protobuf","text":"CJYB","encoding":"base64"}}}]}}"#;
        let p = payloads(har);
        let at = har.find("CJYB").unwrap_or(0);
        assert_eq!(p[0].layers[1].span, Span::new(at, at + 4));
        assert_eq!(p[0].layers[0].span, Span::new(at, at + 4));
    }

    #[test]
    fn truncated_and_missing_bodies_are_marked() {
        let p = payloads(
            r#"{"log":{"entries":[
            {"request":{"method":"GET","url":"u"},"response":{"status":200,"content":{"size":10,"mimeType":"application/json","text":"{\"a\""}}},
            {"request":{"method":"GET","url":"u"},"response":{"status":200,"content":{"size":10,"mimeType":"application/json"}}},
            {"request":{"method":"GET","url":"u"},"response":{"status":200,"content":{"size":0,"mimeType":"text/html","comment":"Response body omitted"}}}]}}"#,
        );
        assert_eq!(p.len(), 3);
        for x in &p {
            assert!(x.cut.is_some(), "{x:?}");
        }
        assert!(p[0]
            .meta_value("warning")
            .is_some_and(|w| w.contains("log.entries[0].response.content") && w.contains("4 of")));
    }

    #[test]
    fn form_params_and_websocket_messages() {
        let p = payloads(
            r#"{"log":{"entries":[{"request":{"method":"POST","url":"u","postData":{"mimeType":"application/x-www-form-urlencoded","params":[{"name":"a b","value":"1&2"}]}},
            "response":{"status":101,"content":{"size":0}},
            "_webSocketMessages":[{"type":"send","time":1.5,"opcode":1,"data":"{\"x\":1}"},{"type":"receive","time":1.6,"opcode":2,"data":"gaF4AQ=="}]}]}}"#,
        );
        assert_eq!(p.len(), 4);
        assert_eq!(p[0].bytes, b"a+b=1%262");
        assert_eq!(p[0].meta_value("direction"), Some("request"));
        assert_eq!(p[1].bytes, b"");
        assert_eq!(p[2].bytes, b"{\"x\":1}");
        assert_eq!(p[3].bytes, [0x81, 0xa1, b'x', 0x01]);
        assert_eq!(p[3].meta_value("direction"), Some("receive"));
        assert_eq!(p[3].layers[1].name, "WebSocket message");
    }

    #[test]
    fn grpc_web_text_and_connect_are_marked() {
        let p = payloads(
            r#"{"log":{"entries":[{"request":{"method":"POST","url":"u","headers":[{"name":"content-type","value":"application/connect+proto"}],"postData":{"mimeType":"application/connect+proto","text":"AAAAAAIIAQ==","comment":""}},
            "response":{"status":200,"headers":[{"name":"content-type","value":"application/grpc-web-text"}],"content":{"size":16,"text":"AAAAAAIIAQ==gAAAAAA="}}}]}}"#,
        );
        // The Connect request's text is not base64 by the HAR's word: its bytes are the text.
        assert_eq!(p[0].meta_value("grpc-body"), Some("true"));
        assert_eq!(p[0].hint, Some(Format::Protobuf));
        assert_eq!(p[1].meta_value("grpc-body"), Some("true"));
        assert_eq!(p[1].bytes, [0, 0, 0, 0, 2, 8, 1, 0x80, 0, 0, 0, 0]);
        assert_eq!(p[1].layers[2].name, "gRPC-Web-text");
    }

    #[test]
    fn not_a_har_and_broken_har() {
        assert!(parse(br#"{"log":"x"}"#).is_none());
        assert!(parse(br#"{"a":1}"#).is_none());
        assert!(parse(br#"[1]"#).is_none());
        assert!(parse(br#"{"log":{"entries":[{"level":"info","msg":"started"}]}}"#).is_none());
        let bad =
            br#"{"log":{"entries":[{"request":{"method":"GET"},"response":{}},{"request":5}]}}"#;
        match parse(bad) {
            Some(Err(e)) => assert!(e.message.contains("log.entries[1]"), "{e}"),
            _ => panic!("a bad entry is an error"),
        }
        match parse(br#"{"log":{"entries":[{"request":{"#) {
            Some(Err(e)) => assert_eq!(e.layer, "HAR"),
            _ => panic!("a cut HAR is an error"),
        }
    }

    #[test]
    fn a_binary_body_with_replacement_characters_is_marked_lossy() {
        let p = payloads(
            r#"{"log":{"entries":[{"request":{"method":"POST","url":"u","headers":[{"name":"content-type","value":"application/msgpack"}],"postData":{"mimeType":"application/msgpack","text":"\u0081\ufffdid*"},"bodySize":5},
            "response":{"status":200,"content":{"size":2,"mimeType":"application/json","text":"\"\ufffd\""}}}]}}"#,
        );
        assert_eq!(p[0].meta_value("lossy"), Some("true"));
        assert!(p[0].layers[1].detail.starts_with("NOT THE BYTES SENT"));
        assert!(p[0].meta_value("warning").is_some_and(|w| w
            .contains("log.entries[0].request.postData.text")
            && w.contains("U+FFFD")));
        // Text of a text type may hold U+FFFD as a character like any other.
        assert_eq!(p[1].meta_value("lossy"), None);
    }

    #[test]
    fn binary_text_of_a_binary_type_reads_back_as_bytes() {
        let (b, _) = text_bytes("\u{a5}\u{0}\u{ff}", "application/cbor");
        assert_eq!(*b, [0xa5, 0x00, 0xff]);
        let (b, _) = text_bytes("é", "application/json");
        assert_eq!(*b, *"é".as_bytes());
    }

    #[test]
    fn float_times_and_sizes_are_read() {
        let p = payloads(
            r#"{"log":{"entries":[{"time":8.5,"timings":{"send":0.25,"wait":-1},"request":{"method":"GET","url":"u"},"response":{"status":200,"content":{"size":"2","text":"{}"}}}]}}"#,
        );
        assert_eq!(p[0].meta_value("time-ms"), Some("8.500"));
        assert_eq!(p[0].meta_value("timings"), Some("send 0.250 (ms)"));
        assert_eq!(p[0].meta_value("content-size"), Some("2"));
    }
}
