//! Splitting gRPC bodies and length-delimited streams into messages.
//!
//! Protobuf messages do not say where they end, so streams put a length in front of each:
//! - gRPC (and gRPC-Web) bodies: a 5-byte prefix per message, a flag byte (bit 0: compressed;
//!   0x80: a gRPC-Web trailers frame) and a big-endian `u32` length. Compressed frames are
//!   decompressed as gzip, bounded to [`MAX_DECOMPRESSED`] bytes and a
//!   [`MAX_RATIO`]:1 ratio so a small body cannot expand without limit ([`split_grpc`]), or by
//!   the caller's decompression ([`split_grpc_with`]; the capture layer passes one that draws
//!   on the whole input's decompression budget, so many small frames cannot add up past it).
//! - `writeDelimitedTo` streams: a varint length before each message.
//!
//! What this module does not do: decode the messages (hand [`Frame::data`] to a decoder; its
//! spans are relative to the payload, offset them by [`Frame::payload`]`.start`), or other
//! compressions than gzip (a frame flagged compressed that is not gzip is an error).

use std::io::Read;

use crate::codec::protobuf::varint::{len as varint_len, put as put_varint};
use crate::model::Span;

/// Most bytes one compressed frame may expand to.
pub const MAX_DECOMPRESSED: usize = 64 << 20;
/// Most a compressed frame may expand by, as a multiple of its compressed size.
pub const MAX_RATIO: usize = 1000;

/// One message of a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The whole frame, prefix included.
    pub span: Span,
    /// The payload bytes in the input (compressed, if they were).
    pub payload: Span,
    /// Whether the payload was compressed.
    pub compressed: bool,
    /// Whether this is a gRPC-Web trailers frame (flag 0x80); its `data` is the trailer text
    /// (`grpc-status: 0\r\n…`).
    pub trailers: bool,
    /// The payload, decompressed if it was compressed.
    pub data: Vec<u8>,
}

/// A stream could not be split completely.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at byte {offset}: {message}")]
pub struct FramingError {
    /// Offset of the offending byte (the frame's first byte, or its length).
    pub offset: usize,
    /// What was wrong, naming the frame (numbered from 1).
    pub message: String,
    /// The complete frames before the bad one.
    pub frames_before: Vec<Frame>,
}

/// Splits a gRPC or gRPC-Web body into its frames, each compressed one bounded on its own
/// ([`MAX_DECOMPRESSED`], [`MAX_RATIO`]).
pub fn split_grpc(body: &[u8]) -> Result<Vec<Frame>, FramingError> {
    split_grpc_with(body, gunzip)
}

/// [`split_grpc`], with compressed payloads decompressed by `gunzip` (the payload's bytes in,
/// the decompressed bytes or a sentence saying why not out; the frame's error reads "frame N
/// (at byte P) is flagged compressed but …" followed by that sentence).
pub fn split_grpc_with(
    body: &[u8],
    mut gunzip: impl FnMut(&[u8]) -> Result<Vec<u8>, String>,
) -> Result<Vec<Frame>, FramingError> {
    let mut frames = Vec::new();
    let mut pos = 0usize;
    while pos < body.len() {
        let number = frames.len() + 1;
        let left = body.len() - pos;
        let fail = |frames: Vec<Frame>, offset: usize, message: String| FramingError {
            offset,
            message,
            frames_before: frames,
        };
        if left < 5 {
            return Err(fail(
                frames,
                pos,
                format!("frame {number} has only {left} of the 5 prefix bytes"),
            ));
        }
        let flag = body.get(pos).copied().unwrap_or(0);
        let mut len_bytes = [0u8; 4];
        for (i, b) in len_bytes.iter_mut().enumerate() {
            *b = body.get(pos + 1 + i).copied().unwrap_or(0);
        }
        let len = u32::from_be_bytes(len_bytes) as usize;
        let start = pos + 5;
        let room = body.len() - start;
        if len > room {
            return Err(fail(
                frames,
                pos + 1,
                format!(
                    "frame {number} (at byte {pos}) says {len} payload bytes but only {room} follow"
                ),
            ));
        }
        let payload = Span::new(start, start + len);
        let raw = body.get(payload.range()).unwrap_or(&[]);
        let trailers = flag & 0x80 != 0;
        let compressed = flag & 0x01 != 0;
        if flag & !0x81 != 0 {
            return Err(fail(
                frames,
                pos,
                format!("frame {number} has flag byte {flag:#04x}, which gRPC does not define"),
            ));
        }
        let data = if compressed {
            match gunzip(raw) {
                Ok(d) => d,
                Err(why) => {
                    return Err(fail(
                        frames,
                        start,
                        format!("frame {number} (at byte {pos}) is flagged compressed but {why}"),
                    ))
                }
            }
        } else {
            raw.to_vec()
        };
        frames.push(Frame {
            span: Span::new(pos, payload.end),
            payload,
            compressed,
            trailers,
            data,
        });
        pos = payload.end;
    }
    Ok(frames)
}

