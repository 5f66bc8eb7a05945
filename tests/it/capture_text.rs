//! Text layers and HTTP: every fixture in `tests/fixtures/capture/` (made by the commands in its
//! COMMANDS.md) unwraps to exactly the sample it was made from, with the expected layer chain;
//! error cases name the layer and offset and keep what was found; tricky inputs get the expected
//! verdict; arbitrary input never panics.

use std::path::PathBuf;

use proptest::prelude::*;
use wirelens::capture::{decode_text, decode_text_checked, unwrap, Payload, UnwrapOptions};
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
    p.meta.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
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
    assert_eq!(
        e.extracted[0].cut.as_deref(),
        Some("the body has 98 of the 500 bytes Content-Length announces")
    );
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

/// The two directions of the exchange in `pcap/http-post-cbor-reply.pcap`, as tshark's
/// `-z follow,tcp,raw,0` printed them: plain hex, one line per segment, the server's lines
/// indented by a tab.
fn follow_raw_truth() -> (Vec<u8>, Vec<u8>) {
    let text = String::from_utf8(fixture("http-exchange.follow-tcp-raw")).expect("utf-8");
    let (mut client, mut server) = (Vec::new(), Vec::new());
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('=') || t.contains(": ") {
            continue; // tshark's header and footer
        }
        let out = if line.starts_with('\t') {
            &mut server
        } else {
            &mut client
        };
        for i in (0..t.len()).step_by(2) {
            out.push(u8::from_str_radix(&t[i..i + 2], 16).expect("hex"));
        }
    }
    // What the exchange sent: a POST of user-profile.msgpack, a reply of iot-metrics.cbor.
    assert!(client.starts_with(b"POST /ingest HTTP/1.1\r\n"));
    assert!(client.ends_with(&sample("user-profile.msgpack")));
    assert!(server.starts_with(b"HTTP/1.1 200 OK\r\n"));
    assert!(server.ends_with(&sample("iot-metrics.cbor")));
    (client, server)
}

/// The packets of `pcap/http-post-cbor-reply.pcap`, read from its records (classic pcap,
/// little-endian).
fn pcap_frames() -> Vec<Vec<u8>> {
    let pcap = fixture("pcap/http-post-cbor-reply.pcap");
    assert_eq!(&pcap[..4], &[0xd4, 0xc3, 0xb2, 0xa1], "little-endian pcap");
    let mut frames = Vec::new();
    let mut at = 24;
    while at + 16 <= pcap.len() {
        let len = u32::from_le_bytes(pcap[at + 8..at + 12].try_into().expect("4 bytes")) as usize;
        frames.push(pcap[at + 16..at + 16 + len].to_vec());
        at += 16 + len;
    }
    assert_eq!(at, pcap.len());
    frames
}

fn all_parts(text: &[u8]) -> Vec<(Vec<u8>, String)> {
    let d = decode_text(text, 1 << 20).expect("decodes");
    let mut parts = vec![(d.bytes, d.detail)];
    parts.extend(d.more.into_iter().map(|p| (p.bytes, p.detail)));
    parts
}

#[test]
fn follow_stream_hex_keeps_both_directions_apart() {
    let (client, server) = follow_raw_truth();
    let cases = [
        (
            "http-exchange.follow-tcp-hex",
            " (127.0.0.1:40932)",
            " (127.0.0.1:5719)",
        ),
        (
            "http-exchange.follow-http-hex",
            " (127.0.0.1:40932)",
            " (127.0.0.1:5719)",
        ),
        ("http-exchange.follow-tcp-hex-noheader", "", ""),
    ];
    for (file, node0, node1) in cases {
        let parts = all_parts(&fixture(file));
        assert_eq!(
            parts,
            [
                (
                    client.clone(),
                    format!("Wireshark follow-stream hex, node 0{node0} → client side")
                ),
                (
                    server.clone(),
                    format!("Wireshark follow-stream hex, node 1{node1} → server side")
                ),
            ],
            "{file}"
        );
    }
}

