//! [`SharedBytes`]: a payload's bytes, owned, a view of bytes someone else owns, or made on
//! first read.
//!
//! Why: a payload that no layer changed is the input itself. Copying it into a `Vec` for the
//! payload (and again for the inspector's source column) doubled and tripled the memory of a
//! large file that the app had memory-mapped precisely so that it would not be read into memory.
//! A `SharedBytes` made from the input's owner ([`SharedBytes::shared`]) is a reference count
//! and a range: cloning, slicing and handing it on never copies the bytes.
//!
//! A large HAR holds hundreds of base64 bodies, and most are never looked at: those are
//! [`SharedBytes::lazy`], decoded from the file when first read and kept from then on. Code that
//! only glances at every payload (peeling, splitting) reads through [`SharedBytes::peek`], which
//! decodes into a buffer it drops again, so one body at a time is in memory, not all of them.

use std::fmt;
use std::ops::{Deref, Range};
use std::sync::{Arc, OnceLock};

/// Whatever holds the bytes: a `Vec<u8>`, a memory map, an opened file's buffer.
pub type Owner = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// Makes bytes on demand (decodes a HAR body's base64 from the file).
pub type Maker = Box<dyn Fn() -> Vec<u8> + Send + Sync>;

/// Bytes that can be read again at any offset: the capture file a payload was read from, so the
/// payload's bytes are read back from it when looked at ([`SharedBytes::read_back`]) instead of
/// held from the moment the capture was read.
pub trait ReadAt: Send + Sync {
    /// Fills `buf` with the bytes from offset `at`; an error when they are not all there (the
    /// file was cut or replaced since it was read).
    fn read_exact_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<()>;
}

/// A shared [`ReadAt`].
pub type Backing = Arc<dyn ReadAt>;

/// Turns bytes read back into what they stand for ([`SharedBytes::read_back_undone`]).
pub type Undo = Box<dyn Fn(Vec<u8>) -> Vec<u8> + Send + Sync>;

/// `pieces` of `backing`, joined in order; zeros where `backing` no longer has them.
fn read_pieces(backing: &dyn ReadAt, pieces: &[Range<usize>]) -> Vec<u8> {
    let mut bytes = vec![0; pieces.iter().map(ExactSizeIterator::len).sum()];
    let mut to = 0;
    for piece in pieces {
        let Some(buf) = bytes.get_mut(to..to + piece.len()) else {
            break;
        };
        if backing.read_exact_at(buf, piece.start as u64).is_err() {
            buf.fill(0);
        }
        to += piece.len();
    }
    bytes
}

impl ReadAt for Vec<u8> {
    fn read_exact_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<()> {
        read_exact_in(self, buf, at)
    }
}

/// [`ReadAt::read_exact_at`] of bytes in memory.
pub fn read_exact_in(bytes: &[u8], buf: &mut [u8], at: u64) -> std::io::Result<()> {
    let from = usize::try_from(at).unwrap_or(usize::MAX);
    let part = from
        .checked_add(buf.len())
        .and_then(|end| bytes.get(from..end))
        .ok_or(std::io::ErrorKind::UnexpectedEof)?;
    buf.copy_from_slice(part);
    Ok(())
}

/// Bytes made when first read, and kept from then on.
struct Lazy {
    /// How long the made bytes are; known before they are made.
    len: usize,
    make: Maker,
    made: OnceLock<Vec<u8>>,
}

impl Lazy {
    fn bytes(&self) -> &[u8] {
        self.made.get_or_init(|| self.fitted((self.make)()))
    }

    /// `made`, exactly `len` long whatever the maker gave (a maker that breaks its promise
    /// cannot move the ranges of the views made before).
    fn fitted(&self, mut made: Vec<u8>) -> Vec<u8> {
        debug_assert_eq!(made.len(), self.len, "a lazy maker gave another length");
        made.resize(self.len, 0);
        made
    }
}

#[derive(Clone)]
enum Holder {
    Owner(Owner),
    Lazy(Arc<Lazy>),
}

