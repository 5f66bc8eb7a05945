//! Resolution plans: how data written with one Avro schema is read with another.
//!
//! This follows the "Schema Resolution" section of the Avro specification. A [`Plan`]
//! says, for every place in the reader's schema, where its value comes from in the
//! writer's data: the same type, a promoted type, a record field matched by name or
//! alias, the reader's default, an enum symbol or the enum default, or a union branch.
//! A plan is only made when every value the writer can produce is readable; otherwise
//! [`plan`] returns a [`ResolveError`] naming the path and the rule that is broken.
//!
//! Named types may be recursive. Each (writer record, reader record) pair is planned once
//! and stored in [`Plan::records`]; [`Action::Record`] refers to it by index, so a plan is
//! finite and the walk never goes deeper than the nesting of the two schemas.

use std::collections::HashMap;
use std::fmt;

use apache_avro::schema::{
    DecimalSchema, EnumSchema, FixedSchema, InnerDecimalSchema, RecordSchema, UnionSchema,
    UuidSchema,
};
use apache_avro::Schema;

/// A rule of the specification's "Schema Resolution" section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// The two schemas must be of matching types.
    MatchingTypes,
    /// A writer's primitive type may be promoted to a wider reader type.
    Promotion,
    /// Named types must agree on their unqualified name, or the reader must alias the writer's.
    NamesMatch,
    /// Fixed types must have the same size.
    FixedSize,
    /// Decimals must agree on precision and scale.
    DecimalParameters,
    /// A writer's enum symbol missing from the reader needs the reader's enum default.
    EnumSymbol,
    /// A reader field the writer lacks needs a default value.
    FieldDefault,
    /// A writer field the reader lacks is ignored.
    WriterFieldIgnored,
    /// A writer's value is read by the first branch of the reader's union that can read it.
    ReaderUnion,
    /// Every branch of the writer's union must be readable by the reader.
    WriterUnion,
    /// A named reference must name a type defined in the same schema.
    UnknownName,
}

impl Rule {
    /// The rule in a plain sentence, after the specification's wording.
    pub fn text(self) -> &'static str {
        match self {
            Rule::MatchingTypes => {
                "the reader's and the writer's schemas must match: the same primitive type, or the same kind of complex type"
            }
            Rule::Promotion => {
                "the writer's value may be promoted: int to long, float or double; long to float or double; float to double; string to bytes; bytes to string"
            }
            Rule::NamesMatch => {
                "records, enums and fixed types must have the same unqualified name, or the reader must list the writer's name among its aliases"
            }
            Rule::FixedSize => "fixed types must have the same size",
            Rule::DecimalParameters => "decimals match only if their precision and scale are equal",
            Rule::EnumSymbol => {
                "a writer's symbol that the reader's enum lacks is read as the reader's enum default; without a default it is an error"
            }
            Rule::FieldDefault => {
                "a field of the reader's record that the writer's record lacks must have a default value, which is used instead"
            }
            Rule::WriterFieldIgnored => {
                "a field of the writer's record that the reader's record lacks is ignored"
            }
            Rule::ReaderUnion => {
                "the first branch of the reader's union that matches the writer's schema is used; if none matches it is an error"
            }
            Rule::WriterUnion => {
                "the branch the writer selected must be readable by the reader's schema, so every branch of the writer's union must be"
            }
            Rule::UnknownName => {
                "a reference must name a record, enum or fixed type defined earlier"
            }
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

/// Why a writer's schema cannot be read with a reader's schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("At {}: {message}. Rule: {rule}.", display_path(.path))]
pub struct ResolveError {
    /// Where in the reader's schema the problem is, such as `Order.items[].price`.
    pub path: String,
    /// The rule of the specification that is broken.
    pub rule: Rule,
    /// What is wrong, in a sentence.
    pub message: String,
}

/// How a path is shown in messages: the empty path is the whole schema.
pub(crate) fn display_path(path: &str) -> &str {
    if path.is_empty() {
        "the top level"
    } else {
        path
    }
}

/// A complete resolution plan for one (writer, reader) pair of schemas.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The plan for the top-level value.
    pub root: Step,
    /// Every (writer record, reader record) pair met, planned once; [`Action::Record`] indexes it.
    pub records: Vec<RecordPlan>,
}

impl Plan {
    /// Which rule reads each place of the reader's schema, in schema order: `(path, rule)`, with
    /// the writer's fields the reader skips and the enum symbols it maps to another. A record
    /// is listed once however often it recurs.
    pub fn rules(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut seen = vec![false; self.records.len()];
        self.list(&self.root, &mut out, &mut seen);
        out
    }

    /// `step`'s own line, then its children's.
    fn list(&self, step: &Step, out: &mut Vec<(String, String)>, seen: &mut [bool]) {
        out.push((display_path(&step.path).to_string(), self.rule_of(step)));
        self.children(step, out, seen);
    }

    /// The words for `step`'s rule: a record's own ("record Order, alias of OldOrder").
    pub(crate) fn rule_of(&self, step: &Step) -> String {
        match &step.action {
            Action::Record(index) => self
                .records
                .get(*index)
                .map_or_else(|| step.rule.clone(), |r| r.rule.clone()),
            _ => step.rule.clone(),
        }
    }

