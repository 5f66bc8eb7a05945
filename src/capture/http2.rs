//! HTTP/2 (RFC 9113) inside a reassembled TCP connection: frames, HPACK header blocks and
//! streams, down to each request's and response's body.
//!
//! A capture holds both directions of a connection; each is a run of frames. The client's starts
//! with the connection preface (`PRI * HTTP/2.0…`, prior-knowledge h2c, which is how gRPC
//! speaks without TLS) unless the capture began mid-connection, or the connection was upgraded
//! from HTTP/1.1 (`Upgrade: h2c`), in which case the caller starts after the `101` response.
//! [`parse_connection`] walks both directions, decodes every header block with that direction's
//! HPACK decoder (the dynamic table lives as long as the connection, per direction, so blocks are
//! decoded in order), and gathers per stream and direction the headers (a `1xx` block is noted
//! as informational), the DATA frames' bytes (padding removed) and the trailers. Control frames
//! (SETTINGS, PING, WINDOW_UPDATE, GOAWAY, PRIORITY) are counted and named in the connection's
//! notes; RST_STREAM marks its stream; PUSH_PROMISE opens the promised stream with the request
//! headers it carries.
//!
//! What it does not do: HTTP semantics beyond framing (the caller undoes `content-encoding` and
//! splits gRPC bodies), flow control (it reads what was sent), or HTTP/3. A header block that
//! cannot be decoded (a capture that starts mid-connection leaves the HPACK table unknown) makes
//! that direction's later headers unknown: the DATA frames are still given, with a note.
//!
//! Bounds: a header list is decoded field by field and its fields are kept only within
//! [`Limits::max_header_list`] (name + value + 32 per field, as `SETTINGS_MAX_HEADER_LIST_SIZE`
//! counts them, so table references count at their decoded size) and [`Limits::max_headers`];
//! the fields kept draw on the input's decompression budget, as decompressed bodies do. Past a
//! limit the block is still decoded to its end, so the HPACK table stays in step and the streams
//! after it read. The dynamic table may not grow past the header-list limit either. Each
//! direction reads at most [`Limits::max_frames`] frames; a message lists its first
//! [`KEPT_FRAMES`] frames and counts the rest, so memory stays proportional to the messages, not
//! to the frames. Each warning names its limit and how to raise it.
//!
//! Conventions: nothing here panics on any input; a frame cut short at the end of the capture
//! ends its direction with a note, the bytes before it kept. Offsets are into each direction's
//! own bytes.

use std::collections::HashMap;
use std::fmt;

use super::payload::{Budget, UnwrapOptions};
use crate::limits::Limits;
use crate::model::Span;

/// The client connection preface (RFC 9113 §3.4).
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Most bytes of one header block (HEADERS or PUSH_PROMISE with its CONTINUATIONs) when
/// [`Limits::max_header_list`] is lower: a block's wire size can exceed its decoded size (Huffman
/// codes of up to 30 bits per byte), so the raw block is held to the larger of the two.
const MAX_HEADER_BLOCK: usize = 1 << 20;
/// Frames listed per message; the rest are counted ([`Message::frame_count`]).
pub const KEPT_FRAMES: usize = 1000;
/// Warnings listed per connection; the rest are counted in one last warning.
const MAX_WARNINGS: usize = 100;
/// Most streams of one connection; frames of further streams are counted, not kept.
const MAX_STREAMS: usize = 100_000;

/// Whether `bytes` start with the client connection preface.
pub fn has_preface(bytes: &[u8]) -> bool {
    bytes.starts_with(PREFACE)
}

/// Whether `bytes` read as HTTP/2 frames from their first byte (a capture that began
/// mid-connection): the first frames have known types, sizes that fit, and stream ids where
/// their types need them, and at least two frames or one that ends exactly at the end.
pub fn looks_like_frames(bytes: &[u8]) -> bool {
    let mut pos = 0usize;
    let mut seen = 0usize;
    while seen < 4 {
        let Some(header) = FrameHeader::read(bytes, pos) else {
            break;
        };
        let fits_type = match header.kind {
            TYPE_DATA | TYPE_HEADERS | TYPE_PRIORITY | TYPE_RST_STREAM | TYPE_PUSH_PROMISE
            | TYPE_CONTINUATION => header.stream != 0,
            TYPE_SETTINGS | TYPE_PING | TYPE_GOAWAY => header.stream == 0,
            TYPE_WINDOW_UPDATE => true,
            _ => false,
        };
        let fits_size = match header.kind {
            TYPE_SETTINGS => header.length % 6 == 0,
            TYPE_PING => header.length == 8,
            TYPE_WINDOW_UPDATE | TYPE_RST_STREAM => header.length == 4,
            TYPE_PRIORITY => header.length == 5,
            _ => header.length <= 1 << 24,
        };
        if !fits_type || !fits_size || header.reserved {
            return false;
        }
        let end = pos + 9 + header.length;
        if end > bytes.len() {
            // A frame cut by the end of the capture still counts once others came before it.
            return seen >= 1;
        }
        pos = end;
        seen += 1;
        if pos == bytes.len() {
            return true;
        }
    }
    seen >= 2
}

const TYPE_DATA: u8 = 0x0;
const TYPE_HEADERS: u8 = 0x1;
const TYPE_PRIORITY: u8 = 0x2;
const TYPE_RST_STREAM: u8 = 0x3;
const TYPE_SETTINGS: u8 = 0x4;
const TYPE_PUSH_PROMISE: u8 = 0x5;
const TYPE_PING: u8 = 0x6;
const TYPE_GOAWAY: u8 = 0x7;
const TYPE_WINDOW_UPDATE: u8 = 0x8;
const TYPE_CONTINUATION: u8 = 0x9;

const FLAG_END_STREAM: u8 = 0x1;
const FLAG_END_HEADERS: u8 = 0x4;
const FLAG_PADDED: u8 = 0x8;
const FLAG_PRIORITY: u8 = 0x20;

/// A frame type's name, as RFC 9113 writes it.
pub fn frame_type_name(kind: u8) -> String {
    match kind {
        TYPE_DATA => "DATA".into(),
        TYPE_HEADERS => "HEADERS".into(),
        TYPE_PRIORITY => "PRIORITY".into(),
        TYPE_RST_STREAM => "RST_STREAM".into(),
        TYPE_SETTINGS => "SETTINGS".into(),
        TYPE_PUSH_PROMISE => "PUSH_PROMISE".into(),
        TYPE_PING => "PING".into(),
        TYPE_GOAWAY => "GOAWAY".into(),
        TYPE_WINDOW_UPDATE => "WINDOW_UPDATE".into(),
        TYPE_CONTINUATION => "CONTINUATION".into(),
        other => format!("type 0x{other:02x}"),
    }
}

