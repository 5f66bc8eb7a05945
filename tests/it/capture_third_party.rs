//! Material other projects' tools wrote, read as their own references read it
//! (`tests/fixtures/capture/third-party/`, each folder with its source, commit and licence).

use std::path::PathBuf;

use wirelens::capture::{peel, Payload, PeelOptions};

fn folder(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/capture/third-party")
        .join(name)
}

/// A request as curl sent it: the request line, the headers and the `Content-Length` bytes after
/// the blank line.
struct Request {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn request(bytes: &[u8]) -> Request {
    let (head, rest) = match bytes.windows(4).position(|w| w == b"\r\n\r\n") {
        Some(at) => (&bytes[..at], &bytes[at + 4..]),
        None => match bytes.windows(2).position(|w| w == b"\n\n") {
            Some(at) => (&bytes[..at], &bytes[at + 2..]),
            None => (bytes, &[][..]),
        },
    };
    let head = String::from_utf8_lossy(head);
    let mut lines = head.lines();
    let line = lines.next().unwrap_or("");
    let mut parts = line.splitn(3, ' ');
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok());
    let body = match length {
        Some(n) if n <= rest.len() => rest[..n].to_vec(),
        _ => Vec::new(),
    };
    Request {
        method,
        target,
        headers,
        body,
    }
}

/// The path and query of a URL (`/` when it names none), as a request line carries it.
fn target_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    match rest.find(['/', '?']) {
        Some(at) if rest[at..].starts_with('?') => format!("/{}", &rest[at..]),
        Some(at) => rest[at..].to_string(),
        None => "/".to_string(),
    }
}

/// How wirelens' request differs from curl's, or `None`.
fn difference(p: &Payload, want: &Request) -> Option<String> {
    let method = p.meta_value("method").unwrap_or("");
    if method != want.method {
        return Some(format!("method {method} where curl sent {}", want.method));
    }
    let target = target_of(p.meta_value("url").unwrap_or(""));
    // curlconverter writes a request to a URL with no path as `GET ?q`; curl sends `/?q`.
    let want_target = if want.target.starts_with('?') {
        format!("/{}", want.target)
    } else {
        want.target.clone()
    };
    if target != want_target {
        return Some(format!("target {target} where curl sent {}", want.target));
    }
    if let Some(file) = p.meta_value("body-file") {
        return Some(format!("the body is in {file}"));
    }
    // JSON a converter wrote from a value (Python's `json=`, HTTPie's fields) is spaced as its
    // serialiser spaces it: equal by value is the same body.
    let json = |b: &[u8]| serde_json::from_slice::<serde_json::Value>(b).ok();
    let same_json =
        !want.body.is_empty() && json(&p.bytes).is_some() && json(&p.bytes) == json(&want.body);
    if p.bytes.as_slice() != want.body.as_slice() && !same_json {
        return Some(format!(
            "body {:?} where curl sent {:?}",
            String::from_utf8_lossy(&p.bytes),
            String::from_utf8_lossy(&want.body)
        ));
    }
    // A Content-Type curl sent is the one wirelens says the body has.
    if let Some((_, ct)) = want.headers.iter().find(|(k, _)| k == "content-type") {
        let mine = p
            .meta
            .iter()
            .rev()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v);
        if !want.body.is_empty() && mine != Some(ct.as_str()) {
            return Some(format!("Content-Type {mine:?} where curl sent {ct:?}"));
        }
    }
    None
}

/// The commands whose request wirelens does not make as curl made it, and why it cannot: the
/// bytes are not in the snippet, or a shell would have to run.
const CURL_DIFFERENCES: &[(&str, &str)] = &[
    (
        "multiple_urls",
        "the first request's body is a file (-T file.txt)",
    ),
    (
        "post_binary_file",
        "the body is in a file (--data-binary @file)",
    ),
    ("put_with_T_option", "the body is in a file (-T)"),
    ("put_with_file", "the body is in a file (-T)"),
    (
        "read_stdin",
        "the body is standard input (@-), which the snippet does not hold",
    ),
    (
        "redirect_command_data",
        "the body is standard input redirected from a command's output",
    ),
    (
        "redirect_command_url_query",
        "the query is read from standard input (@-)",
    ),
    (
        "redirect_variable_data",
        "the body is standard input redirected from $FILENAME",
    ),
    ("upload_file", "the body is in a file (--upload-file)"),
    (
        "url_query_reads_file",
        "--url-query name@file reads the file",
    ),
];

