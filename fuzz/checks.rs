//! The body of every fuzz target, in one place: the cargo-fuzz targets under `fuzz_targets/` call
//! these, and `tests/hostile_fuzz_replay.rs` runs the committed corpus and every crash file
//! through the same checks in a normal `cargo test` (no nightly toolchain needed).
//!
//! Each check feeds arbitrary bytes to one decoder or capture layer and panics when an invariant
//! breaks: a panic inside wirelens, spans outside the input, an error offset past the end, a
//! partial document whose spans do not fit, or a decode → encode → decode round trip that changes
//! the value.

#![allow(dead_code)]

use std::sync::OnceLock;

use wirelens::capture::pcap::{self, PcapLimits};
use wirelens::capture::{self, decode_text, peel, unwrap, PeelOptions, UnwrapOptions};
use wirelens::codec::detect::detect;
use wirelens::codec::protobuf::framing::split_grpc;
use wirelens::codec::protobuf::schema::Schema;
use wirelens::codec::protobuf::MessageDescriptor;
use wirelens::codec::{
    decode, encode, DecodeError, DecodeOptions, Document, EncodeOptions, FloatPolicy, Format,
};
use wirelens::report::inspect;

/// A target's name and its check.
pub type Target = (&'static str, fn(&[u8]));

/// Every check, by target name (the names of `fuzz_targets/*.rs` and `corpus/*/`).
pub const TARGETS: [Target; 16] = [
    ("json", json),
    ("msgpack", msgpack),
    ("cbor", cbor),
    ("protobuf_raw", protobuf_raw),
    ("protobuf_schema", protobuf_schema),
    ("text", text),
    ("http", http),
    ("grpc", grpc),
    ("pcap", pcap_file),
    ("peel", peel_all),
    ("detect", detect_all),
    ("roundtrip", roundtrip),
    ("encode_all", encode_all),
    ("http2", http2),
    ("websocket", websocket),
    ("tls", tls),
];

/// Small limits, so the fuzzer spends its time on structure rather than on huge outputs.
fn options() -> DecodeOptions {
    DecodeOptions::with_max_depth(64)
}

/// A decoded document's spans fit the input; a failure's offset and partial document do too.
fn check_outcome(bytes: &[u8], outcome: &Result<Document, DecodeError>) {
    match outcome {
        Ok(doc) => {
            if let Err(e) = doc.spans.validate(bytes.len()) {
                panic!("{} spans invalid: {e}", doc.format);
            }
            assert_eq!(
                doc.spans.len(),
                doc.value.preorder().len(),
                "one span node per value node"
            );
            let mut out = Vec::new();
            inspect::write_tree(&mut out, doc).expect("tree into a Vec");
            inspect::write_annotated_hex(&mut out, bytes, doc).expect("hex into a Vec");
        }
        Err(e) => {
            assert!(
                e.offset <= bytes.len(),
                "error offset {} past the end {}",
                e.offset,
                bytes.len()
            );
            let _ = e.to_string();
            if let Some(partial) = &e.partial {
                if let Err(v) = partial.spans.validate(bytes.len()) {
                    panic!("partial {} spans invalid: {v}", partial.format);
                }
                let mut out = Vec::new();
                inspect::write_tree(&mut out, partial).expect("tree into a Vec");
            }
        }
    }
}

fn decode_one(bytes: &[u8], format: Format) {
    check_outcome(bytes, &decode(bytes, format, &options()));
}

/// JSON decoding.
pub fn json(bytes: &[u8]) {
    decode_one(bytes, Format::Json);
}

/// MessagePack decoding.
pub fn msgpack(bytes: &[u8]) {
    decode_one(bytes, Format::MessagePack);
}

/// CBOR decoding.
pub fn cbor(bytes: &[u8]) {
    decode_one(bytes, Format::Cbor);
}

/// Schema-less protobuf decoding, with every reading of every field.
pub fn protobuf_raw(bytes: &[u8]) {
    let outcome = wirelens::codec::protobuf::wire::decode_raw(bytes, &options());
    match outcome {
        Ok(raw) => {
            let count = raw.document.spans.len();
            for r in &raw.readings {
                assert!(
                    (r.node.0 as usize) < count,
                    "reading of a node that is not there"
                );
            }
            check_outcome(bytes, &Ok(raw.document));
        }
        Err(e) => check_outcome(bytes, &Err(e)),
    }
}

/// `protobuf_unittest.TestAllTypes`, every field type protobuf has (groups, maps, oneofs, enums).
pub fn test_all_types() -> &'static MessageDescriptor {
    static MESSAGE: OnceLock<MessageDescriptor> = OnceLock::new();
    MESSAGE.get_or_init(|| {
        let set = include_bytes!("../tests/data/protoscope/testdata/unittest.proto.pb");
        let schema = Schema::from_descriptor_set(set).expect("the committed descriptor set loads");
        let name = schema
            .message_names()
            .into_iter()
            .find(|n| n.ends_with(".TestAllTypes"))
            .expect("unittest.proto has TestAllTypes");
        schema.message(&name).expect("named type")
    })
}

