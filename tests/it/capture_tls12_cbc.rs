//! TLS 1.2 CBC suites decrypted from captures wirelens did not make
//! (`tests/fixtures/capture/tls12-cbc/`, see its README.md): each capture's plaintext, record by
//! record and direction by direction, is exactly what tshark decrypted with the same key log
//! (`NAME.tshark-follow`, written by `answers.sh`).

use wirelens::capture::pcap::{self, PcapLimits};
use wirelens::capture::tls::{decrypt, Decrypted, KeyLog};
use wirelens::capture::{peel, PeelOptions};

const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/capture/tls12-cbc/"
);

fn read(name: &str) -> Vec<u8> {
    let path = format!("{DIR}{name}");
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn keylog(name: &str) -> KeyLog {
    let text = String::from_utf8(read(&format!("{name}.keylog"))).expect("utf-8");
    KeyLog::parse(&text).expect("a key log")
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

/// tshark's decrypted application-data records, `[client→server, server→client]`.
fn tshark_records(name: &str) -> [Vec<Vec<u8>>; 2] {
    let text = String::from_utf8(read(&format!("{name}.tshark-follow"))).expect("utf-8");
    let mut out: [Vec<Vec<u8>>; 2] = Default::default();
    for line in text.lines() {
        let (which, hex) = match line.strip_prefix('\t') {
            Some(rest) => (1, rest),
            None => (0, line),
        };
        if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            out[which].push(unhex(hex));
        }
    }
    out
}

/// The capture's only TCP connection, decrypted with its key log (or `keys`).
fn decrypted(name: &str, keys: &KeyLog) -> Result<Decrypted, String> {
    let capture =
        pcap::extract(&read(&format!("{name}.pcap")), &PcapLimits::default()).expect("a capture");
    let [c, s] = &capture.streams.first().expect("a stream").directions;
    decrypt(&c.bytes, &s.bytes, keys).map_err(|e| e.to_string())
}

/// wirelens's plaintext per record, `[client→server, server→client]`.
fn records(d: &Decrypted) -> [Vec<Vec<u8>>; 2] {
    [0, 1].map(|w| {
        let dir = &d.directions[w];
        dir.spans
            .iter()
            .map(|s| dir.plaintext[s.plain.start..s.plain.end].to_vec())
            .collect()
    })
}

/// Every capture here: its cipher suite, and whether the server agreed to encrypt-then-MAC.
const CAPTURES: &[(&str, &str, bool)] = &[
    (
        "illustrated-tls12",
        "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
        false,
    ),
    (
        "snet-AES128-SHA256",
        "TLS_RSA_WITH_AES_128_CBC_SHA256",
        true,
    ),
    (
        "snet-AES256-SHA256",
        "TLS_RSA_WITH_AES_256_CBC_SHA256",
        true,
    ),
    (
        "snet-DHE-RSA-AES128-SHA256",
        "TLS_DHE_RSA_WITH_AES_128_CBC_SHA256",
        true,
    ),
    (
        "snet-DHE-RSA-AES256-SHA256",
        "TLS_DHE_RSA_WITH_AES_256_CBC_SHA256",
        true,
    ),
    (
        "snet-ECDHE-ECDSA-AES128-SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
        true,
    ),
    (
        "snet-ECDHE-ECDSA-AES256-SHA384",
        "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384",
        true,
    ),
    (
        "snet-ECDHE-RSA-AES128-SHA256",
        "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
        true,
    ),
    (
        "snet-ECDHE-RSA-AES256-SHA384",
        "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384",
        true,
    ),
];

#[test]
fn every_cbc_capture_decrypts_to_tshark_s_records() {
    let mut totals = [0usize; 2];
    for &(name, cipher, _) in CAPTURES {
        let d = decrypted(name, &keylog(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(d.version, "TLS 1.2", "{name}");
        assert_eq!(d.cipher, cipher, "{name}");
        let errors: Vec<String> = d.errors().map(ToString::to_string).collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
        let want = tshark_records(name);
        assert!(!want[0].is_empty(), "{name}: tshark decrypted nothing");
        assert_eq!(records(&d), want, "{name}");
        for w in 0..2 {
            totals[w] += want[w].iter().map(Vec::len).sum::<usize>();
        }
    }
    // 4 bytes of illustrated-tls12 plus 2570 bytes of each of the 8 snet captures; "pong".
    assert_eq!(totals, [4 + 8 * 2570, 4]);
}

#[test]
fn the_illustrated_connection_reads_ping_and_pong() {
    let name = "illustrated-tls12";
    let d = decrypted(name, &keylog(name)).expect("decrypted");
    assert_eq!(d.directions[0].plaintext, b"ping");
    assert_eq!(d.directions[1].plaintext, b"pong");
    // The client's Finished, its data, then its close_notify alert: three records decrypted.
    assert_eq!(d.directions[0].records, 3);
    assert!(
        d.notes.iter().any(|n| n.contains("close_notify")),
        "{:?}",
        d.notes
    );
}

#[test]
fn peeling_with_the_key_log_gives_the_plaintext_and_no_key_log_hint() {
    for &(name, _, _) in CAPTURES {
        let keys = keylog(name);
        let options = PeelOptions {
            keys: Some(&keys),
            ..PeelOptions::default()
        };
        let peeled = peel(read(&format!("{name}.pcap")), &options);
        assert!(peeled.error.is_none(), "{name}: {:?}", peeled.error);
        let line = peeled.capture.as_ref().expect("a capture").describe();
        assert!(!line.contains("key log"), "{name}: {line}");
        assert!(
            !peeled.warnings.iter().any(|w| w.contains("not decrypted")),
            "{name}: {:?}",
            peeled.warnings
        );
        let want: Vec<u8> = tshark_records(name)[0].concat();
        let client: Vec<u8> = peeled
            .payloads
            .iter()
            .filter(|p| {
                p.meta_value("direction")
                    .is_some_and(|d| d.starts_with("client"))
            })
            .flat_map(|p| p.bytes.to_vec())
            .collect();
        assert_eq!(client, want, "{name}");
    }
}

#[test]
fn a_key_log_of_other_sessions_names_the_client_random_it_looked_for() {
    // The illustrated connection's client random is 00 01 02 … 1f; the snet key log holds
    // three other sessions.
    let e = decrypted("illustrated-tls12", &keylog("snet-AES128-SHA256")).expect_err("no key");
    assert_eq!(
        e,
        "the key log has no CLIENT_RANDOM for this connection's client random \
         000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f; \
         it holds 3 other sessions"
    );
    // Through the whole pipeline: a warning with the same words, and a capture line that does
    // not ask for a key log the user gave.
    let keys = keylog("snet-AES128-SHA256");
    let options = PeelOptions {
        keys: Some(&keys),
        ..PeelOptions::default()
    };
    let peeled = peel(read("illustrated-tls12.pcap"), &options);
    assert!(
        peeled.warnings.iter().any(|w| w.contains(&e)),
        "{:?}",
        peeled.warnings
    );
    let line = peeled.capture.as_ref().expect("a capture").describe();
    assert!(!line.contains("give a key log"), "{line}");
    assert!(
        line.contains("not decrypted with the key log given"),
        "{line}"
    );
    // Nor do the encrypted payloads' TLS labels.
    assert_eq!(peeled.payloads.len(), 2);
    for p in &peeled.payloads {
        let detail = &p.layers.last().expect("a TLS layer").detail;
        assert!(
            detail.ends_with("— not decrypted with the key log given (see the warnings)"),
            "{detail}"
        );
    }
}

#[test]
fn a_flipped_byte_is_a_mac_error_naming_record_and_frame() {
    for (name, etm) in [
        ("illustrated-tls12", false),
        ("snet-ECDHE-RSA-AES256-SHA384", true),
    ] {
        let keys = keylog(name);
        let mut file = read(&format!("{name}.pcap"));
        let capture = pcap::extract(&file, &PcapLimits::default()).expect("a capture");
        let whole = decrypted(name, &keys).expect("decrypted");
        let last = *whole.directions[0].spans.last().expect("a record");
        // The byte in the middle of the client's last data record, found in the file.
        let record = &capture.streams[0].directions[0].bytes[last.record.start..last.record.end];
        let at = file
            .windows(record.len())
            .position(|w| w == record)
            .expect("the record in one frame");
        file[at + record.len() / 2] ^= 0x40;
        let capture = pcap::extract(&file, &PcapLimits::default()).expect("a capture");
        let [c, s] = &capture.streams[0].directions;
        let d = decrypt(&c.bytes, &s.bytes, &keys).expect("decrypted up to the record");
        let e = d.directions[0].error.as_ref().expect("an error");
        assert_eq!(
            (e.record, e.offset),
            (Some(last.index), Some(last.record.start))
        );
        let text = e.to_string();
        let what = if etm {
            "the MAC does not verify (sequence number"
        } else {
            "the MAC or padding does not verify (sequence number"
        };
        assert!(
            text.starts_with(&format!(
                "client→server record {} (byte {} of the direction): {what}",
                last.index, last.record.start
            )),
            "{name}: {text}"
        );
        // No garbage: the plaintext stops before the record.
        assert_eq!(
            d.directions[0].plaintext,
            whole.directions[0].plaintext[..last.plain.start]
        );
        // The pipeline names the capture frame.
        let options = PeelOptions {
            keys: Some(&keys),
            ..PeelOptions::default()
        };
        let peeled = peel(file, &options);
        assert!(
            peeled
                .warnings
                .iter()
                .any(|w| w.contains(what) && w.contains("(frame ")),
            "{name}: {:?}",
            peeled.warnings
        );
    }
}

#[test]
fn cut_and_noisy_records_never_give_unverified_plaintext() {
    for name in ["illustrated-tls12", "snet-ECDHE-RSA-AES256-SHA384"] {
        let keys = keylog(name);
        let capture = pcap::extract(&read(&format!("{name}.pcap")), &PcapLimits::default())
            .expect("a capture");
        let [c, s] = &capture.streams[0].directions;
        let whole = decrypt(&c.bytes, &s.bytes, &keys).expect("decrypted");
        let check = |client: &[u8], server: &[u8]| {
            // Whatever decrypts is a prefix of the real plaintext: nothing unverified.
            if let Ok(d) = decrypt(client, server, &keys) {
                for w in 0..2 {
                    let got = &d.directions[w].plaintext;
                    assert!(
                        whole.directions[w].plaintext.starts_with(got),
                        "{name}: direction {w}"
                    );
                }
            }
        };
        for end in (0..c.bytes.len()).step_by(7) {
            check(&c.bytes[..end], &s.bytes);
        }
        for step in [3, 13, 61] {
            let mut noisy = c.bytes.clone();
            for i in (200..noisy.len()).step_by(step) {
                noisy[i] = noisy[i].wrapping_mul(31).wrapping_add(7);
            }
            check(&noisy, &s.bytes);
        }
    }
}