#[test]
fn curl_commands_make_the_requests_curl_sent() {
    // curlconverter's test commands, each with the request curl 8.2.1 sent for it.
    compare_snippets("sh", "cURL command", 60, CURL_DIFFERENCES);
}

/// The fetch calls curlconverter wrote for those commands whose request wirelens does not read
/// as curl sent it, and why.
const FETCH_DIFFERENCES: &[(&str, &str)] = &[
    (
        "multiline_post_with_data",
        "the body is `new URLSearchParams({…})`: an expression, not read (it encodes otherwise than curl sent)",
    ),
    (
        "patch",
        "the body is `JSON.stringify({…})`: an expression, not read (its bytes are not curl's spacing either)",
    ),
    (
        "post_basic_auth_url_encoded_data",
        "the body is `new URLSearchParams({…})`: an expression, not read (it encodes otherwise than curl sent)",
    ),
    (
        "post_data_binary_with_equals",
        "the body is `JSON.stringify({…})`: an expression, not read (its bytes are not curl's spacing either)",
    ),
    (
        "post_json",
        "the body is `JSON.stringify({…})`: an expression, not read (its bytes are not curl's spacing either)",
    ),
    (
        "post_json_multiple_headers",
        "the body is `JSON.stringify({…})`: an expression, not read (its bytes are not curl's spacing either)",
    ),
    (
        "post_quotes_inside_data",
        "the body is `new URLSearchParams({…})`: an expression, not read (it encodes otherwise than curl sent)",
    ),
    (
        "post_same_field_multiple_times",
        "the body is `new URLSearchParams({…})`: an expression, not read (it encodes otherwise than curl sent)",
    ),
    (
        "post_with_data-ascii",
        "the body is `new URLSearchParams({…})`: an expression, not read (it encodes otherwise than curl sent)",
    ),
    (
        "post_with_urlencoded_data",
        "the body is `new URLSearchParams({…})`: an expression, not read (it encodes otherwise than curl sent)",
    ),
    (
        "post_with_urlencoded_data_and_headers",
        "the body is `new URLSearchParams({…})`: an expression, not read (it encodes otherwise than curl sent)",
    ),
    (
        "put_with_T_option",
        "the body is a `File`, which the snippet does not hold",
    ),
    (
        "put_xput",
        "the body is `JSON.stringify({…})`: an expression, not read (its bytes are not curl's spacing either)",
    ),
    (
        "redirect_command_data",
        "the body is `new URLSearchParams({…})`: an expression, not read (it encodes otherwise than curl sent)",
    ),
    (
        "redirect_variable_data",
        "the body is `new URLSearchParams({…})`: an expression, not read (it encodes otherwise than curl sent)",
    ),
];

#[test]
fn fetch_calls_make_the_requests_curl_sent() {
    // curlconverter's JavaScript for the same commands: `fetch(url, {…})`, bodies as string
    // literals, `JSON.stringify(…)` or `new URLSearchParams(…)`.
    compare_snippets("js", "fetch call", 40, FETCH_DIFFERENCES);
}

/// Every `NAME.EXT` snippet of curlconverter's folder read as a `layer` payload and compared
/// with `NAME.http`, the request curl sent; the names that differ must be exactly `known`'s.
fn compare_snippets(ext: &str, layer: &str, at_least: usize, known: &[(&str, &str)]) {
    compare_snippets_in("curlconverter", ext, layer, at_least, known);
}

/// [`compare_snippets`] for the snippets of `dir`.
fn compare_snippets_in(dir: &str, ext: &str, layer: &str, at_least: usize, known: &[(&str, &str)]) {
    let dir = folder(dir);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("the folder")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(&format!(".{ext}")).map(str::to_string))
        .collect();
    names.sort();
    assert!(names.len() >= at_least, "{} snippets", names.len());
    let mut differ: Vec<(String, String)> = Vec::new();
    for name in &names {
        let snippet = std::fs::read(dir.join(format!("{name}.{ext}"))).expect("the snippet");
        let want = request(&std::fs::read(dir.join(format!("{name}.http"))).expect("the request"));
        let peeled = peel(snippet, &PeelOptions::default());
        let p = peeled
            .payloads
            .first()
            .unwrap_or_else(|| panic!("{name}: no payload"));
        assert_eq!(
            p.layers.first().map(|l| l.name.as_str()),
            Some(layer),
            "{name}"
        );
        if let Some(why) = difference(p, &want) {
            differ.push((name.clone(), why));
        }
    }
    let known: Vec<&str> = known.iter().map(|(n, _)| *n).collect();
    let found: Vec<&str> = differ.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(found, known, "{differ:#?}");
}

