//! Avro against what other projects wrote: the Apache Avro project's interoperability container
//! files (`tests/data/avro/interop/`, read as fastavro reads them) and fastavro's container
//! files with every codec, decoded by wirelens' container reader and schema-driven decoder; and
//! `diff-schema` of two `.avsc` versions.

use std::path::{Path, PathBuf};

use base64::Engine;
use wirelens::codec::avro::{container, decode_run, AvroSchema};
use wirelens::codec::DecodeOptions;
use wirelens::model::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A value as the fixtures' expected JSON writes it (`tests/fixtures/avro/avrojson.py`):
/// bytes as base64, floats as numbers (NaN and the infinities as strings).
fn to_expected(v: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(n) => serde_json::json!(*n as i64),
        Value::Float(f) if f.value.is_nan() => J::String("NaN".into()),
        Value::Float(f) if f.value.is_infinite() => J::String(
            if f.value > 0.0 {
                "Infinity"
            } else {
                "-Infinity"
            }
            .into(),
        ),
        Value::Float(f) => serde_json::json!(f.value),
        Value::Text(t) => J::String(t.to_string()),
        Value::Bytes(b) => J::String(base64::engine::general_purpose::STANDARD.encode(b)),
        Value::Array(items) => J::Array(items.iter().map(to_expected).collect()),
        Value::Map(entries) => J::Object(
            entries
                .iter()
                .map(|(k, v)| (k.as_str().unwrap_or_default().to_string(), to_expected(v)))
                .collect(),
        ),
        other => panic!("unexpected value {other:?}"),
    }
}

/// Every block of the container file at `path`, decoded: the records, in order.
fn read_container(path: &Path) -> (Vec<Value>, container::Header, usize) {
    let bytes = std::fs::read(path).expect("container file");
    let header = container::read_header(&bytes).expect("header");
    // The expected JSON leaves logical types raw: read with them stripped, as fastavro was.
    let mut schema_json: serde_json::Value =
        serde_json::from_str(&header.schema_json).expect("schema JSON");
    strip_logical(&mut schema_json);
    let schema =
        AvroSchema::parse(&schema_json.to_string(), &path.display().to_string()).expect("schema");
    let options = DecodeOptions {
        avro: Some(schema),
        ..DecodeOptions::default()
    };
    let mut records = Vec::new();
    let mut blocks = 0;
    for block in container::blocks(&bytes, &header) {
        let block = block.expect("block");
        assert!(
            block.sync_ok,
            "{}: block {} sync",
            path.display(),
            block.index
        );
        let data = container::decompress(header.codec, &bytes[block.data.clone()], 64 << 20)
            .expect("decompresses");
        let doc = decode_run(&data, block.count, &options).expect("block decodes");
        doc.spans.validate(data.len()).expect("spans");
        let Value::Array(items) = doc.value else {
            panic!("a block is an array of records")
        };
        records.extend(items);
        blocks += 1;
    }
    (records, header, blocks)
}

fn strip_logical(json: &mut serde_json::Value) {
    match json {
        serde_json::Value::Object(map) => {
            map.remove("logicalType");
            map.values_mut().for_each(strip_logical);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(strip_logical),
        _ => {}
    }
}

fn same_numbers(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value as J;
    match (a, b) {
        (J::Number(x), J::Number(y)) => x.as_f64() == y.as_f64(),
        (J::Array(x), J::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_numbers(a, b))
        }
        (J::Object(x), J::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((ka, a), (kb, b))| ka == kb && same_numbers(a, b))
        }
        _ => a == b,
    }
}

fn check_against_expected(dir: &Path) -> usize {
    let mut files = 0;
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "avro"))
        .collect();
    entries.sort();
    for path in entries {
        let expected_path = path.with_extension("expected.json");
        let expected: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&expected_path).expect("expected JSON"))
                .expect("JSON");
        let header_json: serde_json::Value = serde_json::from_slice(
            &std::fs::read(path.with_extension("header.json")).expect("header JSON"),
        )
        .expect("JSON");
        let (records, header, blocks) = read_container(&path);
        assert_eq!(
            header.codec.name(),
            header_json["codec"],
            "{}",
            path.display()
        );
        assert_eq!(
            blocks,
            header_json["blocks"].as_array().expect("blocks").len(),
            "{}",
            path.display()
        );
        let got = serde_json::Value::Array(records.iter().map(to_expected).collect());
        assert!(
            same_numbers(&got, &expected),
            "{}: wirelens read\n{got:#}\nfastavro read\n{expected:#}",
            path.display()
        );
        files += 1;
    }
    files
}

