//! [`Path`]: how a node is addressed, the same way in every format (`$.data[3].user_id`).
//!
//! A path is built from the *value's* structure, not from any one encoding, so the JSON, the
//! MessagePack and the CBOR form of one payload give every field the same path. That is what links
//! a selection in one column to the same field in every other column.
//!
//! Text written as a path parses back ([`Path::parse`]): `$` is the root, `.name` a text key that is
//! a plain identifier, `["any text"]` any other text key (JSON string syntax), `[3]` an array index,
//! `[*]` any index (in patterns), and `{1}` a key that is not text, written as its summary.

use std::fmt;

/// One step from a container to one of its items.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PathSegment {
    /// The item at this position of an array.
    Index(usize),
    /// Any index: used in patterns that aggregate over the records of an array.
    AnyIndex,
    /// The value of the map entry with this text key.
    Key(String),
    /// The value of the map entry whose key is not text; the key's one-line summary.
    OtherKey(String),
}

/// Path from the root of a document to one node. `Path::root()` is `$`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Path {
    segments: Vec<PathSegment>,
}

impl Path {
    /// The root, `$`.
    pub fn root() -> Path {
        Path::default()
    }

    /// A path from its segments.
    pub fn from_segments(segments: Vec<PathSegment>) -> Path {
        Path { segments }
    }

    /// The segments from the root down.
    pub fn segments(&self) -> &[PathSegment] {
        &self.segments
    }

    /// Whether this is the root.
    pub fn is_root(&self) -> bool {
        self.segments.is_empty()
    }

    /// This path extended by one segment.
    #[must_use]
    pub fn child(&self, segment: PathSegment) -> Path {
        let mut segments = self.segments.clone();
        segments.push(segment);
        Path { segments }
    }

    /// Appends a segment.
    pub fn push(&mut self, segment: PathSegment) {
        self.segments.push(segment);
    }

    /// Removes the last segment.
    pub fn pop(&mut self) -> Option<PathSegment> {
        self.segments.pop()
    }

    /// The same path with every array index replaced by `[*]`: `$.data[*].user_id`. Fields of
    /// every record of an array share one pattern.
    #[must_use]
    pub fn pattern(&self) -> Path {
        Path {
            segments: self
                .segments
                .iter()
                .map(|s| match s {
                    PathSegment::Index(_) => PathSegment::AnyIndex,
                    other => other.clone(),
                })
                .collect(),
        }
    }

    /// Whether `other` is this path or lies under it.
    pub fn contains(&self, other: &Path) -> bool {
        other.segments.len() >= self.segments.len()
            && self.segments.iter().zip(&other.segments).all(|(a, b)| {
                a == b || matches!((a, b), (PathSegment::AnyIndex, PathSegment::Index(_)))
            })
    }