/// `(entry, side, bytes, SHA-256)` of every body with bytes, as `answers_har.py` writes them.
fn har_answer(name: &str) -> Vec<(usize, String, usize, String)> {
    let text =
        std::fs::read_to_string(folder("answers").join(format!("{name}.txt"))).expect("the answer");
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (
                f[0].parse().expect("an entry"),
                f[1].to_string(),
                f[2].parse().expect("a length"),
                f[3].to_string(),
            )
        })
        .collect()
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn har_exports_of_every_browser_and_proxy_give_the_bodies_python_reads() {
    // mitmproxy's test HARs: Chrome, Firefox, Safari, Charles, Insomnia exports, one with a
    // byte-order mark, mitmproxy's own with WebSocket messages, an event stream, a corrupted
    // gzip body, logs cut short.
    let dir = folder("mitmproxy");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("the folder")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".har").map(str::to_string))
        .collect();
    names.sort();
    assert_eq!(names.len(), 14);
    for name in &names {
        let peeled = peel(
            std::fs::read(dir.join(format!("{name}.har"))).expect("the HAR"),
            &PeelOptions::default(),
        );
        // The one error: a body that starts like gzip and is not, named in its layer with
        // the body kept as the export holds it.
        if let Some(e) = &peeled.error {
            assert_eq!(
                (name.as_str(), e.layer.as_str(), e.offset),
                ("corrupted_gzip_body", "gzip", 0),
                "{e}"
            );
        }
        let mut mine: Vec<(usize, String, usize, String)> = peeled
            .payloads
            .iter()
            .filter(|p| !p.bytes.is_empty())
            .map(|p| {
                let layer = p.layers.first().map_or("", |l| l.name.as_str());
                let entry = layer
                    .strip_prefix("HAR entry ")
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("{name}: a payload not from an entry: {layer}"));
                (
                    entry,
                    p.meta_value("direction").unwrap_or("").to_string(),
                    p.bytes.len(),
                    sha256(&p.bytes),
                )
            })
            .collect();
        let mut want = har_answer(name);
        mine.sort();
        want.sort();
        assert_eq!(mine, want, "{name}");
    }
}

/// The name wirelens gives a protocol tshark names, for those that are no data format.
fn not_data_name(tshark: &str) -> Option<&'static str> {
    Some(match tshark {
        "dns" => "DNS",
        "mdns" => "mDNS",
        "llmnr" => "LLMNR",
        "nbns" => "NBNS",
        "dhcp" => "DHCP",
        "dhcpv6" => "DHCPv6",
        "ntp" => "NTP",
        "quic" | "gquic" => "QUIC",
        "sip" => "SIP",
        "ssdp" => "SSDP",
        _ => return None,
    })
}

/// The frame numbers a payload's `frames` meta lists (`4`, `4, 6–9`).
fn frames_of(p: &Payload) -> Vec<u64> {
    let mut out = Vec::new();
    for part in p.meta_value("frames").unwrap_or("").split(", ") {
        match part.split_once('–') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u64>(), b.parse::<u64>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.parse::<u64>().ok()),
        }
    }
    out
}

#[test]
fn tcpdump_test_captures_name_the_protocols_tshark_names() {
    // tcpdump's test captures of DNS (UDP and TCP, DNSSEC, EDNS), DHCP, DHCPv6, NTP, NBNS, QUIC
    // and Google QUIC: each datagram tshark dissects as one of them is that protocol's message
    // in wirelens too, never a data payload; the HTTP ones are a text body (XML), read as text.
    let dir = folder("tcpdump");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("the folder")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".pcap").map(str::to_string))
        .collect();
    names.sort();
    assert_eq!(names.len(), 25);
    let mut named = 0usize;
    for name in &names {
        let peeled = peel(
            std::fs::read(dir.join(format!("{name}.pcap"))).expect("the capture"),
            &PeelOptions::default(),
        );
        let answer = std::fs::read_to_string(folder("answers").join(format!("tcpdump-{name}.txt")))
            .expect("tshark's answer");
        for line in answer.lines().filter(|l| !l.starts_with('#')) {
            let (frame, protocol) = line.split_once(' ').expect("frame protocol");
            let frame: u64 = frame.parse().expect("a frame number");
            let carrying: Vec<&Payload> = peeled
                .payloads
                .iter()
                .filter(|p| frames_of(p).contains(&frame))
                .collect();
            assert!(
                !carrying.is_empty(),
                "{name}: no payload holds frame {frame}"
            );
            match not_data_name(protocol) {
                Some(want) => {
                    named += 1;
                    for p in &carrying {
                        assert_eq!(
                            p.protocol.as_deref(),
                            Some(want),
                            "{name}: frame {frame} is {protocol} to tshark"
                        );
                        assert!(matches!(
                            wirelens::capture::verdict::verdict(p),
                            Some(wirelens::capture::verdict::Verdict::NotData { .. })
                        ));
                    }
                }
                None => {
                    // HTTP: the XML body is text, as its Content-Type says.
                    assert_eq!(protocol, "http", "{name}: frame {frame}");
                    let body = carrying
                        .iter()
                        .find(|p| !p.bytes.is_empty())
                        .expect("a body");
                    assert!(matches!(
                        wirelens::capture::verdict::verdict(body),
                        Some(wirelens::capture::verdict::Verdict::Text { .. })
                    ));
                }
            }
        }
        // The default payload is never another protocol's message while data is there.
        let chosen =
            &peeled.payloads[wirelens::capture::listing::default_payload(&peeled.payloads)];
        if peeled
            .payloads
            .iter()
            .any(|p| !p.bytes.is_empty() && p.protocol.as_deref().is_none())
        {
            assert!(chosen.protocol.as_deref().is_none(), "{name}");
        }
    }
    assert_eq!(named, 194, "frames named");
}

