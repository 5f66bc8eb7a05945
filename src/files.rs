//! Writing the user's files safely.
//!
//! Every file wirelens writes (converted payloads, CSV reports, saved columns) goes through
//! [`write_atomically`]: a failed write leaves the previous file as it was.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// Writes `bytes` to `path` through a temporary file in the same folder, so a failure never leaves
/// a half-written file behind.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    // A temporary file is private (0600); the result gets the permissions of the file it replaces,
    // or the usual ones for a new file.
    let permissions = match fs::metadata(path) {
        Ok(m) => Some(m.permissions()),
        Err(_) => default_permissions(),
    };
    if let Some(p) = permissions {
        tmp.as_file().set_permissions(p)?;
    }
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(unix)]
fn default_permissions() -> Option<fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn default_permissions() -> Option<fs::Permissions> {
    None
}