/// Immutable bytes, cheap to clone and slice: a range of an [`Owner`]'s bytes (or of bytes made
/// on first read, [`SharedBytes::lazy`]). Reads as a `[u8]` (it dereferences to one) and compares
/// equal to any byte slice with the same content.
#[derive(Clone)]
pub struct SharedBytes {
    holder: Holder,
    range: Range<usize>,
}

impl SharedBytes {
    /// All of `owner`'s bytes, without copying them.
    pub fn shared(owner: Owner) -> SharedBytes {
        let len = (*owner).as_ref().len();
        SharedBytes {
            holder: Holder::Owner(owner),
            range: 0..len,
        }
    }

    /// `len` bytes that `make` makes when they are first read (through `Deref`); [`peek`]
    /// reads them without keeping them. `make` must give exactly `len` bytes (more are cut,
    /// fewer are padded with zeros, and debug builds stop).
    ///
    /// [`peek`]: SharedBytes::peek
    pub fn lazy(len: usize, make: Maker) -> SharedBytes {
        SharedBytes {
            holder: Holder::Lazy(Arc::new(Lazy {
                len,
                make,
                made: OnceLock::new(),
            })),
            range: 0..len,
        }
    }

    /// The bytes at `pieces` of `backing` (ranges of offsets, joined in order), read back from
    /// it when first read (and, through [`peek`], each time they are glanced at). A payload that
    /// lay in one frame is one piece; one that TCP carried in many is one piece per segment.
    /// Bytes no longer in `backing` (a file cut since it was read) read as zeros.
    ///
    /// [`peek`]: SharedBytes::peek
    pub fn read_back(backing: Backing, pieces: Vec<Range<usize>>) -> SharedBytes {
        let len = pieces.iter().map(ExactSizeIterator::len).sum();
        SharedBytes::lazy(len, Box::new(move || read_pieces(&*backing, &pieces)))
    }

    /// [`SharedBytes::read_back`] of bytes that `undo` turns into the `len` bytes they are (a
    /// body undone from its content coding again, each time it is made). What `undo` gives
    /// past `len` is cut, and what it lacks (a file changed since it was read no longer
    /// undoes) reads as zeros.
    pub fn read_back_undone(
        backing: Backing,
        pieces: Vec<Range<usize>>,
        len: usize,
        undo: Undo,
    ) -> SharedBytes {
        SharedBytes::lazy(
            len,
            Box::new(move || {
                let mut made = undo(read_pieces(&*backing, &pieces));
                made.resize(len, 0);
                made
            }),
        )
    }

    /// Where these bytes lie within `whole`, when they are a view of the same holder inside
    /// `whole`'s range (a part of a body, not a copy of it).
    pub(crate) fn range_in(&self, whole: &SharedBytes) -> Option<Range<usize>> {
        let same = match (&self.holder, &whole.holder) {
            (Holder::Owner(a), Holder::Owner(b)) => Arc::ptr_eq(a, b),
            (Holder::Lazy(a), Holder::Lazy(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        let inside = whole.range.start <= self.range.start && self.range.end <= whole.range.end;
        (same && inside)
            .then(|| self.range.start - whole.range.start..self.range.end - whole.range.start)
    }

    /// How many bytes these are (without making lazy bytes).
    pub fn len(&self) -> usize {
        self.range.len()
    }

    /// Whether there are none (without making lazy bytes).
    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }

    /// Whether reading these bytes would make them first (they are [`lazy`] and not read yet).
    ///
    /// [`lazy`]: SharedBytes::lazy
    pub fn is_unmade(&self) -> bool {
        matches!(&self.holder, Holder::Lazy(lazy) if lazy.made.get().is_none())
    }

    /// `f` of the bytes. Lazy bytes not read yet are made for `f` alone and dropped after it
    /// (views `f` keeps of them hold that buffer), so glancing at many payloads holds one at a
    /// time.
    pub fn peek<R>(&self, f: impl FnOnce(&SharedBytes) -> R) -> R {
        match &self.holder {
            Holder::Lazy(lazy) if lazy.made.get().is_none() => {
                let made = SharedBytes::from(lazy.fitted((lazy.make)()));
                f(&made.slice(self.range.clone()))
            }
            _ => f(self),
        }
    }

    /// The bytes in `range` of these (clamped to them), sharing the owner.
    pub fn slice(&self, range: Range<usize>) -> SharedBytes {
        let len = self.len();
        let end = range.end.min(len);
        let start = range.start.min(end);
        SharedBytes {
            holder: self.holder.clone(),
            range: self.range.start + start..self.range.start + end,
        }
    }

    /// The bytes, as a `Vec<u8>` would give them.
    pub fn as_slice(&self) -> &[u8] {
        self
    }

    /// Whether both are the same range of the same holder (then they are equal unread).
    pub(crate) fn same_view(&self, other: &SharedBytes) -> bool {
        self.range == other.range && self.range_in(other).is_some()
    }
}

impl Deref for SharedBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // The range is checked against the holder's length whenever one is made.
        let all = match &self.holder {
            Holder::Owner(owner) => (**owner).as_ref(),
            Holder::Lazy(lazy) => lazy.bytes(),
        };
        all.get(self.range.clone()).unwrap_or(&[])
    }
}

