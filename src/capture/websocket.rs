//! WebSocket frames (RFC 6455) with permessage-deflate (RFC 7692), one direction at a time.
//!
//! After an HTTP/1.1 `101 Switching Protocols` with `Upgrade: websocket`, each direction of the
//! connection is a stream of frames. [`parse`] reads one direction's bytes: frame headers (7-, 16-
//! and 64-bit lengths, masking key), unmasking, fragmented messages joined (control frames may
//! come between the fragments), and compressed messages (RSV1 on the first frame) inflated with
//! one raw-DEFLATE window per direction, kept from message to message unless the handshake agreed
//! `*_no_context_takeover`. [`negotiated_deflate`] reads what the handshake agreed from the 101
//! response's `Sec-WebSocket-Extensions` header.
//!
//! What comes out is a [`Parsed`]: the data messages (Text and Binary, each with the spans of its
//! frames), the control frames (Close with its status code and reason, Ping, Pong, and frames of
//! reserved opcodes), warnings for rule violations that do not stop reading (a client frame left
//! unmasked, a text message that is not UTF-8, a control frame over 125 bytes…), and at most one
//! error, which does: a frame cut short by the end of the capture, a message inflating past the
//! limits, a corrupt DEFLATE stream, too many frames. What was found before the error is kept, and
//! the message being read when it struck is reported too, marked incomplete.
//!
//! Bounds: inflating draws on one budget for the direction,
//! [`UnwrapOptions::decompression_limit`] of the direction's size (so at most
//! [`UnwrapOptions::max_decompressed`]), and each message is also held to the limit of its own
//! compressed size, as HTTP bodies are; frame lengths are checked against the bytes left; at most
//! [`MAX_FRAMES`] frames are read; at most [`MAX_WARNINGS`] warnings are listed (the rest are
//! counted). Nothing here panics on any input.
//!
//! Not done here: finding the handshake and splitting the two directions (the capture pipeline
//! does that), extensions other than permessage-deflate (RSV2 and RSV3 are reported, not undone).

use flate2::{Decompress, FlushDecompress, Status};

use crate::model::Span;

use super::payload::{Budget, UnwrapOptions};
use crate::limits::Limits;

/// Most frames [`parse`] reads from one direction by default ([`Limits::max_frames`], which
/// [`UnwrapOptions::max_frames`] carries); past it the parse stops with an error.
pub const MAX_FRAMES: usize = 1_000_000;

/// Most warnings [`parse`] lists; past it they are counted in one last warning.
pub const MAX_WARNINGS: usize = 100;

/// The tail an endpoint strips from each compressed message and the reader puts back (RFC 7692
/// §7.2.2): the end of an empty stored block.
const DEFLATE_TAIL: [u8; 4] = [0x00, 0x00, 0xff, 0xff];

/// permessage-deflate as agreed by the handshake (RFC 7692 §7.1).
///
/// Window sizes do not change how a message is read (a 32 KiB window reads streams written with
/// any smaller one); they are kept to be shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deflate {
    /// The client starts each message with an empty window (its messages are read one by one).
    pub client_no_context_takeover: bool,
    /// The server starts each message with an empty window.
    pub server_no_context_takeover: bool,
    /// log2 of the client's window, 8 to 15 (15 when not given).
    pub client_max_window_bits: u8,
    /// log2 of the server's window, 8 to 15 (15 when not given).
    pub server_max_window_bits: u8,
}

impl Default for Deflate {
    /// permessage-deflate with no parameters: context takeover both ways, 32 KiB windows.
    fn default() -> Self {
        Deflate {
            client_no_context_takeover: false,
            server_no_context_takeover: false,
            client_max_window_bits: 15,
            server_max_window_bits: 15,
        }
    }
}

/// What permessage-deflate the handshake agreed, from the value of the 101 response's
/// `Sec-WebSocket-Extensions` header (the server's answer is what counts; the request only
/// offers). `None` when the response accepts no permessage-deflate.
///
/// Several header lines are one value joined with `, `. The first `permessage-deflate` element is
/// taken; parameter names are matched without regard to case, values may be quoted, and a
/// window-bits parameter without a valid value (8 to 15) counts as 15, so a response that breaks
/// the RFC's rules is still read the way its peer most likely read it.
///
/// ```
/// use wirelens::capture::websocket::negotiated_deflate;
///
/// let d = negotiated_deflate("permessage-deflate; server_no_context_takeover").expect("agreed");
/// assert!(d.server_no_context_takeover && !d.client_no_context_takeover);
/// assert_eq!(negotiated_deflate("x-webkit-deflate-frame"), None);
/// ```
pub fn negotiated_deflate(response_extensions: &str) -> Option<Deflate> {
    for element in split_outside_quotes(response_extensions, ',') {
        let mut parts = split_outside_quotes(element, ';').into_iter();
        let name = parts.next().unwrap_or("").trim();
        if !name.eq_ignore_ascii_case("permessage-deflate") {
            continue;
        }
        let mut deflate = Deflate::default();
        for param in parts {
            let (key, value) = match param.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim().trim_matches('"').trim())),
                None => (param.trim(), None),
            };
            let bits = value
                .and_then(|v| v.parse::<u8>().ok())
                .filter(|b| (8..=15).contains(b))
                .unwrap_or(15);
            if key.eq_ignore_ascii_case("client_no_context_takeover") {
                deflate.client_no_context_takeover = true;
            } else if key.eq_ignore_ascii_case("server_no_context_takeover") {
                deflate.server_no_context_takeover = true;
            } else if key.eq_ignore_ascii_case("client_max_window_bits") {
                deflate.client_max_window_bits = bits;
            } else if key.eq_ignore_ascii_case("server_max_window_bits") {
                deflate.server_max_window_bits = bits;
            }
        }
        return Some(deflate);
    }
    None
}

/// `text` split at each `sep` that is not inside a quoted string.
fn split_outside_quotes(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if escaped {
            escaped = false;
        } else if quoted && c == '\\' {
            escaped = true;
        } else if c == '"' {
            quoted = !quoted;
        } else if c == sep && !quoted {
            parts.push(text.get(start..i).unwrap_or(""));
            start = i + c.len_utf8();
        }
    }
    parts.push(text.get(start..).unwrap_or(""));
    parts
}

/// A frame's opcode (RFC 6455 §5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Opcode {
    /// 0x0: a further fragment of the message in progress.
    Continuation,
    /// 0x1: the first frame of a UTF-8 text message.
    Text,
    /// 0x2: the first frame of a binary message.
    Binary,
    /// 0x8: the endpoint closes the connection.
    Close,
    /// 0x9: a ping.
    Ping,
    /// 0xA: a pong.
    Pong,
    /// A reserved opcode: 0x3 to 0x7 (data) or 0xB to 0xF (control).
    Other(u8),
}

impl Opcode {
    /// The opcode of the low four bits of `b`.
    pub fn from_bits(b: u8) -> Opcode {
        match b & 0x0f {
            0x0 => Opcode::Continuation,
            0x1 => Opcode::Text,
            0x2 => Opcode::Binary,
            0x8 => Opcode::Close,
            0x9 => Opcode::Ping,
            0xa => Opcode::Pong,
            other => Opcode::Other(other),
        }
    }

    /// The four-bit value on the wire.
    pub fn bits(self) -> u8 {
        match self {
            Opcode::Continuation => 0x0,
            Opcode::Text => 0x1,
            Opcode::Binary => 0x2,
            Opcode::Close => 0x8,
            Opcode::Ping => 0x9,
            Opcode::Pong => 0xa,
            Opcode::Other(b) => b & 0x0f,
        }
    }

