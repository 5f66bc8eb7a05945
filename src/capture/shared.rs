//! [`SharedBytes`]: a payload's bytes, owned or a view of bytes someone else owns.
//!
//! Why: a payload that no layer changed is the input itself. Copying it into a `Vec` for the
//! payload (and again for the inspector's source column) doubled and tripled the memory of a
//! large file that the app had memory-mapped precisely so that it would not be read into memory.
//! A `SharedBytes` made from the input's owner ([`SharedBytes::shared`]) is a reference count
//! and a range: cloning, slicing and handing it on never copies the bytes.

use std::fmt;
use std::ops::{Deref, Range};
use std::sync::Arc;

/// Whatever holds the bytes: a `Vec<u8>`, a memory map, an opened file's buffer.
pub type Owner = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// Immutable bytes, cheap to clone and slice: a range of an [`Owner`]'s bytes. Reads as a
/// `[u8]` (it dereferences to one) and compares equal to any byte slice with the same content.
#[derive(Clone)]
pub struct SharedBytes {
    owner: Owner,
    range: Range<usize>,
}

impl SharedBytes {
    /// All of `owner`'s bytes, without copying them.
    pub fn shared(owner: Owner) -> SharedBytes {
        let len = (*owner).as_ref().len();
        SharedBytes {
            owner,
            range: 0..len,
        }
    }

    /// The bytes in `range` of these (clamped to them), sharing the owner.
    pub fn slice(&self, range: Range<usize>) -> SharedBytes {
        let len = self.len();
        let end = range.end.min(len);
        let start = range.start.min(end);
        SharedBytes {
            owner: self.owner.clone(),
            range: self.range.start + start..self.range.start + end,
        }
    }

    /// The bytes, as a `Vec<u8>` would give them.
    pub fn as_slice(&self) -> &[u8] {
        self
    }
}

impl Deref for SharedBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // The range is checked against the owner's length whenever one is made.
        (*self.owner)
            .as_ref()
            .get(self.range.clone())
            .unwrap_or(&[])
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
        **self == **other
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
}