impl AsRef<[u8]> for SharedBytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl Default for SharedBytes {
    fn default() -> SharedBytes {
        SharedBytes::from(Vec::new())
    }
}

impl From<Vec<u8>> for SharedBytes {
    fn from(bytes: Vec<u8>) -> SharedBytes {
        SharedBytes::shared(Arc::new(bytes))
    }
}

impl From<&[u8]> for SharedBytes {
    fn from(bytes: &[u8]) -> SharedBytes {
        SharedBytes::from(bytes.to_vec())
    }
}

impl From<&Vec<u8>> for SharedBytes {
    fn from(bytes: &Vec<u8>) -> SharedBytes {
        SharedBytes::from(bytes.as_slice())
    }
}

impl<const N: usize> From<&[u8; N]> for SharedBytes {
    fn from(bytes: &[u8; N]) -> SharedBytes {
        SharedBytes::from(bytes.as_slice())
    }
}

/// The same bytes, not a copy.
impl From<&SharedBytes> for SharedBytes {
    fn from(bytes: &SharedBytes) -> SharedBytes {
        bytes.clone()
    }
}

impl fmt::Debug for SharedBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl PartialEq for SharedBytes {
    fn eq(&self, other: &SharedBytes) -> bool {
        self.same_view(other) || (self.len() == other.len() && **self == **other)
    }
}

impl Eq for SharedBytes {}

impl PartialEq<[u8]> for SharedBytes {
    fn eq(&self, other: &[u8]) -> bool {
        **self == *other
    }
}

impl PartialEq<&[u8]> for SharedBytes {
    fn eq(&self, other: &&[u8]) -> bool {
        **self == **other
    }
}

impl PartialEq<Vec<u8>> for SharedBytes {
    fn eq(&self, other: &Vec<u8>) -> bool {
        **self == **other
    }
}

impl<const N: usize> PartialEq<[u8; N]> for SharedBytes {
    fn eq(&self, other: &[u8; N]) -> bool {
        **self == *other
    }
}

