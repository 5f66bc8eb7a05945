//! pcap/pcapng extraction: real loopback captures (see tests/fixtures/capture/pcap/COMMANDS.md)
//! and crafted captures for the cases a real capture rarely shows on demand.

use std::net::SocketAddr;
use std::path::PathBuf;

use proptest::prelude::*;
use wirelens::capture::pcap::{
    extract, is_pcap, payloads, Capture, FileFormat, PcapLimits, Transport,
};
use wirelens::model::{Span, Timestamp};

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/capture/pcap")
        .join(name);
    std::fs::read(&path).expect("fixture present")
}

fn sample(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name);
    std::fs::read(&path).expect("sample present")
}

/// The body of an HTTP message: what follows the first blank line.
fn http_body(message: &[u8]) -> &[u8] {
    let at = message
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a blank line ends the header");
    &message[at + 4..]
}

fn meta<'a>(p: &'a wirelens::capture::pcap::Payload, key: &str) -> &'a str {
    p.meta
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
        .expect("meta key present")
}

fn addr(s: &str) -> SocketAddr {
    s.parse().expect("socket address")
}

// ---------------------------------------------------------------- real captures

fn check_http_json_capture(cap: &Capture) {
    assert_eq!(cap.packets, 24);
    assert!(cap.warnings.is_empty(), "{:?}", cap.warnings);
    assert_eq!(cap.linktypes, vec![1]);
    assert_eq!(cap.streams.len(), 2);
    let json = sample("user-profile.json");
    let msgpack = sample("user-profile.msgpack");
    for (stream, (path, body, client_port)) in cap.streams.iter().zip([
        ("/user-profile.json", &json, 34682),
        ("/user-profile.msgpack", &msgpack, 34698),
    ]) {
        assert_eq!(stream.protocol, Transport::Tcp);
        assert_eq!(stream.server, addr("127.0.0.1:18731"));
        assert_eq!(stream.client, addr(&format!("127.0.0.1:{client_port}")));
        let request = &stream.directions[0].bytes;
        assert!(request.starts_with(format!("GET {path} HTTP/1.1\r\n").as_bytes()));
        let response = &stream.directions[1].bytes;
        assert!(response.starts_with(b"HTTP/1.0 200 OK\r\n"));
        assert_eq!(http_body(response), &body[..]);
        assert_eq!(stream.directions[1].retransmitted, 0);
    }
    // The first response: headers in frame 6 (193 bytes), body in frame 8 (128 bytes).
    let resp = &cap.streams[0].directions[1];
    assert_eq!(resp.segments.len(), 2);
    assert_eq!(resp.segments[0].frame, 6);
    assert_eq!(resp.segments[0].span, Span::new(0, 193));
    assert_eq!(resp.segments[1].frame, 8);
    assert_eq!(resp.segments[1].span, Span::new(193, 321));
    let body_at = resp.bytes.len() - json.len();
    let carried: Vec<u64> = resp
        .segments_in(Span::new(body_at, resp.bytes.len()))
        .iter()
        .map(|s| s.frame)
        .collect();
    assert_eq!(carried, vec![8]);
    let t = resp.segments[1].time.expect("pcap frames have times");
    assert_eq!(t.seconds, 1_796_035_342);
    assert_eq!(t.nanos, 311_065_000);
    assert_eq!(
        cap.streams[0].directions[0].first_time(),
        Some(Timestamp {
            seconds: 1_796_035_342,
            nanos: 275_095_000
        })
    );
}

#[test]
fn pcap_http_two_streams_yield_the_sample_bodies() {
    let bytes = fixture("http-json.pcap");
    assert!(is_pcap(&bytes));
    let cap = extract(&bytes, &PcapLimits::default()).expect("a valid capture");
    assert_eq!(cap.format, FileFormat::Pcap);
    check_http_json_capture(&cap);

    let ps = payloads(&cap);
    assert_eq!(ps.len(), 4, "two directions of two streams");
    let p = &ps[1];
    assert_eq!(p.layers.len(), 2);
    assert_eq!(p.layers[0].name, "pcap");
    assert_eq!(p.layers[0].span, Span::new(0, bytes.len()));
    assert_eq!(p.layers[1].name, "TCP 127.0.0.1:18731 → 127.0.0.1:34682");
    assert!(
        p.layers[1].detail.contains("frames 6, 8"),
        "{}",
        p.layers[1].detail
    );
    assert!(p.layers[1].span.end <= bytes.len() && !p.layers[1].span.is_empty());
    assert_eq!(meta(p, "stream"), "0");
    assert_eq!(meta(p, "direction"), "server→client");
    assert_eq!(meta(p, "frames"), "6, 8");
    assert_eq!(
        meta(p, "first time"),
        Timestamp {
            seconds: 1_796_035_342,
            nanos: 310_700_000
        }
        .to_rfc3339()
    );
    assert_eq!(http_body(&p.bytes), &sample("user-profile.json")[..]);
    assert_eq!(meta(&ps[0], "direction"), "client→server");
    assert_eq!(meta(&ps[3], "stream"), "1");
    assert_eq!(http_body(&ps[3].bytes), &sample("user-profile.msgpack")[..]);
    assert_eq!(ps[0].hint, None);
}

#[test]
fn nanosecond_pcap_reads_like_the_microsecond_one() {
    let bytes = fixture("http-json-nsec.pcap");
    assert!(is_pcap(&bytes));
    let cap = extract(&bytes, &PcapLimits::default()).expect("a valid capture");
    check_http_json_capture(&cap);
}

#[test]
fn pcapng_from_tshark_yields_the_msgpack_body() {
    let bytes = fixture("http-msgpack.pcapng");
    assert!(is_pcap(&bytes));
    let cap = extract(&bytes, &PcapLimits::default()).expect("a valid capture");
    assert_eq!(cap.format, FileFormat::Pcapng);
    assert_eq!(cap.packets, 12);
    assert!(cap.warnings.is_empty(), "{:?}", cap.warnings);
    assert_eq!(cap.streams.len(), 1);
    let s = &cap.streams[0];
    assert_eq!(s.client, addr("127.0.0.1:44008"));
    assert_eq!(s.server, addr("127.0.0.1:18733"));
    assert!(s.directions[0]
        .bytes
        .starts_with(b"GET /user-profile.msgpack HTTP/1.1\r\n"));
    assert_eq!(
        http_body(&s.directions[1].bytes),
        &sample("user-profile.msgpack")[..]
    );
    // pcapng here has nanosecond resolution (if_tsresol = 9).
    let body_seg = s.directions[1].segments.last().expect("segments");
    assert_eq!(body_seg.frame, 8);
    assert_eq!(
        body_seg.time,
        Some(Timestamp {
            seconds: 1_796_035_370,
            nanos: 137_811_740
        })
    );
    let ps = payloads(&cap);
    assert_eq!(ps.len(), 2);
    assert_eq!(ps[1].layers[0].name, "pcapng");
    assert_eq!(meta(&ps[1], "frames"), "6, 8");
}

