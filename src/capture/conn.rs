//! One captured connection's application protocol, read with both directions in view.
//!
//! A TCP stream's two directions are one conversation: whether a response has a body depends on
//! the request it answers (HEAD), an HTTP/1.1 `101` hands both directions to another protocol
//! (h2c, WebSocket), and an HTTP/2 connection's requests and responses share stream ids across
//! directions. [`stream`] reads a stream as
//! - HTTP/2 when the client's bytes start with the connection preface, or either direction reads
//!   as frames from its first byte (a capture that began mid-connection);
//! - HTTP/1.x when either direction starts with a request or status line: the client's requests
//!   paired in order with the server's responses ([`http::parse_side`]), and after a switch the
//!   rest as the protocol switched to (HTTP/2 after `Upgrade: h2c`, WebSocket messages after
//!   `Upgrade: websocket`, with the permessage-deflate the `101` agreed to; a `CONNECT` tunnel
//!   as its bytes);
//! - TLS records as encrypted payloads, labelled from the handshake (version, SNI, cipher);
//! - otherwise each direction on its own, as any other input is peeled.
//!
//! Each message becomes a payload whose capture layers name only the frames that carried it;
//! payloads are listed in the order their first frame was captured. What goes wrong on one
//! connection is a warning naming the stream; the other connections are read all the same.

use std::ops::Range;

use super::http::{self, Pairing};
use super::http2;
use super::layers::unwrap_keeping;
use super::payload::{nest, Budget, Decoded, Layer, Payload, UnwrapOptions};
use super::pcap::{self, Capture, Transport};
use super::shared::Backing;
use super::tls;
use super::websocket;
use super::SharedBytes;
use crate::model::Span;

/// Most frames listed in a payload's `http2 frames` entry; the rest are counted.
const LISTED_FRAMES: usize = 40;