#[test]
fn the_avro_projects_interop_files_read_as_fastavro_reads_them() {
    let n = check_against_expected(&root().join("tests/data/avro/interop"));
    assert!(n >= 8, "only {n} interop files");
}

#[test]
fn diff_schema_gives_avro_verdicts_both_ways() {
    let dir = tempfile::tempdir().expect("temp dir");
    let old = dir.path().join("old.avsc");
    let new = dir.path().join("new.avsc");
    std::fs::write(
        &old,
        r#"{"type":"record","name":"Order","fields":[
            {"name":"id","type":"long"},{"name":"qty","type":"int"}]}"#,
    )
    .expect("test value");
    // qty promoted to long (new reads old; old cannot read new), note added with a default.
    std::fs::write(
        &new,
        r#"{"type":"record","name":"Order","fields":[
            {"name":"id","type":"long"},{"name":"qty","type":"long"},
            {"name":"note","type":"string","default":""}]}"#,
    )
    .expect("test value");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_wirelens"))
        .args(["diff-schema", "--old"])
        .arg(&old)
        .arg("--new")
        .arg(&new)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("backward (new reads old): compatible"),
        "{text}"
    );
    assert!(
        text.contains("forward (old reads new): incompatible"),
        "{text}"
    );
    assert!(text.contains("Order.qty"), "{text}");
}

/// The Avro column of every sample is what Python's fastavro writes for the same data by the
/// same schema (`tests/fixtures/avro/fastavro/make.py` made the files with fastavro, checked
/// that the Apache `avro` package writes the same bytes, and `.ci/run` makes them again), and
/// the schema is the one wirelens infers.
#[test]
fn every_samples_avro_is_fastavros_bytes() {
    use wirelens::codec::avro::infer::{infer, InferOptions};
    use wirelens::codec::{decode, encode, EncodeOptions, Format};
    let dir = root().join("tests/fixtures/avro/fastavro");
    let mut compared = 0;
    let mut schemas: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "avsc"))
        .collect();
    schemas.sort();
    for avsc in schemas {
        let sample = avsc
            .file_stem()
            .expect("name")
            .to_string_lossy()
            .to_string();
        let bytes = std::fs::read(root().join("samples").join(&sample)).expect("sample");
        let from =
            Format::from_extension(sample.rsplit('.').next().expect("test value")).expect("format");
        let doc = decode(&bytes, from, &DecodeOptions::default()).expect("sample decodes");
        let schema = infer(&doc.value, &InferOptions::default()).expect("infers");
        let committed = std::fs::read_to_string(&avsc).expect("avsc");
        assert_eq!(
            schema.text(),
            committed.trim_end(),
            "{sample}: inferred schema"
        );
        let ours = encode(&doc.value, Format::Avro, &EncodeOptions::default()).expect("encodes");
        let theirs = std::fs::read(avsc.with_extension("avro")).expect("fastavro bytes");
        assert_eq!(ours.bytes, theirs, "{sample}: wirelens and fastavro differ");
        compared += 1;
    }
    assert_eq!(
        compared, 14,
        "every sample fastavro wrote (the large ones are compared by make.py alone)"
    );
}

/// Protobuf read without a schema groups a repeated field number into an array, so the Avro
/// column's tree is its bytes read back, by the schema they were written with: every node of it
/// on those bytes (the column had no tree: the bytes were read back without a schema).
#[test]
fn the_avro_column_of_protobuf_read_without_a_schema_has_its_tree() {
    use wirelens::codec::Format;
    use wirelens::workspace::{no_notify, Workspace};
    let mut ws = Workspace::new(no_notify());
    ws.open_path(root().join("samples/user-profile.pb"))
        .expect("opens");
    ws.wait_idle();
    let a = ws.analysis().cloned().expect("analysed");
    assert_eq!(a.format, Format::Protobuf);
    let column = a.column(Format::Avro).expect("an Avro column");
    assert!(column.error.is_none(), "{:?}", column.error);
    assert!(
        column
            .notes
            .iter()
            .any(|n| n.message.contains("written as an array")),
        "grouped: {:?}",
        column.notes
    );
    let doc = column.document.as_ref().expect("a tree");
    assert!(doc.spans.len() > 5, "{} nodes", doc.spans.len());
    doc.spans
        .validate(column.bytes.len())
        .expect("spans within the Avro bytes");
}