/// An error code's name (RFC 9113 §7).
fn error_code_name(code: u32) -> String {
    let name = match code {
        0x0 => "NO_ERROR",
        0x1 => "PROTOCOL_ERROR",
        0x2 => "INTERNAL_ERROR",
        0x3 => "FLOW_CONTROL_ERROR",
        0x4 => "SETTINGS_TIMEOUT",
        0x5 => "STREAM_CLOSED",
        0x6 => "FRAME_SIZE_ERROR",
        0x7 => "REFUSED_STREAM",
        0x8 => "CANCEL",
        0x9 => "COMPRESSION_ERROR",
        0xa => "CONNECT_ERROR",
        0xb => "ENHANCE_YOUR_CALM",
        0xc => "INADEQUATE_SECURITY",
        0xd => "HTTP_1_1_REQUIRED",
        _ => return format!("error 0x{code:x}"),
    };
    name.to_string()
}

#[derive(Debug, Clone, Copy)]
struct FrameHeader {
    length: usize,
    kind: u8,
    flags: u8,
    stream: u32,
    reserved: bool,
}

impl FrameHeader {
    fn read(bytes: &[u8], pos: usize) -> Option<FrameHeader> {
        let h = bytes.get(pos..pos.checked_add(9)?)?;
        let (&[l0, l1, l2, kind, flags], rest) = h.split_first_chunk::<5>()?;
        let id = u32::from_be_bytes(rest.try_into().ok()?);
        Some(FrameHeader {
            length: usize::from(l0) << 16 | usize::from(l1) << 8 | usize::from(l2),
            kind,
            flags,
            stream: id & 0x7fff_ffff,
            reserved: id & 0x8000_0000 != 0,
        })
    }
}

/// Which side sent a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The side that opened the connection (sent the preface).
    Client,
    /// The other side.
    Server,
}

impl Side {
    fn index(self) -> usize {
        match self {
            Side::Client => 0,
            Side::Server => 1,
        }
    }
}

/// One frame of a stream, as the frame list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameRef {
    /// The frame type's name.
    pub kind: String,
    /// The whole frame (header included) in its direction's bytes.
    pub span: Span,
    /// Payload bytes the frame carried for the message (DATA: without padding).
    pub data: usize,
    /// Its flags in words (`END_STREAM`, `END_HEADERS`, `PADDED`), empty for none.
    pub flags: String,
}

/// One direction of one stream: a request (client) or a response (server).
#[derive(Debug, Clone, Default)]
pub struct Message {
    /// The stream id.
    pub stream: u32,
    /// The side that sent it.
    pub side: Option<Side>,
    /// The header fields (pseudo-headers first, as sent), once the block was decoded.
    pub headers: Vec<(String, String)>,
    /// Interim (`1xx`) responses' header fields, each block as one line.
    pub informational: Vec<String>,
    /// Trailer fields (a header block after the DATA frames).
    pub trailers: Vec<(String, String)>,
    /// The DATA frames' bytes, joined, padding removed.
    pub body: Vec<u8>,
    /// Where each part of `body` lies in its direction's bytes, in order (adjacent parts
    /// joined).
    pub body_spans: Vec<Span>,
    /// The frames, in order: the first [`KEPT_FRAMES`] of them.
    pub frames: Vec<FrameRef>,
    /// How many frames the message had, listed or not.
    pub frame_count: usize,
    /// How many of them were DATA frames.
    pub data_frames: usize,
    /// From the first to the last frame, in the direction's bytes.
    pub span: Span,
    /// Whether END_STREAM was seen.
    pub ended: bool,
    /// RST_STREAM's error code, from either side.
    pub reset: Option<String>,
    /// Whether the headers could not be decoded (HPACK state unknown or broken).
    pub headers_unknown: bool,
    /// Opened by a PUSH_PROMISE (the server's promise carried these request headers).
    pub pushed: bool,
    /// Plain notes: a header block that failed, a frame cut short.
    pub notes: Vec<String>,
    /// Order of the message's first frame across the connection (for listing in order).
    pub order: usize,
}

impl Message {
    /// The value of header `name` (lowercase, as HTTP/2 sends names).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The value of trailer `name`.
    pub fn trailer(&self, name: &str) -> Option<&str> {
        self.trailers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Counts `frame` (spanning `span`), and lists it while fewer than [`KEPT_FRAMES`] are.
    fn add_frame(&mut self, frame: FrameRef) {
        if self.frame_count == 0 {
            self.span = frame.span;
        } else {
            self.span = Span::new(
                self.span.start.min(frame.span.start),
                self.span.end.max(frame.span.end),
            );
        }
        self.frame_count += 1;
        if frame.kind == "DATA" {
            self.data_frames += 1;
        }
        if self.frames.len() < KEPT_FRAMES {
            self.frames.push(frame);
        }
    }
}

/// A fault found on a connection, with where it struck when that is one place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The direction and the byte of that direction (a frame's first byte).
    pub at: Option<(Side, usize)>,
    /// What happened, in words (the byte offset included).
    pub text: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// What a connection held.
#[derive(Debug, Clone, Default)]
pub struct Connection {
    /// Every stream's request and response, ordered by stream, request first.
    pub messages: Vec<Message>,
    /// Control frames and connection-level events, in words, per direction
    /// (`[client, server]`).
    pub control: [Vec<String>; 2],
    /// Faults: a frame cut short, a frame too large, a limit reached (the first
    /// 100; the last one counts the rest).
    pub warnings: Vec<Warning>,
    /// Whether the client's bytes began with the preface.
    pub preface: bool,
}

/// A header block being gathered (HEADERS or PUSH_PROMISE, then CONTINUATIONs).
struct Pending {
    stream: u32,
    /// For PUSH_PROMISE: the promised stream.
    promised: Option<u32>,
    end_stream: bool,
    /// Where its first frame starts.
    at: usize,
    block: Vec<u8>,
}

/// Parser state of one connection.
struct State<'a> {
    messages: Vec<Message>,
    index: HashMap<(u32, Side), usize>,
    order: usize,
    dropped_streams: usize,
    options: &'a UnwrapOptions,
    budget: &'a mut Budget,
    warnings: Vec<Warning>,
    warnings_left_out: usize,
}

impl State<'_> {
    fn warn(&mut self, at: Option<(Side, usize)>, text: String) {
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(Warning { at, text });
        } else {
            self.warnings_left_out += 1;
        }
    }

    /// The message of `stream` from `side`, if a frame has opened it.
    fn existing_message(&mut self, stream: u32, side: Side) -> Option<&mut Message> {
        let i = *self.index.get(&(stream, side))?;
        self.messages.get_mut(i)
    }

    fn message(&mut self, stream: u32, side: Side) -> Option<&mut Message> {
        if let Some(&i) = self.index.get(&(stream, side)) {
            return self.messages.get_mut(i);
        }
        if self.index.len() >= MAX_STREAMS * 2 {
            self.dropped_streams += 1;
            return None;
        }
        self.order += 1;
        self.index.insert((stream, side), self.messages.len());
        self.messages.push(Message {
            stream,
            side: Some(side),
            order: self.order,
            ..Message::default()
        });
        self.messages.last_mut()
    }
}

