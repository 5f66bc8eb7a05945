//! What the app remembers across runs (eframe storage): recent files, theme, the columns'
//! order and visibility, single-column mode, the schema files loaded, the profiler's mode,
//! export path and links, and the limits changed from their defaults.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::codec::Format;
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
    /// The profiler's mode: quick, standard or precise.
    pub profile_mode: Mode,
    /// The profiler also times Python's and Node's libraries (`compare --runtime python,node`).
    pub profile_runtimes: bool,
    /// Where the profiler's CSV (and plot PNGs) are exported.
    pub export_path: String,
    /// The links of the wire view, as the user set them.
    pub links: Vec<Link>,
    /// The wire view compares gzip-compressed bodies.
    pub wire_gzip: bool,
    /// The limits that differ from the defaults, as (name, value) in `--limit` syntax.
    pub limits: Vec<(String, String)>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            recent: Vec::new(),
            dark: true,
            columns: Format::ALL
                .iter()
                .map(|f| (f.name().to_string(), true))
                .collect(),
            single: None,
            schemas: Vec::new(),
            profile_mode: Mode::Quick,
            profile_runtimes: false,
            export_path: String::new(),
            links: Link::defaults(),
            wire_gzip: false,
            limits: Vec::new(),
        }
    }
}

impl Settings {
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
        for f in Format::ALL {
            if !out.iter().any(|(g, _)| *g == f) {
                out.push((f, true));
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

    /// The single-column format, if that mode is on.
    pub fn single_format(&self) -> Option<Format> {
        self.single.as_deref().and_then(Format::from_name)
    }

    /// Puts `path` first in the recent list.
    pub fn remember(&mut self, path: PathBuf) {
        self.recent.retain(|p| *p != path);
        self.recent.insert(0, path);
        self.recent.truncate(RECENT);
    }
}
