//! The MessagePack encoder's plain path, for [`crate::codec::encode_fast`]: a value that needs
//! no note (nil, booleans, 64-bit integers, float32 and float64, text, byte strings, arrays,
//! maps with text keys that do not repeat), written without spans in one tight pass. Anything
//! else gives up, and the full encoder ([`super::encode_with`]) writes the value: the bytes are
//! the same, this only skips the bookkeeping the full one does for what the plain value never
//! has.

use super::encode::{put_head, put_sint, put_uint};
use crate::codec::repeats::{repeated, repeats_earlier, PAIRWISE};
use crate::codec::{Depth, EncodeOptions, FloatPolicy};
use crate::model::{FloatWidth, Value};

/// The MessagePack bytes of `value` when it is plain (see the module docs) and nests at most
/// `depth` deep; `None` otherwise, or for canonical output.
pub(crate) fn encode_plain(
    value: &Value,
    options: &EncodeOptions,
    depth: Depth,
) -> Option<Vec<u8>> {
    if options.canonical {
        return None;
    }
    let mut w = Plain {
        out: Vec::new(),
        shortest: options.floats == FloatPolicy::Shortest,
        depth: 0,
        max_depth: depth.0,
    };
    w.value(value).then_some(w.out)
}

struct Plain {
    out: Vec<u8>,
    /// Floats as float32 whenever that holds them exactly.
    shortest: bool,
    /// Containers open, at most `max_depth`.
    depth: usize,
    max_depth: usize,
}

impl Plain {
    /// A marker byte and a big-endian length in `n` bytes.
    #[inline]
    fn head(&mut self, marker: u8, n: usize, len: u64) {
        put_head(&mut self.out, marker, n, len);
    }

    /// The header of a string (`fix` the fixstr marker, else `str8`, `str16`, `str32`) or, with
    /// `fix` 0, of a byte string (`bin8`, `bin16`, `bin32`); `false` past 2^32 − 1 bytes.
    #[inline]
    fn len_head(&mut self, fix: u8, markers: [u8; 3], len: usize) -> bool {
        match len {
            0..=31 if fix != 0 => self.out.push(fix | len as u8),
            0..=0xff => self.head(markers[0], 1, len as u64),
            0x100..=0xffff => self.head(markers[1], 2, len as u64),
            _ if u32::try_from(len).is_ok() => self.head(markers[2], 4, len as u64),
            _ => return false,
        }
        true
    }

    /// Writes `v`; `false` when it is not plain.
    fn value(&mut self, v: &Value) -> bool {
        match v {
            Value::Null => self.out.push(0xc0),
            Value::Bool(b) => self.out.push(if *b { 0xc3 } else { 0xc2 }),
            Value::Int(n) => {
                if let Ok(u) = u64::try_from(*n) {
                    put_uint(&mut self.out, u);
                } else if let Ok(i) = i64::try_from(*n) {
                    put_sint(&mut self.out, i);
                } else {
                    return false;
                }
            }
            Value::Float(f) => {
                let narrow = if self.shortest {
                    FloatWidth::F32.holds(f.value)
                } else if f.width == FloatWidth::F16 {
                    return false;
                } else {
                    f.width == FloatWidth::F32
                };
                if narrow {
                    self.out.push(0xca);
                    self.out
                        .extend_from_slice(&(f.value as f32).to_bits().to_be_bytes());
                } else {
                    self.out.push(0xcb);
                    self.out.extend_from_slice(&f.value.to_bits().to_be_bytes());
                }
            }
            Value::Text(s) => return self.text(s.as_bytes()),
            Value::Bytes(b) => {
                if !self.len_head(0, [0xc4, 0xc5, 0xc6], b.len()) {
                    return false;
                }
                self.out.extend_from_slice(b);
            }
            Value::Array(items) => return self.array(items),
            Value::Map(entries) => return self.map(entries),
            _ => return false,
        }
        true
    }

    #[inline]
    fn text(&mut self, s: &[u8]) -> bool {
        if !self.len_head(0xa0, [0xd9, 0xda, 0xdb], s.len()) {
            return false;
        }
        self.out.extend_from_slice(s);
        true
    }

    fn array(&mut self, items: &[Value]) -> bool {
        if self.depth >= self.max_depth {
            return false;
        }
        let len = items.len();
        match len {
            0..=15 => self.out.push(0x90 | len as u8),
            16..=0xffff => self.head(0xdc, 2, len as u64),
            _ if u32::try_from(len).is_ok() => self.head(0xdd, 4, len as u64),
            _ => return false,
        }
        self.depth += 1;
        if !items.iter().all(|item| self.value(item)) {
            return false;
        }
        self.depth -= 1;
        true
    }

    fn map(&mut self, entries: &[(Value, Value)]) -> bool {
        if self.depth >= self.max_depth {
            return false;
        }
        let len = entries.len();
        let text = |i: usize| match entries.get(i) {
            Some((Value::Text(s), _)) => s.as_bytes(),
            _ => &[],
        };
        let small = len <= PAIRWISE;
        if !small && !repeated(len, text).is_empty() {
            return false;
        }
        match len {
            0..=15 => self.out.push(0x80 | len as u8),
            16..=0xffff => self.head(0xde, 2, len as u64),
            _ if u32::try_from(len).is_ok() => self.head(0xdf, 4, len as u64),
            _ => return false,
        }
        self.depth += 1;
        let mut seen = 0;
        for (i, (k, v)) in entries.iter().enumerate() {
            let Value::Text(k) = k else {
                return false;
            };
            let k = k.as_bytes();
            if small && repeats_earlier(&mut seen, i, k, text) {
                return false;
            }
            if !self.text(k) || !self.value(v) {
                return false;
            }
        }
        self.depth -= 1;
        true
    }
}