/// Reads both directions of an HTTP/2 connection: the client's bytes from `client_start` (after
/// the preface, if it is there) and the server's from `server_start`, within the default
/// [`Limits`].
pub fn parse_connection(
    client: &[u8],
    client_start: usize,
    server: &[u8],
    server_start: usize,
) -> Connection {
    let options = UnwrapOptions::default();
    let mut budget = Budget::unlimited();
    parse_connection_within(
        client,
        client_start,
        server,
        server_start,
        &options,
        &mut budget,
    )
}

/// [`parse_connection`] within `options`' limits, the header fields kept drawing on `budget`.
pub(crate) fn parse_connection_within(
    client: &[u8],
    client_start: usize,
    server: &[u8],
    server_start: usize,
    options: &UnwrapOptions,
    budget: &mut Budget,
) -> Connection {
    let mut conn = Connection::default();
    let mut state = State {
        messages: Vec::new(),
        index: HashMap::new(),
        order: 0,
        dropped_streams: 0,
        options,
        budget,
        warnings: Vec::new(),
        warnings_left_out: 0,
    };
    let mut start = client_start;
    if client.get(client_start..).is_some_and(has_preface) {
        conn.preface = true;
        start += PREFACE.len();
    }
    // Each direction in turn: a stream's request is always read before its response, and the
    // order of first frames within a direction is the order streams were opened.
    direction(client, start, Side::Client, &mut state, &mut conn);
    direction(server, server_start, Side::Server, &mut state, &mut conn);
    if state.dropped_streams > 0 {
        let dropped = state.dropped_streams;
        state.warn(
            None,
            format!(
                "HTTP/2: more than {MAX_STREAMS} streams; frames of {dropped} later streams are not kept"
            ),
        );
    }
    conn.warnings = std::mem::take(&mut state.warnings);
    if state.warnings_left_out > 0 {
        conn.warnings.push(Warning {
            at: None,
            text: format!(
                "HTTP/2: {} more warnings are not listed",
                state.warnings_left_out
            ),
        });
    }
    let mut messages = state.messages;
    // By stream id (the order streams were opened), the request before the response.
    messages.sort_by_key(|m| (m.stream, m.side.map_or(2, Side::index)));
    conn.messages = messages;
    conn
}

fn flag_words(kind: u8, flags: u8) -> String {
    let mut words = Vec::new();
    match kind {
        TYPE_DATA | TYPE_HEADERS if flags & FLAG_END_STREAM != 0 => words.push("END_STREAM"),
        TYPE_SETTINGS | TYPE_PING if flags & 0x1 != 0 => words.push("ACK"),
        _ => {}
    }
    if matches!(kind, TYPE_HEADERS | TYPE_PUSH_PROMISE | TYPE_CONTINUATION)
        && flags & FLAG_END_HEADERS != 0
    {
        words.push("END_HEADERS");
    }
    if matches!(kind, TYPE_DATA | TYPE_HEADERS | TYPE_PUSH_PROMISE) && flags & FLAG_PADDED != 0 {
        words.push("PADDED");
    }
    if kind == TYPE_HEADERS && flags & FLAG_PRIORITY != 0 {
        words.push("PRIORITY");
    }
    words.join(" ")
}

/// The frame's payload without padding (and, for HEADERS with PRIORITY, without the priority
/// fields), or why it cannot be.
fn unpadded(payload: &[u8], kind: u8, flags: u8) -> Result<&[u8], String> {
    let mut body = payload;
    let mut pad = 0usize;
    if flags & FLAG_PADDED != 0 && matches!(kind, TYPE_DATA | TYPE_HEADERS | TYPE_PUSH_PROMISE) {
        let (&n, rest) = body
            .split_first()
            .ok_or_else(|| "a PADDED frame has no pad length".to_string())?;
        pad = usize::from(n);
        body = rest;
    }
    if kind == TYPE_HEADERS && flags & FLAG_PRIORITY != 0 {
        body = body
            .get(5..)
            .ok_or_else(|| "a HEADERS frame with PRIORITY is shorter than 5 bytes".to_string())?;
    }
    let keep = body
        .len()
        .checked_sub(pad)
        .ok_or_else(|| format!("padding of {pad} bytes is longer than the frame's data"))?;
    Ok(body.get(..keep).unwrap_or(&[]))
}

/// Reads one direction's frames from `start`, filing what they carry into `state` and the
/// direction's control lines into `conn`.
fn direction(bytes: &[u8], start: usize, side: Side, state: &mut State, conn: &mut Connection) {
    let mut reader = DirectionReader::new(bytes, side, state.options);
    let mut pos = start;
    while pos < bytes.len() {
        let Some(frame) = reader.next_frame(pos, state) else {
            break;
        };
        pos = frame.span.end;
        reader.close_unfinished_block(&frame, state);
        reader.handle(&frame, state, conn);
    }
    reader.finish(state, conn);
}

/// One whole frame of a direction, as the frame loop hands it on.
struct Frame<'b> {
    /// Its 9-byte header.
    header: FrameHeader,
    /// Its payload (padding still in).
    payload: &'b [u8],
    /// The whole frame, header included.
    span: Span,
    /// Its type's name.
    kind_name: String,
}

impl Frame<'_> {
    /// The frame as a message's frame list shows it, carrying `data` payload bytes.
    fn frame_ref(&self, data: usize) -> FrameRef {
        FrameRef {
            kind: self.kind_name.clone(),
            span: self.span,
            data,
            flags: flag_words(self.header.kind, self.header.flags),
        }
    }
}

/// The reading of one direction: its HPACK decoder, the header block being gathered, and the
/// frame counts its summary line gives.
struct DirectionReader<'b> {
    /// The direction's bytes.
    bytes: &'b [u8],
    /// Who sent them.
    side: Side,
    /// The side in words, as warnings name it.
    side_name: &'static str,
    /// The direction's HPACK decoder (its dynamic table lasts the connection).
    decoder: loona_hpack::Decoder<'static>,
    /// Why the headers from here on are not known, once a block failed.
    hpack_broken: Option<String>,
    /// A header block waiting for its CONTINUATIONs.
    pending: Option<Pending>,
    /// Most bytes of one raw header block.
    max_block: usize,
    /// Most frames read.
    max_frames: usize,
    /// Frames read so far.
    frames: usize,
    /// Frames per type name, in the order the types first came.
    counts: Vec<(String, usize)>,
    /// The direction's index into [`Connection::control`].
    control: usize,
    /// Control frames beyond [`MAX_CONTROL_LINES`], counted.
    control_left_out: usize,
}

