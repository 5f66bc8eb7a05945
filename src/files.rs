//! Writing the user's files safely.
//!
//! Every file wirelens writes (converted payloads, CSV reports, saved columns) goes through
//! [`write_atomically`], or [`AtomicFile`] for output written as it is made: a failed write
//! leaves the previous file as it was.
//!
//! What the path names decides how it is written:
//! - nothing yet, or a regular file: the bytes go to a temporary file in the same folder, which
//!   then replaces the path in one rename; a replaced file keeps its permissions and, where the
//!   user may set them, its owner and group;
//! - a symbolic link (to a file, or through a chain of links): the file it points to is replaced
//!   that way, in that file's folder, and the link stays a link;
//! - something that is not a regular file (a FIFO, a terminal, `/dev/null`): it is opened and
//!   written in place, since renaming over it would put a plain file where the device or pipe
//!   was;
//! - a folder, or a link that points nowhere: an error, and nothing is written.
//!
//! Writing to standard output (`-o -`) is the CLI's business, not this module's.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` so that a failure never leaves a half-written file behind (see the
/// module documentation for links, devices and FIFOs).
///
/// Errors say what was wrong with the path (`it is a directory`, `it is a symbolic link to
/// missing.json, which does not exist`); the caller adds the path itself.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(bytes)?;
    file.commit()
}

/// A file written a piece at a time that replaces `path` only when it is committed, by the rules
/// of [`write_atomically`]: output too large to hold (`convert --all` of a large capture) is
/// written as it is made, and a run that fails before [`AtomicFile::commit`] leaves the path as
/// it was (the temporary file is removed when dropped). A FIFO or device is written in place,
/// as it goes.
pub struct AtomicFile {
    sink: Sink,
}

enum Sink {
    /// A temporary file beside the path it will be renamed over.
    Replacing(tempfile::NamedTempFile, PathBuf),
    /// A FIFO, a terminal or a device, opened as it is.
    InPlace(fs::File),
}

impl AtomicFile {
    /// Opens what `path` leads to for writing (see [`write_atomically`] for the errors).
    pub fn create(path: &Path) -> io::Result<AtomicFile> {
        let link = match fs::symlink_metadata(path) {
            Ok(m) => m.file_type().is_symlink(),
            // Nothing there yet: a new file.
            Err(e) if e.kind() == io::ErrorKind::NotFound => return replacing(path, None),
            Err(e) => return Err(e),
        };
        // What the path leads to, links followed.
        let target = match fs::metadata(path) {
            Ok(m) => m,
            Err(e) if link && e.kind() == io::ErrorKind::NotFound => {
                let to = fs::read_link(path).unwrap_or_default();
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "it is a symbolic link to {}, which does not exist",
                        to.display()
                    ),
                ));
            }
            Err(e) => return Err(e),
        };
        if target.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "it is a directory",
            ));
        }
        if !target.is_file() {
            // A FIFO, a terminal, a device: written in place.
            let file = fs::OpenOptions::new().write(true).open(path)?;
            return Ok(AtomicFile {
                sink: Sink::InPlace(file),
            });
        }
        let real: PathBuf = if link {
            fs::canonicalize(path)?
        } else {
            path.to_path_buf()
        };
        replacing(&real, Some(&target))
    }

    /// Puts what was written in place of the path: the temporary file synced and renamed over
    /// it, or a device's writes flushed.
    pub fn commit(self) -> io::Result<()> {
        match self.sink {
            Sink::Replacing(mut tmp, path) => {
                tmp.flush()?;
                tmp.as_file().sync_all()?;
                tmp.persist(&path).map_err(|e| e.error)?;
                Ok(())
            }
            Sink::InPlace(mut file) => file.flush(),
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.sink {
            Sink::Replacing(tmp, _) => tmp.write(buf),
            Sink::InPlace(file) => file.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.sink {
            Sink::Replacing(tmp, _) => tmp.flush(),
            Sink::InPlace(file) => file.flush(),
        }
    }
}

/// A temporary file beside `path` that will replace it, with the permissions and, where
/// allowed, the owner of `old` (the file replaced, if any).
fn replacing(path: &Path, old: Option<&fs::Metadata>) -> io::Result<AtomicFile> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let tmp = tempfile::NamedTempFile::new_in(dir)?;
    // A temporary file is private (0600); the result gets the permissions of the file it replaces,
    // or the usual ones for a new file.
    let permissions = match old {
        Some(m) => Some(m.permissions()),
        None => default_permissions(),
    };
    if let Some(p) = permissions {
        tmp.as_file().set_permissions(p)?;
    }
    if let Some(m) = old {
        keep_owner(tmp.as_file(), m);
    }
    Ok(AtomicFile {
        sink: Sink::Replacing(tmp, path.to_path_buf()),
    })
}

/// Gives `file` the owner and group of `old`, as far as the user may: another user's file keeps
/// at least its group when the user belongs to it; otherwise the new file is the user's own.
#[cfg(unix)]
fn keep_owner(file: &fs::File, old: &fs::Metadata) {
    use std::os::unix::fs::{fchown, MetadataExt};
    let (uid, gid) = (old.uid(), old.gid());
    if fchown(file, Some(uid), Some(gid)).is_err() {
        // Only the group is left to try; when that is not allowed either, the file is the
        // user's, as any new file would be.
        let _ = fchown(file, None, Some(gid));
    }
}

#[cfg(not(unix))]
fn keep_owner(_file: &fs::File, _old: &fs::Metadata) {}

