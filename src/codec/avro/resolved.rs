//! Data read with a reader's schema: a document decoded by the writer's schema, made into what
//! the reader sees by a resolution [`Plan`], every node still on the writer's bytes.
//!
//! What the reader sees (the specification's "Schema Resolution"): promoted numbers and text,
//! record fields under the reader's names (found by name or alias), writer fields the reader
//! lacks left out, reader fields the writer lacks given the reader's default, enum symbols
//! mapped (or the reader's enum default), union branches chosen.
//!
//! Spans: a value read from the writer's bytes keeps their span. A default has no bytes: its
//! nodes are empty spans at the end of its record. A record's fields come in the order of their
//! bytes (the writer's order), defaults last: the span tree runs in byte order, and a record's
//! meaning does not depend on the order of its fields.

use super::framing::{read_long, VarintError};
use std::collections::HashMap;

use super::resolve::{Action, FieldMatch, FieldSource, Plan, Step};
use super::AvroSchema;
use crate::codec::{Document, Format};
use crate::model::{Float, Kind, NodeId, Path, Segment, Span, SpanTree, SpanTreeBuilder, Value};

/// `writer` (decoded from `bytes` by the writer's schema, whole) as `reader` reads it by `plan`.
/// With `run`, the document's root is an array of datums (a container block) and the plan
/// applies to each. Errors say where the data and the plan disagree ([`ReadWithError`]), which a
/// plan made from the same writer's schema as the data never does.
pub fn read_with(
    writer: &Document,
    bytes: &[u8],
    plan: &Plan,
    reader: &AvroSchema,
    run: bool,
) -> Result<Document, ReadWithError> {
    let Some(root) = writer.spans.root() else {
        return Ok(Document {
            format: Format::Avro,
            value: writer.value.clone(),
            spans: writer.spans.clone(),
        });
    };
    let mut r = Resolver {
        bytes,
        tree: &writer.spans,
        plan,
        reader,
        out: SpanTreeBuilder::new(),
    };
    let value = if run {
        let Value::Array(items) = &writer.value else {
            return Err(ReadWithError::NotARun);
        };
        let node = r.tree.node(root);
        r.out
            .open(crate::model::Kind::Array, Segment::Root, None, 0, 0);
        let mut out = Vec::with_capacity(items.len());
        for (i, (child, item)) in r.tree.children(root).zip(items).enumerate() {
            let segment = Segment::Index(u32::try_from(i).unwrap_or(u32::MAX));
            out.push(r.step(&plan.root, child, item, segment, None)?);
        }
        r.out.close(node.payload.end, node.span.end);
        Value::Array(out)
    } else {
        r.step(&plan.root, root, &writer.value, Segment::Root, None)?
    };
    Ok(Document {
        format: Format::Avro,
        value,
        spans: r.out.finish(),
    })
}

