//! The inspector's model without a window: sources, payloads, readings, columns, selection,
//! overrides, schemas and errors, driven the way the app drives them.

use crate::common;

use std::path::PathBuf;

use wirelens::codec::{decode, DecodeOptions, Format};
use wirelens::model::Path;
use wirelens::workspace::{no_notify, Analysis, ProtoMode, Source, Stage, Workspace};

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name)
}

fn open(ws: &mut Workspace, name: &str) -> std::sync::Arc<Analysis> {
    ws.open_path(sample(name)).expect("the sample opens");
    ws.wait_idle();
    ws.analysis().cloned().expect("the analysis is ready")
}

fn path(text: &str) -> Path {
    Path::parse(text).expect("a valid path")
}

#[test]
fn every_sample_opens_with_one_column_per_format() {
    let mut names: Vec<String> = std::fs::read_dir(sample(""))
        .expect("samples/ exists")
        .map(|e| {
            e.expect("a directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    assert!(names.len() >= 20, "samples/ has its files: {names:?}");
    let mut ws = Workspace::new(no_notify());
    for name in &names {
        let a = open(&mut ws, name);
        let mut formats: Vec<Format> = a.columns.iter().map(|c| c.format).collect();
        formats.sort_by_key(|f| f.name());
        let mut all = Format::ALL.to_vec();
        all.sort_by_key(|f| f.name());
        assert_eq!(formats, all, "{name}");
        assert_eq!(
            a.columns.iter().filter(|c| c.is_source).count(),
            1,
            "{name}"
        );
        let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
        if let Some(expected) = Format::from_extension(ext) {
            assert_eq!(a.format, expected, "{name} is read as its extension says");
            if expected != Format::Protobuf {
                assert!(
                    a.source().is_some_and(|c| c.error.is_none()),
                    "{name} decodes"
                );
                // Every other format was encoded, and its spans fit its bytes.
                for c in a
                    .columns
                    .iter()
                    .filter(|c| !c.is_source && c.format != Format::Protobuf)
                {
                    let doc = c
                        .document
                        .as_ref()
                        .unwrap_or_else(|| panic!("{name}: {:?} has a tree", c.format));
                    doc.spans
                        .validate(c.bytes.len())
                        .unwrap_or_else(|e| panic!("{name} {:?}: {e}", c.format));
                    let sizes = c
                        .sizes
                        .unwrap_or_else(|| panic!("{name}: {:?} sizes", c.format));
                    assert_eq!(sizes.raw, c.bytes.len());
                    assert!(sizes.gzip > 0 && sizes.zstd > 0);
                }
            }
        }
    }
    assert_eq!(ws.entries.len(), names.len());
}

#[test]
fn a_pasted_xxd_dump_reads_as_the_bytes_it_shows() {
    let bytes = std::fs::read(sample("user-profile.msgpack")).expect("sample");
    let text = common::xxd(&bytes);
    let mut ws = Workspace::new(no_notify());
    ws.paste(&text);
    ws.wait_idle();
    let entry = ws.entry().expect("an entry");
    // The text itself is kept as given.
    assert_eq!(entry.source.text(), Some(text.as_str()));
    let opened = entry.opened.ready().expect("peeled");
    assert_eq!(opened.payloads.len(), 1);
    assert_eq!(opened.payloads[0].bytes, bytes);
    assert!(
        !opened.payloads[0].layers.is_empty(),
        "the hex layer is recorded"
    );
    let a = ws.analysis().expect("analysed");
    assert_eq!(a.format, Format::MessagePack);
    let source = a.source().expect("source column");
    assert_eq!(source.bytes, bytes);
    let direct = decode(&bytes, Format::MessagePack, &DecodeOptions::default()).expect("decodes");
    assert_eq!(
        source.document.as_ref().and_then(|d| d.whole()).as_deref(),
        Some(&direct.value)
    );
    // The paste is named by what was read, not "pasted text".
    let name = ws.entry().expect("an entry").name();
    assert_eq!(name, format!("hex dump · MessagePack · {} B", bytes.len()));
}

#[test]
fn a_selected_path_resolves_to_its_bytes_in_every_column() {
    let mut ws = Workspace::new(no_notify());
    let a = open(&mut ws, "iot-metrics.json");
    let device = path("$.device_id");
    ws.select(Some(device.clone()));
    for c in &a.columns {
        let id = c
            .resolve(&device)
            .unwrap_or_else(|| panic!("{:?} has $.device_id", c.format));
        let doc = c.document.as_ref().expect("a tree");
        let node = doc.spans.node(id);
        // Every format stores this text's UTF-8 bytes as they are.
        let payload = c.bytes.get(node.payload.range()).expect("in range");
        assert_eq!(payload, b"sensor-0042", "{:?}", c.format);
        assert!(node.extent().encloses(&node.span));
    }
    // An element of an array, too: the second metric, 26.1, in every column.
    let metric = path("$.metrics[1]");
    for c in &a.columns {
        let doc = c.document.as_ref().expect("a tree");
        let id = c
            .resolve(&metric)
            .unwrap_or_else(|| panic!("{:?} has $.metrics[1]", c.format));
        assert_eq!(
            doc.summary(id, 20).as_deref(),
            Some("26.1"),
            "{:?}",
            c.format
        );
    }
    // A path no column has resolves nowhere.
    assert!(a
        .columns
        .iter()
        .all(|c| c.resolve(&path("$.nope")).is_none()));
}

#[test]
fn the_format_can_be_overridden_and_the_error_says_where() {
    let mut ws = Workspace::new(no_notify());
    let a = open(&mut ws, "iot-metrics.cbor");
    assert_eq!(a.format, Format::Cbor);
    assert!(!a.overridden);
    ws.set_format(Some(Format::MessagePack));
    ws.wait_idle();
    let a = ws.analysis().expect("analysed again");
    assert_eq!(a.format, Format::MessagePack);
    assert!(a.overridden);
    let source = a.source().expect("source");
    // 0xa4 is a MessagePack fixstr of 4 bytes: one value in bytes 0..5, then bytes left over.
    let err = source.error.as_ref().expect("an error");
    assert_eq!(err.offset, Some(5));
    // The other formats are not encoded from an incomplete reading, and say so.
    assert!(a
        .columns
        .iter()
        .filter(|c| !c.is_source)
        .all(|c| c.bytes.is_empty()
            && c.sizes.is_none()
            && c.error.as_ref().map(|e| e.to_string()).as_deref()
                == Some("not encoded: the payload did not decode completely")));
    assert!(source.sizes.is_some());
    ws.set_format(None);
    ws.wait_idle();
    assert_eq!(ws.analysis().map(|a| a.format), Some(Format::Cbor));
}

#[test]
fn bad_input_keeps_its_text_the_partial_tree_and_the_offset() {
    let text = r#"{"a": [1, 2, x], "b": 3}"#;
    let mut ws = Workspace::new(no_notify());
    ws.paste(text);
    ws.wait_idle();
    assert_eq!(ws.entry().and_then(|e| e.source.text()), Some(text));
    let a = ws.analysis().expect("analysed");
    assert_eq!(a.format, Format::Json);
    let source = a.source().expect("source");
    let err = source.error.as_ref().expect("an error");
    assert_eq!(err.offset, text.find('x'));
    assert_eq!(err.path, Some(path("$.a[2]")));
    assert_eq!(source.bytes, text.as_bytes());
    let partial = source.document.as_ref().expect("a partial tree");
    assert_eq!(partial.spans.find(&path("$.a[1]")).len(), 1);
    assert!(partial.spans.find(&path("$.b")).is_empty());
}

#[test]
fn raw_bytes_are_not_unwrapped() {
    let text = "00000000: 81a1 6101                                ..a.\n";
    let mut ws = Workspace::new(no_notify());
    ws.paste(text);
    ws.wait_idle();
    let peeled = ws
        .entry()
        .and_then(|e| e.opened.ready().cloned())
        .expect("peeled");
    assert_eq!(peeled.payloads[0].bytes, [0x81, 0xa1, 0x61, 0x01]);
    ws.set_raw(true);
    ws.wait_idle();
    let entry = ws.entry().expect("entry");
    let raw = entry.opened.ready().expect("opened raw");
    assert!(raw.raw);
    assert_eq!(raw.payloads[0].bytes, text.as_bytes());
    assert!(raw.payloads[0].layers.is_empty());
}

/// The layer override: one layer of a base64 text holding gzip gives the gzip bytes; every layer
/// gives the JSON inside; splitting forced as a CBOR sequence gives one payload per item.
#[test]
fn the_peel_choice_overrides_layers_and_splitting() -> Result<(), Box<dyn std::error::Error>> {
    use std::io::Write;
    use wirelens::capture::{Framing, PeelChoice, Split};
    let json = br#"{"a":1,"b":[true,null]}"#;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(json)?;
    let gz = gz.finish()?;
    let mut ws = Workspace::new(no_notify());
    ws.paste(&base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        &gz,
    ));
    ws.wait_idle();
    let payloads = |ws: &Workspace| -> Vec<Vec<u8>> {
        ws.entry()
            .and_then(|e| e.opened.ready().cloned())
            .map(|o| o.payloads.iter().map(|p| p.bytes.to_vec()).collect())
            .unwrap_or_default()
    };
    assert_eq!(payloads(&ws), [json.to_vec()]);
    ws.set_peel(PeelChoice {
        max_layers: Some(1),
        split: Split::Auto,
    });
    ws.wait_idle();
    assert_eq!(payloads(&ws), [gz]);
    // Two CBOR items back to back (1, then "a"), read as a forced sequence.
    ws.paste("01 61 61");
    ws.wait_idle();
    ws.set_peel(PeelChoice {
        max_layers: None,
        split: Split::Force(Framing::CborSeq),
    });
    ws.wait_idle();
    assert_eq!(payloads(&ws), [vec![0x01], vec![0x61, 0x61]]);
    Ok(())
}

#[test]
fn a_schema_reads_protobuf_with_the_best_message_type() {
    let mut ws = Workspace::new(no_notify());
    ws.load_schema_files(&[sample("user-profile.proto")], &[])
        .expect("the .proto compiles");
    assert!(ws
        .schemas
        .message_names()
        .contains(&"wirelens.samples.UserProfile".to_string()));
    let a = open(&mut ws, "user-profile.pb");
    assert_eq!(a.format, Format::Protobuf);
    assert_eq!(a.message.as_deref(), Some("wirelens.samples.UserProfile"));
    assert_eq!(
        a.candidates.first().map(|c| c.message.as_str()),
        Some("wirelens.samples.UserProfile")
    );
    // With the schema, fields have names; the JSON column says the same as the JSON sample.
    let json = a.column(Format::Json).expect("json column");
    let expected = decode(
        &std::fs::read(sample("user-profile.json")).expect("sample"),
        Format::Json,
        &DecodeOptions::default(),
    )
    .expect("decodes");
    assert_eq!(
        json.document
            .as_ref()
            .and_then(|d| d.whole())
            .and_then(|v| v.get("username").cloned()),
        expected.value.get("username").cloned()
    );
    assert!(json.resolve(&path("$.username")).is_some());
    // The JSON column is the proto3 JSON `convert` writes (`userId` as protoc names it, its
    // int64 a string), and `$.user_id` still selects that field's bytes in it.
    let text = std::str::from_utf8(&json.bytes).expect("JSON");
    assert!(text.contains("\"userId\":\"10042\""), "{text}");
    let id = json
        .resolve(&path("$.user_id"))
        .expect("$.user_id in the JSON column");
    let doc = json.document.as_ref().expect("its tree");
    let span = doc.spans.node(id).extent();
    assert!(
        text[span.start..span.end].contains("10042"),
        "{span:?} in {text}"
    );
    // Its tree says what the bytes say: a string.
    let shown = doc
        .whole()
        .and_then(|v| doc.spans.value_of(&v, id).cloned());
    assert_eq!(
        shown.as_ref().and_then(|v| v.as_str()),
        Some("10042"),
        "{shown:?}"
    );

    // Schema-less: the same bytes read field by field, keyed by number.
    ws.set_proto_mode(ProtoMode::SchemaLess);
    ws.wait_idle();
    let a = ws.analysis().expect("analysed");
    assert_eq!(a.message, None);
    let source = a.source().expect("source");
    assert!(source.resolve(&path("$.username")).is_none());

    // A message type named by the user, that no schema has: a warning, no crash.
    ws.set_proto_mode(ProtoMode::Message("nope.Missing".into()));
    ws.wait_idle();
    assert!(ws
        .analysis()
        .is_some_and(|a| a.warnings.iter().any(|w| w.contains("nope.Missing"))));
}

#[test]
fn a_grpc_body_lists_its_messages_and_each_can_be_selected() {
    let mut ws = Workspace::new(no_notify());
    open(&mut ws, "user-profiles.grpc");
    let count = ws
        .entry()
        .and_then(|e| e.opened.ready().map(|o| o.payloads.len()))
        .unwrap_or(0);
    assert_eq!(count, 3);
    ws.select_payload(2);
    ws.wait_idle();
    assert_eq!(ws.entry().map(|e| e.payload), Some(2));
    let a = ws.analysis().expect("analysed");
    assert_eq!(a.format, Format::Protobuf);
}

#[test]
fn switching_sources_keeps_each_ones_state() {
    let mut ws = Workspace::new(no_notify());
    open(&mut ws, "iot-metrics.json");
    ws.set_format(Some(Format::Json));
    ws.wait_idle();
    open(&mut ws, "user-profile.cbor");
    assert_eq!(ws.current, Some(1));
    ws.select_source(0);
    ws.wait_idle();
    assert_eq!(
        ws.entry().map(|e| e.choice.format),
        Some(Some(Format::Json))
    );
    assert!(matches!(
        ws.entry().map(|e| &e.analysis),
        Some(Stage::Ready(_))
    ));
}

#[test]
fn a_missing_file_is_an_error_naming_it() {
    let mut ws = Workspace::new(no_notify());
    let err = ws
        .open_path("/no/such/file.json")
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("/no/such/file.json"), "{err}");
    assert!(ws.entries.is_empty());
}

#[test]
fn sources_keep_their_bytes_whatever_decoding_finds() {
    let s = Source::dropped("x.bin", vec![0xff, 0x00, 0xc1]);
    let mut ws = Workspace::new(no_notify());
    ws.add(s);
    ws.wait_idle();
    assert_eq!(
        ws.entry().map(|e| e.source.bytes().to_vec()),
        Some(vec![0xff, 0x00, 0xc1])
    );
    assert!(ws.analysis().is_some());
}

/// Cancel frees the workspace at once: the running job's stage becomes "cancelled" on the next
/// poll, whether or not its thread has finished, and its late result is never taken.
#[test]
fn cancel_lets_go_of_the_running_job_at_once() {
    let mut ws = Workspace::new(no_notify());
    let big = format!("[{}1]", "1,".repeat(2_000_000));
    ws.paste(&big);
    assert!(ws.is_busy(), "peeling started");
    ws.cancel();
    ws.poll();
    assert!(!ws.is_busy());
    let entry = ws.entry().expect("entry");
    assert!(
        matches!(
            entry.opened,
            wirelens::workspace::Stage::Failed(wirelens::workspace::JobError::Cancelled)
        ),
        "{:?}",
        entry.opened
    );
    // The pasted text stays.
    assert_eq!(entry.source.text(), Some(big.as_str()));
}

#[test]
fn a_large_file_is_mapped_and_its_payload_and_source_column_share_the_map() {
    // A MessagePack bin32 of 9 MiB: past the mapping threshold, quick to decode.
    let len = 9usize << 20;
    let mut bytes = vec![0xc6];
    bytes.extend_from_slice(&u32::try_from(len).expect("fits").to_be_bytes());
    bytes.resize(5 + len, 0x5a);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("large.msgpack");
    std::fs::write(&file, &bytes).expect("written");

    let mut ws = Workspace::new(no_notify());
    ws.open_path(&file).expect("the file opens");
    ws.wait_idle();
    let entry = ws.entry().expect("the file's entry");
    assert!(entry.source.is_mapped());
    let mapped = entry.source.bytes().as_ptr();
    let Stage::Ready(opened) = &entry.opened else {
        panic!("peeled");
    };
    // Not a copy: the very bytes of the map.
    assert_eq!(opened.payloads.len(), 1);
    assert_eq!(opened.payloads[0].bytes.as_ptr(), mapped);
    let a = ws.analysis().cloned().expect("the analysis is ready");
    assert_eq!(a.format, Format::MessagePack);
    let source = a.source().expect("a source column");
    assert!(source.error.is_none());
    assert_eq!(source.bytes.as_ptr(), mapped);
    assert_eq!(source.bytes.len(), bytes.len());
}

fn capture_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/capture/pcap")
        .join(name)
}