#[test]
fn arkime_requests_with_extension_methods_are_requests_as_tshark_reads_them() {
    // Arkime's synthetic capture: certificate enrolment, Exchange's RPC over HTTP
    // (`RPC_IN_DATA`, `RPC_OUT_DATA`: a method is any token), WinRM. Every request tshark
    // dissects is a request payload with the same start line, every body it exports is a
    // payload with the same bytes, and no stream is given up as not HTTP.
    let peeled = peel(
        std::fs::read(folder("arkime").join("synthetic.pcap")).expect("the capture"),
        &PeelOptions::default(),
    );
    let answer = std::fs::read_to_string(folder("answers").join("arkime-synthetic.txt"))
        .expect("tshark's answer");
    // RPC over HTTP announces a 1 GiB body for each channel and streams into it: the capture
    // ends first, and that is what is said of those three requests. The one other warning
    // names a WebSocket close frame that no message carries.
    let (cut, others): (Vec<&String>, Vec<&String>) = peeled.warnings.iter().partition(|w| {
        w.contains("HTTP/1.1 request")
            && w.contains("the body has 0 of the 1073741824 bytes Content-Length announces")
    });
    assert_eq!(cut.len(), 3, "{:?}", peeled.warnings);
    assert_eq!(
        others,
        ["stream 177 (TCP 10.9.9.1:49500 → 10.9.9.2:80): WebSocket (server→client): control frames and no text or binary message: close 1000 \"bye-split\" at byte 129 (frame 831)"],
    );
    let mut lines: Vec<&str> = peeled
        .payloads
        .iter()
        .filter(|p| p.meta_value("method").is_some())
        .filter_map(|p| p.meta_value("start-line"))
        .collect();
    let mut bodies: Vec<(usize, String)> = peeled
        .payloads
        .iter()
        .filter(|p| !p.bytes.is_empty())
        .map(|p| (p.bytes.len(), sha256(&p.bytes)))
        .collect();
    let (mut requests, mut objects) = (0, 0);
    for line in answer.lines().filter(|l| !l.starts_with('#')) {
        if let Some(start) = line.strip_prefix("request ") {
            requests += 1;
            let at = lines.iter().position(|l| *l == start);
            assert!(
                at.is_some(),
                "tshark's request {start:?} is no payload: {lines:?}"
            );
            if let Some(at) = at {
                lines.swap_remove(at);
            }
        } else if let Some(object) = line.strip_prefix("object ") {
            objects += 1;
            let (size, sha) = object.split_once(' ').expect("size and hash");
            let want = (size.parse::<usize>().expect("a size"), sha.to_string());
            let at = bodies.iter().position(|b| *b == want);
            assert!(
                at.is_some(),
                "tshark's object of {size} bytes is no payload"
            );
            if let Some(at) = at {
                bodies.swap_remove(at);
            }
        } else {
            panic!("an answer line {line:?}");
        }
    }
    assert_eq!(
        (requests, objects),
        (26, 29),
        "requests and objects compared"
    );
    assert!(lines.is_empty(), "requests tshark does not list: {lines:?}");
}