/// Where the writer's document and the plan of [`read_with`] disagree: each names the node (its
/// path and first byte) and what the plan expected there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReadWithError {
    /// The document of a run of datums (a container block) is not an array.
    #[error("a run of datums that is not an array")]
    NotARun,
    /// The plan promotes the value to a type it cannot be promoted to.
    #[error("at {path} (byte {byte}): {kind:?} cannot be promoted to {to}")]
    NotPromoted {
        /// The node's path.
        path: Path,
        /// The node's first byte.
        byte: usize,
        /// What the writer's value is.
        kind: Kind,
        /// The reader's type.
        to: &'static str,
    },
    /// The plan reads an array where the value is none.
    #[error("at {path} (byte {byte}): the plan reads an array here")]
    NotAnArray {
        /// The node's path.
        path: Path,
        /// The node's first byte.
        byte: usize,
    },
    /// The plan reads a map where the value is none.
    #[error("at {path} (byte {byte}): the plan reads a map here")]
    NotAMap {
        /// The node's path.
        path: Path,
        /// The node's first byte.
        byte: usize,
    },
    /// The plan reads a record where the value is no map.
    #[error("at {path} (byte {byte}): the plan reads record {record} here")]
    NotARecord {
        /// The node's path.
        path: Path,
        /// The node's first byte.
        byte: usize,
        /// The reader's record name.
        record: String,
    },
    /// The value is an enum symbol the plan does not map.
    #[error("at {path} (byte {byte}): the writer's enum has no symbol {symbol:?}")]
    NoSymbol {
        /// The node's path.
        path: Path,
        /// The node's first byte.
        byte: usize,
        /// The symbol.
        symbol: String,
    },
    /// The union's branch index at the node's first byte could not be read.
    #[error("at {path} (byte {byte}): the union's branch index: {source}")]
    BranchIndex {
        /// The node's path.
        path: Path,
        /// The node's first byte.
        byte: usize,
        /// Why the varint could not be read.
        source: VarintError,
    },
    /// The plan has no step for the writer's union branch the bytes name.
    #[error("at {path} (byte {byte}): no plan for the writer's branch {index}")]
    NoBranchPlan {
        /// The node's path.
        path: Path,
        /// The node's first byte.
        byte: usize,
        /// The branch index read.
        index: i64,
    },
    /// The plan names a record plan it does not have.
    #[error("record plan {index} is missing")]
    NoRecordPlan {
        /// The record plan's index.
        index: usize,
    },
}

struct Resolver<'a> {
    bytes: &'a [u8],
    tree: &'a SpanTree,
    plan: &'a Plan,
    reader: &'a AvroSchema,
    out: SpanTreeBuilder,
}