impl<const N: usize> PartialEq<&[u8; N]> for SharedBytes {
    fn eq(&self, other: &&[u8; N]) -> bool {
        **self == **other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_owner_is_not_copied_and_slices_share_it() {
        let owner: Owner = Arc::new(b"hello, world".to_vec());
        let whole = SharedBytes::shared(owner.clone());
        assert_eq!(whole, b"hello, world");
        assert_eq!(
            whole.as_ptr(),
            (*owner).as_ref().as_ptr(),
            "the same memory"
        );
        let world = whole.slice(7..12);
        assert_eq!(world, b"world");
        assert_eq!(world.as_ptr(), whole[7..].as_ptr(), "a view, not a copy");
        assert_eq!(world.slice(1..3), b"or");
        // Out-of-range slices are clamped, never a panic.
        assert_eq!(world.slice(3..99), b"ld");
        #[allow(clippy::reversed_empty_ranges)] // a range a caller got wrong, on purpose
        let backwards = world.slice(9..4);
        assert_eq!(backwards, b"");
        assert_eq!(SharedBytes::default(), b"");
        assert_eq!(format!("{:?}", world.slice(0..2)), "[119, 111]");
    }

    #[test]
    fn bytes_read_back_join_their_pieces_and_a_cut_file_reads_as_zeros() {
        let file: Backing = Arc::new(b"..GET..HTTP..".to_vec());
        let back = SharedBytes::read_back(file.clone(), vec![2..5, 7..11]);
        assert_eq!(back.len(), 7);
        assert!(back.is_unmade(), "nothing is read until the bytes are");
        assert_eq!(back.peek(|b| b.to_vec()), b"GETHTTP");
        assert!(back.is_unmade());
        assert_eq!(back.slice(3..7), b"HTTP");
        // Past the file's end (cut since it was read): zeros, the length kept.
        let cut = SharedBytes::read_back(file.clone(), vec![0..2, 11..20]);
        assert_eq!(cut, b"..\0\0\0\0\0\0\0\0\0");
        // Undone when made: to the length peeling found, whatever the undoing gives.
        let one = |r: Range<usize>| std::iter::once(r).collect::<Vec<_>>();
        let reversed = |b: Vec<u8>| b.into_iter().rev().collect();
        let undone = SharedBytes::read_back_undone(file.clone(), one(7..11), 4, Box::new(reversed));
        assert_eq!(undone, b"PTTH");
        let short = SharedBytes::read_back_undone(file, one(2..5), 5, Box::new(|_| b"no".to_vec()));
        assert_eq!(short, b"no\0\0\0");
    }

    #[test]
    fn a_part_knows_where_it_lies_in_the_bytes_it_was_cut_from() {
        let whole = SharedBytes::from(b"0123456789".to_vec());
        let body = whole.slice(2..9);
        assert_eq!(body.slice(1..4).range_in(&body), Some(1..4));
        assert_eq!(body.range_in(&body), Some(0..7));
        assert_eq!(whole.range_in(&body), None, "not inside");
        let copy = SharedBytes::from(body.to_vec());
        assert_eq!(copy.range_in(&body), None, "equal bytes, but a copy");
    }

    #[test]
    fn lazy_bytes_are_made_on_first_read_and_a_peek_does_not_keep_them() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        let lazy = SharedBytes::lazy(
            5,
            Box::new(move || {
                counted.fetch_add(1, Ordering::SeqCst);
                b"lazy!".to_vec()
            }),
        );
        let tail = lazy.slice(2..5);
        assert_eq!((lazy.len(), tail.len(), lazy.is_empty()), (5, 3, false));
        assert_eq!(
            calls.load(Ordering::SeqCst),
            0,
            "length and slices make nothing"
        );
        assert!(lazy.is_unmade());
        assert_eq!(tail.peek(|b| b.to_vec()), b"zy!");
        assert_eq!(lazy.peek(|b| b.len()), 5);
        assert_eq!(calls.load(Ordering::SeqCst), 2, "each peek makes its own");
        assert!(lazy.is_unmade(), "a peek keeps nothing");
        assert_eq!(lazy.clone(), lazy, "the same view is equal unread");
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(tail, b"zy!");
        assert_eq!(lazy, b"lazy!");
        assert!(!lazy.is_unmade());
        assert_eq!(
            calls.load(Ordering::SeqCst),
            3,
            "made once, then kept for every view"
        );
        assert_eq!(lazy.peek(|b| b.to_vec()), b"lazy!");
        assert_eq!(
            calls.load(Ordering::SeqCst),
            3,
            "a peek of made bytes reads them"
        );
    }
}
