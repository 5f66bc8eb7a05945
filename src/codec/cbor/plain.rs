//! The CBOR encoder's plain path, for [`crate::codec::encode_fast`]: a value that needs no note
//! (null, undefined, booleans, integers of up to 64 bits and their negatives, floats that fit
//! their width, text, byte strings, tags, arrays, maps with text keys that do not repeat),
//! written without spans in one tight pass. Anything else gives up, and the full encoder
//! ([`super::encode_with`]) writes the value: the bytes are the same, this only skips the
//! bookkeeping the full one does for what the plain value never has.

use super::encode::{head, write_float};
use crate::codec::repeats::{repeated, repeats_earlier, PAIRWISE};
use crate::codec::{Depth, EncodeOptions, FloatPolicy};
use crate::model::{FloatWidth, Value, INT_MAX, INT_MIN};

/// The CBOR bytes of `value` when it is plain (see the module docs) and nests (containers and
/// tags) at most `depth` deep; `None` otherwise, or for canonical output.
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
    /// Floats at their narrowest exact width.
    shortest: bool,
    /// Containers and tags open, at most `max_depth`.
    depth: usize,
    max_depth: usize,
}

impl Plain {
    /// Writes `v`; `false` when it is not plain.
    fn value(&mut self, v: &Value) -> bool {
        match v {
            Value::Null => self.out.push(0xf6),
            Value::Undefined => self.out.push(0xf7),
            Value::Bool(b) => self.out.push(if *b { 0xf5 } else { 0xf4 }),
            Value::Int(n) => {
                let n = *n;
                if !(INT_MIN..=INT_MAX).contains(&n) {
                    return false;
                }
                if n >= 0 {
                    head(&mut self.out, 0, n as u64);
                } else {
                    head(&mut self.out, 1, (-1 - n) as u64);
                }
            }
            Value::Float(f) => {
                let width = if self.shortest {
                    FloatWidth::narrowest_exact(f.value)
                } else if f.width.holds(f.value) {
                    f.width
                } else {
                    return false;
                };
                write_float(&mut self.out, f.value, width);
            }
            Value::Text(s) => {
                let s = s.as_bytes();
                head(&mut self.out, 3, s.len() as u64);
                self.out.extend_from_slice(s);
            }
            Value::Bytes(b) => {
                head(&mut self.out, 2, b.len() as u64);
                self.out.extend_from_slice(b);
            }
            Value::Tag(t, inner) => {
                if self.depth >= self.max_depth {
                    return false;
                }
                head(&mut self.out, 6, *t);
                self.depth += 1;
                if !self.value(inner) {
                    return false;
                }
                self.depth -= 1;
            }
            Value::Array(items) => {
                if self.depth >= self.max_depth {
                    return false;
                }
                head(&mut self.out, 4, items.len() as u64);
                self.depth += 1;
                if !items.iter().all(|item| self.value(item)) {
                    return false;
                }
                self.depth -= 1;
            }
            Value::Map(entries) => return self.map(entries),
            _ => return false,
        }
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
        head(&mut self.out, 5, len as u64);
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
            head(&mut self.out, 3, k.len() as u64);
            self.out.extend_from_slice(k);
            if !self.value(v) {
                return false;
            }
        }
        self.depth -= 1;
        true
    }
}
