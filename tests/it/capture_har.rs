//! HAR exports and pasted request snippets (`tests/fixtures/capture/har/`, see its README.md):
//! the HAR mitmproxy recorded in front of `server.py` gives one payload per body, each equal to
//! what the server sent; hand-written HARs cover base64, cut and omitted bodies; the snippets are
//! written as DevTools' "Copy as cURL" and "Copy as fetch" write them.

use std::path::PathBuf;

use wirelens::capture::{peel, peel_readings, PeelChoice, PeelOptions, Split};
use wirelens::codec::detect::detect;
use wirelens::codec::{DecodeOptions, Format};

use super::common::run_wirelens;

fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/capture/har")
        .join(name)
}

fn fixture(name: &str) -> Vec<u8> {
    let path = fixture_path(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn sample(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn best_format(bytes: &[u8], hint: Option<Format>) -> Option<Format> {
    detect(bytes, hint, &DecodeOptions::default())
        .first()
        .map(|r| r.format)
}

#[test]
fn mitmproxy_har_gives_each_body_as_the_server_sent_it() {
    let har = fixture("mitmproxy.har");
    let unsplit = PeelChoice {
        max_layers: None,
        split: Split::Never,
    };
    let peeled = peel(&har, &PeelOptions::choosing(unsplit));
    assert!(peeled.error.is_none(), "{:?}", peeled.error);
    // (entry, direction, expected body, hint, format detected)
    let expected: [(usize, &str, &str, Option<Format>, Format); 8] = [
        (0, "response", "json", Some(Format::Json), Format::Json),
        (
            1,
            "response",
            "msgpack",
            Some(Format::MessagePack),
            Format::MessagePack,
        ),
        (2, "response", "cbor", Some(Format::Cbor), Format::Cbor),
        (
            3,
            "response",
            "proto",
            Some(Format::Protobuf),
            Format::Protobuf,
        ),
        (
            4,
            "response",
            "grpc-web",
            Some(Format::Protobuf),
            Format::Protobuf,
        ),
        (5, "response", "gzip-json", Some(Format::Json), Format::Json),
        (6, "request", "json", Some(Format::Json), Format::Json),
        (6, "response", "json", Some(Format::Json), Format::Json),
    ];
    assert_eq!(peeled.payloads.len(), expected.len());
    for (p, (entry, direction, body, hint, format)) in peeled.payloads.iter().zip(expected) {
        let want = fixture(&format!("expected/{body}.body"));
        assert_eq!(p.bytes, want, "entry {entry} {direction}: {p:?}");
        assert_eq!(p.layers[0].name, format!("HAR entry {entry}"));
        assert_eq!(p.meta_value("direction"), Some(direction));
        assert_eq!(p.hint, hint, "entry {entry}");
        assert_eq!(p.cut, None, "entry {entry}");
        if body != "grpc-web" {
            assert_eq!(best_format(&p.bytes, p.hint), Some(format), "entry {entry}");
        }
    }
    // The protobuf body is the sample's bytes; the gzip'd JSON was undone by mitmproxy, once.
    assert_eq!(peeled.payloads[3].bytes, sample("user-profile.pb"));
    assert!(peeled.payloads[5].layers.iter().all(|l| l.name != "gzip"));
    assert!(peeled.payloads[5]
        .meta
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("content-encoding") && v == "gzip"));
    let first = &peeled.payloads[0];
    assert_eq!(
        first.layers[0].detail,
        "GET http://127.0.0.1:18731/json → 200 → application/json"
    );
    assert_eq!(first.meta_value("method"), Some("GET"));
    assert_eq!(first.meta_value("status"), Some("200"));
    assert!(first.meta_value("timings").is_some());
    assert!(first.meta_value("content-size").is_some());
    // Split as usual: the gRPC-Web body becomes its message, the sample's bytes.
    let split = peel(&har, &PeelOptions::default());
    let grpc: Vec<_> = split
        .payloads
        .iter()
        .filter(|p| p.layers[0].name == "HAR entry 4")
        .collect();
    assert_eq!(grpc.len(), 1);
    assert_eq!(grpc[0].bytes, sample("user-profile.pb"));
    assert_eq!(grpc[0].meta_value("grpc-body"), Some("true"));
}

const CHROME_HAR: &str = r#"{
  "log": {
    "version": "1.2",
    "creator": { "name": "WebInspector", "version": "537.36" },
    "pages": [],
    "entries": [
      {
        "_resourceType": "fetch",
        "request": {
          "method": "POST",
          "url": "https://api.example.com/v1/orders",
          "httpVersion": "http/2.0",
          "headers": [ { "name": "content-type", "value": "application/msgpack" } ],
          "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 4,
          "postData": { "mimeType": "application/msgpack", "text": "\u0081¡a\u0001" }
        },
        "response": {
          "status": 200, "statusText": "", "httpVersion": "http/2.0",
          "headers": [ { "name": "content-type", "value": "application/cbor" },
                       { "name": "content-encoding", "value": "br" } ],
          "cookies": [],
          "content": { "size": 4, "mimeType": "application/cbor", "compression": -20,
                       "text": "oWFhAQ==", "encoding": "base64" },
          "redirectURL": "", "headersSize": -1, "bodySize": 24, "_transferSize": 120
        },
        "cache": {}, "timings": { "blocked": 0.5, "dns": -1, "ssl": -1, "connect": -1,
                                  "send": 0.1, "wait": 20.3, "receive": 0.4 },
        "time": 21.3, "startedDateTime": "2026-03-01T10:00:00.000Z"
      },
      {
        "request": { "method": "GET", "url": "https://api.example.com/v1/big", "headers": [] },
        "response": {
          "status": 200, "headers": [],
          "content": { "size": 250000, "mimeType": "application/json", "text": "{\"items\":[1,2," },
          "bodySize": 250000
        }
      },
      {
        "request": { "method": "GET", "url": "https://api.example.com/v1/image", "headers": [] },
        "response": { "status": 200, "headers": [], "content": { "size": 9000, "mimeType": "image/png" } }
      },
      {
        "request": { "method": "GET", "url": "wss://api.example.com/live", "headers": [] },
        "response": { "status": 101, "headers": [], "content": { "size": 0, "mimeType": "x-unknown" } },
        "_resourceType": "websocket",
        "_webSocketMessages": [
          { "type": "send", "time": 1772359200.1, "opcode": 1, "data": "{\"subscribe\":\"orders\"}" },
          { "type": "receive", "time": 1772359200.2, "opcode": 2, "data": "gaJpZAc=" }
        ]
      }
    ]
  }
}"#;

#[test]
fn chrome_style_har_base64_cut_omitted_and_websocket() {
    let peeled = peel(
        CHROME_HAR.as_bytes(),
        &PeelOptions::choosing(PeelChoice {
            max_layers: None,
            split: Split::Never,
        }),
    );
    let p = &peeled.payloads;
    assert_eq!(p.len(), 7, "{p:#?}");
    // Request body: a binary type stored as text reads back one byte per character.
    assert_eq!(p[0].bytes, [0x81, 0xa1, b'a', 0x01]);
    assert_eq!(p[0].hint, Some(Format::MessagePack));
    // Response body: base64, the brotli already undone by the export (not undone again).
    assert_eq!(p[1].bytes, [0xa1, 0x61, 0x61, 0x01]);
    assert_eq!(p[1].hint, Some(Format::Cbor));
    assert_eq!(p[1].meta_value("transfer-size"), Some("120"));
    assert_eq!(p[1].cut, None);
    assert!(p[1].layers.iter().all(|l| l.name != "br"));
    // Cut: 14 of 250000 bytes.
    assert!(p[2].cut.is_some());
    assert!(p[2].layers[1].detail.starts_with("NOT COMPLETE"));
    // Left out: no text at all.
    assert!(p[3].cut.is_some());
    assert!(p[3].bytes.is_empty());
    assert!(peeled
        .warnings
        .iter()
        .any(|w| w.contains("log.entries[1].response.content") && w.contains("250000")));
    assert!(peeled
        .warnings
        .iter()
        .any(|w| w.contains("log.entries[2].response.content") && w.contains("9000")));
    // The 101 response, then its messages.
    assert_eq!(p[5].bytes, b"{\"subscribe\":\"orders\"}");
    assert_eq!(p[5].meta_value("direction"), Some("send"));
    // A text message is text: JSON here, so read as JSON (hinted), with no verdict.
    assert_eq!(p[5].meta_value("websocket opcode"), Some("text"));
    assert_eq!(p[5].hint, Some(Format::Json));
    assert_eq!(wirelens::capture::verdict::verdict(&p[5]), None);
    assert_eq!(p[6].meta_value("websocket opcode"), None, "binary");
    assert_eq!(p[6].bytes, [0x81, 0xa2, b'i', b'd', 0x07]);
    assert_eq!(p[6].meta_value("direction"), Some("receive"));
    assert_eq!(p[6].layers[1].name, "WebSocket message");
}

#[test]
fn a_har_is_recognised_by_content_and_outranks_one_json_document() {
    // No .har extension: the bytes alone.
    let readings = peel_readings(fixture("mitmproxy.har"), &DecodeOptions::default(), None);
    assert!(
        readings[0].layers().starts_with("HAR entry 0"),
        "{}",
        readings[0].layers()
    );
    let raw = readings
        .iter()
        .find(|r| r.layers() == "raw bytes")
        .expect("the raw reading is still offered");
    assert_eq!(raw.format, Some(Format::Json));
    // `--layer raw`: the file as it is, one JSON document.
    let peeled = peel(
        fixture("mitmproxy.har"),
        &PeelOptions::choosing(PeelChoice {
            max_layers: Some(0),
            split: Split::Never,
        }),
    );
    assert_eq!(peeled.payloads.len(), 1);
    assert_eq!(
        best_format(&peeled.payloads[0].bytes, None),
        Some(Format::Json)
    );
    // JSON with a `log` that is no HAR stays JSON.
    let other = peel(
        br#"{"log": {"level": "debug"}, "entries": []}"#,
        &PeelOptions::default(),
    );
    assert_eq!(other.payloads.len(), 1);
    assert!(other.payloads[0].layers.is_empty());
}

#[test]
fn a_broken_har_names_the_entry() {
    let bad = br#"{"log":{"entries":[{"request":{"method":"GET","url":"u"},"response":{"status":200}},{"request":5}]}}"#;
    let peeled = peel(bad, &PeelOptions::default());
    let e = peeled
        .error
        .expect("an entry that is not an object is an error");
    assert_eq!(e.layer, "HAR");
    assert!(e.message.contains("log.entries[1]"), "{e}");
}

fn snippet(name: &str) -> wirelens::capture::Payload {
    let peeled = peel(
        fixture(&format!("snippets/{name}")),
        &PeelOptions::default(),
    );
    assert!(peeled.error.is_none(), "{name}: {:?}", peeled.error);
    assert_eq!(peeled.payloads.len(), 1, "{name}");
    peeled.payloads.into_iter().next().unwrap_or_default()
}

#[test]
fn curl_bash_with_ansi_c_binary_body() {
    let p = snippet("chrome-curl-bash-msgpack.txt");
    assert_eq!(p.layers[0].name, "cURL command");
    assert_eq!(p.meta_value("method"), Some("POST"));
    assert_eq!(
        p.meta_value("url"),
        Some("https://api.example.com/v1/orders")
    );
    assert_eq!(p.meta_value("content-type"), Some("application/msgpack"));
    assert_eq!(p.meta_value("cookie"), Some("session=abc123; theme=dark"));
    assert_eq!(p.hint, Some(Format::MessagePack));
    assert_eq!(p.bytes, b"\x82\xa2id*\xa4name\xa3Ada");
    assert_eq!(best_format(&p.bytes, p.hint), Some(Format::MessagePack));
}

#[test]
fn curl_cmd_with_caret_escapes() {
    let p = snippet("chrome-curl-cmd-json.txt");
    assert_eq!(p.meta_value("snippet"), Some("cURL command (cmd)"));
    assert_eq!(p.meta_value("method"), Some("POST"));
    assert_eq!(
        p.meta_value("url"),
        Some("https://api.example.com/v1/orders?id=7&x=1")
    );
    assert_eq!(p.hint, Some(Format::Json));
    assert_eq!(p.bytes, br#"{"note":"50% off","n":1}"#);
}

#[test]
fn fetch_and_node_fetch_bodies() {
    let p = snippet("chrome-fetch.js");
    assert_eq!(p.layers[0].name, "fetch call");
    assert_eq!(p.meta_value("method"), Some("POST"));
    assert_eq!(p.hint, Some(Format::MessagePack));
    assert_eq!(p.bytes, b"\x82\xa2id*\xa4name\xa3Ada");
    let p = snippet("chrome-node-fetch.js");
    assert_eq!(p.meta_value("method"), Some("PUT"));
    assert_eq!(
        p.meta_value("url"),
        Some("https://api.example.com/v1/notes")
    );
    assert_eq!(
        p.bytes,
        "{\"text\":\"line one\\nline \\\"two\\\"\",\"x\":\"Aé\"}".as_bytes()
    );
    assert_eq!(best_format(&p.bytes, p.hint), Some(Format::Json));
}

#[test]
fn curl_at_file_body_warns_and_invents_nothing() {
    let peeled = peel(
        fixture("snippets/curl-at-file.txt"),
        &PeelOptions::default(),
    );
    let p = &peeled.payloads[0];
    assert!(p.bytes.is_empty());
    assert_eq!(p.meta_value("method"), Some("PUT"));
    assert_eq!(p.meta_value("body-file"), Some("body.cbor"));
    assert!(p.cut.is_some());
    assert!(peeled.warnings.iter().any(|w| w.contains("body.cbor")));
}

#[test]
fn cli_inspect_lists_entries_and_picks_one() {
    let path = fixture_path("mitmproxy.har");
    let run = run_wirelens(&["inspect"], &path);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    for i in 0..7 {
        assert!(
            run.stdout.contains(&format!("HAR entry {i}")),
            "{}",
            run.stdout
        );
    }
    let run = run_wirelens(&["inspect", "--pick", "2"], &path);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("payload 2 of 8"), "{}", run.stdout);
    assert!(run.stdout.contains("format: msgpack"), "{}", run.stdout);
    let run = run_wirelens(&["inspect", "--layer", "raw"], &path);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("format: json"), "{}", run.stdout);
}

