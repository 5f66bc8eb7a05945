//! Text layers and HTTP: every fixture in `tests/fixtures/capture/` (made by the commands in its
//! COMMANDS.md) unwraps to exactly the sample it was made from, with the expected layer chain;
//! error cases name the layer and offset and keep what was found; tricky inputs get the expected
//! verdict; arbitrary input never panics.

use std::path::PathBuf;

use proptest::prelude::*;
use wirelens::capture::{unwrap, Payload, UnwrapOptions};
use wirelens::codec::Format;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(root().join("tests/fixtures/capture").join(name)).expect("fixture exists")
}

fn sample(name: &str) -> Vec<u8> {
    std::fs::read(root().join("samples").join(name)).expect("sample exists")
}

fn tx_slice() -> Vec<u8> {
    let mut s = sample("transactions-1k.msgpack");
    s.truncate(3000);
    s
}

fn unwrap_one(input: &[u8]) -> Payload {
    let mut found = unwrap(input, &UnwrapOptions::default()).expect("unwraps");
    assert_eq!(found.len(), 1, "one payload expected, got {found:?}");
    found.remove(0)
}

fn names(p: &Payload) -> Vec<&str> {
    p.layers.iter().map(|l| l.name.as_str()).collect()
}

fn meta<'a>(p: &'a Payload, key: &str) -> Option<&'a str> {
    p.meta
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

#[test]
fn text_fixtures_yield_the_original_bytes() {
    let cases: &[(&str, Vec<u8>, &[&str], &str)] = &[
        (
            "user-profile.msgpack.xxd",
            sample("user-profile.msgpack"),
            &["hex dump"],
            "xxd",
        ),
        (
            "tx-slice-3000.msgpack.xxd",
            tx_slice(),
            &["hex dump"],
            "xxd",
        ),
        (
            "iot-metrics.cbor.hexdump-C",
            sample("iot-metrics.cbor"),
            &["hex dump"],
            "hexdump -C",
        ),
        (
            "iot-metrics.cbor.od",
            sample("iot-metrics.cbor"),
            &["hex dump"],
            "od",
        ),
        (
            "user-profile.msgpack.od-An",
            sample("user-profile.msgpack"),
            &["hex"],
            "",
        ),
        (
            "iot-metrics.cbor.wireshark-hexdump",
            sample("iot-metrics.cbor"),
            &["hex dump"],
            "Wireshark",
        ),
        (
            "iot-metrics.cbor.wireshark-hexstream",
            sample("iot-metrics.cbor"),
            &["hex"],
            "",
        ),
        ("tx-slice-3000.msgpack.b64", tx_slice(), &["base64"], ""),
        (
            "iot-metrics.cbor.b64w0",
            sample("iot-metrics.cbor"),
            &["base64"],
            "",
        ),
        (
            "tx-slice-3000.msgpack.b64url",
            tx_slice(),
            &["base64url"],
            "",
        ),
        (
            "user-profile.msgpack.pybytes",
            sample("user-profile.msgpack"),
            &["Python bytes literal"],
            "",
        ),
        (
            "user-profile.msgpack.c-array",
            sample("user-profile.msgpack"),
            &["hex array"],
            "",
        ),
        (
            "user-profile.json.jsonstring",
            sample("user-profile.json"),
            &["JSON string"],
            "128 characters once unescaped",
        ),
        (
            "user-profile.msgpack.b64.jsonstring",
            sample("user-profile.msgpack"),
            &["JSON string", "base64"],
            "132 characters once unescaped",
        ),
        (
            "iot-metrics.cbor.dataurl",
            sample("iot-metrics.cbor"),
            &["data: URL (base64)"],
            "application/cbor",
        ),
        (
            "iot-metrics.json.dataurl",
            sample("iot-metrics.json"),
            &["data: URL (percent-encoded)"],
            "application/json",
        ),
    ];
    for (file, expected, layers, detail) in cases {
        let p = unwrap_one(&fixture(file));
        assert_eq!(&p.bytes, expected, "{file}: bytes differ");
        assert_eq!(names(&p), *layers, "{file}: layer chain");
        assert_eq!(p.layers[0].detail, *detail, "{file}: first layer detail");
    }
}

#[test]
fn data_url_media_type_sets_the_hint() {
    let p = unwrap_one(&fixture("iot-metrics.cbor.dataurl"));
    assert_eq!(p.hint, Some(Format::Cbor));
}