#[test]
fn udp_over_linux_cooked_v2_gives_one_payload_per_datagram() {
    let bytes = fixture("udp-sll2.pcap");
    let cap = extract(&bytes, &PcapLimits::default()).expect("a valid capture");
    assert_eq!(cap.linktypes, vec![276]);
    assert_eq!(cap.streams.len(), 1);
    let s = &cap.streams[0];
    assert_eq!(s.protocol, Transport::Udp);
    assert_eq!(s.server, addr("127.0.0.1:18734"));
    assert_eq!(s.directions[0].segments.len(), 2);
    assert!(s.directions[1].bytes.is_empty());
    let ps = payloads(&cap);
    assert_eq!(ps.len(), 2);
    assert_eq!(ps[0].bytes, sample("user-profile.json"));
    assert_eq!(ps[1].bytes, sample("user-profile.msgpack"));
    assert_eq!(meta(&ps[0], "frames"), "1");
    assert_eq!(meta(&ps[1], "frames"), "2");
    assert!(ps[1].layers[1].name.starts_with("UDP 127.0.0.1:"));
    assert_eq!(
        meta(&ps[1], "first time"),
        Timestamp {
            seconds: 1_796_035_385,
            nanos: 373_940_000
        }
        .to_rfc3339()
    );
}

#[test]
fn every_cut_of_every_fixture_is_handled() {
    for name in [
        "http-json.pcap",
        "http-json-nsec.pcap",
        "http-msgpack.pcapng",
        "udp-sll2.pcap",
    ] {
        let bytes = fixture(name);
        let full = payloads(&extract(&bytes, &PcapLimits::default()).expect("valid"));
        let mut cut_with_warning = 0;
        for len in (0..bytes.len()).step_by(97) {
            let cut = &bytes[..len];
            match extract(cut, &PcapLimits::default()) {
                Ok(cap) => {
                    if !cap.warnings.is_empty() {
                        cut_with_warning += 1;
                    }
                    // Whatever came out is a prefix of what the whole file gives.
                    for p in payloads(&cap) {
                        assert!(
                            full.iter().any(|f| f.bytes.starts_with(&p.bytes)
                                || p.layers[1].name.starts_with("UDP")),
                            "{name} cut at {len}: a payload that is no prefix"
                        );
                    }
                }
                Err(e) => assert!(len < 28, "{name} cut at {len}: {e}"),
            }
        }
        assert!(cut_with_warning > 0, "{name}: cuts must be reported");
    }
}

#[test]
fn not_a_capture_is_an_error() {
    assert!(!is_pcap(b"{\"a\": 1}"));
    assert!(!is_pcap(b""));
    let e = extract(b"GET / HTTP/1.1\r\n\r\n", &PcapLimits::default()).expect_err("not pcap");
    assert_eq!(e.offset, 0);
    assert!(e.to_string().starts_with("error in pcap at byte 0: "));
    assert!(e.extracted.is_empty());
}

#[test]
fn broken_pcapng_block_length_is_an_error_with_what_came_before() {
    let mut bytes = fixture("http-msgpack.pcapng");
    // Find the 8th enhanced packet block (frame 8) and spoil its length.
    let mut at = 0;
    let mut epb = 0;
    let mut spoiled = None;
    while at + 8 <= bytes.len() {
        let ty = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"));
        let len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().expect("4")) as usize;
        if ty == 6 {
            epb += 1;
            if epb == 8 {
                bytes[at + 4..at + 8].copy_from_slice(&7u32.to_le_bytes());
                spoiled = Some(at + 4);
                break;
            }
        }
        at += len;
    }
    let spoiled = spoiled.expect("eight packet blocks");
    let e = extract(&bytes, &PcapLimits::default()).expect_err("bad block length");
    assert_eq!(e.layer, "pcapng");
    assert_eq!(e.offset, spoiled);
    // The request (frame 4) and the response headers (frame 6) were read before the fault.
    assert_eq!(e.extracted.len(), 2);
    assert!(e.extracted[1].bytes.starts_with(b"HTTP/1.0 200 OK"));
}

// ---------------------------------------------------------------- crafted captures

/// Writes classic little-endian microsecond pcap files.
struct PcapWriter {
    bytes: Vec<u8>,
}

impl PcapWriter {
    fn new(linktype: u32) -> PcapWriter {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        bytes.extend_from_slice(&2u16.to_le_bytes());
        bytes.extend_from_slice(&4u16.to_le_bytes());
        bytes.extend_from_slice(&[0; 8]);
        bytes.extend_from_slice(&65535u32.to_le_bytes());
        bytes.extend_from_slice(&linktype.to_le_bytes());
        PcapWriter { bytes }
    }

    fn packet(&mut self, usec: u32, data: &[u8], caplen: usize) -> &mut Self {
        self.bytes
            .extend_from_slice(&1_700_000_000u32.to_le_bytes());
        self.bytes.extend_from_slice(&usec.to_le_bytes());
        self.bytes.extend_from_slice(&(caplen as u32).to_le_bytes());
        self.bytes
            .extend_from_slice(&(data.len() as u32).to_le_bytes());
        self.bytes.extend_from_slice(&data[..caplen]);
        self
    }
}

const SYN: u8 = 0x02;
const ACK: u8 = 0x10;
const FIN: u8 = 0x01;
const RST: u8 = 0x04;
const PSH: u8 = 0x08;

fn tcp(sport: u16, dport: u16, seq: u32, flags: u8, payload: &[u8]) -> Vec<u8> {
    let mut t = Vec::new();
    t.extend_from_slice(&sport.to_be_bytes());
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&seq.to_be_bytes());
    t.extend_from_slice(&0u32.to_be_bytes());
    t.push(5 << 4);
    t.push(flags);
    t.extend_from_slice(&[0xff, 0xff, 0, 0, 0, 0]);
    t.extend_from_slice(payload);
    t
}

