//! Files mapped into memory, and giving back the pages of one that a pass has read.
//!
//! A large file is mapped, not read ([`crate::workspace::Source`]), so opening it costs no copy.
//! But every page a pass reads stays in the process's resident memory until the map goes: the
//! app's analysis of a 50 MB document reads it again and again (its own spans, the MessagePack
//! and CBOR columns, protobuf's two passes, the compressed sizes), and all 50 MB of it stayed
//! resident beside the columns it made.
//!
//! [`let_go`] gives back the pages of a range a pass is done with: the kernel drops them from
//! this process (they stay in the system's file cache, shared and reclaimable), and a later read
//! maps them in again from that cache. The bytes read the same before and after: a mapping is
//! read-only and never written, so its pages are the file's. A slice that is not within a
//! mapping made here (a `Vec`, a static) is left alone, so a pass can call [`let_go`] on
//! whatever bytes it reads.
//!
//! Bytes made rather than read can be put on the same footing: [`Mapping::spill`] writes them
//! to an unnamed temporary file (in the system's temporary folder, `TMPDIR`) and maps it, and
//! the app's large columns are written to such a file as they are made (the sink of
//! [`crate::codec::stream::transcode_with_spans`]). The MessagePack, CBOR and protobuf
//! columns of a 50 MB document (90 MB between them) are then the file cache's to hold, not the
//! process's, and only the pages a view or a pass reads are resident. The file has no name and
//! goes when the last view of its bytes does. Where the temporary folder is a `tmpfs`, the
//! bytes are in memory all the same, counted as shared memory instead of the app's.

use std::fs::File;
use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// A read-only memory map of a file, known to [`let_go`].
pub struct Mapping {
    map: memmap2::Mmap,
}

/// Every live mapping, for [`let_go`] to find the one a slice lies in.
static MAPPINGS: Mutex<Vec<Weak<Mapping>>> = Mutex::new(Vec::new());

/// Ranges shorter than this are not given back: a pass calls [`let_go`] every few megabytes,
/// and a call costs a system call.
const LEAST: usize = 1 << 20;

impl Mapping {
    /// Maps `file` read-only.
    #[allow(unsafe_code)]
    pub fn map(file: &File) -> std::io::Result<Arc<Mapping>> {
        // SAFETY: the map is read-only and private to this process. If another process
        // truncates or rewrites the file while it is open, the bytes shown may change (or
        // reading past a new end may fault); that is the documented cost of mapping, accepted so
        // large files open at once. `Source` maps only the user's files above a size
        // threshold; `Mapping::spill` maps its own unnamed temporary file, which no other
        // process can name.
        let map = unsafe { memmap2::Mmap::map(file)? };
        let mapping = Arc::new(Mapping { map });
        let mut all = MAPPINGS.lock().unwrap_or_else(PoisonError::into_inner);
        all.retain(|m| m.strong_count() > 0);
        all.push(Arc::downgrade(&mapping));
        Ok(mapping)
    }

    /// The mapped bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// `bytes` written to an unnamed temporary file, and that file mapped; an error when the
    /// file cannot be made, written or mapped (then the caller keeps the bytes in memory).
    pub fn spill(bytes: &[u8]) -> std::io::Result<Arc<Mapping>> {
        let mut file = Spill::new()?;
        file.write_all(bytes)?;
        file.map()
    }

    /// How many KiB of the mapping are resident in this process: `Rss` of its entry in
    /// `/proc/self/smaps` (tests of the passes that give pages back).
    #[cfg(all(test, target_os = "linux"))]
    pub(crate) fn resident_kib(&self) -> Option<u64> {
        let start = format!("{:x}-", self.map.as_ptr() as usize);
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut lines = smaps.lines().skip_while(|l| !l.starts_with(&start));
        lines.next()?;
        lines
            .find_map(|l| l.strip_prefix("Rss:"))
            .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
    }

    /// Whether `bytes` lie within this mapping; their offset in it if so.
    fn offset_of(&self, bytes: &[u8]) -> Option<usize> {
        let base = self.map.as_ptr() as usize;
        let at = (bytes.as_ptr() as usize).checked_sub(base)?;
        (at.checked_add(bytes.len())? <= self.map.len()).then_some(at)
    }
}

/// Bytes being written to an unnamed temporary file, to be mapped once they are all written
/// ([`Spill::map`]): where a pass sends a large output as it makes it. It remembers whether a
/// write failed, so a caller can tell a failed file (worth trying again in memory) from a pass
/// that gave up on its own.
pub struct Spill {
    file: std::io::BufWriter<File>,
    written: u64,
    failed: bool,
}

impl Spill {
    /// A new, empty file in the system's temporary folder.
    pub fn new() -> std::io::Result<Spill> {
        Ok(Spill {
            file: std::io::BufWriter::new(tempfile::tempfile()?),
            written: 0,
            failed: false,
        })
    }