    /// The lines of what `step` holds: a record's fields (a record once), array items, map
    /// values, union branches, the enum symbols read as another.
    fn children(&self, step: &Step, out: &mut Vec<(String, String)>, seen: &mut [bool]) {
        match &step.action {
            Action::Record(index) => {
                let Some(record) = self.records.get(*index) else {
                    return;
                };
                if std::mem::replace(&mut seen[*index], true) {
                    return;
                }
                for field in &record.fields {
                    let at = join(&record.path, &field.name);
                    match &field.source {
                        FieldSource::Writer { step, .. } => {
                            out.push((at, format!("{}; {}", field.rule, self.rule_of(step))));
                            self.children(step, out, seen);
                        }
                        FieldSource::Default(json) => {
                            out.push((at, format!("{}: {json}", field.rule)));
                        }
                    }
                }
                for skipped in &record.skipped {
                    out.push((join(&record.path, &skipped.name), skipped.rule.clone()));
                }
            }
            Action::Array(inner)
            | Action::Map(inner)
            | Action::ReaderBranch { step: inner, .. } => {
                self.list(inner, out, seen);
            }
            Action::WriterUnion(branches) => {
                for b in branches {
                    self.list(&b.step, out, seen);
                }
            }
            Action::Enum(plan) => {
                for s in plan.symbols.iter().filter(|s| s.symbol != s.reader_symbol) {
                    out.push((
                        format!("{} {}", display_path(&step.path), s.symbol),
                        s.rule.clone(),
                    ));
                }
            }
            Action::Same { .. } | Action::Promote { .. } | Action::Fixed { .. } => {}
        }
    }
}

/// `record.field`, or `field` at the top.
fn join(record: &str, field: &str) -> String {
    if record.is_empty() {
        field.to_string()
    } else {
        format!("{record}.{field}")
    }
}

/// How one reader value is read from the writer's data.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Where this value is in the reader's schema, such as `Order.items[]`.
    pub path: String,
    /// A short text for display, such as "promoted int → long".
    pub rule: String,
    /// Whether the value is read as written: the same type under the same name. False for a
    /// promotion, a name matched by an alias, or a branch of the reader's union chosen.
    pub plain: bool,
    /// What the reader does.
    pub action: Action,
}

/// What the reader does with one value of the writer's data.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// The writer's and the reader's types encode the same primitive type.
    Same {
        /// The reader's type, such as `int`, `string` or `date`.
        type_name: String,
    },
    /// The writer's value is converted to the reader's type.
    Promote {
        /// The writer's type, such as `int`.
        from: &'static str,
        /// The reader's type, such as `long`.
        to: &'static str,
    },
    /// A fixed value of this many bytes is read as is.
    Fixed {
        /// The size in bytes.
        size: usize,
    },
    /// Array items are read with the inner step.
    Array(Box<Step>),
    /// Map values are read with the inner step.
    Map(Box<Step>),
    /// A record is read with the plan at this index of [`Plan::records`].
    Record(usize),
    /// An enum symbol is mapped to a reader symbol.
    Enum(EnumPlan),
    /// A value of a non-union writer type is read by one branch of the reader's union.
    ReaderBranch {
        /// The index of the chosen branch of the reader's union.
        reader_branch: usize,
        /// How the value is read into that branch.
        step: Box<Step>,
    },
    /// The writer wrote a union: each of its branches is read as listed.
    WriterUnion(Vec<BranchPlan>),
}

/// How one branch of the writer's union is read.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchPlan {
    /// The index of the branch in the writer's union.
    pub writer_branch: usize,
    /// The branch of the reader's union that reads it, when the reader's schema is a union.
    pub reader_branch: Option<usize>,
    /// How the value is read.
    pub step: Step,
}

/// How a writer's record is read into a reader's record.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordPlan {
    /// The writer's record's full name.
    pub writer_name: String,
    /// The reader's record's full name.
    pub reader_name: String,
    /// Where the record is first met in the reader's schema.
    pub path: String,
    /// A short text for display, such as "record Order" or "record Order, alias of OldOrder".
    pub rule: String,
    /// One entry per reader field, in the reader's order.
    pub fields: Vec<FieldPlan>,
    /// The writer's fields the reader does not have; their values are read and dropped.
    pub skipped: Vec<SkippedField>,
}

/// Where the value of one reader field comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldPlan {
    /// The field's index in the reader's record.
    pub reader_index: usize,
    /// The field's name in the reader's record.
    pub name: String,
    /// The writer's field, or the reader's default.
    pub source: FieldSource,
    /// A short text for display: "same name", "alias of oldName" or "default".
    pub rule: String,
}

/// The source of a reader field's value.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldSource {
    /// The value is read from the writer's field.
    Writer {
        /// The field's index in the writer's record.
        index: usize,
        /// The field's name in the writer's record.
        name: String,
        /// Whether the field was found by its name or by one of the reader field's aliases.
        matched_by: FieldMatch,
        /// How the value is read.
        step: Box<Step>,
    },
    /// The writer has no such field; the reader's default is used.
    Default(serde_json::Value),
}

/// How a reader field found its writer field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldMatch {
    /// Both fields have the same name.
    Name,
    /// The writer's field name is one of the reader field's aliases.
    Alias(String),
}

/// A writer field that the reader does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedField {
    /// The field's index in the writer's record.
    pub writer_index: usize,
    /// The field's name in the writer's record.
    pub name: String,
    /// A short text for display: "skipped: not in reader".
    pub rule: String,
}

/// How the writer's enum symbols map to the reader's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnumPlan {
    /// One entry per writer symbol, in the writer's order.
    pub symbols: Vec<SymbolPlan>,
    /// The reader's enum default, if it has one.
    pub reader_default: Option<String>,
}

/// Which reader symbol one writer symbol becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolPlan {
    /// The symbol's index in the writer's enum.
    pub writer_index: usize,
    /// The writer's symbol.
    pub symbol: String,
    /// The index in the reader's enum of the symbol it is read as.
    pub reader_index: usize,
    /// The reader's symbol it is read as.
    pub reader_symbol: String,
    /// A short text for display: "same symbol" or "enum default A".
    pub rule: String,
}