#[test]
fn a_websocket_ping_with_no_message_after_it_is_said() {
    // Zeek's wrong-accept-header trace: the server's only frame after the 101 is a ping
    // (`89 04 "Zeek"`, frame 8, as tshark lists it). No message carries it, so a warning does.
    let peeled = peel(
        std::fs::read(folder("zeek").join("websocket-wrong-accept-header.pcap"))
            .expect("the capture"),
        &PeelOptions::default(),
    );
    assert!(
        peeled.warnings.iter().any(|w| w.contains(
            "WebSocket (server→client): control frames and no text or binary message: ping, 4 bytes at byte 163 (frame 8)"
        )),
        "{:?}",
        peeled.warnings
    );
}

#[test]
fn zeek_test_captures_give_the_bodies_and_messages_tshark_finds() {
    // Zeek's test traces of HTTP as servers and proxies send it (gzip, x-gzip, deflate without
    // its zlib header, pipelining, 100-continue, gaps, connections without FIN, a lying
    // Content-Length, multipart) and of WebSocket (fragments, pings, Jupyter, Broker): every
    // body tshark exports is a payload with the same bytes, and the text and binary messages are
    // as many as tshark's.
    let dir = folder("zeek");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("the folder")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".pcap").map(str::to_string))
        .collect();
    names.sort();
    assert_eq!(names.len(), 23);
    let (mut objects, mut messages) = (0usize, 0usize);
    for name in &names {
        let peeled = peel(
            std::fs::read(dir.join(format!("{name}.pcap"))).expect("the capture"),
            &PeelOptions::default(),
        );
        let answer = std::fs::read_to_string(folder("answers").join(format!("zeek-{name}.txt")))
            .expect("tshark's answer");
        let mut bodies: Vec<(usize, String)> = peeled
            .payloads
            .iter()
            .filter(|p| !p.bytes.is_empty())
            .map(|p| (p.bytes.len(), sha256(&p.bytes)))
            .collect();
        let count = |kind: &str| {
            peeled
                .payloads
                .iter()
                .filter(|p| p.meta_value("websocket opcode") == Some(kind))
                .count()
        };
        for line in answer.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split(' ').collect();
            match f.as_slice() {
                ["object", size, sha] => {
                    objects += 1;
                    let want = (size.parse::<usize>().expect("a size"), sha.to_string());
                    let at = bodies.iter().position(|b| *b == want);
                    assert!(
                        at.is_some(),
                        "{name}: tshark's object of {size} bytes is no payload; {:?}",
                        peeled.warnings
                    );
                    if let Some(at) = at {
                        bodies.swap_remove(at);
                    }
                }
                ["websocket", kind, n] => {
                    let n: usize = n.parse().expect("a count");
                    messages += n;
                    assert_eq!(count(kind), n, "{name}: {kind} messages");
                }
                _ => panic!("{name}: an answer line {line:?}"),
            }
        }
    }
    assert_eq!(
        (objects, messages),
        (20, 35),
        "objects and messages compared"
    );
}

/// The captures `answers_capture.py` answers for with tshark, each with its key log.
fn tshark_captures() -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for dir in ["suricata", "zeek-more", "snet", "illustrated"] {
        let mut names: Vec<String> = std::fs::read_dir(folder(dir))
            .expect("the folder")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter_map(|n| n.strip_suffix(".pcap").map(str::to_string))
            .collect();
        names.sort();
        for n in names {
            let keylog = format!("{dir}/{n}.keylog");
            let keylog = folder(&keylog).exists().then_some(keylog);
            out.push((format!("{dir}/{n}"), keylog));
        }
    }
    out.push(("tcpdump-print/print-flags".to_string(), None));
    out
}

/// What wirelens does not read as tshark does, by capture and answer kind, with the reason (the
/// third-party README's table says the same).
const TSHARK_DIFFERENCES: &[(&str, &str, &str)] = &[
    (
        "illustrated/quic",
        "quic",
        "QUIC is not decrypted with a key log: its STREAM data is no payload",
    ),
    (
        "suricata/doh-get",
        "object",
        "tshark 4.0 exports the client's HTTP/2 preface and first frames (448 bytes from `PRI * \
         HTTP/2.0`) as an HTTP object: no body; its DATA lines give the 468-byte responses, which \
         wirelens gives",
    ),
    (
        "suricata/doh-post",
        "object",
        "the same: a 148-byte object from `PRI * HTTP/2.0`",
    ),
    (
        "suricata/http2-continuation",
        "object",
        "the same: a 24-byte object, the preface alone",
    ),
    (
        "suricata/http2-multiple-headers",
        "object",
        "the same: a 64-byte object from `PRI * HTTP/2.0`",
    ),
    (
        "suricata/http-gap-beyond-body",
        "object",
        "after the gap tshark runs 56 bytes of the lost response into the next one's head and \
         exports all 169 as one body; wirelens resumes at the next status line and gives its \
         12-byte body",
    ),
];

