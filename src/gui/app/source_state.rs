//! What the window remembers about one source while it is open: its column views (hex scroll,
//! cursor, tree state), the column the data inspector follows, the selection, the path and
//! go-to-offset fields, the payload list's filter.
//!
//! A source shown again comes back as it was left; a source opened for the first time starts
//! from nothing (scrolled to offset 0, no selection, empty fields). The workspace knows nothing of
//! this: it holds one linked selection, for the source shown, and the app saves and restores it
//! around a switch ([`App::sync_source`]).

use std::collections::HashMap;
use std::sync::Arc;

use super::{App, ColumnView};
use crate::capture::PayloadFilter;
use crate::codec::Format;
use crate::model::Path;
use crate::workspace::{Analysis, Opened, Source};

/// One source's view state (see the module docs).
#[derive(Default)]
pub(super) struct SourceState {
    /// The column views, made for [`SourceState::views_for`].
    pub views: HashMap<Format, ColumnView>,
    /// The analysis the views were made for (held, so a new analysis is never mistaken for it).
    pub views_for: Option<Arc<Analysis>>,
    /// The hex view of the source while its analysis is not ready.
    pub raw_hex: super::HexView,
    /// The column the data inspector and copy buttons use.
    pub focus: Option<Format>,
    /// The selection the views were last moved to.
    pub shown_selection: Option<Path>,
    /// The linked selection, as of the end of the last frame this source was shown.
    pub selected: Option<Path>,
    /// A byte clicked in a column: that column's cursor stays on it when the selection moves
    /// the other columns to the clicked field.
    pub clicked_at: Option<(Format, usize)>,
    /// The "Selected path" field.
    pub select_text: String,
    /// The data inspector's go-to-offset field.
    pub goto_text: String,
    /// The payload list's filter (its text, the content type).
    pub payload_filter: PayloadFilter,
    /// The payloads the list was last drawn for (held, as [`SourceState::views_for`] is); their
    /// exchanges are [`Opened::exchanges`].
    pub listing: Option<Arc<Opened>>,
    /// What the filter leaves of that listing, made again only when the filter or the listing
    /// changes (a list of a million payloads is not filtered every frame).
    pub filtered: Option<Filtered>,
}

/// The payloads a filter leaves, and what the list says of them.
#[derive(Debug, Clone)]
pub struct Filtered {
    /// The filter it was made with.
    pub filter: PayloadFilter,
    /// The listing it was made from (its address).
    pub listing: usize,
    /// The indices shown, in order.
    pub shown: Vec<usize>,
    /// Why the filter's text does not parse (the list is then filtered by the content type
    /// alone).
    pub error: Option<String>,
    /// "3 of 8 payloads shown…"
    pub text: String,
    /// The content types of the listing, each with its count.
    pub types: Vec<(Option<String>, usize)>,
}

impl App {
    /// Makes [`App::here`] the state of the source shown: when the workspace shows another
    /// source than last frame, the old one's state is kept aside and the new one's restored (or
    /// made fresh), with its selection. State of closed sources is dropped.
    pub(super) fn sync_source(&mut self) {
        let current = self.ws.entry().map(|e| e.source.clone());
        let same = match (&current, &self.here_for) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            let old = std::mem::take(&mut self.here);
            if let Some(src) = self.here_for.take() {
                self.parked.push((src, old));
            }
            if let Some(src) = &current {
                if let Some(k) = self.parked.iter().position(|(s, _)| Arc::ptr_eq(s, src)) {
                    self.here = self.parked.swap_remove(k).1;
                    self.ws.select(self.here.selected.clone());
                }
            }
            self.here_for = current;
        }
        let open: Vec<&Arc<Source>> = self.ws.entries.iter().map(|e| &e.source).collect();
        self.parked
            .retain(|(s, _)| open.iter().any(|o| Arc::ptr_eq(o, s)));
    }
}
