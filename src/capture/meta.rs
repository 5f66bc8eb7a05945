//! [`Meta`]: the facts a payload gathered on its way out (start line, headers, trailers, flags
//! such as `grpc-body`), as ordered `(key, value)` pairs in one buffer.
//!
//! Why one buffer: a capture of a gigabyte holds hundreds of thousands of messages with a dozen
//! headers each. As a `Vec<(String, String)>`, each pair cost two allocations and 48 bytes of
//! string headers besides its text, about 1.5 KB a message; held here, a message's facts are two
//! allocations: their text back to back, and where each key and value ends.

use std::fmt;

/// Ordered `(key, value)` pairs of text, kept in one buffer. Keys may repeat (two `Set-Cookie`
/// headers); [`Meta::value`] finds the first.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Meta {
    /// Every key and value, back to back.
    text: String,
    /// Per pair, where its key ends and where its value ends in `text` (each starts where the
    /// one before ends).
    ends: Vec<(u32, u32)>,
}

impl Meta {
    /// No facts.
    pub const fn new() -> Meta {
        Meta {
            text: String::new(),
            ends: Vec::new(),
        }
    }

    /// Adds a pair at the end. The facts of one payload are headers and notes bounded by the
    /// header limits, far below 4 GiB; a pair that would take them past it is not kept.
    pub fn push(&mut self, (key, value): (impl AsRef<str>, impl AsRef<str>)) {
        let (key, value) = (key.as_ref(), value.as_ref());
        let key_end = self.text.len() + key.len();
        let (Ok(k), Ok(v)) = (u32::try_from(key_end), u32::try_from(key_end + value.len())) else {
            return;
        };
        self.text.push_str(key);
        self.text.push_str(value);
        self.ends.push((k, v));
    }

    /// Every pair, in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            meta: self,
            front: 0,
            back: self.ends.len(),
        }
    }

    /// The pair at `index`.
    pub fn get(&self, index: usize) -> Option<(&str, &str)> {
        let &(key_end, value_end) = self.ends.get(index)?;
        let start = match index {
            0 => 0,
            _ => self.ends[index - 1].1 as usize,
        };
        let (key_end, value_end) = (key_end as usize, value_end as usize);
        Some((
            self.text.get(start..key_end).unwrap_or(""),
            self.text.get(key_end..value_end).unwrap_or(""),
        ))
    }

    /// The value of the first pair named `key`.
    pub fn value(&self, key: &str) -> Option<&str> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// How many pairs there are.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Keeps the pairs `keep` says yes to, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&str, &str) -> bool) {
        if self.iter().all(|(k, v)| keep(k, v)) {
            return;
        }
        *self = self.iter().filter(|&(k, v)| keep(k, v)).collect();
    }

    /// Each value replaced by what `change` makes of its key and value (`None`: kept as it is).
    pub fn map_values(&mut self, mut change: impl FnMut(&str, &str) -> Option<String>) {
        let changed: Vec<(usize, String)> = self
            .iter()
            .enumerate()
            .filter_map(|(i, (k, v))| change(k, v).map(|new| (i, new)))
            .collect();
        if changed.is_empty() {
            return;
        }
        let mut out = Meta::new();
        let mut changed = changed.into_iter().peekable();
        for (i, (k, v)) in self.iter().enumerate() {
            match changed.next_if(|(at, _)| *at == i) {
                Some((_, new)) => out.push((k, new)),
                None => out.push((k, v)),
            }
        }
        *self = out;
    }

    /// Lets go of room kept for more pairs (a payload's facts are complete once it is peeled).
    pub fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.ends.shrink_to_fit();
    }
}

impl fmt::Debug for Meta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<K: AsRef<str>, V: AsRef<str>> Extend<(K, V)> for Meta {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, pairs: I) {
        for pair in pairs {
            self.push(pair);
        }
    }
}

impl<K: AsRef<str>, V: AsRef<str>> FromIterator<(K, V)> for Meta {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(pairs: I) -> Meta {
        let mut meta = Meta::new();
        meta.extend(pairs);
        meta
    }
}

impl<K: AsRef<str>, V: AsRef<str>, const N: usize> From<[(K, V); N]> for Meta {
    fn from(pairs: [(K, V); N]) -> Meta {
        pairs.into_iter().collect()
    }
}

impl<K: AsRef<str>, V: AsRef<str>> From<Vec<(K, V)>> for Meta {
    fn from(pairs: Vec<(K, V)>) -> Meta {
        pairs.into_iter().collect()
    }
}

impl<'a> IntoIterator for &'a Meta {
    type Item = (&'a str, &'a str);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// The pairs of a [`Meta`], in order (or from the back).
#[derive(Clone)]
pub struct Iter<'a> {
    meta: &'a Meta,
    front: usize,
    back: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<(&'a str, &'a str)> {
        if self.front >= self.back {
            return None;
        }
        self.front += 1;
        self.meta.get(self.front - 1)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back - self.front;
        (n, Some(n))
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.front >= self.back {
            return None;
        }
        self.back -= 1;
        self.meta.get(self.back)
    }
}

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_come_back_in_order_with_repeats_and_empty_text() {
        let mut m = Meta::new();
        m.push(("start-line", "HTTP/1.1 200 OK"));
        m.push(("Set-Cookie", "a=1"));
        m.push(("", ""));
        m.push(("Set-Cookie".to_string(), String::from("b=2")));
        let all: Vec<_> = m.iter().collect();
        assert_eq!(
            all,
            [
                ("start-line", "HTTP/1.1 200 OK"),
                ("Set-Cookie", "a=1"),
                ("", ""),
                ("Set-Cookie", "b=2")
            ]
        );
        assert_eq!(m.value("Set-Cookie"), Some("a=1"));
        assert_eq!(m.value("set-cookie"), None);
        assert_eq!(m.iter().next_back(), Some(("Set-Cookie", "b=2")));
        assert_eq!(m.len(), 4);
        assert_eq!(format!("{m:?}"), format!("{all:?}"));

        m.retain(|k, _| k != "Set-Cookie");
        assert_eq!(
            m.iter().collect::<Vec<_>>(),
            [("start-line", "HTTP/1.1 200 OK"), ("", "")]
        );
        m.map_values(|k, v| (k.is_empty()).then(|| format!("{v}!")));
        assert_eq!(
            m.iter().collect::<Vec<_>>(),
            [("start-line", "HTTP/1.1 200 OK"), ("", "!")]
        );
        assert_eq!(
            m,
            Meta::from([("start-line", "HTTP/1.1 200 OK"), ("", "!")])
        );
        assert!(Meta::new().is_empty() && Meta::new().get(0).is_none());
    }
}