fn udp(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut u = Vec::new();
    u.extend_from_slice(&sport.to_be_bytes());
    u.extend_from_slice(&dport.to_be_bytes());
    u.extend_from_slice(&((payload.len() + 8) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(payload);
    u
}

fn ipv4(src: [u8; 4], dst: [u8; 4], proto: u8, body: &[u8]) -> Vec<u8> {
    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&((body.len() + 20) as u16).to_be_bytes());
    ip.extend_from_slice(&[0, 0, 0x40, 0, 64, proto, 0, 0]);
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    ip.extend_from_slice(body);
    ip
}

fn ipv6(src: [u8; 16], dst: [u8; 16], proto: u8, body: &[u8]) -> Vec<u8> {
    let mut ip = vec![0x60, 0, 0, 0];
    ip.extend_from_slice(&(body.len() as u16).to_be_bytes());
    ip.push(proto);
    ip.push(64);
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    ip.extend_from_slice(body);
    ip
}

fn ether(ethertype: u16, vlans: &[u16], ip: &[u8]) -> Vec<u8> {
    let mut e = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
    for &v in vlans {
        e.extend_from_slice(&0x8100u16.to_be_bytes());
        e.extend_from_slice(&v.to_be_bytes());
    }
    e.extend_from_slice(&ethertype.to_be_bytes());
    e.extend_from_slice(ip);
    while e.len() < 60 {
        e.push(0); // Ethernet padding: must never become payload
    }
    e
}

const C: [u8; 4] = [10, 0, 0, 1];
const S: [u8; 4] = [10, 0, 0, 2];

fn c2s(seq: u32, flags: u8, payload: &[u8]) -> Vec<u8> {
    ether(
        0x0800,
        &[],
        &ipv4(C, S, 6, &tcp(51234, 80, seq, flags, payload)),
    )
}

fn s2c(seq: u32, flags: u8, payload: &[u8]) -> Vec<u8> {
    ether(
        0x0800,
        &[],
        &ipv4(S, C, 6, &tcp(80, 51234, seq, flags, payload)),
    )
}

fn full(w: &mut PcapWriter, usec: u32, frame: Vec<u8>) {
    let n = frame.len();
    w.packet(usec, &frame, n);
}

#[test]
fn out_of_order_retransmitted_and_wrapping_stream_reassembles_exactly() {
    let original: Vec<u8> = (0..200u8).collect();
    let isn = u32::MAX - 50; // data crosses the 2^32 wrap at stream byte 50
    let seq = |off: usize| isn.wrapping_add(1).wrapping_add(off as u32);
    let mut w = PcapWriter::new(1);
    full(&mut w, 1, c2s(isn, SYN, b""));
    full(&mut w, 2, s2c(7000, SYN | ACK, b""));
    full(&mut w, 3, c2s(seq(0), ACK, b""));
    // Segments: [0,40) [40,90) [90,150) [150,200), sent as 2nd, 1st, 4th, 3rd, then
    // a retransmission of [40,90) and an overlapping [30,100), then the 1st again.
    full(&mut w, 4, c2s(seq(40), ACK | PSH, &original[40..90]));
    full(&mut w, 5, c2s(seq(0), ACK | PSH, &original[0..40]));
    full(&mut w, 6, c2s(seq(150), ACK | PSH, &original[150..200]));
    full(&mut w, 7, c2s(seq(40), ACK | PSH, &original[40..90]));
    full(&mut w, 8, c2s(seq(90), ACK | PSH, &original[90..150]));
    full(&mut w, 9, c2s(seq(30), ACK | PSH, &original[30..100]));
    full(&mut w, 10, c2s(seq(0), ACK | PSH, &original[0..40]));
    full(&mut w, 11, s2c(7001, ACK | PSH, b"ok"));
    full(&mut w, 12, c2s(seq(200), FIN | ACK, b""));
    full(&mut w, 13, s2c(7003, FIN | ACK, b""));
    let cap = extract(&w.bytes, &PcapLimits::default()).expect("valid");
    assert!(cap.warnings.is_empty(), "{:?}", cap.warnings);
    assert_eq!(cap.streams.len(), 1);
    let s = &cap.streams[0];
    assert_eq!(s.client, addr("10.0.0.1:51234"));
    assert_eq!(s.server, addr("10.0.0.2:80"));
    let d = &s.directions[0];
    assert_eq!(d.bytes, original);
    // Where copies overlap, the one starting earliest in the stream wins: frame 9's [30,100)
    // supplies 40..100, so frames 4 and 7 add nothing and frame 8 only 100..150.
    assert_eq!(d.retransmitted, 5);
    let frames: Vec<(u64, Span)> = d.segments.iter().map(|s| (s.frame, s.span)).collect();
    assert_eq!(
        frames,
        vec![
            (5, Span::new(0, 40)),
            (9, Span::new(40, 100)),
            (8, Span::new(100, 150)),
            (6, Span::new(150, 200)),
        ]
    );
    assert_eq!(s.directions[1].bytes, b"ok");
    let ps = payloads(&cap);
    assert_eq!(meta(&ps[0], "frames"), "5–6, 8–9");
}

#[test]
fn a_lost_segment_cuts_the_direction_with_a_warning() {
    let mut w = PcapWriter::new(1);
    full(&mut w, 1, c2s(1000, SYN, b""));
    full(&mut w, 2, c2s(1001, ACK, b"abc"));
    full(&mut w, 3, c2s(1007, ACK, b"ghi")); // "def" was lost
    let cap = extract(&w.bytes, &PcapLimits::default()).expect("valid");
    let d = &cap.streams[0].directions[0];
    assert_eq!(
        d.contiguous(),
        b"abc",
        "what a parser that cannot skip a gap reads"
    );
    assert_eq!(d.bytes, b"abcghi", "the bytes after the gap are kept");
    assert_eq!(
        d.gaps,
        [wirelens::capture::pcap::Gap {
            at: 3,
            missing: 3,
            frame: 3
        }]
    );
    assert_eq!(d.runs(), [Span::new(0, 3), Span::new(3, 6)]);
    assert_eq!(cap.warnings.len(), 1, "{:?}", cap.warnings);
    assert!(cap.warnings[0].contains("3 bytes are missing after stream byte 3"));
    assert!(cap.warnings[0].contains("frame 3"));
}

#[test]
fn without_a_syn_the_stream_starts_at_the_lowest_sequence_seen() {
    let mut w = PcapWriter::new(1);
    full(&mut w, 1, s2c(500, ACK, b"world"));
    full(&mut w, 2, s2c(495, ACK, b"hello"));
    let cap = extract(&w.bytes, &PcapLimits::default()).expect("valid");
    let s = &cap.streams[0];
    assert_eq!(
        s.server,
        addr("10.0.0.2:80"),
        "the lower port is taken for the server"
    );
    assert_eq!(s.directions[1].bytes, b"helloworld");
}

#[test]
fn port_reuse_after_fin_or_rst_starts_a_new_stream() {
    let mut w = PcapWriter::new(1);
    full(&mut w, 1, c2s(100, SYN, b""));
    full(&mut w, 2, c2s(101, ACK, b"first"));
    full(&mut w, 3, c2s(106, FIN | ACK, b""));
    full(&mut w, 4, s2c(9000, RST, b""));
    full(&mut w, 5, c2s(100, SYN, b"")); // same ports, even the same ISN
    full(&mut w, 6, c2s(101, ACK, b"second"));
    full(&mut w, 7, c2s(77, SYN, b"")); // a third connection with a fresh ISN
    full(&mut w, 8, c2s(78, ACK, b"third"));
    full(&mut w, 9, c2s(78, ACK, b"third")); // retransmission
    let cap = extract(&w.bytes, &PcapLimits::default()).expect("valid");
    let got: Vec<&[u8]> = cap
        .streams
        .iter()
        .map(|s| s.directions[0].bytes.as_slice())
        .collect();
    assert_eq!(got, vec![&b"first"[..], b"second", b"third"]);
    assert!(cap.warnings.is_empty(), "{:?}", cap.warnings);
}

#[test]
fn a_retransmitted_syn_keeps_the_connection() {
    let mut w = PcapWriter::new(1);
    full(&mut w, 1, c2s(100, SYN, b""));
    full(&mut w, 2, c2s(100, SYN, b""));
    full(&mut w, 3, c2s(101, ACK, b"x"));
    let cap = extract(&w.bytes, &PcapLimits::default()).expect("valid");
    assert_eq!(cap.streams.len(), 1);
    assert_eq!(cap.streams[0].directions[0].bytes, b"x");
}

#[test]
fn data_after_fin_is_not_part_of_the_stream() {
    let mut w = PcapWriter::new(1);
    full(&mut w, 1, c2s(100, SYN, b""));
    full(&mut w, 2, c2s(101, ACK | FIN, b"done"));
    full(&mut w, 3, c2s(105, ACK, b"junk"));
    let cap = extract(&w.bytes, &PcapLimits::default()).expect("valid");
    assert_eq!(cap.streams[0].directions[0].bytes, b"done");
}

#[test]
fn a_truncated_packet_keeps_its_captured_bytes_with_a_warning() {
    let mut w = PcapWriter::new(1);
    full(&mut w, 1, c2s(100, SYN, b""));
    let frame = c2s(101, ACK, b"0123456789");
    let caplen = frame.len() - 4; // the last four payload bytes were not captured
    w.packet(2, &frame, caplen);
    let cap = extract(&w.bytes, &PcapLimits::default()).expect("valid");
    assert_eq!(cap.streams[0].directions[0].bytes, b"012345");
    assert_eq!(cap.warnings.len(), 1, "{:?}", cap.warnings);
    assert!(
        cap.warnings[0].contains("first: frame 2"),
        "{:?}",
        cap.warnings
    );
}

#[test]
fn vlan_ipv6_and_the_other_link_types_reach_the_payload() {
    let v6a: [u8; 16] = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    let v6b: [u8; 16] = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
    let dgram4 = ipv4(C, S, 17, &udp(5000, 53, b"v4"));
    // IPv6 with a hop-by-hop extension header in front of UDP.
    let mut hop = vec![17, 0, 0, 0, 0, 0, 0, 0];
    hop.extend_from_slice(&udp(5000, 53, b"v6"));
    let dgram6 = ipv6(v6a, v6b, 0, &hop);

    let mut eth = PcapWriter::new(1);
    full(&mut eth, 1, ether(0x0800, &[100, 200], &dgram4));
    full(&mut eth, 2, ether(0x86dd, &[7], &dgram6));

    let mut raw = PcapWriter::new(101);
    full(&mut raw, 1, dgram4.clone());
    full(&mut raw, 2, dgram6.clone());

    let mut sll = PcapWriter::new(113);
    let mut f = vec![0u8; 14];
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    f.extend_from_slice(&dgram4);
    full(&mut sll, 1, f);

    let mut null = PcapWriter::new(0);
    let mut f = 2u32.to_le_bytes().to_vec();
    f.extend_from_slice(&dgram4);
    full(&mut null, 1, f);
    let mut f = 30u32.to_le_bytes().to_vec();
    f.extend_from_slice(&dgram6);
    full(&mut null, 2, f);

    for (name, w, expect) in [
        ("ethernet+vlan", &eth, vec![&b"v4"[..], b"v6"]),
        ("raw", &raw, vec![&b"v4"[..], b"v6"]),
        ("sll", &sll, vec![&b"v4"[..]]),
        ("null", &null, vec![&b"v4"[..], b"v6"]),
    ] {
        let cap = extract(&w.bytes, &PcapLimits::default()).expect("valid");
        assert!(cap.warnings.is_empty(), "{name}: {:?}", cap.warnings);
        let got: Vec<Vec<u8>> = payloads(&cap)
            .into_iter()
            .map(|p| p.bytes.to_vec())
            .collect();
        assert_eq!(got, expect, "{name}");
    }
}

#[test]
fn an_ip_fragment_without_the_rest_is_reported_not_guessed() {
    let mut frag = ipv4(C, S, 17, &udp(5000, 53, b"part"));
    frag[6] = 0x20; // more fragments
    let mut w = PcapWriter::new(101);
    full(&mut w, 1, frag);
    let cap = extract(&w.bytes, &PcapLimits::default()).expect("valid");
    assert!(cap.streams.is_empty());
    assert_eq!(cap.warnings.len(), 1, "{:?}", cap.warnings);
    assert!(
        cap.warnings[0].contains("first fragment in frame 1)")
            && cap.warnings[0].contains("12 bytes in 1 fragment(s) never completed"),
        "{:?}",
        cap.warnings
    );
}

/// `body` cut at `cuts` (multiples of 8) into IPv4 fragments, in the order `order` gives.
fn fragments(body: &[u8], cuts: &[usize], order: &[usize]) -> Vec<Vec<u8>> {
    let mut bounds = vec![0];
    bounds.extend_from_slice(cuts);
    bounds.push(body.len());
    let pieces: Vec<Vec<u8>> = bounds
        .windows(2)
        .map(|w| {
            let mut ip = ipv4(C, S, 17, &body[w[0]..w[1]]);
            let more = if w[1] < body.len() { 0x2000 } else { 0 };
            let flags = (more | (w[0] / 8)) as u16;
            ip[4..6].copy_from_slice(&0x4242u16.to_be_bytes());
            ip[6..8].copy_from_slice(&flags.to_be_bytes());
            ip
        })
        .collect();
    order.iter().map(|&i| pieces[i].clone()).collect()
}

#[test]
fn ipv4_fragments_are_reassembled_in_any_order() {
    let payload: Vec<u8> = (0..200u8).collect();
    let dgram = udp(5000, 53, &payload);
    for order in [[0, 1, 2], [2, 0, 1], [1, 2, 0]] {
        let mut w = PcapWriter::new(101);
        for (i, f) in fragments(&dgram, &[64, 136], &order)
            .into_iter()
            .enumerate()
        {
            full(&mut w, i as u32 + 1, f);
        }
        let cap = extract(&w.bytes, &PcapLimits::default()).expect("valid");
        assert!(cap.warnings.is_empty(), "{order:?}: {:?}", cap.warnings);
        let got: Vec<Vec<u8>> = payloads(&cap)
            .into_iter()
            .map(|p| p.bytes.to_vec())
            .collect();
        assert_eq!(got, vec![payload.clone()], "{order:?}");
    }
}

#[test]
fn tcpdump_capture_of_a_fragmented_udp_datagram_gives_the_sample() {
    let bytes = fixture("udp-fragments.pcap");
    let cap = extract(&bytes, &PcapLimits::default()).expect("valid");
    assert!(cap.warnings.is_empty(), "{:?}", cap.warnings);
    let ps = payloads(&cap);
    assert_eq!(ps.len(), 1);
    assert_eq!(ps[0].bytes, sample("user-profile.msgpack"));
    assert!(
        ps[0].layers[1].name.starts_with("UDP 127.0.0.1:40000"),
        "{:?}",
        ps[0].layers
    );
}

#[test]
fn limits_truncate_with_a_warning() {
    let mut w = PcapWriter::new(1);
    full(&mut w, 1, c2s(100, SYN, b""));
    full(&mut w, 2, c2s(101, ACK, b"12345"));
    full(&mut w, 3, c2s(106, ACK, b"67890"));
    full(&mut w, 4, c2s(111, ACK | FIN, b""));
    let limits = PcapLimits {
        max_stream_bytes: 7,
        ..PcapLimits::default()
    };
    let cap = extract(&w.bytes, &limits).expect("valid");
    assert_eq!(cap.streams[0].directions[0].bytes, b"12345");
    assert!(cap.warnings[0].contains("limit of 7 payload bytes"));

    let limits = PcapLimits {
        max_packets: 2,
        ..PcapLimits::default()
    };
    let cap = extract(&w.bytes, &limits).expect("valid");
    assert_eq!(cap.packets, 2);
    assert_eq!(cap.streams[0].directions[0].bytes, b"12345");
    assert!(cap.warnings[0].contains("limit of 2 packets"));
}

#[test]
fn tcp_segments_overlapping_with_different_bytes_are_reported() {
    let mut w = PcapWriter::new(1);
    full(&mut w, 1, c2s(1000, SYN, b""));
    full(&mut w, 2, c2s(1001, ACK, b"0123456789"));
    // A copy of stream bytes 4..10 that disagrees on 6..8, then a faithful retransmission.
    full(&mut w, 3, c2s(1005, ACK, b"45XY89abcd"));
    full(&mut w, 4, c2s(1001, ACK, b"0123456789"));
    // Covers bytes 8..20 (frames 2 and 3 kept), differing only in frame 3's part.
    full(&mut w, 5, c2s(1009, ACK, b"89abZdefghij"));
    let cap = extract(&w.bytes, &PcapLimits::default()).expect("valid");
    // The first copies are kept: frame 2's 0..10, frame 3's 10..14, frame 5's 14..20.
    assert_eq!(cap.streams[0].directions[0].bytes, b"0123456789abcdefghij");
    assert_eq!(
        cap.warnings,
        [
            "frames 2 and 3: TCP segments of stream 0 (TCP 10.0.0.1:51234 → 10.0.0.2:80) client→server overlap at stream bytes 4..10 with different bytes; the first (frame 2) is kept",
            "frames 3 and 5: TCP segments of stream 0 (TCP 10.0.0.1:51234 → 10.0.0.2:80) client→server overlap at stream bytes 10..14 with different bytes; the first (frame 3) is kept",
        ]
    );
}

#[test]
fn overlapping_ipv4_fragments_with_different_bytes_are_reported() {
    let payload: Vec<u8> = (0..64u8).collect();
    let dgram = udp(5000, 53, &payload);
    // Three fragments of the 72-byte datagram: 0..32, 24..48 (a teardrop overlap), 48..72.
    let fragment = |from: usize, to: usize| {
        let mut ip = ipv4(C, S, 17, &dgram[from..to]);
        let more = if to < dgram.len() { 0x2000 } else { 0 };
        ip[4..6].copy_from_slice(&0x1c46u16.to_be_bytes());
        ip[6..8].copy_from_slice(&((more | (from / 8)) as u16).to_be_bytes());
        ip
    };
    let (head, mut overlap, tail) = (fragment(0, 32), fragment(24, 48), fragment(48, 72));
    // The overlap with equal bytes is silent.
    let mut w = PcapWriter::new(101);
    full(&mut w, 1, head.clone());
    full(&mut w, 2, overlap.clone());
    full(&mut w, 3, tail.clone());
    let cap = extract(&w.bytes, &PcapLimits::default()).expect("valid");
    assert!(cap.warnings.is_empty(), "{:?}", cap.warnings);
    assert_eq!(payloads(&cap)[0].bytes, payload);
    // Datagram byte 28 differs from the first fragment's copy: warned, the first kept. Byte 47
    // is only in this fragment, so its changed value is the datagram's.
    let last = overlap.len() - 1;
    overlap[20 + 4] ^= 0xff;
    overlap[last] ^= 0xff;
    let mut w = PcapWriter::new(101);
    full(&mut w, 1, head);
    full(&mut w, 2, overlap);
    full(&mut w, 3, tail);
    let cap = extract(&w.bytes, &PcapLimits::default()).expect("valid");
    assert_eq!(
        cap.warnings,
        [
            "frames 1 and 2: IPv4 fragments of datagram 10.0.0.1 → 10.0.0.2 (id 0x1c46) overlap at bytes 24..32 with different bytes; the first (frame 1) is kept",
        ]
    );
    let mut expected = payload.clone();
    expected[47 - 8] ^= 0xff;
    assert_eq!(payloads(&cap)[0].bytes, expected);
}

/// A client direction carried in every other frame of 2,000 (the server's in the rest): the TCP
/// layer's detail stays short, and the payload's `frames` meta has every frame.
#[test]
fn a_stream_of_alternating_frames_has_a_short_description() {
    let mut w = PcapWriter::new(1);
    let mut expected = Vec::new();
    for n in 0..1000u32 {
        full(&mut w, 2 * n, c2s(1000 + 2 * n, ACK, b"ab"));
        full(&mut w, 2 * n + 1, s2c(9000 + n, ACK, b"c"));
        expected.push((2 * n + 1).to_string());
    }
    let cap = extract(&w.bytes, &PcapLimits::default()).expect("valid");
    assert!(cap.warnings.is_empty(), "{:?}", cap.warnings);
    let ps = payloads(&cap);
    assert_eq!(ps.len(), 2);
    assert_eq!(ps[0].bytes.len(), 2000);
    assert_eq!(meta(&ps[0], "frames"), expected.join(", "));
    for p in &ps {
        let detail = &p.layers[1].detail;
        assert!(
            detail.chars().count() <= 120,
            "{} chars: {detail}",
            detail.len()
        );
        assert!(detail.ends_with("… (1000 frames in 1000 runs)"), "{detail}");
    }
    assert!(
        ps[0].layers[1]
            .detail
            .starts_with("stream 0, client→server, frames 1, 3, 5, "),
        "{}",
        ps[0].layers[1].detail
    );
}

#[test]
fn big_endian_pcap_is_read() {
    // A big-endian microsecond header, Ethernet, one UDP packet.
    let frame = ether(0x0800, &[], &ipv4(C, S, 17, &udp(5000, 53, b"be")));
    let mut b = Vec::new();
    b.extend_from_slice(&0xa1b2_c3d4u32.to_be_bytes());
    b.extend_from_slice(&[
        0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 0, 0, 0, 1,
    ]);
    b.extend_from_slice(&1_700_000_000u32.to_be_bytes());
    b.extend_from_slice(&250_000u32.to_be_bytes());
    b.extend_from_slice(&(frame.len() as u32).to_be_bytes());
    b.extend_from_slice(&(frame.len() as u32).to_be_bytes());
    b.extend_from_slice(&frame);
    assert!(is_pcap(&b));
    let cap = extract(&b, &PcapLimits::default()).expect("valid");
    let ps = payloads(&cap);
    assert_eq!(ps[0].bytes, b"be");
    assert_eq!(meta(&ps[0], "first time"), "2023-11-14T22:13:20.250Z");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn random_records_after_a_pcap_header_never_panic(
        linktype in prop::sample::select(vec![0u32, 1, 101, 113, 228, 229, 276, 9999]),
        body in prop::collection::vec(any::<u8>(), 0..600),
    ) {
        let mut w = PcapWriter::new(linktype);
        w.bytes.extend_from_slice(&body);
        let _ = extract(&w.bytes, &PcapLimits::default());
    }

    #[test]
    fn mutated_fixtures_never_panic(
        which in 0usize..3,
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
    ) {
        let name = ["http-json.pcap", "http-msgpack.pcapng", "udp-sll2.pcap"][which];
        let mut bytes = fixture(name);
        for (i, v) in flips {
            let at = i.index(bytes.len());
            bytes[at] = v;
        }
        if let Ok(cap) = extract(&bytes, &PcapLimits::default()) {
            for p in payloads(&cap) {
                prop_assert!(p.bytes.len() <= bytes.len());
            }
        }
    }

    #[test]
    fn random_packets_with_valid_headers_never_panic(
        segs in prop::collection::vec(
            (any::<u32>(), any::<u8>(), prop::collection::vec(any::<u8>(), 0..40), any::<bool>()),
            0..30,
        ),
    ) {
        let mut w = PcapWriter::new(1);
        for (i, (seq, flags, payload, dir)) in segs.iter().enumerate() {
            let f = if *dir { c2s(*seq, *flags, payload) } else { s2c(*seq, *flags, payload) };
            let n = f.len();
            w.packet(i as u32, &f, n);
        }
        let cap = extract(&w.bytes, &PcapLimits::default()).expect("valid");
        for s in &cap.streams {
            for d in &s.directions {
                let mut at = 0;
                for seg in &d.segments {
                    prop_assert_eq!(seg.span.start, at);
                    at = seg.span.end;
                }
                prop_assert_eq!(at, d.bytes.len());
            }
        }
    }
}

// ---------------------------------------------------------------- captures with nothing to decode

/// The best layer reading of a fixture, which must be its reading as a capture.
fn best_reading(name: &str) -> wirelens::capture::LayerReading {
    let readings = wirelens::capture::peel_readings(
        fixture(name),
        &wirelens::codec::DecodeOptions::default(),
        None,
    );
    let best = readings.into_iter().next().expect("at least one reading");
    assert!(best.peeled.capture.is_some(), "{name}: read as a capture");
    best
}

#[test]
fn captures_without_payloads_say_why_and_outrank_the_raw_bytes() {
    for (name, why) in [
        ("empty.pcapng", "0 packets: the capture is empty"),
        (
            "handshake-only.pcap",
            "3 packets, TCP handshake only, no application data",
        ),
        (
            "pktap.pcap",
            "link type 258 (PKTAP) is not supported: 4 packets skipped",
        ),
    ] {
        let best = best_reading(name);
        assert!(best.peeled.payloads.is_empty(), "{name}");
        assert_eq!(best.format, None, "{name}: no format guessed");
        let summary = best.peeled.capture.as_ref().expect("a capture summary");
        assert_eq!(summary.describe(), why, "{name}");
        assert!(
            best.reasons.iter().any(|r| r.contains(why)),
            "{name}: {:?}",
            best.reasons
        );
    }
}

#[test]
fn unsupported_link_types_are_counted_once_not_warned_per_frame() {
    let cap = extract(&fixture("pktap.pcap"), &PcapLimits::default()).expect("valid");
    assert_eq!(cap.packets, 4);
    assert_eq!(cap.skipped_linktypes, vec![(258, 4)]);
    assert_eq!(
        cap.warnings,
        vec!["link type 258 (PKTAP) is not supported: 4 packets skipped".to_string()]
    );
    // A link type without a name here is still counted.
    let mut w = PcapWriter::new(4000);
    full(&mut w, 1, vec![1, 2, 3]);
    let cap = extract(&w.bytes, &PcapLimits::default()).expect("valid");
    assert_eq!(
        cap.warnings,
        vec!["link type 4000 is not supported: 1 packet skipped".to_string()]
    );
}

#[test]
fn a_handshake_only_capture_counts_its_connection() {
    let cap = extract(&fixture("handshake-only.pcap"), &PcapLimits::default()).expect("valid");
    let summary = wirelens::capture::pcap::summary(&cap);
    assert_eq!(summary.packets, 3);
    assert_eq!(summary.tcp_streams, 1);
    assert_eq!(summary.streams_with_data, 0);
    assert!(!summary.has_data());
    assert!(payloads(&cap).is_empty());
}

#[test]
fn a_tls_capture_is_labelled_encrypted_not_guessed_as_a_format() {
    let cap = extract(&fixture("tls13.pcap"), &PcapLimits::default()).expect("valid");
    let summary = wirelens::capture::pcap::summary(&cap);
    assert_eq!(
        summary.describe(),
        "TLS 1.3: 1 encrypted stream, SNI api.example.test — give a key log to decrypt"
    );
    let (_, tls) = &summary.tls[0];
    assert_eq!(tls.version, "TLS 1.3");
    assert_eq!(tls.sni.as_deref(), Some("api.example.test"));
    assert_eq!(tls.cipher.as_deref(), Some("TLS_AES_256_GCM_SHA384"));
    assert_eq!(tls.alpn, ["http/1.1"]);
    // As tshark counts them (see COMMANDS.md).
    assert_eq!(tls.records, [5, 10]);
    assert_eq!(tls.encrypted, [3, 8]);
    let best = best_reading("tls13.pcap");
    assert_eq!(best.peeled.payloads.len(), 2);
    assert_eq!(best.format, None, "no format guessed for TLS");
    assert!(
        best.reasons
            .iter()
            .any(|r| r.contains("read best as encrypted (TLS 1.3)")),
        "{:?}",
        best.reasons
    );
    for (i, p) in best.peeled.payloads.iter().enumerate() {
        assert_eq!(p.meta_value("encrypted"), Some("TLS"));
        assert_eq!(p.hint, None);
        let layer = p.layers.last().expect("a TLS layer");
        assert_eq!(layer.name, "TLS 1.3");
        assert_eq!(
            layer.detail,
            "TLS 1.3, SNI api.example.test, TLS_AES_256_GCM_SHA384, ALPN offered http/1.1, 11 records encrypted — give a key log to decrypt"
        );
        assert!(
            best.detected.iter().all(|(_, r)| r.is_empty()),
            "payload {i}: no format readings"
        );
        assert!(matches!(
            wirelens::capture::verdict::verdict(p),
            Some(wirelens::capture::verdict::Verdict::Encrypted { .. })
        ));
    }
}

#[test]
fn an_html_body_in_a_capture_is_text_not_a_format_guess() {
    let best = best_reading("html-listing.pcap");
    assert_eq!(best.format, None, "{:?}", best.reasons);
    let body = best
        .peeled
        .payloads
        .iter()
        .find(|p| !p.bytes.is_empty())
        .expect("the response body");
    assert!(body.bytes.starts_with(b"<!DOCTYPE HTML>"));
    assert_eq!(
        wirelens::capture::verdict::verdict(body),
        Some(wirelens::capture::verdict::Verdict::Text {
            media_type: "text/html".into(),
            said_by: "its Content-Type",
        })
    );
    assert!(
        best.reasons
            .iter()
            .any(|r| r.contains("read best as text (text/html)")),
        "{:?}",
        best.reasons
    );
}

// ------------------------------------------- the protocol's word, and recovery after damage

/// Every payload of `w`'s capture, peeled as the CLI and the app peel it, and the warnings.
fn peeled(w: &PcapWriter) -> (Vec<wirelens::capture::Payload>, Vec<String>) {
    let p = wirelens::capture::peel(w.bytes.clone(), &wirelens::capture::PeelOptions::default());
    assert!(p.error.is_none(), "{:?}", p.error);
    (p.payloads, p.warnings)
}

fn bodies(payloads: &[wirelens::capture::Payload]) -> Vec<&[u8]> {
    payloads.iter().map(|p| p.bytes.as_slice()).collect()
}

fn response(body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(body);
    r
}

/// A keep-alive HTTP/1.1 connection: `requests` from the client, then each response in its own
/// segments of at most `mss` bytes, the segments numbered in `lost` left out of the capture.
fn keep_alive(responses: &[Vec<u8>], mss: usize, lost: &[usize]) -> PcapWriter {
    let mut w = PcapWriter::new(1);
    let mut usec = 1;
    let mut frame = |w: &mut PcapWriter, f: Vec<u8>| {
        full(w, usec, f);
        usec += 1;
    };
    frame(&mut w, c2s(999, SYN, b""));
    frame(&mut w, s2c(4999, SYN | ACK, b""));
    let (mut cseq, mut sseq, mut n) = (1000u32, 5000u32, 0usize);
    for (i, r) in responses.iter().enumerate() {
        let req = format!("GET /{i} HTTP/1.1\r\nHost: h\r\n\r\n");
        frame(&mut w, c2s(cseq, ACK | PSH, req.as_bytes()));
        cseq += req.len() as u32;
        for chunk in r.chunks(mss) {
            if !lost.contains(&n) {
                frame(&mut w, s2c(sseq, ACK | PSH, chunk));
            }
            n += 1;
            sseq += chunk.len() as u32;
        }
    }
    w
}

#[test]
fn after_a_tcp_gap_http_resumes_at_the_next_response() {
    let bodies_sent: Vec<Vec<u8>> = (0..5)
        .map(|i| format!("{{\"i\":{i},\"pad\":\"{}\"}}", "x".repeat(150)).into_bytes())
        .collect();
    let responses: Vec<Vec<u8>> = bodies_sent.iter().map(|b| response(b)).collect();
    // Each response is 3 segments of 100 bytes or fewer; segment 4 (the second 100 bytes of
    // the second response) is lost.
    let w = keep_alive(&responses, 100, &[4]);
    let (payloads, warnings) = peeled(&w);
    let got = bodies(&payloads);
    let responses_got: Vec<&[u8]> = got.iter().copied().skip(1).step_by(2).collect();
    assert_eq!(responses_got.len(), 5, "{warnings:?}");
    for i in [0, 2, 3, 4] {
        assert_eq!(responses_got[i], bodies_sent[i], "response {i} is whole");
    }
    // The response the gap cut is kept as far as it goes, marked, and named in a warning.
    assert!(bodies_sent[1].starts_with(responses_got[1]));
    assert!(responses_got[1].len() < bodies_sent[1].len());
    assert!(payloads[3].cut.is_some());
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("100 bytes are missing after stream byte")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("Content-Length announces")),
        "{warnings:?}"
    );
}