    /// Whether any write to the file failed.
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// The file's bytes, mapped; an error when a write failed, or the file could not be
    /// written out or mapped, or does not hold every byte written.
    pub fn map(self) -> std::io::Result<Arc<Mapping>> {
        if self.failed {
            return Err(std::io::Error::other(
                "a write to the temporary file failed",
            ));
        }
        let written = self.written;
        let file = self.file.into_inner().map_err(|e| e.into_error())?;
        let mapping = Mapping::map(&file)?;
        if mapping.bytes().len() as u64 != written {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        Ok(mapping)
    }
}

impl Write for Spill {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let wrote = self.file.write(buf);
        match &wrote {
            Ok(n) => self.written += *n as u64,
            Err(_) => self.failed = true,
        }
        wrote
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let flushed = self.file.flush();
        self.failed |= flushed.is_err();
        flushed
    }
}

impl AsRef<[u8]> for Mapping {
    fn as_ref(&self) -> &[u8] {
        self.bytes()
    }
}

/// The live mapping `bytes` lie within, and their offset in it.
fn mapping_of(bytes: &[u8]) -> Option<(Arc<Mapping>, usize)> {
    let all = MAPPINGS.lock().unwrap_or_else(PoisonError::into_inner);
    all.iter()
        .filter_map(Weak::upgrade)
        .find_map(|m| m.offset_of(bytes).map(|at| (m, at)))
}

/// Whether `bytes` lie within a mapped file (a large file opened, or bytes [`Mapping::spill`]ed).
pub fn is_mapped(bytes: &[u8]) -> bool {
    mapping_of(bytes).is_some()
}

/// Gives back the resident pages of `bytes`, if they lie within a mapped file and are at least
/// a megabyte: the next read of them maps them in again from the system's file cache. Anything
/// else is left as it is. Pages only partly within `bytes` are given back whole (the bytes of a
/// mapping read the same either way).
#[allow(unsafe_code)]
pub fn let_go(bytes: &[u8]) {
    if bytes.len() < LEAST {
        return;
    }
    let Some((mapping, at)) = mapping_of(bytes) else {
        return;
    };
    // SAFETY: the map is read-only and nothing in this process writes through it, so giving
    // back its pages cannot change what any borrow of it reads: the next access maps the same
    // bytes of the file in again (the same contents the map showed before, unless another
    // process rewrote the file, the cost of mapping noted in `Mapping::map`). An error leaves
    // the pages as they were, which is harmless.
    #[cfg(unix)]
    let _ = unsafe {
        mapping
            .map
            .unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, at, bytes.len())
    };
    #[cfg(not(unix))]
    let _ = (mapping, at);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[cfg(target_os = "linux")]
    #[test]
    fn pages_given_back_read_the_same_and_leave_the_process() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("big.bin");
        let len = 8 << 20;
        let content: Vec<u8> = (0..len).map(|i| (i * 7 + i / 4096) as u8).collect();
        std::fs::File::create(&path)?.write_all(&content)?;
        let mapping = Mapping::map(&File::open(&path)?)?;
        let sum = |b: &[u8]| b.iter().map(|&x| u64::from(x)).sum::<u64>();
        assert_eq!(sum(mapping.bytes()), sum(&content));
        let before = mapping
            .resident_kib()
            .expect("the mapping's line in /proc/self/smaps");
        assert!(before >= 8 << 10, "all 8 MiB read: {before} KiB resident");
        // The second half given back; the first half stays.
        let_go(&mapping.bytes()[len / 2..]);
        let after = mapping.resident_kib().expect("the mapping's line");
        assert!(
            after <= (4 << 10) + 4,
            "4 MiB given back: {before} KiB -> {after} KiB resident"
        );
        assert_eq!(
            mapping.bytes(),
            &content[..],
            "the bytes read the same after"
        );
        // Bytes that are no mapping's, and short ranges, are left alone.
        let owned = content.clone();
        let_go(&owned);
        assert_eq!(owned, content);
        assert!(is_mapped(&mapping.bytes()[5..9]) && !is_mapped(&owned));
        let_go(&mapping.bytes()[..LEAST - 1]);
        assert_eq!(mapping.bytes(), &content[..]);

        // Spilled bytes read the same, are not resident until read, and are given back.
        let spilled = Mapping::spill(&content)?;
        assert!(spilled.resident_kib().expect("the spilled map") <= 4);
        assert_eq!(spilled.bytes(), &content[..]);
        assert!(spilled.resident_kib().expect("the spilled map") >= 8 << 10);
        let_go(spilled.bytes());
        assert!(spilled.resident_kib().expect("the spilled map") <= 4);
        assert_eq!(Mapping::spill(b"")?.bytes(), b"");
        Ok(())
    }
}