impl<'b> DirectionReader<'b> {
    /// A reader of `bytes` sent by `side`, within `options`' limits.
    fn new(bytes: &'b [u8], side: Side, options: &UnwrapOptions) -> Self {
        let mut decoder = loona_hpack::Decoder::new();
        // A size update may not grow the table past what one header list may hold.
        decoder.set_max_allowed_table_size(options.max_header_list);
        DirectionReader {
            bytes,
            side,
            side_name: match side {
                Side::Client => "client",
                Side::Server => "server",
            },
            decoder,
            hpack_broken: None,
            pending: None,
            max_block: options.max_header_list.max(MAX_HEADER_BLOCK),
            max_frames: options.max_frames,
            frames: 0,
            counts: Vec::new(),
            control: side.index(),
            control_left_out: 0,
        }
    }

    /// The frame at `pos`, counted; or `None`, with a warning, when the frame limit is reached
    /// or the capture ends inside the frame.
    fn next_frame(&mut self, pos: usize, state: &mut State) -> Option<Frame<'b>> {
        let (bytes, side, side_name) = (self.bytes, self.side, self.side_name);
        if self.frames >= self.max_frames {
            let max_frames = self.max_frames;
            state.warn(
                Some((side, pos)),
                format!(
                    "HTTP/2 {side_name}: reading stopped at byte {pos} after {max_frames} frames ({})",
                    Limits::hint("frames")
                ),
            );
            return None;
        }
        let Some(header) = FrameHeader::read(bytes, pos) else {
            state.warn(
                Some((side, pos)),
                format!(
                    "HTTP/2 {side_name}: the capture ends inside a frame header at byte {pos} ({} bytes left)",
                    bytes.len() - pos
                ),
            );
            return None;
        };
        let payload_start = pos + 9;
        let end = payload_start.saturating_add(header.length);
        let Some(payload) = bytes.get(payload_start..end) else {
            state.warn(
                Some((side, pos)),
                format!(
                    "HTTP/2 {side_name}: the {} frame at byte {pos} announces {} bytes, the capture has {}; its bytes are not read",
                    frame_type_name(header.kind),
                    header.length,
                    bytes.len() - payload_start
                ),
            );
            if let Some(m) = state
                .message(header.stream, side)
                .filter(|_| header.stream != 0)
            {
                m.notes.push(format!(
                    "{} frame at byte {pos} cut short by the end of the capture",
                    frame_type_name(header.kind)
                ));
            }
            return None;
        };
        self.frames += 1;
        super::work::add(1);
        let kind_name = frame_type_name(header.kind);
        match self.counts.iter_mut().find(|(k, _)| *k == kind_name) {
            Some((_, n)) => *n += 1,
            None => self.counts.push((kind_name.clone(), 1)),
        }
        Some(Frame {
            header,
            payload,
            span: Span::new(pos, end),
            kind_name,
        })
    }

    /// Drops the header block being gathered, with a warning, when `frame` is not its
    /// CONTINUATION.
    fn close_unfinished_block(&mut self, frame: &Frame, state: &mut State) {
        if let Some(p) = &self.pending {
            if frame.header.kind != TYPE_CONTINUATION || frame.header.stream != p.stream {
                let stream = p.stream;
                state.warn(
                    Some((self.side, frame.span.start)),
                    format!(
                        "HTTP/2 {}: a header block of stream {stream} is not continued (a {} frame at byte {} came instead); it is dropped",
                        self.side_name, frame.kind_name, frame.span.start
                    ),
                );
                self.pending = None;
            }
        }
    }

    /// Files one frame by its type.
    fn handle(&mut self, frame: &Frame, state: &mut State, conn: &mut Connection) {
        let header = frame.header;
        match header.kind {
            TYPE_DATA | TYPE_HEADERS | TYPE_PUSH_PROMISE | TYPE_CONTINUATION
                if header.stream == 0 =>
            {
                state.warn(
                    Some((self.side, frame.span.start)),
                    format!(
                        "HTTP/2 {}: a {} frame at byte {} is on stream 0; it is skipped",
                        self.side_name, frame.kind_name, frame.span.start
                    ),
                );
            }
            TYPE_DATA => self.data(frame, state),
            TYPE_HEADERS | TYPE_PUSH_PROMISE => self.headers(frame, state),
            TYPE_CONTINUATION => self.continuation(frame, state),
            TYPE_RST_STREAM => self.rst_stream(frame, state),
            TYPE_GOAWAY => {
                let line = goaway_line(frame);
                push_control(
                    &mut conn.control[self.control],
                    &mut self.control_left_out,
                    line,
                );
            }
            TYPE_SETTINGS if header.flags & 0x1 == 0 => {
                let line = settings_line(frame);
                push_control(
                    &mut conn.control[self.control],
                    &mut self.control_left_out,
                    line,
                );
            }
            TYPE_WINDOW_UPDATE | TYPE_PRIORITY if header.stream != 0 => {
                // A frame of a message already open; alone (a browser's PRIORITY frames
                // building its dependency tree on idle streams) it opens no message.
                if let Some(m) = state.existing_message(header.stream, self.side) {
                    m.add_frame(frame.frame_ref(0));
                }
            }
            _ => {}
        }
    }

    /// A DATA frame: its bytes, padding removed, join its message's body.
    fn data(&mut self, frame: &Frame, state: &mut State) {
        let header = frame.header;
        let Some(m) = state.message(header.stream, self.side) else {
            return;
        };
        match unpadded(frame.payload, header.kind, header.flags) {
            Ok(data) => {
                m.body.extend_from_slice(data);
                let at = (data.as_ptr() as usize).wrapping_sub(self.bytes.as_ptr() as usize);
                match m.body_spans.last_mut() {
                    Some(last) if last.end == at => last.end += data.len(),
                    _ if data.is_empty() => {}
                    _ => m.body_spans.push(Span::new(at, at + data.len())),
                }
                m.add_frame(frame.frame_ref(data.len()));
            }
            Err(why) => {
                m.notes
                    .push(format!("DATA frame at byte {}: {why}", frame.span.start));
                m.add_frame(frame.frame_ref(0));
            }
        }
        if header.flags & FLAG_END_STREAM != 0 {
            m.ended = true;
        }
    }

    /// A HEADERS or PUSH_PROMISE frame: starts a header block, decoded now if it ends here.
    fn headers(&mut self, frame: &Frame, state: &mut State) {
        let (header, span, side) = (frame.header, frame.span, self.side);
        let fragment = match unpadded(frame.payload, header.kind, header.flags) {
            Ok(f) => f,
            Err(why) => {
                if let Some(m) = state.message(header.stream, side) {
                    m.notes
                        .push(format!("{} at byte {}: {why}", frame.kind_name, span.start));
                }
                return;
            }
        };
        let (promised, fragment) = if header.kind == TYPE_PUSH_PROMISE {
            match fragment.split_first_chunk::<4>() {
                Some((id, rest)) => (Some(u32::from_be_bytes(*id) & 0x7fff_ffff), rest),
                None => {
                    state.warn(
                        Some((side, span.start)),
                        format!(
                            "HTTP/2 {}: a PUSH_PROMISE at byte {} is too short",
                            self.side_name, span.start
                        ),
                    );
                    return;
                }
            }
        } else {
            (None, fragment)
        };
        if let Some(m) = state.message(header.stream, side) {
            m.add_frame(frame.frame_ref(fragment.len()));
            if header.flags & FLAG_END_STREAM != 0 && header.kind == TYPE_HEADERS {
                m.ended = true;
            }
        }
        let block = Pending {
            stream: header.stream,
            promised,
            end_stream: header.kind == TYPE_HEADERS && header.flags & FLAG_END_STREAM != 0,
            at: span.start,
            block: fragment.to_vec(),
        };
        self.end_or_keep(block, header.flags, state);
    }

    /// A CONTINUATION frame: adds to the header block being gathered, within the block limit.
    fn continuation(&mut self, frame: &Frame, state: &mut State) {
        let (header, span, side, side_name) = (frame.header, frame.span, self.side, self.side_name);
        let Some(mut block) = self.pending.take() else {
            state.warn(
                Some((side, span.start)),
                format!(
                    "HTTP/2 {side_name}: a CONTINUATION at byte {} follows no header block; it is skipped",
                    span.start
                ),
            );
            return;
        };
        if let Some(m) = state.message(header.stream, side) {
            m.add_frame(frame.frame_ref(frame.payload.len()));
        }
        let max_block = self.max_block;
        if block.block.len().saturating_add(frame.payload.len()) > max_block {
            let stream = block.stream;
            state.warn(
                Some((side, span.start)),
                format!(
                    "HTTP/2 {side_name}: the header block of stream {stream} passes {max_block} bytes at the CONTINUATION at byte {} ({}); it is dropped, and the headers after it in this direction are not known",
                    span.start,
                    Limits::hint("header-list")
                ),
            );
            self.hpack_broken = Some(format!(
                "an earlier header block (stream {stream}) was too large to decode ({})",
                Limits::hint("header-list")
            ));
            return;
        }
        block.block.extend_from_slice(frame.payload);
        self.end_or_keep(block, header.flags, state);
    }

    /// Decodes `block` if its last frame's `flags` end the headers, else keeps it for the
    /// CONTINUATIONs to come.
    fn end_or_keep(&mut self, block: Pending, flags: u8, state: &mut State) {
        if flags & FLAG_END_HEADERS != 0 {
            finish_block(
                block,
                self.side,
                &mut self.decoder,
                &mut self.hpack_broken,
                state,
            );
        } else {
            self.pending = Some(block);
        }
    }

    /// An RST_STREAM frame: marks both directions of its stream as reset.
    fn rst_stream(&mut self, frame: &Frame, state: &mut State) {
        let stream = frame.header.stream;
        let code = frame
            .payload
            .first_chunk::<4>()
            .map(|c| error_code_name(u32::from_be_bytes(*c)))
            .unwrap_or_else(|| "a malformed code".into());
        let reset = format!("RST_STREAM {code} from the {}", self.side_name);
        for s in [Side::Client, Side::Server] {
            if let Some(m) = state.message(stream, s) {
                m.reset = Some(reset.clone());
            }
        }
        if let Some(m) = state.message(stream, self.side) {
            m.add_frame(frame.frame_ref(0));
        }
    }

    /// The end of the direction: a header block left open, the control frames left out, and
    /// the frame counts as the direction's first control line.
    fn finish(self, state: &mut State, conn: &mut Connection) {
        if let Some(p) = self.pending {
            state.warn(
                Some((self.side, p.at)),
                format!(
                    "HTTP/2 {}: the header block of stream {} never ends (no END_HEADERS before the end of the capture)",
                    self.side_name, p.stream
                ),
            );
        }
        let control = self.control;
        if self.control_left_out > 0 {
            conn.control[control].push(format!(
                "{} more control frames are not listed",
                self.control_left_out
            ));
        }
        if !self.counts.is_empty() {
            let list: Vec<String> = self
                .counts
                .iter()
                .map(|(k, n)| format!("{n} {k}"))
                .collect();
            conn.control[control].insert(0, format!("{} frames: {}", self.frames, list.join(", ")));
        }
    }
}