/// Plans reading data written with `writer` by a reader using `reader`.
///
/// Named references are resolved within each schema. The plan fails, naming the path and
/// the rule, exactly when some value the writer can produce is not readable.
pub fn plan(writer: &Schema, reader: &Schema) -> Result<Plan, ResolveError> {
    let writer_names = Names::collect(writer);
    let reader_names = Names::collect(reader);
    let mut planner = Planner::new(&writer_names, &reader_names);
    let root = planner.step(writer, reader, "")?;
    let mut records = Vec::with_capacity(planner.records.len());
    for (index, record) in planner.records.into_iter().enumerate() {
        match record {
            Some(record) => records.push(record),
            None => {
                return Err(ResolveError {
                    path: String::new(),
                    rule: Rule::MatchingTypes,
                    message: format!("record pair number {index} was left unplanned"),
                });
            }
        }
    }
    Ok(Plan { root, records })
}

/// Checks whether `writer` (a part of a schema whose named types are `writer_names`) can
/// be read by `reader` (likewise), reporting paths below `path`.
pub(crate) fn check<'a>(
    writer: &'a Schema,
    writer_names: &Names<'a>,
    reader: &'a Schema,
    reader_names: &Names<'a>,
    path: &str,
) -> Result<(), ResolveError> {
    let mut planner = Planner::new(writer_names, reader_names);
    planner.step(writer, reader, path).map(|_| ())
}

/// The named types (records, enums, fixed) defined in one schema, by full name.
#[derive(Debug, Default)]
pub(crate) struct Names<'a> {
    by_name: HashMap<String, &'a Schema>,
}

impl<'a> Names<'a> {
    /// Collects every named type defined in `schema`.
    pub(crate) fn collect(schema: &'a Schema) -> Self {
        let mut names = Names::default();
        names.visit(schema);
        names
    }

    /// Records the named types in `schema`; definitions are not repeated in a valid
    /// schema, so each subtree is visited once and the depth is the schema's nesting.
    fn visit(&mut self, schema: &'a Schema) {
        match schema {
            Schema::Record(record) if self.define(record.name.fullname(None), schema) => {
                for field in &record.fields {
                    self.visit(&field.schema);
                }
            }
            Schema::Enum(e) => {
                self.define(e.name.fullname(None), schema);
            }
            Schema::Fixed(fixed) | Schema::Duration(fixed) => {
                self.define(fixed.name.fullname(None), schema);
            }
            Schema::Decimal(DecimalSchema {
                inner: InnerDecimalSchema::Fixed(fixed),
                ..
            })
            | Schema::Uuid(UuidSchema::Fixed(fixed)) => {
                self.define(fixed.name.fullname(None), schema);
            }
            Schema::Array(array) => self.visit(&array.items),
            Schema::Map(map) => self.visit(&map.types),
            Schema::Union(union) => {
                for variant in union.variants() {
                    self.visit(variant);
                }
            }
            _ => {}
        }
    }

    /// Adds a definition; false if the name was already defined.
    fn define(&mut self, name: String, schema: &'a Schema) -> bool {
        if self.by_name.contains_key(&name) {
            return false;
        }
        self.by_name.insert(name, schema);
        true
    }

    /// The definition a reference names, if any.
    fn get(&self, name: &str) -> Option<&'a Schema> {
        self.by_name.get(name).copied()
    }
}

/// A schema seen through references and logical types: the type that is encoded.
#[derive(Clone, Copy)]
pub(crate) enum View<'a> {
    Null,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    Str,
    Array(&'a Schema),
    Map(&'a Schema),
    Union(&'a UnionSchema),
    Record(&'a RecordSchema),
    Enum(&'a EnumSchema),
    Fixed(&'a FixedSchema),
}

impl View<'_> {
    /// The Avro type name of the encoded type.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            View::Null => "null",
            View::Boolean => "boolean",
            View::Int => "int",
            View::Long => "long",
            View::Float => "float",
            View::Double => "double",
            View::Bytes => "bytes",
            View::Str => "string",
            View::Array(_) => "array",
            View::Map(_) => "map",
            View::Union(_) => "union",
            View::Record(_) => "record",
            View::Enum(_) => "enum",
            View::Fixed(_) => "fixed",
        }
    }
}

/// Follows a reference to its definition (one step: definitions are never references).
pub(crate) fn deref<'a>(schema: &'a Schema, names: &Names<'a>) -> Option<&'a Schema> {
    match schema {
        Schema::Ref { name } => names.get(&name.fullname(None)),
        other => Some(other),
    }
}

/// The encoded type of `schema`, or None for a reference to an undefined name.
pub(crate) fn view<'a>(schema: &'a Schema, names: &Names<'a>) -> Option<View<'a>> {
    let schema = deref(schema, names)?;
    Some(match schema {
        Schema::Null => View::Null,
        Schema::Boolean => View::Boolean,
        Schema::Int | Schema::Date | Schema::TimeMillis => View::Int,
        Schema::Long
        | Schema::TimeMicros
        | Schema::TimestampMillis
        | Schema::TimestampMicros
        | Schema::TimestampNanos
        | Schema::LocalTimestampMillis
        | Schema::LocalTimestampMicros
        | Schema::LocalTimestampNanos => View::Long,
        Schema::Float => View::Float,
        Schema::Double => View::Double,
        Schema::Bytes
        | Schema::BigDecimal
        | Schema::Uuid(UuidSchema::Bytes)
        | Schema::Decimal(DecimalSchema {
            inner: InnerDecimalSchema::Bytes,
            ..
        }) => View::Bytes,
        Schema::String | Schema::Uuid(UuidSchema::String) => View::Str,
        Schema::Array(array) => View::Array(&array.items),
        Schema::Map(map) => View::Map(&map.types),
        Schema::Union(union) => View::Union(union),
        Schema::Record(record) => View::Record(record),
        Schema::Enum(e) => View::Enum(e),
        Schema::Fixed(fixed)
        | Schema::Duration(fixed)
        | Schema::Uuid(UuidSchema::Fixed(fixed))
        | Schema::Decimal(DecimalSchema {
            inner: InnerDecimalSchema::Fixed(fixed),
            ..
        }) => View::Fixed(fixed),
        Schema::Ref { .. } => return None,
    })
}

/// Precision and scale, if `schema` is a decimal.
pub(crate) fn decimal_of<'a>(schema: &'a Schema, names: &Names<'a>) -> Option<(usize, usize)> {
    match deref(schema, names)? {
        Schema::Decimal(d) => Some((d.precision, d.scale)),
        _ => None,
    }
}

/// A short label for a schema as a union branch: the type name, or a named type's name.
pub(crate) fn branch_label<'a>(schema: &'a Schema, names: &Names<'a>) -> String {
    match schema {
        Schema::Ref { name } => name.name().to_string(),
        _ => match view(schema, names) {
            Some(View::Record(r)) => r.name.name().to_string(),
            Some(View::Enum(e)) => e.name.name().to_string(),
            Some(View::Fixed(f)) => f.name.name().to_string(),
            Some(v) => v.kind().to_string(),
            None => "unknown".to_string(),
        },
    }
}