#[test]
fn follow_stream_hex_unwraps_to_both_http_messages() {
    let found = unwrap(
        &fixture("http-exchange.follow-tcp-hex"),
        &UnwrapOptions::default(),
    )
    .expect("unwraps");
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].bytes, sample("user-profile.msgpack"));
    assert_eq!(names(&found[0]), ["hex dump", "HTTP/1.1 request"]);
    assert_eq!(
        found[0].layers[0].detail,
        "Wireshark follow-stream hex, node 0 (127.0.0.1:40932) → client side"
    );
    assert_eq!(found[1].bytes, sample("iot-metrics.cbor"));
    assert_eq!(names(&found[1]), ["hex dump", "HTTP/1.1 response"]);
    assert_eq!(found[1].hint, Some(Format::Cbor));
    assert!(found[1].layers[0]
        .detail
        .ends_with("node 1 (127.0.0.1:5719) → server side"));
}

#[test]
fn follow_stream_lines_keep_every_byte() {
    // The measured fault: three full follow-stream lines (48 bytes) once came out as 24.
    let text = String::from_utf8(fixture("http-exchange.follow-tcp-hex-noheader")).expect("utf-8");
    let three: String = text.lines().take(3).map(|l| format!("{l}\n")).collect();
    let d = decode_text(three.as_bytes(), 1 << 20).expect("a dump");
    assert_eq!(d.bytes, follow_raw_truth().0[..48]);
    assert!(d.more.is_empty());
}

#[test]
fn follow_stream_raw_keeps_both_directions_apart() {
    let (client, server) = follow_raw_truth();
    let parts = all_parts(&fixture("http-exchange.follow-tcp-raw"));
    assert_eq!(
        parts,
        [
            (
                client,
                "Wireshark follow-stream raw, node 0 (127.0.0.1:40932) → client side".to_string()
            ),
            (
                server,
                "Wireshark follow-stream raw, node 1 (127.0.0.1:5719) → server side".to_string()
            ),
        ]
    );
}

#[test]
fn tshark_x_gives_every_packet_and_reassembled_source() {
    let (client, server) = follow_raw_truth();
    let frames = pcap_frames();
    assert_eq!(frames.len(), 14);
    // tshark adds the reassembled request after frame 6 and the reply after frame 10.
    let mut want: Vec<Vec<u8>> = frames[..6].to_vec();
    want.push(client.clone());
    want.extend_from_slice(&frames[6..10]);
    want.push(server);
    want.extend_from_slice(&frames[10..]);
    let parts = all_parts(&fixture("http-exchange.tshark-x"));
    let bytes: Vec<&Vec<u8>> = parts.iter().map(|(b, _)| b).collect();
    assert_eq!(bytes, want.iter().collect::<Vec<_>>());
    assert_eq!(parts[0].1, "tshark -x, dump 1 of 16");
    assert_eq!(parts[5].1, "tshark -x, dump 6 of 16: Frame (164 bytes)");
    assert_eq!(
        parts[6].1,
        "tshark -x, dump 7 of 16: Reassembled TCP (195 bytes)"
    );

    let parts = all_parts(&fixture("http-post.tshark-x"));
    assert_eq!(
        parts,
        [
            (
                frames[5].clone(),
                "tshark -x, dump 1 of 2: Frame (164 bytes)".to_string()
            ),
            (
                client,
                "tshark -x, dump 2 of 2: Reassembled TCP (195 bytes)".to_string()
            ),
        ]
    );
}

#[test]
fn xxd_include_is_read_and_its_length_checked() {
    let text = fixture("user-profile.msgpack.xxd-i");
    let p = unwrap_one(&text);
    assert_eq!(p.bytes, sample("user-profile.msgpack"));
    assert_eq!(names(&p), ["hex array"]);
    assert_eq!(p.layers[0].detail, "xxd -i user_profile_msgpack");

    let text = String::from_utf8(text).expect("utf-8");
    let wrong = text.replace("_len = 98;", "_len = 99;");
    let e = unwrap(wrong.as_bytes(), &UnwrapOptions::default()).expect_err("length differs");
    assert_eq!(e.layer, "hex array");
    assert_eq!(e.offset, wrong.find("unsigned int").expect("len line"));
    assert_eq!(
        e.message,
        "line 12: user_profile_msgpack_len says 99 bytes, but the array holds 98 (read as xxd -i)"
    );
    assert!(e.extracted.is_empty());

    let bad_byte = text.replacen("0x75,", "0x7g,", 1);
    let e = decode_text_checked(bad_byte.as_bytes(), 1 << 20).expect_err("not a byte");
    assert_eq!(e.line, 2);
    assert_eq!(e.message, "'0x7g' is not a byte (0x00 to 0xff)");
}

