//! Hostile captures against the readers inside a connection: an HPACK bomb, header floods, a
//! CONTINUATION flood, 100,000 streams on one connection, decompression bombs on an HTTP/2
//! stream, in a gRPC frame and in a WebSocket message, frame lengths that lie, a WebSocket
//! fragment flood. Each is built in memory (as `scripts/capture-bombs.py` builds them for
//! `scripts/hostile-limits.sh`) and read through `peel`, as `inspect` reads it: no abort, a
//! warning naming the limit that stopped it and how to raise it, and what comes after the bomb
//! still read.

use std::io::Write;

use wirelens::capture::{peel, PeelOptions, Peeled};
use wirelens::limits::Limits;

const AFTER: &[u8] = br#"{"after":true}"#;

/// A raw-IP pcap of one TCP connection 10.0.0.1:51234 → 10.0.0.2:80 (no handshake): the
/// client's bytes, then the server's, in segments of at most 60,000 bytes.
fn pcap(client: &[u8], server: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    out.extend_from_slice(&[2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    out.extend_from_slice(&65535u32.to_le_bytes());
    out.extend_from_slice(&101u32.to_le_bytes());
    let mut n = 0u32;
    for (to_server, data) in [(true, client), (false, server)] {
        let (mut src, mut dst, mut sport, mut dport) =
            ([10, 0, 0, 1], [10, 0, 0, 2], 51234u16, 80u16);
        if !to_server {
            (src, dst, sport, dport) = (dst, src, dport, sport);
        }
        let mut seq = 1000u32;
        for chunk in data.chunks(60_000) {
            let mut packet = vec![0x45, 0];
            packet.extend_from_slice(&((40 + chunk.len()) as u16).to_be_bytes());
            packet.extend_from_slice(&[0, 0, 0x40, 0, 64, 6, 0, 0]);
            packet.extend_from_slice(&src);
            packet.extend_from_slice(&dst);
            packet.extend_from_slice(&sport.to_be_bytes());
            packet.extend_from_slice(&dport.to_be_bytes());
            packet.extend_from_slice(&seq.to_be_bytes());
            packet.extend_from_slice(&[0, 0, 0, 0, 5 << 4, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
            packet.extend_from_slice(chunk);
            out.extend_from_slice(&1_700_000_000u32.to_le_bytes());
            out.extend_from_slice(&n.to_le_bytes());
            out.extend_from_slice(&(packet.len() as u32).to_le_bytes());
            out.extend_from_slice(&(packet.len() as u32).to_le_bytes());
            out.extend_from_slice(&packet);
            seq = seq.wrapping_add(chunk.len() as u32);
            n += 1;
        }
    }
    out
}

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const DATA: u8 = 0;
const HEADERS: u8 = 1;
const SETTINGS: u8 = 4;
const CONTINUATION: u8 = 9;
const END_STREAM: u8 = 1;
const END_HEADERS: u8 = 4;
/// `:method GET`, `:scheme http`, `:path /` from the static table.
const GET: &[u8] = &[0x82, 0x86, 0x84];

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len();
    let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

fn hpack_int(mut value: usize, prefix_bits: u32, first: u8) -> Vec<u8> {
    let top = (1usize << prefix_bits) - 1;
    if value < top {
        return vec![first | value as u8];
    }
    let mut out = vec![first | top as u8];
    value -= top;
    while value >= 128 {
        out.push((value % 128 + 128) as u8);
        value /= 128;
    }
    out.push(value as u8);
    out
}

/// A literal field with a new name: added to the dynamic table (`indexed`) or not.
fn literal(name: &[u8], value: &[u8], indexed: bool) -> Vec<u8> {
    let mut out = vec![if indexed { 0x40 } else { 0x00 }];
    out.extend(hpack_int(name.len(), 7, 0));
    out.extend_from_slice(name);
    out.extend(hpack_int(value.len(), 7, 0));
    out.extend_from_slice(value);
    out
}

/// The server's answer on `stream`: 200, JSON, `{"after":true}`.
fn json_response(stream: u32) -> Vec<u8> {
    let mut block = vec![0x88];
    block.extend(literal(b"content-type", b"application/json", false));
    let mut out = frame(HEADERS, END_HEADERS, stream, &block);
    out.extend(frame(DATA, END_STREAM, stream, AFTER));
    out
}

fn h2(client_frames: &[u8], server_frames: &[u8]) -> Vec<u8> {
    let mut client = PREFACE.to_vec();
    client.extend(frame(SETTINGS, 0, 0, &[]));
    client.extend_from_slice(client_frames);
    let mut server = frame(SETTINGS, 0, 0, &[]);
    server.extend_from_slice(server_frames);
    pcap(&client, &server)
}

fn read(capture: &[u8], limits: Limits) -> Peeled {
    peel(capture, &PeelOptions::within(limits))
}

/// The warning naming `limit` and how to raise it, and the frame it struck in.
fn warning_naming<'a>(peeled: &'a Peeled, limit: &str) -> &'a str {
    let raise = format!("`--limit {limit}=N`");
    peeled
        .warnings
        .iter()
        .find(|w| w.contains(&format!("limit {limit}")) && w.contains(&raise))
        .unwrap_or_else(|| panic!("no warning names limit {limit}: {:?}", peeled.warnings))
}

/// Whether the innocent message after the bomb was read.
fn after_is_read(peeled: &Peeled) -> bool {
    peeled.payloads.iter().any(|p| p.bytes == AFTER)
}

/// 4,000 bytes into the dynamic table, then 64,000 one-byte references to them: 256 MB of header
/// fields from 64 KB. The fields kept stop at the header-list limit, the block is decoded to its
/// end (so the table stays in step) and stream 3 after it is read.
#[test]
fn an_hpack_bomb_stops_at_the_header_list_limit() {
    let mut first = GET.to_vec();
    first.extend(literal(b"x-bomb", &[b'a'; 4000], true));
    let mut client = frame(HEADERS, END_STREAM, 1, &first);
    for i in 0..4 {
        let flags = if i == 3 { END_HEADERS } else { 0 };
        client.extend(frame(CONTINUATION, flags, 1, &[0xbe; 16_000]));
    }
    client.extend(frame(HEADERS, END_HEADERS | END_STREAM, 3, GET));
    let capture = h2(&client, &json_response(3));
    let peeled = read(&capture, Limits::default());
    let warning = warning_naming(&peeled, "header-list");
    assert!(
        warning.contains("header list of stream 1") && warning.contains("(frame 1)"),
        "{warning}"
    );
    assert!(after_is_read(&peeled), "{:?}", peeled.warnings);
    let request = peeled
        .payloads
        .iter()
        .find(|p| p.meta_value("http2 stream") == Some("1"))
        .expect("stream 1's request");
    let kept = request.meta.iter().filter(|(k, _)| *k == "x-bomb").count();
    assert!(kept > 0 && kept <= (1 << 20) / 4038, "{kept} fields kept");
    // The field count has a limit of its own.
    let peeled = read(
        &capture,
        Limits {
            max_headers: 10,
            ..Limits::default()
        },
    );
    warning_naming(&peeled, "headers");
    assert!(after_is_read(&peeled));
}

/// 100,000 fields of a few bytes each in one HTTP/2 request, and in one HTTP/1.1 request.
#[test]
fn header_floods_stop_at_the_field_limit() {
    let mut block = GET.to_vec();
    for _ in 0..100_000 {
        block.extend(literal(b"h", b"v", false));
    }
    let chunks: Vec<&[u8]> = block.chunks(16_384).collect();
    let mut client = Vec::new();
    for (i, c) in chunks.iter().enumerate() {
        let kind = if i == 0 { HEADERS } else { CONTINUATION };
        let mut flags = if i == 0 { END_STREAM } else { 0 };
        if i == chunks.len() - 1 {
            flags |= END_HEADERS;
        }
        client.extend(frame(kind, flags, 1, c));
    }
    client.extend(frame(HEADERS, END_HEADERS | END_STREAM, 3, GET));
    let peeled = read(&h2(&client, &json_response(3)), Limits::default());
    warning_naming(&peeled, "headers");
    assert!(after_is_read(&peeled));

    let mut request = b"GET / HTTP/1.1\r\nHost: example\r\n".to_vec();
    for _ in 0..100_000 {
        request.extend_from_slice(b"h: v\r\n");
    }
    request.extend_from_slice(b"\r\nGET /after HTTP/1.1\r\nHost: example\r\n\r\n");
    let mut response = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        AFTER.len()
    )
    .into_bytes();
    response.extend_from_slice(AFTER);
    let peeled = read(&pcap(&request, &response.repeat(2)), Limits::default());
    assert!(after_is_read(&peeled));
    let flooded = peeled
        .payloads
        .iter()
        .find(|p| p.meta_value("method") == Some("GET"))
        .expect("the first request");
    // Host and 9,999 of the flood make the 10,000 fields kept.
    assert_eq!(
        flooded.meta.iter().filter(|(k, _)| *k == "h").count(),
        9_999
    );
    let warning = flooded.meta_value("warning").unwrap_or_default();
    assert!(
        warning.contains("limit headers") && warning.contains("`--limit headers=N`"),
        "{warning}"
    );
    // Both requests are read: the second is past the flood.
    let requests = peeled
        .payloads
        .iter()
        .filter(|p| p.meta_value("method") == Some("GET"))
        .count();
    assert_eq!(requests, 2);
}

/// `n` requests, one HEADERS frame each, and responses to a quarter of them.
fn streams(n: u32) -> Vec<u8> {
    let mut client = Vec::new();
    let mut server = Vec::new();
    for i in 0..n {
        client.extend(frame(HEADERS, END_HEADERS | END_STREAM, 2 * i + 1, GET));
        if i % 4 == 0 {
            server.extend(frame(HEADERS, END_HEADERS | END_STREAM, 2 * i + 1, &[0x88]));
        }
    }
    h2(&client, &server)
}

/// Reading a connection of twice the streams takes about twice the steps: filing each message
/// once, finding its request by stream id, and the TCP segments each payload came from. (Finding
/// the request by scanning every message, as an earlier version did, made 100,000 streams take
/// minutes.)
#[test]
fn streams_are_read_in_linear_work() {
    let work = |n: u32| {
        let capture = streams(n);
        let before = wirelens::capture::work::steps();
        let peeled = read(&capture, Limits::default());
        let steps = wirelens::capture::work::steps() - before;
        let requests = peeled
            .payloads
            .iter()
            .filter(|p| p.meta_value("method") == Some("GET"))
            .count();
        assert_eq!(requests, n as usize);
        steps
    };
    let (one, two) = (work(2000), work(4000));
    let ratio = two as f64 / one as f64;
    assert!(
        (1.8..2.2).contains(&ratio),
        "{one} steps, then {two}: ×{ratio:.2}"
    );
}

/// The CLI reads the HPACK bomb of the issue (1 MB on the wire, 4 GB of fields) to its end.
#[test]
fn the_cli_reads_past_an_hpack_bomb() {
    let mut first = GET.to_vec();
    first.extend(literal(b"x-bomb", &[b'a'; 4000], true));
    let mut client = frame(HEADERS, END_STREAM, 1, &first);
    for i in 0..64 {
        let flags = if i == 63 { END_HEADERS } else { 0 };
        client.extend(frame(CONTINUATION, flags, 1, &[0xbe; 16_000]));
    }
    client.extend(frame(HEADERS, END_HEADERS | END_STREAM, 3, GET));
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("hpack-bomb.pcap");
    std::fs::File::create(&path)
        .and_then(|mut f| f.write_all(&h2(&client, &json_response(3))))
        .expect("write");
    let run = crate::common::run_wirelens(&["inspect"], &path);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.contains("warning:") && run.stdout.contains("`--limit header-list=N`"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains(".after  true"), "{}", run.stdout);
}

const WS_REQUEST: &[u8] = b"GET /chat HTTP/1.1\r\nHost: example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n";
const WS_RESPONSE: &[u8] = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n";

/// A server's WebSocket frame (unmasked); `length` overrides the length field.
fn ws(fin: bool, rsv1: bool, opcode: u8, payload: &[u8], length: Option<u64>) -> Vec<u8> {
    let b0 = if fin { 0x80 } else { 0 } | if rsv1 { 0x40 } else { 0 } | opcode;
    let n = length.unwrap_or(payload.len() as u64);
    let mut out = vec![b0];
    if n < 126 {
        out.push(n as u8);
    } else if n < 1 << 16 {
        out.push(126);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(127);
        out.extend_from_slice(&n.to_be_bytes());
    }
    out.extend_from_slice(payload);
    out
}

/// `total` zero bytes as raw DEFLATE, flushed as permessage-deflate sends them (tail left off).
fn deflated_zeros(total: usize) -> Vec<u8> {
    let mut c = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    let chunk = vec![0u8; 1 << 20];
    for _ in 0..total >> 20 {
        c.write_all(&chunk).expect("into a Vec");
    }
    c.flush().expect("sync flush");
    let mut out = c.get_ref().clone();
    out.truncate(out.len().saturating_sub(4));
    out
}

/// A message inflating to 64 MiB under a 4 MiB limit: that message ends at the limit with a
/// warning naming it, and the message after it is read. (The issue's 2 GiB message is
/// `scripts/capture-bombs.py`'s, run by `scripts/hostile-limits.sh`.)
#[test]
fn a_permessage_deflate_bomb_ends_its_message_only() {
    let mut server = WS_RESPONSE.to_vec();
    server.extend(ws(true, true, 2, &deflated_zeros(64 << 20), None));
    server.extend(ws(true, false, 1, AFTER, None));
    let peeled = read(
        &pcap(WS_REQUEST, &server),
        Limits {
            max_decompressed: 4 << 20,
            ..Limits::default()
        },
    );
    let warning = warning_naming(&peeled, "decompressed");
    assert!(warning.contains("(frame "), "{warning}");
    assert!(after_is_read(&peeled), "{:?}", peeled.warnings);
    let bomb = peeled
        .payloads
        .iter()
        .find(|p| p.cut.is_some())
        .expect("the bomb, cut short");
    assert!(bomb.bytes.len() <= 4 << 20);
}

/// A frame claiming 2^63 bytes, and a message in 20,000 one-byte fragments under a frame limit
/// of 10,000: no allocation by the claim, the client's message still read.
#[test]
fn websocket_length_lies_and_fragment_floods() {
    let mut client = WS_REQUEST.to_vec();
    // The client's message, masked with a zero key.
    client.extend([0x81, 0x80 | AFTER.len() as u8, 0, 0, 0, 0]);
    client.extend_from_slice(AFTER);
    let mut server = WS_RESPONSE.to_vec();
    server.extend(ws(true, false, 2, b"tiny", Some(1 << 63)));
    let peeled = read(&pcap(&client, &server), Limits::default());
    assert!(
        peeled
            .warnings
            .iter()
            .any(|w| w.contains("claims 9223372036854775808 bytes")),
        "{:?}",
        peeled.warnings
    );
    assert!(after_is_read(&peeled));

    let mut server = WS_RESPONSE.to_vec();
    server.extend(ws(false, false, 2, b"x", None));
    for _ in 0..20_000 {
        server.extend(ws(false, false, 0, b"x", None));
    }
    server.extend(ws(true, false, 0, b"x", None));
    let peeled = read(
        &pcap(&client, &server),
        Limits {
            max_frames: 10_000,
            ..Limits::default()
        },
    );
    warning_naming(&peeled, "frames");
    assert!(after_is_read(&peeled));
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(data).expect("into a Vec");
    gz.finish().expect("gzip")
}

/// A gzip body on an HTTP/2 stream and a compressed gRPC frame, each 32 MiB of zeros under a
/// 1 MiB limit; and a DATA frame announcing 16 MB with 5 bytes behind it. The streams after
/// each are read.
#[test]
fn http2_decompression_bombs_and_length_lies() {
    let zeros = gzip(&vec![0u8; 32 << 20]);
    let limits = Limits {
        max_decompressed: 1 << 20,
        ..Limits::default()
    };
    let mut block = vec![0x88];
    block.extend(literal(b"content-type", b"application/json", false));
    block.extend(literal(b"content-encoding", b"gzip", false));
    let mut server = frame(HEADERS, END_HEADERS, 1, &block);
    for chunk in zeros.chunks(16_384) {
        server.extend(frame(DATA, 0, 1, chunk));
    }
    server.extend(frame(DATA, END_STREAM, 1, &[]));
    server.extend(json_response(3));
    let mut client = frame(HEADERS, END_HEADERS | END_STREAM, 1, GET);
    client.extend(frame(HEADERS, END_HEADERS | END_STREAM, 3, GET));
    let peeled = read(&h2(&client, &server), limits);
    warning_naming(&peeled, "decompressed");
    assert!(after_is_read(&peeled), "{:?}", peeled.warnings);

    let grpc = literal(b"content-type", b"application/grpc", false);
    let mut request = vec![0x83, 0x86];
    request.extend(literal(b":path", b"/pkg.Svc/Get", false));
    request.extend_from_slice(&grpc);
    let mut bomb_request = request.clone();
    bomb_request.extend(literal(b"grpc-encoding", b"gzip", false));
    let mut body = vec![1];
    body.extend_from_slice(&(zeros.len() as u32).to_be_bytes());
    body.extend_from_slice(&zeros);
    let mut client = frame(HEADERS, END_HEADERS, 1, &bomb_request);
    for chunk in body.chunks(16_384) {
        client.extend(frame(DATA, 0, 1, chunk));
    }
    client.extend(frame(DATA, END_STREAM, 1, &[]));
    client.extend(frame(HEADERS, END_HEADERS, 3, &request));
    client.extend(frame(DATA, END_STREAM, 3, &[0, 0, 0, 0, 2, 0x08, 0x01]));
    let peeled = read(&h2(&client, &[]), limits);
    assert!(
        peeled
            .error
            .as_ref()
            .is_some_and(|e| e.message.contains("overall limit"))
            || peeled.warnings.iter().any(|w| w.contains("overall limit")),
        "{:?} {:?}",
        peeled.error,
        peeled.warnings
    );
    assert!(
        peeled.payloads.iter().any(|p| p.bytes == [0x08, 0x01]),
        "the gRPC message after the bomb"
    );

    let mut client = frame(HEADERS, END_HEADERS, 1, GET);
    let mut lie = frame(DATA, 0, 1, b"short");
    lie[..3].copy_from_slice(&[0xff, 0xff, 0xff]);
    client.extend(lie);
    let peeled = read(&h2(&client, &json_response(1)), Limits::default());
    assert!(
        peeled
            .warnings
            .iter()
            .any(|w| w.contains("announces 16777215 bytes") && w.contains("(frame ")),
        "{:?}",
        peeled.warnings
    );
    assert!(after_is_read(&peeled));
}
