//! Two payloads compared by meaning, for the app's diff view: the payloads the user picked (any
//! two of any open sources), decoded where they were not yet, and [`crate::diff`] run over them,
//! all on a worker.
//!
//! The result keeps each side's source column (its bytes and span tree, shared with the
//! analysis it came from), so the view shows both payloads and the bytes of every change even
//! after the sources are closed or their payloads re-read.

use std::path::Path as FsPath;
use std::sync::Arc;

use super::analysis::{analyze_payload, open, Analysis, Choice, Column, ColumnDoc};
use super::errors::ExportError;
use super::job::{Job, JobContext, JobError, Notify};
use super::schemas::SchemaSet;
use super::source::Source;
use super::Stage;
use crate::capture::tls::KeyLog;
use crate::codec::Format;
use crate::diff::{diff_refs, Diff, DiffOptions, DocRef};
use crate::files::write_atomically;
use crate::limits::Limits;
use crate::model::Value;

/// One side of a comparison, as the UI thread hands it to the worker: decoded already, or the
/// bytes and choices to decode it with.
pub(super) struct Pick {
    pub name: String,
    pub analysis: Option<Arc<Analysis>>,
    pub source: Arc<Source>,
    pub layers: crate::pipeline::Layers,
    pub keys: Option<Arc<KeyLog>>,
    pub payload: usize,
    pub choice: Choice,
}

/// One compared payload: its name and its source column.
#[derive(Debug, Clone)]
pub struct Compared {
    /// `name #N` (the payload's number when its source holds several).
    pub name: String,
    /// The payload as decoded: bytes, value and spans.
    pub column: Column,
}

/// Two payloads and what differs between them.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The first payload (A).
    pub a: Compared,
    /// The second payload (B).
    pub b: Compared,
    /// The changes, with their bytes in both.
    pub diff: Diff,
    /// The protobuf message type the values were compared with (proto3 JSON forms), if any.
    pub message: Option<String>,
}

impl Comparison {
    /// The summary line: the changes by kind, or, for the same meaning, both sizes and where
    /// the bytes differ (as `wirelens diff` ends).
    pub fn summary(&self) -> String {
        if !self.diff.same_meaning() {
            return self.diff.summary();
        }
        let (a, b) = (&self.a.column, &self.b.column);
        let identical = a.format == b.format && a.bytes[..] == b.bytes[..];
        self.diff.same_meaning_line(
            (a.format, a.bytes.len()),
            (b.format, b.bytes.len()),
            identical,
        )
    }
}

/// A comparison being made, made, or failed.
#[derive(Debug)]
pub struct CompareRun {
    /// The names of the two payloads, while the worker decodes and compares them.
    pub names: (String, String),
    /// The result.
    pub result: Stage<Comparison>,
}

impl CompareRun {
    pub(super) fn start(
        a: Pick,
        b: Pick,
        options: DiffOptions,
        schemas: SchemaSet,
        limits: Limits,
        notify: Notify,
    ) -> CompareRun {
        let names = (a.name.clone(), b.name.clone());
        let job = Job::spawn("diff", notify, move |ctx| {
            compare(a, b, options, &schemas, &limits, ctx)
        });
        CompareRun {
            names,
            result: Stage::Running(job),
        }
    }

    /// Moves a finished result in; returns whether anything changed.
    pub(super) fn poll(&mut self) -> bool {
        self.result.poll()
    }

    /// Whether the worker is on it.
    pub fn is_running(&self) -> bool {
        self.result.is_running()
    }
}

/// The analysis of `pick`, decoding it on this (worker) thread when it was not decoded yet.
fn analysis_of(
    pick: &Pick,
    schemas: &SchemaSet,
    limits: &Limits,
    ctx: &JobContext,
) -> Result<Arc<Analysis>, JobError> {
    if let Some(a) = &pick.analysis {
        return Ok(a.clone());
    }
    let opened = open(
        &pick.source,
        pick.layers,
        limits,
        pick.keys.as_deref(),
        schemas.registry.as_ref(),
    )
    .map_err(|e| JobError::Failed(format!("{}: {e}", pick.name)))?;
    let Some(payload) = opened.payloads.get(pick.payload) else {
        return Err(JobError::Failed(format!("{}: no such payload", pick.name)));
    };
    Ok(Arc::new(analyze_payload(
        payload,
        &pick.choice,
        schemas,
        limits,
        ctx,
    )?))
}

/// The side's source column, or why it cannot be compared.
fn side(pick: &Pick, analysis: &Analysis) -> Result<Compared, JobError> {
    let column = analysis.source().filter(|c| c.document.is_some());
    let Some(column) = column else {
        let why = match &analysis.verdict {
            Some(v) => format!("{}: {}; read it as a format first", pick.name, v.sentence()),
            None => format!("{}: the payload did not decode", pick.name),
        };
        return Err(JobError::Failed(why));
    };
    if let Some(e) = &column.error {
        return Err(JobError::Failed(format!(
            "{}: the payload decoded only in part ({e}); compare complete payloads",
            pick.name
        )));
    }
    Ok(Compared {
        name: pick.name.clone(),
        column: column.clone(),
    })
}

fn compare(
    a: Pick,
    b: Pick,
    mut options: DiffOptions,
    schemas: &SchemaSet,
    limits: &Limits,
    ctx: &JobContext,
) -> Result<Comparison, JobError> {
    ctx.report(0.0, &format!("decoding {}", a.name));
    let aa = analysis_of(&a, schemas, limits, ctx)?;
    ctx.report(0.3, &format!("decoding {}", b.name));
    let ab = analysis_of(&b, schemas, limits, ctx)?;
    let (sa, sb) = (side(&a, &aa)?, side(&b, &ab)?);
    ctx.check()?;
    // The schema the values are compared with: the message type a protobuf side was read with,
    // else one the user chose for either side (two JSON payloads of a protobuf API).
    let protobuf = |an: &Analysis| (an.format == Format::Protobuf).then(|| an.message.clone());
    let message = protobuf(&aa)
        .flatten()
        .or(protobuf(&ab).flatten())
        .or(aa.message.clone())
        .or(ab.message.clone());
    if options.message.is_none() {
        options.message = message.as_deref().and_then(|m| schemas.message(m));
    }
    ctx.report(0.6, "comparing");
    // A side read on demand is decoded whole for the comparison, and let go after it.
    fn whole(c: &Column) -> Option<(Arc<Value>, &ColumnDoc)> {
        c.document.as_ref().and_then(|d| Some((d.whole()?, d)))
    }
    let (Some((va, a_doc)), Some((vb, b_doc))) = (whole(&sa.column), whole(&sb.column)) else {
        return Err(JobError::Failed("nothing decoded to compare".into()));
    };
    let da = DocRef {
        format: sa.column.format,
        value: &va,
        spans: &a_doc.spans,
    };
    let db = DocRef {
        format: sb.column.format,
        value: &vb,
        spans: &b_doc.spans,
    };
    let diff = diff_refs(da, db, &options);
    ctx.report(1.0, "done");
    Ok(Comparison {
        a: sa,
        b: sb,
        diff,
        message: options.message.map(|m| m.full_name().to_string()),
    })
}

/// Writes the comparison's changes as CSV (the columns of `wirelens diff --csv`) to `path`,
/// atomically (see [`crate::files`]). Returns the number of rows.
pub fn export_diff_csv(c: &Comparison, path: &FsPath) -> Result<usize, ExportError> {
    let bytes = crate::diff::to_csv(&c.diff)?;
    write_atomically(path, &bytes).map_err(|source| ExportError::Write {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(c.diff.changes.len())
}
