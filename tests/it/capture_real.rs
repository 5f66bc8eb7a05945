//! Captures recorded with real clients and servers (`tests/fixtures/capture/real/`, see its
//! COMMANDS.md), each read by wirelens and compared with what tshark found in it
//! (`NAME.answers.tsv`, written by `answers.sh`; `.ci/run` re-runs tshark so the answers cannot
//! drift): per TCP connection and direction, the same application messages in the same order,
//! with the same bodies.

use std::collections::BTreeMap;

use wirelens::capture::{peel, Payload, PeelOptions};

use super::common::data;

/// One message tshark found: (kind, what, HTTP/2 stream, body as hex).
type Row = (String, String, String, String);

fn fixture(name: &str) -> Vec<u8> {
    let path = data(&format!("../fixtures/capture/real/{name}"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// tshark's messages of `name` of the given kinds, by (TCP stream, direction), in order.
fn answers(name: &str, kinds: &[&str]) -> BTreeMap<(String, String), Vec<Row>> {
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    let text = String::from_utf8(fixture(&format!("{stem}.answers.tsv"))).expect("utf-8");
    let mut out: BTreeMap<(String, String), Vec<Row>> = BTreeMap::new();
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols.len(), 7, "{name}: {line}");
        if !kinds.contains(&cols[3]) {
            continue;
        }
        out.entry((cols[0].to_string(), cols[1].to_string()))
            .or_default()
            .push((
                cols[3].to_string(),
                cols[4].to_string(),
                cols[5].to_string(),
                cols[6].to_string(),
            ));
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What wirelens found, in tshark's terms.
fn row(p: &Payload) -> Row {
    let body = hex(&p.bytes);
    if let Some((path, request)) = p.grpc_call() {
        let side = if request { "request" } else { "response" };
        let compressed = p
            .layers
            .last()
            .is_some_and(|l| l.detail.contains("gzip-compressed"));
        let what = format!(
            "{path} {side}{}",
            if compressed { " compressed" } else { "" }
        );
        let h2 = p.meta_value("http2 stream").unwrap_or("").to_string();
        return ("grpc".into(), what, h2, body);
    }
    if let Some(method) = p.meta_value("method") {
        let target = p
            .meta_value("start-line")
            .and_then(|l| l.split(' ').nth(1))
            .or(p.meta_value(":path"))
            .unwrap_or("");
        let kind = if p.meta_value("http2 stream").is_some() {
            "http2-request"
        } else {
            "http-request"
        };
        let h2 = p.meta_value("http2 stream").unwrap_or("").to_string();
        return (kind.into(), format!("{method} {target}"), h2, body);
    }
    let status = p
        .meta_value("start-line")
        .and_then(|l| l.split(' ').nth(1))
        .or(p.meta_value(":status"))
        .unwrap_or("?");
    let kind = if p.meta_value("http2 stream").is_some() {
        "http2-response"
    } else {
        "http-response"
    };
    let h2 = p.meta_value("http2 stream").unwrap_or("").to_string();
    (kind.into(), status.to_string(), h2, body)
}

fn found(name: &str) -> BTreeMap<(String, String), Vec<Row>> {
    let peeled = peel(fixture(name), &PeelOptions::default());
    assert!(peeled.error.is_none(), "{name}: {:?}", peeled.error);
    let mut out: BTreeMap<(String, String), Vec<Row>> = BTreeMap::new();
    for p in &peeled.payloads {
        let key = (
            p.meta_value("stream").unwrap_or("?").to_string(),
            p.meta_value("direction").unwrap_or("?").to_string(),
        );
        out.entry(key).or_default().push(row(p));
    }
    out
}

#[test]
fn grpc_over_h2c_gives_tshark_s_messages_with_their_methods() {
    let want = answers("grpc-h2c.pcap", &["grpc"]);
    let got = found("grpc-h2c.pcap");
    assert_eq!(want.values().map(Vec::len).sum::<usize>(), 14);
    // tshark lists a direction's messages in frame order; wirelens by stream, then in order
    // within the stream: the same messages per HTTP/2 stream and direction.
    let by_stream = |m: &BTreeMap<(String, String), Vec<Row>>| {
        let mut out: BTreeMap<(String, String, String), Vec<Row>> = BTreeMap::new();
        for ((tcp, dir), rows) in m {
            for r in rows {
                out.entry((tcp.clone(), dir.clone(), r.2.clone()))
                    .or_default()
                    .push(r.clone());
            }
        }
        out
    };
    assert_eq!(by_stream(&got), by_stream(&want));
}

#[test]
fn grpc_payloads_name_their_call_and_status() {
    let peeled = peel(fixture("grpc-h2c.pcap"), &PeelOptions::default());
    let response = peeled
        .payloads
        .iter()
        .find(|p| p.grpc_call().is_some_and(|(_, request)| !request))
        .expect("a response");
    assert_eq!(response.meta_value("grpc-status"), Some("0"));
    assert_eq!(
        response.provenance(),
        "pcap → TCP 127.0.0.1:50051 → 127.0.0.1:46512 → HTTP/2 stream 1 → gRPC frame"
    );
    let headline = response.headline().expect("a headline");
    assert_eq!(
        headline,
        "gRPC response /wirelens.fixtures.v1.ProfileService/GetProfile, grpc-status 0, h2 stream 1, server→client"
    );
    // The frame list names the capture's frames.
    let frames = response.meta_value("http2 frames").expect("frame list");
    assert!(
        frames.starts_with("HEADERS END_HEADERS (frame "),
        "{frames}"
    );
    assert!(frames.contains("DATA 112 B"), "{frames}");
}

#[test]
fn http1_keep_alive_gives_exactly_tshark_s_messages_and_bodies() {
    let want = answers("http1-keepalive.pcap", &["http-request", "http-response"]);
    let got = found("http1-keepalive.pcap");
    assert_eq!(want.values().map(Vec::len).sum::<usize>(), 23);
    assert_eq!(got, want);
}

#[test]
fn http1_text_bodies_match_tshark() {
    let want = answers("http1-html.pcap", &["http-request", "http-response"]);
    assert_eq!(found("http1-html.pcap"), want);
}

#[test]
fn websocket_messages_match_tshark_unmasked_joined_and_inflated() {
    // tshark lists frames; a message ends at a text, binary or continuation frame without fin=0.
    let text = String::from_utf8(fixture("websocket.answers.tsv")).expect("utf-8");
    // Per (TCP stream, direction): each message's opcode, body, and whether it was fragmented.
    type Messages = BTreeMap<(String, String), Vec<(String, String, bool)>>;
    let mut want: Messages = BTreeMap::new();
    let mut opcode: BTreeMap<(String, String), (String, bool)> = BTreeMap::new();
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols[3] != "websocket" {
            continue;
        }
        let key = (cols[0].to_string(), cols[1].to_string());
        let words: Vec<&str> = cols[4].split(' ').collect();
        let fin = !words.contains(&"fin=0");
        let started = match words[0] {
            "text" | "binary" => {
                let fragmented = !fin;
                opcode.insert(key.clone(), (words[0].to_string(), fragmented));
                (words[0].to_string(), fragmented)
            }
            "continuation" => opcode.get(&key).cloned().unwrap_or_default(),
            _ => continue,
        };
        if fin {
            want.entry(key)
                .or_default()
                .push((started.0, cols[6].to_string(), started.1));
        }
    }
    let peeled = peel(fixture("websocket.pcap"), &PeelOptions::default());
    assert!(peeled.error.is_none(), "{:?}", peeled.error);
    assert!(peeled.warnings.is_empty(), "{:?}", peeled.warnings);
    let mut got: BTreeMap<(String, String), Vec<(String, String)>> = BTreeMap::new();
    for p in &peeled.payloads {
        let Some(op) = p.meta_value("websocket opcode") else {
            continue;
        };
        got.entry((
            p.meta_value("stream").unwrap_or("?").to_string(),
            p.meta_value("direction").unwrap_or("?").to_string(),
        ))
        .or_default()
        .push((op.to_string(), hex(&p.bytes)));
    }
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    let mut fragmented = 0;
    for (key, rows) in &want {
        let mine = &got[key];
        assert_eq!(mine.len(), rows.len(), "{key:?}");
        for ((op, body), (want_op, want_body, was_fragmented)) in mine.iter().zip(rows) {
            assert_eq!(op, want_op, "{key:?}");
            if *was_fragmented && key.0 == "0" {
                // tshark joins the compressed fragments but leaves them deflated: the server
                // echoes the message inside its answer (`{"ack":4,…,"echo":MESSAGE}`), which
                // tshark does inflate.
                fragmented += 1;
                let text = |h: &str| {
                    let bytes: Vec<u8> = (0..h.len() / 2)
                        .filter_map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).ok())
                        .collect();
                    String::from_utf8_lossy(&bytes).into_owned()
                };
                let mine = text(body);
                let answers = &want[&(key.0.clone(), "server→client".to_string())];
                assert!(
                    answers
                        .iter()
                        .any(|(_, b, _)| text(b).contains(&format!("\"echo\":{mine}}}"))),
                    "{key:?}: {mine}"
                );
            } else {
                assert_eq!(body, want_body, "{key:?}");
            }
        }
    }
    assert_eq!(fragmented, 1);
}

