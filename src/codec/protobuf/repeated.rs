//! Grouping the repeated field numbers of a schema-less protobuf value into arrays.
//!
//! Why: read without a schema, a message is a map keyed by field number in wire order, and a
//! field that occurs several times (a repeated field, unpacked) is several entries with the same
//! key. The CLI tree and the GUI show each occurrence with its own bytes, but JSON readers keep
//! only the last of duplicate keys (`json.load`, `JSON.parse`) and MessagePack and CBOR maps
//! should not repeat keys at all. So before such a value is written in another format, every
//! map's entries with the same integer key become one entry, at the first occurrence's place,
//! whose value is the array of the occurrences in wire order (`"2": [{…}, {…}]`); a field that
//! occurs once stays as it is. Each grouping is reported as a note.
//!
//! How: one pass over the owned value with an explicit stack (no recursion over nesting, like
//! the decoders), so nesting costs heap only; paths in notes stop at `MAX_PATH` characters. Keys other than integers are left alone.

use std::collections::HashMap;

use crate::model::Value;

/// What was grouped at one place (a path pattern, `[*]` for array items) for one field number.
struct Grouped {
    path: String,
    field: i128,
    /// Maps in which the field occurred more than once.
    maps: usize,
    /// Occurrences in those maps, in all.
    occurrences: usize,
}

/// The longest path a note names; deeper places are named by their first levels and `…`, so
/// paths cost no more than this per node however deep the value nests.
const MAX_PATH: usize = 120;

/// A path at [`MAX_PATH`], ending in `…`.
fn cut(path: &str) -> String {
    if path.ends_with('…') {
        path.to_string()
    } else {
        format!("{path}…")
    }
}

/// An open container: its remaining children, those already done, and its path pattern.
enum Open {
    Map {
        rest: std::vec::IntoIter<(Value, Value)>,
        done: Vec<(Value, Value)>,
        key: Option<Value>,
        path: String,
    },
    Array {
        rest: std::vec::IntoIter<Value>,
        done: Vec<Value>,
        path: String,
    },
}

/// `value` with every map's repeated integer keys grouped into arrays, and notes saying what was
/// grouped ("field 2 occurs 3 times at $.1: written as an array").
pub fn group_repeated_fields(value: Value) -> (Value, Vec<String>) {
    let mut grouped: Vec<Grouped> = Vec::new();
    let mut index: HashMap<(String, i128), usize> = HashMap::new();
    let mut stack: Vec<Open> = Vec::new();
    let mut next = Some((value, "$".to_string()));
    loop {
        // Open a container, or carry a finished leaf to its parent.
        let mut finished = match next.take() {
            Some((Value::Map(entries), path)) => {
                stack.push(Open::Map {
                    done: Vec::with_capacity(entries.len()),
                    rest: entries.into_iter(),
                    key: None,
                    path,
                });
                None
            }
            Some((Value::Array(items), path)) => {
                stack.push(Open::Array {
                    done: Vec::with_capacity(items.len()),
                    rest: items.into_iter(),
                    path,
                });
                None
            }
            Some((leaf, _)) => Some(leaf),
            None => None,
        };
        loop {
            let Some(top) = stack.last_mut() else {
                return (finished.unwrap_or(Value::Null), notes(&grouped));
            };
            match top {
                Open::Map {
                    rest,
                    done,
                    key,
                    path,
                } => {
                    if let Some(v) = finished.take() {
                        done.push((key.take().unwrap_or(Value::Null), v));
                    }
                    if let Some((k, v)) = rest.next() {
                        let child = match &k {
                            _ if path.len() >= MAX_PATH => cut(path),
                            Value::Int(n) => format!("{path}.{n}"),
                            _ => format!("{path}.*"),
                        };
                        *key = Some(k);
                        next = Some((v, child));
                        break;
                    }
                }
                Open::Array { rest, done, path } => {
                    if let Some(v) = finished.take() {
                        done.push(v);
                    }
                    if let Some(v) = rest.next() {
                        let child = if path.len() >= MAX_PATH {
                            cut(path)
                        } else {
                            format!("{path}[*]")
                        };
                        next = Some((v, child));
                        break;
                    }
                }
            }
            // The top container is complete.
            finished = match stack.pop() {
                Some(Open::Map { done, path, .. }) => {
                    Some(group_map(done, &path, &mut grouped, &mut index))
                }
                Some(Open::Array { done, .. }) => Some(Value::Array(done)),
                None => None,
            };
        }
    }
}