#[test]
fn a_capture_without_payloads_says_why_instead_of_showing_the_file() {
    let mut ws = Workspace::new(no_notify());
    ws.open_path(capture_fixture("handshake-only.pcap"))
        .expect("the fixture opens");
    ws.wait_idle();
    let entry = ws.entry().expect("an entry");
    let opened = entry.opened.ready().expect("peeled");
    assert!(opened.payloads.is_empty(), "the file is no payload");
    assert_eq!(
        opened.nothing.as_deref(),
        Some("3 packets, TCP handshake only, no application data")
    );
    assert!(ws.analysis().is_none(), "nothing is decoded");
}

#[test]
fn tls_and_html_payloads_carry_their_verdict_and_no_format_guess() {
    use wirelens::capture::verdict::Verdict;
    let mut ws = Workspace::new(no_notify());
    ws.open_path(capture_fixture("tls13.pcap"))
        .expect("the fixture opens");
    ws.wait_idle();
    let a = ws.analysis().cloned().expect("analysed");
    assert!(
        matches!(&a.verdict, Some(Verdict::Encrypted { protocol, .. }) if protocol == "TLS 1.3"),
        "{:?}",
        a.verdict
    );
    assert!(a.readings.is_empty() && a.columns.is_empty());

    ws.open_path(capture_fixture("html-listing.pcap"))
        .expect("the fixture opens");
    ws.wait_idle();
    let a = ws.analysis().cloned().expect("analysed");
    assert_eq!(
        a.verdict,
        Some(Verdict::Text {
            media_type: "text/html".into(),
            said_by: "its Content-Type",
        })
    );
    assert!(a.readings.is_empty() && a.columns.is_empty());
    // The user can still read it as a format.
    ws.set_format(Some(Format::Cbor));
    ws.wait_idle();
    let a = ws.analysis().cloned().expect("analysed");
    assert_eq!(a.format, Format::Cbor);
    assert!(a.overridden || !a.columns.is_empty());
    assert!(a.source().is_some());
}

