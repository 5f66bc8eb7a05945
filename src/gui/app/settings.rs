//! What the app remembers across runs (eframe storage): recent files, theme, the columns'
//! order and visibility, single-column mode, the schema files loaded, the profiler's mode,
//! export path and links, the limits changed from their defaults and the diff view's options.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::codec::Format;
use crate::profile::runtimes::Runtime;
use crate::profile::sweep::Link;
use crate::report::Mode;

/// How many recent files are kept.
const RECENT: usize = 10;

/// Schema files loaded in a run, loaded again in the next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaFiles {
    /// `.proto` or descriptor set files.
    pub files: Vec<PathBuf>,
    /// Include folders.
    pub includes: Vec<PathBuf>,
}

/// A schema loaded from text in a run, loaded again in the next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SchemaText {
    /// A bundled sample `.proto`, by its file name (its text is in the binary).
    Sample(String),
    /// Pasted schema text (`.proto` source, or a descriptor set as base64 or hex), kept whole
    /// up to [`SchemaText::MAX_PASTED`] bytes.
    Pasted(String),
}

impl SchemaText {
    /// The most pasted schema text kept between runs; a longer paste loads but is not kept.
    pub const MAX_PASTED: usize = 1 << 20;
}

/// The persisted settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Most recent first.
    pub recent: Vec<PathBuf>,
    /// Dark theme (else light).
    pub dark: bool,
    /// Column order by format name, with whether each is shown.
    pub columns: Vec<(String, bool)>,
    /// Single-column mode: only this format, full width.
    pub single: Option<String>,
    /// Schema files to load at start.
    pub schemas: Vec<SchemaFiles>,
    /// Schemas loaded from text to load at start: bundled sample `.proto`s and pasted schemas.
    pub schema_texts: Vec<SchemaText>,
    /// The profiler's mode: quick, standard or precise.
    pub profile_mode: Mode,
    /// The runtimes the user turned off in Profile ▸ Runtimes. Every other runtime is timed after
    /// the Rust jobs (as `compare` does by default) when a quick probe finds it installed, so a
    /// runtime installed later is picked up without a visit to the settings.
    pub runtimes_off: Vec<Runtime>,
    /// The interpreter per runtime the user chose in Profile ▸ Runtimes (absent: `python3` and
    /// `node`, or `$WIRELENS_PYTHON` and `$WIRELENS_NODE`).
    pub interpreters: Vec<(Runtime, String)>,
    /// Where the profiler's CSV (and plot PNGs) are exported.
    pub export_path: String,
    /// The links of the wire view, as the user set them.
    pub links: Vec<Link>,
    /// The wire view compares gzip-compressed bodies.
    pub wire_gzip: bool,
    /// The limits that differ from the defaults, as (name, value) in `--limit` syntax.
    pub limits: Vec<(String, String)>,
    /// The data inspector is open (else only its header line shows).
    pub inspector_open: bool,
    /// The columns' widths as the user dragged them: each format's share of the width, by name
    /// (normalised among the columns shown).
    pub column_widths: Vec<(String, f32)>,
    /// The share of a column's height its hex view has (the tree has the rest).
    pub hex_share: f32,
    /// The diff view's identity-field patterns, as typed (`$.data[*].id`, comma-separated).
    pub diff_keys: String,
    /// The diff view's patterns of paths left out, as typed.
    pub diff_ignore: String,
    /// The diff view counts a different key order as a change.
    pub diff_order: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            recent: Vec::new(),
            dark: true,
            // Every column shown but Avro's (see [`Settings::column_order`]).
            columns: Format::ALL
                .iter()
                .map(|&f| (f.name().to_string(), f != Format::Avro))
                .collect(),
            single: None,
            schemas: Vec::new(),
            schema_texts: Vec::new(),
            profile_mode: Mode::Quick,
            runtimes_off: Vec::new(),
            interpreters: Vec::new(),
            export_path: String::new(),
            links: Link::defaults(),
            wire_gzip: false,
            limits: Vec::new(),
            inspector_open: true,
            column_widths: Vec::new(),
            hex_share: 0.55,
            diff_keys: String::new(),
            diff_ignore: String::new(),
            diff_order: false,
        }
    }
}

impl Settings {
    /// The interpreter `runtime` runs: the one chosen in Profile ▸ Runtimes, else
    /// [`Runtime::default_program`].
    pub fn interpreter(&self, runtime: Runtime) -> String {
        self.interpreters
            .iter()
            .find(|(r, p)| *r == runtime && !p.trim().is_empty())
            .map_or_else(|| runtime.default_program(), |(_, p)| p.trim().to_string())
    }