    /// Whether this is a control opcode (0x8 to 0xF): never fragmented, at most 125 bytes.
    pub fn is_control(self) -> bool {
        self.bits() & 0x08 != 0
    }

    /// A lowercase name: "text", "close", "opcode 0x3", …
    pub fn name(self) -> String {
        match self {
            Opcode::Continuation => "continuation".to_string(),
            Opcode::Text => "text".to_string(),
            Opcode::Binary => "binary".to_string(),
            Opcode::Close => "close".to_string(),
            Opcode::Ping => "ping".to_string(),
            Opcode::Pong => "pong".to_string(),
            Opcode::Other(b) => format!("opcode 0x{b:x}"),
        }
    }
}

/// One data message: a Text or Binary frame and the Continuation frames after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// [`Opcode::Text`] or [`Opcode::Binary`] (the opcode of the first frame).
    pub opcode: Opcode,
    /// The payload: unmasked, fragments joined, inflated when compressed.
    pub data: Vec<u8>,
    /// Each frame's span (header and payload) in the direction's bytes, in order.
    pub frames: Vec<Span>,
    /// Whether the message was compressed (RSV1 on its first frame).
    pub compressed: bool,
    /// `false` when the message is cut short: the direction ends before its last frame,
    /// [`Parsed::error`] struck inside it, or it could not be inflated to its end
    /// ([`Message::problem`]). `data` is then what could be read.
    pub complete: bool,
    /// Why a compressed message was not inflated to its end: a limit (named, with how to raise
    /// it) or corrupt DEFLATE data. The messages after it are still read.
    pub problem: Option<String>,
}

/// One control frame (or a frame of a reserved opcode), on its own between or inside messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Control {
    /// [`Opcode::Close`], [`Opcode::Ping`], [`Opcode::Pong`] or [`Opcode::Other`].
    pub opcode: Opcode,
    /// The frame's span (header and payload) in the direction's bytes.
    pub span: Span,
    /// The payload, unmasked.
    pub data: Vec<u8>,
    /// A short description: `close 1000 "bye"`, `close (no status code)`, `ping, 5 bytes`, …
    pub detail: String,
}

/// What [`parse`] found in one direction.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parsed {
    /// The data messages, in order.
    pub messages: Vec<Message>,
    /// The control frames, in order.
    pub controls: Vec<Control>,
    /// Where reading stopped and why (offset into the direction's bytes); `None` when every
    /// byte was read.
    pub error: Option<(usize, String)>,
    /// Rule violations that did not stop reading, in order.
    pub warnings: Vec<String>,
}

/// Reads one direction's bytes after the handshake: `from_client` for client-to-server bytes,
/// whose frames must be masked (server-to-client frames must not be; either violation is a
/// warning). `deflate` is what [`negotiated_deflate`] found, `None` if the handshake agreed no
/// compression or was not seen; a compressed message is inflated either way (with a warning when
/// none was agreed, context takeover assumed).
///
/// ```
/// use wirelens::capture::{websocket, UnwrapOptions};
///
/// // RFC 6455 §5.7: a masked "Hello" from a client.
/// let bytes = [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58];
/// let parsed = websocket::parse(&bytes, true, None, &UnwrapOptions::default());
/// assert_eq!(parsed.messages[0].data, b"Hello");
/// assert!(parsed.error.is_none() && parsed.warnings.is_empty());
/// ```
pub fn parse(
    bytes: &[u8],
    from_client: bool,
    deflate: Option<&Deflate>,
    options: &UnwrapOptions,
) -> Parsed {
    let mut budget = Budget::for_input(bytes.len(), options);
    parse_within(bytes, from_client, deflate, options, &mut budget)
}

/// [`parse`] within what is left of `budget`, which the inflated bytes are taken from (so the
/// two directions of a connection, and the rest of a capture, can share one budget).
pub(crate) fn parse_within(
    bytes: &[u8],
    from_client: bool,
    deflate: Option<&Deflate>,
    options: &UnwrapOptions,
    budget: &mut Budget,
) -> Parsed {
    let mut reader = Reader {
        bytes,
        from_client,
        options,
        budget,
        inflater: Inflater::new(deflate.is_some_and(|d| {
            if from_client {
                d.client_no_context_takeover
            } else {
                d.server_no_context_takeover
            }
        })),
        deflate_agreed: deflate.is_some(),
        out: Parsed::default(),
        warnings_left_out: 0,
        pending: None,
        closed_at: None,
        unmasked_warned: false,
        rsv1_unagreed_warned: false,
    };
    reader.run();
    reader.finish()
}

/// A message whose last frame has not been read yet.
struct Pending {
    opcode: Opcode,
    /// Unmasked payload bytes so far, still compressed if `compressed`.
    payload: Vec<u8>,
    frames: Vec<Span>,
    compressed: bool,
}

/// One frame's header, read.
struct Header {
    fin: bool,
    rsv1: bool,
    rsv2: bool,
    rsv3: bool,
    opcode: Opcode,
    mask: Option<[u8; 4]>,
    /// Payload length as the header gives it.
    len: u64,
    /// Header size in bytes.
    size: usize,
}

/// Why a header could not be read: it needs more bytes than are left.
struct CutHeader {
    needed: usize,
}

fn read_header(bytes: &[u8]) -> Result<Header, CutHeader> {
    let (&b0, &b1) = match bytes {
        [b0, b1, ..] => (b0, b1),
        _ => return Err(CutHeader { needed: 2 }),
    };
    let masked = b1 & 0x80 != 0;
    let (len, len_size) = match b1 & 0x7f {
        126 => {
            let b = bytes.get(2..4).ok_or(CutHeader { needed: 4 })?;
            let b: [u8; 2] = b.try_into().map_err(|_| CutHeader { needed: 4 })?;
            (u64::from(u16::from_be_bytes(b)), 2)
        }
        127 => {
            let b = bytes.get(2..10).ok_or(CutHeader { needed: 10 })?;
            let b: [u8; 8] = b.try_into().map_err(|_| CutHeader { needed: 10 })?;
            (u64::from_be_bytes(b), 8)
        }
        n => (u64::from(n), 0),
    };
    let mut size = 2 + len_size;
    let mask = if masked {
        let needed = size + 4;
        let key = bytes.get(size..needed).ok_or(CutHeader { needed })?;
        let key: [u8; 4] = key.try_into().map_err(|_| CutHeader { needed })?;
        size = needed;
        Some(key)
    } else {
        None
    };
    Ok(Header {
        fin: b0 & 0x80 != 0,
        rsv1: b0 & 0x40 != 0,
        rsv2: b0 & 0x20 != 0,
        rsv3: b0 & 0x10 != 0,
        opcode: Opcode::from_bits(b0),
        mask,
        len,
        size,
    })
}

/// `payload` unmasked with `mask` (RFC 6455 §5.3), or as it is when there is none.
fn unmask(payload: &[u8], mask: Option<[u8; 4]>) -> Vec<u8> {
    match mask {
        Some(key) => payload
            .iter()
            .zip(key.iter().cycle())
            .map(|(b, k)| b ^ k)
            .collect(),
        None => payload.to_vec(),
    }
}

/// The raw-DEFLATE reader of one direction.
struct Inflater {
    inner: Decompress,
    /// Each message starts with an empty window (`*_no_context_takeover`).
    reset_each: bool,
    /// The stream ended (a block with BFINAL set): the next message starts a new one.
    ended: bool,
    /// Output buffer, kept from message to message (a capture may hold a million tiny ones).
    buf: Vec<u8>,
}

