//! Crafted hostile inputs for every decoder: truncations at every byte of the samples, length
//! headers that lie, invalid UTF-8 in keys, overlong varints, duplicate keys, CBOR indefinite
//! strings with chunks of the wrong type. Each must give an error naming the offset, keeping the
//! partial result, without allocating what a header claims (the memory bound itself is checked
//! under an rlimit by `scripts/hostile-limits.sh`, not here).

use wirelens::codec::{
    decode, encode, DecodeError, DecodeOptions, EncodeOptions, ErrorKind, Format, LimitName,
};
use wirelens::limits::Limits;
use wirelens::model::Value;

fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(u8::is_ascii_hexdigit).collect();
    digits
        .chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).expect("ascii"), 16).expect("hex"))
        .collect()
}

fn sample(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn fails(bytes: &[u8], format: Format) -> DecodeError {
    match decode(bytes, format, &DecodeOptions::default()) {
        Ok(doc) => panic!("{format} decoded {bytes:02x?} as {:?}", doc.value),
        Err(e) => e,
    }
}

/// Every strict prefix of a sample fails with an error at or before the cut, whose partial
/// document (when there is one) has spans inside the prefix.
#[test]
fn truncation_at_every_byte_of_the_samples() {
    let cases = [
        ("user-profile.json", Format::Json),
        ("iot-metrics.json", Format::Json),
        ("user-profile.msgpack", Format::MessagePack),
        ("edge-cases.msgpack", Format::MessagePack),
        ("user-profile.cbor", Format::Cbor),
        ("edge-cases.cbor", Format::Cbor),
        ("iot-metrics.cbor", Format::Cbor),
    ];
    for (name, format) in cases {
        let whole = sample(name);
        decode(&whole, format, &DecodeOptions::default()).expect("the whole sample decodes");
        let mut with_partial = 0;
        for cut in 0..whole.len() {
            let prefix = &whole[..cut];
            let e = fails(prefix, format);
            assert!(
                e.offset <= cut,
                "{name}[..{cut}]: offset {} past the cut",
                e.offset
            );
            assert!(
                matches!(e.kind, ErrorKind::Eof | ErrorKind::Syntax),
                "{name}[..{cut}]: {e}"
            );
            assert!(e.to_string().contains(&format!("byte {}", e.offset)), "{e}");
            if let Some(p) = &e.partial {
                p.spans
                    .validate(cut)
                    .expect("partial spans inside the prefix");
                with_partial += 1;
            }
        }
        // Once the root container has started, what was read is kept.
        assert!(
            with_partial + 2 >= whole.len(),
            "{name}: {with_partial} partials"
        );
    }
}

/// Protobuf has no end marker: a prefix cut between fields is a valid message. Every other cut
/// fails at or before the cut, with what was read before it.
#[test]
fn protobuf_truncation_at_every_byte() {
    for name in ["user-profile.pb"] {
        let whole = sample(name);
        let full = decode(&whole, Format::Protobuf, &DecodeOptions::default()).expect("decodes");
        let top_level_ends: Vec<usize> = full
            .spans
            .children(wirelens::model::NodeId(0))
            .map(|c| full.spans.node(c).span.end)
            .collect();
        for cut in 1..whole.len() {
            match decode(&whole[..cut], Format::Protobuf, &DecodeOptions::default()) {
                Ok(doc) => assert!(
                    top_level_ends.contains(&cut)
                        || doc.spans.len() > 1 && doc.spans.validate(cut).is_ok(),
                    "{name}[..{cut}] decoded but the cut is inside a field"
                ),
                Err(e) => {
                    assert!(e.offset <= cut, "{name}[..{cut}]: offset {}", e.offset);
                    let p = e
                        .partial
                        .as_ref()
                        .expect("protobuf keeps the fields before");
                    p.spans
                        .validate(cut)
                        .expect("partial spans inside the prefix");
                }
            }
        }
    }
}

/// Length headers claiming far more than is there: an error at the header (or where the bytes
/// run out), never an allocation of the claimed size.
#[test]
fn length_headers_that_lie() {
    let cases: &[(Format, &str, usize)] = &[
        // MessagePack array32 / map32 claiming 2^32 − 1 elements, in 5 bytes.
        (Format::MessagePack, "dd ffffffff", 5),
        (Format::MessagePack, "df ffffffff", 5),
        (Format::MessagePack, "db ffffffff 61", 0),
        (Format::MessagePack, "c6 ffffffff 00", 0),
        (Format::MessagePack, "c9 ffffffff 01 00", 0),
        // CBOR strings, arrays and maps claiming 2^63 bytes or items.
        (Format::Cbor, "5b 8000000000000000 00", 0),
        (Format::Cbor, "7b 8000000000000000 61", 0),
        (Format::Cbor, "9b 8000000000000000", 9),
        (Format::Cbor, "bb 8000000000000000", 9),
        (Format::Cbor, "9b ffffffffffffffff 00", 10),
        // Protobuf: field 1, LEN of 2 GiB with three bytes behind it.
        (Format::Protobuf, "0a 8080808008 010203", 0),
        (Format::Protobuf, "0a ffffffffffffffffff01", 0),
    ];
    for (format, input, at_most) in cases {
        let bytes = hex(input);
        let e = fails(&bytes, *format);
        assert!(
            e.offset <= bytes.len(),
            "{format} {input}: offset {} past the end",
            e.offset
        );
        if *at_most > 0 {
            assert!(
                e.offset <= *at_most,
                "{format} {input}: offset {}",
                e.offset
            );
        }
        assert!(
            matches!(
                e.kind,
                ErrorKind::Eof | ErrorKind::Syntax | ErrorKind::Limit(_)
            ),
            "{format} {input}: {e}"
        );
    }
}

/// Invalid UTF-8 inside a map key: an `Invalid` error at the key's bytes, with the path.
#[test]
fn invalid_utf8_in_keys() {
    let cases: &[(Format, Vec<u8>, usize)] = &[
        (Format::Json, b"{\"ok\":1,\"\xff\":2}".to_vec(), 9),
        (Format::MessagePack, hex("82 a2 6f6b 01 a1 ff 02"), 6),
        (Format::Cbor, hex("a2 62 6f6b 01 61 ff 02"), 6),
    ];
    for (format, bytes, at) in cases {
        let e = fails(bytes, *format);
        assert_eq!(e.kind, ErrorKind::Invalid, "{format}: {e}");
        assert!(
            e.offset.abs_diff(*at) <= 1,
            "{format}: offset {} (the bad byte is at {at})",
            e.offset
        );
        let partial = e.partial.as_ref().expect("the entry before is kept");
        assert_eq!(partial.value.get("ok"), Some(&Value::Int(1)), "{format}");
    }
}

/// Varints longer than 10 bytes (protobuf) and MessagePack/CBOR integers are the only places a
/// number's length is open-ended; an overlong one is an error at its first byte.
#[test]
fn overlong_varints() {
    for input in [
        "08 ffffffffffffffffffff01",  // 11-byte value
        "88808080808080808080 01 00", // 11-byte tag
        "08 ffffffffffffffffff7f",    // 10 bytes, beyond 64 bits
    ] {
        let bytes = hex(input);
        let e = fails(&bytes, Format::Protobuf);
        assert!(e.offset <= 1, "{input}: offset {}", e.offset);
        assert!(e.message.contains("longer than 10 bytes"), "{input}: {e}");
    }
}

/// Duplicate keys are data, not errors: every format keeps both entries in order (the lossless
/// model), and the spans say where each is.
#[test]
fn duplicate_keys_are_kept() {
    let cases: &[(Format, Vec<u8>)] = &[
        (Format::Json, br#"{"a":1,"a":2}"#.to_vec()),
        (Format::MessagePack, hex("82 a161 01 a161 02")),
        (Format::Cbor, hex("a2 6161 01 6161 02")),
    ];
    for (format, bytes) in cases {
        let doc = decode(bytes, *format, &DecodeOptions::default()).expect("decodes");
        let entries = doc.value.as_map().expect("a map");
        assert_eq!(entries.len(), 2, "{format}");
        assert_eq!(entries[0], (Value::text("a"), Value::Int(1)));
        assert_eq!(entries[1], (Value::text("a"), Value::Int(2)));
        assert_eq!(doc.spans.len(), 3, "{format}: a node per entry");
    }
}

/// Indefinite-length CBOR strings whose chunks are of the other type, indefinite, or not
/// strings: an error at the bad chunk.
#[test]
fn cbor_indefinite_strings_with_wrong_chunks() {
    for (input, at) in [
        ("5f 6161 ff", 1),       // byte string with a text chunk
        ("7f 4161 ff", 1),       // text string with a byte chunk
        ("5f 5f ff ff", 1),      // nested indefinite chunk
        ("7f 01 ff", 1),         // an integer chunk
        ("7f 6161 7f ff ff", 3), // nested indefinite text
        ("7f 62 c328 ff", 1),    // a chunk of invalid UTF-8
        ("5f 41", 2),            // chunk cut short
        ("5f 4161", 3),          // no break
    ] {
        let bytes = hex(input);
        let e = fails(&bytes, Format::Cbor);
        assert!(
            e.offset.abs_diff(at) <= 1,
            "{input}: offset {} (expected about {at}): {e}",
            e.offset
        );
    }
}

/// Deep nesting stops at the depth limit with a `Limit` error at the first byte too deep, and
/// the partial document holds exactly the limit's depth.
#[test]
fn depth_limit_is_exact_in_every_format() {
    let depth = 40;
    let options = DecodeOptions {
        limits: Limits {
            max_depth: depth,
            ..Limits::default()
        },
        ..DecodeOptions::default()
    };
    let n = depth + 5;
    let pb = vec![0x0b; n]; // field 1, start group, n times
    let cases = [
        (Format::Json, b"[".repeat(n)),
        (Format::MessagePack, vec![0x91; n]),
        (Format::Cbor, vec![0x81; n]),
        (Format::Protobuf, pb),
    ];
    for (format, bytes) in cases {
        let e = decode(&bytes, format, &options).expect_err("too deep");
        assert_eq!(e.kind, ErrorKind::Limit(LimitName::Depth), "{format}: {e}");
        assert!(
            e.offset == depth || e.offset + 1 == depth,
            "{format}: offset {}",
            e.offset
        );
        let partial = e.partial.as_ref().expect("partial kept");
        assert!(
            partial.value.depth().abs_diff(depth) <= 1,
            "{format}: partial depth {}",
            partial.value.depth()
        );
    }
}

/// Schema-less protobuf: the scan budget caps the work spent trying LEN payloads as messages;
/// past it, payloads read as bytes/text and decoding still succeeds.
#[test]
fn protobuf_scan_budget_degrades_to_bytes() {
    // field 1 = { field 2 = { field 3 = fixed32 0xffffffff } }: neither text nor packed varints.
    let bytes = hex("0a 07 12 05 1d ffffffff");
    let full = decode(&bytes, Format::Protobuf, &DecodeOptions::default()).expect("decodes");
    assert_eq!(full.value.depth(), 3);
    let mut options = DecodeOptions::default();
    options.limits.max_protobuf_scan = 0;
    let capped = decode(&bytes, Format::Protobuf, &options).expect("still decodes");
    assert_eq!(capped.value.depth(), 1, "{:?}", capped.value);
    options.limits.max_protobuf_scan = 1;
    let half = decode(&bytes, Format::Protobuf, &options).expect("still decodes");
    assert_eq!(half.value.depth(), 2, "{:?}", half.value);
}

/// `levels` maps, each the first key of the next: `{{{0: 0, "x": null}: 1, "x": null}: 2, …}`.
fn keys_of_keys(levels: usize) -> Value {
    let mut v = Value::Int(0);
    for d in 0..levels {
        v = Value::Map(vec![
            (v, Value::Int(d as i128)),
            (Value::text("x"), Value::Null),
        ]);
    }
    v
}

/// Map keys that are maps, nested as keys (found by the `encode_all` fuzz target: a 421-byte
/// CBOR input took longer than 20 s). JSON writes such a key as its JSON text, escaped, which
/// doubles every `"` and `\` per level: 36 levels were 2^36 bytes. Past three levels it is now an
/// error naming the map; up to three the text is as escaping gives it.
#[test]
fn json_map_keys_nested_in_map_keys_are_bounded() {
    let e = encode(&keys_of_keys(40), Format::Json, &EncodeOptions::default())
        .expect_err("40 levels of container keys");
    assert!(e.message.contains("at most 3 levels"), "{e}");
    let two = encode(&keys_of_keys(2), Format::Json, &EncodeOptions::default()).expect("2 levels");
    assert_eq!(
        String::from_utf8(two.bytes).expect("UTF-8"),
        r#"{"{\"0\":0,\"x\":null}":1,"x":null}"#
    );
    // Four maps hold three levels of map keys (the innermost key is an integer).
    let three = encode(&keys_of_keys(4), Format::Json, &EncodeOptions::default());
    assert!(
        three.is_ok(),
        "3 levels of container keys are written: {three:?}"
    );
    let four = encode(&keys_of_keys(5), Format::Json, &EncodeOptions::default());
    assert!(four.is_err(), "4 levels are not");
}

/// The same shape in canonical MessagePack (found by the `roundtrip` fuzz target: a slow unit):
/// each map encoded its keys once to sort them and again to write them, twice per level. Now
/// 40 levels encode, and decode back to the same value.
#[test]
fn canonical_msgpack_keys_of_keys_encode_once_per_level() {
    let value = keys_of_keys(40);
    let options = EncodeOptions {
        canonical: true,
        ..EncodeOptions::default()
    };
    let out = encode(&value, Format::MessagePack, &options).expect("canonical");
    let back = decode(&out.bytes, Format::MessagePack, &DecodeOptions::default()).expect("decodes");
    assert_eq!(back.value, value);
}
