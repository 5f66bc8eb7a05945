//! gRPC-Web bodies: binary frames (with a trailers frame at the end) and their text form.
//!
//! A gRPC-Web-text body (`application/grpc-web-text`) is base64, and servers that stream encode
//! each frame on its own, so a body is often several padded base64 chunks back to back
//! (`AAAAAAUIlgEQAQ==gAAAAA9ncnBjLXN0YXR1czowDQo=`), which ordinary base64 decoders reject. This
//! module decodes such text chunk by chunk and recognises bytes that are exactly a run of gRPC
//! frames. Splitting the frames into messages is done by
//! [`crate::codec::protobuf::framing::split_grpc`]; this module does not decode messages.

use base64::Engine;

/// Decodes base64 that may be several padded chunks back to back (whitespace ignored).
///
/// Returns the bytes and the number of chunks, or the offset in `text` of the first character
/// that is not base64 (or of a chunk whose length is impossible) with the reason.
///
/// ```
/// use wirelens::capture::grpcweb::base64_chunks;
///
/// let (bytes, chunks) = base64_chunks(b"AAAAAAE=gAAAAAA=").expect("two chunks");
/// assert_eq!(bytes, [0, 0, 0, 0, 1, 0x80, 0, 0, 0, 0]);
/// assert_eq!(chunks, 2);
/// ```
pub fn base64_chunks(text: &[u8]) -> Result<(Vec<u8>, usize), (usize, String)> {
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_allow_trailing_bits(true)
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut chunks = 0usize;
    let mut chunk: Vec<u8> = Vec::new();
    let mut chunk_start = 0usize;
    let mut padding = false;
    let mut flush = |chunk: &mut Vec<u8>, start: usize, out: &mut Vec<u8>| {
        if chunk.is_empty() {
            return Ok(());
        }
        let decoded = engine.decode(&*chunk).map_err(|e| {
            (
                start,
                format!("base64 chunk {} does not decode ({e})", chunks + 1),
            )
        })?;
        out.extend_from_slice(&decoded);
        chunks += 1;
        chunk.clear();
        Ok(())
    };
    for (i, &c) in text.iter().enumerate() {
        match c {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'+' | b'/' => {
                if padding {
                    flush(&mut chunk, chunk_start, &mut out)?;
                    padding = false;
                }
                if chunk.is_empty() {
                    chunk_start = i;
                }
                chunk.push(c);
            }
            b'=' => {
                if chunk.is_empty() {
                    return Err((i, "padding `=` without base64 before it".into()));
                }
                padding = true;
                chunk.push(c);
            }
            c if c.is_ascii_whitespace() => {}
            _ => {
                return Err((
                    i,
                    format!("byte {c:#04x} is not base64 (gRPC-Web-text bodies are base64)"),
                ))
            }
        }
    }
    flush(&mut chunk, chunk_start, &mut out)?;
    Ok((out, chunks))
}

/// Whether `bytes` is exactly a run of gRPC frames: at least one, flags 0 or 1 (compressed),
/// and at most one trailers frame (flag 0x80), last, holding text. An uncompressed message frame
/// may be empty (`00 00 00 00 00`: a message with every field at its default, such as
/// `google.protobuf.Empty`), alone or among others; a compressed one may not (gzip of nothing
/// is still 20 bytes).
pub fn is_grpc_frames(bytes: &[u8]) -> bool {
    let mut pos = 0usize;
    let mut frames = 0usize;
    while pos < bytes.len() {
        let Some(head) = bytes.get(pos..pos + 5) else {
            return false;
        };
        let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
        let Some(end) = (pos + 5).checked_add(len).filter(|&e| e <= bytes.len()) else {
            return false;
        };
        let data = bytes.get(pos + 5..end).unwrap_or(&[]);
        match head[0] {
            0 => {}
            1 if len > 0 => {}
            0x80 if end == bytes.len()
                && data
                    .iter()
                    .all(|&c| c.is_ascii_graphic() || c.is_ascii_whitespace()) => {}
            _ => return false,
        }
        pos = end;
        frames += 1;
    }
    frames > 0
}

/// Text that is two or more padded base64 chunks and decodes to exactly a run of gRPC frames:
/// the bytes and the chunk count. (One chunk is plain base64, peeled as such.)
pub fn grpc_web_text(text: &[u8]) -> Option<(Vec<u8>, usize)> {
    let inner = text.trim_ascii();
    // Chunks only exist if there is padding before the end.
    let last = inner.iter().rposition(|&c| c != b'=')?;
    if !inner.get(..last)?.contains(&b'=') {
        return None;
    }
    let (bytes, chunks) = base64_chunks(inner).ok()?;
    (chunks >= 2 && is_grpc_frames(&bytes)).then_some((bytes, chunks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_and_errors() {
        assert_eq!(base64_chunks(b"aGk=\n aGk="), Ok((b"hihi".to_vec(), 2)));
        assert_eq!(base64_chunks(b"aGk").map(|r| r.0), Ok(b"hi".to_vec()));
        assert_eq!(base64_chunks(b"aGk=!").map_err(|e| e.0), Err(4));
        assert_eq!(base64_chunks(b"=aGk").map_err(|e| e.0), Err(0));
        assert!(base64_chunks(b"aGk=a").is_err());
    }

    #[test]
    fn frames() {
        assert!(is_grpc_frames(b"\x00\x00\x00\x00\x01\x08"));
        assert!(is_grpc_frames(
            b"\x00\x00\x00\x00\x01\x08\x80\x00\x00\x00\x0dgrpc-status:0"
        ));
        // Empty messages (google.protobuf.Empty), alone and among others.
        assert!(is_grpc_frames(b"\x00\x00\x00\x00\x00"));
        assert!(is_grpc_frames(
            b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x08\x00\x00\x00\x00\x00"
        ));
        // A trailers frame that is not last, an empty compressed frame, an unknown flag.
        assert!(!is_grpc_frames(
            b"\x80\x00\x00\x00\x0dgrpc-status:0\x00\x00\x00\x00\x01\x08"
        ));
        assert!(!is_grpc_frames(b"\x01\x00\x00\x00\x00"));
        assert!(!is_grpc_frames(b"\x02\x00\x00\x00\x01\x08"));
        assert!(grpc_web_text(b"AAAAAAEI\ngAAAAA1ncnBjLXN0YXR1czow").is_none());
        let (bytes, chunks) =
            grpc_web_text(b"AAAAAAIIAQ==gAAAAA1ncnBjLXN0YXR1czow").expect("two chunks");
        assert_eq!((bytes.len(), chunks), (25, 2));
    }
}