/// A GOAWAY frame's control line: its error code, the last stream and any debug data.
fn goaway_line(frame: &Frame) -> String {
    let payload = frame.payload;
    let last = payload
        .first_chunk::<4>()
        .map(|c| u32::from_be_bytes(*c) & 0x7fff_ffff);
    let code = payload
        .get(4..8)
        .and_then(|c| <[u8; 4]>::try_from(c).ok())
        .map(|c| error_code_name(u32::from_be_bytes(c)));
    let debug = payload
        .get(8..)
        .filter(|d| !d.is_empty())
        .map(|d| format!(" \"{}\"", String::from_utf8_lossy(d)))
        .unwrap_or_default();
    format!(
        "GOAWAY at byte {}: {}, last stream {}{debug}",
        frame.span.start,
        code.unwrap_or_else(|| "no code".into()),
        last.map_or_else(|| "?".into(), |l| l.to_string())
    )
}

/// A SETTINGS frame's control line: each setting by name, the first [`MAX_CONTROL_LINES`].
fn settings_line(frame: &Frame) -> String {
    let settings: Vec<String> = frame
        .payload
        .chunks_exact(6)
        .take(MAX_CONTROL_LINES)
        .map(|c| {
            let id = u16::from_be_bytes([c[0], c[1]]);
            let value = u32::from_be_bytes([c[2], c[3], c[4], c[5]]);
            let name = match id {
                1 => "HEADER_TABLE_SIZE".to_string(),
                2 => "ENABLE_PUSH".to_string(),
                3 => "MAX_CONCURRENT_STREAMS".to_string(),
                4 => "INITIAL_WINDOW_SIZE".to_string(),
                5 => "MAX_FRAME_SIZE".to_string(),
                6 => "MAX_HEADER_LIST_SIZE".to_string(),
                8 => "ENABLE_CONNECT_PROTOCOL".to_string(),
                other => format!("0x{other:x}"),
            };
            format!("{name}={value}")
        })
        .collect();
    format!(
        "SETTINGS at byte {}{}",
        frame.span.start,
        if settings.is_empty() {
            String::new()
        } else {
            format!(": {}", settings.join(", "))
        }
    )
}