impl Resolver<'_> {
    fn step(
        &mut self,
        step: &Step,
        id: NodeId,
        value: &Value,
        segment: Segment,
        key: Option<Span>,
    ) -> Result<Value, ReadWithError> {
        let node = self.tree.node(id);
        let path = || self.tree.path(id);
        let byte = node.span.start;
        match &step.action {
            Action::Same { .. } | Action::Fixed { .. } => {
                self.copy(value, id, segment, key);
                Ok(value.clone())
            }
            Action::Promote { to, .. } => {
                let promoted = promote(value, to).ok_or_else(|| ReadWithError::NotPromoted {
                    path: path(),
                    byte,
                    kind: value.kind(),
                    to,
                })?;
                self.copy(&promoted, id, segment, key);
                Ok(promoted)
            }
            Action::Array(inner) => {
                let Value::Array(items) = value else {
                    return Err(ReadWithError::NotAnArray { path: path(), byte });
                };
                self.out.open(
                    crate::model::Kind::Array,
                    segment,
                    key,
                    node.span.start,
                    node.header_end,
                );
                let mut out = Vec::with_capacity(items.len());
                for (i, (child, item)) in self.tree.children(id).zip(items).enumerate() {
                    let segment = Segment::Index(u32::try_from(i).unwrap_or(u32::MAX));
                    out.push(self.step(inner, child, item, segment, None)?);
                }
                self.out.close(node.payload.end, node.span.end);
                Ok(Value::Array(out))
            }
            Action::Map(inner) => {
                let Value::Map(entries) = value else {
                    return Err(ReadWithError::NotAMap { path: path(), byte });
                };
                self.out.open(
                    crate::model::Kind::Map,
                    segment,
                    key,
                    node.span.start,
                    node.header_end,
                );
                let mut out = Vec::with_capacity(entries.len());
                for (child, (k, v)) in self.tree.children(id).zip(entries) {
                    let seg = self.out.segment_for_key(k);
                    let key_span = self.tree.node(child).key;
                    out.push((k.clone(), self.step(inner, child, v, seg, key_span)?));
                }
                self.out.close(node.payload.end, node.span.end);
                Ok(Value::Map(out))
            }
            Action::Record(index) => self.record(*index, id, value, segment, key),
            Action::Enum(plan) => {
                let symbol = value.as_str().unwrap_or_default();
                let mapped = plan
                    .symbols
                    .iter()
                    .find(|s| s.symbol == symbol)
                    .ok_or_else(|| ReadWithError::NoSymbol {
                        path: path(),
                        byte,
                        symbol: symbol.to_string(),
                    })?;
                let read = Value::text(mapped.reader_symbol.as_str());
                self.copy(&read, id, segment, key);
                Ok(read)
            }
            Action::ReaderBranch { step, .. } => self.step(step, id, value, segment, key),
            Action::WriterUnion(branches) => {
                // The writer's union wrote its branch index first: the node starts with it.
                let (index, _) = read_long(self.bytes, node.span.start).map_err(|source| {
                    ReadWithError::BranchIndex {
                        path: path(),
                        byte,
                        source,
                    }
                })?;
                let branch = branches
                    .iter()
                    .find(|b| i64::try_from(b.writer_branch).ok() == Some(index))
                    .ok_or_else(|| ReadWithError::NoBranchPlan {
                        path: path(),
                        byte,
                        index,
                    })?;
                self.step(&branch.step, id, value, segment, key)
            }
        }
    }

    fn record(
        &mut self,
        index: usize,
        id: NodeId,
        value: &Value,
        segment: Segment,
        key: Option<Span>,
    ) -> Result<Value, ReadWithError> {
        let node = self.tree.node(id);
        let plan = self
            .plan
            .records
            .get(index)
            .ok_or(ReadWithError::NoRecordPlan { index })?;
        let Value::Map(fields) = value else {
            return Err(ReadWithError::NotARecord {
                path: self.tree.path(id),
                byte: node.span.start,
                record: plan.reader_name.clone(),
            });
        };
        let reader_fields = match self.reader.named(&plan.reader_name) {
            Some(super::RawSchema::Record(r)) => Some(r),
            _ => None,
        };
        self.out.open(
            crate::model::Kind::Map,
            segment,
            key,
            node.span.start,
            node.header_end,
        );
        let children: Vec<NodeId> = self.tree.children(id).collect();
        let mut out = Vec::with_capacity(plan.fields.len());
        // The writer's fields in byte order, under the reader's names; the skipped left out.
        for (writer_index, ((_, field_value), child)) in fields.iter().zip(&children).enumerate() {
            let read_by = plan.fields.iter().find_map(|f| match &f.source {
                FieldSource::Writer { index, step, .. } if *index == writer_index => {
                    Some((f.name.as_str(), step))
                }
                _ => None,
            });
            if let Some((name, step)) = read_by {
                let seg = self.out.key(name);
                out.push((
                    Value::text(name),
                    self.step(step, *child, field_value, seg, None)?,
                ));
            }
        }
        // The reader's fields the writer lacks: their defaults, with no bytes.
        let end = node.payload.end;
        for field in &plan.fields {
            if let FieldSource::Default(json) = &field.source {
                let value = match reader_fields.and_then(|r| r.fields.get(field.reader_index)) {
                    Some(f) => super::encode::default_value(json, self.reader, &f.schema),
                    None => {
                        super::encode::default_value(json, self.reader, &super::RawSchema::Null)
                    }
                };
                let seg = self.out.key(&field.name);
                self.emit(&value, seg, end);
                out.push((Value::text(field.name.as_str()), value));
            }
        }
        self.out.close(node.payload.end, node.span.end);
        Ok(Value::Map(out))
    }

    /// A leaf read from the writer's node `id`, its bytes kept.
    fn copy(&mut self, value: &Value, id: NodeId, segment: Segment, key: Option<Span>) {
        let node = self.tree.node(id);
        self.out.leaf(
            value.kind(),
            segment,
            key,
            node.span,
            node.header_end,
            node.payload,
        );
    }

    /// A value with no bytes (a default), as empty spans at `at`.
    fn emit(&mut self, value: &Value, segment: Segment, at: usize) {
        let here = Span::empty(at);
        match value {
            Value::Array(items) => {
                self.out.open(value.kind(), segment, None, at, at);
                for (i, item) in items.iter().enumerate() {
                    let seg = Segment::Index(u32::try_from(i).unwrap_or(u32::MAX));
                    self.emit(item, seg, at);
                }
                self.out.close(at, at);
            }
            Value::Map(entries) => {
                self.out.open(value.kind(), segment, None, at, at);
                for (k, v) in entries {
                    let seg = self.out.segment_for_key(k);
                    self.emit(v, seg, at);
                }
                self.out.close(at, at);
            }
            _ => {
                self.out.leaf(value.kind(), segment, None, here, at, here);
            }
        }
    }
}