#[test]
fn a_304_with_a_coding_and_a_body_that_fails_cost_no_other_response() {
    let json = br#"{"ok":true}"#;
    let mut not_modified = b"HTTP/1.1 304 Not Modified\r\nContent-Encoding: gzip\r\n\r\n".to_vec();
    // A body that says gzip and is not: one failed message.
    let mut bad =
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 5\r\n\r\nnope!".to_vec();
    let responses = vec![
        response(json),
        std::mem::take(&mut not_modified),
        response(json),
        std::mem::take(&mut bad),
        response(json),
    ];
    let (payloads, warnings) = peeled(&keep_alive(&responses, 1400, &[]));
    let got = bodies(&payloads);
    assert_eq!(
        got,
        [
            &b""[..],
            json,
            b"",
            b"",
            b"",
            json,
            b"",
            b"nope!",
            b"",
            json
        ]
    );
    assert!(payloads[3].cut.is_none(), "a 304 is whole");
    assert!(payloads[7].cut.is_some());
    // The one warning names the gzip layer and the frame that carried the bad response.
    let gzip: Vec<&String> = warnings.iter().filter(|w| w.contains("gzip")).collect();
    assert_eq!(gzip.len(), 1, "{warnings:?}");
    assert!(gzip[0].contains("(frame 10)"), "{}", gzip[0]);
}

