//! The JSON encoder's plain path, for [`crate::codec::encode_fast`]: a value that needs no note
//! (null, booleans, integers within ±2^53, float64s, text, arrays, maps with text keys that do
//! not repeat), written compactly without spans, in one tight pass. Anything else gives up, and
//! the full encoder ([`super::encode_with`]) writes the value: the bytes are the same, this only
//! skips the bookkeeping the full one does for what the plain value never has.

use super::encode::{write_f64, write_int, write_text, TWO_POW_53};
use crate::codec::repeats::{repeated, repeats_earlier, PAIRWISE};
use crate::codec::{Depth, EncodeOptions};
use crate::model::{FloatWidth, Value};

/// The compact JSON text of `value` when it is plain (see the module docs) and nests at most
/// `depth` deep; `None` otherwise, or for canonical or pretty output.
pub(crate) fn encode_plain(
    value: &Value,
    options: &EncodeOptions,
    depth: Depth,
) -> Option<Vec<u8>> {
    if options.canonical || options.pretty {
        return None;
    }
    let mut w = Plain {
        out: Vec::new(),
        depth: 0,
        max_depth: depth.0,
    };
    w.value(value).then_some(w.out)
}

struct Plain {
    out: Vec<u8>,
    /// Containers open, at most `max_depth`.
    depth: usize,
    max_depth: usize,
}

impl Plain {
    /// Writes `v`; `false` when it is not plain.
    fn value(&mut self, v: &Value) -> bool {
        match v {
            Value::Null => self.out.extend_from_slice(b"null"),
            Value::Bool(b) => {
                self.out
                    .extend_from_slice(if *b { b"true" as &[u8] } else { b"false" })
            }
            Value::Int(n) => {
                if n.unsigned_abs() > TWO_POW_53 {
                    return false;
                }
                write_int(&mut self.out, *n);
            }
            Value::Float(f) => {
                if f.width != FloatWidth::F64 || !f.value.is_finite() {
                    return false;
                }
                write_f64(&mut self.out, f.value);
            }
            Value::Text(s) => write_text(&mut self.out, s),
            Value::Array(items) => return self.array(items),
            Value::Map(entries) => return self.map(entries),
            _ => return false,
        }
        true
    }

    fn array(&mut self, items: &[Value]) -> bool {
        if self.depth >= self.max_depth {
            return false;
        }
        self.depth += 1;
        self.out.push(b'[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            if !self.value(item) {
                return false;
            }
        }
        self.out.push(b']');
        self.depth -= 1;
        true
    }

    fn map(&mut self, entries: &[(Value, Value)]) -> bool {
        if self.depth >= self.max_depth {
            return false;
        }
        let text = |i: usize| match entries.get(i) {
            Some((Value::Text(s), _)) => s.as_bytes(),
            _ => &[],
        };
        let small = entries.len() <= PAIRWISE;
        if !small && !repeated(entries.len(), text).is_empty() {
            return false;
        }
        self.depth += 1;
        self.out.push(b'{');
        let mut seen = 0;
        for (i, (k, v)) in entries.iter().enumerate() {
            let Value::Text(k) = k else {
                return false;
            };
            if small && repeats_earlier(&mut seen, i, k.as_bytes(), text) {
                return false;
            }
            if i > 0 {
                self.out.push(b',');
            }
            write_text(&mut self.out, k);
            self.out.push(b':');
            if !self.value(v) {
                return false;
            }
        }
        self.out.push(b'}');
        self.depth -= 1;
        true
    }
}