fn differs(name: &str, kind: &str) -> bool {
    TSHARK_DIFFERENCES
        .iter()
        .any(|(n, k, _)| *n == name && *k == kind)
}

#[test]
fn captures_of_intrusion_detection_suites_and_tls_libraries_read_as_tshark_reads_them() {
    // Suricata's verification captures (HTTP/2 with deflate, CONTINUATION, ranges, CONNECT
    // tunnels; DNS over HTTPS; WebSocket with permessage-deflate, fragments and control frames;
    // stacked Content-Encodings; TCP gaps; SIP, SSDP, DNS, DHCP, QUIC), Zeek's mDNS and SIP,
    // a TLS library's captures of every AEAD suite with their key logs, and tcpdump's HTTP
    // capture: what tshark exports, decrypts and names, wirelens gives too.
    use wirelens::capture::verdict::{verdict, Verdict};
    let captures = tshark_captures();
    assert_eq!(captures.len(), 40);
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    let mut failures: Vec<String> = Vec::new();
    macro_rules! check {
        ($cond:expr, $($why:tt)+) => {
            if !$cond {
                failures.push(format!($($why)+));
            }
        };
    }
    for (name, keylog) in &captures {
        let keys = keylog.as_ref().map(|k| {
            let text = std::fs::read_to_string(folder(k)).expect("the key log");
            wirelens::capture::tls::KeyLog::parse(&text).expect("a key log")
        });
        let peeled = peel(
            std::fs::read(folder(&format!("{name}.pcap"))).expect("the capture"),
            &PeelOptions {
                keys: keys.as_ref(),
                ..PeelOptions::default()
            },
        );
        let answer_name = name.replace('/', "-");
        let answer = std::fs::read_to_string(folder("answers").join(format!("{answer_name}.txt")))
            .expect("tshark's answer");
        let bodies: Vec<(usize, String)> = peeled
            .payloads
            .iter()
            .map(|p| (p.bytes.len(), sha256(&p.bytes)))
            .collect();
        let has_body = |size: &str, sha: &str| {
            let size: usize = size.parse().expect("a size");
            bodies.iter().any(|(n, s)| *n == size && s == sha)
        };
        let holding = |frame: u64| -> Vec<&Payload> {
            peeled
                .payloads
                .iter()
                .filter(|p| frames_of(p).contains(&frame))
                .collect()
        };
        for line in answer.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split(' ').collect();
            match f.as_slice() {
                ["frame", n, chain] => {
                    let first = chain.split(':').next().unwrap_or("");
                    let Some(want) = not_data_name(first) else {
                        continue;
                    };
                    let frame: u64 = n.parse().expect("a frame");
                    let carrying = holding(frame);
                    check!(
                        !carrying.is_empty(),
                        "{name}: no payload holds frame {frame}"
                    );
                    for p in carrying {
                        check!(
                            p.protocol.as_deref() == Some(want),
                            "{name}: frame {frame} is not named {want}"
                        );
                    }
                    *counts.entry("frames named").or_default() += 1;
                }
                ["object", size, sha] => {
                    if differs(name, "object") {
                        check!(!has_body(size, sha), "{name}: listed as differing");
                        continue;
                    }
                    check!(has_body(size, sha), "{name}: tshark's {size}-byte object");
                    *counts.entry("objects").or_default() += 1;
                }
                ["http2", _, _, "data", data] if *data != "-" => {
                    // A packet's DATA as tshark shows it (its bytes, and after a
                    // Content-Encoding the decoded bytes too): one of them is a payload.
                    let found = data.split(',').any(|d| {
                        let (size, sha) = d.split_once(':').expect("bytes:sha");
                        has_body(size, sha)
                    });
                    check!(found, "{name}: no payload is the DATA of {line}");
                    *counts.entry("HTTP/2 DATA").or_default() += 1;
                }
                ["websocket", _, frames, "text", text, "binary", binary] => {
                    // Whole messages (FIN, not a continuation): each one a payload.
                    let whole = frames.split(',').all(|f| {
                        let parts: Vec<&str> = f.split('/').collect();
                        parts.get(1) == Some(&"1") && parts.first() != Some(&"0")
                    });
                    for (kind, value) in [("text", text), ("binary", binary)] {
                        if *value == "-" || !whole {
                            continue;
                        }
                        let mut parts = value.splitn(3, ':');
                        let (size, sha) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
                        check!(
                            has_body(size, sha),
                            "{name}: a {kind} message of {size} bytes"
                        );
                        *counts.entry("WebSocket messages").or_default() += 1;
                    }
                }
                ["tls", _, "node0", _] => {}
                ["tls", _, _, _, size, sha] => {
                    if *size != "0" {
                        check!(has_body(size, sha), "{name}: {size} decrypted bytes");
                        *counts.entry("TLS sides decrypted").or_default() += 1;
                    }
                }
                ["segment", n, "seq", _, size, sha, ..] => {
                    // A segment after a TCP gap is still read: its bytes are in a payload of
                    // its frame.
                    let frame: u64 = n.parse().expect("a frame");
                    let size: usize = size.parse().expect("a size");
                    let inside = holding(frame).iter().any(|p| {
                        p.bytes.len() >= size && p.bytes.windows(size).any(|w| sha256(w) == *sha)
                    });
                    check!(inside, "{name}: segment of frame {frame}");
                    *counts.entry("segments after gaps").or_default() += 1;
                }
                ["quic", ..] => {
                    check!(differs(name, "quic"), "{name}: {line}");
                }
                ["http", ..] | ["http2", ..] | ["websocket", ..] => {}
                _ => panic!("{name}: an answer line {line:?}"),
            }
        }
        // DNS over HTTPS is DNS, whatever carries it; decrypted text is text.
        for p in &peeled.payloads {
            let media = p.meta_value("content-type").unwrap_or("");
            if media.starts_with("application/dns-message") && !p.bytes.is_empty() {
                assert_eq!(
                    verdict(p),
                    Some(Verdict::NotData {
                        protocol: "DNS".to_string()
                    }),
                    "{name}"
                );
                *counts.entry("DoH bodies named DNS").or_default() += 1;
            }
        }
        if keylog.is_some() && !differs(name, "quic") {
            check!(
                peeled
                    .payloads
                    .iter()
                    .filter(|p| !p.bytes.is_empty())
                    .all(|p| matches!(verdict(p), Some(Verdict::Text { .. }))),
                "{name}: the decrypted bytes are text"
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let counts: Vec<(&str, usize)> = counts.into_iter().collect();
    assert_eq!(
        counts,
        vec![
            ("DoH bodies named DNS", 72),
            ("HTTP/2 DATA", 115),
            ("TLS sides decrypted", 11),
            ("WebSocket messages", 15),
            ("frames named", 146),
            ("objects", 7),
            ("segments after gaps", 4),
        ]
    );
}

#[test]
fn har_exports_without_bodies_list_every_entry_as_the_browser_wrote_it() {
    // sitespeed.io's pagexray fixtures: Firefox and Chrome (Browsertime, chrome-har) exports of
    // whole page loads over HTTP/1.1 and HTTP/2, with no `content.text`: each entry is listed
    // with its method, URL, status and media type, its response marked as left out.
    let dir = folder("pagexray");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("the folder")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".har").map(str::to_string))
        .collect();
    names.sort();
    assert_eq!(names.len(), 5);
    let mut entries = 0;
    for name in &names {
        let peeled = peel(
            std::fs::read(dir.join(format!("{name}.har"))).expect("the HAR"),
            &PeelOptions::default(),
        );
        let answer =
            std::fs::read_to_string(folder("answers").join(format!("pagexray-{name}.txt")))
                .expect("Python's reading");
        let want: Vec<Vec<&str>> = answer
            .lines()
            .filter(|l| l.starts_with("entry "))
            .map(|l| l.splitn(6, ' ').collect())
            .collect();
        for w in &want {
            let [_, index, method, url, status, mime] = w.as_slice() else {
                panic!("{name}: an answer line {w:?}");
            };
            let layer = format!("HAR entry {index}");
            let of_entry: Vec<&Payload> = peeled
                .payloads
                .iter()
                .filter(|p| p.layers.first().is_some_and(|l| l.name == layer))
                .collect();
            let response = of_entry
                .iter()
                .find(|p| p.meta_value("direction") == Some("response"))
                .unwrap_or_else(|| panic!("{name}: entry {index} has no response payload"));
            assert_eq!(
                response.meta_value("method"),
                Some(*method),
                "{name} {index}"
            );
            assert_eq!(response.meta_value("url"), Some(*url), "{name} {index}");
            assert_eq!(
                response.meta_value("status"),
                Some(*status),
                "{name} {index}"
            );
            if !mime.is_empty() {
                let media = |m: &str| m.split(';').next().unwrap_or("").trim().to_string();
                assert_eq!(
                    response.meta_value("mime-type").map(media),
                    Some(media(mime)),
                    "{name} {index}"
                );
            }
            // No body in the export: nothing to read, and said so.
            assert!(response.bytes.is_empty(), "{name} {index}");
            entries += 1;
        }
        let listed: std::collections::BTreeSet<&str> = peeled
            .payloads
            .iter()
            .filter_map(|p| p.layers.first().map(|l| l.name.as_str()))
            .collect();
        assert_eq!(listed.len(), want.len(), "{name}: entries listed");
    }
    assert_eq!(entries, 53);
}