/// `value` promoted to the reader's type `to` (`long`, `float`, `double`, `string`, `bytes`).
fn promote(value: &Value, to: &str) -> Option<Value> {
    Some(match (value, to) {
        (Value::Int(n), "long" | "int") => Value::Int(*n),
        (Value::Int(n), "float") => Value::Float(Float::f32(*n as f32)),
        (Value::Int(n), "double") => Value::Float(Float::f64(*n as f64)),
        (Value::Float(f), "double") => Value::Float(Float::f64(f.value)),
        (Value::Float(f), "float") => Value::Float(Float::f32(f.value as f32)),
        (Value::Bytes(b), "string") => Value::text(String::from_utf8_lossy(b).as_ref()),
        (Value::Text(t), "bytes") => Value::Bytes(t.as_bytes().to_vec()),
        _ => return None,
    })
}

/// Which rule of the schema resolution read each node of a document read with a reader's
/// schema ([`read_with`]): "same name; promoted int → long", "default: 0", "alias of old_name;
/// same type string", "enum default OTHER".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeRules {
    /// Each distinct rule once, and whether it reads the value as written (see [`Step::plain`]).
    texts: Vec<(String, bool)>,
    /// For each node, its rule's index in `texts` ([`NodeRules::NONE`]: no rule, such as a
    /// container block's array of datums).
    of_node: Vec<u32>,
}

impl NodeRules {
    const NONE: u32 = u32::MAX;

    /// The rule that read node `id`, and whether it reads the value as written.
    pub fn rule(&self, id: NodeId) -> Option<(&str, bool)> {
        let index = *self.of_node.get(id.index())?;
        self.texts
            .get(usize::try_from(index).ok()?)
            .map(|(text, plain)| (text.as_str(), *plain))
    }

    /// The rule of node `id` where it does more than read the value as written.
    pub fn changed(&self, id: NodeId) -> Option<&str> {
        self.rule(id)
            .filter(|(_, plain)| !plain)
            .map(|(text, _)| text)
    }

    /// Gives `id` the rule `text`.
    fn set(&mut self, id: NodeId, text: String, plain: bool, interned: &mut HashMap<String, u32>) {
        let index = match interned.get(&text) {
            Some(&i) => i,
            None => {
                let i = u32::try_from(self.texts.len()).unwrap_or(Self::NONE - 1);
                interned.insert(text.clone(), i);
                self.texts.push((text, plain));
                i
            }
        };
        if let Some(slot) = self.of_node.get_mut(id.index()) {
            *slot = index;
        }
    }
}

/// Words a field or a reader's union puts before a step's own rule ("same name"), and whether
/// they leave the value as written.
type Words = (String, bool);

