//! Everything the inspector knows, without a window: the model behind the GUI.
//!
//! The app is a thin face over a [`Workspace`]: the sources the user opened or pasted, the
//! payloads peeled from each, the user's choices (payload, format override, "raw bytes", the
//! protobuf mode), the loaded schemas, the linked selection (a [`Path`]) and the background
//! [`Job`]s that peel, detect, decode and encode. Tests drive it directly, with no GUI toolkit.
//!
//! It does not draw, and it does not know about egui; the app polls it once per frame
//! ([`Workspace::poll`]) and the jobs call a [`Notify`] so the app repaints when work finishes.

pub mod analysis;
pub mod compare;
pub mod errors;
pub mod job;
pub mod profiling;
pub mod schemas;
pub mod source;

use std::path::{Path as FsPath, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub use analysis::{
    analyze, analyze_payload, open, open_watched, Analysis, AnalysisRequest, CandidateSummary,
    Choice, Column, ColumnDoc, ColumnError, ColumnValue, OnDemand, Opened, ReadingSummary, Sizes,
    READ_ON_DEMAND_FROM,
};
pub use compare::{export_diff_csv, CompareRun, Compared, Comparison};
pub use errors::{
    CompareError, ExportError, KeyLogFileError, OpenError, ProfileStartError, SchemaLoadError,
};
pub use job::{no_notify, panic_message, Job, JobContext, JobError, Notify};
pub use profiling::{ProfileRun, Progress, Scope};
pub use schemas::{LoadedSchema, Method, ProtoMode, SchemaOrigin, SchemaSet};
pub use source::{Origin, Source};

use crate::capture::tls::{KeyLog, KeyLogError};
use crate::capture::{PeelChoice, Split};
use crate::codec::protobuf::wire::FieldReading;
use crate::codec::Format;
use crate::limits::Limits;
use crate::model::Path;
use crate::pipeline::Layers;
use crate::profile::sweep::Link;
use crate::report::Mode;

/// A result that is being computed, is ready, or failed.
#[derive(Debug, Default)]
pub enum Stage<T> {
    /// Not asked for yet (or out of date).
    #[default]
    Empty,
    /// A worker is on it.
    Running(Job<T>),
    /// Done.
    Ready(Arc<T>),
    /// No result, and why.
    Failed(JobError),
}

impl<T> Stage<T> {
    /// The result, when ready.
    pub fn ready(&self) -> Option<&Arc<T>> {
        match self {
            Stage::Ready(t) => Some(t),
            _ => None,
        }
    }

    /// The result when ready, else what the running job published so far.
    pub fn ready_or_preview(&self) -> Option<Arc<T>> {
        match self {
            Stage::Ready(t) => Some(t.clone()),
            Stage::Running(job) => job.preview(),
            _ => None,
        }
    }

    /// Whether a worker is on it.
    pub fn is_running(&self) -> bool {
        matches!(self, Stage::Running(_))
    }

    /// Moves a finished job's result in; returns whether anything changed.
    fn poll(&mut self) -> bool {
        let Stage::Running(job) = self else {
            return false;
        };
        // A cancelled job is let go at once: the UI is free even while a long decode finishes
        // on its thread, whose result nobody takes.
        if job.is_cancelled() {
            *self = Stage::Failed(JobError::Cancelled);
            return true;
        }
        match job.poll() {
            None => false,
            Some(Ok(t)) => {
                *self = Stage::Ready(Arc::new(t));
                true
            }
            Some(Err(e)) => {
                *self = Stage::Failed(e);
                true
            }
        }
    }
}

/// One opened source with its payloads and the user's choices.
#[derive(Debug)]
pub struct Entry {
    /// The bytes as given.
    pub source: Arc<Source>,
    /// How the bytes are peeled: the best-ranked way (as the CLI peels) unless the user chose
    /// otherwise, or as they are ("raw bytes").
    pub layers: Layers,
    /// The peeled payloads.
    pub opened: Stage<Opened>,
    /// The capture the peel job reads, if it reads one ([`Workspace::cancel`] stops it there).
    reading: Arc<Reading>,
    /// The selected payload.
    pub payload: usize,
    /// Whether the user has chosen no payload since the source was opened or peeled anew: then
    /// the one a user came for is selected when peeling ends
    /// ([`crate::capture::listing::default_payload`]).
    default_payload: bool,
    /// Format override and protobuf mode.
    pub choice: Choice,
    /// The selected payload, decoded and encoded.
    pub analysis: Stage<Analysis>,
    /// The name the user gave it ([`Workspace::rename`]); `None`: the source's own name.
    pub label: Option<String>,
    /// Columns the analysis left deferred that are being encoded now that they are shown.
    encoding: Vec<(Format, Job<Option<Column>>)>,
    /// Work the peel job did for the first analysis: the readings peeling made of a large
    /// payload as a skeleton, by payload index ([`analysis::open_walking`]), and the source's
    /// protobuf column being written ([`analysis::prewrite_protobuf`]). The first analysis
    /// takes them.
    head: Arc<std::sync::Mutex<Opening>>,
}

/// What [`Entry::head`] holds.
#[derive(Debug, Default)]
struct Opening {
    known: Option<(usize, crate::pipeline::Known)>,
    protobuf: Option<analysis::Prewritten>,
}

impl Entry {
    /// Moves encoded deferred columns into the analysis; returns whether any arrived.
    fn poll_encoding(&mut self) -> bool {
        let mut changed = false;
        let mut i = 0;
        while i < self.encoding.len() {
            let Some(result) = self.encoding[i].1.poll() else {
                i += 1;
                continue;
            };
            let (format, _) = self.encoding.swap_remove(i);
            changed = true;
            let Some(analysis) = self.analysis.ready() else {
                continue;
            };
            // A failed encoding says so in its column (and is not started again).
            let column = match result {
                Ok(Some(column)) => column,
                Ok(None) => analysis::not_encoded_because(format, "the payload did not decode"),
                Err(e) => analysis::not_encoded_because(format, &e.to_string()),
            };
            self.analysis = Stage::Ready(Arc::new(analysis.with_column(column)));
        }
        changed
    }

    /// The name lists and titles use: the user's; for a paste once read, what was read
    /// ([`Entry::read_name`]); else the source's ([`Source::name`]).
    pub fn name(&self) -> String {
        if let Some(label) = &self.label {
            return label.clone();
        }
        if matches!(self.source.origin, source::Origin::Pasted) {
            if let Some(read) = self.read_name() {
                return read;
            }
        }
        self.source.name()
    }

    /// What the shown payload was read as: its outermost layer (or `pasted`), its format (or
    /// its verdict, or `no known format`) and its size: `hex dump · MessagePack · 98 B`.
    /// `None` until it is read.
    pub fn read_name(&self) -> Option<String> {
        let opened = self.opened.ready()?;
        let payload = opened.payloads.get(self.payload)?;
        let analysis = self.analysis.ready()?;
        let what = payload.layers.first().map_or("pasted", |l| l.name.as_str());
        let format = match &analysis.verdict {
            Some(v) => v.name(),
            None if !analysis.overridden
                && analysis.readings.first().is_some_and(|r| !r.is_claim()) =>
            {
                "no known format".to_string()
            }
            None => analysis.format.title().to_string(),
        };
        Some(format!(
            "{what} · {format} · {} B",
            crate::report::table::group(payload.bytes.len() as u64)
        ))
    }
}

/// The sources, the schemas, the selection and the work in progress.
pub struct Workspace {
    /// Every opened source, in opening order.
    pub entries: Vec<Entry>,
    /// The source shown.
    pub current: Option<usize>,
    /// Loaded protobuf schemas.
    pub schemas: SchemaSet,
    /// The linked selection: the same path is selected in every column.
    pub selected: Option<Path>,
    /// The last profiler run (running, finished or cancelled).
    pub profile: Option<ProfileRun>,
    /// The last comparison of two payloads (running, made or failed).
    pub comparison: Option<CompareRun>,
    /// The bounds every peel and decode works within (see [`Workspace::set_limits`]).
    limits: Limits,
    /// TLS key logs loaded ([`Workspace::load_key_log`]), merged: every capture's TLS
    /// connections are decrypted with them.
    keys: Option<Arc<KeyLog>>,
    /// The key log files loaded ([`Workspace::load_key_log_file`]), in loading order.
    pub key_log_files: Vec<std::path::PathBuf>,
    /// Formats whose columns the view does not show ([`Workspace::set_hidden_columns`]).
    hidden: Vec<Format>,
    notify: Notify,
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("entries", &self.entries)
            .field("current", &self.current)
            .field("selected", &self.selected)
            .finish()
    }
}