/// Schema-guided protobuf decoding (as `TestAllTypes`), then re-encoding with the same schema.
pub fn protobuf_schema(bytes: &[u8]) {
    let mut opts = options();
    opts.message = Some(test_all_types().clone());
    let outcome = decode(bytes, Format::Protobuf, &opts);
    check_outcome(bytes, &outcome);
    if let Ok(doc) = &outcome {
        let enc = EncodeOptions {
            message: Some(test_all_types().clone()),
            ..EncodeOptions::default()
        };
        if let Ok(out) = encode(&doc.value, Format::Protobuf, &enc) {
            if let Err(e) = out.spans.validate(out.bytes.len()) {
                panic!("re-encoded protobuf spans invalid: {e}");
            }
        }
    }
}

/// Hex dumps, base64 and the other text shapes.
pub fn text(bytes: &[u8]) {
    if let Some(d) = decode_text(bytes, 1 << 20) {
        assert!(
            d.bytes.len() <= 1 << 20,
            "text decoded past its output bound"
        );
    }
}

fn small_unwrap() -> UnwrapOptions {
    UnwrapOptions {
        max_decompressed: 4 << 20,
        ..UnwrapOptions::default()
    }
}

fn check_payloads(payloads: &[capture::Payload], limit: usize) {
    for p in payloads {
        assert!(
            p.bytes.len() <= limit.max(1 << 20).saturating_mul(64),
            "payload too large"
        );
        let _ = p.provenance();
    }
}

/// Raw HTTP messages (chunked, compressed, pipelined).
pub fn http(bytes: &[u8]) {
    match capture::http::parse_messages(bytes, &small_unwrap()) {
        Ok(found) => check_payloads(&found, bytes.len()),
        Err(e) => {
            assert!(e.offset <= bytes.len(), "error offset past the end");
            check_payloads(&e.extracted, bytes.len());
        }
    }
}

/// The two directions of one input: the first 4 bytes (big-endian) say how long the client's
/// part is, the server's is the rest.
fn two_directions(bytes: &[u8]) -> (&[u8], &[u8]) {
    let Some((head, rest)) = bytes.split_first_chunk::<4>() else {
        return (bytes, &[]);
    };
    let n = (u32::from_be_bytes(*head) as usize).min(rest.len());
    rest.split_at(n)
}

/// HTTP/2 connections: frames, HPACK, streams (the client's bytes, then the server's; see
/// `two_directions`).
pub fn http2(bytes: &[u8]) {
    let (client, server) = two_directions(bytes);
    let conn = capture::http2::parse_connection(client, 0, server, 0);
    for m in &conn.messages {
        let len = match m.side {
            Some(capture::http2::Side::Server) => server.len(),
            _ => client.len(),
        };
        assert!(m.span.end <= len, "a message span past its direction");
        assert!(m.body.len() <= len, "a body longer than its direction");
        for f in &m.frames {
            assert!(f.span.end <= len, "a frame span past its direction");
        }
    }
    let _ = capture::http2::looks_like_frames(client);
}

/// WebSocket frames of one direction (the first byte's low bit: from the client; the second:
/// permessage-deflate agreed).
pub fn websocket(bytes: &[u8]) {
    let Some((&flags, rest)) = bytes.split_first() else {
        return;
    };
    let deflate = capture::websocket::Deflate::default();
    let parsed = capture::websocket::parse(
        rest,
        flags & 1 != 0,
        (flags & 2 != 0).then_some(&deflate),
        &small_unwrap(),
    );
    for m in &parsed.messages {
        for f in &m.frames {
            assert!(f.end <= rest.len(), "a frame span past the input");
        }
    }
    if let Some((offset, _)) = parsed.error {
        assert!(offset <= rest.len(), "error offset past the end");
    }
}

