//! 1,000,000 levels of nesting in every format, handled on a thread with a 256 KiB stack, so
//! any recursion over input nesting (in a decoder, `detect`, the encoders, the report printers,
//! or `Value`'s `Clone`, `PartialEq` and `Drop`) overflows and fails the test. `Value`'s `Debug`
//! prints [`DEBUG_DEPTH`] levels and `…` below, so it fits any depth.
//!
//! The decoders stop at the depth limit (512 by default) with the partial document; everything
//! after that works on a value at most that deep.

use crate::common::run_wirelens;
use wirelens::capture::{peel, PeelOptions};
use wirelens::codec::detect::detect;
use wirelens::codec::{decode, encode, DecodeOptions, EncodeOptions, ErrorKind, Format, LimitName};
use wirelens::model::{Value, DEBUG_DEPTH};
use wirelens::report::inspect;

const LEVELS: usize = 1_000_000;

/// Runs `f` on a thread with a 256 KiB stack (rayon's workers and the GUI thread have more).
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .expect("thread spawns")
        .join()
        .expect("no panic or overflow on a 256 KiB stack");
}

/// Protobuf: field 1 of each message is the next message, `levels` deep (lengths computed from
/// the inside out, bytes written from the outside in).
fn nested_protobuf(levels: usize) -> Vec<u8> {
    fn varint(mut n: usize, out: &mut Vec<u8>) {
        while n >= 0x80 {
            out.push((n as u8 & 0x7f) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
    }
    let innermost = [0x08u8, 0x01];
    let mut lengths = vec![innermost.len()];
    for _ in 0..levels {
        let inner = *lengths.last().expect("one");
        let mut len = Vec::new();
        varint(inner, &mut len);
        lengths.push(1 + len.len() + inner);
    }
    let mut out = Vec::with_capacity(*lengths.last().expect("one"));
    for inner in lengths[..levels].iter().rev() {
        out.push(0x0a);
        varint(*inner, &mut out);
    }
    out.extend_from_slice(&innermost);
    out
}

fn deep_inputs() -> Vec<(&'static str, Format, Vec<u8>)> {
    let mut json_maps = br#"{"a":"#.repeat(LEVELS);
    json_maps.extend_from_slice(b"1");
    let mut msgpack_maps = Vec::with_capacity(3 * LEVELS);
    for _ in 0..LEVELS {
        msgpack_maps.extend_from_slice(&[0x81, 0xa1, b'a']);
    }
    let mut cbor_tags = vec![0xc6; LEVELS];
    cbor_tags.push(0x01);
    vec![
        ("json arrays", Format::Json, b"[".repeat(LEVELS)),
        ("json objects", Format::Json, json_maps),
        ("msgpack arrays", Format::MessagePack, vec![0x91; LEVELS]),
        ("msgpack maps", Format::MessagePack, msgpack_maps),
        ("msgpack map keys", Format::MessagePack, vec![0x81; LEVELS]),
        ("cbor arrays", Format::Cbor, vec![0x81; LEVELS]),
        ("cbor indefinite map keys", Format::Cbor, vec![0xbf; LEVELS]),
        ("cbor tags", Format::Cbor, cbor_tags),
        // Groups: field 1 start-group tags, a million of them.
        ("protobuf groups", Format::Protobuf, vec![0x0b; LEVELS]),
        // A 100,000-deep message chain (each level costs 1 + up to 4 length bytes).
        (
            "protobuf messages",
            Format::Protobuf,
            nested_protobuf(100_000),
        ),
    ]
}

/// Whether `text` names a path of `depth` segments: whole when short, else with the number
/// left out.
fn names_a_path_of(text: &str, depth: usize) -> bool {
    depth < 14 || text.contains(&format!("…{} more…", depth - 12))
}

#[test]
fn a_million_levels_on_a_small_stack() {
    for (name, format, bytes) in deep_inputs() {
        eprintln!("{name}");
        on_small_stack(move || {
            let e = decode(&bytes, format, &DecodeOptions::default()).expect_err(name);
            let depth_limit = DecodeOptions::DEFAULT_MAX_DEPTH;
            assert!(
                e.kind == ErrorKind::Limit(LimitName::Depth) || format == Format::Protobuf,
                "{name}: {e}"
            );
            assert!(e.offset < bytes.len(), "{name}: offset");
            // The message names the path 512 levels down in one short line, its ends kept.
            let text = e.to_string();
            assert!(text.len() < 300 && !text.contains('\n'), "{name}: {text}");
            assert!(
                names_a_path_of(&text, e.path.segments().len()),
                "{name}: {text}"
            );
            // Nesting inside a map key, or under tags, that never completed leaves no entry to
            // keep; everywhere else the open containers are closed and kept.
            let in_keys = name.ends_with("keys") || name.ends_with("tags");
            let Some(partial) = e.partial else {
                assert!(in_keys, "{name}: no partial document");
                return;
            };
            let depth = partial.value.depth();
            assert!(
                in_keys || depth <= 2 * depth_limit && depth + 2 >= depth_limit.min(LEVELS),
                "{name}: partial depth {depth}"
            );
            // Everything the app does with a document, on that document.
            let copy = partial.clone();
            assert_eq!(copy, partial, "{name}");
            let mut report = Vec::new();
            inspect::write_tree(&mut report, &partial).expect("tree");
            for target in Format::ALL {
                if let Ok(out) = encode(&partial.value, target, &EncodeOptions::default()) {
                    out.spans
                        .validate(out.bytes.len())
                        .unwrap_or_else(|v| panic!("{name} → {target}: {v}"));
                }
            }
            drop(copy);
            drop(partial);
        });
    }
}

#[test]
fn detection_and_peeling_of_deep_input_on_a_small_stack() {
    for (name, _, bytes) in deep_inputs() {
        eprintln!("{name}");
        on_small_stack(move || {
            let readings = detect(&bytes, None, &DecodeOptions::default());
            assert!(!readings.is_empty(), "{name}");
            let peeled = peel(&bytes, &PeelOptions::default());
            assert!(!peeled.payloads.is_empty(), "{name}");
        });
    }
}

/// At the ceiling a user may raise the depth limit to, with CBOR tags doubling the nesting, the
/// whole pipeline fits a 2 MiB stack (a rayon worker's, Rust's default for spawned threads).
#[test]
fn the_depth_ceiling_fits_a_two_mebibyte_stack() {
    let mut limits = wirelens::limits::Limits::default();
    let err = limits
        .set("depth", "1000000")
        .expect_err("above the ceiling");
    assert!(err.to_string().contains("ceiling"), "{err}");
    assert_eq!(limits.max_depth, wirelens::limits::Limits::DEPTH_CEILING);
    let options = DecodeOptions {
        limits,
        ..DecodeOptions::default()
    };
    let bytes = [0xc6u8, 0x81].repeat(LEVELS / 2);
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let e = decode(&bytes, Format::Cbor, &options).expect_err("too deep");
            assert_eq!(e.kind, ErrorKind::Limit(LimitName::Depth), "{e}");
            let partial = e.partial.expect("kept");
            let depth = partial.value.depth();
            assert!(
                depth.abs_diff(wirelens::limits::Limits::DEPTH_CEILING) <= 1,
                "{depth}"
            );
            let copy = partial.clone();
            assert_eq!(copy, partial);
            let shown = format!("{:#?}", partial.value);
            assert!(shown.contains('…'), "cut below {DEBUG_DEPTH} levels");
            let mut report = Vec::new();
            inspect::write_tree(&mut report, &partial).expect("tree");
            for target in Format::ALL {
                let _ = encode(&partial.value, target, &EncodeOptions::default());
            }
        })
        .expect("spawns")
        .join()
        .expect("no overflow on a 2 MiB stack");
}