/// Control frames described per direction; the rest are counted.
const MAX_CONTROL_LINES: usize = 100;

/// Adds a control frame's line while fewer than [`MAX_CONTROL_LINES`] are listed, else counts it.
fn push_control(lines: &mut Vec<String>, left_out: &mut usize, line: String) {
    if lines.len() < MAX_CONTROL_LINES {
        lines.push(line);
    } else {
        *left_out += 1;
    }
}

/// Which limit stopped keeping a header list's fields.
enum Over {
    Fields(usize),
    Size(usize),
    Budget { left: usize, total: usize },
}

/// A decoded header list: the fields kept, and what stopped keeping more (with the fields and
/// decoded bytes of the whole list).
type DecodedBlock = (Vec<(String, String)>, Option<(Over, usize, usize)>);

/// Decodes a header block field by field: the fields within the header-list limits, and what
/// stopped keeping more (the block is decoded to its end either way, so the table stays in step).
fn decode_block(
    decoder: &mut loona_hpack::Decoder<'_>,
    block: &[u8],
    options: &UnwrapOptions,
    budget: &mut Budget,
) -> Result<DecodedBlock, loona_hpack::decoder::DecoderError> {
    let mut fields = Vec::new();
    let mut count = 0usize;
    let mut size = 0usize;
    let mut over: Option<Over> = None;
    decoder.decode_with_cb(block, |name, value| {
        count += 1;
        size = size
            .saturating_add(name.len())
            .saturating_add(value.len())
            .saturating_add(32);
        if over.is_some() {
            return;
        }
        if count > options.max_headers {
            over = Some(Over::Fields(options.max_headers));
            return;
        }
        if size > options.max_header_list {
            over = Some(Over::Size(options.max_header_list));
            return;
        }
        let bytes = name.len().saturating_add(value.len());
        if bytes > budget.left {
            over = Some(Over::Budget {
                left: budget.left,
                total: budget.total,
            });
            return;
        }
        budget.left -= bytes;
        fields.push((
            String::from_utf8_lossy(&name).into_owned(),
            String::from_utf8_lossy(&value).into_owned(),
        ));
    })?;
    Ok((fields, over.map(|o| (o, count, size))))
}