    /// This path for a message: whole up to 13 segments, otherwise its first and last six
    /// around the number left out (`$[0][0]…500 more…[0][0]`), and a key over 40 characters
    /// cut short with `…`, so a limit's error on 512-deep nesting stays one line. The text does
    /// not parse back; [`Path`]'s own does.
    pub fn brief(&self) -> Brief<'_> {
        Brief(self)
    }

    /// Parses the text form (see the module docs).
    pub fn parse(text: &str) -> Result<Path, PathParseError> {
        let err = |at: usize, what: &str| PathParseError {
            at,
            message: what.to_string(),
        };
        let b = text.as_bytes();
        if b.first() != Some(&b'$') {
            return Err(err(0, "a path starts with `$`"));
        }
        let mut i = 1;
        let mut segments = Vec::new();
        while i < b.len() {
            match b[i] {
                b'.' => {
                    let start = i + 1;
                    let mut j = start;
                    while j < b.len() && is_ident_byte(b[j]) {
                        j += 1;
                    }
                    if j == start {
                        return Err(err(i, "expected a field name after `.`"));
                    }
                    segments.push(PathSegment::Key(text[start..j].to_string()));
                    i = j;
                }
                b'[' => {
                    if b.get(i + 1) == Some(&b'"') {
                        let (s, end) =
                            parse_quoted(text, i + 1).ok_or_else(|| err(i, "unterminated key"))?;
                        if b.get(end) != Some(&b']') {
                            return Err(err(end, "expected `]`"));
                        }
                        segments.push(PathSegment::Key(s));
                        i = end + 1;
                    } else {
                        let close = text[i..]
                            .find(']')
                            .map(|p| p + i)
                            .ok_or_else(|| err(i, "expected `]`"))?;
                        let inner = &text[i + 1..close];
                        if inner == "*" {
                            segments.push(PathSegment::AnyIndex);
                        } else {
                            let n = inner.parse().map_err(|_| {
                                err(i + 1, "expected an index, `*` or a quoted key")
                            })?;
                            segments.push(PathSegment::Index(n));
                        }
                        i = close + 1;
                    }
                }
                b'{' => {
                    let close = text[i..]
                        .rfind('}')
                        .map(|p| p + i)
                        .ok_or_else(|| err(i, "expected `}`"))?;
                    // The summary may itself hold braces: take up to the brace that balances.
                    let mut depth = 0usize;
                    let mut end = close;
                    for (k, c) in text[i..].char_indices() {
                        match c {
                            '{' => depth += 1,
                            '}' => {
                                depth -= 1;
                                if depth == 0 {
                                    end = i + k;
                                    break;
                                }
                            }
                            _ => {}
                        }
                    }
                    segments.push(PathSegment::OtherKey(text[i + 1..end].to_string()));
                    i = end + 1;
                }
                _ => return Err(err(i, "expected `.`, `[` or `{`")),
            }
        }
        Ok(Path { segments })
    }
}

fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'-'
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(is_ident_byte)
        && !s.as_bytes()[0].is_ascii_digit()
        && !s.starts_with('-')
}

/// Parses a JSON-style quoted string starting at byte `at` (the opening quote); returns the text
/// and the offset just past the closing quote.
fn parse_quoted(text: &str, at: usize) -> Option<(String, usize)> {
    let mut out = String::new();
    let mut chars = text[at + 1..].char_indices();
    while let Some((k, c)) = chars.next() {
        match c {
            '"' => return Some((out, at + 1 + k + 1)),
            '\\' => match chars.next()?.1 {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                'u' => {
                    let hex: String = (0..4)
                        .filter_map(|_| chars.next().map(|(_, c)| c))
                        .collect();
                    out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                }
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

/// A path's text could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad path at character {at}: {message}")]
pub struct PathParseError {
    /// Byte offset in the path text.
    pub at: usize,
    /// What was wrong.
    pub message: String,
}

impl PathSegment {
    /// This segment for a message: a key over 40 characters cut short with `…` inside its
    /// brackets; anything else as it is.
    pub fn brief(&self) -> BriefSegment<'_> {
        BriefSegment(self)
    }
}

impl fmt::Display for PathSegment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathSegment::Index(i) => write!(f, "[{i}]"),
            PathSegment::AnyIndex => f.write_str("[*]"),
            PathSegment::Key(k) if is_ident(k) => write!(f, ".{k}"),
            PathSegment::Key(k) => {
                f.write_str("[\"")?;
                for c in k.chars() {
                    match c {
                        '"' => f.write_str("\\\"")?,
                        '\\' => f.write_str("\\\\")?,
                        '\n' => f.write_str("\\n")?,
                        '\t' => f.write_str("\\t")?,
                        '\r' => f.write_str("\\r")?,
                        c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
                        c => write!(f, "{c}")?,
                    }
                }
                f.write_str("\"]")
            }
            PathSegment::OtherKey(k) => write!(f, "{{{k}}}"),
        }
    }
}

/// Segments [`Path::brief`] keeps at each end of a long path.
const BRIEF_ENDS: usize = 6;

/// Characters of a key [`Path::brief`] keeps.
const BRIEF_KEY_CHARS: usize = 40;

/// A path written for a message; see [`Path::brief`].
#[derive(Debug, Clone, Copy)]
pub struct Brief<'a>(&'a Path);