#[test]
fn cli_convert_all_writes_every_body() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    let path = fixture_path("mitmproxy.har");
    let run = run_wirelens(
        &[
            "convert",
            "--all",
            "--to",
            "json",
            "-o",
            out.to_str().unwrap_or_default(),
        ],
        &path,
    );
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    // JSON Lines, one line per body (the gRPC-Web body is its one message).
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    assert_eq!(text.lines().count(), 8, "{text}\n{}", run.stderr);
    assert!(text.lines().all(|l| l.starts_with('{')), "{text}");
}

/// A value as JSON for comparison with what Python's libraries decoded (`chromium/server.py`
/// writes them): maps with text keys as objects, bytes as `{"$bytes": [..]}`.
fn as_json(v: &wirelens::model::Value) -> serde_json::Value {
    use wirelens::model::Value;
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => (*b).into(),
        Value::Int(i) => match i64::try_from(*i) {
            Ok(n) => n.into(),
            Err(_) => panic!("integer {i} out of the fixtures' range"),
        },
        Value::Float(f) => serde_json::json!(f.value),
        Value::Text(t) => t.to_string().into(),
        Value::Bytes(b) => serde_json::json!({ "$bytes": b }),
        Value::Array(items) => items.iter().map(as_json).collect(),
        Value::Map(entries) => entries
            .iter()
            .map(|(k, v)| match k {
                Value::Text(k) => (k.to_string(), as_json(v)),
                other => panic!("a key that is not text: {other:?}"),
            })
            .collect::<serde_json::Map<_, _>>()
            .into(),
        other => panic!("a value the fixtures do not hold: {other:?}"),
    }
}

