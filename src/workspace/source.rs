//! Where the bytes came from, kept exactly as given.
//!
//! A [`Source`] is a file (large files memory-mapped, so a 100 MB file costs no copy and its
//! bytes are there at once), pasted text, a bundled sample or dropped bytes. Nothing here
//! decodes: the source is what the user gave, and stays available whatever decoding finds.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::codec::Format;
use crate::mapped::Mapping;

/// Files at least this large are memory-mapped instead of read.
pub const MAP_THRESHOLD: u64 = 8 * 1024 * 1024;

/// Where a source came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A file opened by path (menu, command line, drop with a path).
    File(PathBuf),
    /// Text pasted by the user.
    Pasted,
    /// A sample compiled into the app, by file name.
    Sample(String),
    /// Bytes dropped on the window without a path, by the name they came with.
    Dropped(String),
}

/// The bytes themselves: owned, static (bundled) or mapped.
enum Bytes {
    Owned(Vec<u8>),
    Static(&'static [u8]),
    /// The map, and the file it maps (read through for [`Source::reader`]).
    Mapped(Arc<Mapping>, File),
}

/// One input: its origin and its bytes (pasted text is kept as its UTF-8 bytes).
pub struct Source {
    /// Where it came from.
    pub origin: Origin,
    bytes: Bytes,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("origin", &self.origin)
            .field("len", &self.len())
            .field("mapped", &self.is_mapped())
            .finish()
    }
}

/// The bytes, so that payloads can share them ([`crate::capture::SharedBytes::shared`]).
impl AsRef<[u8]> for Source {
    fn as_ref(&self) -> &[u8] {
        self.bytes()
    }
}

impl Source {
    /// Opens a file; files of [`MAP_THRESHOLD`] bytes or more are memory-mapped.
    pub fn open(path: impl AsRef<Path>) -> std::io::Result<Arc<Source>> {
        let path = path.as_ref();
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        let bytes = if len >= MAP_THRESHOLD {
            Bytes::Mapped(Mapping::map(&file)?, file)
        } else {
            let mut v = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
            std::io::Read::read_to_end(&mut &file, &mut v)?;
            Bytes::Owned(v)
        };
        Ok(Arc::new(Source {
            origin: Origin::File(path.to_path_buf()),
            bytes,
        }))
    }

    /// Pasted text, kept as given.
    pub fn pasted(text: impl Into<String>) -> Arc<Source> {
        Arc::new(Source {
            origin: Origin::Pasted,
            bytes: Bytes::Owned(text.into().into_bytes()),
        })
    }

    /// A bundled sample.
    pub fn sample(name: &str, bytes: &'static [u8]) -> Arc<Source> {
        Arc::new(Source {
            origin: Origin::Sample(name.to_string()),
            bytes: Bytes::Static(bytes),
        })
    }

    /// Bytes that came without a path (a drop from a browser, a test).
    pub fn dropped(name: &str, bytes: Vec<u8>) -> Arc<Source> {
        Arc::new(Source {
            origin: Origin::Dropped(name.to_string()),
            bytes: Bytes::Owned(bytes),
        })
    }

    /// The bytes, exactly as given.
    pub fn bytes(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Owned(v) => v,
            Bytes::Static(s) => s,
            Bytes::Mapped(m, _) => m.bytes(),
        }
    }

    /// The bytes from the start, to read once through: a mapped file is read through its handle,
    /// so what was read stays in the system's file cache and not in this process's memory (a
    /// capture of a gigabyte is peeled without holding it), anything else from memory.
    pub fn reader(&self) -> Box<dyn std::io::Read + Send + '_> {
        match &self.bytes {
            Bytes::Mapped(_, file) => Box::new(std::io::BufReader::with_capacity(
                1 << 20,
                FileAt { file, at: 0 },
            )),
            _ => Box::new(self.bytes()),
        }
    }

    /// The number of bytes.
    pub fn len(&self) -> usize {
        self.bytes().len()
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the bytes are memory-mapped.
    pub fn is_mapped(&self) -> bool {
        matches!(self.bytes, Bytes::Mapped(..))
    }

    /// The text, when the source is valid UTF-8 (pasted text always is).
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(self.bytes()).ok()
    }

    /// A short name for lists and titles: the file name, a paste's first words
    /// (`pasted: curl 'https://api.example/…`), the sample's name.
    pub fn name(&self) -> String {
        match &self.origin {
            Origin::File(p) => p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| p.display().to_string()),
            Origin::Pasted => pasted_name(self.text().unwrap_or("")),
            Origin::Sample(n) | Origin::Dropped(n) => n.clone(),
        }
    }

    /// The format the name suggests (`.cbor`, `.msgpack`, …), a tie-breaker for detection.
    pub fn hint(&self) -> Option<Format> {
        let name = match &self.origin {
            Origin::File(p) => p.to_string_lossy().into_owned(),
            Origin::Sample(n) | Origin::Dropped(n) => n.clone(),
            Origin::Pasted => return None,
        };
        let ext = name.rsplit_once('.')?.1;
        Format::from_extension(ext)
    }
}