#[test]
fn hexdump_star_lines_are_expanded() {
    let expected = fixture("zeros-abc.bin");
    assert_eq!(expected.len(), 103);
    for file in ["zeros-abc.hexdump-C", "zeros-abc.od"] {
        let text = fixture(file);
        assert!(
            text.split(|&c| c == b'\n').any(|l| l == b"*"),
            "{file} has a * line"
        );
        let p = unwrap_one(&text);
        assert_eq!(p.bytes, expected, "{file}");
        assert_eq!(names(&p), ["hex dump"]);
    }
}

#[test]
fn xxd_short_last_line_loses_no_byte() {
    let text = fixture("user-profile.msgpack.xxd");
    let last = String::from_utf8(text.clone()).expect("utf-8");
    let last = last.lines().last().expect("a line");
    // The last line holds 2 bytes, and its ASCII column is "ve" (hex-looking letters would be
    // a trap too).
    assert!(last.starts_with("00000060: 7665 "), "{last}");
    let p = unwrap_one(&text);
    assert_eq!(p.bytes, sample("user-profile.msgpack"));
    assert_eq!(p.layers[0].span.start, 0);
    assert_eq!(
        p.layers[0].span.end,
        text.len() - 1,
        "span excludes the final newline"
    );
}

#[test]
fn http_fixtures_yield_the_original_bytes() {
    type Case<'a> = (&'a str, Vec<u8>, &'a [&'a str], Option<Format>);
    let cases: &[Case<'_>] = &[
        (
            "http-gzip-msgpack.http",
            sample("user-profile.msgpack"),
            &["HTTP/1.1 response", "gzip"],
            Some(Format::MessagePack),
        ),
        (
            "http-chunked-cbor.http",
            sample("iot-metrics.cbor"),
            &["HTTP/1.1 response", "chunked"],
            Some(Format::Cbor),
        ),
        (
            "http-rawdeflate-cbor.http",
            sample("iot-metrics.cbor"),
            &["HTTP/1.1 response", "deflate"],
            Some(Format::Cbor),
        ),
        (
            "http-br-msgpack.http",
            tx_slice(),
            &["HTTP/1.1 request", "br"],
            Some(Format::MessagePack),
        ),
        (
            "http-zstd-chunked-json.http",
            sample("iot-metrics.json"),
            &["HTTP/1.1 response", "chunked", "zstd"],
            Some(Format::Json),
        ),
    ];
    for (file, expected, layers, hint) in cases {
        let p = unwrap_one(&fixture(file));
        assert_eq!(&p.bytes, expected, "{file}: bytes differ");
        assert_eq!(names(&p), *layers, "{file}: layer chain");
        assert_eq!(p.hint, *hint, "{file}: hint");
        assert!(meta(&p, "start-line").is_some());
    }
}

#[test]
fn http_message_layer_has_headers_in_meta_and_detail() {
    let input = fixture("http-gzip-msgpack.http");
    let p = unwrap_one(&input);
    assert_eq!(meta(&p, "start-line"), Some("HTTP/1.1 200 OK"));
    assert_eq!(meta(&p, "Content-Type"), Some("application/msgpack"));
    assert_eq!(meta(&p, "Content-Encoding"), Some("gzip"));
    assert_eq!(
        p.layers[0].detail,
        "HTTP/1.1 200 OK; Content-Type: application/msgpack"
    );
    assert_eq!(p.layers[0].span.start, 0);
    assert_eq!(p.layers[0].span.end, input.len());
}

#[test]
fn chunked_trailers_are_kept() {
    let p = unwrap_one(&fixture("http-chunked-cbor.http"));
    assert_eq!(meta(&p, "trailer X-Checksum"), Some("abc123"));
    assert_eq!(p.layers[1].detail, "2 chunks, 80 bytes");
}

#[test]
fn request_then_response_gives_two_payloads() {
    let found = unwrap(
        &fixture("http-deflate-json.http"),
        &UnwrapOptions::default(),
    )
    .expect("unwraps");
    assert_eq!(found.len(), 2);
    assert_eq!(names(&found[0]), ["HTTP/1.1 request"]);
    assert!(found[0].bytes.is_empty());
    assert_eq!(meta(&found[0], "method"), Some("GET"));
    assert_eq!(found[1].bytes, sample("user-profile.json"));
    assert_eq!(names(&found[1]), ["HTTP/1.1 response", "deflate"]);
    assert_eq!(found[1].hint, Some(Format::Json));
    // The response's span starts where the request ended.
    assert_eq!(found[1].layers[0].span.start, found[0].layers[0].span.end);
}