fn chromium(name: &str) -> Vec<u8> {
    fixture(&format!("chromium/{name}"))
}

/// `chromium/chromium.har`: headless Chromium 156 (Debian) driven by playwright-core 1.65's
/// `recordHar`, calling `chromium/server.py` on loopback. Every body equals what the server sent,
/// byte for byte, and decodes to what Python's json, msgpack and protobuf decoded from it; the
/// request body Playwright wrote as lossy UTF-8 text says so.
#[test]
fn chromium_har_gives_each_body_as_the_server_sent_it() {
    use wirelens::codec::protobuf::schema::Schema;
    let har = chromium("chromium.har");
    let unsplit = PeelChoice {
        max_layers: None,
        split: Split::Never,
    };
    let peeled = peel(&har, &PeelOptions::choosing(unsplit));
    assert!(peeled.error.is_none(), "{:?}", peeled.error);
    let find = |path: &str, direction: &str| {
        let found: Vec<_> = peeled
            .payloads
            .iter()
            .filter(|p| {
                p.meta_value("url")
                    .is_some_and(|u| u.ends_with(&format!("127.0.0.1:18741{path}")))
                    && p.meta_value("direction") == Some(direction)
            })
            .collect();
        assert!(!found.is_empty(), "{path} {direction}");
        found
    };
    // (path, direction, expected body, format, Python's reading)
    let bodies = [
        ("/api/json", "response", "json", Some(Format::Json)),
        (
            "/api/msgpack",
            "response",
            "msgpack",
            Some(Format::MessagePack),
        ),
        ("/api/proto", "response", "proto", Some(Format::Protobuf)),
        ("/api/binary", "response", "binary", None),
        ("/api/grpc-web", "request", "grpc-web-request", None),
        ("/api/grpc-web", "response", "grpc-web-response", None),
        (
            "/api/echo",
            "response",
            "msgpack",
            Some(Format::MessagePack),
        ),
    ];
    let schema = Schema::from_proto_source(
        "user-profile.proto",
        &String::from_utf8(sample("user-profile.proto")).expect("UTF-8"),
    )
    .expect("the sample schema compiles");
    let with_schema = DecodeOptions {
        message: Some(
            schema
                .message("wirelens.samples.UserProfile")
                .expect("the message type"),
        ),
        ..DecodeOptions::default()
    };
    for (path, direction, body, format) in bodies {
        for p in find(path, direction) {
            assert_eq!(
                p.bytes,
                chromium(&format!("expected/{body}.body")),
                "{path} {direction}"
            );
            assert_eq!(p.cut, None, "{path}");
            assert_eq!(p.meta_value("lossy"), None, "{path}");
            let Some(format) = format else { continue };
            assert_eq!(p.hint, Some(format), "{path}");
            let options = if format == Format::Protobuf {
                &with_schema
            } else {
                assert_eq!(best_format(&p.bytes, p.hint), Some(format), "{path}");
                &DecodeOptions::default()
            };
            let doc = wirelens::codec::decode(&p.bytes, format, options).expect("decodes");
            let want: serde_json::Value =
                serde_json::from_slice(&chromium(&format!("expected/{body}.json")))
                    .expect("expected JSON");
            assert_eq!(as_json(&doc.value), want, "{path} {direction}");
        }
    }

    // The msgpack request body: Playwright writes postData.text as the body decoded as UTF-8,
    // so its bytes are lost; wirelens says so instead of showing them as the body.
    let echo = find("/api/echo", "request");
    assert_eq!(echo.len(), 1);
    assert_eq!(echo[0].meta_value("lossy"), Some("true"));
    assert_ne!(echo[0].bytes, chromium("expected/msgpack.body"));
    assert!(echo[0].layers[1].detail.starts_with("NOT THE BYTES SENT"));
    assert!(peeled
        .warnings
        .iter()
        .any(|w| w.contains("log.entries[8].request.postData.text") && w.contains("U+FFFD")));

    // Split as usual: each gRPC-Web body is its one message, decoding as Python decoded it.
    let split = peel(&har, &PeelOptions::default());
    assert!(split.error.is_none(), "{:?}", split.error);
    for (direction, body) in [
        ("request", "grpc-web-request"),
        ("response", "grpc-web-response"),
    ] {
        let messages: Vec<_> = split
            .payloads
            .iter()
            .filter(|p| {
                p.meta_value("url")
                    .is_some_and(|u| u.ends_with("/api/grpc-web"))
                    && p.meta_value("direction") == Some(direction)
            })
            .collect();
        assert_eq!(messages.len(), 1, "{direction}");
        let m = messages[0];
        assert_eq!(m.layers.last().map(|l| l.name.as_str()), Some("gRPC frame"));
        assert_eq!(m.hint, Some(Format::Protobuf));
        let frame = chromium(&format!("expected/{body}.body"));
        let len = u32::from_be_bytes([frame[1], frame[2], frame[3], frame[4]]) as usize;
        assert_eq!(m.bytes, frame[5..5 + len]);
        let doc =
            wirelens::codec::decode(&m.bytes, Format::Protobuf, &with_schema).expect("decodes");
        let want: serde_json::Value =
            serde_json::from_slice(&chromium(&format!("expected/{body}.json"))).expect("JSON");
        assert_eq!(as_json(&doc.value), want, "{direction}");
    }
    if let Some(m) = split.payloads.iter().find(|p| {
        p.meta_value("direction") == Some("response")
            && p.meta_value("url")
                .is_some_and(|u| u.ends_with("/api/grpc-web"))
    }) {
        assert_eq!(
            m.meta_value("grpc-web trailers"),
            Some("grpc-status:0; grpc-message:")
        );
    }

    // The WebSocket: Playwright's recordHar writes `_webSocketMessages` as DevTools does (text
    // frames as text, binary ones base64), and each message is a payload.
    let ws: Vec<_> = peeled
        .payloads
        .iter()
        .filter(|p| {
            p.layers
                .get(1)
                .is_some_and(|l| l.name == "WebSocket message")
        })
        .collect();
    let directions: Vec<_> = ws.iter().map(|p| p.meta_value("direction")).collect();
    assert_eq!(
        directions,
        [Some("send"), Some("send"), Some("receive"), Some("receive")]
    );
    for (i, p) in ws.iter().enumerate() {
        let (body, format) = if i % 2 == 0 {
            ("ws-text", Format::Json)
        } else {
            ("ws-binary", Format::MessagePack)
        };
        assert_eq!(
            p.bytes,
            chromium(&format!("expected/{body}.body")),
            "ws #{i}"
        );
        assert_eq!(best_format(&p.bytes, p.hint), Some(format), "ws #{i}");
        let doc =
            wirelens::codec::decode(&p.bytes, format, &DecodeOptions::default()).expect("decodes");
        let want: serde_json::Value =
            serde_json::from_slice(&chromium(&format!("expected/{body}.json"))).expect("JSON");
        assert_eq!(as_json(&doc.value), want, "ws #{i}");
    }
}

