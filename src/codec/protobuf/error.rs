//! Why a schema could not be loaded, and [`quietly`], which keeps a library's panic inside a
//! schema load from reaching the user. A leaf: the schema loader and protoc's runner both use it.

use std::path::{Path, PathBuf};

/// Why a schema could not be loaded, or a message type not found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// An error at a place in a `.proto` file.
    #[error("{file}:{line}:{column}: {message}")]
    Proto {
        /// The file's name as imported (`google/protobuf/any.proto`).
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A `.proto` imports a file that none of the folders searched holds.
    #[error("{}", missing_import_text(.file, .import, .searched, .nearby.as_deref()))]
    MissingImport {
        /// The file that imports it.
        file: PathBuf,
        /// The import's name, as written (`common/money.proto`).
        import: String,
        /// The folders searched, in order.
        searched: Vec<PathBuf>,
        /// A folder near the file that holds the import, when one was found: the folder to add.
        nearby: Option<PathBuf>,
    },
    /// Any other failure (a file not found, a descriptor set that does not parse, an unknown
    /// message name), as a plain sentence.
    #[error("{0}")]
    Other(String),
}

fn missing_import_text(
    file: &Path,
    import: &str,
    searched: &[PathBuf],
    nearby: Option<&Path>,
) -> String {
    let folders: Vec<String> = searched.iter().map(|d| d.display().to_string()).collect();
    let mut text = format!(
        "{} imports \"{import}\", which none of the folders searched holds ({})",
        file.display(),
        folders.join(", ")
    );
    match nearby {
        Some(d) => text.push_str(&format!(
            "; {} holds it: add that folder (-I {})",
            d.display(),
            d.display()
        )),
        None => text.push_str("; add the folder that holds it (-I)"),
    }
    text
}

thread_local! {
    /// Set while [`quietly`] runs a closure on this thread.
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, catching a panic inside it without printing it: prost-reflect panics on some
/// descriptor sets it cannot check, and its message and backtrace must not reach the user. The
/// process's panic hook is wrapped once so that it stays silent on a thread inside `quietly`
/// and prints as before everywhere else.
pub(crate) fn quietly<T>(f: impl FnOnce() -> T) -> Result<T, ()> {
    static WRAP: std::sync::Once = std::sync::Once::new();
    WRAP.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(std::cell::Cell::get) {
                previous(info);
            }
        }));
    });
    let was = QUIET.with(|q| q.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was));
    result.map_err(|_| ())
}