#[test]
fn keep_alive_probes_are_not_overlaps() {
    let mut w = PcapWriter::new(1);
    full(&mut w, 1, c2s(999, SYN, b""));
    full(&mut w, 2, c2s(1000, ACK | PSH, b"GET / HTTP/1.1\r\n\r\n"));
    // The probe: one byte (a zero) at the next sequence number less one.
    full(&mut w, 3, c2s(1017, ACK, b"\0"));
    full(&mut w, 4, c2s(1018, ACK | PSH, b"GET /b HTTP/1.1\r\n\r\n"));
    let cap = extract(&w.bytes, &PcapLimits::default()).expect("valid");
    assert!(cap.warnings.is_empty(), "{:?}", cap.warnings);
    let d = &cap.streams[0].directions[0];
    assert_eq!(d.keep_alive_probes, 1);
    assert_eq!(d.bytes, b"GET / HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n");
}

/// An Ethernet frame of a UDP datagram from C:`sport` to S:`dport`.
fn datagram(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    ether(0x0800, &[], &ipv4(C, S, 17, &udp(sport, dport, payload)))
}

#[test]
fn dns_beside_http_is_named_and_the_http_body_is_the_default() {
    // A DNS query (example.com A) and an mDNS query, then an HTTP exchange.
    let query = [
        0xab, 0xcd, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 7, b'e', b'x', b'a', b'm', b'p', b'l', b'e', 3,
        b'c', b'o', b'm', 0, 0, 1, 0, 1,
    ];
    let mut w = keep_alive(&[response(br#"{"a":1}"#)], 1400, &[]);
    full(&mut w, 90, datagram(5555, 53, &query));
    full(&mut w, 91, datagram(5353, 5353, &query));
    let p = wirelens::capture::peel(w.bytes.clone(), &wirelens::capture::PeelOptions::default());
    let protocols: Vec<Option<&str>> = p.payloads.iter().map(|p| p.protocol.as_deref()).collect();
    assert_eq!(protocols, [None, None, Some("DNS"), Some("mDNS")]);
    assert_eq!(
        wirelens::capture::verdict::verdict(&p.payloads[2]),
        Some(wirelens::capture::verdict::Verdict::NotData {
            protocol: "DNS".into()
        })
    );
    assert_eq!(
        wirelens::capture::listing::default_payload(&p.payloads),
        1,
        "the JSON body, not the first datagram"
    );
}

/// A TLS 1.2 record of `kind` holding `body`.
fn tls_record(kind: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![kind, 3, 3];
    out.extend_from_slice(&(body.len() as u16).to_be_bytes());
    out.extend_from_slice(body);
    out
}

/// A TLS handshake message of `kind` holding `body`.
fn tls_handshake(kind: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![kind, 0];
    out.extend_from_slice(&(body.len() as u16).to_be_bytes());
    out.extend_from_slice(body);
    out
}

#[test]
fn a_tls_connection_with_a_null_cipher_suite_is_read_without_keys() {
    // TLS_RSA_WITH_NULL_SHA256 (as `openssl s_server -cipher NULL-SHA256` chooses it): after
    // ChangeCipherSpec each record is its content and a 32-byte MAC, nothing is encrypted, and
    // a key log could not help. The HTTP inside is read as any HTTP is.
    let mut hello = vec![3, 3];
    hello.extend_from_slice(&[7; 32]);
    hello.extend_from_slice(&[0, 0, 2, 0x00, 0x3b, 1, 0]);
    let mut server_hello = vec![3, 3];
    server_hello.extend_from_slice(&[9; 32]);
    server_hello.extend_from_slice(&[0, 0x00, 0x3b, 0]);
    let mac = [0xa5u8; 32];
    let sealed = |content: &[u8]| [content, &mac[..]].concat();
    let request = b"POST /v1/items HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{\"id\": 7}";
    let response = b"HTTP/1.1 204 No Content\r\n\r\n";
    let client = [
        tls_record(22, &tls_handshake(1, &hello)),
        tls_record(20, &[1]),
        tls_record(22, &sealed(&tls_handshake(20, &[1; 12]))),
        tls_record(23, &sealed(request)),
    ]
    .concat();
    let server = [
        tls_record(22, &tls_handshake(2, &server_hello)),
        tls_record(20, &[1]),
        tls_record(22, &sealed(&tls_handshake(20, &[2; 12]))),
        tls_record(23, &sealed(response)),
    ]
    .concat();
    let mut w = PcapWriter::new(1);
    full(&mut w, 1, c2s(100, SYN, b""));
    full(&mut w, 2, s2c(700, SYN | ACK, b""));
    full(&mut w, 3, c2s(101, ACK | PSH, &client));
    full(&mut w, 4, s2c(701, ACK | PSH, &server));
    let (payloads, warnings) = peeled(&w);
    assert_eq!(payloads.len(), 2, "{warnings:?}");
    assert_eq!(payloads[0].bytes.as_slice(), b"{\"id\": 7}");
    assert_eq!(payloads[0].meta_value("method"), Some("POST"));
    assert_eq!(
        payloads[1].meta_value("start-line"),
        Some("HTTP/1.1 204 No Content")
    );
    let tls = payloads[0]
        .layers
        .iter()
        .find(|l| l.name == "TLS 1.2")
        .expect("a TLS layer");
    assert!(
        tls.detail
            .starts_with("TLS_RSA_WITH_NULL_SHA256, not encrypted")
            && !tls.detail.contains("key log"),
        "{}",
        tls.detail
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("encrypts nothing") && w.contains("32-byte MAC")),
        "{warnings:?}"
    );
    // A record shorter than its MAC is said, where it is.
    let short = [
        tls_record(22, &tls_handshake(1, &hello)),
        tls_record(20, &[1]),
        tls_record(23, b"too short"),
    ]
    .concat();
    let mut w = PcapWriter::new(1);
    full(&mut w, 1, c2s(100, SYN, b""));
    full(&mut w, 2, s2c(700, SYN | ACK, b""));
    full(&mut w, 3, c2s(101, ACK | PSH, &short));
    full(&mut w, 4, s2c(701, ACK | PSH, &server));
    let (_, warnings) = peeled(&w);
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("shorter than its 32-byte MAC") && w.contains("frame 3")),
        "{warnings:?}"
    );
}