/// The two directions of a connection as its application protocol sees them (`[client→server,
/// server→client]` as the capture found them): the reassembled TCP bytes, or the plaintext a
/// TLS layer gave, with the way back from a range of those bytes to the capture's frames.
pub(crate) struct Conversation<'a> {
    capture: &'a Capture,
    index: usize,
    bytes: [std::borrow::Cow<'a, [u8]>; 2],
    /// Per direction, for bytes that are not the TCP bytes themselves: which TCP bytes each range
    /// came from (`(range of bytes, range of TCP bytes)`, in order), and the layer that made them.
    views: [Option<View>; 2],
    /// Per direction with a TCP gap: all its bytes (gaps closed up) and the runs between the
    /// gaps. `bytes` holds the first run, all a parser that cannot skip a gap reads; HTTP/1.x
    /// reads on at its next message in each later run.
    gapped: [Option<(&'a [u8], Vec<Span>)>; 2],
    /// Where the capture file can be read again: bodies that lie in it as sent are read back
    /// from it when looked at, not held.
    backing: Option<&'a Backing>,
}

/// How a direction's bytes were made from its TCP bytes (a decryption).
pub(crate) struct View {
    /// `(range of the bytes, range of the TCP bytes it came from)`, in order.
    pub(crate) map: Vec<(Span, Span)>,
    /// The name and detail of the layer between TCP and what is read in these bytes (`TLS 1.3`,
    /// `TLS_AES_128_GCM_SHA256, decrypted with the key log`); its span is the TCP bytes of
    /// what each payload was read from.
    pub(crate) layer: (String, String),
    /// Meta entries for every payload read from these bytes.
    pub(crate) meta: Vec<(String, String)>,
}

impl<'a> Conversation<'a> {
    /// Stream `index` of `capture`, its TCP bytes as they are.
    fn tcp(
        capture: &'a Capture,
        index: usize,
        backing: Option<&'a Backing>,
    ) -> Option<Conversation<'a>> {
        let s = capture.stream(index)?;
        Some(Conversation {
            capture,
            index,
            bytes: [
                std::borrow::Cow::Borrowed(s.directions[0].contiguous()),
                std::borrow::Cow::Borrowed(s.directions[1].contiguous()),
            ],
            views: [None, None],
            gapped: [0, 1].map(|w| {
                let d = &s.directions[w];
                (!d.gaps.is_empty()).then(|| (&d.bytes[..], d.runs()))
            }),
            backing,
        })
    }

    fn bytes(&self, which: usize) -> &[u8] {
        self.bytes.get(which).map_or(&[], |b| b.as_ref())
    }

    /// All of direction `which`'s bytes, the runs after its gaps too.
    fn all_bytes(&self, which: usize) -> &[u8] {
        match self.gapped.get(which) {
            Some(Some((all, _))) => all,
            _ => self.bytes(which),
        }
    }

    /// Where `spans` of direction `which`'s TCP bytes (joined in order) lie in the capture file,
    /// as pieces to read back: when the file can be read again and every byte of them lies in it
    /// as it was sent (not plaintext a decryption made, nor a datagram put together from
    /// fragments).
    fn pieces(&self, which: usize, spans: &[Span]) -> Option<(&Backing, Vec<Range<usize>>)> {
        let backing = self.backing?;
        if spans.is_empty() || self.views.get(which)?.is_some() {
            return None;
        }
        let dir = self.capture.stream(self.index)?.directions.get(which)?;
        let mut pieces: Vec<Range<usize>> = Vec::new();
        for &span in spans {
            let segments = dir.segments_in(span);
            super::work::add(segments.len());
            let mut covered = span.start;
            for seg in segments {
                let (from, to) = (seg.span.start.max(span.start), seg.span.end.min(span.end));
                if from != covered {
                    return None;
                }
                let at = seg.at? + (from - seg.span.start);
                match pieces.last_mut() {
                    Some(last) if last.end == at => last.end = at + (to - from),
                    _ => pieces.push(at..at + (to - from)),
                }
                covered = to;
            }
            if covered != span.end {
                return None;
            }
        }
        Some((backing, pieces))
    }

    /// Whether `bytes` are `spans` of direction `which`'s bytes joined in order, byte for byte
    /// (a body as it was sent, not only as long as it).
    fn sent_as(&self, which: usize, spans: &[Span], bytes: &[u8]) -> bool {
        let all = self.all_bytes(which);
        let mut at = 0;
        for span in spans {
            let sent = all.get(span.start..span.end);
            if sent.is_none() || bytes.get(at..at + span.len()) != sent {
                return false;
            }
            at += span.len();
        }
        at == bytes.len()
    }

    /// A body peeling made (`body`) from `spans` of direction `which`'s bytes as they were sent,
    /// then undone from the content codings that `codings` (its layers, in the order they were
    /// undone) name: the same bytes, read back from the capture file when looked at and undone
    /// again then, instead of held. None when the file cannot be read again, the bytes do not all
    /// lie in it as sent, or the body is not made of them (checked byte for byte when no coding
    /// changed them, by the coded length when one did).
    fn read_back_body(
        &self,
        which: usize,
        spans: &[Span],
        codings: &[Layer],
        body: &SharedBytes,
        options: &UnwrapOptions,
    ) -> Option<SharedBytes> {
        if body.is_empty() {
            return None;
        }
        let (backing, pieces) = self.pieces(which, spans)?;
        if codings.is_empty() {
            return self
                .sent_as(which, spans, body)
                .then(|| SharedBytes::read_back(backing.clone(), pieces));
        }
        let names: Vec<&'static str> = codings
            .iter()
            .map(|l| {
                http::CONTENT_CODINGS
                    .iter()
                    .find(|&&c| c == l.name)
                    .copied()
            })
            .collect::<Option<_>>()?;
        let coded: usize = spans.iter().map(Span::len).sum();
        if codings.first()?.span.len() != coded {
            return None;
        }
        let options = options.clone();
        let undo = move |mut bytes: Vec<u8>| {
            for name in &names {
                match http::decompress(name, &bytes, &options) {
                    Ok(out) => bytes = out,
                    // Not what was read when the capture was (the file changed since).
                    Err(_) => return Vec::new(),
                }
            }
            bytes
        };
        Some(SharedBytes::read_back_undone(
            backing.clone(),
            pieces,
            body.len(),
            Box::new(undo),
        ))
    }

    /// The body of HTTP/1.x message `p` (as parsing gave it: its first layer the message's span
    /// in direction `which`'s bytes, then `chunked` and the content codings it undid, if any)
    /// read back from the capture file when looked at ([`Conversation::read_back_body`]).
    fn read_back_http1(
        &self,
        which: usize,
        p: &Payload,
        options: &UnwrapOptions,
    ) -> Option<SharedBytes> {
        if self.backing.is_none() || p.bytes.is_empty() || p.cut.is_some() {
            return None;
        }
        let message = p.layers.first()?.span;
        let (spans, codings) = match p.layers.get(1..)? {
            [chunked, codings @ ..] if chunked.name == "chunked" => {
                let body_start = message.end.checked_sub(chunked.span.end)?;
                let chunks = http::chunk_data(self.all_bytes(which), body_start).ok()?.0;
                (chunks, codings)
            }
            codings => {
                let sent = codings.first().map_or(p.bytes.len(), |l| l.span.len());
                (
                    vec![Span::new(message.end.checked_sub(sent)?, message.end)],
                    codings,
                )
            }
        };
        self.read_back_body(which, &spans, codings, &p.bytes, options)
    }

    /// The TCP bytes `span` of direction `which` came from.
    fn tcp_span(&self, which: usize, span: Span) -> Span {
        let Some(Some(view)) = self.views.get(which) else {
            return span;
        };
        let hit: Vec<Span> = view
            .map
            .iter()
            .filter(|(plain, _)| {
                plain.start < span.end.max(span.start + 1) && span.start < plain.end
            })
            .map(|(_, tcp)| *tcp)
            .collect();
        match (hit.first(), hit.last()) {
            (Some(a), Some(b)) => Span::new(a.start, b.end.max(a.start)),
            _ => Span::empty(0),
        }
    }

    /// The capture layers (and a view's layer) of `span` of direction `which`, and the first
    /// frame that carried it.
    fn outer(&self, which: usize, span: Span) -> (Payload, u64) {
        let tcp = self.tcp_span(which, span);
        let (mut payload, first) = pcap::span_payload(self.capture, self.index, which, tcp);
        if let Some(Some(view)) = self.views.get(which) {
            payload.layers.push(Layer {
                name: view.layer.0.clone(),
                detail: view.layer.1.clone(),
                span: tcp,
            });
            payload.meta.extend(view.meta.iter().cloned());
        }
        (payload, first)
    }

    /// Stream `index` of `capture` as `decrypted` made it: each direction's plaintext (moved,
    /// not copied), traced back through its records to the TCP bytes.
    fn decrypted(
        capture: &'a Capture,
        index: usize,
        decrypted: tls::Decrypted,
    ) -> Conversation<'a> {
        let how = if decrypted.unencrypted {
            "not encrypted (read without keys; the MACs are not checked)"
        } else {
            "decrypted with the key log"
        };
        let mut detail = format!("{}, {how}", decrypted.cipher);
        if let Some(alpn) = &decrypted.alpn {
            detail.push_str(&format!(", ALPN {alpn}"));
        }
        let view = |d: &tls::DirectionPlain| View {
            map: d.spans.iter().map(|s| (s.plain, s.record)).collect(),
            layer: (
                decrypted.version.clone(),
                format!("{detail}, {} records", d.records),
            ),
            meta: vec![("tls".to_string(), decrypted.version.clone())],
        };
        let views = [
            Some(view(&decrypted.directions[0])),
            Some(view(&decrypted.directions[1])),
        ];
        let [c, s] = decrypted.directions;
        Conversation {
            capture,
            index,
            bytes: [
                std::borrow::Cow::Owned(c.plaintext),
                std::borrow::Cow::Owned(s.plaintext),
            ],
            views,
            gapped: [None, None],
            backing: None,
        }
    }

    /// Where each TCP segment of direction `which` begins in its bytes (none for a decrypted
    /// direction), in order.
    fn segment_starts(&self, which: usize) -> Vec<usize> {
        if self.views.get(which).is_some_and(Option::is_some) {
            return Vec::new();
        }
        self.capture
            .stream(self.index)
            .and_then(|s| s.directions.get(which))
            .map(|d| d.segments.iter().map(|g| g.span.start).collect())
            .unwrap_or_default()
    }

    /// The frame numbers that carried `span` of direction `which` (`4, 6–9`).
    fn frames(&self, which: usize, span: Span) -> String {
        pcap::span_frames(self.capture, self.index, which, self.tcp_span(which, span))
    }
}