#[test]
fn a_key_log_decrypts_the_open_captures() {
    let real = |name: &str| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/capture/real")
            .join(name)
    };
    let mut ws = Workspace::new(no_notify());
    ws.open_path(real("tls13-h2.pcap"))
        .expect("the fixture opens");
    ws.wait_idle();
    let encrypted = ws
        .entry()
        .and_then(|e| e.opened.ready().cloned())
        .expect("peeled");
    assert!(encrypted
        .payloads
        .iter()
        .all(|p| p.meta_value("encrypted") == Some("TLS")));
    let text = std::fs::read_to_string(real("tls13-h2.keylog")).expect("key log");
    assert_eq!(ws.load_key_log(&text), Ok(1));
    ws.wait_idle();
    let opened = ws
        .entry()
        .and_then(|e| e.opened.ready().cloned())
        .expect("peeled again");
    assert_eq!(opened.payloads.len(), 4);
    assert_eq!(
        opened.payloads[1].provenance(),
        "pcap → TCP 127.0.0.1:18445 → 127.0.0.1:59892 → TLS 1.3 → HTTP/2 stream 1"
    );
    assert_eq!(opened.payloads[1].bytes.len(), 128);
    // A line that is no key log entry is an error naming it; nothing loaded changes.
    assert!(ws
        .load_key_log("CLIENT_RANDOM zz\n")
        .is_err_and(|e| e.to_string().contains("line 1")));
}

