//! Conformance tests for the JSON codec (`wirelens::codec::json`).
//!
//! - nst/JSONTestSuite `test_parsing/`: every `y_` file decodes (and equals serde_json's reading
//!   of it), every `n_` file is rejected, every `i_` file gives the outcome recorded in
//!   [`I_CASES`].
//! - nativejson-benchmark: `roundtrip/*.json` re-encode to their exact bytes; `twitter.json`,
//!   `citm_catalog.json` and `canada.json` encode byte for byte like serde_json (compact and
//!   pretty) and decode back to the same value and span tree.
//! - Exact error offsets, paths, kinds, partial documents and messages for hand-made bad inputs.
//! - Exact fidelity notes for a value holding everything JSON cannot say.
//! - proptest: JSON-sayable values round-trip through encode and decode with valid spans.

use std::fs;
use std::path::{Path as FsPath, PathBuf};

use proptest::prelude::*;
use wirelens::codec::json::{self, parse_number};
use wirelens::codec::{
    DecodeError, DecodeOptions, Document, EncodeOptions, ErrorKind, LimitName, NoteKind,
};
use wirelens::model::{Float, Kind, Path, Timestamp, Value};

fn data_dir(sub: &str) -> PathBuf {
    FsPath::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(sub)
}

/// The files of the JSONTestSuite whose names start with `prefix`, sorted, with their bytes.
fn suite(prefix: &str) -> Vec<(String, Vec<u8>)> {
    let dir = data_dir("json-test-suite/test_parsing");
    let mut out: Vec<(String, Vec<u8>)> = fs::read_dir(&dir)
        .expect("test_parsing directory")
        .map(|e| e.expect("directory entry").path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            name.starts_with(prefix).then(|| {
                let bytes = fs::read(&p).expect("readable test file");
                (name, bytes)
            })
        })
        .collect();
    out.sort();
    out
}

fn decode(bytes: &[u8]) -> Result<Document, DecodeError> {
    json::decode(bytes, &DecodeOptions::default())
}

fn compact() -> EncodeOptions {
    EncodeOptions::default()
}

fn pretty() -> EncodeOptions {
    EncodeOptions {
        pretty: true,
        ..EncodeOptions::default()
    }
}

/// serde_json's reading of a document as a [`Value`]. Numbers keep their literal text
/// (`arbitrary_precision`) and are classified by the codec's own [`parse_number`], so this
/// checks structure, strings and escapes against an independent parser. (serde_json 1.0.154
/// normalises an exponent's `E` to `e+` in that text, which changes nothing for floats but would
/// change a [`Value::Decimal`]'s literal; no `y_` case has such a decimal.)
fn from_serde(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => {
            let text = n.to_string();
            parse_number(&text)
                .unwrap_or_else(|| panic!("serde_json number {text} is a JSON number"))
        }
        serde_json::Value::String(s) => Value::text(s),
        serde_json::Value::Array(items) => Value::Array(items.iter().map(from_serde).collect()),
        serde_json::Value::Object(map) => Value::Map(
            map.iter()
                .map(|(k, v)| (Value::text(k.as_str()), from_serde(v)))
                .collect(),
        ),
    }
}

/// `v` with repeated map keys collapsed the way serde_json's `preserve_order` map does it: the
/// first occurrence keeps its place, the last value wins.
fn collapse_duplicates(v: &Value) -> Value {
    match v {
        Value::Array(items) => Value::Array(items.iter().map(collapse_duplicates).collect()),
        Value::Map(entries) => {
            let mut out: Vec<(Value, Value)> = Vec::new();
            for (k, val) in entries {
                let val = collapse_duplicates(val);
                match out.iter_mut().find(|(seen, _)| seen == k) {
                    Some(slot) => slot.1 = val,
                    None => out.push((k.clone(), val)),
                }
            }
            Value::Map(out)
        }
        other => other.clone(),
    }
}

// ---------------------------------------------------------------------------------------------
// JSONTestSuite
// ---------------------------------------------------------------------------------------------

#[test]
fn suite_has_the_expected_files() {
    assert_eq!(suite("y_").len(), 95);
    assert_eq!(suite("n_").len(), 188);
    assert_eq!(suite("i_").len(), 35);
}