#[test]
fn cli_lists_the_chromium_har_and_picks_a_body() {
    let path = fixture_path("chromium/chromium.har");
    let run = run_wirelens(&["inspect"], &path);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // 10 entries: one body each, two for the two POSTs, four WebSocket messages; the gRPC-Web
    // bodies are split into their messages.
    assert!(run.stdout.contains("  16. "), "{}", run.stdout);
    assert!(!run.stdout.contains("  17. "), "{}", run.stdout);
    assert!(run.stdout.contains("NOT THE BYTES SENT"), "{}", run.stdout);
    let run = run_wirelens(&["inspect", "--pick", "3"], &path);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("format: msgpack"), "{}", run.stdout);
}

/// A HAR of `n` entries, each answering a different MessagePack body in base64.
fn har_of_base64_bodies(n: usize) -> (String, Vec<Vec<u8>>) {
    use base64::Engine;
    let mut entries = Vec::new();
    let mut bodies = Vec::new();
    for i in 0..n {
        // fixarray of i + 1 positive fixints: a different body each time.
        let mut body = vec![0x90 | (i % 15 + 1) as u8];
        body.extend((0..=i % 15).map(|k| (k * 3) as u8));
        let text = base64::engine::general_purpose::STANDARD.encode(&body);
        entries.push(format!(
            r#"{{"request":{{"method":"GET","url":"https://api.example/{i}"}},"response":{{"status":200,"headers":[{{"name":"content-type","value":"application/msgpack"}}],"content":{{"size":{},"mimeType":"application/msgpack","text":"{text}","encoding":"base64"}}}}}}"#,
            body.len()
        ));
        bodies.push(body);
    }
    (
        format!(
            r#"{{"log":{{"version":"1.2","entries":[{}]}}}}"#,
            entries.join(",")
        ),
        bodies,
    )
}