/// Decodes a finished header block and files it: request or response headers, an interim
/// response, trailers, or a pushed request.
fn finish_block(
    block: Pending,
    side: Side,
    decoder: &mut loona_hpack::Decoder<'_>,
    broken: &mut Option<String>,
    state: &mut State,
) {
    let at = block.at;
    let (stream, target_side) = match block.promised {
        Some(promised) => (promised, Side::Client),
        None => (block.stream, side),
    };
    let fields = match broken {
        Some(_) => None,
        None => match decode_block(decoder, &block.block, state.options, state.budget) {
            Ok((fields, over)) => {
                if let Some((over, count, size)) = over {
                    let why = match over {
                        Over::Fields(max) => format!(
                            "has {count} fields, more than {max} ({})",
                            Limits::hint("headers")
                        ),
                        Over::Size(max) => format!(
                            "decodes to {size} bytes (name + value + 32 per field, {count} fields), more than {max} ({})",
                            Limits::hint("header-list")
                        ),
                        Over::Budget { left, total } => format!(
                            "decodes past the overall limit of {total} decompressed bytes for one input ({left} left after the layers and headers before it; {} or `--limit ratio=N`)",
                            Limits::hint("decompressed")
                        ),
                    };
                    let text = format!(
                        "the header list of stream {stream} (block at byte {at}) {why}; the fields past it are not kept"
                    );
                    let side_name = match side {
                        Side::Client => "client",
                        Side::Server => "server",
                    };
                    state.warn(Some((side, at)), format!("HTTP/2 {side_name}: {text}"));
                    if let Some(m) = state.message(stream, target_side) {
                        m.notes.push(text);
                    }
                }
                Some(fields)
            }
            Err(e) => {
                let what = match e {
                    loona_hpack::decoder::DecoderError::InvalidMaxDynamicSize => format!(
                        "it sets the HPACK table past {} bytes ({})",
                        state.options.max_header_list,
                        Limits::hint("header-list")
                    ),
                    e => format!(
                        "{e}: the capture may start mid-connection, so the HPACK table is unknown"
                    ),
                };
                *broken = Some(format!(
                    "the header block at byte {at} does not decode ({what})"
                ));
                None
            }
        },
    };
    let Some(m) = state.message(stream, target_side) else {
        return;
    };
    let Some(fields) = fields else {
        m.headers_unknown = true;
        if let Some(why) = broken.as_deref() {
            if !m.notes.iter().any(|n| n == why) {
                m.notes.push(why.to_string());
            }
        }
        return;
    };
    if block.promised.is_some() {
        m.pushed = true;
        m.headers = fields;
        m.ended = true;
        return;
    }
    let status = fields
        .iter()
        .find(|(k, _)| k == ":status")
        .map(|(_, v)| v.as_str());
    if m.headers.is_empty() && !m.headers_unknown {
        if side == Side::Server && status.is_some_and(|s| s.starts_with('1')) && !block.end_stream {
            let line: Vec<String> = fields.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            m.informational.push(line.join(", "));
        } else {
            m.headers = fields;
        }
    } else {
        m.trailers.extend(fields);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let len = payload.len();
        let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
        f.extend_from_slice(&stream.to_be_bytes());
        f.extend_from_slice(payload);
        f
    }

    fn hpack(fields: &[(&str, &str)]) -> Vec<u8> {
        let mut enc = loona_hpack::Encoder::new();
        enc.encode(fields.iter().map(|(k, v)| (k.as_bytes(), v.as_bytes())))
    }

    #[test]
    fn a_request_and_its_response_with_trailers() {
        let mut client = PREFACE.to_vec();
        client.extend(frame(TYPE_SETTINGS, 0, 0, &[]));
        client.extend(frame(
            TYPE_HEADERS,
            FLAG_END_HEADERS,
            1,
            &hpack(&[
                (":method", "POST"),
                (":path", "/pkg.Svc/Get"),
                ("content-type", "application/grpc"),
            ]),
        ));
        // Padded DATA: pad length 3, then the data, then 3 bytes of padding.
        client.extend(frame(
            TYPE_DATA,
            FLAG_END_STREAM | FLAG_PADDED,
            1,
            b"\x03\x00\x00\x00\x00\x02\x08\x01pad",
        ));
        let mut server = frame(TYPE_SETTINGS, 0, 0, &[0, 4, 0, 0, 0xff, 0xff]);
        // The header block split over HEADERS and CONTINUATION.
        let block = hpack(&[(":status", "200"), ("content-type", "application/grpc")]);
        let (a, b) = block.split_at(2);
        server.extend(frame(TYPE_HEADERS, 0, 1, a));
        server.extend(frame(TYPE_CONTINUATION, FLAG_END_HEADERS, 1, b));
        server.extend(frame(TYPE_DATA, 0, 1, b"\x00\x00\x00\x00\x02\x08\x02"));
        server.extend(frame(
            TYPE_HEADERS,
            FLAG_END_HEADERS | FLAG_END_STREAM,
            1,
            &hpack(&[("grpc-status", "0")]),
        ));
        let conn = parse_connection(&client, 0, &server, 0);
        assert!(conn.preface);
        assert!(conn.warnings.is_empty(), "{:?}", conn.warnings);
        assert_eq!(conn.messages.len(), 2);
        let (req, resp) = (&conn.messages[0], &conn.messages[1]);
        assert_eq!(req.header(":path"), Some("/pkg.Svc/Get"));
        assert_eq!(req.body, b"\x00\x00\x00\x00\x02\x08\x01");
        assert!(req.ended);
        assert_eq!(resp.header(":status"), Some("200"));
        assert_eq!(resp.body, b"\x00\x00\x00\x00\x02\x08\x02");
        assert_eq!(resp.trailer("grpc-status"), Some("0"));
        assert_eq!(resp.frames.len(), 4);
        assert!(
            conn.control[1][0].starts_with("5 frames"),
            "{:?}",
            conn.control
        );
        assert!(conn.control[1][1].contains("INITIAL_WINDOW_SIZE=65535"));
    }

    #[test]
    fn the_dynamic_table_carries_over_between_blocks() {
        let mut enc = loona_hpack::Encoder::new();
        let fields = [(":method", "GET"), (":path", "/x"), ("x-custom", "one")];
        let first = enc.encode(fields.iter().map(|(k, v)| (k.as_bytes(), v.as_bytes())));
        let second = enc.encode(fields.iter().map(|(k, v)| (k.as_bytes(), v.as_bytes())));
        assert!(second.len() < first.len());
        let mut client = PREFACE.to_vec();
        client.extend(frame(
            TYPE_HEADERS,
            FLAG_END_HEADERS | FLAG_END_STREAM,
            1,
            &first,
        ));
        client.extend(frame(
            TYPE_HEADERS,
            FLAG_END_HEADERS | FLAG_END_STREAM,
            3,
            &second,
        ));
        let conn = parse_connection(&client, 0, &[], 0);
        assert_eq!(conn.messages[1].header("x-custom"), Some("one"));
        // Without the first block (a capture started mid-connection) the second is unknown.
        let late = frame(TYPE_HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, 3, &second);
        let mut late_data = late.clone();
        late_data.extend(frame(TYPE_DATA, FLAG_END_STREAM, 3, b"body"));
        assert!(looks_like_frames(&late_data));
        let conn = parse_connection(&late_data, 0, &[], 0);
        assert!(conn.messages[0].headers_unknown);
        assert_eq!(conn.messages[0].body, b"body");
        assert!(conn.messages[0].notes[0].contains("mid-connection"));
    }

    #[test]
    fn pushes_resets_and_goaway_are_filed() {
        let mut client = PREFACE.to_vec();
        client.extend(frame(
            TYPE_HEADERS,
            FLAG_END_HEADERS | FLAG_END_STREAM | FLAG_PRIORITY,
            1,
            &[
                &[0, 0, 0, 0, 16][..],
                &hpack(&[(":method", "GET"), (":path", "/")]),
            ]
            .concat(),
        ));
        client.extend(frame(TYPE_RST_STREAM, 0, 3, &8u32.to_be_bytes()));
        let mut server = Vec::new();
        // The server promises stream 2 (GET /style.css) on stream 1, then answers both.
        let mut promise = 2u32.to_be_bytes().to_vec();
        promise.extend(hpack(&[(":method", "GET"), (":path", "/style.css")]));
        server.extend(frame(TYPE_PUSH_PROMISE, FLAG_END_HEADERS, 1, &promise));
        server.extend(frame(
            TYPE_HEADERS,
            FLAG_END_HEADERS,
            1,
            &hpack(&[(":status", "200")]),
        ));
        server.extend(frame(TYPE_DATA, FLAG_END_STREAM, 1, b"<html>"));
        server.extend(frame(
            TYPE_HEADERS,
            FLAG_END_HEADERS,
            2,
            &hpack(&[(":status", "200")]),
        ));
        server.extend(frame(TYPE_DATA, FLAG_END_STREAM, 2, b"p{}"));
        let mut goaway = 3u32.to_be_bytes().to_vec();
        goaway.extend(0u32.to_be_bytes());
        goaway.extend(b"bye");
        server.extend(frame(TYPE_GOAWAY, 0, 0, &goaway));
        let conn = parse_connection(&client, 0, &server, 0);
        assert!(conn.warnings.is_empty(), "{:?}", conn.warnings);
        let find = |stream: u32, side: Side| {
            conn.messages
                .iter()
                .find(|m| m.stream == stream && m.side == Some(side))
                .expect("message")
        };
        assert_eq!(find(1, Side::Client).header(":path"), Some("/"));
        let pushed = find(2, Side::Client);
        assert!(pushed.pushed);
        assert_eq!(pushed.header(":path"), Some("/style.css"));
        assert_eq!(find(2, Side::Server).body, b"p{}");
        assert_eq!(find(1, Side::Server).body, b"<html>");
        assert_eq!(
            find(3, Side::Client).reset.as_deref(),
            Some("RST_STREAM CANCEL from the client")
        );
        assert!(
            conn.control[1]
                .iter()
                .any(|c| c.contains("GOAWAY at byte")
                    && c.contains("NO_ERROR, last stream 3 \"bye\""))
        );
    }

    #[test]
    fn cut_and_hostile_frames_give_notes_not_panics() {
        let mut client = PREFACE.to_vec();
        client.extend(frame(TYPE_DATA, FLAG_PADDED, 1, b"\x09abc"));
        client.extend(&frame(TYPE_DATA, 0, 1, b"abcdef")[..10]);
        let conn = parse_connection(&client, 0, b"\x00\x00", 0);
        assert!(conn.messages[0].notes[0].contains("padding of 9 bytes"));
        assert!(conn
            .warnings
            .iter()
            .any(|w| w.text.contains("announces 6 bytes")));
        assert!(conn
            .warnings
            .iter()
            .any(|w| w.text.contains("inside a frame header")));
        for n in 0..400usize {
            let junk: Vec<u8> = (0..n).map(|i| (i * 37 + n) as u8).collect();
            let _ = parse_connection(&junk, 0, &junk, 0);
            let _ = looks_like_frames(&junk);
        }
        assert!(!looks_like_frames(b"GET / HTTP/1.1\r\n\r\n"));
    }

    /// A literal field with a new name, added to the dynamic table.
    fn indexed_literal(name: &[u8], value: &[u8]) -> Vec<u8> {
        let mut out = vec![0x40];
        for part in [name, value] {
            let mut n = part.len();
            if n < 127 {
                out.push(n as u8);
            } else {
                out.push(127);
                n -= 127;
                while n >= 128 {
                    out.push((n % 128 + 128) as u8);
                    n /= 128;
                }
                out.push(n as u8);
            }
            out.extend_from_slice(part);
        }
        out
    }

    #[test]
    fn an_hpack_bomb_keeps_its_fields_within_the_header_list_limit() {
        // One 4,000-byte field in the dynamic table, then 64,000 one-byte references to it
        // (256 MB decoded) over four CONTINUATIONs; stream 3 after it.
        let mut client = PREFACE.to_vec();
        let mut first = vec![0x82, 0x86, 0x84];
        first.extend(indexed_literal(b"x-bomb", &[b'a'; 4000]));
        client.extend(frame(TYPE_HEADERS, FLAG_END_STREAM, 1, &first));
        for i in 0..4 {
            let flags = if i == 3 { FLAG_END_HEADERS } else { 0 };
            client.extend(frame(TYPE_CONTINUATION, flags, 1, &[0xbe; 16_000]));
        }
        client.extend(frame(
            TYPE_HEADERS,
            FLAG_END_HEADERS | FLAG_END_STREAM,
            3,
            &hpack(&[(":method", "GET"), (":path", "/after")]),
        ));
        let conn = parse_connection(&client, 0, &[], 0);
        let bomb = &conn.messages[0];
        let kept: usize = bomb
            .headers
            .iter()
            .map(|(k, v)| k.len() + v.len() + 32)
            .sum();
        assert!(kept <= 1 << 20, "{kept} bytes of fields kept");
        assert_eq!(bomb.header(":method"), Some("GET"));
        let warning = conn
            .warnings
            .iter()
            .find(|w| w.text.contains("header list of stream 1"))
            .expect("a warning for stream 1");
        assert!(
            warning.text.contains("`--limit header-list=N`"),
            "{warning}"
        );
        assert_eq!(warning.at, Some((Side::Client, PREFACE.len())));
        assert!(bomb.notes.iter().any(|n| n.contains("limit header-list")));
        // The table stayed in step: the stream after it decodes.
        assert_eq!(conn.messages[1].header(":path"), Some("/after"));
        assert!(!conn.messages[1].headers_unknown);

        // A lower limit is a lower bound; the field count has its own.
        let options = UnwrapOptions {
            max_header_list: 100_000,
            max_headers: 5,
            ..UnwrapOptions::default()
        };
        let conn = parse_connection_within(&client, 0, &[], 0, &options, &mut Budget::unlimited());
        assert_eq!(conn.messages[0].headers.len(), 5);
        assert!(
            conn.warnings[0].text.contains("limit headers;"),
            "{}",
            conn.warnings[0]
        );
        // The fields kept draw on the input's decompression budget.
        let mut budget = Budget {
            left: 10_000,
            total: 10_000,
        };
        let conn =
            parse_connection_within(&client, 0, &[], 0, &UnwrapOptions::default(), &mut budget);
        let kept: usize = conn.messages[0]
            .headers
            .iter()
            .map(|(k, v)| k.len() + v.len())
            .sum();
        assert!(kept <= 10_000 && kept > 0, "{kept}");
        assert!(
            conn.warnings[0].text.contains("`--limit decompressed=N`"),
            "{}",
            conn.warnings[0]
        );
        assert_eq!(conn.messages[1].header(":path"), Some("/after"));
    }

    #[test]
    fn a_table_size_update_past_the_header_list_limit_is_refused() {
        let mut client = PREFACE.to_vec();
        // Size update to 2 MiB (001 prefix, 5-bit integer), then :method GET.
        let mut block = vec![0x3f];
        let mut n = (2usize << 20) - 31;
        while n >= 128 {
            block.push((n % 128 + 128) as u8);
            n /= 128;
        }
        block.push(n as u8);
        block.push(0x82);
        client.extend(frame(TYPE_HEADERS, FLAG_END_HEADERS, 1, &block));
        let conn = parse_connection(&client, 0, &[], 0);
        assert!(conn.messages[0].headers_unknown);
        assert!(
            conn.messages[0].notes[0].contains("limit header-list"),
            "{:?}",
            conn.messages[0].notes
        );
    }

    #[test]
    fn a_continuation_flood_keeps_a_bounded_frame_list() {
        let mut client = PREFACE.to_vec();
        client.extend(frame(TYPE_HEADERS, FLAG_END_STREAM, 1, &[0x82]));
        for _ in 0..5000 {
            client.extend(frame(TYPE_CONTINUATION, 0, 1, &[]));
        }
        client.extend(frame(TYPE_CONTINUATION, FLAG_END_HEADERS, 1, &[0x84]));
        client.extend(frame(
            TYPE_HEADERS,
            FLAG_END_HEADERS | FLAG_END_STREAM,
            3,
            &[0x82, 0x84],
        ));
        let conn = parse_connection(&client, 0, &[], 0);
        let m = &conn.messages[0];
        assert_eq!(m.frame_count, 5002);
        assert_eq!(m.frames.len(), KEPT_FRAMES);
        assert_eq!(m.header(":path"), Some("/"));
        assert_eq!(conn.messages[1].header(":method"), Some("GET"));
        // The frame limit stops the direction, naming itself.
        let options = UnwrapOptions {
            max_frames: 100,
            ..UnwrapOptions::default()
        };
        let conn = parse_connection_within(&client, 0, &[], 0, &options, &mut Budget::unlimited());
        assert!(
            conn.warnings
                .iter()
                .any(|w| w.text.contains("after 100 frames")
                    && w.text.contains("`--limit frames=N`")),
            "{:?}",
            conn.warnings
        );
        // Frames that each give a warning list at most MAX_WARNINGS of them.
        let mut orphans = PREFACE.to_vec();
        for _ in 0..1000 {
            orphans.extend(frame(TYPE_CONTINUATION, 0, 1, &[]));
        }
        let conn = parse_connection(&orphans, 0, &[], 0);
        assert_eq!(conn.warnings.len(), MAX_WARNINGS + 1);
        assert!(conn.warnings[MAX_WARNINGS]
            .text
            .contains("900 more warnings"));
    }
}