/// The payloads of stream `index` of `capture`, in capture order, and the warnings its reading
/// gave.
pub(crate) fn stream(
    capture: &Capture,
    index: usize,
    keys: Option<&tls::KeyLog>,
    backing: Option<&Backing>,
    options: &UnwrapOptions,
    budget: &mut Budget,
    mut keep: Option<&mut Decoded>,
) -> (Vec<Payload>, Vec<String>) {
    let mut warnings = Vec::new();
    // A key log was given and did not decrypt this stream: its TLS label does not ask for one.
    let mut keys_failed = false;
    let Some(s) = capture.stream(index) else {
        return (Vec::new(), warnings);
    };
    let label = format!(
        "stream {index} ({} {} → {})",
        s.protocol.name(),
        s.client,
        s.server
    );
    if s.protocol == Transport::Tcp {
        let [c, sv] = [s.directions[0].contiguous(), s.directions[1].contiguous()];
        let h2 = http2_client(s, c, sv);
        let conv = Conversation::tcp(capture, index, backing);
        if let (Some(client), Some(conv)) = (h2, &conv) {
            let mut out = Ordered::default();
            read_http2(conv, client, [0, 0], options, budget, &mut out);
            if client == 1 {
                for (_, _, p) in &mut out.items {
                    swap_roles(p);
                }
            }
            return finish(out, &label, warnings);
        }
        if let (true, Some(conv)) = (http::looks_like_http(c) || http::looks_like_http(sv), &conv) {
            let mut out = Ordered::default();
            read_http1(conv, options, budget, keep, &mut out);
            return finish(out, &label, warnings);
        }
        let is_tls = tls::looks_like_tls(c) || tls::looks_like_tls(sv);
        // A suite that encrypts nothing is read without keys.
        if let Some(plain) = is_tls.then(|| tls::read_unencrypted(c, sv)).flatten() {
            let mut out = Ordered::default();
            read_decrypted(capture, index, plain, options, budget, keep, &mut out);
            return finish(out, &label, warnings);
        }
        if let (true, Some(keys)) = (is_tls, keys) {
            match tls::decrypt(c, sv, keys) {
                Ok(decrypted) => {
                    let mut out = Ordered::default();
                    read_decrypted(capture, index, decrypted, options, budget, keep, &mut out);
                    return finish(out, &label, warnings);
                }
                // Not decrypted (no key for this connection, a suite not read): labelled
                // below as encrypted, with why.
                Err(e) => {
                    warnings.push(format!("{label}: TLS not decrypted: {e}"));
                    keys_failed = true;
                }
            }
        }
    }
    // Anything else: each direction (each UDP datagram) peeled on its own.
    let mut payloads = Vec::new();
    let conv = Conversation::tcp(capture, index, backing);
    for (mut stream_payload, which, span) in pcap::stream_payloads(capture, index) {
        // What is left as it was sent is read back from the file when looked at.
        let back = conv
            .as_ref()
            .and_then(|c| c.pieces(which, &[span]))
            .map(|(backing, pieces)| SharedBytes::read_back(backing.clone(), pieces));
        let body = stream_payload.bytes.clone();
        let read_back = |found: &mut Payload| read_back_part(found, &body, back.as_ref());
        if keys_failed && stream_payload.meta_value("encrypted").is_some() {
            say_not_decrypted(&mut stream_payload);
        }
        if stream_payload.meta_value("encrypted").is_some() || stream_payload.protocol.is_some() {
            // TLS records (labelled by `pcap`): nothing under them can be read without keys;
            // another protocol's messages (DNS, SIP…) are what they are.
            let mut held = stream_payload.clone();
            read_back(&mut held);
            payloads.push(held);
            continue;
        }
        let nested = |p: Payload| {
            let mut p = nest(&stream_payload, p);
            read_back(&mut p);
            p
        };
        match unwrap_keeping(&stream_payload.bytes, options, budget, keep.as_deref_mut()) {
            Ok(found) => payloads.extend(found.into_iter().map(nested)),
            Err(e) => {
                payloads.extend(e.extracted.iter().cloned().map(nested));
                warnings.push(format!(
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
    (payloads, warnings)
}

/// Which side of TCP stream `s` (its directions' bytes `c` and `sv`) is the HTTP/2 client, when
/// the stream is HTTP/2: the preface names it, whichever side sent the SYN; without one (the
/// capture began mid-connection) frames from the side that sent first. `None` for HTTP/1.1,
/// TLS and anything else.
fn http2_client(s: &pcap::Stream, c: &[u8], sv: &[u8]) -> Option<usize> {
    if http2::has_preface(c) {
        Some(0)
    } else if http2::has_preface(sv) {
        Some(1)
    } else if http::looks_like_http(c) || http::looks_like_http(sv) {
        None
    } else if tls::looks_like_tls(c) || tls::looks_like_tls(sv) {
        // Encrypted records: labelled by the caller, each direction as it is.
        None
    } else if http2::looks_like_frames(c) || http2::looks_like_frames(sv) {
        // The side that sent first opened the streams the other answers; the TCP layer only
        // guessed the client from ports.
        let first = |w: usize| {
            s.directions[w]
                .segments
                .first()
                .map_or(u64::MAX, |g| g.frame)
        };
        Some(usize::from(first(1) < first(0)))
    } else {
        None
    }
}

/// An encrypted direction whose connection the key log given did not decrypt says so, rather
/// than ask for a key log.
fn say_not_decrypted(stream_payload: &mut Payload) {
    if let Some(layer) = stream_payload.layers.last_mut() {
        if let Some(head) = layer.detail.strip_suffix(" — give a key log to decrypt") {
            layer.detail =
                format!("{head} — not decrypted with the key log given (see the warnings)");
        }
    }
}

/// Payloads with the capture frame each began in, put in capture order at the end.
#[derive(Default)]
struct Ordered {
    items: Vec<(u64, usize, Payload)>,
    warnings: Vec<String>,
}

impl Ordered {
    fn push(&mut self, first_frame: u64, payload: Payload) {
        let n = self.items.len();
        self.items.push((first_frame, n, payload));
    }
}

/// A payload of a connection whose client is the side the TCP layer took for the server (an
/// HTTP/2 preface or the order of streams says which side opened it): its direction names
/// swapped.
fn swap_roles(p: &mut Payload) {
    let swap = |text: &str| {
        text.replace("client→server", "\u{0}")
            .replace("server→client", "client→server")
            .replace('\u{0}', "server→client")
    };
    p.meta
        .map_values(|k, v| (k == "direction").then(|| swap(v)));
    for l in &mut p.layers {
        if l.name.starts_with("TCP ") {
            l.detail = swap(&l.detail);
        }
    }
}

fn finish(mut out: Ordered, label: &str, mut warnings: Vec<String>) -> (Vec<Payload>, Vec<String>) {
    out.items.sort_by_key(|(frame, n, _)| (*frame, *n));
    warnings.extend(out.warnings.into_iter().map(|w| format!("{label}: {w}")));
    (out.items.into_iter().map(|(_, _, p)| p).collect(), warnings)
}

/// A message's body, peeled further as any payload is (a JSON string holding JSON, base64 text,
/// …), under the layers that found it. An empty body stays one empty payload, so a request keeps
/// its place beside its response.
fn peel_body(
    message: Payload,
    options: &UnwrapOptions,
    budget: &mut Budget,
    keep: Option<&mut Decoded>,
    warnings: &mut Vec<String>,
) -> Vec<Payload> {
    if message.bytes.is_empty()
        || message.meta_value("grpc-body") == Some("true")
        || super::verdict::verdict(&message).is_some()
    {
        // Nothing to peel, or the protocol said what the bytes are (text, a protocol's
        // messages): no hex or base64 is guessed under it.
        return vec![message];
    }
    let body = message.bytes.clone();
    let mut bare = message.clone();
    bare.bytes = SharedBytes::default();
    match unwrap_keeping(&body, options, budget, keep) {
        Ok(found) if found.is_empty() => vec![message],
        Ok(found) => found.into_iter().map(|p| nest(&bare, p)).collect(),
        Err(e) => {
            warnings.push(e.to_string());
            e.extracted.into_iter().map(|p| nest(&bare, p)).collect()
        }
    }
}

/// A decrypted TLS connection: its plaintext read as the protocol ALPN chose (HTTP/2 for `h2`
/// or a client preface, else HTTP/1.x when it starts like it), or each direction's plaintext as
/// one payload. A record that did not decrypt ends its direction with a warning naming it and
/// its frames; the plaintext before it is read.
fn read_decrypted(
    capture: &Capture,
    index: usize,
    decrypted: tls::Decrypted,
    options: &UnwrapOptions,
    budget: &mut Budget,
    keep: Option<&mut Decoded>,
    out: &mut Ordered,
) {
    // A close_notify alert is how a connection ends, not news.
    for note in decrypted
        .notes
        .iter()
        .filter(|n| !n.contains("close_notify"))
    {
        out.warnings.push(format!("{}: {note}", decrypted.version));
    }
    for (which, d) in decrypted.directions.iter().enumerate() {
        if let Some(e) = &d.error {
            let frames = e.offset.map_or_else(String::new, |at| {
                // The frame that carried the record's first byte (an empty span at a segment
                // boundary would name none).
                let f =
                    pcap::span_frames(capture, index, which, Span::new(at, at.saturating_add(1)));
                if f.is_empty() {
                    f
                } else {
                    format!(" (frame {f})")
                }
            });
            out.warnings.push(format!(
                "{e}{frames}; the {} after it is not read",
                direction_name(which)
            ));
        }
    }
    let h2 = decrypted.alpn.as_deref() == Some("h2");
    let conv = Conversation::decrypted(capture, index, decrypted);
    let (c, s) = (conv.bytes(0), conv.bytes(1));
    if h2 || http2::has_preface(c) {
        read_http2(&conv, 0, [0, 0], options, budget, out);
    } else if http::looks_like_http(c) || http::looks_like_http(s) {
        read_http1(&conv, options, budget, keep, out);
    } else {
        for which in 0..2 {
            let bytes = conv.bytes(which);
            if bytes.is_empty() {
                continue;
            }
            let span = Span::new(0, bytes.len());
            let (outer, first) = conv.outer(which, span);
            let mut bare = Payload {
                bytes: bytes.into(),
                ..Payload::default()
            };
            bare.meta.push(("decrypted", "true"));
            out.push(first, nest(&outer, bare));
        }
    }
}

/// The HTTP/1.x messages of direction `which`, each failed message a warning naming its frames.
/// After a TCP gap the messages go on at the first request or status line past it (what was
/// lost is the warning of the message the gap cut, and the gap's own).
fn read_http1_side(
    conv: &Conversation<'_>,
    which: usize,
    options: &UnwrapOptions,
    budget: &mut Budget,
    pairing: &mut Pairing,
    warnings: &mut Vec<String>,
) -> http::Side {
    let (all, runs) = match conv.gapped.get(which) {
        Some(Some((all, runs))) => (*all, runs.clone()),
        _ => {
            let bytes = conv.bytes(which);
            (bytes, vec![Span::new(0, bytes.len())])
        }
    };
    let mut side = http::Side::default();
    for (n, run) in runs.iter().enumerate() {
        let input = all.get(..run.end).unwrap_or(all);
        let from = if n == 0 {
            0
        } else {
            let next =
                http::next_message_start_among(input, run.start, &conv.segment_starts(which));
            // The bytes between the gap and the next message are the rest of the message the
            // gap cut: said, with their frames, not dropped without a word.
            let skipped = Span::new(run.start, next.unwrap_or(run.end).max(run.start));
            if !skipped.is_empty() {
                let at = conv.frames(which, skipped);
                warnings.push(format!(
                    "HTTP/1.x ({}): {} bytes after the gap are the rest of a message it cut and \
                     are skipped{}{}",
                    direction_name(which),
                    skipped.len(),
                    if next.is_some() {
                        " to the next request or status line"
                    } else {
                        ""
                    },
                    if at.is_empty() {
                        String::new()
                    } else {
                        format!(" (frame {at})")
                    }
                ));
            }
            match next {
                Some(at) => at,
                None => continue,
            }
        };
        if n > 0 && side.switched.is_some() {
            break;
        }
        let mut part = http::parse_side(input, from, options, budget, pairing);
        for http::Failed { error: e, message } in &part.errors {
            // The frames of the failed message itself.
            let at = conv.frames(which, *message);
            warnings.push(format!(
                "{} ({}): {e}{}",
                e.layer,
                direction_name(which),
                if at.is_empty() {
                    String::new()
                } else {
                    format!(" (frame {at})")
                }
            ));
        }
        side.payloads.append(&mut part.payloads);
        if part.switched.is_some() {
            side.switched = part.switched;
            break;
        }
    }
    side
}

/// HTTP/1.x on stream `index`: the client's requests, then the server's responses paired with
/// them; after a switch, the rest of each direction as the protocol switched to.
fn read_http1(
    conv: &Conversation<'_>,
    options: &UnwrapOptions,
    budget: &mut Budget,
    mut keep: Option<&mut Decoded>,
    out: &mut Ordered,
) {
    let mut pairing = Pairing::default();
    let mut switches = [None, None];
    // The 101's extensions: what the server agreed to (permessage-deflate).
    let mut extensions: Option<String> = None;
    for (which, switched) in switches.iter_mut().enumerate() {
        let bytes = conv.bytes(which);
        if bytes.is_empty() {
            continue;
        }
        let side = read_http1_side(
            conv,
            which,
            options,
            budget,
            &mut pairing,
            &mut out.warnings,
        );
        for p in side.payloads {
            // What a message's own reading noted (headers past a limit, an unknown coding) is
            // the capture's news too, with the message's frames.
            let span = p.layers.first().map_or(Span::empty(0), |l| l.span);
            for (_, w) in p.meta.iter().filter(|(k, _)| *k == "warning") {
                let frames = conv.frames(which, span);
                out.warnings.push(format!(
                    "{w} ({}{})",
                    direction_name(which),
                    if frames.is_empty() {
                        String::new()
                    } else {
                        format!(", frame {frames}")
                    }
                ));
            }
            if which == 1 {
                if let Some((_, v)) = p
                    .meta
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("sec-websocket-extensions"))
                {
                    extensions = Some(v.to_string());
                }
            }
            let span = p.layers.first().map_or(Span::empty(0), |l| l.span);
            let (outer, first) = conv.outer(which, span);
            let body = p.bytes.clone();
            let back = conv.read_back_http1(which, &p, options);
            let message = nest(&outer, p);
            let mut warnings = Vec::new();
            let found = peel_body(message, options, budget, keep.as_deref_mut(), &mut warnings);
            for mut found in found {
                read_back_part(&mut found, &body, back.as_ref());
                out.push(first, found);
            }
            out.warnings.extend(warnings);
        }
        *switched = side.switched;
    }
    // The server's switch is the one that counts; the client's tells where its own bytes of the
    // new protocol begin (after the request that asked for it).
    let Some(switch) = switches[1].clone() else {
        return;
    };
    let client_at = switches[0].as_ref().map_or(conv.bytes(0).len(), |w| w.at);
    let starts = [client_at, switch.at];
    match switch.protocol.as_str() {
        "h2c" => read_http2(conv, 0, starts, options, budget, out),
        "websocket" => {
            let deflate = extensions
                .as_deref()
                .and_then(websocket::negotiated_deflate);
            for (which, &at) in starts.iter().enumerate() {
                read_websocket(conv, which, at, deflate.as_ref(), options, budget, out);
            }
        }
        _ => {
            for (which, &at) in starts.iter().enumerate() {
                let bytes = conv.bytes(which);
                if at >= bytes.len() {
                    continue;
                }
                let span = Span::new(at, bytes.len());
                let (outer, first) = conv.outer(which, span);
                let rest = Payload {
                    message: None,
                    avro: None,
                    bytes: bytes.get(at..).unwrap_or(&[]).into(),
                    layers: vec![Layer {
                        name: switch.layer_name(),
                        detail: format!("bytes {at}.. of the {}", direction_name(which)),
                        span,
                    }],
                    hint: None,
                    meta: Default::default(),
                    cut: None,
                    protocol: None,
                };
                out.push(first, nest(&outer, rest));
            }
        }
    }
}

/// Control frames of a direction that has no text or binary message to list them with: said
/// in a warning, each with its frame, so that no frame goes unmentioned.
fn say_lone_controls(
    conv: &Conversation<'_>,
    which: usize,
    at: usize,
    controls: &[websocket::Control],
    out: &mut Ordered,
) {
    if controls.is_empty() {
        return;
    }
    let listed: Vec<String> = controls
        .iter()
        .map(|c| {
            let start = at + c.span.start;
            // Its first byte's frame (an empty span at a segment boundary names none).
            let frames = conv.frames(which, Span::new(start, start + 1));
            if frames.is_empty() {
                format!("{} at byte {start}", c.detail)
            } else {
                format!("{} at byte {start} (frame {frames})", c.detail)
            }
        })
        .collect();
    out.warnings.push(format!(
        "WebSocket ({}): control frames and no text or binary message: {}",
        direction_name(which),
        listed.join("; ")
    ));
}

/// The WebSocket frames of direction `which` of stream `index` from byte `at` (after the
/// handshake): one payload per text or binary message, unmasked, joined and inflated, its layer
/// naming the frames; control frames listed in the first message's meta.
fn read_websocket(
    conv: &Conversation<'_>,
    which: usize,
    at: usize,
    deflate: Option<&websocket::Deflate>,
    options: &UnwrapOptions,
    budget: &mut Budget,
    out: &mut Ordered,
) {
    let Some(bytes) = conv.bytes(which).get(at..) else {
        return;
    };
    if bytes.is_empty() {
        return;
    }
    let parsed = websocket::parse_within(bytes, which == 0, deflate, options, budget);
    let side = direction_name(which);
    for w in &parsed.warnings {
        out.warnings.push(format!("WebSocket ({side}): {w}"));
    }
    if let Some((offset, message)) = &parsed.error {
        let frames = conv.frames(which, Span::empty(at + offset));
        out.warnings.push(format!(
            "WebSocket ({side}): error at byte {} of the direction{}: {message}; the messages before it are kept",
            at + offset,
            if frames.is_empty() {
                String::new()
            } else {
                format!(" (frame {frames})")
            }
        ));
    }
    let controls: Vec<String> = parsed
        .controls
        .iter()
        .map(|c| format!("{} at byte {}", c.detail, at + c.span.start))
        .collect();
    let count = parsed.messages.len();
    if count == 0 {
        say_lone_controls(conv, which, at, &parsed.controls, out);
    }
    for (n, mut m) in parsed.messages.into_iter().enumerate() {
        let (Some(first), Some(last)) = (m.frames.first(), m.frames.last()) else {
            continue;
        };
        let span = Span::new(at + first.start, at + last.end);
        let (outer, first_frame) = conv.outer(which, span);
        let kind = m.opcode.name();
        let mut detail = format!(
            "{kind} message {} of {count}, {} frame{}",
            n + 1,
            m.frames.len(),
            if m.frames.len() == 1 { "" } else { "s" }
        );
        if m.compressed {
            detail.push_str(", permessage-deflate");
        }
        let mut meta = crate::capture::Meta::from([("websocket opcode", kind.as_str())]);
        let cut = (!m.complete).then(|| {
            detail.push_str(", cut short");
            "the message's frames end before its last one".to_string()
        });
        if let Some(problem) = &m.problem {
            let frames = conv.frames(which, Span::empty(span.start));
            out.warnings.push(format!(
                "WebSocket ({side}): {problem}{}",
                if frames.is_empty() {
                    String::new()
                } else {
                    format!(" (frame {frames})")
                }
            ));
            meta.push(("warning", problem.clone()));
        }
        if n == 0 && !controls.is_empty() {
            meta.push(("websocket control", controls.join("; ")));
        }
        let text = m.opcode == websocket::Opcode::Text;
        // The opcode says text: JSON is the one data format a text message can be.
        let hint = (text && crate::codec::json::is_json(&m.data, &options.json_options().limits))
            .then_some(crate::codec::Format::Json);
        let payload = Payload {
            message: None,
            avro: None,
            // Moved, not copied: an inflated message may be as large as the decompression limit.
            bytes: std::mem::take(&mut m.data).into(),
            layers: vec![Layer {
                name: "WebSocket".into(),
                detail,
                span,
            }],
            hint,
            meta,
            cut,
            protocol: None,
        };
        if text {
            // What the protocol says stands: a text message is not peeled as hex or base64
            // (`detect::verdict` shows it as text unless it is JSON).
            out.push(first_frame, nest(&outer, payload));
            continue;
        }
        let mut warnings = Vec::new();
        for found in peel_body(nest(&outer, payload), options, budget, None, &mut warnings) {
            out.push(first_frame, found);
        }
        out.warnings.extend(warnings);
    }
}

/// `p`, when its bytes are `body` or a part of it (a view, not a copy), made the same part of
/// `back`: the body read back from the capture file when looked at.
fn read_back_part(p: &mut Payload, body: &SharedBytes, back: Option<&SharedBytes>) {
    if let (Some(part), Some(back)) = (p.bytes.range_in(body), back) {
        p.bytes = back.slice(part);
    }
}

fn direction_name(which: usize) -> &'static str {
    if which == 0 {
        "client→server"
    } else {
        "server→client"
    }
}

/// HTTP/2 on stream `index`, the client being direction `client`, each direction read from its
/// offset in `starts` (`[client, server]`).
fn read_http2(
    conv: &Conversation<'_>,
    client: usize,
    starts: [usize; 2],
    options: &UnwrapOptions,
    budget: &mut Budget,
    out: &mut Ordered,
) {
    let server = 1 - client;
    let conn = http2::parse_connection_within(
        conv.bytes(client),
        starts[0],
        conv.bytes(server),
        starts[1],
        options,
        budget,
    );
    for w in &conn.warnings {
        // Where it struck, as the capture's frame numbers.
        let frames = w.at.map_or_else(String::new, |(side, at)| {
            let which = if side == http2::Side::Server {
                server
            } else {
                client
            };
            conv.frames(which, Span::empty(at))
        });
        out.warnings.push(if frames.is_empty() {
            w.text.clone()
        } else {
            format!("{} (frame {frames})", w.text)
        });
    }
    // Each stream's request, by stream id: a response's method and path are its request's.
    let requests: std::collections::HashMap<u32, &http2::Message> = conn
        .messages
        .iter()
        .filter(|m| m.side != Some(http2::Side::Server))
        .map(|m| (m.stream, m))
        .collect();
    let mut first_payload = true;
    for m in &conn.messages {
        super::work::add(1);
        let which = match m.side {
            Some(http2::Side::Server) => server,
            _ => client,
        };
        let request = m.side != Some(http2::Side::Server);
        let req = if request {
            Some(m)
        } else {
            requests.get(&m.stream).copied()
        };
        let (outer, first) = conv.outer(which, m.span);
        let mut payload = message_payload(m, req, request);
        payload.meta.push((
            "http2 frames",
            frame_list(conv, which, &m.frames, m.frame_count),
        ));
        if first_payload {
            first_payload = false;
            for (side, lines) in ["client", "server"].iter().zip(&conn.control) {
                if !lines.is_empty() {
                    payload
                        .meta
                        .push((format!("http2 {side} control"), lines.join("; ")));
                }
            }
        }
        let mut payload = decode_content(payload, m, options, budget, &mut out.warnings);
        // Its DATA as sent, undone from the codings decoding undid, read back when looked at.
        let codings = payload.layers.get(1..).unwrap_or(&[]);
        if payload.cut.is_none() || codings.is_empty() {
            let back = conv.read_back_body(which, &m.body_spans, codings, &payload.bytes, options);
            if let Some(back) = back {
                payload.bytes = back;
            }
        }
        out.push(first, nest(&outer, payload));
    }
}

/// The frames of a message as the frame list shows them: `HEADERS END_HEADERS (frame 4); DATA
/// 120 B END_STREAM (frames 5–6)`.
fn frame_list(
    conv: &Conversation<'_>,
    which: usize,
    frames: &[http2::FrameRef],
    count: usize,
) -> String {
    let mut parts: Vec<String> = frames
        .iter()
        .take(LISTED_FRAMES)
        .map(|f| {
            let mut text = f.kind.clone();
            if f.kind == "DATA" {
                text.push_str(&format!(" {} B", f.data));
            }
            if !f.flags.is_empty() {
                text.push(' ');
                text.push_str(&f.flags);
            }
            let at = conv.frames(which, f.span);
            if !at.is_empty() {
                let word = if at.contains([',', '–']) {
                    "frames"
                } else {
                    "frame"
                };
                text.push_str(&format!(" ({word} {at})"));
            }
            text
        })
        .collect();
    let count = count.max(frames.len());
    if count > LISTED_FRAMES {
        parts.push(format!("… {} more", count - LISTED_FRAMES));
    }
    parts.join("; ")
}

/// One HTTP/2 message as a payload (its body, not decompressed yet): the `HTTP/2 stream N` layer,
/// the headers, trailers and notes in meta, the format hint from its content type.
fn message_payload(m: &http2::Message, req: Option<&http2::Message>, request: bool) -> Payload {
    let mut meta = crate::capture::Meta::new();
    meta.push(("http2 stream", m.stream.to_string()));
    for (k, v) in &m.headers {
        meta.push((k.clone(), v.clone()));
    }
    for (k, v) in &m.trailers {
        meta.push((format!("trailer {k}"), v.clone()));
    }
    for line in &m.informational {
        meta.push(("informational", line.clone()));
    }
    let method = req.and_then(|r| r.header(":method"));
    let path = req.and_then(|r| r.header(":path"));
    if request {
        if let Some(method) = method {
            meta.push(("method", method.to_string()));
        }
    } else if let Some(method) = method {
        meta.push(("request-method", method.to_string()));
    }
    let content_type = m.header("content-type");
    let grpc = content_type.is_some_and(|ct| {
        let media = super::media::media_type(ct);
        media == "application/grpc" || media.starts_with("application/grpc+")
    });
    if grpc {
        meta.push(("grpc-body", "true"));
        if let Some(path) = path {
            meta.push(("grpc-method", path.to_string()));
        }
        meta.push((
            "grpc-direction",
            if request { "request" } else { "response" },
        ));
        for key in ["grpc-status", "grpc-message"] {
            if let Some(v) = m.trailer(key).or_else(|| m.header(key)) {
                meta.push((key, v.to_string()));
            }
        }
    }
    let mut notes: Vec<String> = m.notes.clone();
    if m.headers_unknown {
        notes.push(
            "the headers of this stream are not known (the capture does not hold the HPACK state they refer to)"
                .into(),
        );
    }
    if let Some(reset) = &m.reset {
        notes.push(format!("the stream was reset: {reset}"));
    }
    let ends = "the stream does not end in the capture (no END_STREAM)";
    let cut = (!m.ended && m.reset.is_none() && m.frame_count > 0).then(|| ends.to_string());
    if let Some(c) = &cut {
        notes.push(c.clone());
    }
    for n in notes {
        meta.push(("warning", n));
    }
    let mut detail = if request {
        match (method, path) {
            (Some(method), Some(path)) => format!("request {method} {path}"),
            _ => "request".to_string(),
        }
    } else {
        match m.header(":status") {
            Some(status) => format!("response {status}"),
            None => "response".to_string(),
        }
    };
    if m.pushed {
        detail.push_str(" (pushed)");
    }
    if let Some(ct) = content_type {
        detail.push_str(&format!("; content-type: {ct}"));
    }
    if grpc && !request {
        if let Some(status) = m.trailer("grpc-status").or_else(|| m.header("grpc-status")) {
            detail.push_str(&format!("; grpc-status {status}"));
        }
    }
    let data_frames = m.data_frames;
    detail.push_str(&format!(
        "; {data_frames} DATA frame{}, {} bytes",
        if data_frames == 1 { "" } else { "s" },
        m.body.len()
    ));
    Payload {
        message: None,
        avro: None,
        bytes: m.body.clone().into(),
        layers: vec![Layer {
            name: format!("HTTP/2 stream {}", m.stream),
            detail,
            span: m.span,
        }],
        hint: content_type.and_then(super::media::hint_for_media_type),
        meta,
        cut,
        protocol: None,
    }
}

/// `content-encoding` undone, as for HTTP/1.1 (last applied, first undone).
fn decode_content(
    mut payload: Payload,
    m: &http2::Message,
    options: &UnwrapOptions,
    budget: &mut Budget,
    warnings: &mut Vec<String>,
) -> Payload {
    let Some(header) = m.header("content-encoding") else {
        return payload;
    };
    let codings: Vec<String> = http::codings(header).collect();
    let body = std::mem::take(&mut payload.bytes).to_vec();
    let undone = http::undo_content_codings(
        &codings,
        body,
        &mut payload.layers,
        &mut payload.meta,
        options,
        budget,
    );
    payload.bytes = match undone {
        Ok(body) => body.into(),
        Err((name, message, partial)) => {
            warnings.push(format!("HTTP/2 stream {} {name}: {message}", m.stream));
            payload.cut = Some(format!("{name}: {message}"));
            partial.into()
        }
    };
    payload
}