/// `text` with line `no` (1-based) passed through `edit`.
fn edit_line(text: &[u8], no: usize, edit: impl Fn(&str) -> String) -> (String, usize) {
    let text = String::from_utf8(text.to_vec()).expect("utf-8");
    let mut out = String::new();
    let mut start = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if i + 1 == no {
            start = out.len();
            let body = line.strip_suffix('\n').unwrap_or(line);
            out.push_str(&edit(body));
            out.push('\n');
        } else {
            out.push_str(line);
        }
    }
    (out, start)
}

#[test]
fn a_broken_line_is_an_error_naming_it_never_a_shorter_result() {
    type Case<'a> = (&'a str, usize, fn(&str) -> String, &'a str);
    let cases: &[Case<'_>] = &[
        (
            "user-profile.msgpack.xxd",
            4,
            |l| l.replacen("636f", "zz6f", 1),
            "line 4: expected hex digits in pairs, found 'zz6f' (read as xxd)",
        ),
        (
            // A group lost from line 3: its ASCII column says so.
            "user-profile.msgpack.xxd",
            3,
            |l| l.replacen(" 7765", "", 1),
            "line 3: the ASCII column 'il.li.wei@exampl' does not match the 14 bytes before it \
             (read as xxd)",
        ),
        (
            "user-profile.msgpack.xxd",
            3,
            |l| l.replacen("00000020", "00000022", 1),
            "line 3: offset 00000022 does not follow the 32 bytes before it (expected 00000020) \
             (read as xxd)",
        ),
        (
            // The last line has no next offset to check it by; its ASCII column does.
            "user-profile.msgpack.xxd",
            7,
            |l| l.replacen("7665 ", "76   ", 1),
            "line 7: the ASCII column 've' does not match the 1 bytes before it (read as xxd)",
        ),
        (
            "iot-metrics.cbor.hexdump-C",
            3,
            |l| l.replacen(" 38 ", " 3g ", 1),
            "line 3: expected a hex byte, found '3g' (read as hexdump -C)",
        ),
        (
            "iot-metrics.cbor.od",
            2,
            |l| l.replacen(" 67 ", " 6 7 ", 1),
            "line 2: expected a hex byte, found '6' (read as od)",
        ),
        (
            "iot-metrics.cbor.wireshark-hexdump",
            2,
            |l| l.replacen("0010", "0011", 1),
            "line 2: offset 0011 does not follow the 16 bytes before it (expected 0010) \
             (read as Wireshark)",
        ),
        (
            "http-exchange.tshark-x",
            40,
            |l| l.replacen(" 9f ", " zz ", 1),
            "line 40: expected a hex byte, found 'zz' (read as tshark -x)",
        ),
        (
            "http-exchange.follow-tcp-hex",
            30,
            |l| l.replacen(" 6b ", " zz ", 1),
            "line 30: expected a hex byte, found 'zz' (read as Wireshark follow-stream hex)",
        ),
        (
            "http-exchange.follow-tcp-hex",
            26,
            |l| l.replacen("00000047", "00000048", 1),
            "line 26: offset 00000048 does not follow the 71 bytes node 1 sent before it \
             (expected 00000047) (read as Wireshark follow-stream hex)",
        ),
        (
            "http-exchange.follow-tcp-hex-noheader",
            3,
            |l| format!("{l} trailing words"),
            "line 3: the ASCII column '.0.0.1.. Content- trailing words' does not match the \
             16 bytes before it (read as Wireshark follow-stream hex)",
        ),
    ];
    for (file, line, edit, message) in cases {
        let (text, start) = edit_line(&fixture(file), *line, edit);
        assert!(
            decode_text(text.as_bytes(), 1 << 20).is_none(),
            "{file}:{line}"
        );
        let e = unwrap(text.as_bytes(), &UnwrapOptions::default())
            .expect_err(&format!("{file}:{line} is broken"));
        assert_eq!(e.message, *message, "{file}:{line}");
        assert_eq!(e.layer, "hex dump", "{file}:{line}");
        assert_eq!(e.offset, start, "{file}:{line}: offset of the line");
        assert!(e.extracted.is_empty(), "{file}:{line}");
    }
}