#[test]
fn a_hars_base64_bodies_are_decoded_when_read_not_all_at_once() {
    let (har, bodies) = har_of_base64_bodies(40);
    let readings = peel_readings(har.into_bytes(), &DecodeOptions::default(), None);
    let payloads = &readings[0].peeled.payloads;
    assert_eq!(payloads.len(), 40, "{}", readings[0].layers());
    // Ranking read the sampled bodies; the others are still base64 in the file.
    let unread = payloads.iter().filter(|p| p.bytes.is_unmade()).count();
    assert!(
        unread >= 40 - wirelens::capture::readings::SAMPLED,
        "{unread} of 40 bodies unread"
    );
    // Lengths are known unread, and reading gives each body as the server sent it.
    for (p, body) in payloads.iter().zip(&bodies) {
        assert_eq!(p.bytes.len(), body.len());
        assert_eq!(p.bytes, *body);
        assert!(!p.bytes.is_unmade());
        assert_eq!(best_format(&p.bytes, p.hint), Some(Format::MessagePack));
    }
}

#[test]
fn base64_the_file_cannot_lend_is_decoded_at_once_and_bad_base64_still_warns() {
    // `\/` escapes (some exporters write them) and padding inside the text.
    let har = r#"{"log":{"entries":[
      {"request":{"method":"GET","url":"u"},"response":{"status":200,"content":{"mimeType":"application/octet-stream","text":"\/\/8A","encoding":"base64"}}},
      {"request":{"method":"GET","url":"u"},"response":{"status":200,"content":{"mimeType":"application/octet-stream","text":"QQ==QQ==","encoding":"base64"}}}
    ]}}"#;
    let peeled = peel(
        har.as_bytes(),
        &PeelOptions::choosing(PeelChoice {
            max_layers: Some(1),
            split: Split::Never,
        }),
    );
    let p = &peeled.payloads;
    assert_eq!(p[0].bytes, [0xff, 0xff, 0x00]);
    assert!(
        !p[0].bytes.is_unmade(),
        "escaped text is decoded as it is read"
    );
    assert_eq!(p[1].bytes, b"QQ==QQ==", "shown as the text it is");
    assert!(
        p[1].meta
            .iter()
            .any(|(k, v)| k == "warning" && v.contains("does not decode")),
        "{:?}",
        p[1].meta
    );
}