/// Why inflating stopped short.
enum InflateError {
    /// The output would pass a limit; the message says which.
    Limit(String),
    /// The DEFLATE data is corrupt.
    Corrupt(String),
}

impl InflateError {
    fn message(self) -> String {
        match self {
            InflateError::Limit(m) | InflateError::Corrupt(m) => m,
        }
    }
}

impl Inflater {
    fn new(reset_each: bool) -> Inflater {
        Inflater {
            inner: Decompress::new(false),
            reset_each,
            ended: false,
            buf: vec![0u8; 32 * 1024],
        }
    }

    /// Inflates one message's `data` into `out`, at most `limit` bytes; with `tail`, the
    /// message is whole and the flush tail is put back, else it is the start of a message cut
    /// short. `overall` is the direction's budget (left, total) for the error message.
    fn inflate(
        &mut self,
        data: &[u8],
        tail: bool,
        limit: usize,
        overall: Overall,
        out: &mut Vec<u8>,
    ) -> Result<(), InflateError> {
        if self.reset_each || self.ended {
            self.inner.reset(false);
            self.ended = false;
        }
        let tail_bytes: &[u8] = if tail { &DEFLATE_TAIL } else { &[] };
        for chunk in [data, tail_bytes] {
            let mut rest = chunk;
            loop {
                let before_in = self.inner.total_in();
                let before_out = self.inner.total_out();
                let status = self
                    .inner
                    .decompress(rest, &mut self.buf, FlushDecompress::Sync)
                    .map_err(|e| {
                        InflateError::Corrupt(format!(
                            "the DEFLATE data is corrupt after {} bytes of output: {e}",
                            out.len()
                        ))
                    })?;
                let consumed = usize::try_from(self.inner.total_in().wrapping_sub(before_in))
                    .unwrap_or(usize::MAX);
                let produced = usize::try_from(self.inner.total_out().wrapping_sub(before_out))
                    .unwrap_or(usize::MAX);
                let got = self.buf.get(..produced).unwrap_or(&[]);
                if out.len().saturating_add(got.len()) > limit {
                    return Err(InflateError::Limit(match overall {
                        Overall::Own(hint) => format!(
                            "the message inflates past the limit of {limit} bytes (bounded by size and by ratio; {hint})"
                        ),
                        Overall::Budget { left, total, hint } => format!(
                            "the message inflates past the overall limit of {total} decompressed bytes for one input ({left} left after the messages and layers before it; bounded by size and by ratio to the input; {hint})"
                        ),
                    }));
                }
                out.extend_from_slice(got);
                rest = rest.get(consumed..).unwrap_or(&[]);
                if status == Status::StreamEnd {
                    // A sender may end a message with a final block (RFC 7692 §7.2.3.3): what
                    // follows, the tail included, is not part of this stream.
                    self.ended = true;
                    return Ok(());
                }
                let stalled = consumed == 0 && produced == 0;
                if stalled || (rest.is_empty() && produced < self.buf.len()) {
                    break;
                }
            }
        }
        Ok(())
    }
}

/// Which bound a message's inflating is held to, and how to raise it.
enum Overall {
    /// Its own limit (by its compressed size).
    Own(String),
    /// What is left of the input's budget.
    Budget {
        left: usize,
        total: usize,
        hint: String,
    },
}

/// The state of one [`parse`].
struct Reader<'a> {
    bytes: &'a [u8],
    from_client: bool,
    options: &'a UnwrapOptions,
    budget: &'a mut Budget,
    inflater: Inflater,
    deflate_agreed: bool,
    out: Parsed,
    warnings_left_out: usize,
    pending: Option<Pending>,
    /// Where the first Close frame began.
    closed_at: Option<usize>,
    unmasked_warned: bool,
    rsv1_unagreed_warned: bool,
}