#[test]
fn every_y_case_decodes_like_serde_json_with_valid_spans() {
    let mut failures = Vec::new();
    for (name, bytes) in suite("y_") {
        let doc = match decode(&bytes) {
            Ok(doc) => doc,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        if let Err(e) = doc.spans.validate(bytes.len()) {
            failures.push(format!("{name}: spans: {e}"));
        }
        let root = doc.spans.nodes().next().map(|n| n.kind);
        if root != Some(doc.value.kind()) {
            failures.push(format!("{name}: root node kind {root:?}"));
        }
        let theirs: serde_json::Value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("serde_json reads {name}: {e}"));
        if collapse_duplicates(&doc.value) != from_serde(&theirs) {
            failures.push(format!("{name}: {:?} != serde_json {theirs}", doc.value));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn y_duplicate_keys_are_all_kept() {
    let doc = decode(br#"{"a":"b","a":"c"}"#).expect("valid JSON");
    assert_eq!(
        doc.value,
        Value::object([("a", Value::text("b")), ("a", Value::text("c"))])
    );
    assert_eq!(doc.spans.find(&Path::parse("$.a").expect("path")).len(), 2);
}

#[test]
fn every_n_case_is_rejected_without_panic() {
    let mut failures = Vec::new();
    for (name, bytes) in suite("n_") {
        match decode(&bytes) {
            Ok(doc) => failures.push(format!("{name}: accepted as {:?}", doc.value)),
            Err(e) => {
                if e.offset > bytes.len() {
                    failures.push(format!("{name}: offset {} past the end", e.offset));
                }
                if e.message.is_empty() {
                    failures.push(format!("{name}: empty message"));
                }
                if let Some(p) = &e.partial {
                    if let Err(msg) = p.spans.validate(bytes.len()) {
                        failures.push(format!("{name}: partial spans: {msg}"));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn n_deep_nesting_is_a_limit_error() {
    for name in [
        "n_structure_100000_opening_arrays.json",
        "n_structure_open_array_object.json",
    ] {
        let bytes = fs::read(data_dir("json-test-suite/test_parsing").join(name)).expect("file");
        let e = decode(&bytes).expect_err("too deep");
        assert_eq!(e.kind, ErrorKind::Limit(LimitName::Depth), "{name}: {e}");
    }
}

/// What this decoder does with each implementation-defined (`i_`) case: `true` = accepted.
///
/// - Numbers: all accepted. Out-of-range or over-precise literals are kept exactly as
///   [`Value::Decimal`] (reals) or [`Value::BigInt`] (integers); nothing is rounded or rejected.
/// - Lone or mis-paired UTF-16 surrogates in `\u` escapes: rejected ([`ErrorKind::Invalid`]),
///   since `Value::Text` holds only Unicode scalar values.
/// - Invalid UTF-8 of any kind (overlong, surrogates encoded in UTF-8, beyond U+10FFFF, Latin-1,
///   truncated, stray continuation bytes) and UTF-16 with a BOM: rejected
///   ([`ErrorKind::Invalid`]). UTF-16 without a BOM is valid UTF-8 (NUL bytes) but not JSON:
///   rejected ([`ErrorKind::Syntax`]).
/// - 500 nested arrays: accepted (the default depth limit is 512).
/// - A UTF-8 byte order mark before the value: accepted and skipped.
const I_CASES: &[(&str, bool)] = &[
    ("i_number_double_huge_neg_exp.json", true),
    ("i_number_huge_exp.json", true),
    ("i_number_neg_int_huge_exp.json", true),
    ("i_number_pos_double_huge_exp.json", true),
    ("i_number_real_neg_overflow.json", true),
    ("i_number_real_pos_overflow.json", true),
    ("i_number_real_underflow.json", true),
    ("i_number_too_big_neg_int.json", true),
    ("i_number_too_big_pos_int.json", true),
    ("i_number_very_big_negative_int.json", true),
    ("i_object_key_lone_2nd_surrogate.json", false),
    ("i_string_1st_surrogate_but_2nd_missing.json", false),
    ("i_string_1st_valid_surrogate_2nd_invalid.json", false),
    ("i_string_UTF-16LE_with_BOM.json", false),
    ("i_string_UTF-8_invalid_sequence.json", false),
    ("i_string_UTF8_surrogate_U+D800.json", false),
    ("i_string_incomplete_surrogate_and_escape_valid.json", false),
    ("i_string_incomplete_surrogate_pair.json", false),
    ("i_string_incomplete_surrogates_escape_valid.json", false),
    ("i_string_invalid_lonely_surrogate.json", false),
    ("i_string_invalid_surrogate.json", false),
    ("i_string_invalid_utf-8.json", false),
    ("i_string_inverted_surrogates_U+1D11E.json", false),
    ("i_string_iso_latin_1.json", false),
    ("i_string_lone_second_surrogate.json", false),
    ("i_string_lone_utf8_continuation_byte.json", false),
    ("i_string_not_in_unicode_range.json", false),
    ("i_string_overlong_sequence_2_bytes.json", false),
    ("i_string_overlong_sequence_6_bytes.json", false),
    ("i_string_overlong_sequence_6_bytes_null.json", false),
    ("i_string_truncated-utf-8.json", false),
    ("i_string_utf16BE_no_BOM.json", false),
    ("i_string_utf16LE_no_BOM.json", false),
    ("i_structure_500_nested_arrays.json", true),
    ("i_structure_UTF-8_BOM_empty_object.json", true),
];

#[test]
fn i_cases_match_the_recorded_table() {
    let files = suite("i_");
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    let table: Vec<&str> = I_CASES.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, table, "the table lists every i_ file");
    let mut failures = Vec::new();
    for ((name, bytes), (_, accept)) in files.iter().zip(I_CASES) {
        match decode(bytes) {
            Ok(doc) => {
                if !accept {
                    failures.push(format!("{name}: accepted as {:?}", doc.value));
                }
                if let Err(e) = doc.spans.validate(bytes.len()) {
                    failures.push(format!("{name}: spans: {e}"));
                }
            }
            Err(e) => {
                if *accept {
                    failures.push(format!("{name}: rejected: {e}"));
                } else if name.contains("no_BOM") {
                    // UTF-16 without a BOM is valid UTF-8 (NUL bytes), but not JSON.
                    if e.kind != ErrorKind::Syntax {
                        failures.push(format!("{name}: kind {:?}: {e}", e.kind));
                    }
                } else if name.starts_with("i_string") || name.starts_with("i_object") {
                    // Every other rejection is about the text's encoding, not its syntax.
                    if e.kind != ErrorKind::Invalid {
                        failures.push(format!("{name}: kind {:?}: {e}", e.kind));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn i_numbers_are_kept_exactly() {
    let read = |name: &str| {
        let bytes = fs::read(data_dir("json-test-suite/test_parsing").join(name)).expect("file");
        let doc = decode(&bytes).expect("accepted");
        let text = std::str::from_utf8(&bytes).expect("ASCII").trim();
        let inner = text
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .expect("one-item array")
            .to_string();
        (doc.value, inner)
    };
    for name in [
        "i_number_double_huge_neg_exp.json",
        "i_number_huge_exp.json",
        "i_number_neg_int_huge_exp.json",
        "i_number_pos_double_huge_exp.json",
        "i_number_real_neg_overflow.json",
        "i_number_real_pos_overflow.json",
        "i_number_real_underflow.json",
    ] {
        let (v, lit) = read(name);
        assert_eq!(v, Value::Array(vec![Value::Decimal(lit)]), "{name}");
    }
    for name in [
        "i_number_too_big_neg_int.json",
        "i_number_too_big_pos_int.json",
        "i_number_very_big_negative_int.json",
    ] {
        let (v, lit) = read(name);
        let n: num_bigint::BigInt = lit.parse().expect("integer literal");
        assert_eq!(v, Value::Array(vec![Value::bigint(n)]), "{name}");
    }
    // Re-encoding keeps the literal.
    let (v, lit) = read("i_number_huge_exp.json");
    let out = json::encode(&v, &compact()).expect("encodable");
    assert_eq!(out.bytes, format!("[{lit}]").into_bytes());
}

#[test]
fn bom_is_skipped_and_spans_index_the_original_bytes() {
    let doc = decode(b"\xEF\xBB\xBF{\"a\":1}").expect("BOM then a value");
    assert_eq!(doc.value, Value::object([("a", Value::Int(1))]));
    let root = doc.spans.node(wirelens::model::NodeId(0));
    assert_eq!((root.span.start, root.span.end), (3, 10));
    let a = doc.spans.node(wirelens::model::NodeId(1));
    assert_eq!(a.key.map(|k| (k.start, k.end)), Some((4, 7)));
    assert_eq!((a.span.start, a.span.end), (8, 9));
    doc.spans.validate(10).expect("valid spans");
    // Only one BOM, and only at the start.
    assert!(decode(b"\xEF\xBB\xBF\xEF\xBB\xBF1").is_err());
    assert!(decode(b" \xEF\xBB\xBF1").is_err());
    assert_eq!(
        decode(b"\xEF\xBB\xBF").expect_err("no value").kind,
        ErrorKind::Eof
    );
}

// ---------------------------------------------------------------------------------------------
// nativejson-benchmark
// ---------------------------------------------------------------------------------------------

#[test]
fn roundtrip_files_reencode_to_the_same_bytes() {
    let dir = data_dir("json-bench/roundtrip");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("roundtrip directory")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 27);
    for path in files {
        let bytes = fs::read(&path).expect("file");
        let doc = decode(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let out = json::encode(&doc.value, &compact()).expect("encodable");
        assert_eq!(
            String::from_utf8_lossy(&out.bytes),
            String::from_utf8_lossy(&bytes),
            "{}",
            path.display()
        );
        assert_eq!(out.spans, doc.spans, "{}", path.display());
        assert!(out
            .notes
            .iter()
            .all(|n| n.kind == NoteKind::IntegerPrecision));
    }
}

/// Equal JSON documents, comparing non-integer numbers as the float64 they read as.
fn same_numbers(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value as J;
    match (a, b) {
        (J::Number(x), J::Number(y)) if x.is_f64() || y.is_f64() => x.as_f64() == y.as_f64(),
        (J::Array(x), J::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_numbers(a, b))
        }
        (J::Object(x), J::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((ka, va), (kb, vb))| ka == kb && same_numbers(va, vb))
        }
        _ => a == b,
    }
}

/// One benchmark file against serde_json, compact and pretty.
///
/// serde_json is built with `arbitrary_precision` here, so it writes every number back as its
/// original text. Where a file's literals are not the shortest text of their float64 (canada.json
/// prints coordinates with 17 digits, `%.17g` style), we write the shortest form, as serde_json
/// without that feature does: such files are checked number by number as float64 (`exact` false);
/// the others byte for byte.
fn check_bench_file(name: &str, exact: bool) {
    let bytes = fs::read(data_dir("json-bench").join(name)).expect("benchmark file");
    let doc = decode(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    doc.spans.validate(bytes.len()).expect("decoded spans");
    let theirs: serde_json::Value = serde_json::from_slice(&bytes).expect("serde_json reads it");
    assert_eq!(
        doc.value,
        from_serde(&theirs),
        "{name}: same value as serde_json"
    );
    for (options, expected) in [
        (
            compact(),
            serde_json::to_string(&theirs).expect("serde_json writes"),
        ),
        (
            pretty(),
            serde_json::to_string_pretty(&theirs).expect("serde_json writes"),
        ),
    ] {
        let out = json::encode(&doc.value, &options).expect("encodable");
        // Only twitter.json's 64-bit ids (beyond 2^53) deserve a note.
        assert!(
            out.notes
                .iter()
                .all(|n| n.kind == NoteKind::IntegerPrecision),
            "{name}: notes {:?}",
            out.notes
        );
        if !exact {
            let ours: serde_json::Value =
                serde_json::from_slice(&out.bytes).expect("serde_json reads our output");
            assert!(
                same_numbers(&ours, &theirs),
                "{name}: same numbers as serde_json"
            );
            assert!(out.bytes.len() < expected.len(), "{name}: shortest floats");
        } else if out.bytes != expected.as_bytes() {
            let got = String::from_utf8_lossy(&out.bytes);
            let at = got
                .bytes()
                .zip(expected.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(expected.len()));
            let lo = at.saturating_sub(40);
            panic!(
                "{name} (pretty: {}): differs from serde_json at byte {at}:\n ours:   {:?}\n theirs: {:?}",
                options.pretty,
                got.get(lo..(at + 40).min(got.len())),
                expected.get(lo..(at + 40).min(expected.len())),
            );
        }
        out.spans.validate(out.bytes.len()).expect("encoded spans");
        let back = decode(&out.bytes).expect("own output decodes");
        assert_eq!(back.value, doc.value, "{name}: decode(encode(v)) == v");
        assert_eq!(
            back.spans, out.spans,
            "{name}: decode(encode(v)).spans == encode(v).spans"
        );
    }
}

#[test]
fn twitter_matches_serde_json() {
    check_bench_file("twitter.json", true);
}

#[test]
fn citm_catalog_matches_serde_json() {
    check_bench_file("citm_catalog.json", true);
}

#[test]
fn canada_matches_serde_json() {
    check_bench_file("canada.json", false);
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

fn fail(input: &[u8]) -> DecodeError {
    decode(input).expect_err("invalid input")
}

#[test]
fn error_in_array_inside_map() {
    let e = fail(br#"{"a":[1,2,}"#);
    assert_eq!((e.kind, e.offset), (ErrorKind::Syntax, 10));
    assert_eq!(e.path.to_string(), "$.a[2]");
    assert_eq!(
        e.to_string(),
        "error at byte 10 ($.a[2]): JSON: expected a value but found '}'"
    );
    let p = e.partial.expect("partial document");
    assert_eq!(
        p.value,
        Value::object([("a", Value::Array(vec![Value::Int(1), Value::Int(2)]))])
    );
    p.spans.validate(11).expect("partial spans");
    assert_eq!(p.spans.node(wirelens::model::NodeId(0)).span.end, 10);
}

#[test]
fn error_in_unicode_escape() {
    let e = fail(br#"{"a":"\u12"}"#);
    assert_eq!((e.kind, e.offset), (ErrorKind::Syntax, 6));
    assert_eq!(e.path.to_string(), "$.a");
    assert_eq!(
        e.to_string(),
        "error at byte 6 ($.a): JSON: invalid \\u escape: expected four hex digits but found '\"'"
    );
    assert_eq!(e.partial.expect("partial").value, Value::Map(vec![]));
}

#[test]
fn error_at_end_of_input_keeps_the_partial_array() {
    let e = fail(b"[1,2");
    assert_eq!((e.kind, e.offset), (ErrorKind::Eof, 4));
    assert_eq!(e.path.to_string(), "$");
    assert_eq!(
        e.to_string(),
        "error at byte 4 ($): JSON: the input ends inside an array; expected ',' or ']'"
    );
    let p = e.partial.expect("partial document");
    assert_eq!(p.value, Value::Array(vec![Value::Int(1), Value::Int(2)]));
    assert_eq!(p.spans.len(), 3);
    p.spans.validate(4).expect("partial spans");
}

#[test]
fn invalid_utf8_is_invalid() {
    let e = fail(b"\"\xff\"");
    assert_eq!((e.kind, e.offset), (ErrorKind::Invalid, 1));
    assert_eq!(e.path, Path::root());
    // Outside strings too, and in keys.
    let e = fail(b"[1,\xff]");
    assert_eq!((e.kind, e.offset), (ErrorKind::Invalid, 3));
    assert_eq!(e.path.to_string(), "$[1]");
    let e = fail(b"{\"k\xc3\":1}");
    assert_eq!((e.kind, e.offset), (ErrorKind::Invalid, 3));
    // A lone surrogate escape.
    let e = fail(br#"["\uDC00"]"#);
    assert_eq!((e.kind, e.offset), (ErrorKind::Invalid, 2));
    assert_eq!(e.path.to_string(), "$[0]");
}

#[test]
fn million_deep_input_is_a_limit_error_at_the_limit() {
    let bytes = vec![b'['; 1_000_000];
    let e = fail(&bytes);
    assert_eq!(
        (e.kind, e.offset),
        (ErrorKind::Limit(LimitName::Depth), 512)
    );
    assert_eq!(e.path.segments().len(), 512);
    let p = e.partial.expect("partial document");
    // 512 arrays, the innermost empty.
    assert_eq!(p.spans.len(), 512);
    assert_eq!(p.value.depth(), 511);
    p.spans.validate(bytes.len()).expect("partial spans");
    // Maps count too, and the limit is configurable.
    let deep_maps = r#"{"a":"#.repeat(1000);
    let e = json::decode(deep_maps.as_bytes(), &DecodeOptions::with_max_depth(10))
        .expect_err("too deep");
    assert_eq!((e.kind, e.offset), (ErrorKind::Limit(LimitName::Depth), 50));
    assert_eq!(e.path.to_string(), "$.a.a.a.a.a.a.a.a.a.a");
    // Exactly at the limit is fine.
    let ok = format!("{}{}", "[".repeat(512), "]".repeat(512));
    assert!(decode(ok.as_bytes()).is_ok());
}

#[test]
fn other_error_offsets_and_kinds() {
    let cases: &[(&[u8], ErrorKind, usize, &str)] = &[
        (b"", ErrorKind::Eof, 0, "$"),
        (b"  ", ErrorKind::Eof, 2, "$"),
        (b"[1 2]", ErrorKind::Syntax, 3, "$"),
        (b"[01]", ErrorKind::Syntax, 2, "$[0]"),
        (b"[-]", ErrorKind::Syntax, 2, "$[0]"),
        (b"[1.]", ErrorKind::Syntax, 3, "$[0]"),
        (b"[.5]", ErrorKind::Syntax, 1, "$[0]"),
        (b"[+1]", ErrorKind::Syntax, 1, "$[0]"),
        (b"[tru]", ErrorKind::Syntax, 4, "$[0]"),
        (b"[nul", ErrorKind::Eof, 4, "$[0]"),
        (b"{\"a\" 1}", ErrorKind::Syntax, 5, "$"),
        (b"{\"a\":1,}", ErrorKind::Syntax, 7, "$"),
        (b"{1:2}", ErrorKind::Syntax, 1, "$"),
        (b"{\"a\":}", ErrorKind::Syntax, 5, "$.a"),
        (b"[\"a\tb\"]", ErrorKind::Syntax, 3, "$[0]"),
        (b"[\"a\\x\"]", ErrorKind::Syntax, 3, "$[0]"),
        (b"[\"abc", ErrorKind::Eof, 5, "$[0]"),
        (b"\x0c1", ErrorKind::Syntax, 0, "$"),
        (b"1 2", ErrorKind::TrailingData, 2, "$"),
        (b"[] ]", ErrorKind::TrailingData, 3, "$"),
    ];
    for &(input, kind, offset, path) in cases {
        let e = fail(input);
        let shown = String::from_utf8_lossy(input);
        assert_eq!((e.kind, e.offset), (kind, offset), "{shown:?}: {e}");
        assert_eq!(e.path.to_string(), path, "{shown:?}: {e}");
        if let Some(p) = &e.partial {
            p.spans.validate(input.len()).expect("partial spans");
        }
    }
}

#[test]
fn trailing_data_keeps_the_complete_document() {
    let e = fail(b"{\"a\":1}  x");
    assert_eq!((e.kind, e.offset), (ErrorKind::TrailingData, 9));
    assert_eq!(
        e.to_string(),
        "error at byte 9 ($): JSON: the value ends at byte 7 but 1 more byte follows, starting with 'x'"
    );
    let p = e.partial.expect("complete document");
    assert_eq!(p.value, Value::object([("a", Value::Int(1))]));
    p.spans.validate(10).expect("spans");
}

// ---------------------------------------------------------------------------------------------
// Notes
// ---------------------------------------------------------------------------------------------

#[test]
fn notes_for_everything_json_cannot_say() {
    let v = Value::Map(vec![
        (Value::text("bytes"), Value::Bytes(vec![1, 2, 3])),
        (Value::text("big"), Value::Int(u64::MAX.into())),
        (Value::text("nan"), Value::f64(f64::NAN)),
        (Value::Int(7), Value::text("seven")),
        (
            Value::text("tag"),
            Value::Tag(1, Box::new(Value::Int(1_700_000_000))),
        ),
        (Value::text("ext"), Value::Ext(5, vec![0xde, 0xad])),
        (
            Value::text("ts"),
            Value::Timestamp(Timestamp {
                seconds: 1_700_000_000,
                nanos: 250_000_000,
            }),
        ),
        (Value::text("big"), Value::Int(2)),
        (Value::text("f32"), Value::Float(Float::f32(0.1))),
        (Value::text("undef"), Value::Undefined),
    ]);
    let out = json::encode(&v, &compact()).expect("encodable");
    assert_eq!(
        String::from_utf8(out.bytes.clone()).expect("UTF-8"),
        concat!(
            r#"{"bytes":"AQID","big":18446744073709551615,"nan":null,"7":"seven","#,
            r#""tag":1700000000,"ext":"3q0=","ts":"2023-11-14T22:13:20.250Z","big":2,"#,
            r#""f32":0.10000000149011612,"undef":null}"#
        )
    );
    out.spans.validate(out.bytes.len()).expect("spans");
    let got: Vec<(NoteKind, String, usize, &str)> = out
        .notes
        .iter()
        .map(|n| (n.kind, n.path.to_string(), n.count, n.message.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (NoteKind::DuplicateKey, "$".into(), 1, "key \"big\" appears more than once in this map; most readers keep only one of the entries"),
            (NoteKind::BytesAsBase64, "$.bytes".into(), 1, "byte string of 3 bytes written as base64 text"),
            (NoteKind::IntegerPrecision, "$.big".into(), 1, "integer 18446744073709551615 is beyond ±2^53; JavaScript readers will round it"),
            (NoteKind::NonFinite, "$.nan".into(), 1, "NaN written as null; JSON has no NaN or Infinity"),
            (NoteKind::NonTextKey, "${7}".into(), 1, "int map key 7 written as the string \"7\""),
            (NoteKind::TagDropped, "$.tag".into(), 1, "CBOR tag 1 (epoch time) dropped; the number is written as is"),
            (NoteKind::ExtDropped, "$.ext".into(), 1, "MessagePack ext type 5 dropped; its 2 data bytes are written as base64 text"),
            (NoteKind::TimestampAsText, "$.ts".into(), 1, "timestamp 2023-11-14T22:13:20.250Z written as RFC 3339 text"),
            (NoteKind::FloatWidth, "$.f32".into(), 1, "float32 0.1 written as a JSON number; readers will see float64"),
            (NoteKind::SimpleAsNull, "$.undef".into(), 1, "CBOR undefined written as null"),
        ]
    );
    // The encoded tree keeps the source's paths; the kinds are what the JSON text holds.
    let nodes: Vec<_> = out.spans.nodes().collect();
    assert_eq!(
        out.spans.path(wirelens::model::NodeId(4)).to_string(),
        "${7}"
    );
    assert_eq!(nodes[1].kind, Kind::Text);
    assert_eq!(nodes[3].kind, Kind::Null);
}

#[test]
fn repeated_notes_are_grouped_by_pattern() {
    let rec = |i: u8| Value::object([("blob", Value::Bytes(vec![i])), ("n", Value::Int(i.into()))]);
    let v = Value::object([("data", Value::Array((0..3).map(rec).collect()))]);
    let out = json::encode(&v, &compact()).expect("encodable");
    assert_eq!(out.notes.len(), 1);
    let n = &out.notes[0];
    assert_eq!(
        (n.kind, n.path.to_string(), n.count),
        (NoteKind::BytesAsBase64, "$.data[0].blob".into(), 3)
    );
}

#[test]
fn non_text_keys_become_strings() {
    let v = Value::Map(vec![
        (Value::Bool(true), Value::Int(1)),
        (Value::Null, Value::Int(2)),
        (Value::f64(1.5), Value::Int(3)),
        (Value::Decimal("1e400".into()), Value::Int(4)),
        (Value::Bytes(vec![0xff]), Value::Int(5)),
        (
            Value::Array(vec![Value::Int(1), Value::text("x")]),
            Value::Int(6),
        ),
        (Value::Int(-(1i128 << 64)), Value::Int(7)),
    ]);
    let out = json::encode(&v, &compact()).expect("encodable");
    assert_eq!(
        String::from_utf8(out.bytes.clone()).expect("UTF-8"),
        r#"{"true":1,"null":2,"1.5":3,"1e400":4,"/w==":5,"[1,\"x\"]":6,"-18446744073709551616":7}"#
    );
    let non_text = out
        .notes
        .iter()
        .filter(|n| n.kind == NoteKind::NonTextKey)
        .count();
    assert_eq!(non_text, 7);
    out.spans.validate(out.bytes.len()).expect("spans");
}

#[test]
fn canonical_order_is_utf16_and_stable() {
    let v = Value::Map(vec![
        (Value::text("b"), Value::Int(1)),
        (Value::text("\u{1F600}"), Value::Int(2)),
        (Value::text("\u{FF61}"), Value::Int(3)),
        (Value::text("a"), Value::Int(4)),
        (Value::text("b"), Value::Int(5)),
        (Value::text(""), Value::Int(6)),
        (Value::Int(10), Value::Int(7)),
        (Value::Int(9), Value::Int(8)),
    ]);
    let options = EncodeOptions {
        canonical: true,
        ..EncodeOptions::default()
    };
    let out = json::encode(&v, &options).expect("encodable");
    assert_eq!(
        String::from_utf8(out.bytes.clone()).expect("UTF-8"),
        "{\"\":6,\"10\":7,\"9\":8,\"a\":4,\"b\":1,\"b\":5,\"😀\":2,\"｡\":3}"
    );
    out.spans.validate(out.bytes.len()).expect("spans");
    // The node for each entry keeps its source path.
    let found = out.spans.find(&Path::parse("$.a").expect("path"));
    assert_eq!(found.len(), 1);
    let a = out.spans.node(found[0]);
    assert_eq!(&out.bytes[a.span.range()], b"4");
}

#[test]
fn pretty_layout_is_serde_json_s() {
    let v = Value::object([
        (
            "a",
            Value::Array(vec![
                Value::Int(1),
                Value::Array(vec![]),
                Value::Map(vec![]),
            ]),
        ),
        ("b", Value::object([("c", Value::Null)])),
    ]);
    let out = json::encode(&v, &pretty()).expect("encodable");
    let theirs = serde_json::json!({"a": [1, [], {}], "b": {"c": null}});
    assert_eq!(
        String::from_utf8(out.bytes.clone()).expect("UTF-8"),
        serde_json::to_string_pretty(&theirs).expect("serde_json")
    );
    let back = decode(&out.bytes).expect("decodes");
    assert_eq!(back.value, v);
    assert_eq!(back.spans, out.spans);
}

// ---------------------------------------------------------------------------------------------
// Property tests
// ---------------------------------------------------------------------------------------------

fn json_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{0,8}",
        "\\PC{0,12}",
        proptest::collection::vec(any::<char>(), 0..12).prop_map(|c| c.into_iter().collect()),
        proptest::collection::vec(0u8..0x21, 0..6)
            .prop_map(|b| b.into_iter().map(char::from).collect()),
        Just("\"\\/\u{7f}\u{2028}😀".to_string()),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| Value::Int(n.into())),
        any::<u64>().prop_map(|n| Value::Int(n.into())),
        (0u64..=u64::MAX).prop_map(|n| Value::Int(-i128::from(n) - 1)),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(Value::f64),
        prop_oneof![
            Just(0.0),
            Just(-0.0),
            Just(1e20),
            Just(1e-7),
            Just(5e-324),
            Just(f64::MAX)
        ]
        .prop_map(Value::f64),
        json_text().prop_map(Value::text),
    ];
    leaf.prop_recursive(5, 64, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            proptest::collection::vec((json_text(), inner), 0..8).prop_map(|entries| {
                Value::Map(
                    entries
                        .into_iter()
                        .map(|(k, v)| (Value::text(k), v))
                        .collect(),
                )
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn sayable_values_round_trip(v in json_value(), use_pretty in any::<bool>()) {
        let options = if use_pretty { pretty() } else { compact() };
        let out = json::encode(&v, &options).expect("encodable");
        prop_assert!(out.notes.iter().all(|n| matches!(n.kind, NoteKind::IntegerPrecision | NoteKind::DuplicateKey)));
        prop_assert_eq!(out.spans.validate(out.bytes.len()), Ok(()));
        let back = decode(&out.bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(back.spans.validate(out.bytes.len()), Ok(()));
        prop_assert_eq!(&back.value, &v);
        prop_assert_eq!(&back.spans, &out.spans);
        // serde_json reads the same value (up to its collapsing of repeated keys).
        let theirs: serde_json::Value = serde_json::from_slice(&out.bytes).expect("serde_json reads it");
        prop_assert_eq!(from_serde(&theirs), collapse_duplicates(&v));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        if let Err(e) = decode(&bytes) {
            prop_assert!(e.offset <= bytes.len());
            if let Some(p) = &e.partial {
                prop_assert_eq!(p.spans.validate(bytes.len()), Ok(()));
            }
        }
    }

    #[test]
    fn json_like_bytes_never_panic(parts in proptest::collection::vec(
        prop_oneof![
            Just("["), Just("]"), Just("{"), Just("}"), Just(","), Just(":"), Just("\""),
            Just("\\u"), Just("\\"), Just("d83d"), Just("-"), Just("0"), Just("1e"), Just("."),
            Just("true"), Just("nul"), Just(" "), Just("\u{e9}"), Just("\u{0}"),
        ],
        0..40,
    )) {
        let text: String = parts.concat();
        match decode(text.as_bytes()) {
            Ok(doc) => prop_assert_eq!(doc.spans.validate(text.len()), Ok(())),
            Err(e) => {
                prop_assert!(e.offset <= text.len());
                if let Some(p) = &e.partial {
                    prop_assert_eq!(p.spans.validate(text.len()), Ok(()));
                }
            }
        }
    }
}
