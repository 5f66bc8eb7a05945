//! Which of the app's windows is meant, and its title: named by the windows' own drawing code
//! and by [`super::windows::Windows`], which keeps them, so it sits below both.

/// One of the app's windows (the palette, a modal, is apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Which {
    /// File ▸ Open path….
    OpenPath,
    /// File ▸ Paste….
    Paste,
    /// Schema ▸ Paste….
    Schema,
    /// File ▸ Save column bytes….
    Save,
    /// Help ▸ Shortcuts.
    Help,
    /// View ▸ Limits….
    Limits,
    /// Profile ▸ Runtimes….
    Runtimes,
}

impl Which {
    /// Every window.
    pub(super) const ALL: [Which; 7] = [
        Which::OpenPath,
        Which::Paste,
        Which::Schema,
        Which::Save,
        Which::Help,
        Which::Limits,
        Which::Runtimes,
    ];

    /// Its title, which egui also takes for its id.
    pub fn title(self) -> &'static str {
        match self {
            Which::OpenPath => "Open path",
            Which::Paste => "Paste",
            Which::Schema => "Schema",
            Which::Save => "Save column bytes",
            Which::Help => "Shortcuts",
            Which::Limits => "Limits",
            Which::Runtimes => "Runtimes",
        }
    }
}