#[test]
fn pipelined_responses_give_each_body() {
    let found =
        unwrap(&fixture("http-pipelined.http"), &UnwrapOptions::default()).expect("unwraps");
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].bytes, sample("user-profile.msgpack"));
    assert_eq!(found[0].hint, Some(Format::MessagePack));
    assert_eq!(found[1].bytes, sample("iot-metrics.cbor"));
    assert_eq!(found[1].hint, Some(Format::Cbor));
}

#[test]
fn grpc_body_is_left_whole_and_marked() {
    let p = unwrap_one(&fixture("http-grpc-web.http"));
    assert_eq!(p.bytes, b"\x00\x00\x00\x00\x05\x08\x96\x01\x10\x01");
    assert_eq!(meta(&p, "grpc-body"), Some("true"));
    assert_eq!(p.hint, Some(Format::Protobuf));
}

#[test]
fn short_body_is_an_error_with_the_partial_body() {
    let input = fixture("http-truncated.http");
    let e = unwrap(&input, &UnwrapOptions::default()).expect_err("body is short");
    assert_eq!(e.layer, "HTTP/1.1 response");
    assert_eq!(e.offset, input.len());
    assert!(e.message.contains("98 of the 500 bytes"), "{}", e.message);
    assert_eq!(e.extracted.len(), 1);
    assert_eq!(e.extracted[0].bytes, sample("user-profile.msgpack"));
    assert_eq!(meta(&e.extracted[0], "truncated"), Some("true"));
    assert_eq!(
        e.to_string(),
        format!(
            "error in HTTP/1.1 response at byte {}: {}",
            input.len(),
            e.message
        )
    );
}

#[test]
fn error_after_a_good_message_keeps_the_good_one() {
    let mut input = fixture("http-gzip-msgpack.http");
    input.extend_from_slice(&fixture("http-truncated.http"));
    let e = unwrap(&input, &UnwrapOptions::default()).expect_err("second is short");
    assert_eq!(e.extracted.len(), 2);
    assert_eq!(e.extracted[0].bytes, sample("user-profile.msgpack"));
    assert_eq!(names(&e.extracted[0]), ["HTTP/1.1 response", "gzip"]);
}

#[test]
fn broken_chunk_is_an_error_in_the_chunked_layer() {
    let input = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n10\r\nabc";
    let e = unwrap(input, &UnwrapOptions::default()).expect_err("chunk cut short");
    assert_eq!(e.layer, "chunked");
    assert_eq!(e.offset, input.len());
    assert_eq!(e.extracted[0].bytes, b"helloabc");

    let bad = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n";
    let e = unwrap(bad, &UnwrapOptions::default()).expect_err("bad size");
    assert_eq!(e.layer, "chunked");
    assert_eq!(e.offset, bad.len() - 4);
}

#[test]
fn corrupt_gzip_is_an_error_in_the_gzip_layer() {
    let input = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 12\r\n\r\n\x1f\x8b\x08\x00garbage!";
    let e = unwrap(input, &UnwrapOptions::default()).expect_err("corrupt");
    assert_eq!(e.layer, "gzip");
    assert_eq!(e.extracted.len(), 1);
    assert_eq!(names(&e.extracted[0]), ["HTTP/1.1 response"]);
}

#[test]
fn decompression_is_bounded() {
    // 10 MB of zeros gzip to about 10 kB: a ratio near 1000.
    let zeros = vec![0u8; 10_000_000];
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    std::io::Write::write_all(&mut enc, &zeros).expect("gzip");
    let gz = enc.finish().expect("gzip");
    let ok = unwrap(&gz, &UnwrapOptions::default()).expect("within the default bounds");
    assert_eq!(ok[0].bytes.len(), zeros.len());
    assert_eq!(names(&ok[0]), ["gzip"]);

    let tight = UnwrapOptions {
        max_decompressed: 1_000_000,
        ..UnwrapOptions::default()
    };
    let e = unwrap(&gz, &tight).expect_err("over the byte bound");
    assert_eq!(e.layer, "gzip");
    assert!(
        e.message.contains("limit of 1000000 bytes"),
        "{}",
        e.message
    );

    let ratio = UnwrapOptions {
        max_ratio: 100,
        ratio_floor: 0,
        ..UnwrapOptions::default()
    };
    let e = unwrap(&gz, &ratio).expect_err("over the ratio bound");
    assert_eq!(e.layer, "gzip");
}