/// A schema in words for messages: "int", "decimal(10, 2)", "array<long>",
/// "union [null, string]", or a named type's name. Named types are not expanded, so the
/// depth is bounded by the nesting of anonymous types.
pub(crate) fn type_label<'a>(schema: &'a Schema, names: &Names<'a>) -> String {
    match schema {
        Schema::Ref { name } => name.name().to_string(),
        Schema::Date => "date".to_string(),
        Schema::TimeMillis => "time-millis".to_string(),
        Schema::TimeMicros => "time-micros".to_string(),
        Schema::TimestampMillis => "timestamp-millis".to_string(),
        Schema::TimestampMicros => "timestamp-micros".to_string(),
        Schema::TimestampNanos => "timestamp-nanos".to_string(),
        Schema::LocalTimestampMillis => "local-timestamp-millis".to_string(),
        Schema::LocalTimestampMicros => "local-timestamp-micros".to_string(),
        Schema::LocalTimestampNanos => "local-timestamp-nanos".to_string(),
        Schema::Decimal(d) => format!("decimal({}, {})", d.precision, d.scale),
        Schema::BigDecimal => "big-decimal".to_string(),
        Schema::Uuid(_) => "uuid".to_string(),
        Schema::Duration(_) => "duration".to_string(),
        Schema::Array(array) => format!("array<{}>", type_label(&array.items, names)),
        Schema::Map(map) => format!("map<{}>", type_label(&map.types, names)),
        Schema::Union(union) => {
            let branches: Vec<String> = union
                .variants()
                .iter()
                .map(|b| type_label(b, names))
                .collect();
            format!("union [{}]", branches.join(", "))
        }
        _ => branch_label(schema, names),
    }
}

/// Whether a reader's named type accepts a writer's named type: the same unqualified
/// name, or an alias of the reader whose unqualified name is the writer's.
pub(crate) fn names_match(
    writer: &apache_avro::schema::Name,
    reader: &apache_avro::schema::Name,
    reader_aliases: &Option<Vec<apache_avro::schema::Alias>>,
) -> NameMatch {
    if writer.name() == reader.name() {
        return NameMatch::Same;
    }
    let aliased = reader_aliases
        .iter()
        .flatten()
        .any(|alias| alias.name() == writer.name());
    if aliased {
        NameMatch::Alias
    } else {
        NameMatch::Different
    }
}

/// The outcome of [`names_match`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameMatch {
    Same,
    Alias,
    Different,
}

/// A primitive promoted to a wider one (or string and bytes read as each other).
fn promote_step(from: &'static str, to: &'static str, path: &str) -> Step {
    Step {
        path: path.to_string(),
        rule: if matches!((from, to), ("string", "bytes") | ("bytes", "string")) {
            format!("{from} read as {to}")
        } else {
            format!("promoted {from} → {to}")
        },
        plain: false,
        action: Action::Promote { from, to },
    }
}

/// Joins a record field onto a path; a record at the top level is named by its name.
fn field_path(record_path: &str, field: &str) -> String {
    format!("{record_path}.{field}")
}

/// The state of one planning walk.
struct Planner<'n, 'a> {
    writer_names: &'n Names<'a>,
    reader_names: &'n Names<'a>,
    /// Planned (or in progress) record pairs; None while in progress.
    records: Vec<Option<RecordPlan>>,
    /// Record pairs by (writer full name, reader full name) → index in `records`.
    planned: HashMap<(String, String), usize>,
    /// Record pairs known to be unreadable, with their error.
    failed: HashMap<(String, String), ResolveError>,
}

impl<'n, 'a> Planner<'n, 'a> {
    fn new(writer_names: &'n Names<'a>, reader_names: &'n Names<'a>) -> Self {
        Planner {
            writer_names,
            reader_names,
            records: Vec::new(),
            planned: HashMap::new(),
            failed: HashMap::new(),
        }
    }

    fn error(path: &str, rule: Rule, message: String) -> ResolveError {
        ResolveError {
            path: path.to_string(),
            rule,
            message,
        }
    }

    /// Tries a step; on failure, forgets record pairs planned during the attempt.
    fn attempt(&mut self, writer: &'a Schema, reader: &'a Schema, path: &str) -> Option<Step> {
        let mark = self.records.len();
        match self.step(writer, reader, path) {
            Ok(step) => Some(step),
            Err(_) => {
                self.records.truncate(mark);
                self.planned.retain(|_, index| *index < mark);
                None
            }
        }
    }

