//! The status line above the main area: what the last action did, or why it failed.

/// What the message bar says: one sentence about the last thing that happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// It worked (a schema loaded, a file saved, limits applied).
    Info(String),
    /// It did not, and why (a file that cannot open, a schema that does not compile).
    Error(String),
}

impl Status {
    /// The sentence.
    pub fn text(&self) -> &str {
        match self {
            Status::Info(t) | Status::Error(t) => t,
        }
    }

    /// Whether it reports a failure (drawn in the error colour).
    pub fn is_error(&self) -> bool {
        matches!(self, Status::Error(_))
    }
}