#[test]
fn bytes_skipped_after_a_gap_are_counted_with_their_frames() {
    // Suricata's gap capture: the second response's body is 70 bytes, of which 14 came before
    // the gap, 14 are missing, and 42 follow it before the third response: those 42 are said,
    // not dropped without a word, and the third response is read whole.
    let peeled = peel(
        std::fs::read(folder("suricata/http-gap-simple.pcap")).expect("the capture"),
        &PeelOptions::default(),
    );
    let said: Vec<&String> = peeled
        .warnings
        .iter()
        .filter(|w| w.contains("after the gap are the rest of a message it cut"))
        .collect();
    assert_eq!(said.len(), 1, "{:?}", peeled.warnings);
    assert!(
        said[0].contains("42 bytes after the gap") && said[0].contains("(frame 18, 20, 22)"),
        "{}",
        said[0]
    );
    let bodies: Vec<usize> = peeled
        .payloads
        .iter()
        .filter(|p| !p.bytes.is_empty())
        .map(|p| p.bytes.len())
        .collect();
    assert_eq!(bodies, vec![12, 14, 12]);
}

#[test]
fn tcpdump_printouts_are_read_as_the_capture_they_print() {
    // tcpdump's own test outputs of print-flags.pcap with -x (from the IP header), -xx (from the
    // link layer), -X and -XX (with ASCII): each gives the payloads the capture gives, byte for
    // byte (the GET and its 5,258-byte HTML response).
    let of = |name: &str| {
        let peeled = peel(
            std::fs::read(folder(&format!("tcpdump-print/{name}"))).expect("the file"),
            &PeelOptions::default(),
        );
        assert!(peeled.error.is_none(), "{name}: {:?}", peeled.error);
        peeled
            .payloads
            .iter()
            .map(|p| {
                (
                    p.bytes.len(),
                    sha256(&p.bytes),
                    p.meta_value("direction").map(String::from),
                )
            })
            .collect::<Vec<_>>()
    };
    let want = of("print-flags.pcap");
    assert_eq!(want.len(), 2);
    assert_eq!(want[1].0, 5258);
    for name in [
        "print-x.out",
        "print-xx.out",
        "print-capX.out",
        "print-capXX.out",
    ] {
        assert_eq!(of(name), want, "{name}");
    }
}