/// TLS records of a connection (see `two_directions`): the handshake summary, and decryption
/// with the key logs of the recorded captures (so mutated records of those connections reach
/// the key schedule and the AEAD); the input as key log text too.
pub fn tls(bytes: &[u8]) {
    static KEYS: OnceLock<capture::tls::KeyLog> = OnceLock::new();
    let keys = KEYS.get_or_init(|| {
        let mut keys = capture::tls::KeyLog::default();
        for text in [
            include_str!("../tests/fixtures/capture/real/tls13-http1.keylog"),
            include_str!("../tests/fixtures/capture/real/tls12-http1.keylog"),
        ] {
            if let Ok(k) = capture::tls::KeyLog::parse(text) {
                keys.merge(k);
            }
        }
        keys
    });
    let (client, server) = two_directions(bytes);
    let _ = capture::tls::summarize(client, server);
    let _ = capture::tls::looks_like_tls(client);
    if let Ok(d) = capture::tls::decrypt(client, server, keys) {
        for (dir, len) in d.directions.iter().zip([client.len(), server.len()]) {
            assert!(dir.plaintext.len() <= len, "more plaintext than ciphertext");
            for s in &dir.spans {
                assert!(s.record.end <= len, "a record span past its direction");
            }
        }
    }
    let _ = capture::tls::KeyLog::parse(&String::from_utf8_lossy(bytes));
}

/// gRPC and gRPC-Web framing.
pub fn grpc(bytes: &[u8]) {
    match split_grpc(bytes) {
        Ok(frames) => {
            for f in &frames {
                let _ = format!("{f:?}");
            }
        }
        Err(e) => assert!(e.offset <= bytes.len(), "error offset past the end"),
    }
}

/// pcap and pcapng, with TCP reassembly.
pub fn pcap_file(bytes: &[u8]) {
    let limits = PcapLimits {
        max_stream_bytes: 8 << 20,
        max_packets: 100_000,
    };
    match pcap::extract(bytes, &limits) {
        Ok(capture) => {
            let payloads = pcap::payloads(&capture);
            let total: usize = payloads.iter().map(|p| p.bytes.len()).sum();
            assert!(
                total <= bytes.len(),
                "reassembled more bytes than the capture holds"
            );
        }
        Err(e) => assert!(e.offset <= bytes.len(), "error offset past the end"),
    }
}

/// Everything the capture layer does, from one entry point.
pub fn peel_all(bytes: &[u8]) {
    let peeled = peel(bytes, &PeelOptions::default());
    if let Some(e) = &peeled.error {
        let _ = e.to_string();
    }
    check_payloads(&peeled.payloads, bytes.len());
    let _ = unwrap(bytes, &small_unwrap());
}

/// Format detection: every reading's outcome is a checked decode.
pub fn detect_all(bytes: &[u8]) {
    let readings = detect(bytes, None, &options());
    assert!(
        !readings.is_empty(),
        "detection always lists the readings it tried"
    );
    for r in &readings {
        assert!(r.confidence <= 100, "confidence {} over 100", r.confidence);
        check_outcome(bytes, &r.outcome);
    }
    let mut out = Vec::new();
    let summaries: Vec<_> = readings.iter().map(|r| r.summary()).collect();
    inspect::write_readings(&mut out, &summaries).expect("into a Vec");
}

/// Decode → encode → decode in the same format gives the same value (first byte picks the
/// format: JSON, MessagePack or CBOR; the rest is the input).
pub fn roundtrip(data: &[u8]) {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let format = [Format::Json, Format::MessagePack, Format::Cbor][usize::from(pick % 3)];
    let Ok(doc) = decode(bytes, format, &options()) else {
        return;
    };
    for canonical in [false, true] {
        // Widths kept, so the round trip is exact (the shortest-float policy narrows on purpose).
        let opts = EncodeOptions {
            canonical,
            floats: FloatPolicy::Keep,
            ..EncodeOptions::default()
        };
        let out = match encode(&doc.value, format, &opts) {
            Ok(out) => out,
            Err(e) => panic!("{format} value from {format} bytes does not encode: {e}"),
        };
        if let Err(e) = out.spans.validate(out.bytes.len()) {
            panic!("encoded {format} spans invalid: {e}");
        }
        let again = match decode(&out.bytes, format, &options()) {
            Ok(again) => again,
            Err(e) => panic!("{format} written by wirelens does not decode: {e}"),
        };
        if canonical {
            // Sorting map entries changes order, not content: compare sorted encodings instead.
            let first = encode(&again.value, format, &opts).expect("encodes once more");
            assert_eq!(first.bytes, out.bytes, "canonical {format} is not stable");
        } else {
            assert_eq!(
                again.value, doc.value,
                "{format} round trip changed the value"
            );
        }
    }
}

/// Any decodable value (first byte picks the source format) encodes into every format with
/// valid spans, or fails with an error rather than a panic.
pub fn encode_all(data: &[u8]) {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let format = [Format::Json, Format::MessagePack, Format::Cbor][usize::from(pick % 3)];
    let Ok(doc) = decode(bytes, format, &options()) else {
        return;
    };
    for target in Format::ALL {
        if let Ok(out) = encode(&doc.value, target, &EncodeOptions::default()) {
            if let Err(e) = out.spans.validate(out.bytes.len()) {
                panic!("{format} → {target} spans invalid: {e}");
            }
            let _ = decode(&out.bytes, target, &options());
        }
    }
}