impl Workspace {
    /// An empty workspace; `notify` is called from workers when a result or progress arrives.
    pub fn new(notify: Notify) -> Workspace {
        Workspace {
            entries: Vec::new(),
            current: None,
            schemas: SchemaSet::default(),
            selected: None,
            profile: None,
            comparison: None,
            limits: Limits::default(),
            keys: None,
            key_log_files: Vec::new(),
            hidden: Vec::new(),
            notify,
        }
    }

    /// Sets which formats' columns the view does not show. Analyses made from now on leave
    /// them unencoded ([`Choice::hidden`]); a column that was left so and is shown again is
    /// encoded on a worker ([`Workspace::poll`] starts it) without analysing the payload again.
    pub fn set_hidden_columns(&mut self, hidden: &[Format]) {
        if self.hidden == hidden {
            return;
        }
        self.hidden = hidden.to_vec();
        for e in &mut self.entries {
            e.choice.hidden = hidden.to_vec();
        }
    }

    /// The formats whose columns the view does not show ([`Workspace::set_hidden_columns`]).
    pub fn hidden_columns(&self) -> &[Format] {
        &self.hidden
    }

    /// Adds a source, makes it current and starts peeling it. Returns its index.
    pub fn add(&mut self, source: Arc<Source>) -> usize {
        self.entries.push(Entry {
            source,
            layers: Layers::Best,
            opened: Stage::Empty,
            reading: Arc::default(),
            payload: 0,
            default_payload: true,
            choice: Choice::default(),
            analysis: Stage::Empty,
            label: None,
            encoding: Vec::new(),
            head: Arc::default(),
        });
        let i = self.entries.len() - 1;
        self.current = Some(i);
        self.selected = None;
        self.start_open(i);
        i
    }

