//! `Debug` for [`Value`]: the derived format, cut off below [`DEBUG_DEPTH`] levels of nesting.
//!
//! A derived `Debug` recurses once per level and needs far more stack per level than the
//! decoders allow values to nest, so a value built by hand a million levels deep would overflow
//! the stack when printed (in a log line, a failing assertion). Below [`DEBUG_DEPTH`] levels the
//! rest of a value prints as `…`; above it the output is exactly what `#[derive(Debug)]` gives.

use std::fmt;

use super::Value;

/// Levels of nesting `{:?}` prints before the rest of a value shows as `…`.
pub const DEBUG_DEPTH: usize = 200;

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        At {
            value: self,
            depth: 0,
        }
        .fmt(f)
    }
}

/// A value at some depth of the one being printed.
struct At<'a> {
    value: &'a Value,
    depth: usize,
}

/// Array items, at the depth of the array's children.
struct Items<'a>(&'a [Value], usize);

/// Map entries as `(key, value)` tuples, at the depth of the map's children.
struct Entries<'a>(&'a [(Value, Value)], usize);

impl fmt::Debug for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.depth >= DEBUG_DEPTH {
            return f.write_str("…");
        }
        let inner = self.depth + 1;
        match self.value {
            Value::Null => f.write_str("Null"),
            Value::Undefined => f.write_str("Undefined"),
            Value::Bool(b) => f.debug_tuple("Bool").field(b).finish(),
            Value::Int(n) => f.debug_tuple("Int").field(n).finish(),
            Value::BigInt(n) => f.debug_tuple("BigInt").field(n).finish(),
            Value::Float(x) => f.debug_tuple("Float").field(x).finish(),
            Value::Decimal(s) => f.debug_tuple("Decimal").field(s).finish(),
            Value::Text(s) => f.debug_tuple("Text").field(s).finish(),
            Value::Bytes(b) => f.debug_tuple("Bytes").field(b).finish(),
            Value::Array(items) => f.debug_tuple("Array").field(&Items(items, inner)).finish(),
            Value::Map(entries) => f
                .debug_tuple("Map")
                .field(&Entries(entries, inner))
                .finish(),
            Value::Tag(tag, value) => f
                .debug_tuple("Tag")
                .field(tag)
                .field(&At {
                    value,
                    depth: inner,
                })
                .finish(),
            Value::Simple(n) => f.debug_tuple("Simple").field(n).finish(),
            Value::Ext(t, b) => f.debug_tuple("Ext").field(t).field(b).finish(),
            Value::Timestamp(t) => f.debug_tuple("Timestamp").field(t).finish(),
            Value::Raw(r) => f.debug_tuple("Raw").field(r).finish(),
        }
    }
}

impl fmt::Debug for Items<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|value| At {
                value,
                depth: self.1,
            }))
            .finish()
    }
}

impl fmt::Debug for Entries<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_list();
        for (k, v) in self.0 {
            list.entry(&(
                At {
                    value: k,
                    depth: self.1,
                },
                At {
                    value: v,
                    depth: self.1,
                },
            ));
        }
        list.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Timestamp;

    /// What `#[derive(Debug)]` writes, spelled out, for every variant.
    #[test]
    fn shallow_values_print_as_derived() {
        let v = Value::Map(vec![
            (
                Value::text("a"),
                Value::Array(vec![Value::Null, Value::Bool(true)]),
            ),
            (Value::Int(1), Value::Tag(1, Box::new(Value::Int(-2)))),
            (Value::Bytes(vec![1]), Value::Ext(5, vec![2])),
            (Value::Undefined, Value::Simple(16)),
            (
                Value::Decimal("1e400".into()),
                Value::Timestamp(Timestamp {
                    seconds: 1,
                    nanos: 2,
                }),
            ),
        ]);
        let expected = "Map([(Text(\"a\"), Array([Null, Bool(true)])), (Int(1), Tag(1, Int(-2))), \
                        (Bytes([1]), Ext(5, [2])), (Undefined, Simple(16)), \
                        (Decimal(\"1e400\"), Timestamp(Timestamp { seconds: 1, nanos: 2 }))])";
        assert_eq!(format!("{v:?}"), expected);
        assert_eq!(
            format!("{:#?}", Value::Array(vec![Value::Int(1)])),
            "Array(\n    [\n        Int(\n            1,\n        ),\n    ],\n)"
        );
    }

    #[test]
    fn nesting_past_the_depth_prints_an_ellipsis() {
        let mut v = Value::Int(7);
        for _ in 0..DEBUG_DEPTH {
            v = Value::Array(vec![v]);
        }
        let shown = format!("{v:?}");
        assert!(shown.ends_with(&format!("[…]{}", ")]".repeat(DEBUG_DEPTH - 1) + ")")));
        assert!(!shown.contains("Int(7)"));
        let mut shallow = Value::Int(7);
        for _ in 0..DEBUG_DEPTH - 1 {
            shallow = Value::Array(vec![shallow]);
        }
        assert!(format!("{shallow:?}").contains("[Int(7)]"));
    }
}
