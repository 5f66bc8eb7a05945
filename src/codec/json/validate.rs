//! Whether bytes are one JSON text the decoder accepts, found without building anything: no
//! value, no spans, no string copies. Peeling asks "is this JSON?" of every payload, and
//! `convert` asks it before streaming a large document; decoding 50 MB to answer it used to cost
//! a gigabyte.
//!
//! The rules are [`super::decode`]'s, and a test holds the two to the same answer on every file
//! of JSONTestSuite and the fuzz corpus: an optional UTF-8 byte order mark, whitespace of space,
//! tab, line feed and carriage return only, strings of valid UTF-8 with no raw control
//! character, escapes as RFC 8259 gives them with surrogate pairs matched, numbers without
//! leading zeros, and nothing after the value. Depth and node limits stop it where they stop
//! the decoder.

use super::scan_number;
use crate::limits::Limits;

/// Whether [`super::decode`] would decode `b` without an error within `limits`' depth and
/// node limits. Never allocates more than one byte per open container.
pub(crate) fn is_json(b: &[u8], limits: &Limits) -> bool {
    Validator {
        b,
        i: 0,
        nodes: 0,
        max_nodes: limits.nodes_for(b.len()),
        max_depth: limits.depth(),
    }
    .run()
    .is_some()
}

struct Validator<'a> {
    b: &'a [u8],
    i: usize,
    nodes: usize,
    max_nodes: usize,
    max_depth: usize,
}

