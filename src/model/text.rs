//! [`CompactText`]: the text of a [`super::Value::Text`], held in place when short.
//!
//! Most texts of a real document are short: map keys above all (`"order_id"`, `"status"`), and
//! enum-like values. As a `String`, each was a heap allocation of its own (32 bytes with the
//! allocator's header for any text up to 24 bytes), beside the 24 bytes of the `String` in the
//! value: on a 50 MB JSON document of 330,000 records, 4.4 million allocations and about 140 MB.
//! A `CompactText` keeps up to [`CompactText::INLINE`] bytes in its own 24 bytes and only longer texts on the
//! heap, exactly as long as they are.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

const INLINE: usize = CompactText::INLINE;

/// UTF-8 text, in place up to [`CompactText::INLINE`] bytes. Derefs to `str`; compares, orders and hashes
/// as its `str` does.
#[derive(Clone)]
pub struct CompactText(Repr);

#[derive(Clone)]
enum Repr {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<str>),
}

const _: () = assert!(std::mem::size_of::<CompactText>() == 24);

impl CompactText {
    /// The longest text kept in place.
    pub const INLINE: usize = 22;

    /// The text `s`.
    pub fn new(s: &str) -> CompactText {
        if s.len() <= INLINE {
            let mut bytes = [0u8; INLINE];
            bytes[..s.len()].copy_from_slice(s.as_bytes());
            CompactText(Repr::Inline {
                len: s.len() as u8,
                bytes,
            })
        } else {
            CompactText(Repr::Heap(s.into()))
        }
    }

    /// The text of `b` when it is short enough to keep in place and all ASCII (which is UTF-8,
    /// so no decoding is needed): a decoder's fast path for keys and short strings. `None`
    /// otherwise, and the caller checks the bytes as UTF-8.
    #[inline]
    pub fn inline_ascii(b: &[u8]) -> Option<CompactText> {
        let len = b.len();
        let mut bytes = [0u8; INLINE];
        bytes.get_mut(..len)?.copy_from_slice(b);
        // The 22 bytes as three words (the last two bytes zero): any byte from 0x80 up is no
        // ASCII.
        let mut all = [0u8; 24];
        all[..INLINE].copy_from_slice(&bytes);
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&all[i * 8..i * 8 + 8]);
            u64::from_le_bytes(w)
        };
        if (word(0) | word(1) | word(2)) & 0x8080_8080_8080_8080 != 0 {
            return None;
        }
        Some(CompactText(Repr::Inline {
            len: len as u8,
            bytes,
        }))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // Only whole UTF-8 texts are stored, so this never falls back.
            Repr::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            Repr::Heap(s) => s,
        }
    }

    /// The text's UTF-8 bytes. Unlike `as_str`, this makes no check of text kept in place, so
    /// the encoders, which only copy bytes out, use it for every string and key they write.
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, bytes } => bytes.get(..usize::from(*len)).unwrap_or_default(),
            Repr::Heap(s) => s.as_bytes(),
        }
    }

    /// A text kept in place as three words: its length and its bytes, padded with zeros (the
    /// bytes past the length always are zero). Two such texts are equal exactly when their
    /// words are, which is one comparison of 24 bytes where a key's bytes took a call to
    /// `memcmp`. `None` for a text on the heap.
    #[inline]
    pub fn inline_words(&self) -> Option<[u64; 3]> {
        match &self.0 {
            Repr::Inline { len, bytes } => {
                let mut all = [0u8; 24];
                all[0] = *len;
                all[1..=INLINE].copy_from_slice(bytes);
                let word = |i: usize| {
                    let mut w = [0u8; 8];
                    w.copy_from_slice(&all[i * 8..i * 8 + 8]);
                    u64::from_le_bytes(w)
                };
                Some([word(0), word(1), word(2)])
            }
            Repr::Heap(_) => None,
        }
    }

    /// A text kept in place: all [`CompactText::INLINE`] bytes of its room (zero past the text)
    /// and its length. A writer can copy the whole room, a fixed size it copies without a call
    /// to `memcpy`, and cut the output back to the length. `None` for a text on the heap.
    #[inline]
    pub fn inline_room(&self) -> Option<(&[u8; INLINE], usize)> {
        match &self.0 {
            Repr::Inline { len, bytes } => Some((bytes, usize::from(*len))),
            Repr::Heap(_) => None,
        }
    }

    /// The length of the text in bytes (no check of its text either).
    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.as_bytes().is_empty()
    }

    /// The text as a `String`.
    pub fn into_string(self) -> String {
        match self.0 {
            Repr::Heap(s) => s.into_string(),
            Repr::Inline { .. } => self.as_str().to_string(),
        }
    }

    /// Whether the text is kept on the heap (longer than [`CompactText::INLINE`] bytes).
    pub fn is_on_heap(&self) -> bool {
        matches!(self.0, Repr::Heap(_))
    }
}