/// One map's entries with repeated integer keys grouped, recording what was grouped.
fn group_map(
    entries: Vec<(Value, Value)>,
    path: &str,
    grouped: &mut Vec<Grouped>,
    index: &mut HashMap<(String, i128), usize>,
) -> Value {
    let mut count: HashMap<i128, usize> = HashMap::new();
    for (k, _) in &entries {
        if let Value::Int(n) = k {
            *count.entry(*n).or_default() += 1;
        }
    }
    if count.values().all(|&c| c < 2) {
        return Value::Map(entries);
    }
    // Where each repeated field's array sits in `out`.
    let mut slot: HashMap<i128, usize> = HashMap::new();
    let mut out: Vec<(Value, Value)> = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        let repeated = match &k {
            Value::Int(n) => count.get(n).copied().unwrap_or(0) > 1,
            _ => false,
        };
        let Value::Int(n) = k else {
            out.push((k, v));
            continue;
        };
        if !repeated {
            out.push((k, v));
            continue;
        }
        match slot.get(&n).and_then(|&i| out.get_mut(i)) {
            Some((_, Value::Array(items))) => items.push(v),
            _ => {
                slot.insert(n, out.len());
                out.push((k, Value::Array(vec![v])));
            }
        }
    }
    let mut fields: Vec<(i128, usize)> = count.into_iter().filter(|&(_, c)| c > 1).collect();
    fields.sort_unstable();
    for (field, times) in fields {
        let key = (path.to_string(), field);
        let i = *index.entry(key).or_insert_with(|| {
            grouped.push(Grouped {
                path: path.to_string(),
                field,
                maps: 0,
                occurrences: 0,
            });
            grouped.len() - 1
        });
        if let Some(g) = grouped.get_mut(i) {
            g.maps += 1;
            g.occurrences += times;
        }
    }
    Value::Map(out)
}

fn notes(grouped: &[Grouped]) -> Vec<String> {
    grouped
        .iter()
        .map(|g| {
            if g.maps == 1 {
                format!(
                    "field {} occurs {} times at {}: written as an array",
                    g.field, g.occurrences, g.path
                )
            } else {
                format!(
                    "field {} occurs more than once in {} messages at {} ({} times in all): each written as an array",
                    g.field, g.maps, g.path, g.occurrences
                )
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(n: i128) -> Value {
        Value::Int(n)
    }

    #[test]
    fn repeated_numbers_become_arrays_and_single_ones_stay() {
        let inner = |x: i128| Value::Map(vec![(int(1), int(x))]);
        let value = Value::Map(vec![
            (
                int(1),
                Value::Map(vec![
                    (int(2), inner(1)),
                    (int(3), int(9)),
                    (int(2), inner(2)),
                    (int(2), inner(3)),
                ]),
            ),
            (int(4), Value::Text("x".into())),
        ]);
        let (out, notes) = group_repeated_fields(value);
        assert_eq!(
            out,
            Value::Map(vec![
                (
                    int(1),
                    Value::Map(vec![
                        (int(2), Value::Array(vec![inner(1), inner(2), inner(3)])),
                        (int(3), int(9)),
                    ])
                ),
                (int(4), Value::Text("x".into())),
            ])
        );
        assert_eq!(
            notes,
            ["field 2 occurs 3 times at $.1: written as an array"]
        );
    }

    #[test]
    fn groupings_in_many_messages_are_one_note() {
        let record = || Value::Map(vec![(int(5), int(1)), (int(5), int(2))]);
        let value = Value::Map(vec![(int(1), record()), (int(1), record())]);
        let (out, notes) = group_repeated_fields(value);
        let grouped = Value::Map(vec![(int(5), Value::Array(vec![int(1), int(2)]))]);
        assert_eq!(
            out,
            Value::Map(vec![(int(1), Value::Array(vec![grouped.clone(), grouped]))])
        );
        assert_eq!(
            notes,
            [
                "field 5 occurs more than once in 2 messages at $.1 (4 times in all): each written as an array",
                "field 1 occurs 2 times at $: written as an array",
            ]
        );
    }

    #[test]
    fn deep_nesting_costs_no_stack() {
        let mut value = int(0);
        for _ in 0..200_000 {
            value = Value::Map(vec![(int(1), value)]);
        }
        let (out, notes) = group_repeated_fields(value);
        assert!(notes.is_empty());
        let mut depth = 0;
        let mut v = &out;
        while let Value::Map(e) = v {
            depth += 1;
            v = &e[0].1;
        }
        assert_eq!(depth, 200_000);
        // Dropped a level at a time, so the drop does not recurse either.
        let mut out = out;
        while let Value::Map(mut e) = out {
            out = e.pop().map(|(_, v)| v).unwrap_or(Value::Null);
        }
    }
}