#[test]
fn an_h2c_upgrade_hands_the_connection_to_http2() {
    let want = answers(
        "h2c-upgrade.pcap",
        &[
            "http-request",
            "http-response",
            "http2-request",
            "http2-response",
        ],
    );
    let mut got = found("h2c-upgrade.pcap");
    assert_eq!(want.values().map(Vec::len).sum::<usize>(), 5);
    // tshark leaves the gzip'd HTTP/2 body as it was sent; wirelens undoes the coding.
    let cbor = std::fs::read(data("../../samples/iot-metrics.cbor")).expect("sample");
    let gzipped = got
        .get_mut(&("1".to_string(), "server→client".to_string()))
        .and_then(|rows| rows.last_mut())
        .expect("the second connection's response");
    assert_eq!(gzipped.3, hex(&cbor));
    let tshark_body = &want[&("1".to_string(), "server→client".to_string())][0].3;
    assert!(tshark_body.starts_with("1f8b08"), "{tshark_body}");
    gzipped.3 = tshark_body.clone();
    assert_eq!(got, want);
    let peeled = peel(fixture("h2c-upgrade.pcap"), &PeelOptions::default());
    let upgraded = peeled
        .payloads
        .iter()
        .find(|p| p.meta_value(":status") == Some("200"))
        .expect("the upgraded response");
    assert_eq!(
        upgraded.provenance(),
        "pcap → TCP 127.0.0.1:18092 → 127.0.0.1:46204 → HTTP/2 stream 1"
    );
}

