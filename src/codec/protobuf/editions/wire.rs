//! The few wire-format reads the editions code needs on descriptor bytes (a `FeatureSet`, the
//! `features` field of an options message): the top-level fields of one message.

use super::EditionsError;
use crate::codec::protobuf::varint;

/// One top-level field of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field<'a> {
    /// A varint field: its number and value.
    Varint(u32, u64),
    /// A length-delimited field: its number and bytes.
    Len(u32, &'a [u8]),
    /// Any other wire type (I32, I64, a group), skipped.
    Other(u32),
}

/// The top-level fields of `bytes`, in order, or why they do not parse.
pub fn fields(bytes: &[u8]) -> Result<Vec<Field<'_>>, EditionsError> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let (tag, n) = read(bytes, at)?;
        at += n;
        let number = u32::try_from(tag >> 3).map_err(|_| EditionsError::BadTag { at })?;
        match tag & 7 {
            0 => {
                let (v, n) = read(bytes, at)?;
                at += n;
                out.push(Field::Varint(number, v));
            }
            1 | 5 => {
                at += if tag & 7 == 1 { 8 } else { 4 };
                if at > bytes.len() {
                    return Err(EditionsError::FixedPastEnd);
                }
                out.push(Field::Other(number));
            }
            2 => {
                let (len, n) = read(bytes, at)?;
                at += n;
                let end = usize::try_from(len)
                    .ok()
                    .and_then(|l| at.checked_add(l))
                    .filter(|&e| e <= bytes.len())
                    .ok_or(EditionsError::LengthPastEnd { at: Some(at) })?;
                out.push(Field::Len(number, bytes.get(at..end).unwrap_or_default()));
                at = end;
            }
            3 => {
                at = skip_group(bytes, at, number)?;
                out.push(Field::Other(number));
            }
            w => return Err(EditionsError::WireType { wire: w, at }),
        }
    }
    Ok(out)
}

fn read(bytes: &[u8], at: usize) -> Result<(u64, usize), EditionsError> {
    varint::read(bytes, at, bytes.len()).map_err(|e| EditionsError::varint(at, e))
}

/// The offset after the end-group tag that closes group `number` opened before `at`.
fn skip_group(bytes: &[u8], mut at: usize, number: u32) -> Result<usize, EditionsError> {
    let mut open = vec![number];
    while let Some(&inner) = open.last() {
        if at >= bytes.len() {
            return Err(EditionsError::GroupNotClosed { group: inner });
        }
        let (tag, n) = read(bytes, at)?;
        at += n;
        let num = (tag >> 3) as u32;
        match tag & 7 {
            0 => at += read(bytes, at)?.1,
            1 => at += 8,
            5 => at += 4,
            2 => {
                let (len, n) = read(bytes, at)?;
                at = usize::try_from(len)
                    .ok()
                    .and_then(|l| (at + n).checked_add(l))
                    .ok_or(EditionsError::LengthPastEnd { at: None })?;
            }
            3 => open.push(num),
            4 if num == inner => {
                open.pop();
            }
            w => {
                return Err(EditionsError::WireTypeInGroup {
                    wire: w,
                    group: inner,
                })
            }
        }
    }
    if at > bytes.len() {
        return Err(EditionsError::GroupPastEnd);
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_varints_lengths_and_skips_the_rest() {
        // 1: 150, 2: "ab", 3: fixed32, 4: group { 1: 1 }, 5: 7
        let bytes = [
            0x08, 0x96, 0x01, 0x12, 2, b'a', b'b', 0x1d, 0, 0, 0, 0, 0x23, 0x08, 1, 0x24, 0x28, 7,
        ];
        assert_eq!(
            fields(&bytes).expect("parses"),
            vec![
                Field::Varint(1, 150),
                Field::Len(2, b"ab"),
                Field::Other(3),
                Field::Other(4),
                Field::Varint(5, 7),
            ]
        );
        assert!(fields(&[0x12, 5, b'a']).is_err());
        assert!(fields(&[0x23, 0x08]).is_err());
    }
}