/// Decompresses gzip within the bounds of [`MAX_DECOMPRESSED`] and [`MAX_RATIO`].
fn gunzip(raw: &[u8]) -> Result<Vec<u8>, String> {
    let limit = MAX_DECOMPRESSED.min(raw.len().saturating_mul(MAX_RATIO).max(1024));
    let mut out = Vec::new();
    let mut reader = flate2::read::GzDecoder::new(raw).take(limit as u64 + 1);
    reader
        .read_to_end(&mut out)
        .map_err(|e| format!("is not valid gzip ({e})"))?;
    if out.len() > limit {
        return Err(format!(
            "expands beyond {limit} bytes (limits: {MAX_DECOMPRESSED} bytes, {MAX_RATIO}:1)"
        ));
    }
    Ok(out)
}

/// Most messages one varint-delimited stream is split into: past that the rest is not split,
/// whatever splits it ([`split_varint_delimited`], the capture layer's framing).
pub const MAX_DELIMITED: usize = 100_000;

/// One message of a varint-delimited stream: the whole frame (length included) and the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delimited {
    /// The whole frame, length prefix included.
    pub frame: Span,
    /// The message's own bytes.
    pub message: Span,
}

/// Where a varint-delimited stream stops being one, and the messages before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelimitedError {
    /// Offset of the bad frame's length.
    pub offset: usize,
    /// What was wrong, naming the message (numbered from 1).
    pub message: String,
    /// The complete messages before it.
    pub before: Vec<Delimited>,
}

/// The messages of a stream of varint-length-prefixed messages (`writeDelimitedTo`), as spans:
/// at most [`MAX_DELIMITED`] of them, so the list is bounded whatever the input.
pub fn varint_delimited_spans(bytes: &[u8]) -> Result<Vec<Delimited>, DelimitedError> {
    let mut found: Vec<Delimited> = Vec::new();
    let mut pos = 0usize;
    while pos < bytes.len() {
        let number = found.len() + 1;
        let fail = |message: String, before: Vec<Delimited>| DelimitedError {
            offset: pos,
            message,
            before,
        };
        if found.len() >= MAX_DELIMITED {
            return Err(fail(
                format!("more than {MAX_DELIMITED} messages; the rest is not split"),
                found,
            ));
        }
        let mut len = 0u64;
        let mut n = 0usize;
        loop {
            let Some(&b) = bytes.get(pos + n) else {
                return Err(fail(
                    format!("the length of message {number} runs past the end"),
                    found,
                ));
            };
            if n == 9 && b > 1 {
                return Err(fail(
                    format!("the length of message {number} is longer than 64 bits"),
                    found,
                ));
            }
            len |= u64::from(b & 0x7f) << (7 * n);
            n += 1;
            if b & 0x80 == 0 {
                break;
            }
        }
        let start = pos + n;
        let room = bytes.len() - start;
        let Some(len) = usize::try_from(len).ok().filter(|&l| l <= room) else {
            return Err(fail(
                format!("message {number} (at byte {pos}) says {len} bytes but only {room} follow"),
                found,
            ));
        };
        found.push(Delimited {
            frame: Span::new(pos, start + len),
            message: Span::new(start, start + len),
        });
        pos = start + len;
    }
    Ok(found)
}

/// Splits a stream of varint-length-prefixed messages (`writeDelimitedTo`), each message's bytes
/// copied out; at most [`MAX_DELIMITED`] ([`varint_delimited_spans`]).
pub fn split_varint_delimited(bytes: &[u8]) -> Result<Vec<Frame>, FramingError> {
    let frame = |d: Delimited| Frame {
        span: d.frame,
        payload: d.message,
        compressed: false,
        trailers: false,
        data: bytes.get(d.message.range()).unwrap_or(&[]).to_vec(),
    };
    varint_delimited_spans(bytes)
        .map(|found| found.into_iter().map(frame).collect())
        .map_err(|e| FramingError {
            offset: e.offset,
            message: e.message,
            frames_before: e.before.into_iter().map(frame).collect(),
        })
}

/// One gRPC frame around `payload`; `compressed` gzips it and sets the flag.
pub fn grpc_frame(payload: &[u8], compressed: bool) -> Vec<u8> {
    let body = if compressed {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        // Writing into a Vec cannot fail.
        let _ = std::io::Write::write_all(&mut enc, payload);
        enc.finish().unwrap_or_default()
    } else {
        payload.to_vec()
    };
    let mut out = Vec::with_capacity(body.len() + 5);
    out.push(u8::from(compressed));
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// A gRPC-Web trailers frame (flag 0x80) holding `text`.
pub fn grpc_web_trailers(text: &str) -> Vec<u8> {
    let mut out = vec![0x80];
    out.extend_from_slice(&(text.len() as u32).to_be_bytes());
    out.extend_from_slice(text.as_bytes());
    out
}

/// `payload` with its varint length in front (`writeDelimitedTo`).
pub fn varint_delimited(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + varint_len(payload.len() as u64));
    put_varint(&mut out, payload.len() as u64);
    out.extend_from_slice(payload);
    out
}