#[cfg(unix)]
fn default_permissions() -> Option<fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn default_permissions() -> Option<fs::Permissions> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &Path) -> Vec<u8> {
        fs::read(path).unwrap_or_default()
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    #[test]
    fn a_file_written_in_pieces_replaces_the_path_only_when_committed() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("lines.jsonl");
        fs::write(&path, b"old\n").expect("write");
        let mut file = AtomicFile::create(&path).expect("opened");
        file.write_all(b"{\"a\":1}\n").expect("written");
        file.write_all(b"{\"a\":2}\n").expect("written");
        // Not yet in place: the path holds the old bytes while the run goes on.
        assert_eq!(read(&path), b"old\n");
        file.commit().expect("committed");
        assert_eq!(read(&path), b"{\"a\":1}\n{\"a\":2}\n");
        // A run that stops before committing leaves the path as it was, and no temporary file.
        let mut dropped = AtomicFile::create(&path).expect("opened");
        dropped.write_all(b"half").expect("written");
        drop(dropped);
        assert_eq!(read(&path), b"{\"a\":1}\n{\"a\":2}\n");
        assert_eq!(names(dir.path()), ["lines.jsonl"]);
    }

    #[test]
    fn a_new_file_and_a_replaced_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("out.cbor");
        write_atomically(&path, b"first").expect("new file");
        assert_eq!(read(&path), b"first");
        write_atomically(&path, b"second").expect("replaced");
        assert_eq!(read(&path), b"second");
        assert_eq!(names(dir.path()), ["out.cbor"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_mode_and_owner() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("report.csv");
        fs::write(&path, b"old").expect("write");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).expect("chmod");
        let before = fs::metadata(&path).expect("stat");
        write_atomically(&path, b"new").expect("replaced");
        let after = fs::metadata(&path).expect("stat");
        assert_eq!(read(&path), b"new");
        assert_eq!(after.permissions().mode() & 0o7777, 0o640);
        assert_ne!(
            after.ino(),
            before.ino(),
            "replaced by a rename, not rewritten"
        );
        assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_keeps_pointing_at_its_replaced_target() {
        use std::os::unix::fs::{symlink, PermissionsExt};
        let dir = tempfile::tempdir().expect("temp dir");
        let real_dir = dir.path().join("real");
        fs::create_dir(&real_dir).expect("mkdir");
        let target = real_dir.join("data.json");
        fs::write(&target, b"old").expect("write");
        fs::set_permissions(&target, fs::Permissions::from_mode(0o600)).expect("chmod");
        // A chain: link → link → file.
        let inner = dir.path().join("inner.json");
        symlink(&target, &inner).expect("symlink");
        let outer = dir.path().join("outer.json");
        symlink("inner.json", &outer).expect("relative symlink");
        write_atomically(&outer, b"new").expect("written through the links");
        assert_eq!(read(&target), b"new");
        for link in [&inner, &outer] {
            let m = fs::symlink_metadata(link).expect("lstat");
            assert!(
                m.file_type().is_symlink(),
                "{} is still a link",
                link.display()
            );
        }
        assert_eq!(
            fs::metadata(&target).expect("stat").permissions().mode() & 0o7777,
            0o600
        );
        // The temporary file went to the target's folder and is gone.
        assert_eq!(names(&real_dir), ["data.json"]);
        assert_eq!(names(dir.path()), ["inner.json", "outer.json", "real"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_dangling_symlink_and_a_directory_are_errors() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().expect("temp dir");
        let link = dir.path().join("out.json");
        symlink("missing.json", &link).expect("symlink");
        let e = write_atomically(&link, b"new").expect_err("dangling");
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert_eq!(
            e.to_string(),
            "it is a symbolic link to missing.json, which does not exist"
        );
        assert!(!dir.path().join("missing.json").exists());
        let folder = dir.path().join("exports");
        fs::create_dir(&folder).expect("mkdir");
        let e = write_atomically(&folder, b"new").expect_err("a directory");
        assert_eq!(e.kind(), io::ErrorKind::IsADirectory);
        assert_eq!(e.to_string(), "it is a directory");
        // A link to the folder is the same error.
        let to_folder = dir.path().join("to-exports");
        symlink(&folder, &to_folder).expect("symlink");
        let e = write_atomically(&to_folder, b"new").expect_err("a link to a directory");
        assert_eq!(e.kind(), io::ErrorKind::IsADirectory);
        assert_eq!(names(dir.path()), ["exports", "out.json", "to-exports"]);
        assert!(names(&folder).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_written_in_place() {
        use std::io::Read;
        let dir = tempfile::tempdir().expect("temp dir");
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs");
        assert!(made.success(), "mkfifo failed");
        let reader = {
            let fifo = fifo.clone();
            std::thread::Builder::new()
                .name("fifo reader".into())
                .spawn(move || {
                    let mut got = Vec::new();
                    fs::File::open(&fifo)
                        .and_then(|mut f| f.read_to_end(&mut got))
                        .map(|_| got)
                })
                .expect("thread")
        };
        write_atomically(&fifo, b"through the pipe").expect("written in place");
        let got = reader.join().expect("reader ends").expect("read");
        assert_eq!(got, b"through the pipe");
        let m = fs::symlink_metadata(&fifo).expect("lstat");
        assert!(!m.is_file(), "the FIFO was not replaced by a file");
        assert_eq!(names(dir.path()), ["pipe"]);
    }
}
