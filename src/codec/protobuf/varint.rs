//! Protobuf's base-128 varints: the one reader and writer every protobuf part uses (schema-less
//! and schema-guided decoding, encoding, framing).

/// Why a varint could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VarintError {
    /// It runs past the end.
    Eof,
    /// Its tenth byte carries bits beyond 64.
    Overflow,
    /// It has more than 10 bytes.
    TooLong,
}

/// Reads a varint at `at` that must end by `end`: the value and its byte count.
pub(crate) fn read(bytes: &[u8], at: usize, end: usize) -> Result<(u64, usize), VarintError> {
    let mut value = 0u64;
    for i in 0..10 {
        let pos = at + i;
        if pos >= end {
            return Err(VarintError::Eof);
        }
        let Some(&b) = bytes.get(pos) else {
            return Err(VarintError::Eof);
        };
        if i == 9 && b > 1 {
            return Err(VarintError::Overflow);
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Err(VarintError::TooLong)
}

/// Bytes of the minimal varint for `value`.
pub(crate) fn len(value: u64) -> usize {
    let bits = 64 - value.leading_zeros() as usize;
    bits.div_ceil(7).max(1)
}

/// Appends `value` as a minimal varint.
pub(crate) fn put(out: &mut Vec<u8>, value: u64) {
    let (bytes, n) = bytes(value);
    out.extend_from_slice(bytes.get(..n).unwrap_or_default());
}

/// `value` as a minimal varint: the bytes and how many of them are used.
pub(crate) fn bytes(mut value: u64) -> ([u8; 10], usize) {
    let mut out = [0u8; 10];
    let mut n = 0;
    for slot in &mut out {
        n += 1;
        if value < 0x80 {
            *slot = value as u8;
            break;
        }
        *slot = (value as u8) | 0x80;
        value >>= 7;
    }
    (out, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_it_writes() {
        for v in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut out = Vec::new();
            put(&mut out, v);
            assert_eq!(out.len(), len(v));
            assert_eq!(read(&out, 0, out.len()), Ok((v, out.len())));
        }
        assert_eq!(read(&[0x80], 0, 1), Err(VarintError::Eof));
        assert_eq!(
            read(
                &[0xff; 9].iter().chain(&[2]).copied().collect::<Vec<_>>(),
                0,
                10
            ),
            Err(VarintError::Overflow)
        );
        assert_eq!(read(&[0x80; 11], 0, 11), Err(VarintError::Overflow));
    }
}