#[test]
fn a_capture_started_mid_connection_still_gives_the_http2_data() {
    let peeled = peel(fixture("grpc-h2c-midway.pcap"), &PeelOptions::default());
    assert!(peeled.error.is_none(), "{:?}", peeled.error);
    // The SyncProfiles messages of stream 5 (3 each way) and the GetProfile pair of stream 7,
    // each with the bytes the full capture gives.
    let full = peel(fixture("grpc-h2c.pcap"), &PeelOptions::default());
    let bodies = |payloads: &[Payload], stream: &str| -> Vec<Vec<u8>> {
        payloads
            .iter()
            .filter(|p| p.meta_value("http2 stream") == Some(stream))
            .map(|p| p.bytes.to_vec())
            .collect()
    };
    for stream in ["5", "7"] {
        let got = bodies(&peeled.payloads, stream);
        assert!(!got.is_empty(), "stream {stream}");
        assert_eq!(got, bodies(&full.payloads, stream), "stream {stream}");
    }
    // Without a SYN the TCP layer guesses the client from the ports (the higher one, here the
    // server's 50051); the stream order says the side that sent first opened the calls.
    assert_eq!(
        peeled.payloads[0].meta_value("direction"),
        Some("client→server")
    );
    assert!(peeled.payloads[0].layers[1]
        .name
        .starts_with("TCP 127.0.0.1:46512 →"));
    // Headers that refer to the HPACK table the capture missed are said to be unknown.
    assert!(
        peeled.payloads.iter().any(|p| p
            .meta
            .iter()
            .any(|(k, v)| k == "warning" && v.contains("HPACK"))),
        "{:#?}",
        peeled.payloads.iter().map(|p| &p.meta).collect::<Vec<_>>()
    );
}