/// `Debug` of a value a million levels deep (arrays, maps and tags in turn, built in a loop)
/// prints the top [`DEBUG_DEPTH`] levels exactly as a derived `Debug` would and `…` below, on a
/// 2 MiB stack. Dropping, cloning and comparing such a value recurse (the decoders never build
/// one: they stop at the depth ceiling, tested above), so it is taken apart in a loop.
#[test]
fn debug_of_a_million_levels() {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let mut v = Value::Int(1);
            for i in 0..LEVELS {
                v = match i % 3 {
                    0 => Value::Array(vec![v]),
                    1 => Value::Map(vec![(Value::text("k"), v)]),
                    _ => Value::Tag(6, Box::new(v)),
                };
            }
            let (shown, pretty) = (format!("{v:?}"), format!("{v:#?}"));
            // Taken apart before any assertion, so a failing one reports instead of overflowing
            // while the value is dropped.
            take_apart(v);
            for text in [&shown, &pretty] {
                assert!(text.contains('…'));
                assert!(!text.contains("Int(1)"));
            }
            assert!(shown.len() < 100 * DEBUG_DEPTH, "{} bytes", shown.len());
            // The top levels, as derived: LEVELS - 1 is 0 mod 3, so the outermost is an array.
            assert!(
                shown.starts_with("Array([Tag(6, Map([(Text(\"k\"), Array([Tag(6, "),
                "{}",
                shown.chars().take(80).collect::<String>()
            );
            assert!(pretty.starts_with("Array(\n    [\n        Tag(\n            6,\n"));
        })
        .expect("spawns")
        .join()
        .expect("no overflow on a 2 MiB stack");
}

/// Drops a deep single-child chain one level at a time.
fn take_apart(mut v: Value) {
    loop {
        let next = match &mut v {
            Value::Array(items) => items.pop(),
            Value::Map(entries) => entries.pop().map(|(_, v)| v),
            Value::Tag(_, inner) => Some(std::mem::take(&mut **inner)),
            _ => None,
        };
        match next {
            Some(n) => v = n,
            None => break,
        }
    }
}

/// The CLI's error for nesting past the limit, and its tree lines for keys of 100,000
/// characters, name the path in one short line.
#[test]
fn the_cli_writes_deep_paths_and_long_keys_briefly() {
    let dir = tempfile::tempdir().expect("temp dir");
    let deep = dir.path().join("deep.json");
    std::fs::write(&deep, format!("{}{}", "[".repeat(1000), "]".repeat(1000))).expect("write");
    let run = run_wirelens(&["inspect", "--no-hex"], &deep);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let error = run
        .stderr
        .lines()
        .find(|l| l.contains("error at byte 512"))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert!(error.len() < 200 && names_a_path_of(error, 512), "{error}");

    let wide = dir.path().join("wide.json");
    let key = "k".repeat(100_000);
    std::fs::write(&wide, format!(r#"{{"{key}": {{"{key}x": 1}}}}"#)).expect("write");
    let run = run_wirelens(&["inspect", "--no-hex"], &wide);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let cut = format!(".{}…", &key[..40]);
    assert_eq!(run.stdout.matches(&cut).count(), 2, "{}", run.stdout);
    assert!(run.stdout.lines().all(|l| l.len() < 200));
}