    /// Chooses `program` as `runtime`'s interpreter (empty: back to the default).
    pub fn set_interpreter(&mut self, runtime: Runtime, program: &str) {
        self.interpreters.retain(|(r, _)| *r != runtime);
        if !program.trim().is_empty() {
            self.interpreters
                .push((runtime, program.trim().to_string()));
        }
    }

    /// Whether the profiler times `runtime` too (when it is installed): yes unless the user
    /// turned it off.
    pub fn profiles(&self, runtime: Runtime) -> bool {
        !self.runtimes_off.contains(&runtime)
    }

    /// Times `runtime` too (or not).
    pub fn set_profiles(&mut self, runtime: Runtime, on: bool) {
        self.runtimes_off.retain(|r| *r != runtime);
        if !on {
            self.runtimes_off.push(runtime);
            self.runtimes_off.sort();
        }
    }

    /// The runtimes the profiler asks for, in report order, each with its interpreter.
    pub fn timed_runtimes(&self) -> Vec<(Runtime, String)> {
        Runtime::ALL
            .into_iter()
            .filter(|r| self.profiles(*r))
            .map(|r| (r, self.interpreter(r)))
            .collect()
    }

    /// Every format in the user's order with its visibility (formats missing from a stored
    /// order are appended, shown; unknown names are dropped).
    pub fn column_order(&self) -> Vec<(Format, bool)> {
        let mut out: Vec<(Format, bool)> = Vec::new();
        for (name, shown) in &self.columns {
            if let Some(f) = Format::from_name(name) {
                if !out.iter().any(|(g, _)| *g == f) {
                    out.push((f, *shown));
                }
            }
        }
        // A format the stored order lacks comes back after it, shown; Avro's column is the
        // one the user turns on (View ▸ Columns, the palette): five columns do not fit a
        // 1000-point window, and Avro without the writer's schema is an inferred one.
        for f in Format::ALL {
            if !out.iter().any(|(g, _)| *g == f) {
                out.push((f, f != Format::Avro));
            }
        }
        out
    }

    /// Stores `order` (see [`Settings::column_order`]).
    pub fn set_column_order(&mut self, order: &[(Format, bool)]) {
        self.columns = order
            .iter()
            .map(|(f, s)| (f.name().to_string(), *s))
            .collect();
    }

    /// The share of the width each of `formats` has (summing to 1; equal unless the user
    /// dragged a split).
    pub fn column_shares(&self, formats: &[Format]) -> Vec<f32> {
        let raw: Vec<f32> = formats
            .iter()
            .map(|f| {
                self.column_widths
                    .iter()
                    .find(|(n, _)| n == f.name())
                    .map_or(1.0, |(_, w)| *w)
            })
            .map(|w| if w.is_finite() && w > 0.0 { w } else { 1.0 })
            .collect();
        let sum: f32 = raw.iter().sum();
        raw.iter().map(|w| w / sum).collect()
    }

    /// Stores the shares of `formats` (see [`Settings::column_shares`]), scaled so a format
    /// with no stored share (1.0) keeps an average column's width.
    pub fn set_column_shares(&mut self, formats: &[Format], shares: &[f32]) {
        let n = formats.len() as f32;
        for (f, s) in formats.iter().zip(shares) {
            let w = s * n;
            match self
                .column_widths
                .iter_mut()
                .find(|(name, _)| name == f.name())
            {
                Some(slot) => slot.1 = w,
                None => self.column_widths.push((f.name().to_string(), w)),
            }
        }
    }

    /// The single-column format, if that mode is on.
    pub fn single_format(&self) -> Option<Format> {
        self.single.as_deref().and_then(Format::from_name)
    }

    /// The formats whose columns are not shown (hidden in View ▸ Columns, or another column
    /// shown alone): the analysis leaves them unencoded until they are shown.
    pub fn hidden_formats(&self) -> Vec<Format> {
        match self.single_format() {
            Some(f) => Format::ALL.into_iter().filter(|&g| g != f).collect(),
            None => self
                .column_order()
                .into_iter()
                .filter(|(_, shown)| !shown)
                .map(|(f, _)| f)
                .collect(),
        }
    }

    /// Puts `path` first in the recent list.
    pub fn remember(&mut self, path: PathBuf) {
        self.recent.retain(|p| *p != path);
        self.recent.insert(0, path);
        self.recent.truncate(RECENT);
    }
}