impl fmt::Display for Brief<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let segments = &self.0.segments;
        let write = |f: &mut fmt::Formatter<'_>, s: &[PathSegment]| {
            s.iter().try_for_each(|s| write!(f, "{}", s.brief()))
        };
        f.write_str("$")?;
        if segments.len() <= 2 * BRIEF_ENDS + 1 {
            return write(f, segments);
        }
        write(f, &segments[..BRIEF_ENDS])?;
        write!(f, "…{} more…", segments.len() - 2 * BRIEF_ENDS)?;
        write(f, &segments[segments.len() - BRIEF_ENDS..])
    }
}

/// A segment written for a message; see [`PathSegment::brief`].
#[derive(Debug, Clone, Copy)]
pub struct BriefSegment<'a>(&'a PathSegment);

impl fmt::Display for BriefSegment<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (key, quoted) = match self.0 {
            PathSegment::Key(k) => (k, true),
            PathSegment::OtherKey(k) => (k, false),
            s => return write!(f, "{s}"),
        };
        if key.chars().nth(BRIEF_KEY_CHARS).is_none() {
            return write!(f, "{}", self.0);
        }
        let cut: String = key.chars().take(BRIEF_KEY_CHARS).collect();
        // The ellipsis goes inside the brackets: `.abc…`, `["a b…"]`, `{abc…}`.
        let (text, tail) = match quoted {
            true if is_ident(&cut) => (PathSegment::Key(cut).to_string(), 0),
            true => (PathSegment::Key(cut).to_string(), 2),
            false => (PathSegment::OtherKey(cut).to_string(), 1),
        };
        let (head, close) = text.split_at(text.len() - tail);
        write!(f, "{head}…{close}")
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("$")?;
        for s in &self.segments {
            write!(f, "{s}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_and_parses_back() {
        let p = Path::from_segments(vec![
            PathSegment::Key("data".into()),
            PathSegment::Index(3),
            PathSegment::Key("user_id".into()),
            PathSegment::Key("two words \"q\"".into()),
            PathSegment::OtherKey("1".into()),
            PathSegment::Key("类别".into()),
        ]);
        let text = p.to_string();
        assert_eq!(
            text,
            "$.data[3].user_id[\"two words \\\"q\\\"\"]{1}[\"类别\"]"
        );
        assert_eq!(Path::parse(&text), Ok(p));
    }

    #[test]
    fn pattern_replaces_indices() {
        let p = Path::parse("$.data[3].user_id").expect("valid path");
        assert_eq!(p.pattern().to_string(), "$.data[*].user_id");
        assert!(p.pattern().contains(&p));
        assert!(!p.contains(&p.pattern()));
    }

    #[test]
    fn rejects_bad_text() {
        assert!(Path::parse("data").is_err());
        assert!(Path::parse("$.").is_err());
        assert!(Path::parse("$[x]").is_err());
        assert!(Path::parse("$[\"open").is_err());
    }

    #[test]
    fn a_brief_path_keeps_its_ends_and_counts_the_middle() {
        let short = Path::parse("$.data[3].user_id").expect("path");
        assert_eq!(short.brief().to_string(), short.to_string());
        // Thirteen segments are written whole; fourteen leave two out.
        let deep = |n| Path::from_segments(vec![PathSegment::Index(0); n]);
        assert_eq!(deep(13).brief().to_string(), deep(13).to_string());
        assert_eq!(
            deep(14).brief().to_string(),
            "$[0][0][0][0][0][0]…2 more…[0][0][0][0][0][0]"
        );
        assert_eq!(
            deep(512).brief().to_string(),
            "$[0][0][0][0][0][0]…500 more…[0][0][0][0][0][0]"
        );
        // Long keys are cut inside their brackets, by characters, not bytes.
        let long = "k".repeat(100);
        let wide = "é ".repeat(60);
        let p = Path::from_segments(vec![
            PathSegment::Key(long.clone()),
            PathSegment::Key(wide),
            PathSegment::OtherKey(long),
            PathSegment::Key("short".into()),
        ]);
        let forty = "k".repeat(40);
        let cut = "é ".repeat(20);
        assert_eq!(
            p.brief().to_string(),
            format!("$.{forty}…[\"{cut}…\"]{{{forty}…}}.short")
        );
    }
}