    /// How a value the writer wrote as `writer` is read as the reader's `reader`, or why it
    /// cannot be.
    fn step(
        &mut self,
        writer: &'a Schema,
        reader: &'a Schema,
        path: &str,
    ) -> Result<Step, ResolveError> {
        let w = view(writer, self.writer_names).ok_or_else(|| {
            Self::error(
                path,
                Rule::UnknownName,
                format!(
                    "the writer's schema refers to {}, which it does not define",
                    ref_name(writer)
                ),
            )
        })?;
        let r = view(reader, self.reader_names).ok_or_else(|| {
            Self::error(
                path,
                Rule::UnknownName,
                format!(
                    "the reader's schema refers to {}, which it does not define",
                    ref_name(reader)
                ),
            )
        })?;

        // A writer's union: each branch the writer may select is resolved on its own.
        if let View::Union(wu) = w {
            return self.writer_union_step(wu, reader, r, path);
        }

        // A reader's union: the first branch that can read the writer's value.
        if let View::Union(ru) = r {
            return self.reader_union_step(writer, ru, path);
        }

        self.decimals_agree(writer, reader, path)?;

        match (w, r) {
            (View::Null, View::Null)
            | (View::Boolean, View::Boolean)
            | (View::Int, View::Int)
            | (View::Long, View::Long)
            | (View::Float, View::Float)
            | (View::Double, View::Double)
            | (View::Bytes, View::Bytes)
            | (View::Str, View::Str) => Ok(self.same_step(writer, reader, path)),
            (View::Int, View::Long | View::Float | View::Double)
            | (View::Long, View::Float | View::Double)
            | (View::Float, View::Double)
            | (View::Str, View::Bytes)
            | (View::Bytes, View::Str) => Ok(promote_step(w.kind(), r.kind(), path)),
            (View::Array(wi), View::Array(ri)) => {
                let inner = self.step(wi, ri, &format!("{path}[]"))?;
                Ok(Step {
                    path: path.to_string(),
                    rule: "array".to_string(),
                    plain: true,
                    action: Action::Array(Box::new(inner)),
                })
            }
            (View::Map(wv), View::Map(rv)) => {
                let inner = self.step(wv, rv, &format!("{path}{{}}"))?;
                Ok(Step {
                    path: path.to_string(),
                    rule: "map".to_string(),
                    plain: true,
                    action: Action::Map(Box::new(inner)),
                })
            }
            (View::Fixed(wf), View::Fixed(rf)) => Self::fixed_step(wf, rf, path),
            (View::Enum(we), View::Enum(re)) => self.enum_step(we, re, path),
            (View::Record(wr), View::Record(rr)) => self.record_step(wr, rr, path),
            _ => Err(Self::error(
                path,
                Rule::MatchingTypes,
                format!(
                    "the writer's {} cannot be read as {}",
                    type_text(w, writer, self.writer_names),
                    type_text(r, reader, self.reader_names)
                ),
            )),
        }
    }