impl Validator<'_> {
    fn skip_ws(&mut self) {
        self.i = super::skip_ws(self.b, self.i);
    }

    fn run(&mut self) -> Option<()> {
        if self.b.starts_with(&[0xEF, 0xBB, 0xBF]) {
            self.i = 3;
        }
        // Open containers, innermost last: true for an array.
        let mut stack: Vec<bool> = Vec::new();
        self.skip_ws();
        'value: loop {
            if self.nodes >= self.max_nodes {
                return None;
            }
            self.nodes += 1;
            match *self.b.get(self.i)? {
                c @ (b'[' | b'{') => {
                    if stack.len() >= self.max_depth {
                        return None;
                    }
                    let is_array = c == b'[';
                    self.i += 1;
                    self.skip_ws();
                    let close = if is_array { b']' } else { b'}' };
                    if self.b.get(self.i) == Some(&close) {
                        self.i += 1;
                    } else {
                        stack.push(is_array);
                        if !is_array {
                            self.key()?;
                        }
                        continue 'value;
                    }
                }
                b'"' => self.string()?,
                b'-' | b'0'..=b'9' => {
                    let scan = scan_number(self.b, self.i).ok()?;
                    if self.b.get(scan.end).is_some_and(u8::is_ascii_digit) {
                        return None;
                    }
                    self.i = scan.end;
                }
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                _ => return None,
            }
            // A value is complete: read what follows, closing containers until one continues.
            loop {
                let Some(&is_array) = stack.last() else {
                    self.skip_ws();
                    return (self.i == self.b.len()).then_some(());
                };
                self.skip_ws();
                match *self.b.get(self.i)? {
                    b',' => {
                        self.i += 1;
                        self.skip_ws();
                        if !is_array {
                            self.key()?;
                        }
                        continue 'value;
                    }
                    b']' if is_array => {}
                    b'}' if !is_array => {}
                    _ => return None,
                }
                self.i += 1;
                stack.pop();
            }
        }
    }

    /// A map key at `self.i`, its colon, and the whitespace before the value.
    fn key(&mut self) -> Option<()> {
        if self.b.get(self.i) != Some(&b'"') {
            return None;
        }
        self.string()?;
        self.skip_ws();
        if self.b.get(self.i) != Some(&b':') {
            return None;
        }
        self.i += 1;
        self.skip_ws();
        Some(())
    }

    fn literal(&mut self, lit: &[u8]) -> Option<()> {
        if self.b.get(self.i..self.i + lit.len())? != lit {
            return None;
        }
        self.i += lit.len();
        Some(())
    }

    /// A string whose opening quote is at `self.i`; leaves `self.i` after its closing quote.
    fn string(&mut self) -> Option<()> {
        let b = self.b;
        let mut i = self.i + 1;
        let mut run_start = i;
        loop {
            let c = *b.get(i)?;
            match c {
                b'"' | b'\\' => {
                    // The bytes since the last escape must be UTF-8 (ASCII needs no check).
                    let run = &b[run_start..i];
                    if !run.is_ascii() && std::str::from_utf8(run).is_err() {
                        return None;
                    }
                    if c == b'"' {
                        self.i = i + 1;
                        return Some(());
                    }
                    i = match *b.get(i + 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i + 2,
                        b'u' => super::decode::unicode_escape_end(b, i)?,
                        _ => return None,
                    };
                    run_start = i;
                }
                0..=0x1f => return None,
                _ => i += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{decode, DecodeOptions, Format};

    fn same_as_decoder(text: &[u8], limits: &Limits) {
        let options = DecodeOptions {
            limits: *limits,
            ..DecodeOptions::default()
        };
        assert_eq!(
            is_json(text, limits),
            decode(text, Format::Json, &options).is_ok(),
            "{:?}",
            String::from_utf8_lossy(text)
        );
    }

    #[test]
    fn agrees_with_the_decoder_on_edge_cases() {
        let limits = Limits::default();
        for text in [
            &b"{}"[..],
            b" [1, 2.5e3, -0, true, false, null, \"a\\u00e9\\ud83d\\ude00\"] ",
            b"\xEF\xBB\xBF{\"a\":1}",
            b"[01]",
            b"[1.]",
            b"[\"\\ud800\"]",
            b"[\"\\udc00\"]",
            b"[\"\\ud800\\u0041\"]",
            b"[\"\x01\"]",
            b"[\"\xff\"]",
            b"[\"\xc3\xa9\"]",
            b"{\"a\" 1}",
            b"{\"a\":1,}",
            b"[1] x",
            b"[1]\x0c",
            b"",
            b"   ",
            b"nul",
            b"\"abc",
            b"[\"\\x\"]",
            b"{\"\xe9\":1}",
        ] {
            same_as_decoder(text, &limits);
        }
    }

    #[test]
    fn stops_at_the_depth_and_node_limits_like_the_decoder() {
        let limits = Limits {
            max_depth: 3,
            ..Limits::default()
        };
        same_as_decoder(b"[[[1]]]", &limits);
        same_as_decoder(b"[[[[1]]]]", &limits);
        let limits = Limits {
            max_nodes: 3,
            ..Limits::default()
        };
        same_as_decoder(b"[1,2]", &limits);
        same_as_decoder(b"[1,2,3]", &limits);
        same_as_decoder(b"{\"a\":1,\"b\":2}", &limits);
        same_as_decoder(b"{\"a\":1,\"b\":2,\"c\":3}", &limits);
    }

    /// The default node budget grows with a large input: 9 million numbers in 54 MB pass the
    /// default (13.5 million nodes for that size) but not a budget set to 8 million.
    #[test]
    fn the_default_node_budget_grows_with_the_input() {
        let n = 9_000_000;
        let mut big = Vec::with_capacity(n * 6 + 2);
        big.push(b'[');
        for i in 0..n {
            if i > 0 {
                big.push(b',');
            }
            big.extend_from_slice(b"100.5");
        }
        big.push(b']');
        assert!(n > Limits::DEFAULT_MAX_NODES);
        assert!(is_json(&big, &Limits::default()));
        let set = Limits {
            max_nodes: 8_000_000,
            ..Limits::default()
        };
        assert!(!is_json(&big, &set));
    }

    /// Every file of JSONTestSuite's `test_parsing` and of the JSON fuzz corpus gets the
    /// decoder's answer.
    #[test]
    fn agrees_with_the_decoder_on_the_suite_and_the_fuzz_corpus() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let limits = Limits::default();
        let mut n = 0;
        for dir in [
            "tests/data/json-test-suite/test_parsing",
            "fuzz/corpus/json",
        ] {
            let entries = std::fs::read_dir(root.join(dir)).expect(dir);
            for entry in entries {
                let bytes = std::fs::read(entry.expect("entry").path()).expect("file");
                same_as_decoder(&bytes, &limits);
                n += 1;
            }
        }
        assert!(n > 500, "only {n} files");
    }
}