/// The MessagePack and CBOR columns show what Python's msgpack and cbor2 write (80 bytes each
/// for iot-metrics.json), and, chosen in View, a variant's bytes: with shortest floats 24.5 is a
/// float32 (76 bytes) and a float16 (74 bytes), with every number read back the same.
#[test]
fn the_binary_columns_are_the_libraries_bytes_or_a_chosen_variant() {
    use wirelens::profile::sizes::Variant;
    let mut ws = Workspace::new(no_notify());
    let a = open(&mut ws, "iot-metrics.json");
    let size = |a: &Analysis, f: Format| a.column(f).and_then(|c| c.sizes).map(|s| s.raw);
    assert_eq!(size(&a, Format::MessagePack), Some(80));
    assert_eq!(size(&a, Format::Cbor), Some(80));
    assert!(a.column(Format::Cbor).is_some_and(|c| c.variant.is_none()));

    ws.set_encoding(Some(Variant::ShortestFloats));
    ws.wait_idle();
    let short = ws.analysis().cloned().expect("analysed again");
    assert_eq!(size(&short, Format::MessagePack), Some(76));
    assert_eq!(size(&short, Format::Cbor), Some(74));
    let cbor = short.column(Format::Cbor).expect("the CBOR column");
    assert_eq!(cbor.variant, Some(Variant::ShortestFloats));
    // The column's tree is its own bytes read back: 24.5 as a float16, the same number.
    let at = cbor
        .resolve(&path("$.metrics[0]"))
        .expect("the first metric");
    let doc = cbor.document.as_ref().expect("decoded");
    let span = doc.spans.node(at).span;
    assert_eq!(&cbor.bytes[span.range()], &[0xf9, 0x4e, 0x20]);
    // JSON and protobuf are not variants.
    assert!(short
        .column(Format::Json)
        .is_some_and(|c| c.variant.is_none()));
    assert_eq!(size(&short, Format::Json), size(&a, Format::Json));

    ws.set_encoding(None);
    ws.wait_idle();
    let back = ws.analysis().cloned().expect("analysed again");
    assert_eq!(size(&back, Format::Cbor), Some(80));
}