impl Reader<'_> {
    fn warn(&mut self, warning: String) {
        if self.out.warnings.len() < MAX_WARNINGS {
            self.out.warnings.push(warning);
        } else {
            self.warnings_left_out = self.warnings_left_out.saturating_add(1);
        }
    }

    fn run(&mut self) {
        let mut pos = 0usize;
        let mut frames = 0usize;
        let max_frames = self.options.max_frames;
        while pos < self.bytes.len() {
            if frames >= max_frames {
                self.out.error = Some((
                    pos,
                    format!(
                        "stopped after {max_frames} frames; the bytes may hold more ({})",
                        Limits::hint("frames")
                    ),
                ));
                return;
            }
            frames += 1;
            super::work::add(1);
            let rest = self.bytes.get(pos..).unwrap_or(&[]);
            let header = match read_header(rest) {
                Ok(h) => h,
                Err(CutHeader { needed }) => {
                    self.out.error = Some((
                        pos,
                        format!(
                            "the frame header at byte {pos} is cut short: it needs {needed} bytes, {} are left",
                            rest.len()
                        ),
                    ));
                    return;
                }
            };
            let left = rest.len().saturating_sub(header.size);
            let payload_start = pos.saturating_add(header.size);
            let len = usize::try_from(header.len).ok().filter(|&n| n <= left);
            let Some(len) = len else {
                self.cut_frame(pos, &header, left);
                return;
            };
            let end = payload_start.saturating_add(len);
            let span = Span::new(pos, end);
            let payload = unmask(
                self.bytes.get(payload_start..end).unwrap_or(&[]),
                header.mask,
            );
            self.check_header(pos, &header);
            if let Err(message) = self.frame(pos, span, &header, payload) {
                self.out.error = Some((pos, message));
                return;
            }
            pos = end;
        }
    }

    /// Warnings for header rules broken (masking, reserved bits, length encoding, control
    /// frame rules, data after Close).
    fn check_header(&mut self, pos: usize, h: &Header) {
        if self.from_client != h.mask.is_some() && !self.unmasked_warned {
            self.unmasked_warned = true;
            self.warn(if self.from_client {
                format!("the frame at byte {pos} is not masked, but frames from a client must be (the first such frame; further ones are not listed)")
            } else {
                format!("the frame at byte {pos} is masked, but frames from a server must not be (the first such frame; further ones are not listed)")
            });
        }
        if h.rsv2 || h.rsv3 {
            self.warn(format!(
                "the frame at byte {pos} sets RSV2 or RSV3, which no extension read here defines"
            ));
        }
        let minimal = match h.size.saturating_sub(if h.mask.is_some() { 4 } else { 0 }) {
            4 => h.len >= 126,
            10 => h.len > 0xffff,
            _ => true,
        };
        if !minimal {
            self.warn(format!(
                "the frame at byte {pos} gives its length ({}) in more bytes than needed",
                h.len
            ));
        }
        if h.opcode.is_control() {
            if !h.fin {
                self.warn(format!(
                    "the {} frame at byte {pos} is fragmented (FIN not set), which control frames must not be",
                    h.opcode.name()
                ));
            }
            if h.len > 125 {
                self.warn(format!(
                    "the {} frame at byte {pos} has {} bytes of payload, more than the 125 control frames may have",
                    h.opcode.name(),
                    h.len
                ));
            }
        }
        if let Some(closed) = self.closed_at {
            if h.opcode != Opcode::Close {
                self.warn(format!(
                    "the {} frame at byte {pos} comes after the Close frame at byte {closed}",
                    h.opcode.name()
                ));
            }
        }
    }

    /// Takes one whole frame.
    fn frame(
        &mut self,
        pos: usize,
        span: Span,
        h: &Header,
        payload: Vec<u8>,
    ) -> Result<(), String> {
        match h.opcode {
            Opcode::Text | Opcode::Binary => {
                if let Some(p) = self.pending.take() {
                    self.warn(format!(
                        "a new {} message begins at byte {pos} before the {} message at byte {} had its last frame",
                        h.opcode.name(),
                        p.opcode.name(),
                        p.frames.first().map_or(pos, |s| s.start)
                    ));
                    self.push_partial(p);
                }
                if h.rsv1 && !self.deflate_agreed && !self.rsv1_unagreed_warned {
                    self.rsv1_unagreed_warned = true;
                    self.warn(format!(
                        "the message at byte {pos} is compressed (RSV1) but no permessage-deflate was agreed (or the handshake was not seen); it is inflated as permessage-deflate with context takeover"
                    ));
                }
                let p = Pending {
                    opcode: h.opcode,
                    payload,
                    frames: vec![span],
                    compressed: h.rsv1,
                };
                if h.fin {
                    self.complete(p)
                } else {
                    self.pending = Some(p);
                    Ok(())
                }
            }
            Opcode::Continuation => {
                if h.rsv1 {
                    self.warn(format!(
                        "the continuation frame at byte {pos} sets RSV1, which only a message's first frame may"
                    ));
                }
                let Some(mut p) = self.pending.take() else {
                    self.warn(format!(
                        "the continuation frame at byte {pos} continues no message; its {} bytes are left out",
                        payload.len()
                    ));
                    return Ok(());
                };
                p.payload.extend_from_slice(&payload);
                p.frames.push(span);
                if h.fin {
                    self.complete(p)
                } else {
                    self.pending = Some(p);
                    Ok(())
                }
            }
            opcode => {
                if h.rsv1 {
                    self.warn(format!(
                        "the {} frame at byte {pos} sets RSV1, which control frames must not",
                        opcode.name()
                    ));
                }
                let detail = match opcode {
                    Opcode::Close => {
                        if self.closed_at.is_none() {
                            self.closed_at = Some(pos);
                        }
                        self.close_detail(pos, &payload)
                    }
                    Opcode::Other(b) if b & 0x08 == 0 => {
                        self.warn(format!(
                            "the frame at byte {pos} has the reserved data opcode 0x{b:x}; its {} bytes are listed as a control frame",
                            payload.len()
                        ));
                        format!("{}, {} bytes", opcode.name(), payload.len())
                    }
                    Opcode::Other(b) => {
                        self.warn(format!(
                            "the frame at byte {pos} has the reserved control opcode 0x{b:x}"
                        ));
                        format!("{}, {} bytes", opcode.name(), payload.len())
                    }
                    _ => format!("{}, {} bytes", opcode.name(), payload.len()),
                };
                self.out.controls.push(Control {
                    opcode,
                    span,
                    data: payload,
                    detail,
                });
                Ok(())
            }
        }
    }

    /// `close 1000 "bye"`, with warnings for a payload that breaks §5.5.1.
    fn close_detail(&mut self, pos: usize, payload: &[u8]) -> String {
        let (code, reason) = match payload {
            [] => return "close (no status code)".to_string(),
            [_] => {
                self.warn(format!(
                    "the close frame at byte {pos} has a 1-byte payload; a status code takes 2"
                ));
                return "close (1-byte payload, no status code)".to_string();
            }
            [hi, lo, reason @ ..] => (u16::from_be_bytes([*hi, *lo]), reason),
        };
        let valid_code = matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999);
        if !valid_code {
            self.warn(format!(
                "the close frame at byte {pos} has status code {code}, which may not be sent"
            ));
        }
        let reason = match std::str::from_utf8(reason) {
            Ok(r) => r.to_string(),
            Err(_) => {
                self.warn(format!(
                    "the close frame at byte {pos} has a reason that is not UTF-8"
                ));
                String::from_utf8_lossy(reason).into_owned()
            }
        };
        if reason.is_empty() {
            format!("close {code}")
        } else {
            format!("close {code} {reason:?}")
        }
    }

    /// What a message may still inflate to: its own limit, or the direction's budget when that
    /// is lower (with (left, total) for the error message).
    fn inflate_bound(&self, compressed: usize) -> (usize, Overall) {
        let own = self.options.decompression_limit(compressed);
        if self.budget.left < own {
            // The input's budget is the decompressed limit, or the ratio to the input's size.
            let name = if self.budget.total >= self.options.max_decompressed {
                "decompressed"
            } else {
                "ratio"
            };
            (
                self.budget.left,
                Overall::Budget {
                    left: self.budget.left,
                    total: self.budget.total,
                    hint: Limits::hint(name),
                },
            )
        } else {
            (
                own,
                Overall::Own(self.options.decompression_hint(compressed)),
            )
        }
    }

    /// A message whose last frame was read.
    fn complete(&mut self, p: Pending) -> Result<(), String> {
        let start = p.frames.first().map_or(0, |s| s.start);
        let mut message = Message {
            opcode: p.opcode,
            data: Vec::new(),
            frames: p.frames,
            compressed: p.compressed,
            complete: true,
            problem: None,
        };
        if p.compressed {
            let (limit, overall) = self.inflate_bound(p.payload.len());
            let result = self
                .inflater
                .inflate(&p.payload, true, limit, overall, &mut message.data);
            self.budget.left = self.budget.left.saturating_sub(message.data.len());
            if let Err(e) = result {
                // This message ends here; the next starts a new DEFLATE stream (one that
                // refers back to this message's window is reported as corrupt in its turn).
                self.inflater.ended = true;
                message.complete = false;
                message.problem = Some(format!(
                    "the message at byte {start} ({} compressed bytes): {}; the {} bytes before are kept",
                    p.payload.len(),
                    e.message(),
                    message.data.len()
                ));
                self.out.messages.push(message);
                return Ok(());
            }
        } else {
            message.data = p.payload;
        }
        self.check_text(start, &message);
        self.out.messages.push(message);
        Ok(())
    }

    /// A message cut short: its data as far as it can be read, marked incomplete.
    fn push_partial(&mut self, p: Pending) {
        let start = p.frames.first().map_or(0, |s| s.start);
        let mut message = Message {
            opcode: p.opcode,
            data: Vec::new(),
            frames: p.frames,
            compressed: p.compressed,
            complete: false,
            problem: None,
        };
        if p.compressed {
            let (limit, overall) = self.inflate_bound(p.payload.len());
            let result =
                self.inflater
                    .inflate(&p.payload, false, limit, overall, &mut message.data);
            self.budget.left = self.budget.left.saturating_sub(message.data.len());
            if let Err(e) = result {
                self.warn(format!(
                    "the incomplete message at byte {start} was inflated only in part: {}",
                    e.message()
                ));
            }
            // The window now holds a message cut short; a later message referring to it is
            // read as well as it can be.
        } else {
            message.data = p.payload;
        }
        self.check_text(start, &message);
        self.out.messages.push(message);
    }

    /// A warning for a text message that is not UTF-8 (an incomplete message may end inside a
    /// character).
    fn check_text(&mut self, start: usize, m: &Message) {
        if m.opcode != Opcode::Text {
            return;
        }
        if let Err(e) = std::str::from_utf8(&m.data) {
            if m.complete || e.error_len().is_some() {
                self.warn(format!(
                    "the text message at byte {start} is not UTF-8 (a bad sequence at byte {} of its data)",
                    e.valid_up_to()
                ));
            }
        }
    }

    /// A frame whose payload runs past the end: the error, and the message it belongs to
    /// reported with the bytes there are.
    fn cut_frame(&mut self, pos: usize, h: &Header, left: usize) {
        self.out.error = Some((
            pos,
            format!(
                "the {} frame at byte {pos} claims {} bytes of payload, but only {left} are left (the capture is cut short, or these are not WebSocket frames)",
                h.opcode.name(),
                h.len
            ),
        ));
        let payload_start = pos.saturating_add(h.size);
        let available = self.bytes.get(payload_start..).unwrap_or(&[]);
        let span = Span::new(pos, self.bytes.len());
        match h.opcode {
            Opcode::Text | Opcode::Binary => {
                if let Some(p) = self.pending.take() {
                    self.push_partial(p);
                }
                self.pending = Some(Pending {
                    opcode: h.opcode,
                    payload: unmask(available, h.mask),
                    frames: vec![span],
                    compressed: h.rsv1,
                });
            }
            Opcode::Continuation => {
                if let Some(p) = self.pending.as_mut() {
                    p.payload.extend_from_slice(&unmask(available, h.mask));
                    p.frames.push(span);
                }
            }
            _ => {}
        }
    }

    fn finish(mut self) -> Parsed {
        if let Some(p) = self.pending.take() {
            if self.out.error.is_none() {
                let start = p.frames.first().map_or(0, |s| s.start);
                self.warn(format!(
                    "the bytes end inside the {} message at byte {start} (no frame with FIN set)",
                    p.opcode.name()
                ));
            }
            self.push_partial(p);
        }
        if self.warnings_left_out > 0 {
            let n = self.warnings_left_out;
            self.out
                .warnings
                .push(format!("{n} more warnings are not listed"));
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::{Compress, Compression, FlushCompress};

    fn opts() -> UnwrapOptions {
        UnwrapOptions::default()
    }

    /// A frame as a peer writes it: FIN, RSV1, opcode, the shortest length, the mask if any.
    fn frame(fin: bool, rsv1: bool, opcode: u8, mask: Option<[u8; 4]>, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![(u8::from(fin) << 7) | (u8::from(rsv1) << 6) | opcode];
        let m = if mask.is_some() { 0x80 } else { 0 };
        match payload.len() {
            n @ 0..=125 => out.push(m | n as u8),
            n @ 126..=0xffff => {
                out.push(m | 126);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                out.push(m | 127);
                out.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        if let Some(key) = mask {
            out.extend_from_slice(&key);
        }
        out.extend(unmask(payload, mask));
        out
    }

    /// A message compressed as a peer does (RFC 7692 §7.2.1): sync flush, tail stripped.
    fn compress(c: &mut Compress, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(data.len() + 64);
        let mut input = data;
        loop {
            let before = c.total_in();
            out.reserve(4096);
            c.compress_vec(input, &mut out, FlushCompress::Sync)
                .expect("compress");
            let used = (c.total_in() - before) as usize;
            input = &input[used..];
            if input.is_empty() && out.len() < out.capacity() {
                break;
            }
        }
        assert!(
            out.ends_with(&DEFLATE_TAIL),
            "a sync flush ends with the tail"
        );
        out.truncate(out.len() - 4);
        out
    }

    fn texts(p: &Parsed) -> Vec<String> {
        p.messages
            .iter()
            .map(|m| String::from_utf8_lossy(&m.data).into_owned())
            .collect()
    }

    #[test]
    fn rfc6455_single_frames() {
        // §5.7: a single-frame unmasked text message (server to client).
        let p = parse(
            &[0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f],
            false,
            None,
            &opts(),
        );
        assert_eq!(texts(&p), ["Hello"]);
        assert_eq!(p.messages[0].opcode, Opcode::Text);
        assert_eq!(p.messages[0].frames, [Span::new(0, 7)]);
        assert!(p.messages[0].complete && !p.messages[0].compressed);
        assert_eq!((p.error, p.warnings.len()), (None, 0));

        // §5.7: the same, masked (client to server).
        let masked = [
            0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58,
        ];
        let p = parse(&masked, true, None, &opts());
        assert_eq!(texts(&p), ["Hello"]);
        assert_eq!(p.messages[0].frames, [Span::new(0, 11)]);
        assert_eq!((p.error, p.warnings.len()), (None, 0));
    }

    #[test]
    fn rfc6455_fragments_and_controls() {
        // §5.7: a fragmented unmasked text message, with the unmasked Ping between the
        // fragments and the masked Pong's payload (sent the other way) not involved.
        let mut bytes = vec![0x01, 0x03, 0x48, 0x65, 0x6c];
        bytes.extend([0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]);
        bytes.extend([0x80, 0x02, 0x6c, 0x6f]);
        let p = parse(&bytes, false, None, &opts());
        assert_eq!(texts(&p), ["Hello"]);
        assert_eq!(p.messages[0].frames, [Span::new(0, 5), Span::new(12, 16)]);
        assert_eq!(p.controls.len(), 1);
        assert_eq!(p.controls[0].opcode, Opcode::Ping);
        assert_eq!(p.controls[0].span, Span::new(5, 12));
        assert_eq!(p.controls[0].data, b"Hello");
        assert_eq!(p.controls[0].detail, "ping, 5 bytes");
        assert_eq!((p.error, p.warnings.len()), (None, 0));

        // §5.7: the masked Pong, from the client.
        let pong = [
            0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58,
        ];
        let p = parse(&pong, true, None, &opts());
        assert_eq!(p.controls[0].opcode, Opcode::Pong);
        assert_eq!(p.controls[0].data, b"Hello");
        assert!(p.messages.is_empty() && p.warnings.is_empty());
    }

    #[test]
    fn rfc6455_long_lengths() {
        // §5.7: 256 bytes of binary in one unmasked frame (16-bit length).
        let data: Vec<u8> = (0..=255).collect();
        let mut bytes = vec![0x82, 0x7e, 0x01, 0x00];
        bytes.extend(&data);
        let p = parse(&bytes, false, None, &opts());
        assert_eq!(p.messages[0].data, data);
        assert_eq!(p.messages[0].opcode, Opcode::Binary);
        assert_eq!(p.messages[0].frames, [Span::new(0, 260)]);
        assert_eq!((p.error, p.warnings.len()), (None, 0));

        // §5.7: 64 KiB of binary in one unmasked frame (64-bit length).
        let data: Vec<u8> = (0..65536u32).map(|i| (i * 7) as u8).collect();
        let mut bytes = vec![0x82, 0x7f, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00];
        bytes.extend(&data);
        let p = parse(&bytes, false, None, &opts());
        assert_eq!(p.messages[0].data, data);
        assert_eq!(p.messages[0].frames, [Span::new(0, 65546)]);
        assert_eq!((p.error, p.warnings.len()), (None, 0));

        // The same, masked, as a client sends it.
        let bytes = frame(true, false, 2, Some([1, 2, 3, 4]), &data);
        assert_eq!(&bytes[..2], [0x82, 0xff]);
        let p = parse(&bytes, true, None, &opts());
        assert_eq!(p.messages[0].data, data);
        assert!(p.warnings.is_empty());

        // A 16-bit length where 7 bits would do: read, with a warning.
        let p = parse(&[0x82, 0x7e, 0x00, 0x01, 0xaa], false, None, &opts());
        assert_eq!(p.messages[0].data, [0xaa]);
        assert!(p.warnings[0].contains("more bytes than needed"), "{p:?}");
    }

    #[test]
    fn rfc7692_examples() {
        let deflate = negotiated_deflate("permessage-deflate").expect("agreed");
        // §7.2.3.1: "Hello" compressed, in one frame and in two.
        let one = [0xc1, 0x07, 0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00];
        let p = parse(&one, false, Some(&deflate), &opts());
        assert_eq!(texts(&p), ["Hello"]);
        assert!(p.messages[0].compressed && p.messages[0].complete);
        assert_eq!((p.error, p.warnings.len()), (None, 0));
        let two = [
            0x41, 0x03, 0xf2, 0x48, 0xcd, 0x80, 0x04, 0xc9, 0xc9, 0x07, 0x00,
        ];
        let p = parse(&two, false, Some(&deflate), &opts());
        assert_eq!(texts(&p), ["Hello"]);
        assert_eq!(p.messages[0].frames, [Span::new(0, 5), Span::new(5, 11)]);

        // §7.2.3.2: the same message twice with context takeover: the second frame is shorter,
        // and reads only with the first one's window.
        let mut twice = one.to_vec();
        twice.extend([0xc1, 0x05, 0xf2, 0x00, 0x11, 0x00, 0x00]);
        let p = parse(&twice, false, Some(&deflate), &opts());
        assert_eq!(texts(&p), ["Hello", "Hello"]);
        assert_eq!(p.messages[1].frames, [Span::new(9, 16)]);
        assert_eq!((p.error, p.warnings.len()), (None, 0));
        // With no context takeover agreed for the server, the window is empty again and the
        // second message refers back to nothing: the DEFLATE reader takes the empty window as
        // zeros, so this reads, wrongly, rather than failing.
        let reset = Deflate {
            server_no_context_takeover: true,
            ..deflate
        };
        let p = parse(&twice, false, Some(&reset), &opts());
        assert_eq!(texts(&p)[0], "Hello");
        assert_eq!(p.messages[1].data, b"H\0\0\0\0");
        // The client's setting does not reset the server's window.
        let client_only = Deflate {
            client_no_context_takeover: true,
            ..deflate
        };
        let p = parse(&twice, false, Some(&client_only), &opts());
        assert_eq!(texts(&p), ["Hello", "Hello"]);

        // §7.2.3.3: a stored block; §7.2.3.4: a block with BFINAL set; §7.2.3.5: two blocks.
        let stored = [
            0xc1, 0x0b, 0x00, 0x05, 0x00, 0xfa, 0xff, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x00,
        ];
        let bfinal = [0xc1, 0x08, 0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0x00];
        let blocks = [
            0xc1, 0x0d, 0xf2, 0x48, 0x05, 0x00, 0x00, 0x00, 0xff, 0xff, 0xca, 0xc9, 0xc9, 0x07,
            0x00,
        ];
        let mut all = stored.to_vec();
        all.extend(bfinal);
        all.extend(blocks);
        all.extend(one);
        let p = parse(&all, false, Some(&deflate), &opts());
        assert_eq!(texts(&p), ["Hello"; 4]);
        assert_eq!((p.error, p.warnings.len()), (None, 0));

        // Compressed without an agreement seen (the capture began after the handshake): read
        // all the same, with one warning.
        let p = parse(&twice, false, None, &opts());
        assert_eq!(texts(&p), ["Hello", "Hello"]);
        assert_eq!(p.warnings.len(), 1);
        assert!(p.warnings[0].contains("no permessage-deflate"));
    }

    #[test]
    fn compressed_by_a_real_peer() {
        // A client compressing with one window for the connection (context takeover), masking
        // each frame, and fragmenting the second message; the third is sent uncompressed.
        let first = br#"{"jsonrpc":"2.0","method":"subscribe","params":{"channel":"ticker","symbols":["BTC-USD","ETH-USD"]},"id":1}"#;
        let second = br#"{"jsonrpc":"2.0","method":"subscribe","params":{"channel":"ticker","symbols":["SOL-USD","ETH-USD"]},"id":2}"#;
        let big: Vec<u8> = (0..200_000u32)
            .flat_map(|i| format!("{{\"seq\":{i},\"px\":{}}},", i % 977).into_bytes())
            .collect();
        let mut c = Compress::new(Compression::default(), false);
        let key = [0xde, 0xad, 0xbe, 0xef];
        let mut bytes = Vec::new();
        let z1 = compress(&mut c, first);
        bytes.extend(frame(true, true, 1, Some(key), &z1));
        let z2 = compress(&mut c, second);
        assert!(z2.len() < z1.len() / 2, "the window carries over");
        let (a, b) = z2.split_at(5);
        bytes.extend(frame(false, true, 1, Some(key), a));
        bytes.extend(frame(true, false, 8 | 1, Some(key), b"")); // a ping between fragments
        bytes.extend(frame(true, false, 0, Some(key), b));
        bytes.extend(frame(true, false, 2, Some(key), b"\x00\x01"));
        let z3 = compress(&mut c, &big);
        bytes.extend(frame(true, true, 1, Some(key), &z3));
        let mut close = 1000u16.to_be_bytes().to_vec();
        close.extend(b"bye");
        bytes.extend(frame(true, false, 8, Some(key), &close));

        let deflate =
            negotiated_deflate("permessage-deflate; client_max_window_bits=15").expect("agreed");
        let p = parse(&bytes, true, Some(&deflate), &opts());
        assert_eq!((&p.error, p.warnings.len()), (&None, 0), "{p:?}");
        assert_eq!(p.messages.len(), 4);
        assert_eq!(p.messages[0].data, first);
        assert_eq!(p.messages[1].data, second);
        assert_eq!(p.messages[1].frames.len(), 2);
        assert!(p.messages[1].compressed);
        assert_eq!(p.messages[2].data, b"\x00\x01");
        assert!(!p.messages[2].compressed);
        assert_eq!(p.messages[3].data, big);
        assert_eq!(p.controls.len(), 2);
        assert_eq!(p.controls[0].detail, "ping, 0 bytes");
        assert_eq!(p.controls[1].detail, r#"close 1000 "bye""#);
        assert_eq!(p.controls[1].span.end, bytes.len());

        // The same with a window reset per message (client_no_context_takeover).
        let mut bytes = Vec::new();
        for text in [&first[..], &second[..]] {
            let mut c = Compress::new(Compression::best(), false);
            bytes.extend(frame(true, true, 1, Some(key), &compress(&mut c, text)));
        }
        let deflate =
            negotiated_deflate("permessage-deflate; client_no_context_takeover").expect("agreed");
        let p = parse(&bytes, true, Some(&deflate), &opts());
        assert_eq!(
            texts(&p),
            [
                String::from_utf8_lossy(first),
                String::from_utf8_lossy(second)
            ]
        );
        assert_eq!((p.error, p.warnings.len()), (None, 0));
    }

    #[test]
    fn truncated_frames() {
        // "Hello", then a binary frame claiming 10 bytes of which 3 were captured.
        let mut bytes = vec![0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f];
        bytes.extend([0x82, 0x0a, 1, 2, 3]);
        let p = parse(&bytes, false, None, &opts());
        let (offset, message) = p.error.clone().expect("cut short");
        assert_eq!(offset, 7);
        assert!(message.contains("claims 10 bytes") && message.contains("3 are left"));
        assert_eq!(texts(&p)[0], "Hello");
        assert!(p.messages[0].complete);
        assert_eq!(p.messages[1].data, [1, 2, 3]);
        assert_eq!(p.messages[1].frames, [Span::new(7, 12)]);
        assert!(!p.messages[1].complete);

        // A fragmented compressed message cut inside its second frame: what there is, inflated.
        let mut c = Compress::new(Compression::default(), false);
        let text = b"the quick brown fox jumps over the lazy dog ".repeat(20);
        let z = compress(&mut c, &text);
        let (a, b) = z.split_at(z.len() / 2);
        let mut bytes = frame(false, true, 1, None, a);
        let second = frame(true, false, 0, None, b);
        bytes.extend(&second[..second.len() - 3]);
        let p = parse(&bytes, false, Some(&Deflate::default()), &opts());
        assert!(p.error.is_some());
        let m = &p.messages[0];
        assert!(!m.complete && m.compressed);
        assert_eq!(m.frames.len(), 2);
        assert!(!m.data.is_empty() && text.starts_with(&m.data), "{m:?}");

        // A header cut short (16-bit length missing a byte; mask key missing).
        let p = parse(&[0x82, 0x7e, 0x01], false, None, &opts());
        assert_eq!(p.error.as_ref().map(|e| e.0), Some(0));
        assert!(p.messages.is_empty());
        let p = parse(
            &[0x81, 0x05, b'H', b'e', b'l', b'l', b'o', 0x81, 0x85, 1, 2],
            true,
            None,
            &opts(),
        );
        assert_eq!(p.error.as_ref().map(|e| e.0), Some(7));
        assert_eq!(texts(&p), ["Hello"]);

        // A 64-bit length with its top bit set: an error, no allocation.
        let p = parse(
            &[0x82, 0x7f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0],
            false,
            None,
            &opts(),
        );
        assert_eq!(p.error.as_ref().map(|e| e.0), Some(0));

        // The bytes end between the fragments of a message: no error, the message incomplete.
        let p = parse(&[0x01, 0x03, 0x48, 0x65, 0x6c], false, None, &opts());
        assert_eq!(p.error, None);
        assert_eq!(texts(&p), ["Hel"]);
        assert!(!p.messages[0].complete);
        assert!(p.warnings[0].contains("end inside"), "{p:?}");
    }

    #[test]
    fn inflating_past_the_limits() {
        let mut c = Compress::new(Compression::default(), false);
        let zeros = vec![0u8; 5000];
        let z = compress(&mut c, &zeros);
        // The bomb, then an uncompressed message: the bomb ends at the limit, the next is read.
        let mut bytes = frame(true, true, 2, None, &z);
        bytes.extend(frame(true, false, 1, None, b"after"));
        let options = UnwrapOptions {
            max_decompressed: 4000,
            ..UnwrapOptions::default()
        };
        let p = parse(&bytes, false, Some(&Deflate::default()), &options);
        assert!(p.error.is_none(), "{:?}", p.error);
        let problem = p.messages[0].problem.as_deref().expect("past the limit");
        assert!(problem.contains("at byte 0"), "{problem}");
        assert!(problem.contains("limit of 4000 bytes"), "{problem}");
        assert!(problem.contains("`--limit decompressed=N`"), "{problem}");
        assert!(!p.messages[0].complete);
        assert!(p.messages[0].data.len() <= 4000);
        assert_eq!(p.messages[1].data, b"after");

        // Two messages of 3000 bytes each: the direction's budget (4000) runs out in the second.
        let mut c = Compress::new(Compression::default(), false);
        let mut bytes = frame(true, true, 2, None, &compress(&mut c, &[1u8; 3000]));
        let second_at = bytes.len();
        bytes.extend(frame(true, true, 2, None, &compress(&mut c, &[2u8; 3000])));
        let p = parse(&bytes, false, Some(&Deflate::default()), &options);
        let problem = p.messages[1]
            .problem
            .as_deref()
            .expect("past the overall limit");
        assert!(
            problem.contains(&format!("at byte {second_at}")),
            "{problem}"
        );
        assert!(problem.contains("overall limit of 4000"), "{problem}");
        assert_eq!(p.messages[0].data, [1u8; 3000]);
        assert!(p.messages[0].complete && !p.messages[1].complete);

        // Within the limit by ratio: 1 MiB floor, then 1100 bytes per compressed byte.
        let options = UnwrapOptions {
            ratio_floor: 1000,
            max_ratio: 10,
            ..UnwrapOptions::default()
        };
        let mut c = Compress::new(Compression::default(), false);
        let bytes = frame(true, true, 2, None, &compress(&mut c, &zeros));
        let p = parse(&bytes, false, Some(&Deflate::default()), &options);
        let problem = p.messages[0].problem.as_deref().expect("ratio");
        assert!(problem.contains("limit of 1000 bytes"), "{problem}");
        assert!(problem.contains("`--limit ratio=N`"), "{problem}");

        // Corrupt DEFLATE data: a problem of that message, no panic, the next message read.
        let mut bytes = vec![0xc1, 0x02, 0xff, 0xff];
        bytes.extend(frame(true, false, 1, None, b"after"));
        let p = parse(&bytes, false, Some(&Deflate::default()), &opts());
        assert!(p.messages[0]
            .problem
            .as_deref()
            .is_some_and(|m| m.contains("corrupt")));
        assert_eq!(p.messages[1].data, b"after");
    }

    #[test]
    fn rule_violations_are_warnings() {
        // An unmasked frame from a client, twice: one warning; the data is read.
        let mut bytes = vec![0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f];
        bytes.extend([0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]);
        let p = parse(&bytes, true, None, &opts());
        assert_eq!(texts(&p), ["Hello", "Hello"]);
        assert_eq!(p.error, None);
        assert_eq!(p.warnings.len(), 1);
        assert!(p.warnings[0].contains("not masked"), "{p:?}");
        // A masked frame from a server.
        let masked = [
            0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58,
        ];
        let p = parse(&masked, false, None, &opts());
        assert_eq!(texts(&p), ["Hello"]);
        assert!(p.warnings[0].contains("is masked"), "{p:?}");

        // Text that is not UTF-8; a continuation with no message; a fragmented ping over 125
        // bytes; a reserved opcode; data after Close; RSV2.
        let mut bytes = frame(true, false, 1, None, b"\xff\xfe");
        bytes.extend(frame(true, false, 0, None, b"lost"));
        bytes.extend(frame(false, false, 9, None, &[0u8; 200]));
        bytes.extend(frame(true, false, 3, None, b"x"));
        bytes.extend(frame(true, false, 8, None, &[0x03, 0xe9]));
        bytes.extend(frame(true, false, 2, None, b"late"));
        bytes.extend([0xa2, 0x00]);
        let p = parse(&bytes, false, None, &opts());
        assert_eq!(p.error, None);
        let all = p.warnings.join("\n");
        for expected in [
            "not UTF-8",
            "continues no message",
            "is fragmented",
            "more than the 125",
            "reserved data opcode 0x3",
            "after the Close frame",
            "RSV2 or RSV3",
        ] {
            assert!(all.contains(expected), "{expected}: {all}");
        }
        assert_eq!(p.messages.len(), 3);
        let details: Vec<_> = p.controls.iter().map(|c| c.detail.as_str()).collect();
        assert_eq!(
            details,
            ["ping, 200 bytes", "opcode 0x3, 1 bytes", "close 1001"]
        );

        // A new message before the last one's final frame: the first is kept, incomplete.
        let mut bytes = frame(false, false, 1, None, b"Hel");
        bytes.extend(frame(true, false, 1, None, b"World"));
        let p = parse(&bytes, false, None, &opts());
        assert_eq!(texts(&p), ["Hel", "World"]);
        assert!(!p.messages[0].complete && p.messages[1].complete);
        assert_eq!(p.warnings.len(), 1);

        // Many violations: the list is bounded.
        let bytes: Vec<u8> = (0..500)
            .flat_map(|_| frame(true, false, 0, None, b""))
            .collect();
        let p = parse(&bytes, false, None, &opts());
        assert_eq!(p.warnings.len(), MAX_WARNINGS + 1);
        assert!(p.warnings[MAX_WARNINGS].starts_with("400 more warnings"));
    }

    #[test]
    fn frame_count_is_bounded() {
        // Continuation frames that continue nothing: read and dropped, so only the count grows.
        let bytes = [0x80, 0x00].repeat(MAX_FRAMES + 1);
        let p = parse(&bytes, false, None, &opts());
        let (offset, message) = p.error.expect("too many frames");
        assert_eq!(offset, 2 * MAX_FRAMES);
        assert!(
            message.contains("stopped after 1000000 frames"),
            "{message}"
        );
        assert!(p.messages.is_empty() && p.controls.is_empty());
        let p = parse(&bytes[2..], false, None, &opts());
        assert_eq!(p.error, None);
    }

    #[test]
    fn close_frames() {
        let cases: [(&[u8], &str); 5] = [
            (b"", "close (no status code)"),
            (b"\x03\xe8", "close 1000"),
            (b"\x03\xe8bye", r#"close 1000 "bye""#),
            (b"\x0f\xa0going \"away\"", r#"close 4000 "going \"away\"""#),
            (b"\x03", "close (1-byte payload, no status code)"),
        ];
        for (payload, detail) in cases {
            let p = parse(&frame(true, false, 8, None, payload), false, None, &opts());
            assert_eq!(p.controls[0].detail, detail);
            assert_eq!(p.controls[0].data, payload);
        }
        let p = parse(
            &frame(true, false, 8, None, b"\x03\xedx"),
            false,
            None,
            &opts(),
        );
        assert!(p.warnings[0].contains("status code 1005"), "{p:?}");
    }

    #[test]
    fn negotiation() {
        let d = negotiated_deflate("permessage-deflate; client_max_window_bits").expect("agreed");
        assert_eq!(d, Deflate::default());
        let d = negotiated_deflate(
            "permessage-deflate; server_no_context_takeover; client_no_context_takeover",
        )
        .expect("agreed");
        assert!(d.server_no_context_takeover && d.client_no_context_takeover);
        assert_eq!(
            (d.client_max_window_bits, d.server_max_window_bits),
            (15, 15)
        );
        let d = negotiated_deflate(
            "Permessage-Deflate;server_max_window_bits=\"10\" ;client_max_window_bits=9",
        )
        .expect("agreed");
        assert_eq!(
            (d.client_max_window_bits, d.server_max_window_bits),
            (9, 10)
        );
        assert!(!d.server_no_context_takeover);
        // Another extension first; an invalid value; several offers, the first taken.
        let d = negotiated_deflate("x-foo; a=\"b,c\", permessage-deflate; server_max_window_bits=99, permessage-deflate; client_no_context_takeover")
            .expect("agreed");
        assert_eq!(d.server_max_window_bits, 15);
        assert!(!d.client_no_context_takeover);
        assert_eq!(negotiated_deflate(""), None);
        assert_eq!(negotiated_deflate("x-webkit-deflate-frame"), None);
        assert_eq!(negotiated_deflate("permessage-deflate-x"), None);
    }

    /// What `tests/fixtures/capture/websocket/record.py` has the client send.
    fn recorded_messages() -> Vec<(Opcode, Vec<u8>)> {
        let tick =
            br#"{"type": "tick", "symbol": "BTC-USD", "bid": 64000.5, "ask": 64001.0, "seq": 1}"#;
        let big: String = (0..3000)
            .map(|i| format!("{{\"seq\": {i}, \"px\": {}}}\n", i % 977))
            .collect();
        let binary: Vec<u8> = (0..1024).map(|i| (i % 256) as u8).collect();
        vec![
            (Opcode::Text, tick.to_vec()),
            (Opcode::Text, tick.to_vec()),
            (Opcode::Binary, binary),
            (Opcode::Text, big.into_bytes()),
            (Opcode::Text, "h\u{e9}llo \u{2603}".as_bytes().to_vec()),
        ]
    }

    #[test]
    fn recorded_from_a_real_client() {
        let cases: [(&[u8], &str, bool); 2] = [
            (
                include_bytes!("../../tests/fixtures/capture/websocket/takeover.bin"),
                "permessage-deflate",
                true,
            ),
            (
                include_bytes!("../../tests/fixtures/capture/websocket/no-takeover.bin"),
                "permessage-deflate; client_no_context_takeover",
                false,
            ),
        ];
        for (bytes, extensions, takeover) in cases {
            let deflate = negotiated_deflate(extensions).expect("agreed");
            let p = parse(bytes, true, Some(&deflate), &opts());
            assert_eq!(
                (&p.error, &p.warnings),
                (&None, &Vec::new()),
                "{extensions}"
            );
            let got: Vec<_> = p
                .messages
                .iter()
                .map(|m| (m.opcode, m.data.clone()))
                .collect();
            assert_eq!(got, recorded_messages(), "{extensions}");
            assert!(p.messages.iter().all(|m| m.complete && m.compressed));
            // Three fragments, then a frame with FIN set holding what the compressor flushed
            // last (how `websockets` ends a message sent in parts).
            assert_eq!(p.messages[3].frames.len(), 4);
            // The same tick twice: shorter the second time only when the window carries over.
            let sizes: Vec<usize> = p.messages[..2].iter().map(|m| m.frames[0].len()).collect();
            assert_eq!(sizes[1] < sizes[0], takeover, "{extensions}: {sizes:?}");
            let details: Vec<_> = p.controls.iter().map(|c| c.detail.as_str()).collect();
            assert_eq!(details, ["ping, 13 bytes", r#"close 1000 "bye""#]);
            assert_eq!(p.controls[0].data, b"are you there");
            assert_eq!(p.controls[1].span.end, bytes.len());
            // Read with context takeover regardless, the no-takeover bytes still read (each
            // message is a fresh stream that never refers back).
            if !takeover {
                let p = parse(bytes, true, Some(&Deflate::default()), &opts());
                assert_eq!(p.error, None);
            }
        }
    }

    #[test]
    fn every_prefix_and_garbage() {
        let mut c = Compress::new(Compression::default(), false);
        let key = Some([9, 8, 7, 6]);
        let mut bytes = frame(false, true, 1, key, &compress(&mut c, b"{\"a\":[1,2,3]}"));
        bytes.extend(frame(true, false, 9, key, b"p"));
        bytes.extend(frame(true, false, 0, key, b""));
        bytes.extend(frame(true, false, 2, key, &[7u8; 300]));
        bytes.extend(frame(true, false, 8, key, b"\x03\xe8ok"));
        let deflate = Deflate::default();
        let whole = parse(&bytes, true, Some(&deflate), &opts());
        assert_eq!(
            (&whole.error, whole.warnings.len()),
            (&None, 0),
            "{whole:?}"
        );
        for n in 0..bytes.len() {
            let p = parse(&bytes[..n], true, Some(&deflate), &opts());
            if let Some((offset, _)) = p.error {
                assert!(offset < n);
            }
            for m in &p.messages {
                assert!(m.frames.iter().all(|s| s.end <= n));
            }
        }
        // Garbage, each way, with and without deflate: no panic, spans inside the input.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for round in 0..2000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 64) as usize;
            let junk: Vec<u8> = (0..len)
                .map(|i| (seed.rotate_left(i as u32 * 8) & 0xff) as u8)
                .collect();
            let d = (round % 2 == 0).then_some(&deflate);
            let p = parse(&junk, round % 3 == 0, d, &opts());
            for m in &p.messages {
                assert!(m.frames.iter().all(|s| s.start <= s.end && s.end <= len));
            }
        }
    }
}