    /// Two decimals (of bytes or fixed) must have the same precision and scale.
    fn decimals_agree(
        &self,
        writer: &'a Schema,
        reader: &'a Schema,
        path: &str,
    ) -> Result<(), ResolveError> {
        if let (Some(wd), Some(rd)) = (
            decimal_of(writer, self.writer_names),
            decimal_of(reader, self.reader_names),
        ) {
            if wd != rd {
                return Err(Self::error(
                    path,
                    Rule::DecimalParameters,
                    format!(
                        "the writer's decimal({}, {}) differs from the reader's decimal({}, {})",
                        wd.0, wd.1, rd.0, rd.1
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A primitive read as the same primitive (under its logical type's name, when the two
    /// say different ones).
    fn same_step(&self, writer: &'a Schema, reader: &'a Schema, path: &str) -> Step {
        let writer_label = type_label(writer, self.writer_names);
        let reader_label = type_label(reader, self.reader_names);
        Step {
            path: path.to_string(),
            rule: if writer_label == reader_label {
                format!("same type {reader_label}")
            } else {
                format!("{writer_label} read as {reader_label}")
            },
            plain: writer_label == reader_label,
            action: Action::Same {
                type_name: reader_label,
            },
        }
    }

    /// A writer's union: each branch the writer may select, resolved on its own against the
    /// reader's schema `reader` (seen as `r`).
    fn writer_union_step(
        &mut self,
        wu: &'a UnionSchema,
        reader: &'a Schema,
        r: View<'a>,
        path: &str,
    ) -> Result<Step, ResolveError> {
        let mut branches = Vec::with_capacity(wu.variants().len());
        for (index, branch) in wu.variants().iter().enumerate() {
            let branch_path = format!("{path}|{}", branch_label(branch, self.writer_names));
            let step = self.step(branch, reader, &branch_path).map_err(|e| {
                if matches!(r, View::Union(_)) || e.path != branch_path {
                    e
                } else {
                    ResolveError {
                        rule: Rule::WriterUnion,
                        message: format!(
                            "the writer's union branch {} cannot be read as {}",
                            branch_label(branch, self.writer_names),
                            type_text(r, reader, self.reader_names)
                        ),
                        ..e
                    }
                }
            })?;
            let (reader_branch, step) = match step.action {
                Action::ReaderBranch {
                    reader_branch,
                    step,
                } => (Some(reader_branch), *step),
                action => (None, Step { action, ..step }),
            };
            branches.push(BranchPlan {
                writer_branch: index,
                reader_branch,
                step,
            });
        }
        Ok(Step {
            path: path.to_string(),
            rule: format!("writer's union of {} branches", branches.len()),
            plain: true,
            action: Action::WriterUnion(branches),
        })
    }

    /// A reader's union: the first of its branches that can read the writer's value.
    fn reader_union_step(
        &mut self,
        writer: &'a Schema,
        ru: &'a UnionSchema,
        path: &str,
    ) -> Result<Step, ResolveError> {
        for (index, branch) in ru.variants().iter().enumerate() {
            if let Some(step) = self.attempt(writer, branch, path) {
                return Ok(Step {
                    path: path.to_string(),
                    rule: format!(
                        "union branch {index} ({}) chosen",
                        branch_label(branch, self.reader_names)
                    ),
                    plain: false,
                    action: Action::ReaderBranch {
                        reader_branch: index,
                        step: Box::new(step),
                    },
                });
            }
        }
        Err(Self::error(
            path,
            Rule::ReaderUnion,
            format!(
                "no branch of the reader's union can read the writer's {}",
                branch_label(writer, self.writer_names)
            ),
        ))
    }

    /// Two fixed types: the reader's name (or an alias) must be the writer's, and the sizes
    /// the same.
    fn fixed_step(wf: &FixedSchema, rf: &FixedSchema, path: &str) -> Result<Step, ResolveError> {
        let matched = names_match(&wf.name, &rf.name, &rf.aliases);
        if matched == NameMatch::Different {
            return Err(Self::error(
                path,
                Rule::NamesMatch,
                format!(
                    "the writer's fixed {} and the reader's fixed {} have different names",
                    wf.name.fullname(None),
                    rf.name.fullname(None)
                ),
            ));
        }
        if wf.size != rf.size {
            return Err(Self::error(
                path,
                Rule::FixedSize,
                format!(
                    "the writer's fixed {} has {} bytes and the reader's has {}",
                    wf.name.name(),
                    wf.size,
                    rf.size
                ),
            ));
        }
        Ok(Step {
            path: path.to_string(),
            rule: match matched {
                NameMatch::Alias => {
                    format!("fixed {}, alias of {}", rf.name.name(), wf.name.name())
                }
                _ => format!("fixed {} ({} bytes)", rf.name.name(), rf.size),
            },
            plain: matched != NameMatch::Alias,
            action: Action::Fixed { size: rf.size },
        })
    }

    fn enum_step(
        &mut self,
        we: &'a EnumSchema,
        re: &'a EnumSchema,
        path: &str,
    ) -> Result<Step, ResolveError> {
        let matched = names_match(&we.name, &re.name, &re.aliases);
        if matched == NameMatch::Different {
            return Err(Self::error(
                path,
                Rule::NamesMatch,
                format!(
                    "the writer's enum {} and the reader's enum {} have different names",
                    we.name.fullname(None),
                    re.name.fullname(None)
                ),
            ));
        }
        let default_index = re
            .default
            .as_ref()
            .and_then(|d| re.symbols.iter().position(|s| s == d));
        let mut symbols = Vec::with_capacity(we.symbols.len());
        for (writer_index, symbol) in we.symbols.iter().enumerate() {
            let (reader_index, rule) = match re.symbols.iter().position(|s| s == symbol) {
                Some(index) => (index, "same symbol".to_string()),
                None => match (default_index, &re.default) {
                    (Some(index), Some(default)) => (index, format!("enum default {default}")),
                    _ => {
                        return Err(Self::error(
                            path,
                            Rule::EnumSymbol,
                            format!(
                                "the writer's symbol {symbol} is not in the reader's enum {}, which has no default",
                                re.name.name()
                            ),
                        ));
                    }
                },
            };
            symbols.push(SymbolPlan {
                writer_index,
                symbol: symbol.clone(),
                reader_index,
                reader_symbol: re.symbols.get(reader_index).cloned().unwrap_or_default(),
                rule,
            });
        }
        Ok(Step {
            path: path.to_string(),
            rule: match matched {
                NameMatch::Alias => format!("enum {}, alias of {}", re.name.name(), we.name.name()),
                _ => format!("enum {}", re.name.name()),
            },
            plain: matched != NameMatch::Alias,
            action: Action::Enum(EnumPlan {
                symbols,
                reader_default: re.default.clone(),
            }),
        })
    }

    fn record_step(
        &mut self,
        wr: &'a RecordSchema,
        rr: &'a RecordSchema,
        path: &str,
    ) -> Result<Step, ResolveError> {
        let record_path = if path.is_empty() {
            rr.name.name().to_string()
        } else {
            path.to_string()
        };
        let matched = names_match(&wr.name, &rr.name, &rr.aliases);
        if matched == NameMatch::Different {
            return Err(Self::error(
                &record_path,
                Rule::NamesMatch,
                format!(
                    "the writer's record {} and the reader's record {} have different names",
                    wr.name.fullname(None),
                    rr.name.fullname(None)
                ),
            ));
        }
        let rule = match matched {
            NameMatch::Alias => format!("record {}, alias of {}", rr.name.name(), wr.name.name()),
            _ => format!("record {}", rr.name.name()),
        };
        let key = (wr.name.fullname(None), rr.name.fullname(None));
        if let Some(error) = self.failed.get(&key) {
            return Err(error.clone());
        }
        if let Some(&index) = self.planned.get(&key) {
            // Planned already, or in progress further up (a recursive type): refer to it.
            return Ok(Step {
                path: record_path,
                rule,
                plain: matched != NameMatch::Alias,
                action: Action::Record(index),
            });
        }
        let index = self.records.len();
        self.records.push(None);
        self.planned.insert(key.clone(), index);

        match self.record_fields(wr, rr, &record_path) {
            Ok((fields, skipped)) => {
                if let Some(slot) = self.records.get_mut(index) {
                    *slot = Some(RecordPlan {
                        writer_name: key.0,
                        reader_name: key.1,
                        path: record_path.clone(),
                        rule: rule.clone(),
                        fields,
                        skipped,
                    });
                }
                Ok(Step {
                    path: record_path,
                    rule,
                    plain: matched != NameMatch::Alias,
                    action: Action::Record(index),
                })
            }
            Err(error) => {
                self.records.truncate(index);
                self.planned.retain(|_, i| *i < index);
                self.failed.insert(key, error.clone());
                Err(error)
            }
        }
    }

    fn record_fields(
        &mut self,
        wr: &'a RecordSchema,
        rr: &'a RecordSchema,
        record_path: &str,
    ) -> Result<(Vec<FieldPlan>, Vec<SkippedField>), ResolveError> {
        let mut used = vec![false; wr.fields.len()];
        let mut fields = Vec::with_capacity(rr.fields.len());
        for (reader_index, rf) in rr.fields.iter().enumerate() {
            let fpath = field_path(record_path, &rf.name);
            let by_name = wr.fields.iter().position(|wf| wf.name == rf.name);
            let found = match by_name {
                Some(index) => Some((index, FieldMatch::Name)),
                None => rf.aliases.iter().find_map(|alias| {
                    wr.fields
                        .iter()
                        .position(|wf| &wf.name == alias)
                        .map(|index| (index, FieldMatch::Alias(alias.clone())))
                }),
            };
            let found = found.and_then(|(index, matched_by)| {
                wr.fields.get(index).map(|wf| (index, matched_by, wf))
            });
            let (source, rule) = match found {
                Some((index, matched_by, wf)) => {
                    if let Some(flag) = used.get_mut(index) {
                        *flag = true;
                    }
                    let step = self.step(&wf.schema, &rf.schema, &fpath)?;
                    let rule = match &matched_by {
                        FieldMatch::Name => "same name".to_string(),
                        FieldMatch::Alias(alias) => format!("alias of {alias}"),
                    };
                    (
                        FieldSource::Writer {
                            index,
                            name: wf.name.clone(),
                            matched_by,
                            step: Box::new(step),
                        },
                        rule,
                    )
                }
                None => match &rf.default {
                    Some(default) => (FieldSource::Default(default.clone()), "default".to_string()),
                    None => {
                        return Err(Self::error(
                            &fpath,
                            Rule::FieldDefault,
                            format!(
                                "the writer's record {} has no field {} and the reader's field has no default",
                                wr.name.name(),
                                rf.name
                            ),
                        ));
                    }
                },
            };
            fields.push(FieldPlan {
                reader_index,
                name: rf.name.clone(),
                source,
                rule,
            });
        }
        let skipped = wr
            .fields
            .iter()
            .enumerate()
            .filter(|(index, _)| !used.get(*index).copied().unwrap_or(false))
            .map(|(writer_index, wf)| SkippedField {
                writer_index,
                name: wf.name.clone(),
                rule: "skipped: not in reader".to_string(),
            })
            .collect();
        Ok((fields, skipped))
    }
}

/// The name a reference points at, for messages.
fn ref_name(schema: &Schema) -> String {
    match schema {
        Schema::Ref { name } => name.fullname(None),
        _ => "a type".to_string(),
    }
}

/// A type for messages: "int", or "record Order".
fn type_text<'a>(view: View<'a>, schema: &'a Schema, names: &Names<'a>) -> String {
    match view {
        View::Record(_) | View::Enum(_) | View::Fixed(_) => {
            format!("{} {}", view.kind(), branch_label(schema, names))
        }
        _ => view.kind().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Schema {
        Schema::parse_str(text).expect("test schema parses")
    }

    fn field<'p>(plan: &'p Plan, record: usize, name: &str) -> &'p FieldPlan {
        plan.records[record]
            .fields
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("no field {name}: {plan:#?}"))
    }

    #[test]
    fn record_fields_by_name_alias_default_and_skip() {
        let writer = parse(
            r#"{"type":"record","name":"Order","fields":[
                {"name":"id","type":"int"},
                {"name":"oldName","type":"string"},
                {"name":"gone","type":"double"}]}"#,
        );
        let reader = parse(
            r#"{"type":"record","name":"Order","fields":[
                {"name":"id","type":"long"},
                {"name":"newName","type":"bytes","aliases":["oldName"]},
                {"name":"qty","type":"int","default":1}]}"#,
        );
        let plan = plan(&writer, &reader).expect("plan");
        assert_eq!(plan.root.action, Action::Record(0));
        let id = field(&plan, 0, "id");
        let FieldSource::Writer { index, step, .. } = &id.source else {
            panic!("{id:?}")
        };
        assert_eq!(*index, 0);
        assert_eq!(step.rule, "promoted int → long");
        assert_eq!(step.path, "Order.id");

        let renamed = field(&plan, 0, "newName");
        assert_eq!(renamed.rule, "alias of oldName");
        let FieldSource::Writer {
            index,
            step,
            matched_by,
            ..
        } = &renamed.source
        else {
            panic!()
        };
        assert_eq!(
            (*index, matched_by),
            (1, &FieldMatch::Alias("oldName".to_string()))
        );
        assert_eq!(step.rule, "string read as bytes");

        let qty = field(&plan, 0, "qty");
        assert_eq!(qty.source, FieldSource::Default(serde_json::json!(1)));
        assert_eq!(qty.rule, "default");

        assert_eq!(plan.records[0].skipped.len(), 1);
        assert_eq!(plan.records[0].skipped[0].name, "gone");
        assert_eq!(plan.records[0].skipped[0].rule, "skipped: not in reader");
    }