/// The rule of each node of `spans`, the tree [`read_with`] made from `bytes` by `plan` (`run`:
/// its root is the array of a container block's datums). A node takes its record field's rule
/// with its own ("same name; promoted int → long"); the nodes of a default take the default's.
/// The walk follows the tree, not the bytes: a writer's union branch and an enum symbol are the
/// only values it reads again, by their index at the node's first byte.
pub fn node_rules(spans: &SpanTree, bytes: &[u8], plan: &Plan, run: bool) -> NodeRules {
    let mut rules = NodeRules {
        texts: Vec::new(),
        of_node: vec![NodeRules::NONE; spans.len()],
    };
    let Some(root) = spans.root() else {
        return rules;
    };
    let mut interned = HashMap::new();
    // (step, node, the words its field or union put before the step's own): a work list, as
    // deep as the tree is wide.
    let mut work: Vec<(&Step, NodeId, Option<Words>)> = if run {
        spans
            .children(root)
            .map(|c| (&plan.root, c, None))
            .collect()
    } else {
        vec![(&plan.root, root, None)]
    };
    while let Some((step, id, before)) = work.pop() {
        let node = spans.node(id);
        let own = plan.rule_of(step);
        let (text, plain) = match &before {
            Some((words, plain)) => (format!("{words}; {own}"), *plain && step.plain),
            None => (own, step.plain),
        };
        match &step.action {
            Action::Same { .. } | Action::Fixed { .. } | Action::Promote { .. } => {
                rules.set(id, text, plain, &mut interned);
            }
            Action::Enum(enum_plan) => {
                // A symbol read as another is its own rule ("enum default OTHER").
                let symbol = read_long(bytes, node.payload.start)
                    .ok()
                    .and_then(|(i, _)| usize::try_from(i).ok())
                    .and_then(|i| enum_plan.symbols.iter().find(|s| s.writer_index == i));
                match symbol.filter(|s| s.symbol != s.reader_symbol) {
                    Some(s) => rules.set(
                        id,
                        format!(
                            "{text}; {} read as the reader's enum default {}",
                            s.symbol, s.reader_symbol
                        ),
                        false,
                        &mut interned,
                    ),
                    None => rules.set(id, text, plain, &mut interned),
                }
            }
            Action::Array(inner) | Action::Map(inner) => {
                rules.set(id, text, plain, &mut interned);
                work.extend(spans.children(id).map(|c| (&**inner, c, None)));
            }
            // The same node, read by the reader's union branch: the branch's words, then the
            // value's rule.
            Action::ReaderBranch { step: inner, .. } => work.push((inner, id, Some((text, false)))),
            // The same node, read by the plan of the branch the writer chose (its index is the
            // node's first byte); the union adds no words.
            Action::WriterUnion(branches) => {
                let chosen = read_long(bytes, node.span.start)
                    .ok()
                    .and_then(|(i, _)| usize::try_from(i).ok())
                    .and_then(|i| branches.iter().find(|b| b.writer_branch == i));
                match chosen {
                    Some(b) => work.push((&b.step, id, before)),
                    None => rules.set(id, text, plain, &mut interned),
                }
            }
            Action::Record(index) => {
                let Some(record) = plan.records.get(*index) else {
                    rules.set(id, text, plain, &mut interned);
                    continue;
                };
                // The writer's fields it leaves out have no node: the record says so.
                if record.skipped.is_empty() {
                    rules.set(id, text, plain, &mut interned);
                } else {
                    let names: Vec<&str> = record.skipped.iter().map(|f| f.name.as_str()).collect();
                    let text = format!("{text}; the writer's {} skipped", names.join(", "));
                    rules.set(id, text, false, &mut interned);
                }
                for child in spans.children(id) {
                    let Segment::Key(k) = spans.node(child).segment else {
                        continue;
                    };
                    let name = spans.key_text(k);
                    let Some(field) = record.fields.iter().find(|f| f.name == name) else {
                        continue;
                    };
                    match &field.source {
                        FieldSource::Writer {
                            step, matched_by, ..
                        } => {
                            let by_name = *matched_by == FieldMatch::Name;
                            work.push((step, child, Some((field.rule.clone(), by_name))));
                        }
                        // A default has no bytes: its nodes all take its rule.
                        FieldSource::Default(json) => {
                            let text = format!("{}: {json}", field.rule);
                            rules.set(child, text, false, &mut interned);
                            let inside = format!("in the default of {name}");
                            let end = usize::try_from(spans.subtree_end(child)).unwrap_or(0);
                            for n in child.index() + 1..end {
                                let n = NodeId(u32::try_from(n).unwrap_or(u32::MAX));
                                rules.set(n, inside.clone(), false, &mut interned);
                            }
                        }
                    }
                }
            }
        }
    }
    rules
}