/// The app's Avro column holds those bytes: each sample opened in a workspace, as a user
/// opens it, shows fastavro's bytes in its Avro column.
#[test]
fn the_apps_avro_column_is_fastavros_bytes_for_every_sample() {
    use wirelens::codec::Format;
    use wirelens::workspace::{no_notify, Workspace};
    let dir = root().join("tests/fixtures/avro/fastavro");
    let mut samples: Vec<String> = std::fs::read_dir(&dir)
        .expect("folder")
        .filter_map(|e| {
            let name = e.expect("entry").file_name().into_string().ok()?;
            name.strip_suffix(".avro").map(str::to_string)
        })
        .collect();
    samples.sort();
    assert_eq!(samples.len(), 14, "{samples:?}");
    for sample in &samples {
        let mut ws = Workspace::new(no_notify());
        ws.open_path(root().join("samples").join(sample))
            .expect("opens");
        ws.wait_idle();
        let a = ws.analysis().cloned().expect("analysed");
        let column = a.column(Format::Avro).expect("an Avro column");
        assert!(column.error.is_none(), "{sample}: {:?}", column.error);
        let theirs = std::fs::read(dir.join(format!("{sample}.avro"))).expect("fastavro bytes");
        assert!(
            column.bytes[..] == theirs[..],
            "{sample}: the app's Avro column ({} bytes) is not fastavro's ({} bytes)",
            column.bytes.len(),
            theirs.len()
        );
    }
}

/// `convert --all --to json` of a container file: one JSON array per block, read back as the
/// records in order.
fn converted_records(path: &Path, args: &[&str]) -> (Vec<serde_json::Value>, String, Option<i32>) {
    let mut all = vec!["convert", "--all", "--to", "json"];
    all.extend_from_slice(args);
    let run = crate::common::run_wirelens(&all, path);
    let mut records = Vec::new();
    for line in run.stdout.lines() {
        let block: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        records.extend(
            block
                .as_array()
                .expect("a block is an array")
                .iter()
                .cloned(),
        );
    }
    (records, run.stderr, run.code)
}

#[test]
fn the_cli_peels_every_interop_container_to_fastavros_records() {
    let dir = root().join("tests/data/avro/interop");
    let mut files = 0;
    for name in [
        "weather.avro",
        "weather-deflate.avro",
        "weather-snappy.avro",
        "weather-zstd.avro",
        "weather-sorted.avro",
        "syncInMeta.avro",
        "person-10.avro",
        "withUnion.avro",
        "avro-1279-codec.avro",
        "avro-1279-no-codec.avro",
    ] {
        let path = dir.join(name);
        let expected: serde_json::Value = serde_json::from_slice(
            &std::fs::read(path.with_extension("expected.json")).expect("expected JSON"),
        )
        .expect("JSON");
        let (records, stderr, code) = converted_records(&path, &[]);
        assert_eq!(code, Some(0), "{name}: {stderr}");
        assert!(
            same_numbers(&serde_json::Value::Array(records), &expected),
            "{name}"
        );
        files += 1;
    }
    assert_eq!(files, 10);
    // Each block is a layer of its own, with its datum count, codec and sync marker.
    let run = crate::common::run_wirelens(&["inspect", "--no-hex"], &dir.join("syncInMeta.avro"));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "Avro container → Avro block (block 2: 592 datums, deflate 2151 → 16381 bytes, \
             sync marker ok)"
        ),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("format: avro"), "{}", run.stdout);
}