impl Default for CompactText {
    fn default() -> CompactText {
        CompactText::new("")
    }
}

impl Deref for CompactText {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for CompactText {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for CompactText {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for CompactText {
    fn from(s: &str) -> CompactText {
        CompactText::new(s)
    }
}

impl From<&String> for CompactText {
    fn from(s: &String) -> CompactText {
        CompactText::new(s)
    }
}

impl From<String> for CompactText {
    fn from(s: String) -> CompactText {
        if s.len() <= INLINE {
            CompactText::new(&s)
        } else {
            CompactText(Repr::Heap(s.into_boxed_str()))
        }
    }
}

impl From<CompactText> for String {
    fn from(t: CompactText) -> String {
        t.into_string()
    }
}

impl PartialEq for CompactText {
    fn eq(&self, other: &CompactText) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for CompactText {}

impl PartialEq<str> for CompactText {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for CompactText {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<String> for CompactText {
    fn eq(&self, other: &String) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<CompactText> for String {
    fn eq(&self, other: &CompactText) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<CompactText> for str {
    fn eq(&self, other: &CompactText) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<CompactText> for &str {
    fn eq(&self, other: &CompactText) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialOrd for CompactText {
    fn partial_cmp(&self, other: &CompactText) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for CompactText {
    fn cmp(&self, other: &CompactText) -> std::cmp::Ordering {
        // UTF-8 text orders as its bytes do.
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl Hash for CompactText {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for CompactText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for CompactText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::hash_map::DefaultHasher;

    fn hash_of<T: Hash + ?Sized>(t: &T) -> u64 {
        let mut h = DefaultHasher::new();
        t.hash(&mut h);
        h.finish()
    }

    /// The ASCII fast path takes short ASCII only, and gives what `new` gives; a byte from
    /// 0x80 up in any of the 22 places, or a 23rd byte, sends the text the other way.
    #[test]
    fn inline_ascii_takes_short_ascii_only() {
        for s in ["", "a", "order_id", "\u{7f}\u{0}", &"x".repeat(22)] {
            assert_eq!(
                CompactText::inline_ascii(s.as_bytes()),
                Some(CompactText::new(s)),
                "{s:?}"
            );
        }
        assert_eq!(CompactText::inline_ascii("y".repeat(23).as_bytes()), None);
        for at in 0..22 {
            let mut b = vec![b'k'; 22];
            b[at] = 0x80;
            assert_eq!(CompactText::inline_ascii(&b), None, "0x80 at {at}");
            b[at] = 0xE4;
            assert_eq!(
                CompactText::inline_ascii(&b[..=at]),
                None,
                "0xe4 ending {at}"
            );
        }
        assert_eq!(CompactText::inline_ascii("é".as_bytes()), None);
    }

    #[test]
    fn short_texts_stay_in_place_and_every_text_acts_as_its_str() {
        for s in [
            "",
            "a",
            "order_id",
            "é世界",
            &"x".repeat(22),
            &"y".repeat(23),
            &"長".repeat(40),
        ] {
            let t = CompactText::from(s);
            assert_eq!(t.as_str(), s);
            assert_eq!(t.is_on_heap(), s.len() > INLINE, "{s:?}");
            assert_eq!(CompactText::from(s.to_string()), t);
            assert_eq!(t.clone().into_string(), s);
            assert_eq!(format!("{t:?}"), format!("{s:?}"));
            assert_eq!(t.to_string(), s);
            assert_eq!(
                hash_of(&t),
                hash_of(s),
                "hashes as its str, for maps keyed by str"
            );
            assert_eq!(t.len(), s.len());
        }
        let (a, b) = (CompactText::from("ab"), CompactText::from("b"));
        assert!(a < b && "ab" < "b");
    }
}