    #[test]
    fn enum_symbols_map_to_reader_default() {
        let writer = parse(r#"{"type":"enum","name":"E","symbols":["A","B","C"]}"#);
        let reader = parse(r#"{"type":"enum","name":"E","symbols":["C","A"],"default":"A"}"#);
        let plan = plan(&writer, &reader).expect("plan");
        let Action::Enum(e) = &plan.root.action else {
            panic!()
        };
        let mapped: Vec<(usize, &str)> = e
            .symbols
            .iter()
            .map(|s| (s.reader_index, s.rule.as_str()))
            .collect();
        assert_eq!(
            mapped,
            vec![
                (1, "same symbol"),
                (1, "enum default A"),
                (0, "same symbol")
            ]
        );

        let strict = parse(r#"{"type":"enum","name":"E","symbols":["A","C"]}"#);
        let error = super::plan(&writer, &strict).expect_err("B is unknown");
        assert_eq!(error.rule, Rule::EnumSymbol);
    }

    #[test]
    fn unions_map_branches() {
        let writer = parse(r#"["null","int","string"]"#);
        let reader = parse(r#"["string","null","double"]"#);
        let plan = plan(&writer, &reader).expect("plan");
        let Action::WriterUnion(branches) = &plan.root.action else {
            panic!()
        };
        let mapped: Vec<(usize, Option<usize>, &str)> = branches
            .iter()
            .map(|b| (b.writer_branch, b.reader_branch, b.step.rule.as_str()))
            .collect();
        assert_eq!(
            mapped,
            vec![
                (0, Some(1), "same type null"),
                (1, Some(2), "promoted int → double"),
                (2, Some(0), "same type string")
            ]
        );

        let narrow = parse(r#"["null","int"]"#);
        let error = super::plan(&writer, &narrow).expect_err("string is not readable");
        assert_eq!(error.rule, Rule::ReaderUnion);
        assert_eq!(error.path, "|string");

        let single = parse(r#""long""#);
        let plain = super::plan(&parse("\"int\""), &parse(r#"["null","long"]"#)).expect("plan");
        assert!(matches!(
            plain.root.action,
            Action::ReaderBranch {
                reader_branch: 1,
                ..
            }
        ));
        let error = super::plan(&writer, &single).expect_err("null is not a long");
        assert_eq!(error.rule, Rule::WriterUnion);
    }

    #[test]
    fn arrays_maps_and_errors_name_the_path() {
        let writer = parse(
            r#"{"type":"record","name":"Order","fields":[
                {"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[
                    {"name":"price","type":"double"}]}}},
                {"name":"extra","type":{"type":"map","values":"int"}}]}"#,
        );
        let reader = parse(
            r#"{"type":"record","name":"Order","fields":[
                {"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[
                    {"name":"price","type":"float"}]}}},
                {"name":"extra","type":{"type":"map","values":"long"}}]}"#,
        );
        let error = plan(&writer, &reader).expect_err("double does not narrow to float");
        assert_eq!(error.path, "Order.items[].price");
        assert_eq!(error.rule, Rule::MatchingTypes);
        assert_eq!(
            error.to_string(),
            format!(
                "At Order.items[].price: the writer's double cannot be read as float. Rule: {}.",
                Rule::MatchingTypes
            )
        );