/// Characters of a paste's first line its name shows.
const PASTE_NAME_CHARS: usize = 32;

/// A paste's name: `pasted: ` and its first line that is not blank, cut to
/// [`PASTE_NAME_CHARS`]; `pasted text` when it is all blank. Two pastes are told apart by what
/// they hold, not by a number.
fn pasted_name(text: &str) -> String {
    let Some(line) = text.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return "pasted text".into();
    };
    let mut name: String = line.chars().take(PASTE_NAME_CHARS).collect();
    if line.chars().count() > PASTE_NAME_CHARS {
        name.push('…');
    }
    format!("pasted: {name}")
}

/// A source read again at any offset, for payloads read back when looked at: a mapped file
/// through its handle (so what is read back is not held as mapped pages), anything else from
/// memory.
impl crate::capture::shared::ReadAt for Source {
    fn read_exact_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<()> {
        match &self.bytes {
            Bytes::Mapped(_, file) => {
                #[cfg(unix)]
                std::os::unix::fs::FileExt::read_exact_at(file, buf, at)?;
                #[cfg(windows)]
                {
                    let mut reader = FileAt { file, at };
                    std::io::Read::read_exact(&mut reader, buf)?;
                }
                Ok(())
            }
            _ => crate::capture::shared::read_exact_in(self.bytes(), buf, at),
        }
    }
}

/// A file read from an offset of its own, so that two readers of one handle (a peel the user
/// replaced, still running, and the new one) never move each other's place.
struct FileAt<'f> {
    file: &'f File,
    at: u64,
}

impl std::io::Read for FileAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        #[cfg(unix)]
        let n = std::os::unix::fs::FileExt::read_at(self.file, buf, self.at)?;
        #[cfg(windows)]
        let n = std::os::windows::fs::FileExt::seek_read(self.file, buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_file_is_mapped_and_a_small_one_read() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let small = dir.path().join("a.cbor");
        std::fs::write(&small, [0xa0])?;
        let s = Source::open(&small)?;
        assert!(!s.is_mapped());
        assert_eq!(s.bytes(), &[0xa0]);
        assert_eq!(s.hint(), Some(Format::Cbor));
        assert_eq!(s.name(), "a.cbor");

        let big = dir.path().join("big.bin");
        let data: Vec<u8> = (0..MAP_THRESHOLD as usize + 3)
            .map(|i| (i % 251) as u8)
            .collect();
        std::fs::write(&big, &data)?;
        let b = Source::open(&big)?;
        assert!(b.is_mapped());
        assert_eq!(b.len(), data.len());
        assert_eq!(
            b.bytes().get(MAP_THRESHOLD as usize),
            data.get(MAP_THRESHOLD as usize)
        );
        // Two readers of the one handle, read in turns, each read the whole file from its start.
        let (mut r1, mut r2) = (b.reader(), b.reader());
        let (mut got1, mut got2) = (Vec::new(), Vec::new());
        let mut chunk = vec![0; 3 << 20];
        loop {
            let n1 = std::io::Read::read(&mut r1, &mut chunk)?;
            got1.extend_from_slice(&chunk[..n1]);
            let n2 = std::io::Read::read(&mut r2, &mut chunk)?;
            got2.extend_from_slice(&chunk[..n2]);
            if n1 == 0 && n2 == 0 {
                break;
            }
        }
        assert!(got1 == data && got2 == data);
        let mut read = Vec::new();
        std::io::Read::read_to_end(&mut s.reader(), &mut read)?;
        assert_eq!(read, [0xa0]);
        Ok(())
    }

    #[test]
    fn pasted_text_is_kept_as_given() {
        let s = Source::pasted("00000000: 81a1 61 01  ..a.\n");
        assert_eq!(s.text(), Some("00000000: 81a1 61 01  ..a.\n"));
        assert_eq!(s.hint(), None);
        assert_eq!(s.name(), "pasted: 00000000: 81a1 61 01  ..a.");
    }

    #[test]
    fn pastes_are_named_by_their_first_line() {
        let curl = Source::pasted(
            "\n  curl 'https://api.example/orders/7' -H 'accept: application/json'\n",
        );
        assert_eq!(curl.name(), "pasted: curl 'https://api.example/orders…");
        assert_eq!(Source::pasted(" \n\t\n").name(), "pasted text");
    }
}
