//! The JSON encoder's plain path, for [`crate::codec::encode_fast`]: a value of null, booleans,
//! integers, float64s, text, arrays and maps with text keys that do not repeat, written
//! compactly without spans, in one tight pass. Its only note is the one on an integer beyond
//! ±2^53 (ids often are), whose path is put together only when one occurs: each container adds
//! its step to the integers found below it as it goes on. Anything else gives up, and the full
//! encoder ([`super::encode_with`]) writes the value: the bytes and notes are the same, this only
//! skips the bookkeeping the full one does for what the plain value never has.

use super::encode::{beyond_2_53, write_f64, write_int, write_text, TWO_POW_53};
use crate::codec::note::{FidelityNote, NoteKind, Notes};
use crate::codec::repeats::{repeated, repeats_earlier, PAIRWISE};
use crate::codec::{Depth, EncodeOptions, Step};
use crate::model::{FloatWidth, Value};

/// The compact JSON text of `value` when it is plain (see the module docs) and nests at most
/// `depth` deep, with its notes; `None` otherwise, or for canonical or pretty output.
pub(crate) fn encode_plain(
    value: &Value,
    options: &EncodeOptions,
    depth: Depth,
) -> Option<(Vec<u8>, Vec<FidelityNote>)> {
    if options.canonical || options.pretty {
        return None;
    }
    let mut w = Plain {
        out: Vec::new(),
        depth: 0,
        max_depth: depth.0,
        beyond: Vec::new(),
    };
    if !w.value(value) {
        return None;
    }
    let mut notes = Notes::new();
    for (n, mut steps) in w.beyond {
        steps.reverse();
        notes.add(NoteKind::IntegerPrecision, Step::path(&steps), || {
            beyond_2_53(n)
        });
    }
    Some((w.out, notes.into_vec()))
}

struct Plain<'v> {
    out: Vec<u8>,
    /// Containers open, at most `max_depth`.
    depth: usize,
    max_depth: usize,
    /// The integers beyond ±2^53 written so far, in document order, each with the steps to it
    /// from the innermost container out (completed as the containers go on).
    beyond: Vec<(i128, Vec<Step<'v>>)>,
}

impl<'v> Plain<'v> {
    /// Adds `step` to the path of every integer beyond ±2^53 found since `mark`.
    #[inline]
    fn step_out(&mut self, mark: usize, step: Step<'v>) {
        if self.beyond.len() > mark {
            self.step_out_slow(mark, step);
        }
    }

    #[cold]
    fn step_out_slow(&mut self, mark: usize, step: Step<'v>) {
        for (_, steps) in self.beyond.get_mut(mark..).unwrap_or_default() {
            steps.push(step);
        }
    }

    /// Writes `v`; `false` when it is not plain.
    fn value(&mut self, v: &'v Value) -> bool {
        match v {
            Value::Null => self.out.extend_from_slice(b"null"),
            Value::Bool(b) => {
                self.out
                    .extend_from_slice(if *b { b"true" as &[u8] } else { b"false" })
            }
            Value::Int(n) => {
                write_int(&mut self.out, *n);
                if n.unsigned_abs() > TWO_POW_53 {
                    self.beyond.push((*n, Vec::new()));
                }
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

    fn array(&mut self, items: &'v [Value]) -> bool {
        if self.depth >= self.max_depth {
            return false;
        }
        self.depth += 1;
        self.out.push(b'[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            let mark = self.beyond.len();
            if !self.value(item) {
                return false;
            }
            self.step_out(mark, Step::Index(i));
        }
        self.out.push(b']');
        self.depth -= 1;
        true
    }

    fn map(&mut self, entries: &'v [(Value, Value)]) -> bool {
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
        for (i, (key, v)) in entries.iter().enumerate() {
            let Value::Text(k) = key else {
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
            let mark = self.beyond.len();
            if !self.value(v) {
                return false;
            }
            self.step_out(mark, Step::Key(key));
        }
        self.out.push(b'}');
        self.depth -= 1;
        true
    }
}
