//! Compiling editions `.proto` files with protoc, which protox 0.10 cannot parse.
//!
//! The protoc is the one the `protoc-bin-vendored` crate ships (Google's release binaries,
//! protoc 36.2 in version 3.3 of the crate), so nothing needs installing. The crate names the
//! binary by where it was built; a wirelens binary moved to another machine may not find it
//! there, and then `PROTOC` (a protoc 27 or newer) is used. protoc runs with the given include
//! folders and then the crate's (the well-known types and `descriptor.proto`), writes a
//! descriptor set with its imports into a temporary folder, and its messages become errors.
//!
//! Only files that declare an edition go this way ([`declares_edition`]); proto2 and proto3
//! stay on protox, in-process.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::codec::protobuf::error::{quietly, SchemaError};

/// A compiled descriptor set and the compiler that made it.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The `FileDescriptorSet`, imports included.
    pub set: Vec<u8>,
    /// `protoc 36.2 (protoc-bin-vendored)`.
    pub compiler: String,
}

/// Whether `.proto` text declares an edition (`edition = "2023";` as its first statement,
/// after comments), rather than `syntax`.
pub fn declares_edition(text: &str) -> bool {
    let mut rest = text.trim_start_matches('\u{feff}');
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map_or("", |(_, r)| r);
        } else {
            break;
        }
    }
    rest.strip_prefix("edition")
        .is_some_and(|r| r.trim_start().starts_with('='))
}

/// Whether the file at `path` declares an edition (unreadable files say no: protox reports them).
pub fn file_declares_edition(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| declares_edition(&t))
}

/// The protoc to run and how to name it, or why there is none.
fn protoc() -> Result<(PathBuf, Option<PathBuf>, &'static str), SchemaError> {
    // protoc_bin_path asserts that the binary is where the crate was built: a moved wirelens
    // binary would panic there, so the panic is caught (quietly) and PROTOC is tried.
    let vendored = quietly(|| {
        let bin = protoc_bin_vendored::protoc_bin_path().ok()?;
        let include = protoc_bin_vendored::include_path().ok();
        Some((bin, include))
    })
    .ok()
    .flatten()
    .filter(|(bin, _)| bin.is_file());
    if let Some((bin, include)) = vendored {
        return Ok((bin, include, "protoc-bin-vendored"));
    }
    match std::env::var_os("PROTOC") {
        Some(p) if !p.is_empty() => Ok((PathBuf::from(p), None, "PROTOC")),
        _ => Err(SchemaError::Other(
            "editions .proto files are compiled with the protoc that wirelens was built with \
             (the protoc-bin-vendored crate), which is not on this machine; set PROTOC to a \
             protoc 27 or newer, or load a descriptor set (protoc -o) instead"
                .into(),
        )),
    }
}

/// `protoc --version` of `bin` (`libprotoc 36.2` → `protoc 36.2`), asked once per binary.
fn version(bin: &Path) -> String {
    static SEEN: OnceLock<std::sync::Mutex<Vec<(PathBuf, String)>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    if let Ok(list) = seen.lock() {
        if let Some((_, v)) = list.iter().find(|(p, _)| p == bin) {
            return v.clone();
        }
    }
    let v = Command::new(bin)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().replace("libprotoc", "protoc"))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "protoc (version unknown)".into());
    if let Ok(mut list) = seen.lock() {
        list.push((bin.to_path_buf(), v.clone()));
    }
    v
}

/// Compiles `files` (import names, relative to one of `includes`) into a descriptor set with
/// their imports.
pub fn compile(files: &[String], includes: &[PathBuf]) -> Result<Compiled, SchemaError> {
    let (bin, bundled_include, source) = protoc()?;
    let out_dir = tempfile::tempdir()
        .map_err(|e| SchemaError::Other(format!("cannot make a temporary folder: {e}")))?;
    let out = out_dir.path().join("set.binpb");
    let mut cmd = Command::new(&bin);
    cmd.arg("--include_imports")
        .arg(format!("--descriptor_set_out={}", out.display()));
    for inc in includes.iter().chain(bundled_include.iter()) {
        cmd.arg(format!("--proto_path={}", inc.display()));
    }
    cmd.args(files);
    let output = cmd
        .output()
        .map_err(|e| SchemaError::Other(format!("cannot run {}: {e}", bin.display())))?;
    let compiler = format!("{} ({source})", version(&bin));
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(protoc_error(&stderr, &compiler, includes));
    }
    let set = std::fs::read(&out)
        .map_err(|e| SchemaError::Other(format!("{compiler} wrote no descriptor set: {e}")))?;
    Ok(Compiled { set, compiler })
}

/// protoc's first message as an error: `file:line:column: message` when it points into a file.
/// A file protoc names by its path on disk is named by its import name, as protox does.
fn protoc_error(stderr: &str, compiler: &str, includes: &[PathBuf]) -> SchemaError {
    let first = stderr
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("failed with no message");
    let mut parts = first.splitn(4, ':');
    if let (Some(file), Some(line), Some(column), Some(message)) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    {
        if let (Ok(line), Ok(column)) = (line.trim().parse(), column.trim().parse()) {
            let file = includes
                .iter()
                .find_map(|d| Path::new(file).strip_prefix(d).ok())
                .map_or_else(
                    || file.to_string(),
                    |p| p.to_string_lossy().replace('\\', "/"),
                );
            return SchemaError::Proto {
                file,
                line,
                column,
                message: format!("{} ({compiler})", message.trim()),
            };
        }
    }
    SchemaError::Other(format!("{compiler}: {first}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edition_is_the_first_statement_after_comments() {
        assert!(declares_edition("// c\n/* x */ edition = \"2023\";\n"));
        assert!(declares_edition("edition=\"2024\";"));
        assert!(!declares_edition(
            "syntax = \"proto3\";\n// edition = \"2023\";"
        ));
        assert!(!declares_edition("message edition_x {}"));
    }

    #[test]
    fn protoc_messages_point_at_their_place() {
        let inc = [PathBuf::from("/tmp/x")];
        let e = protoc_error("/tmp/x/a.proto:3:7: Expected \";\".\n", "protoc 36.2", &inc);
        assert_eq!(e.to_string(), "a.proto:3:7: Expected \";\". (protoc 36.2)");
        let e = protoc_error("a.proto: File not found.\n", "protoc 36.2", &inc);
        assert_eq!(e.to_string(), "protoc 36.2: a.proto: File not found.");
    }
}