    /// Loads a TLS key log (NSS format, `SSLKEYLOGFILE`) on top of those loaded before and
    /// peels every source again, so captures of TLS connections it has keys for are decrypted.
    /// Returns how many connections (client randoms) it has keys for.
    pub fn load_key_log(&mut self, text: &str) -> Result<usize, KeyLogError> {
        let parsed = KeyLog::parse(text)?;
        let n = parsed.len();
        let mut keys = self.keys.as_deref().cloned().unwrap_or_default();
        keys.merge(parsed);
        self.keys = Some(Arc::new(keys));
        self.selected = None;
        for i in 0..self.entries.len() {
            self.start_open(i);
        }
        Ok(n)
    }

    /// Loads the TLS key log in the file at `path` ([`Workspace::load_key_log`]) and remembers
    /// it, so it is shown as in use and not offered again. The error names the file.
    pub fn load_key_log_file(&mut self, path: &FsPath) -> Result<usize, KeyLogFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| KeyLogFileError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let n = self
            .load_key_log(&text)
            .map_err(|source| KeyLogFileError::Parse {
                path: path.to_path_buf(),
                source,
            })?;
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if !self.key_log_files.contains(&path) {
            self.key_log_files.push(path);
        }
        Ok(n)
    }

    /// The key log files beside source `i`'s capture that could decrypt it: when the capture
    /// holds TLS streams not decrypted, the files in its folder named `*.keylog`, `*.keys`,
    /// `sslkeylog*` or `SSLKEYLOGFILE` that are not loaded yet (at most 8, by name).
    pub fn key_logs_beside(&self, i: usize) -> Vec<std::path::PathBuf> {
        let Some(e) = self.entries.get(i) else {
            return Vec::new();
        };
        let Origin::File(path) = &e.source.origin else {
            return Vec::new();
        };
        let encrypted = e
            .opened
            .ready()
            .and_then(|o| o.capture.as_ref())
            .is_some_and(|c| !c.tls.is_empty());
        if !encrypted {
            return Vec::new();
        }
        let Some(dir) = path.parent().map(|d| {
            if d.as_os_str().is_empty() {
                FsPath::new(".")
            } else {
                d
            }
        }) else {
            return Vec::new();
        };
        let Ok(list) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut found: Vec<std::path::PathBuf> = list
            .filter_map(|d| d.ok().map(|d| d.path()))
            .filter(|p| p.is_file())
            .filter(|p| {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().to_ascii_lowercase())
                    .unwrap_or_default();
                name.ends_with(".keylog")
                    || name.ends_with(".keys")
                    || name.starts_with("sslkeylog")
            })
            .filter(|p| {
                let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
                !self.key_log_files.contains(&real)
            })
            .collect();
        found.sort();
        found.truncate(8);
        found
    }

    /// Opens a file (mapped when large), or shows it when it is open already: one source per
    /// file ([`Workspace::reload`] reads it again). The error names the file.
    pub fn open_path(&mut self, path: impl AsRef<FsPath>) -> Result<usize, OpenError> {
        let path = path.as_ref();
        if let Some(i) = self.find_path(path) {
            self.select_source(i);
            return Ok(i);
        }
        let source = Source::open(path).map_err(|source| OpenError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(self.add(source))
    }

    /// The open source read from the file at `path` (`./a.json` and an absolute path to it are
    /// the same file).
    pub fn find_path(&self, path: &FsPath) -> Option<usize> {
        let real = std::fs::canonicalize(path).ok();
        self.entries.iter().position(|e| match &e.source.origin {
            Origin::File(p) => {
                p == path || (real.is_some() && std::fs::canonicalize(p).ok() == real)
            }
            _ => false,
        })
    }

    /// Reads source `i`'s file again and peels it anew, keeping its name and choices; the
    /// payload a user came for is chosen again. Only a file can be read again; the error says
    /// which file failed and why.
    pub fn reload(&mut self, i: usize) -> Result<(), OpenError> {
        let Some(Origin::File(path)) = self.entries.get(i).map(|e| e.source.origin.clone()) else {
            return Err(OpenError::NotAFile);
        };
        let source = match Source::open(&path) {
            Ok(source) => source,
            Err(source) => return Err(OpenError::Reread { path, source }),
        };
        if let Some(e) = self.entries.get_mut(i) {
            e.source = source;
            e.opened = Stage::Empty;
            e.analysis = Stage::Empty;
            e.payload = 0;
            e.default_payload = true;
        }
        if self.current == Some(i) {
            self.selected = None;
        }
        self.start_open(i);
        Ok(())
    }

    /// Adds pasted text as a source, or shows the open source that holds exactly these bytes
    /// (pasting the same dump twice does not make a copy).
    pub fn paste(&mut self, text: &str) -> usize {
        match self.find_bytes(text.as_bytes()) {
            Some(i) => {
                self.select_source(i);
                i
            }
            None => self.add(Source::pasted(text)),
        }
    }

    /// The first open source whose bytes are exactly `bytes`.
    pub fn find_bytes(&self, bytes: &[u8]) -> Option<usize> {
        self.entries
            .iter()
            .position(|e| e.source.len() == bytes.len() && e.source.bytes() == bytes)
    }

    /// Closes source `i`: its jobs are cancelled and it leaves the list. The source after it
    /// (else the one before) is shown when it was the current one.
    pub fn close(&mut self, i: usize) {
        if i >= self.entries.len() {
            return;
        }
        let e = self.entries.remove(i);
        cancel(&e.opened);
        cancel(&e.analysis);
        self.current = match self.current {
            _ if self.entries.is_empty() => None,
            Some(c) if c > i => Some(c - 1),
            Some(c) if c == i => {
                self.selected = None;
                let next = i.min(self.entries.len() - 1);
                if matches!(self.entries[next].analysis, Stage::Empty) {
                    self.start_analysis(next);
                }
                Some(next)
            }
            other => other,
        };
        if self.entries.is_empty() {
            self.selected = None;
        }
    }

    /// Closes every source but `i`, which becomes the current one.
    pub fn close_others(&mut self, i: usize) {
        if i >= self.entries.len() {
            return;
        }
        self.select_source(i);
        for j in (0..self.entries.len()).rev() {
            if j != i {
                self.close(j);
            }
        }
    }

    /// Names source `i` as the user wants it listed; an empty name gives it back its own.
    pub fn rename(&mut self, i: usize, name: &str) {
        if let Some(e) = self.entries.get_mut(i) {
            let name = name.trim();
            e.label = (!name.is_empty() && name != e.source.name()).then(|| name.to_string());
        }
    }

    /// The current entry.
    pub fn entry(&self) -> Option<&Entry> {
        self.current.and_then(|i| self.entries.get(i))
    }

    fn entry_mut(&mut self) -> Option<&mut Entry> {
        self.current.and_then(|i| self.entries.get_mut(i))
    }

    /// The current payload's analysis, when ready.
    pub fn analysis(&self) -> Option<&Arc<Analysis>> {
        self.entry().and_then(|e| e.analysis.ready())
    }

    /// What to show of the current payload: its analysis when ready, else the decoded payload
    /// alone while its other formats are being encoded (their columns say so).
    pub fn shown_analysis(&self) -> Option<Arc<Analysis>> {
        self.entry().and_then(|e| e.analysis.ready_or_preview())
    }

    /// Shows source `i` (analysing its payload if that is not done yet).
    pub fn select_source(&mut self, i: usize) {
        if i < self.entries.len() && self.current != Some(i) {
            self.current = Some(i);
            self.selected = None;
            if matches!(self.entries[i].analysis, Stage::Empty) {
                self.start_analysis(i);
            }
        }
    }

    /// Selects payload `p` of the current source.
    pub fn select_payload(&mut self, p: usize) {
        let Some(i) = self.current else { return };
        let count = self.entries[i]
            .opened
            .ready()
            .map_or(0, |o| o.payloads.len());
        self.entries[i].default_payload = false;
        if p < count && self.entries[i].payload != p {
            self.entries[i].payload = p;
            self.selected = None;
            self.start_analysis(i);
        }
    }

    /// Reads the current payload as `format` (`None`: the best reading).
    pub fn set_format(&mut self, format: Option<Format>) {
        if let Some(i) = self.current {
            if self.entries[i].choice.format != format {
                self.entries[i].choice.format = format;
                self.start_analysis(i);
            }
        }
    }

    /// Takes the current source's bytes as they are (`true`) or peels their layers.
    pub fn set_raw(&mut self, raw: bool) {
        self.set_layers(if raw { Layers::AsIs } else { Layers::Best });
    }

    /// Peels the current source again as `choice` says (how many layers, how streams split);
    /// the default choice is the best-ranked way, as at first.
    pub fn set_peel(&mut self, choice: PeelChoice) {
        let raw = choice.max_layers == Some(0) && choice.split == Split::Never;
        self.set_layers(match choice {
            _ if raw => Layers::AsIs,
            c if c == PeelChoice::default() => Layers::Best,
            c => Layers::Peel(c),
        });
    }

    /// Peels the current source again as `layers` says.
    pub fn set_layers(&mut self, layers: Layers) {
        if let Some(i) = self.current {
            if self.entries[i].layers != layers {
                self.entries[i].layers = layers;
                self.entries[i].payload = 0;
                self.entries[i].default_payload = true;
                self.selected = None;
                self.start_open(i);
            }
        }
    }

    /// Sets how protobuf is read and written for the current source.
    pub fn set_proto_mode(&mut self, mode: ProtoMode) {
        if let Some(i) = self.current {
            if self.entries[i].choice.proto != mode {
                self.entries[i].choice.proto = mode;
                self.start_analysis(i);
            }
        }
    }

    /// Reads a field of the current source's schema-less protobuf the user's way
    /// (`reading.fields` at every occurrence, as `reading.read_as`), in place of an earlier
    /// reading of the same field, and decodes the payload again. The readings stay with the
    /// source: other sources are not read with them, and this one keeps them when shown again.
    pub fn set_field_reading(&mut self, reading: FieldReading) {
        if let Some(i) = self.current {
            let readings = &mut self.entries[i].choice.field_readings;
            if readings.contains(&reading) {
                return;
            }
            readings.retain(|r| r.fields != reading.fields);
            readings.push(reading);
            self.start_analysis(i);
        }
    }

    /// Drops the current source's field readings ([`Workspace::set_field_reading`]) and decodes
    /// the payload again with the decoder's own guesses.
    pub fn clear_field_readings(&mut self) {
        if let Some(i) = self.current {
            if !self.entries[i].choice.field_readings.is_empty() {
                self.entries[i].choice.field_readings.clear();
                self.start_analysis(i);
            }
        }
    }

    /// Sets how the current source's MessagePack and CBOR columns are written: as the reference
    /// libraries write them (`None`), or in a variant (shortest floats, canonical).
    pub fn set_encoding(&mut self, encoding: Option<crate::profile::sizes::Variant>) {
        if let Some(i) = self.current {
            if self.entries[i].choice.encoding != encoding {
                self.entries[i].choice.encoding = encoding;
                self.start_analysis(i);
            }
        }
    }

    /// Sets whether the current source's JSON column writes the `.proto` field names of a
    /// payload read as protobuf with a schema, or (`false`, the default) the JSON names protoc
    /// writes (see [`Choice::proto_names`]).
    pub fn set_proto_names(&mut self, proto_names: bool) {
        if let Some(i) = self.current {
            if self.entries[i].choice.proto_names != proto_names {
                self.entries[i].choice.proto_names = proto_names;
                self.start_analysis(i);
            }
        }
    }

    /// Loads schema files (`.proto` with include folders, or one descriptor set) and re-reads
    /// the current payload with them.
    pub fn load_schema_files(
        &mut self,
        files: &[PathBuf],
        includes: &[PathBuf],
    ) -> Result<String, crate::codec::protobuf::schema::SchemaError> {
        let label = self.schemas.load_files(files, includes)?.label.clone();
        self.schemas_changed();
        Ok(label)
    }

    /// Loads an Avro schema file (`.avsc`): Avro payloads are read with it and the Avro column
    /// is written by it.
    pub fn load_avro_file(
        &mut self,
        path: &std::path::Path,
    ) -> Result<String, crate::codec::avro::AvroSchemaError> {
        let label = self.schemas.load_avro_file(path)?.label.clone();
        self.schemas_changed();
        Ok(label)
    }

    /// Reads Avro as the loaded schema at `index` of [`SchemaSet::avro`] reads what the
    /// writer's schema wrote (`None`: by the writer's schema alone).
    pub fn set_avro_reader(&mut self, index: Option<usize>) {
        self.schemas.avro_reader = index
            .and_then(|i| self.schemas.avro.get(i))
            .map(|a| a.schema.clone());
        self.schemas_changed();
    }

    /// Loads Confluent Schema Registry schemas (a folder of `<id>.avsc`/`.proto`/`.json`, or the
    /// registry's JSON answers): payloads framed with a known id are peeled again.
    pub fn load_registry(&mut self, path: &std::path::Path) -> Result<String, SchemaLoadError> {
        let registry = crate::codec::avro::registry::Registry::load(path)
            .map_err(SchemaLoadError::Registry)?;
        let label = format!("registry {} ({} schemas)", path.display(), registry.len());
        self.schemas.registry = Some(registry);
        for i in 0..self.entries.len() {
            self.start_open(i);
        }
        self.schemas_changed();
        Ok(label)
    }

    /// Loads pasted schema text: an Avro schema (JSON: an object, a union array or a quoted
    /// type name), `.proto` text, or a base64/hex descriptor set.
    pub fn load_schema_text(&mut self, text: &str) -> Result<String, SchemaLoadError> {
        let label = if text.trim_start().starts_with(['{', '[', '"']) {
            self.schemas
                .load_avro_text(text)
                .map_err(SchemaLoadError::Avro)?
                .label
                .clone()
        } else {
            self.schemas.load_pasted(text)?.label.clone()
        };
        self.schemas_changed();
        Ok(label)
    }

    /// Loads `.proto` source named `name` (a bundled sample's file name).
    pub fn load_proto_source(&mut self, name: &str, text: &str) -> Result<String, SchemaLoadError> {
        let label = self.schemas.load_proto_source(name, text)?.label.clone();
        self.schemas_changed();
        Ok(label)
    }

    /// Forgets every schema.
    pub fn clear_schemas(&mut self) {
        self.schemas = SchemaSet::default();
        self.schemas_changed();
    }

    fn schemas_changed(&mut self) {
        for (i, e) in self.entries.iter_mut().enumerate() {
            if Some(i) != self.current {
                e.analysis = Stage::Empty;
            }
        }
        if let Some(i) = self.current {
            self.start_analysis(i);
        }
    }

    /// The bounds peeling and decoding work within.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Sets the bounds peeling and decoding work within, and peels every source again with
    /// them (a source that stopped at a limit may read further now, or one stop earlier).
    pub fn set_limits(&mut self, limits: Limits) {
        if limits == self.limits {
            return;
        }
        self.limits = limits;
        self.selected = None;
        for i in 0..self.entries.len() {
            self.start_open(i);
        }
    }

    /// Selects `path` in every column.
    pub fn select(&mut self, path: Option<Path>) {
        self.selected = path;
    }

    fn start_open(&mut self, i: usize) {
        let Some(e) = self.entries.get_mut(i) else {
            return;
        };
        cancel(&e.opened);
        cancel(&e.analysis);
        e.analysis = Stage::Empty;
        let source = e.source.clone();
        let layers = e.layers;
        let limits = self.limits;
        let keys = self.keys.clone();
        let registry = self.schemas.registry.clone();
        let reading = Arc::new(Reading::default());
        e.reading = reading.clone();
        e.head = Arc::default();
        let head = e.head.clone();
        let hidden = self.hidden.clone();
        e.opened = Stage::Running(Job::spawn("peel", self.notify.clone(), move |ctx| {
            ctx.report(0.0, "peeling layers");
            // The source's protobuf column needs nothing peeling makes: written meanwhile.
            let protobuf = analysis::prewrite_protobuf(&source, &limits, &hidden);
            let len = source.len();
            // Progress a two-hundredth of the file at a time, at least a mebibyte apart.
            let step = (len / 200).max(1 << 20);
            let mut next = step;
            let mut watch = |read: usize| {
                reading.begun.store(true, Ordering::Relaxed);
                if read >= next {
                    next = read + step;
                    ctx.report(
                        read as f32 / len.max(1) as f32,
                        &format!("{} of {} MB read", read / 1_000_000, len / 1_000_000),
                    );
                }
                !(reading.stop.load(Ordering::Relaxed) || ctx.is_cancelled())
            };
            let (opened, known) = analysis::open_walking(
                &source,
                layers,
                &limits,
                keys.as_deref(),
                registry.as_ref(),
                &mut watch,
            )
            .map_err(|e| JobError::Failed(e.to_string()))?;
            if let Ok(mut slot) = head.lock() {
                *slot = Opening { known, protobuf };
            }
            ctx.report(1.0, "listing the payloads");
            // The payload list's rows and filter read these: made here, not on the UI thread.
            opened.exchanges();
            opened.listing_summary();
            Ok(opened)
        }));
    }

    fn start_analysis(&mut self, i: usize) {
        let notify = self.notify.clone();
        let schemas = self.schemas.clone();
        let limits = self.limits;
        let Some(e) = self.entries.get_mut(i) else {
            return;
        };
        let Some(opened) = e.opened.ready().cloned() else {
            // Peeling is still running; the analysis starts when it finishes.
            return;
        };
        cancel(&e.analysis);
        if opened.payloads.is_empty() {
            // A capture without a payload: `Opened::nothing` says why; there is nothing to decode.
            return;
        }
        let p = e.payload.min(opened.payloads.len().saturating_sub(1));
        e.choice.hidden = self.hidden.clone();
        let choice = e.choice.clone();
        // What the peel job did for this payload, taken once (a later analysis does it again).
        let head = match e.head.lock() {
            Ok(mut slot) => {
                let opening = std::mem::take(&mut *slot);
                analysis::HeadStart {
                    known: opening.known.filter(|(i, _)| *i == p).map(|(_, k)| k),
                    protobuf: opening.protobuf,
                }
            }
            Err(_) => analysis::HeadStart::default(),
        };
        for (_, job) in e.encoding.drain(..) {
            job.cancel();
        }
        e.analysis = Stage::Running(Job::spawn_with_preview(
            "analyze",
            notify,
            move |ctx, preview| {
                let Some(payload) = opened.payloads.get(p) else {
                    return Err(JobError::Failed("the source has no payload".into()));
                };
                analysis::analyze_payload_knowing(
                    payload,
                    &choice,
                    &schemas,
                    &limits,
                    ctx,
                    &|partial| preview.publish(partial),
                    head,
                )
            },
        ));
    }

    /// Moves finished results in and starts what follows them. Returns whether anything changed
    /// (the app repaints).
    pub fn poll(&mut self) -> bool {
        let mut changed = false;
        let mut analyse = Vec::new();
        for (i, e) in self.entries.iter_mut().enumerate() {
            if e.opened.poll() {
                changed = true;
                // Start on the payload a user came for (a capture's request may be empty, its
                // first datagram a DNS query): as the CLI chooses it.
                if let Some(o) = e.opened.ready() {
                    if std::mem::take(&mut e.default_payload)
                        || o.payloads.get(e.payload).is_none_or(|p| p.bytes.is_empty())
                    {
                        e.payload = o.listing_summary().default_payload;
                    }
                }
                if e.opened.ready().is_some() && Some(i) == self.current {
                    analyse.push(i);
                }
            }
            changed |= e.analysis.poll();
            changed |= e.poll_encoding();
        }
        for i in analyse {
            self.start_analysis(i);
        }
        self.encode_shown();
        if let Some(run) = &mut self.profile {
            changed |= run.poll();
        }
        if let Some(run) = &mut self.comparison {
            changed |= run.poll();
        }
        changed
    }

    /// The name of payload `payload` of source `i` as the diff view lists it: the source's
    /// name, with `#N` (from 1) when it holds several payloads.
    pub fn payload_name(&self, i: usize, payload: usize) -> String {
        let Some(e) = self.entries.get(i) else {
            return String::new();
        };
        match e.opened.ready().map(|o| o.payloads.len()) {
            Some(n) if n > 1 => format!("{} #{}", e.name(), payload + 1),
            _ => e.name(),
        }
    }

    /// Compares payload `a.1` of source `a.0` with payload `b.1` of source `b.0` on a worker
    /// (a comparison already going is cancelled and replaced). A payload not decoded yet is
    /// decoded there, with its source's choices. Fails when either source is not open.
    pub fn compare(
        &mut self,
        a: (usize, usize),
        b: (usize, usize),
        options: crate::diff::DiffOptions,
    ) -> Result<(), CompareError> {
        let pick = |(i, p): (usize, usize)| -> Result<compare::Pick, CompareError> {
            let e = self
                .entries
                .get(i)
                .ok_or(CompareError::NotOpen { index: i })?;
            // The analysis shown is for the entry's selected payload only.
            let analysis = (e.payload == p)
                .then(|| e.analysis.ready().cloned())
                .flatten();
            Ok(compare::Pick {
                name: self.payload_name(i, p),
                analysis,
                source: e.source.clone(),
                layers: e.layers,
                keys: self.keys.clone(),
                payload: p,
                choice: e.choice.clone(),
            })
        };
        let (pa, pb) = (pick(a)?, pick(b)?);
        if let Some(old) = &self.comparison {
            cancel(&old.result);
        }
        self.comparison = Some(CompareRun::start(
            pa,
            pb,
            options,
            self.schemas.clone(),
            self.limits,
            self.notify.clone(),
        ));
        Ok(())
    }

    /// Whether a comparison is being made.
    pub fn is_comparing(&self) -> bool {
        self.comparison.as_ref().is_some_and(CompareRun::is_running)
    }

    /// The comparison made, when ready.
    pub fn comparison(&self) -> Option<&Arc<Comparison>> {
        self.comparison.as_ref().and_then(|c| c.result.ready())
    }

    /// Starts profiling (a run already going is cancelled and replaced). The payloads are the
    /// current one or every open source's selected payload; those not decoded yet are decoded
    /// on the worker. `links` are the transfer estimates' links (empty: the defaults);
    /// `runtimes` (each with the interpreter to run) are timed after the Rust jobs
    /// ([`crate::profile::runtimes`]). Fails when there is no payload to profile.
    pub fn start_profile(
        &mut self,
        mode: Mode,
        scope: Scope,
        links: Vec<Link>,
        runtimes: Vec<(crate::profile::runtimes::Runtime, String)>,
    ) -> Result<(), ProfileStartError> {
        let indices: Vec<usize> = match scope {
            Scope::Current => self.current.into_iter().collect(),
            Scope::AllOpen => (0..self.entries.len()).collect(),
        };
        let mut pending = Vec::new();
        for i in indices {
            let Some(e) = self.entries.get(i) else {
                continue;
            };
            let payloads = e.opened.ready().map_or(1, |o| o.payloads.len());
            let mut name = e.name();
            if payloads > 1 {
                name = format!("{name} #{}", e.payload + 1);
            }
            pending.push(profiling::Pending {
                name,
                analysis: e.analysis.ready().cloned(),
                source: e.source.clone(),
                layers: e.layers,
                keys: self.keys.clone(),
                payload: e.payload,
                choice: e.choice.clone(),
            });
        }
        if pending.is_empty() {
            return Err(ProfileStartError::NoPayload);
        }
        self.profile = Some(ProfileRun::start(
            pending,
            mode,
            links,
            runtimes,
            self.schemas.clone(),
            self.limits,
            self.notify.clone(),
        ));
        Ok(())
    }

    /// Whether a profiler run is going.
    pub fn is_profiling(&self) -> bool {
        self.profile.as_ref().is_some_and(ProfileRun::is_running)
    }

    /// Whether the current source is being opened (read and peeled).
    pub fn is_loading(&self) -> bool {
        self.entry().is_some_and(|e| e.opened.is_running())
    }

    /// Whether any job is running for the current source.
    pub fn is_busy(&self) -> bool {
        self.entry().is_some_and(|e| {
            e.opened.is_running() || e.analysis.is_running() || !e.encoding.is_empty()
        })
    }

    /// Starts encoding the current analysis's deferred columns that the view shows now.
    fn encode_shown(&mut self) {
        let (schemas, limits, notify) = (self.schemas.clone(), self.limits, self.notify.clone());
        let hidden = self.hidden.clone();
        let Some(e) = self.current.and_then(|i| self.entries.get_mut(i)) else {
            return;
        };
        let Some(analysis) = e.analysis.ready().cloned() else {
            return;
        };
        for column in &analysis.columns {
            let format = column.format;
            if !column.deferred
                || hidden.contains(&format)
                || e.encoding.iter().any(|(f, _)| *f == format)
            {
                continue;
            }
            let (analysis, choice) = (Arc::clone(&analysis), e.choice.clone());
            let (schemas, limits) = (schemas.clone(), limits);
            let job = Job::spawn("encode", notify.clone(), move |ctx| {
                ctx.report(0.1, &format!("encoding as {}", format.title()));
                Ok(analysis::encode_deferred(
                    &analysis, format, &choice, &schemas, &limits,
                ))
            });
            e.encoding.push((format, job));
        }
    }

    /// The running job's progress (0.0–1.0) and stage, for the progress bar.
    pub fn progress(&self) -> Option<(f32, String)> {
        let e = self.entry()?;
        match (&e.opened, &e.analysis) {
            (Stage::Running(j), _) => Some(j.progress()),
            (_, Stage::Running(j)) => Some(j.progress()),
            // A column encoded now that it is shown.
            _ => e.encoding.first().map(|(_, j)| j.progress()),
        }
    }

    /// Cancels the current source's running jobs; a capture being read stops where it is, and
    /// what was read is listed.
    pub fn cancel(&mut self) {
        if let Some(e) = self.entry_mut() {
            if e.reading.begun.load(Ordering::Relaxed) {
                // A capture being read stops where it is, keeping what was read.
                e.reading.stop.store(true, Ordering::Relaxed);
            } else {
                cancel(&e.opened);
            }
            cancel(&e.analysis);
            for (_, job) in &e.encoding {
                job.cancel();
            }
        }
    }

    /// Polls until no job runs for the current source (tests, the command line).
    pub fn wait_idle(&mut self) {
        loop {
            self.poll();
            if !self.is_busy() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}

/// A capture a peel job reads: whether its reading has begun (then a stop keeps what was read;
/// before, there is nothing to keep and the job is cancelled) and whether the user stopped it.
#[derive(Debug, Default)]
struct Reading {
    begun: AtomicBool,
    stop: AtomicBool,
}

fn cancel<T>(stage: &Stage<T>) {
    if let Stage::Running(job) = stage {
        job.cancel();
    }
}
