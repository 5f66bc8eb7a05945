//! Why the workspace could not open a file, load a schema or key log, export a table, compare
//! two payloads or start the profiler: the messages the app's status line shows, with what
//! caused them kept as their source.

use std::path::PathBuf;

use crate::capture::tls::KeyLogError;
use crate::codec::avro::AvroSchemaError;
use crate::codec::protobuf::schema::SchemaError;

/// Why [`super::Workspace::open_path`] or [`super::Workspace::reload`] could not read a file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The file could not be opened.
    #[error("cannot open {}: {source}", path.display())]
    Open {
        /// The file as given.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The source to read again came from no file (a paste, a sample).
    #[error("only a source opened from a file can be read again")]
    NotAFile,
    /// The source's file could not be read again.
    #[error("cannot read {} again: {source}", path.display())]
    Reread {
        /// The source's file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
}

/// Why [`super::Workspace::load_key_log_file`] loaded no keys; the message names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyLogFileError {
    /// The file could not be read.
    #[error("key log {} not loaded: {source}", path.display())]
    Read {
        /// The file as given.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A line of it is no key log entry.
    #[error("key log {} not loaded: {source}", path.display())]
    Parse {
        /// The file as given.
        path: PathBuf,
        /// The line and what is wrong with it.
        source: KeyLogError,
    },
}

/// Why a schema (pasted text, `.proto` source, an Avro schema or a schema registry) was not
/// loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaLoadError {
    /// `.proto` source the compiler refused (its message, with the line).
    #[error(transparent)]
    Proto(SchemaError),
    /// Pasted text that is neither `.proto` source nor a base64/hex descriptor set.
    #[error("the pasted text is neither .proto source nor a base64/hex descriptor set")]
    NotASchema,
    /// Pasted base64 or hex whose bytes are no descriptor set.
    #[error("pasted {detail} is not a descriptor set: {source}")]
    NotADescriptorSet {
        /// How the text was read (`base64`, `hex`, …).
        detail: String,
        /// Why the bytes are no descriptor set.
        source: SchemaError,
    },
    /// Pasted text that looks like an Avro schema but is none.
    #[error(transparent)]
    Avro(AvroSchemaError),
    /// A schema registry folder or answer that could not be read.
    #[error(transparent)]
    Registry(crate::codec::avro::registry::RegistryError),
}

/// Why a table (the diff's changes, the profiler's timings) was not exported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// The profiler has not run yet: there is nothing to write.
    #[error("nothing to export yet: run the profiler first")]
    Nothing,
    /// The CSV writer failed.
    #[error(transparent)]
    Csv(#[from] ::csv::Error),
    /// The CSV is not UTF-8 text (for the clipboard).
    #[error(transparent)]
    NotText(#[from] std::string::FromUtf8Error),
    /// A file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
}

/// Why [`super::Workspace::compare`] started no comparison.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CompareError {
    /// One of the two sources is not open.
    #[error("no source {} is open", index + 1)]
    NotOpen {
        /// The source's index (from 0; the message counts from 1).
        index: usize,
    },
}

/// Why [`super::Workspace::start_profile`] started no run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileStartError {
    /// No source is open (or the one asked for is not): there is no payload to time.
    #[error("open a payload first")]
    NoPayload,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparing_and_profiling_say_what_is_missing() {
        assert_eq!(
            CompareError::NotOpen { index: 1 }.to_string(),
            "no source 2 is open"
        );
        assert_eq!(
            ProfileStartError::NoPayload.to_string(),
            "open a payload first"
        );
    }
}