#[test]
fn nflog_frames_are_read_like_any_other_link_layer() {
    // The HTML exchange of http1-html.pcap wrapped in NFLOG headers and TLVs (see COMMANDS.md):
    // tshark reads it as nflog:ip:tcp:http, and so does wirelens.
    let want = answers("nflog.pcap", &["http-request", "http-response"]);
    assert_eq!(want.values().map(Vec::len).sum::<usize>(), 4);
    assert_eq!(found("nflog.pcap"), want);
    assert_eq!(found("nflog.pcap"), found("http1-html.pcap"));
}

/// [`found`] with a TLS key log.
fn found_keyed(name: &str, keylog: &str) -> BTreeMap<(String, String), Vec<Row>> {
    let keys =
        wirelens::capture::tls::KeyLog::parse(&String::from_utf8(fixture(keylog)).expect("utf-8"))
            .expect("a key log");
    let peeled = wirelens::capture::peel(
        fixture(name),
        &PeelOptions {
            keys: Some(&keys),
            ..PeelOptions::default()
        },
    );
    assert!(peeled.error.is_none(), "{name}: {:?}", peeled.error);
    let mut out: BTreeMap<(String, String), Vec<Row>> = BTreeMap::new();
    for p in &peeled.payloads {
        assert!(p.meta_value("tls").is_some(), "{name}: {}", p.provenance());
        let key = (
            p.meta_value("stream").unwrap_or("?").to_string(),
            p.meta_value("direction").unwrap_or("?").to_string(),
        );
        out.entry(key).or_default().push(row(p));
    }
    out
}

#[test]
fn tls_with_a_key_log_gives_tshark_s_decrypted_messages() {
    let kinds = [
        "http-request",
        "http-response",
        "http2-request",
        "http2-response",
    ];
    for name in [
        "tls13-http1",
        "tls12-http1",
        "tls13-h2",
        "tls12-cbc-sha384-mte",
        "tls12-cbc-sha256-mte",
        "tls12-cbc-sha1-etm",
    ] {
        let want = answers(&format!("{name}.pcap"), &kinds);
        assert_eq!(want.values().map(Vec::len).sum::<usize>(), 4, "{name}");
        let got = found_keyed(&format!("{name}.pcap"), &format!("{name}.keylog"));
        assert_eq!(got, want, "{name}");
    }
    // The same capture with the key log injected into the file decrypts by itself.
    let peeled = peel(fixture("tls13-http1-dsb.pcapng"), &PeelOptions::default());
    let bodies: Vec<Vec<u8>> = peeled.payloads.iter().map(|p| p.bytes.to_vec()).collect();
    let plain = found_keyed("tls13-http1.pcap", "tls13-http1.keylog");
    let want: Vec<String> = plain.values().flatten().map(|r| r.3.clone()).collect();
    let mut got: Vec<String> = bodies.iter().map(|b| hex(b)).collect();
    got.sort();
    let mut want = want;
    want.sort();
    assert_eq!(got, want);
    assert!(peeled.payloads[1]
        .provenance()
        .contains("→ TLS 1.3 → HTTP/1.1 response"));
}

#[test]
fn grpc_over_tls_with_a_key_log_gives_its_plaintext_twin_s_messages() {
    let want = answers("grpc-tls13.pcap", &["grpc"]);
    assert_eq!(want.values().map(Vec::len).sum::<usize>(), 2);
    let got = found_keyed("grpc-tls13.pcap", "grpc-tls13.keylog");
    assert_eq!(got, want);
    // The same call over h2c (the first GetProfile of grpc-h2c.pcap): the same messages.
    let twin = found("grpc-h2c.pcap");
    for (key, rows) in &got {
        let plain = &twin[&("0".to_string(), key.1.clone())][0];
        assert_eq!(rows[0].1, plain.1, "{key:?}");
        assert_eq!(rows[0].3, plain.3, "{key:?}");
    }
}