#[test]
fn tls_records_compressed_with_deflate_are_inflated_and_a_bomb_is_stopped() {
    // RFC 3749: the ServerHello's compression method 1. Each direction's records after
    // ChangeCipherSpec (Finished included) are one zlib stream, each record flushed to a byte
    // boundary. A NULL suite, so the test needs no keys; decrypted suites take the same path.
    use flate2::{Compress, Compression, FlushCompress};
    let sealed = |z: &mut Compress, content: &[u8]| {
        let mut out = Vec::with_capacity(content.len() + 64);
        z.compress_vec(content, &mut out, FlushCompress::Sync)
            .expect("deflate");
        out.extend_from_slice(&[0xa5; 32]);
        out
    };
    let mut hello = vec![3, 3];
    hello.extend_from_slice(&[7; 32]);
    hello.extend_from_slice(&[0, 0, 2, 0x00, 0x3b, 2, 1, 0]);
    let mut server_hello = vec![3, 3];
    server_hello.extend_from_slice(&[9; 32]);
    server_hello.extend_from_slice(&[0, 0x00, 0x3b, 1]);
    let request = b"PUT /v1/items/7 HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 26\r\n\r\n{\"id\": 7, \"name\": \"seven\"}";
    let response = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{\"id\": 7}";
    let direction = |first: Vec<u8>, finished: u8, messages: &[&[u8]]| {
        let mut z = Compress::new(Compression::default(), true);
        let mut out = [
            tls_record(22, &first),
            tls_record(20, &[1]),
            tls_record(22, &sealed(&mut z, &tls_handshake(20, &[finished; 12]))),
        ]
        .concat();
        for m in messages {
            out.extend(tls_record(23, &sealed(&mut z, m)));
        }
        out
    };
    // The request in two records, the second continuing the first's stream.
    let client = direction(
        tls_handshake(1, &hello),
        1,
        &[&request[..40], &request[40..]],
    );
    let server = direction(tls_handshake(2, &server_hello), 2, &[response]);
    let capture = |client: &[u8], server: &[u8]| {
        let mut w = PcapWriter::new(1);
        full(&mut w, 1, c2s(100, SYN, b""));
        full(&mut w, 2, s2c(700, SYN | ACK, b""));
        full(&mut w, 3, c2s(101, ACK | PSH, client));
        full(&mut w, 4, s2c(701, ACK | PSH, server));
        peeled(&w)
    };
    let (payloads, warnings) = capture(&client, &server);
    assert_eq!(payloads.len(), 2, "{warnings:?}");
    assert_eq!(
        payloads[0].bytes.as_slice(),
        b"{\"id\": 7, \"name\": \"seven\"}"
    );
    assert_eq!(payloads[1].bytes.as_slice(), b"{\"id\": 7}");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("compressed with DEFLATE")),
        "{warnings:?}"
    );
    // A record of zeros that inflates past the 16,384 bytes a record may hold stops its
    // direction there, said with the record; the other direction is read.
    let bomb = direction(tls_handshake(1, &hello), 1, &[&vec![0u8; 1 << 20]]);
    let (payloads, warnings) = capture(&bomb, &server);
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("inflates past 16384 bytes") && w.contains("frame 3")),
        "{warnings:?}"
    );
    assert!(
        payloads
            .iter()
            .any(|p| p.bytes.as_slice() == b"{\"id\": 7}"),
        "{warnings:?}"
    );
}