#[test]
fn sources_close_rename_and_a_repeated_paste_shows_the_open_one() {
    let mut ws = Workspace::new(no_notify());
    let a = ws.paste("[1, 2, 3]");
    let b = ws.paste(r#"{"b": true}"#);
    assert_eq!((a, b), (0, 1));
    // The same text again: no copy, the open source is shown.
    assert_eq!(ws.paste("[1, 2, 3]"), 0);
    assert_eq!(ws.entries.len(), 2);
    assert_eq!(ws.current, Some(0));
    // A file with the same bytes as a paste is the same source too.
    let bytes = std::fs::read(sample("iot-metrics.json")).expect("sample");
    open(&mut ws, "iot-metrics.json");
    let text = String::from_utf8(bytes).expect("JSON is text");
    assert_eq!(ws.paste(&text), 2);
    assert_eq!(ws.entries.len(), 3);

    ws.rename(1, "  the flag  ");
    assert_eq!(ws.entries[1].name(), "the flag");
    ws.rename(1, "");
    assert_eq!(ws.entries[1].name(), r#"pasted: {"b": true}"#);

    // Closing the current source shows the one after it; one before it keeps it current.
    ws.select_source(1);
    ws.select(Some(path("$.b")));
    ws.close(1);
    assert_eq!(ws.entries.len(), 2);
    assert_eq!(ws.current, Some(1));
    assert_eq!(ws.entries[1].name(), "iot-metrics.json");
    assert_eq!(ws.selected, None, "a path of the closed source is not kept");
    ws.wait_idle();
    assert!(ws.analysis().is_some(), "the source shown is analysed");
    ws.close(0);
    assert_eq!(ws.current, Some(0));
    assert_eq!(ws.entries[0].name(), "iot-metrics.json");

    ws.paste("[4]");
    ws.paste("[5]");
    ws.close_others(1);
    assert_eq!(ws.entries.len(), 1);
    assert_eq!(ws.current, Some(0));
    assert_eq!(ws.entry().and_then(|e| e.source.text()), Some("[4]"));
    ws.close(0);
    assert_eq!((ws.entries.len(), ws.current), (0, None));
    ws.close(0); // nothing left: nothing happens
}

/// The payload is decoded once: every column shows the one value with its own bytes' spans,
/// the protobuf column too, although its encoding leaves the nulls out.
#[test]
fn every_column_shares_the_decoded_value() {
    let text =
        r#"{"rows":[{"id":1,"note":null,"tags":["a","b"]},{"id":2,"note":"x","tags":[]}],"n":2}"#;
    let mut ws = Workspace::new(no_notify());
    ws.paste(text);
    ws.wait_idle();
    let a = ws.analysis().cloned().expect("analysed");
    let source = a
        .source()
        .and_then(|c| c.document.as_ref())
        .expect("decoded");
    assert_eq!(a.columns.len(), 5);
    for column in &a.columns {
        let doc = column.document.as_ref().expect("a tree in every column");
        assert!(
            doc.value.is_shared_with(&source.value),
            "{:?} has a value of its own",
            column.format
        );
        // Each node's value is found in the shared value by the node's path, and its bytes are
        // this column's.
        let id = doc.spans.find(&path("$.rows[1].note"))[0];
        assert_eq!(
            doc.value_at(id).as_deref(),
            Some(&wirelens::model::Value::text("x"))
        );
        let extent = doc.spans.node(id).extent();
        assert!(extent.end <= column.bytes.len(), "{:?}", column.format);
    }
    let pb = a.column(Format::Protobuf).and_then(|c| c.document.as_ref());
    let pb = pb.expect("protobuf tree");
    assert!(
        pb.spans.find(&path("$.rows[0].note")).is_empty(),
        "the null is not written"
    );
    assert_eq!(pb.spans.find(&path("$.rows[0].id")).len(), 1);
}

/// The analysis fills in as it goes: first the source column alone (the others pending, with no
/// error), then each encoding as it is done, then every column with its compressed sizes last.
#[test]
fn an_analysis_shows_each_column_as_it_is_encoded_and_measures_sizes_last() {
    use std::sync::Mutex;
    use wirelens::limits::Limits;
    use wirelens::pipeline::Layers;
    use wirelens::workspace::analysis::{analyze_payload_previewing, open, Choice};
    use wirelens::workspace::{Job, SchemaSet};

    let source = Source::open(sample("transactions-1k.json")).expect("the sample opens");
    let limits = Limits::default();
    let payload = open(&source, Layers::Best, &limits, None, None)
        .expect("peeled")
        .payloads
        .into_iter()
        .next()
        .expect("a payload");
    // (columns with a tree, columns pending, columns with sizes) of every preview.
    let seen: std::sync::Arc<Mutex<Vec<(usize, usize, usize)>>> = Default::default();
    let log = seen.clone();
    let job = Job::spawn_with_preview("previews", no_notify(), move |ctx, _| {
        analyze_payload_previewing(
            &payload,
            &Choice::default(),
            &SchemaSet::default(),
            &limits,
            ctx,
            &|a| {
                let count = |f: &dyn Fn(&wirelens::workspace::Column) -> bool| {
                    a.columns.iter().filter(|c| f(c)).count()
                };
                let shown = count(&|c| c.document.is_some());
                let pending = count(&|c| c.pending);
                let sized = count(&|c| c.sizes.is_some());
                log.lock().expect("log").push((shown, pending, sized));
            },
        )
    });
    let done = job.wait().expect("analysed");
    let seen = seen.lock().expect("log").clone();
    assert_eq!(seen.first(), Some(&(1, 4, 0)), "the source first: {seen:?}");
    assert_eq!(seen.len(), 5, "one preview more per encoding: {seen:?}");
    for (i, &(shown, pending, sized)) in seen.iter().enumerate() {
        assert_eq!(
            (shown, pending, sized),
            (i + 1, 4 - i, 0),
            "preview {i}: {seen:?}"
        );
    }
    assert_eq!(done.columns.len(), 5);
    for c in &done.columns {
        assert!(!c.pending, "{:?} is done", c.format);
        assert!(c.error.is_none(), "{:?}: {:?}", c.format, c.error);
        let sizes = c
            .sizes
            .unwrap_or_else(|| panic!("{:?} is measured", c.format));
        assert_eq!(sizes.raw, c.bytes.len());
        assert!(
            sizes.gzip > 0 && sizes.zstd > 0,
            "{:?}: {sizes:?}",
            c.format
        );
    }
}

/// Every object key of `value`, at every depth, in order.
fn keys_of(value: &wirelens::model::Value, out: &mut Vec<String>) {
    use wirelens::model::Value;
    match value {
        Value::Map(entries) => {
            for (k, v) in entries {
                if let Value::Text(k) = k {
                    out.push(k.to_string());
                }
                keys_of(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| keys_of(v, out)),
        _ => {}
    }
}

fn sorted_keys(bytes: &[u8]) -> Vec<String> {
    let doc = decode(bytes, Format::Json, &DecodeOptions::default()).expect("JSON");
    let mut keys = Vec::new();
    keys_of(&doc.value, &mut keys);
    keys.sort();
    keys
}

#[test]
fn the_json_column_of_protobuf_names_fields_as_protoc_does_and_the_tree_still_links() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/protobuf/json-names");
    let mut ws = Workspace::new(no_notify());
    ws.load_schema_files(&[dir.join("trace.proto")], std::slice::from_ref(&dir))
        .expect("the .proto compiles");
    ws.set_proto_mode(ProtoMode::Message("fixture.trace.Span".into()));
    ws.open_path(dir.join("span.pb")).expect("opens");
    ws.wait_idle();
    // protoc's Python runtime is the reference: MessageToJson without and with
    // preserving_proto_field_name.
    for (proto_names, reference) in [(false, "span.json"), (true, "span.proto-names.json")] {
        ws.set_proto_names(proto_names);
        ws.wait_idle();
        let a = ws.analysis().cloned().expect("analysed");
        assert_eq!(a.format, Format::Protobuf);
        let json = a.column(Format::Json).expect("a JSON column");
        let expected = sorted_keys(&std::fs::read(dir.join(reference)).expect("fixture"));
        assert_eq!(
            sorted_keys(&json.bytes),
            expected,
            "keys against {reference}"
        );
        // The tree keeps the .proto names: a path selects the field's bytes in the JSON
        // column, whose key is written as the chosen name.
        let key = if proto_names {
            "start_time_unix_nano"
        } else {
            "startTimeUnixNano"
        };
        let extent = json
            .extent(&path("$.start_time_unix_nano"))
            .expect("the field's bytes");
        let written = &json.bytes[extent.range()];
        assert!(
            written.starts_with(format!("\"{key}\"").as_bytes()),
            "{}",
            String::from_utf8_lossy(written)
        );
        assert!(json.extent(&path("$.http_status_text")).is_some());
        // Copy as JSON gives what the column writes.
        let copied = a.json_at(&path("$.events[0]")).expect("copied");
        let event_key = if proto_names {
            "event_name"
        } else {
            "eventName"
        };
        assert!(copied.contains(&format!("\"{event_key}\"")), "{copied}");
    }
}

#[test]
fn schema_less_protobuf_columns_write_each_repeated_field_once_as_an_array() {
    use wirelens::model::Value;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/protobuf/json-names");
    let mut ws = Workspace::new(no_notify());
    ws.set_proto_mode(ProtoMode::SchemaLess);
    ws.open_path(dir.join("span.pb")).expect("opens");
    ws.set_format(Some(Format::Protobuf));
    ws.wait_idle();
    let a = ws.analysis().cloned().expect("analysed");
    assert_eq!(a.format, Format::Protobuf);
    // The source keeps one entry per occurrence: span.pb has two attributes (field 8).
    let source = a
        .source()
        .and_then(|c| c.document.as_ref())
        .expect("source");
    let whole = source.whole().expect("the value");
    let Value::Map(entries) = &*whole else {
        panic!("a message")
    };
    let occurrences = entries.iter().filter(|(k, _)| *k == Value::Int(8)).count();
    assert_eq!(occurrences, 2);
    for format in [Format::Json, Format::MessagePack, Format::Cbor] {
        let column = a.column(format).expect("column");
        let doc = decode(&column.bytes, format, &DecodeOptions::default()).expect("decodes");
        let Value::Map(entries) = &doc.value else {
            panic!("{format:?}: a map")
        };
        let mut keys: Vec<String> = entries.iter().map(|(k, _)| format!("{k:?}")).collect();
        let all = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), all, "{format:?} repeats a key: {keys:?}");
        let attributes = entries
            .iter()
            .find(|(k, _)| matches!(k, Value::Int(8)) || *k == Value::text("8"))
            .map(|(_, v)| v);
        assert!(
            matches!(attributes, Some(Value::Array(items)) if items.len() == 2),
            "{format:?}: {attributes:?}"
        );
        assert!(
            column
                .notes
                .iter()
                .any(|n| n.message.contains("field 8 occurs 2 times")),
            "{format:?}: {:?}",
            column.notes
        );
        // The column's tree is its own bytes read back: the array's items have paths.
        assert!(column.document.is_some());
    }
}

/// A column the view hides is not encoded; shown again, it is encoded on its own (the payload
/// is not analysed again) into what a full analysis writes.
#[test]
fn hidden_columns_are_encoded_when_shown() {
    let mut full = Workspace::new(no_notify());
    let want = open(&mut full, "transactions-1k.json");

    let mut ws = Workspace::new(no_notify());
    ws.set_hidden_columns(&[Format::Cbor, Format::Protobuf]);
    let a = open(&mut ws, "transactions-1k.json");
    for format in [Format::Cbor, Format::Protobuf] {
        let c = a.column(format).expect("the column is listed");
        assert!(c.deferred, "{format:?} is left for later");
        assert!(c.bytes.is_empty() && c.document.is_none() && c.sizes.is_none());
        assert!(!c.is_measured());
    }
    let msgpack = a.column(Format::MessagePack).expect("shown");
    assert!(!msgpack.deferred && msgpack.sizes.is_some());

    ws.set_hidden_columns(&[Format::Protobuf]);
    ws.wait_idle();
    let b = ws.analysis().cloned().expect("the analysis");
    let source = |a: &Analysis| {
        a.source()
            .and_then(|c| c.document.as_ref())
            .map(|d| std::sync::Arc::clone(&d.spans))
            .expect("the source's tree")
    };
    assert!(
        std::sync::Arc::ptr_eq(&source(&a), &source(&b)),
        "the payload was not analysed again"
    );
    let (got, full_cbor) = (
        b.column(Format::Cbor).expect("CBOR"),
        want.column(Format::Cbor).expect("CBOR"),
    );
    assert!(!got.deferred);
    assert_eq!(got.bytes, full_cbor.bytes);
    assert_eq!(got.sizes, full_cbor.sizes);
    assert_eq!(got.notes, full_cbor.notes);
    assert_eq!(
        got.document.as_ref().map(|d| d.spans.len()),
        full_cbor.document.as_ref().map(|d| d.spans.len())
    );
    assert!(b.column(Format::Protobuf).expect("listed").deferred);

    ws.set_hidden_columns(&[]);
    ws.wait_idle();
    let c = ws.analysis().cloned().expect("the analysis");
    let (got, full_pb) = (
        c.column(Format::Protobuf).expect("protobuf"),
        want.column(Format::Protobuf).expect("protobuf"),
    );
    assert_eq!(got.bytes, full_pb.bytes);
    assert_eq!(got.schema, full_pb.schema);
    assert_eq!(got.note_nodes, full_pb.note_nodes);
}

#[test]
fn a_capture_opens_on_the_payload_a_user_came_for() {
    use wirelens::capture::verdict::Verdict;
    // A DNS and an mDNS query come first; the app starts on the JSON body, as the CLI does.
    let mut ws = Workspace::new(no_notify());
    ws.open_path(capture_fixture("dns-beside-http.pcap"))
        .expect("the fixture opens");
    ws.wait_idle();
    let entry = ws.entry().expect("an entry");
    let opened = entry.opened.ready().expect("peeled");
    assert_eq!(opened.payloads.len(), 4);
    assert_eq!(entry.payload, 3, "the JSON body");
    let a = ws.analysis().cloned().expect("analysed");
    assert_eq!(a.readings.first().map(|r| r.format), Some(Format::Json));
    // The datagrams are named, not guessed, when the user picks one.
    ws.select_payload(0);
    ws.wait_idle();
    let a = ws.analysis().cloned().expect("analysed");
    assert_eq!(
        a.verdict,
        Some(Verdict::NotData {
            protocol: "DNS".into()
        })
    );
    assert!(a.readings.is_empty() && a.columns.is_empty());

    // A WebSocket text message is text; the one that is JSON is JSON.
    ws.open_path(capture_fixture("websocket-text.pcap"))
        .expect("the fixture opens");
    ws.wait_idle();
    let opened = ws.entry().and_then(|e| e.opened.ready()).expect("peeled");
    let texts: Vec<&[u8]> = opened.payloads.iter().map(|p| p.bytes.as_slice()).collect();
    assert_eq!(texts[2], b"bar");
    ws.select_payload(2);
    ws.wait_idle();
    let a = ws.analysis().cloned().expect("analysed");
    assert!(
        matches!(a.verdict, Some(Verdict::Text { .. })),
        "{:?}",
        a.verdict
    );
    ws.select_payload(4);
    ws.wait_idle();
    let a = ws.analysis().cloned().expect("analysed");
    assert_eq!(a.verdict, None);
    assert_eq!(a.readings.first().map(|r| r.format), Some(Format::Json));
}

#[test]
fn a_file_is_one_source_and_reload_reads_it_again() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("order.json");
    std::fs::write(&path, br#"{"id": 1}"#).expect("write");
    let mut ws = Workspace::new(no_notify());
    let first = ws.open_path(&path).expect("opens");
    ws.paste("[1]");
    // The same file again, by another spelling of its path: the open source is shown.
    let again = ws
        .open_path(dir.path().join(".").join("order.json"))
        .expect("opens");
    assert_eq!((first, again), (0, 0));
    assert_eq!(ws.entries.len(), 2);
    assert_eq!(ws.current, Some(0));
    ws.wait_idle();
    // The file changes on disk: Reload reads it again, the name stays.
    std::fs::write(&path, br#"{"id": 2, "paid": true}"#).expect("write");
    ws.reload(0).expect("reloads");
    ws.wait_idle();
    assert_eq!(ws.entries[0].source.bytes(), br#"{"id": 2, "paid": true}"#);
    assert_eq!(ws.entries[0].name(), "order.json");
    let a = ws.analysis().expect("analysed again");
    assert_eq!(a.format, Format::Json);
    // A paste has no file to read again.
    let e = ws.reload(1).expect_err("a paste").to_string();
    assert!(e.contains("only a source opened from a file"), "{e}");
    // A file gone from disk is an error naming it; the source stays as it was.
    std::fs::remove_file(&path).expect("remove");
    let e = ws.reload(0).expect_err("gone").to_string();
    assert!(e.contains("order.json"), "{e}");
    assert_eq!(ws.entries[0].source.bytes(), br#"{"id": 2, "paid": true}"#);
}

#[test]
fn key_logs_lying_beside_a_tls_capture_are_found_by_their_names() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/capture/third-party/illustrated");
    std::fs::copy(fixtures.join("tls13.pcap"), dir.path().join("tls13.pcap")).expect("copy");
    let keylog = std::fs::read(fixtures.join("tls13.keylog")).expect("key log");
    for name in ["SSLKEYLOGFILE", "session.keys", "notes.txt"] {
        std::fs::write(dir.path().join(name), &keylog).expect("write");
    }
    let mut ws = Workspace::new(no_notify());
    let i = ws.open_path(dir.path().join("tls13.pcap")).expect("opens");
    ws.wait_idle();
    let names = |ws: &Workspace| -> Vec<String> {
        ws.key_logs_beside(i)
            .iter()
            .filter_map(|p| Some(p.file_name()?.to_string_lossy().into_owned()))
            .collect()
    };
    assert_eq!(names(&ws), ["SSLKEYLOGFILE", "session.keys"]);
    ws.load_key_log_file(&dir.path().join("session.keys"))
        .expect("loads");
    ws.wait_idle();
    // Decrypted now: nothing more to offer.
    assert_eq!(names(&ws), Vec::<String>::new());
    assert_eq!(ws.key_log_files.len(), 1);
}

#[test]
fn a_registry_loaded_in_the_app_peels_kafka_framing_and_a_pasted_avsc_is_an_avro_schema() {
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/avro/confluent");
    let mut ws = Workspace::new(no_notify());
    ws.open_path(fixtures.join("order-2.bin")).expect("opens");
    ws.wait_idle();
    let before = ws.analysis().cloned().expect("analysed");
    assert_ne!(before.format, Format::Avro);
    // The registry's answers: the open payload is peeled again, by schema id 1.
    let label = ws
        .load_registry(&fixtures.join("registry.json"))
        .expect("loads");
    assert!(label.contains("(7 schemas)"), "{label}");
    ws.wait_idle();
    let a = ws.analysis().cloned().expect("analysed");
    assert_eq!(a.format, Format::Avro);
    let doc = a
        .source()
        .and_then(|c| c.document.as_ref())
        .expect("decoded");
    let value = doc.whole().expect("whole");
    assert_eq!(
        value.get("coupon"),
        Some(&wirelens::model::Value::text("WELCOME10"))
    );
    let layers = ws
        .entry()
        .and_then(|e| e.opened.ready().map(|o| o.payloads[0].provenance()))
        .expect("peeled");
    assert!(
        layers.contains("Confluent Schema Registry framing"),
        "{layers}"
    );
    // A Protobuf payload of the registry is read with the message type its index path names.
    ws.open_path(fixtures.join("order-pb.bin")).expect("opens");
    ws.wait_idle();
    let a = ws.analysis().cloned().expect("analysed");
    assert_eq!(a.format, Format::Protobuf);
    assert_eq!(a.message.as_deref(), Some("shop.Envelope.Order"));
    // Pasted JSON schema text loads as Avro, not as a .proto.
    let label = ws
        .load_schema_text(r#"{"type": "record", "name": "Pasted", "fields": []}"#)
        .expect("an Avro schema");
    assert!(label.contains("Pasted"), "{label}");
    assert_eq!(ws.schemas.avro.len(), 1);
    assert!(ws.load_schema_text("{\"type\": \"nothing\"}").is_err());
}