#[test]
fn a_line_of_prose_in_a_dump_is_an_error() {
    let mut text = fixture("iot-metrics.cbor.hexdump-C");
    text.extend_from_slice(b"(copied from the staging box)\n");
    let e = unwrap(&text, &UnwrapOptions::default()).expect_err("prose line");
    assert_eq!(
        e.message,
        "line 7: expected an offset in hex digits, found '(copied' (read as hexdump -C)"
    );
}

#[test]
fn a_broken_dump_inside_a_json_string_is_an_error_too() {
    let (text, _) = edit_line(&fixture("user-profile.msgpack.xxd"), 2, |l| {
        l.replacen("6c69", "6c6", 1)
    });
    let json = format!("{:?}", text);
    let e = unwrap(json.as_bytes(), &UnwrapOptions::default()).expect_err("broken dump");
    assert_eq!(e.layer, "hex dump");
    assert!(e.message.starts_with("line 2: "), "{}", e.message);
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
        // A short run of letters shaped like a word ("Zhbatmcaaaaa", from 9 random bytes) is
        // read as text by design (`base64_rules` pins that); only other base64 must be found.
        let word = b64.len() < 20
            && b64.bytes().all(|c| c.is_ascii_alphabetic())
            && (b64[1..].bytes().all(|c| c.is_ascii_lowercase())
                || b64.bytes().all(|c| c.is_ascii_uppercase()));
        prop_assume!(!word);
        let found = unwrap(b64.as_bytes(), &UnwrapOptions::default()).expect("base64");
        prop_assert_eq!(&found[0].layers[0].name, "base64");
    }
}

#[test]
fn a_tshark_x_dump_of_a_whole_capture_reads_as_that_capture() {
    use wirelens::capture::{peel, PeelOptions};
    let dump = peel(fixture("http-exchange.tshark-x"), &PeelOptions::default());
    let pcap = peel(
        fixture("pcap/http-post-cbor-reply.pcap"),
        &PeelOptions::default(),
    );
    assert!(dump.error.is_none() && pcap.error.is_none());
    assert_eq!(dump.payloads.len(), pcap.payloads.len());
    for (d, p) in dump.payloads.iter().zip(&pcap.payloads) {
        assert_eq!(d.bytes, p.bytes);
        assert_eq!(d.meta_value("method"), p.meta_value("method"));
        assert_eq!(d.layers[0].name, "hex dump");
        assert!(d.layers[0]
            .detail
            .contains("tshark -x, 14 frames read as a capture; 2 derived section(s) left out"));
        let names = |p: &Payload| p.layers.iter().map(|l| l.name.clone()).collect::<Vec<_>>();
        assert_eq!(
            names(d)[1..],
            names(p)[..],
            "the capture's layers under the dump"
        );
    }
    // A dump of one frame keeps more in its "Reassembled TCP" section than the frame rebuilds:
    // it is read dump by dump, the request from the reassembled section.
    let one = peel(fixture("http-post.tshark-x"), &PeelOptions::default());
    assert_eq!(one.payloads.len(), 2);
    assert_eq!(one.payloads[1].meta_value("method"), Some("POST"));
    assert_eq!(one.payloads[1].bytes, pcap.payloads[0].bytes);
}

#[test]
fn a_tshark_x_dump_of_non_ip_frames_is_not_a_capture() {
    // Sixteen bytes that are no Ethernet or IP frame stay a dump's bytes.
    let text = "0000  01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10   ................\n";
    assert!(wirelens::capture::text::packet_frames(text.as_bytes()).is_none());
}