#[test]
fn broken_containers_keep_what_they_hold_and_say_where_they_break() {
    let dir = root().join("tests/data/avro/interop/invalid");
    // The file ends where block 1's sync marker should be: its datums are read, cut.
    let truncated = dir.join("avro-1238-truncated.avro");
    let (_, stderr, code) = converted_records(&truncated, &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("block 1 (starting at byte 83) cut short: its sync marker needs bytes 89..105 but the input ends at 98"),
        "{stderr}"
    );
    assert!(stderr.contains("--partial"), "{stderr}");
    let (records, stderr, code) = converted_records(&truncated, &["--partial"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(records, [serde_json::json!(null), serde_json::json!(100)]);
    // A union index past the branches: the error names the byte in the block.
    let run = crate::common::run_wirelens(
        &["inspect", "--no-hex"],
        &dir.join("avro-1237-bad-union-discriminant.avro"),
    );
    assert!(
        run.stdout
            .contains("stopped at byte 1: the union has 2 branches; index 2 names none"),
        "{}",
        run.stdout
    );
    // Ten good records, then a stray byte that starts a block of five and ends.
    let (records, stderr, _) = converted_records(&dir.join("person-10.no-codec.avro"), &[]);
    assert_eq!(records.len(), 10, "{stderr}");
    assert!(
        stderr.contains("block 2 (starting at byte 494): byte size"),
        "{stderr}"
    );
    // A header that does not parse is told, with its offset; the file stays whole.
    let temp = tempfile::tempdir().expect("temp dir");
    let bad = temp.path().join("bad.avro");
    std::fs::write(&bad, b"Obj\x01\x05garbage").expect("write");
    let run = crate::common::run_wirelens(&["inspect"], &bad);
    assert!(
        run.stdout.contains(
            "error in Avro container at byte 5: header metadata block byte size at byte 5 is \
             negative"
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn a_single_object_is_read_by_the_loaded_schema_its_fingerprint_names() {
    let dir = root().join("tests/data/avro/interop");
    let message = dir.join("messageV1-test_message.bin");
    let schema = dir.join("messageV1-test_schema.avsc");
    let expected: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.join("messageV1-test_message.expected.json")).expect("expected"),
    )
    .expect("JSON");
    let run = crate::common::run_wirelens(
        &[
            "convert",
            "--to",
            "json",
            "--avro-schema",
            schema.to_str().expect("utf-8"),
        ],
        &message,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let got: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(got, expected[0]);
    let run = crate::common::run_wirelens(
        &[
            "inspect",
            "--no-hex",
            "--avro-schema",
            schema.to_str().expect("utf-8"),
        ],
        &message,
    );
    assert!(
        run.stdout.contains(
            "via Avro single object (schema fingerprint 0x3df542a2f8e12da9 (CRC-64-AVRO), 28 \
             bytes of datum)"
        ),
        "{}",
        run.stdout
    );
    // Another schema is not the writer's: the bytes are not read by it, and the warning says
    // which fingerprint is wanted.
    let run = crate::common::run_wirelens(
        &[
            "convert",
            "--to",
            "json",
            "--avro-schema",
            dir.join("weather.avsc").to_str().expect("utf-8"),
        ],
        &message,
    );
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("fingerprint 0x3df542a2f8e12da9")
            && run.stderr.contains("no loaded schema has it"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_bad_block_is_cut_and_the_blocks_after_it_are_still_read() {
    use wirelens::capture::{unwrap, UnwrapOptions};
    let path = root().join("tests/data/avro/interop/syncInMeta.avro");
    let good = std::fs::read(&path).expect("file");
    let header = container::read_header(&good).expect("header");
    let blocks: Vec<container::Block> = container::blocks(&good, &header)
        .map(|b| b.expect("block"))
        .collect();
    assert!(blocks.len() >= 4, "{} blocks", blocks.len());
    let whole = unwrap(&good, &UnwrapOptions::default()).expect("peels");
    assert_eq!(whole.len(), blocks.len());
    assert!(whole.iter().all(|p| p.cut.is_none()));

    // Block 1's deflate data is broken: it is kept as its compressed bytes, cut, with the
    // inflater's words; every other block is read.
    let mut bad = good.clone();
    let data = blocks[0].data.clone();
    bad[data.start..data.start + 8].fill(0xff);
    let found = unwrap(&bad, &UnwrapOptions::default()).expect("peels");
    assert_eq!(found.len(), blocks.len());
    let cut = found[0].cut.as_deref().expect("block 1 is cut");
    assert!(
        cut.starts_with(&format!(
            "block 1 (bytes {}..{}): deflate",
            data.start, data.end
        )),
        "{cut}"
    );
    assert!(found[0].avro.is_none());
    assert_eq!(found[0].bytes, &bad[data.clone()]);
    assert!(found[1..]
        .iter()
        .all(|p| p.cut.is_none() && p.avro.is_some()));

    // Block 2's sync marker is wrong: it is cut, the next block is passed over to the next
    // marker (the warning says which bytes), and reading goes on.
    let mut bad = good.clone();
    let sync = blocks[1].sync.clone();
    bad[sync.start] ^= 0xff;
    let found = unwrap(&bad, &UnwrapOptions::default()).expect("peels");
    assert_eq!(found.len(), blocks.len() - 1);
    let cut = found[1].cut.as_deref().expect("block 2 is cut");
    assert!(
        cut.contains(&format!(
            "block 2's sync marker at bytes {}..{} is not the header's",
            sync.start, sync.end
        )) && cut.contains("passed over"),
        "{cut}"
    );
    assert!(found[1].layers[1].detail.contains("sync marker wrong"));
    assert!(found[2..].iter().all(|p| p.cut.is_none()));
}

#[test]
fn confluent_framed_payloads_read_as_the_kafka_clients_deserializer_reads_them() {
    let dir = root().join("tests/fixtures/avro/confluent");
    let registry = dir.join("registry.json");
    let registry = registry.to_str().expect("utf-8");
    for (name, layer) in [
        ("order-1", "schema id 1, Avro, subject orders-value"),
        ("order-2", "schema id 1, Avro, subject orders-value"),
        ("event", "schema id 2, JSON Schema, subject events-value"),
        // The registry holds the serializer's FileDescriptorProto (base64); the message-index
        // path [0, 0] names a message nested in the file's first one. proto3 JSON out.
        (
            "order-pb",
            "schema id 3, Protobuf, subject orders-pb-value, message index path [0, 0]: \
             shop.Envelope.Order",
        ),
        // Its file imports shop/money.proto, registered as a schema of its own and named by
        // the answer's references.
        // Its schema uses shop.Address, registered under a subject of its own and named by
        // the answer's references.
        ("shipment", "schema id 7, Avro, subject shipments-value"),
        (
            "invoice-pb",
            "schema id 5, Protobuf, subject invoices-pb-value, message index path [0]: \
             shop.Invoice",
        ),
    ] {
        let path = dir.join(format!("{name}.bin"));
        let expected: serde_json::Value = serde_json::from_slice(
            &std::fs::read(dir.join(format!("{name}.expected.json"))).expect("expected"),
        )
        .expect("JSON");
        let run = crate::common::run_wirelens(
            &["convert", "--to", "json", "--registry", registry],
            &path,
        );
        assert_eq!(run.code, Some(0), "{name}: {}", run.stderr);
        let got: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
        assert_eq!(got, expected, "{name}");
        let run =
            crate::common::run_wirelens(&["inspect", "--no-hex", "--registry", registry], &path);
        assert!(
            run.stdout
                .contains(&format!("via Confluent Schema Registry framing ({layer})")),
            "{name}: {}",
            run.stdout
        );
    }
    // Without the registry, five bytes prove nothing: the payload is not guessed as framed.
    let run = crate::common::run_wirelens(&["inspect", "--no-hex"], &dir.join("order-1.bin"));
    assert!(!run.stdout.contains("via Confluent"), "{}", run.stdout);
    assert!(run.stdout.contains("no known format"), "{}", run.stdout);
    // It says what the first bytes suggest, and how to read them.
    assert!(
        run.stdout.contains(
            "note: the bytes start as Confluent Schema Registry framing does (a zero byte, then \
             schema id 1); with --registry"
        ),
        "{}",
        run.stdout
    );
}

/// The names of the resolution cases `tests/fixtures/avro/resolution/make.py` wrote.
fn resolution_cases() -> Vec<String> {
    let dir = root().join("tests/fixtures/avro/resolution");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("folder")
        .filter_map(|e| {
            let name = e.expect("entry").file_name().into_string().ok()?;
            name.strip_suffix(".writer.avsc").map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

#[test]
fn a_reader_schema_reads_what_fastavro_reads_with_it() {
    let dir = root().join("tests/fixtures/avro/resolution");
    let cases = resolution_cases();
    assert!(cases.len() >= 10, "{cases:?}");
    for name in &cases {
        let schema = |which: &str| {
            let path = dir.join(format!("{name}.{which}.avsc"));
            AvroSchema::from_file(&path).expect("schema")
        };
        let bytes = std::fs::read(dir.join(format!("{name}.bin"))).expect("data");
        let expected: serde_json::Value = serde_json::from_slice(
            &std::fs::read(dir.join(format!("{name}.expected.json"))).expect("expected"),
        )
        .expect("JSON");
        let count = expected.as_array().expect("datums").len() as u64;
        let options = DecodeOptions {
            avro: Some(schema("writer")),
            avro_reader: Some(schema("reader")),
            avro_items: Some(count),
            ..DecodeOptions::default()
        };
        let doc = wirelens::codec::decode(&bytes, wirelens::codec::Format::Avro, &options)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        doc.spans
            .validate(bytes.len())
            .unwrap_or_else(|e| panic!("{name}: spans: {e}"));
        // Fields come in byte order, defaults last; fastavro's in the reader's order: the same
        // record either way.
        assert_eq!(to_expected(&doc.value), expected, "{name}");
    }
}

/// A container file read with a reader's schema: every block's records as fastavro's `reader`
/// gives them with it (the readings made when the file was opened are the writer's, and must not
/// stand in for it), and the tree says which rule read each value not read as written.
#[test]
fn a_container_read_with_a_reader_schema_gives_fastavros_records_and_each_nodes_rule() {
    let dir = root().join("tests/fixtures/avro/resolution");
    let reader = dir.join("container.reader.avsc");
    let reader = reader.to_str().expect("utf-8");
    let expected: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.join("container.expected.json")).expect("expected"),
    )
    .expect("JSON");
    let path = dir.join("container.avro");
    let (records, stderr, code) = converted_records(&path, &["--reader-schema", reader]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(records.len() > 14, "several blocks: {}", records.len());
    assert!(
        same_numbers(&serde_json::Value::Array(records), &expected),
        "{stderr}"
    );
    let run =
        crate::common::run_wirelens(&["inspect", "--no-hex", "--reader-schema", reader], &path);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // The first datum (kind Z, note "n0"): each value's rule after it, where it is not read as
    // written; a value read as written says nothing.
    for line in [
        r#"[0]  map(5)  (record Reading; the writer's time skipped)"#,
        r#".site  "st-0"  (alias of station; same type string)"#,
        r#".temp  -30.0  (same name; promoted int → double)"#,
        r#".kind  "B"  (same name; enum Kind; Z read as the reader's enum default B)"#,
        r#".unit  "C"  (default: "C")"#,
        r#".note  "n0""#,
    ] {
        let found = run.stdout.lines().find(|l| l.contains(line));
        let found = found.unwrap_or_else(|| panic!("{line}\n{}", run.stdout));
        assert!(found.ends_with(line), "{found}");
    }
}

#[test]
fn the_cli_reads_with_a_reader_schema_and_lists_the_rule_for_each_field() {
    let dir = root().join("tests/fixtures/avro/resolution");
    let path = |file: &str| dir.join(file).to_str().expect("utf-8").to_string();
    let (writer, reader) = (
        path("aliases_rename.writer.avsc"),
        path("aliases_rename.reader.avsc"),
    );
    let args = [
        "--from",
        "avro",
        "--avro-schema",
        &writer,
        "--reader-schema",
        &reader,
    ];
    let mut convert = vec!["convert", "--to", "json"];
    convert.extend_from_slice(&args);
    let run = crate::common::run_wirelens(&convert, &dir.join("aliases_rename.bin"));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout.trim(), r#"{"new_field":"v","status":"OFF"}"#);
    let mut inspect = vec!["inspect", "--no-hex"];
    inspect.extend_from_slice(&args);
    let run = crate::common::run_wirelens(&inspect, &dir.join("aliases_rename.bin"));
    for line in [
        "schema resolution: written as ns.OldName, read as ns.NewName:",
        "  NewName: record NewName, alias of OldName",
        "  NewName.new_field: alias of old_field; same type string",
    ] {
        assert!(run.stdout.contains(line), "{line}\n{}", run.stdout);
    }
    // A reader that cannot read the writer's data says which place and rule.
    let run = crate::common::run_wirelens(
        &[
            "convert",
            "--to",
            "json",
            "--from",
            "avro",
            "--avro-schema",
            &reader,
            "--reader-schema",
            &writer,
        ],
        &dir.join("aliases_rename.bin"),
    );
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains(
            "the reader's schema ns.OldName cannot read what ns.NewName wrote: At OldName: the writer's record ns.NewName and the reader's record ns.OldName have different names"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn diff_compares_avro_with_other_formats_by_meaning() {
    let dir = root().join("tests/data/avro/interop");
    // A container file against fastavro's JSON of its records: the same meaning.
    let run = crate::common::run_wirelens(
        &[
            "diff",
            dir.join("weather-deflate.avro").to_str().expect("utf-8"),
        ],
        &dir.join("weather.expected.json"),
    );
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("same meaning (Avro 102 bytes, JSON 299 bytes)"),
        "{}",
        run.stdout
    );
    // One record changed in MessagePack: the change is named with its path and both spans.
    let temp = tempfile::tempdir().expect("temp dir");
    let changed = temp.path().join("weather.msgpack");
    let mut json = std::fs::read_to_string(dir.join("weather.expected.json")).expect("JSON");
    json = json.replacen("\"temp\":22", "\"temp\":23", 1);
    let json_path = temp.path().join("weather.json");
    std::fs::write(&json_path, json).expect("write");
    let run = crate::common::run_wirelens(
        &[
            "convert",
            "--to",
            "msgpack",
            "-o",
            changed.to_str().expect("utf-8"),
        ],
        &json_path,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let run = crate::common::run_wirelens(
        &["diff", dir.join("weather.avro").to_str().expect("utf-8")],
        &changed,
    );
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("$[1].temp: 22 → 23  (A bytes 39..40"),
        "{}",
        run.stdout
    );
}

#[test]
fn infer_logical_gives_uuid_and_timestamp_types_that_fastavro_writes_alike() {
    let dir = root().join("tests/fixtures/avro/logical");
    let json = dir.join("events.json");
    let run = crate::common::run_wirelens(&["infer-avro", "--infer-logical"], &json);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let committed = std::fs::read_to_string(dir.join("events.avsc")).expect("schema");
    assert_eq!(run.stdout, committed);
    // Without the flag, text stays text.
    let plain = crate::common::run_wirelens(&["infer-avro"], &json);
    assert!(!plain.stdout.contains("logicalType"), "{}", plain.stdout);
    let temp = tempfile::tempdir().expect("temp dir");
    let out = temp.path().join("events.avro");
    let run = crate::common::run_wirelens(
        &[
            "convert",
            "--to",
            "avro",
            "--infer-logical",
            "-o",
            out.to_str().expect("utf-8"),
        ],
        &json,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("RFC 3339 text written as a timestamp-micros long"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read(&out).expect("written"),
        std::fs::read(dir.join("events.avro")).expect("fastavro's")
    );
}

#[test]
fn single_object_markers_do_not_override_a_content_type() {
    use wirelens::capture::{unwrap, UnwrapOptions};
    let body = [0xc3, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 0x02];
    let message = |content_type: &str| {
        let mut m = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        m.extend_from_slice(&body);
        m
    };
    // Protobuf said by the Content-Type (0xC3 0x01 opens a group of field 24): the body as is.
    let found = unwrap(
        &message("application/x-protobuf"),
        &UnwrapOptions::default(),
    )
    .expect("peels");
    assert_eq!(found[0].bytes, body);
    assert!(found[0].avro.is_none());
    assert_eq!(found[0].hint, Some(wirelens::codec::Format::Protobuf));
    // Bytes no layer named: the marker is peeled, the fingerprint kept for the reading.
    let found = unwrap(
        &message("application/octet-stream"),
        &UnwrapOptions::default(),
    )
    .expect("peels");
    assert_eq!(found[0].bytes, [0x02]);
    let framed = found[0].avro.as_ref().expect("single object");
    assert_eq!(
        framed.fingerprint,
        Some(u64::from_le_bytes([1, 2, 3, 4, 5, 6, 7, 8]))
    );
    assert_eq!(
        found[0].layers.last().map(|l| l.name.as_str()),
        Some("Avro single object")
    );
}

#[test]
fn bytes_a_reader_schema_skips_are_named_in_the_annotated_hex() {
    let dir = root().join("tests/fixtures/avro/resolution");
    let name = "dropped_fields_are_skipped";
    let schema = |which: &str| {
        AvroSchema::from_file(&dir.join(format!("{name}.{which}.avsc"))).expect("schema")
    };
    let bytes = std::fs::read(dir.join(format!("{name}.bin"))).expect("data");
    let options = DecodeOptions {
        avro: Some(schema("writer")),
        avro_reader: Some(schema("reader")),
        avro_items: Some(2),
        ..DecodeOptions::default()
    };
    let doc =
        wirelens::codec::decode(&bytes, wirelens::codec::Format::Avro, &options).expect("reads");
    let mut out = Vec::new();
    wirelens::report::inspect::write_annotated_hex(&mut out, &bytes, &doc).expect("written");
    let text = String::from_utf8(out).expect("text");
    let skipped: Vec<&str> = text
        .lines()
        .filter(|l| l.ends_with("(no node: a writer's field the reader's schema skips)"))
        .collect();
    // Each record's four dropped fields lie between `keep` and `last`: one line per record.
    assert_eq!(skipped.len(), 2, "{text}");
    assert!(skipped[0].contains("$[0]  (no node"), "{text}");
    // Every byte is on some line: the dump's hex adds up to the input.
    let hex_bytes: usize = text
        .lines()
        .map(|l| {
            l[10..]
                .split("  ")
                .next()
                .unwrap_or("")
                .split_whitespace()
                .count()
        })
        .sum();
    assert_eq!(hex_bytes, bytes.len(), "{text}");
}

#[test]
fn a_container_cut_or_flipped_at_every_byte_peels_and_reads_without_a_panic() {
    use wirelens::capture::{unwrap, UnwrapOptions};
    let good =
        std::fs::read(root().join("tests/data/avro/interop/weather-deflate.avro")).expect("file");
    let read_all = |bytes: &[u8]| {
        let payloads = match unwrap(bytes, &UnwrapOptions::default()) {
            Ok(p) => p,
            Err(e) => e.extracted,
        };
        for p in payloads {
            let Some(framed) = &p.avro else { continue };
            let options = DecodeOptions {
                avro: framed.schema.clone(),
                avro_items: framed.items,
                ..DecodeOptions::default()
            };
            let outcome =
                wirelens::codec::decode(&p.bytes, wirelens::codec::Format::Avro, &options);
            let doc = match outcome {
                Ok(doc) => Some(doc),
                Err(e) => e.partial.map(|d| *d),
            };
            if let Some(doc) = doc {
                doc.spans.validate(p.bytes.len()).expect("spans");
            }
        }
    };
    for n in 0..good.len() {
        read_all(&good[..n]);
        let mut flipped = good.clone();
        flipped[n] ^= 0xff;
        read_all(&flipped);
    }
}

#[test]
fn a_block_that_claims_more_datums_than_it_holds_stops_at_the_node_limit_as_avro() {
    // Schema "null" (a datum takes no bytes), one block claiming 2^40 datums in 0 bytes.
    let temp = tempfile::tempdir().expect("temp dir");
    let path = temp.path().join("nulls.avro");
    let zigzag = |n: i64| {
        let mut n = ((n << 1) ^ (n >> 63)) as u64;
        let mut out = Vec::new();
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return out;
            }
            out.push(byte | 0x80);
        }
    };
    let sync = [7u8; 16];
    let mut file = b"Obj\x01".to_vec();
    file.extend(zigzag(1));
    let (key, schema) = ("avro.schema", "\"null\"");
    file.extend(zigzag(key.len() as i64));
    file.extend(key.as_bytes());
    file.extend(zigzag(schema.len() as i64));
    file.extend(schema.as_bytes());
    file.push(0);
    file.extend(sync);
    file.extend(zigzag(1 << 40));
    file.extend(zigzag(0));
    file.extend(sync);
    std::fs::write(&path, &file).expect("write");
    let run = crate::common::run_wirelens(
        &[
            "inspect",
            "--layer",
            "2",
            "--no-hex",
            "--limit",
            "nodes=100000",
        ],
        &path,
    );
    // The framing says Avro: that reading is the one shown, cut by the limit, never a guess.
    assert!(
        run.stdout.contains("format: avro") && run.stdout.contains("1099511627776 datums"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains("the limit of 100000 nodes"),
        "{}",
        run.stderr
    );
}