/// The verdict on a tricky input.
#[derive(Debug)]
enum Expect {
    /// The input is itself the payload (no layer).
    Itself,
    /// Nothing found.
    Nothing,
    /// These layers, then these bytes.
    Peeled(&'static [&'static str], Vec<u8>),
}

#[test]
fn tricky_inputs() {
    let cases: Vec<(&str, &[u8], Expect)> = vec![
        ("empty input", b"", Expect::Nothing),
        ("only blanks", b" \n\t ", Expect::Nothing),
        (
            "JSON number made of hex digits",
            b"12345678",
            Expect::Itself,
        ),
        ("JSON number 1234", b"1234", Expect::Itself),
        (
            "JSON object that base64 would also accept if unquoted",
            br#"{"aGVsbG8gd29ybGQ":1}"#,
            Expect::Itself,
        ),
        (
            "JSON array of hex-looking strings",
            br#"["deadbeef"]"#,
            Expect::Itself,
        ),
        (
            "a lone JSON string of plain text stays a payload",
            br#""hello, world""#,
            Expect::Itself,
        ),
        (
            "a lone JSON string of hex is looked inside",
            br#""deadbeef""#,
            Expect::Peeled(&["JSON string", "hex"], vec![0xde, 0xad, 0xbe, 0xef]),
        ),
        (
            "a lone JSON string holding JSON",
            br#""{\"a\":1}""#,
            Expect::Peeled(&["JSON string"], br#"{"a":1}"#.to_vec()),
        ),
        (
            "bare hex",
            b"deadbeef",
            Expect::Peeled(&["hex"], vec![0xde, 0xad, 0xbe, 0xef]),
        ),
        ("short hex is left alone", b"dead", Expect::Itself),
        ("short base64 is left alone", b"gqNr", Expect::Itself),
        ("random prose", b"the quick brown fox jumps", Expect::Itself),
        ("a single long word", b"configuration", Expect::Itself),
        (
            "odd number of hex digits (and no base64 either)",
            b"abcdef012",
            Expect::Itself,
        ),
        (
            "spaced hex",
            b"0a 0b 0c 0d",
            Expect::Peeled(&["hex"], vec![10, 11, 12, 13]),
        ),
        (
            "colon hex",
            b"0a:0b:0c:0d",
            Expect::Peeled(&["hex"], vec![10, 11, 12, 13]),
        ),
        (
            "0x list",
            b"0x0a, 0x0b, 0xc",
            Expect::Peeled(&["hex array"], vec![10, 11, 12]),
        ),
        (
            "Rust array",
            b"[0x0a_u8, 0x0b, 0x0c]",
            Expect::Peeled(&["hex array"], vec![10, 11, 12]),
        ),
        (
            "C declaration",
            b"static const unsigned char p[] = { 0x81, 0xa3 };",
            Expect::Peeled(&["hex array"], vec![0x81, 0xa3]),
        ),
        (
            "escapes",
            br"\x81\xa3\x6b\x65",
            Expect::Peeled(&["hex escapes"], vec![0x81, 0xa3, 0x6b, 0x65]),
        ),
        (
            "python bytes with printable characters",
            br"b'\x81\xa3key\x01'",
            Expect::Peeled(
                &["Python bytes literal"],
                vec![0x81, 0xa3, b'k', b'e', b'y', 0x01],
            ),
        ),
        (
            "python bytes with escapes of quotes and newline",
            br#"b"it's\n\\""#,
            Expect::Peeled(&["Python bytes literal"], b"it's\n\\".to_vec()),
        ),
        (
            "base64 inside a JSON string",
            br#""gaNrZXkB""#,
            Expect::Peeled(
                &["JSON string", "base64"],
                vec![0x81, 0xa3, b'k', b'e', b'y', 0x01],
            ),
        ),
        (
            "base64 of JSON is peeled to the JSON",
            b"eyJhIjogMX0=",
            Expect::Peeled(&["base64"], br#"{"a": 1}"#.to_vec()),
        ),
        (
            "hex of base64 of msgpack: two layers",
            b"67614e725a586b42",
            Expect::Peeled(&["hex", "base64"], vec![0x81, 0xa3, b'k', b'e', b'y', 0x01]),
        ),
        (
            "binary msgpack stays itself",
            &[0x81, 0xa3, b'k', b'e', b'y', 0x01],
            Expect::Itself,
        ),
        (
            "an HTTP-looking word is not HTTP",
            b"GET it done",
            Expect::Itself,
        ),
        (
            "xxd with a single short line",
            b"00000000: 81a3 6b65 7901                           ..key.\n",
            Expect::Peeled(&["hex dump"], vec![0x81, 0xa3, b'k', b'e', b'y', 0x01]),
        ),
        (
            "hexdump -C whose ASCII column looks like hex",
            b"00000000  61 62 63 64 20 65 66 30  |abcd ef0|\n00000008\n",
            Expect::Peeled(&["hex dump"], b"abcd ef0".to_vec()),
        ),
    ];
    for (what, input, expect) in cases {
        let found = unwrap(input, &UnwrapOptions::default())
            .unwrap_or_else(|e| panic!("{what}: unexpected error {e}"));
        match expect {
            Expect::Nothing => assert!(found.is_empty(), "{what}: {found:?}"),
            Expect::Itself => {
                assert_eq!(found.len(), 1, "{what}");
                assert!(found[0].layers.is_empty(), "{what}: {:?}", found[0].layers);
                assert_eq!(found[0].bytes, input, "{what}");
            }
            Expect::Peeled(layers, bytes) => {
                assert_eq!(found.len(), 1, "{what}");
                assert_eq!(names(&found[0]), layers, "{what}");
                assert_eq!(found[0].bytes, bytes, "{what}");
            }
        }
    }
}

#[test]
fn http_inside_base64_is_peeled() {
    use base64::Engine;
    let http = fixture("http-gzip-msgpack.http");
    let b64 = base64::engine::general_purpose::STANDARD.encode(&http);
    let p = unwrap_one(b64.as_bytes());
    assert_eq!(names(&p), ["base64", "HTTP/1.1 response", "gzip"]);
    assert_eq!(p.bytes, sample("user-profile.msgpack"));
}

#[test]
fn bare_lf_http_text_is_accepted() {
    let input = b"HTTP/1.0 200 OK\nContent-Type: application/json\n\n{\"a\": [1, 2]}";
    let p = unwrap_one(input);
    assert_eq!(names(&p), ["HTTP/1.0 response"]);
    assert_eq!(p.bytes, b"{\"a\": [1, 2]}");
    assert_eq!(p.hint, Some(Format::Json));
}

#[test]
fn hexdump_star_cannot_bomb_memory() {
    let input = b"00000000  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n*\nfffffff0\n";
    let tight = UnwrapOptions {
        max_decompressed: 1 << 20,
        ..UnwrapOptions::default()
    };
    let found = unwrap(input, &tight).expect("no error, just not a dump");
    assert!(found[0].layers.is_empty(), "{:?}", found[0].layers);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn unwrap_never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = unwrap(&bytes, &UnwrapOptions::default());
    }

    #[test]
    fn unwrap_never_panics_on_text(text in "\\PC{0,300}") {
        let _ = unwrap(text.as_bytes(), &UnwrapOptions::default());
    }

    #[test]
    fn unwrap_never_panics_on_shaped_text(
        text in "(HTTP/1\\.1 200 OK\r\n|GET / HTTP/1\\.1\n|0000000[0-9]: |[0-9a-f ]{1,40}|\\*\n|b'|\\\\x|0x|[A-Za-z0-9+/=]{1,20}|\r?\n|Transfer-Encoding: chunked\r\n|Content-Length: [0-9]{1,3}\r\n|\")*"
    ) {
        let _ = unwrap(text.as_bytes(), &UnwrapOptions::default());
    }

    #[test]
    fn hex_and_base64_round_trip(bytes in proptest::collection::vec(any::<u8>(), 8..200)) {
        use base64::Engine;
        let hex: String = bytes.iter().map(|b| format!("{b:02x} ")).collect();
        let p = unwrap(hex.as_bytes(), &UnwrapOptions::default()).expect("hex");
        // Hex of text can peel further; the first layer is always hex.
        prop_assert_eq!(&p[0].layers[0].name, "hex");
        let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
        let found = unwrap(b64.as_bytes(), &UnwrapOptions::default()).expect("base64");
        prop_assert_eq!(&found[0].layers[0].name, "base64");
    }
}