        let missing =
            parse(r#"{"type":"record","name":"Order","fields":[{"name":"total","type":"int"}]}"#);
        let error = plan(&writer, &missing).expect_err("total has no default");
        assert_eq!(
            (error.path.as_str(), error.rule),
            ("Order.total", Rule::FieldDefault)
        );

        let ok = plan(&reader, &writer);
        assert!(
            ok.is_err(),
            "float to double is fine but long to int is not"
        );
    }

    #[test]
    fn recursive_records_are_planned_once() {
        let writer = parse(
            r#"{"type":"record","name":"List","fields":[
                {"name":"head","type":"int"},
                {"name":"tail","type":["null","List"]}]}"#,
        );
        let reader = parse(
            r#"{"type":"record","name":"List","fields":[
                {"name":"head","type":"long"},
                {"name":"tail","type":["null","List"]}]}"#,
        );
        let plan = plan(&writer, &reader).expect("plan");
        assert_eq!(plan.records.len(), 1);
        let tail = field(&plan, 0, "tail");
        let FieldSource::Writer { step, .. } = &tail.source else {
            panic!()
        };
        let Action::WriterUnion(branches) = &step.action else {
            panic!("{step:?}")
        };
        assert_eq!(branches[1].step.action, Action::Record(0));
        assert!(super::plan(&reader, &writer).is_err());
    }

    #[test]
    fn decimals_follow_the_specification() {
        // The specification matches decimals only on equal precision and scale. Python's
        // checker ignores logical types and would call this compatible; we do not.
        let writer = parse(r#"{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}"#);
        let reader = parse(r#"{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}"#);
        let error = plan(&writer, &reader).expect_err("precision differs");
        assert_eq!(error.rule, Rule::DecimalParameters);
        let same = plan(&writer, &writer).expect("same decimal");
        assert_eq!(same.root.rule, "same type decimal(10, 2)");
        let date = plan(
            &parse(r#"{"type":"int","logicalType":"date"}"#),
            &parse(r#""long""#),
        )
        .expect("date is an int");
        assert_eq!(date.root.rule, "promoted int → long");
    }

    #[test]
    fn mutually_recursive_records_terminate() {
        let schema = parse(
            r#"{"type":"record","name":"A","fields":[
                {"name":"b","type":["null",{"type":"record","name":"B","fields":[
                    {"name":"a","type":["null","A"]},
                    {"name":"bs","type":{"type":"array","items":"B"}}]}]},
                {"name":"m","type":{"type":"map","values":["null","A","B"]}}]}"#,
        );
        let plan = plan(&schema, &schema).expect("a schema reads itself");
        assert_eq!(plan.records.len(), 2);
    }

    #[test]
    fn plan_succeeds_exactly_for_compatible_cases() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/avro/compat/cases.json"
        );
        let text = std::fs::read_to_string(path).expect("cases.json is readable");
        let cases: Vec<serde_json::Value> =
            serde_json::from_str(&text).expect("cases.json is JSON");
        let mut wrong = Vec::new();
        for case in &cases {
            let reader = Schema::parse(&case["reader"]).expect("reader parses");
            let writer = Schema::parse(&case["writer"]).expect("writer parses");
            let expected = case["expected"].as_str() == Some("compatible");
            let result = plan(&writer, &reader);
            if result.is_ok() != expected {
                wrong.push(format!("{}: {:?}", case["name"], result.err()));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