#[test]
fn a_bom_a_mime_type_and_text_messages_are_read_as_exporters_write_them() {
    use wirelens::capture::verdict::{verdict, Verdict};
    // A byte-order mark before the HAR (Fiddler and Windows tools write one); a cached 304
    // whose headers lack Content-Type, its mimeType text/html; WebSocket text that is no JSON.
    let mut har = b"\xef\xbb\xbf".to_vec();
    har.extend_from_slice(br#"{"log":{"version":"1.2","entries":[
        {"request":{"method":"GET","url":"https://h/page","headers":[]},
         "response":{"status":304,"headers":[],"content":{"size":13,"mimeType":"text/html","text":"<p>cached</p>"}}},
        {"request":{"method":"GET","url":"wss://h/ws","headers":[]},
         "response":{"status":101,"headers":[],"content":{"size":0,"mimeType":""}},
         "_webSocketMessages":[{"type":"receive","time":1.0,"opcode":1,"data":"bar"}]}]}}"#);
    let peeled = peel(har, &PeelOptions::default());
    assert!(peeled.error.is_none(), "{:?}", peeled.error);
    let p = &peeled.payloads;
    let html = p
        .iter()
        .find(|p| p.bytes == b"<p>cached</p>")
        .expect("the 304's body");
    assert_eq!(
        verdict(html),
        Some(Verdict::Text {
            media_type: "text/html".into(),
            said_by: "its media type"
        })
    );
    let bar = p.last().expect("the text message");
    assert_eq!(bar.bytes, b"bar");
    assert!(matches!(verdict(bar), Some(Verdict::Text { .. })));
    // The BOM is not part of any span: the body's layer points at its text in the file.
    let span = html.layers[1].span;
    let whole = {
        let mut h = b"\xef\xbb\xbf".to_vec();
        h.extend_from_slice(b"x");
        h
    };
    assert!(span.start > whole.len());
}