/// The Python snippets whose request is not curl's, and why.
const PYTHON_DIFFERENCES: &[(&str, &str)] = &[(
    "strange_http_method",
    "requests sends the method upper-cased (`method.upper()`): WHAT, where curl sent wHat",
)];

#[test]
fn python_requests_snippets_make_the_requests_curl_sent() {
    // curlconverter's Python conversions of the curl commands: params, headers, cookies, auth,
    // `data=` as a string or a form dict, `json=` (equal to curl's body by value).
    compare_snippets_in(
        "curlconverter-py",
        "py",
        "Python requests call",
        12,
        PYTHON_DIFFERENCES,
    );
}

/// The HTTPie snippets whose request is not curl's, and why.
const HTTPIE_DIFFERENCES: &[(&str, &str)] = &[
    (
        "post_data_binary_with_equals",
        "each `[]` in an HTTPie path appends a new array item, so `Body[Items][][Subject]` \
         starts a second item: the command the converter wrote sends another body than curl's",
    ),
    (
        "strange_http_method",
        "HTTPie sends the method upper-cased: WHAT, where curl sent wHat",
    ),
];

#[test]
fn httpie_snippets_make_the_requests_curl_sent() {
    // curlconverter's HTTPie conversions: `:port/path`, METHOD, `Header:value`, `q==v`,
    // `field=text` and `field:=json` as a JSON object (nested paths too), `--form`, `--raw`.
    compare_snippets_in(
        "curlconverter-py",
        "httpie",
        "HTTPie command",
        12,
        HTTPIE_DIFFERENCES,
    );
}
