//! Bytes per field: every encoded byte attributed to the field path that owns it.
//!
//! This is where a user sees that JSON spends a third of its bytes repeating key names and that
//! protobuf pays one byte per tag. [`field_costs`] walks [`SpanTree::runs`] (which covers every
//! byte of the buffer exactly once) and adds each run's length to the *path pattern* of the node
//! that owns it (`$.data[*].user_id`: array indices become `[*]`, so all records aggregate into
//! one row), split by role:
//!
//! - **key**: the map key or protobuf tag naming the field;
//! - **header**: type markers, lengths, opening quotes and brackets;
//! - **value**: the value's own bytes (digits, text, float bits);
//! - **structure**: separators, colons, closing quotes and brackets, whitespace between items.
//!
//! Header + structure is the *overhead* column of reports. Bytes between items of a container
//! (JSON commas, the colon after a key) belong to that container's row, as `runs` assigns them.
//! Bytes that no node holds (whitespace before or after the root, trailing data) go to an
//! explicit [`OUTSIDE`] row, so the rows always sum to the buffer's length exactly.

use std::collections::HashMap;

use serde::Serialize;

use crate::codec::Format;
use crate::model::{ByteRole, Path, PathSegment, Segment, SpanTree};

/// The row for bytes no node holds.
pub const OUTSIDE: &str = "(outside)";

/// The bytes one path pattern takes in one buffer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldCost {
    /// The path pattern (`$.data[*].user_id`), or [`OUTSIDE`].
    pub pattern: String,
    /// How many nodes matched the pattern.
    pub nodes: usize,
    /// Key (or tag) bytes.
    pub key: usize,
    /// Header bytes: type markers, lengths, opening quotes and brackets.
    pub header: usize,
    /// Value bytes.
    pub value: usize,
    /// Structure bytes: separators, closing brackets and quotes, whitespace.
    pub structure: usize,
}

impl FieldCost {
    fn new(pattern: String) -> FieldCost {
        FieldCost {
            pattern,
            nodes: 0,
            key: 0,
            header: 0,
            value: 0,
            structure: 0,
        }
    }

    /// All bytes of the row.
    pub fn total(&self) -> usize {
        self.key + self.header + self.value + self.structure
    }

    /// Header plus structure: what is neither a key nor the value itself.
    pub fn overhead(&self) -> usize {
        self.header + self.structure
    }
}

/// Bytes per field pattern of one encoded buffer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldCosts {
    /// The format of the buffer.
    #[serde(serialize_with = "super::ser_format")]
    pub format: Format,
    /// The buffer's length; the rows sum to it.
    pub total: usize,
    /// One row per pattern, in order of first appearance (pre-order), [`OUTSIDE`] last if any.
    pub fields: Vec<FieldCost>,
}

impl FieldCosts {
    /// The rows summed: key, header, value, structure bytes of the whole buffer.
    pub fn by_role(&self) -> FieldCost {
        let mut sum = FieldCost::new("(all)".into());
        for f in &self.fields {
            sum.nodes += f.nodes;
            sum.key += f.key;
            sum.header += f.header;
            sum.value += f.value;
            sum.structure += f.structure;
        }
        sum
    }

    /// The row of `pattern`, if present.
    pub fn get(&self, pattern: &str) -> Option<&FieldCost> {
        self.fields.iter().find(|f| f.pattern == pattern)
    }
}

/// Attributes every byte of a buffer of `len` bytes with span tree `spans` to its path pattern.
pub fn field_costs(format: Format, len: usize, spans: &SpanTree) -> FieldCosts {
    let nodes = spans.nodes();
    // Pattern id of each node; patterns interned by (parent pattern, segment with indices as *).
    let mut node_pattern: Vec<usize> = Vec::with_capacity(nodes.len());
    let mut interned: HashMap<(usize, Segment), usize> = HashMap::new();
    let mut paths: Vec<Path> = Vec::new();
    let mut rows: Vec<FieldCost> = Vec::new();
    for n in nodes {
        let id = match n.parent {
            None => {
                if rows.is_empty() {
                    paths.push(Path::root());
                    rows.push(FieldCost::new(Path::root().to_string()));
                }
                0
            }
            Some(parent) => {
                let parent_pattern = node_pattern.get(parent.index()).copied().unwrap_or(0);
                let segment = match n.segment {
                    Segment::Index(_) => Segment::Index(0),
                    s => s,
                };
                *interned
                    .entry((parent_pattern, segment))
                    .or_insert_with(|| {
                        let seg = match n.segment {
                            Segment::Index(_) => Some(PathSegment::AnyIndex),
                            Segment::Key(k) => {
                                Some(PathSegment::Key(spans.key_text(k).to_string()))
                            }
                            Segment::OtherKey(k) => {
                                Some(PathSegment::OtherKey(spans.key_text(k).to_string()))
                            }
                            Segment::Root => None,
                        };
                        let base = paths.get(parent_pattern).cloned().unwrap_or_default();
                        let path = match seg {
                            Some(s) => base.child(s),
                            None => base,
                        };
                        rows.push(FieldCost::new(path.to_string()));
                        paths.push(path);
                        rows.len() - 1
                    })
            }
        };
        node_pattern.push(id);
        if let Some(row) = rows.get_mut(id) {
            row.nodes += 1;
        }
    }
    let mut outside = FieldCost::new(OUTSIDE.into());
    for run in spans.runs(len) {
        let row = match run.node.and_then(|id| node_pattern.get(id.index())) {
            Some(&p) => match rows.get_mut(p) {
                Some(r) => r,
                None => &mut outside,
            },
            None => &mut outside,
        };
        let n = run.span.len();
        match run.role {
            ByteRole::Key => row.key += n,
            ByteRole::Header => row.header += n,
            ByteRole::Value => row.value += n,
            ByteRole::Structure => row.structure += n,
        }
    }
    if outside.total() > 0 {
        rows.push(outside);
    }
    FieldCosts {
        format,
        total: len,
        fields: rows,
    }
}

#[cfg(test)]
mod tests;
