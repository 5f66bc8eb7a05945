//! Both faces write a payload the same way: `wirelens convert --to FORMAT` writes, byte for
//! byte, what the app's column of that format holds (both call `pipeline::write`), on every
//! sample and on the fixtures that are single payloads, with and without their schemas. Both
//! also peel the same way: on captured inputs (dumps, base64, HTTP messages, sequences, pcaps)
//! the app's payloads are the ones `convert --pick N` converts.

use std::path::{Path, PathBuf};

use wirelens::codec::Format;
use wirelens::workspace::{no_notify, Analysis, Workspace};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A payload file, and the `.proto` files (with their import roots) it is also read with.
struct Case {
    file: PathBuf,
    protos: Vec<PathBuf>,
    includes: Vec<PathBuf>,
}

impl Case {
    fn plain(file: PathBuf) -> Case {
        Case {
            file,
            protos: Vec::new(),
            includes: Vec::new(),
        }
    }

    fn with(file: PathBuf, proto: PathBuf) -> Case {
        Case {
            file,
            protos: vec![proto],
            includes: Vec::new(),
        }
    }

    fn name(&self) -> String {
        let file = self.file.strip_prefix(root()).unwrap_or(&self.file);
        match self.protos.first() {
            Some(p) => format!(
                "{} with {}",
                file.display(),
                p.file_name().unwrap_or_default().to_string_lossy()
            ),
            None => file.display().to_string(),
        }
    }
}

/// Every sample, on its own and, where the samples have its `.proto`, read with it too.
fn sample_cases() -> Vec<Case> {
    let samples = root().join("samples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&samples)
        .expect("samples/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e != "proto"))
        .collect();
    files.sort();
    let proto_of = |name: &str| -> Option<PathBuf> {
        let proto = match name {
            n if n.starts_with("user-profile") => "user-profile.proto",
            n if n.starts_with("orders-api") => "orders-api.proto",
            n if n.starts_with("transactions-") => "transactions.proto",
            _ => return None,
        };
        Some(samples.join(proto))
    };
    let mut cases = Vec::new();
    for file in files {
        let name = file
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        if let Some(proto) = proto_of(&name) {
            cases.push(Case::with(file.clone(), proto));
        }
        cases.push(Case::plain(file));
    }
    cases
}

/// The fixtures that hold one payload each: protobuf with its `.proto`, JSON, MessagePack and
/// CBOR the reference libraries wrote, and a protobuf payload whose value cannot say its proto3
/// JSON (a `Struct` sent twice), which prost-reflect writes from its bytes. Left out: Avro
/// (a bare datum reads only with its `.avsc`, a container holds several records) and
/// `containers.json` in its three formats, whose protobuf output (an inferred message of 65,536
/// fields) takes half a minute a run.
fn fixture_cases() -> Vec<Case> {
    let fixtures = root().join("tests/fixtures");
    let mut cases = Vec::new();
    let json_names = fixtures.join("protobuf/json-names");
    cases.push(Case::with(
        json_names.join("span.pb"),
        json_names.join("trace.proto"),
    ));
    for name in ["span.pb", "span.json", "span.proto-names.json"] {
        cases.push(Case::plain(json_names.join(name)));
    }
    let otel = root().join("tests/data/otel");
    let otlp = fixtures.join("protobuf/otlp");
    cases.push(Case {
        file: otlp.join("traces.pb"),
        protos: vec![otel.join("opentelemetry/proto/trace/v1/trace.proto")],
        includes: vec![otel],
    });
    cases.push(Case::plain(otlp.join("traces.pb")));
    cases.push(Case::plain(otlp.join("traces.json")));
    let fallback = fixtures.join("protobuf/fallback");
    cases.push(Case::with(
        fallback.join("event.pb"),
        fallback.join("event.proto"),
    ));
    cases.push(Case::plain(fallback.join("event.pb")));
    for dir in [
        "library-bytes/corpus",
        "library-bytes/out/corpus",
        "library-bytes/out/samples",
        "avro/logical",
    ] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures.join(dir))
            .expect("fixture folder")
            .map(|e| e.expect("entry").path())
            .filter(|p| {
                let name = p.file_name().unwrap_or_default().to_string_lossy();
                let ext = p.extension().unwrap_or_default().to_string_lossy();
                ["json", "msgpack", "cbor"].contains(&&*ext) && !name.starts_with("containers.")
            })
            .collect();
        files.sort();
        cases.extend(files.into_iter().map(Case::plain));
    }
    cases
}

/// The captured inputs: every file at the top of the capture fixtures (hex dumps in their many
/// styles, base64 and data URLs, HTTP messages with codings, gRPC-Web, sequences and delimited
/// streams, WebSocket frames), where the best-ranked peel and a fixed one can differ, and three
/// pcaps of HTTP/1.1, h2c and gRPC.
fn capture_cases() -> Vec<Case> {
    let capture = root().join("tests/fixtures/capture");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&capture)
        .expect("capture fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_file() && p.extension().is_none_or(|e| e != "md"))
        .collect();
    for name in ["no-takeover.bin", "takeover.bin"] {
        files.push(capture.join("websocket").join(name));
    }
    for name in ["grpc-h2c.pcap", "h2c-upgrade.pcap", "http1-keepalive.pcap"] {
        files.push(capture.join("real").join(name));
    }
    files.sort();
    files.into_iter().map(Case::plain).collect()
}

/// What `wirelens convert` writes for payload `pick` (counted from 0) of `case`'s file as
/// `format`, read with `message` when the app read it with one: the bytes, or the failure's
/// stderr.
fn convert(
    case: &Case,
    pick: Option<usize>,
    message: Option<&str>,
    format: Format,
    out: &Path,
) -> Result<Vec<u8>, String> {
    // The app shows a payload a layer cut short as far as it goes, as --partial converts it.
    let mut args: Vec<String> = vec![
        "convert".into(),
        case.file.display().to_string(),
        "--to".into(),
        format.name().into(),
        "--partial".into(),
        "-o".into(),
        out.display().to_string(),
    ];
    if let Some(p) = pick {
        args.extend(["--pick".into(), (p + 1).to_string()]);
    }
    if let Some(m) = message {
        for proto in &case.protos {
            args.extend(["--proto".into(), proto.display().to_string()]);
        }
        for include in &case.includes {
            args.extend(["-I".into(), include.display().to_string()]);
        }
        args.extend(["--message".into(), m.into()]);
    }
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_wirelens"))
        .args(&args)
        .output()
        .expect("wirelens runs");
    if !run.status.success() {
        return Err(String::from_utf8_lossy(&run.stderr).into_owned());
    }
    let mut written = std::fs::read(out).expect("written");
    // convert ends JSON with a newline for the terminal; the column holds the document.
    if format == Format::Json && written.last() == Some(&b'\n') {
        written.pop();
    }
    Ok(written)
}

/// The analyses of every payload of `case` the app shows, with the schema loaded.
fn analyses(case: &Case) -> Vec<(Option<usize>, std::sync::Arc<Analysis>)> {
    let mut ws = Workspace::new(no_notify());
    if !case.protos.is_empty() {
        ws.load_schema_files(&case.protos, &case.includes)
            .unwrap_or_else(|e| panic!("{}: the .proto compiles: {e}", case.name()));
    }
    ws.open_path(&case.file).expect("the file opens");
    ws.wait_idle();
    let count = ws.entries[0].opened.ready().map_or(0, |o| o.payloads.len());
    if count <= 1 {
        let a = ws.analysis().cloned().expect("the analysis is ready");
        return vec![(None, a)];
    }
    (0..count)
        .filter_map(|p| {
            ws.select_payload(p);
            ws.wait_idle();
            Some((Some(p), ws.analysis().cloned()?))
        })
        .collect()
}

/// The app's columns against `convert`'s output for every case: equal bytes where the column
/// was written, a failure of `convert` where the column says why it was not. Returns what
/// differs and how many columns were compared per format.
fn compare(cases: &[Case]) -> Compared {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut differ = Vec::new();
    let mut compared: Vec<(Format, usize)> = Format::ALL.iter().map(|&f| (f, 0)).collect();
    let mut unread = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        for (pick, a) in analyses(case) {
            // Text or encrypted records: the app shows the verdict, no column.
            if a.verdict.is_some() {
                continue;
            }
            let source = a.source().expect("a source column");
            if let Some(e) = &source.error {
                // A payload the app cannot read, convert cannot convert.
                unread.push(format!("{}: {e}", case.name()));
                let out = dir.path().join(format!("{n}.failed"));
                if let Ok(written) = convert(case, pick, None, Format::Json, &out) {
                    differ.push(format!(
                        "{}{}: the app fails ({e}), convert writes {} bytes",
                        case.name(),
                        pick.map(|p| format!(" payload {}", p + 1))
                            .unwrap_or_default(),
                        written.len()
                    ));
                }
                continue;
            }
            // The CLI reads with the schema only where the app read with a message type.
            let message = a.message.as_deref().filter(|_| !case.protos.is_empty());
            let columns: Vec<_> = a.columns.iter().filter(|c| !c.is_source).collect();
            // Each format's conversion runs beside the others.
            let converted: Vec<Result<Vec<u8>, String>> = std::thread::scope(|scope| {
                let runs: Vec<_> = columns
                    .iter()
                    .map(|column| {
                        let out = dir.path().join(format!("{n}.{}", column.format.name()));
                        scope.spawn(move || convert(case, pick, message, column.format, &out))
                    })
                    .collect();
                runs.into_iter()
                    .map(|run| run.join().expect("the conversion ran"))
                    .collect()
            });
            for (column, converted) in columns.into_iter().zip(converted) {
                assert!(
                    !column.pending && !column.deferred,
                    "{}: every column is written",
                    case.name()
                );
                let what = format!(
                    "{}{} → {}",
                    case.name(),
                    pick.map(|p| format!(" payload {}", p + 1))
                        .unwrap_or_default(),
                    column.format.name()
                );
                match (converted, &column.error) {
                    (Ok(written), None) => {
                        if let Some((_, n)) = compared.iter_mut().find(|(f, _)| *f == column.format)
                        {
                            *n += 1;
                        }
                        if written != column.bytes.as_ref() {
                            let at = written
                                .iter()
                                .zip(column.bytes.iter())
                                .position(|(a, b)| a != b)
                                .unwrap_or(written.len().min(column.bytes.len()));
                            differ.push(format!(
                                "{what}: convert {} bytes, column {} bytes, first difference at byte {at}",
                                written.len(),
                                column.bytes.len()
                            ));
                        }
                    }
                    (Err(_), Some(_)) => {}
                    (Ok(_), Some(e)) => {
                        differ.push(format!("{what}: convert writes it, the column says {e}"))
                    }
                    (Err(e), None) => differ.push(format!(
                        "{what}: the column is written, convert fails: {}",
                        e.trim()
                    )),
                }
            }
        }
    }
    Compared {
        differ,
        compared,
        unread,
    }
}

/// What [`compare`] found.
struct Compared {
    /// Where the faces disagree.
    differ: Vec<String>,
    /// How many columns were compared, per format.
    compared: Vec<(Format, usize)>,
    /// The payloads neither face could read, with why.
    unread: Vec<String>,
}

#[test]
fn convert_writes_every_samples_columns_byte_for_byte() {
    let cases = sample_cases();
    assert!(cases.len() >= 25, "{} sample cases", cases.len());
    let Compared {
        differ,
        compared,
        unread,
    } = compare(&cases);
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    assert!(unread.is_empty(), "{}", unread.join("\n"));
    for (format, n) in compared {
        assert!(n >= 10, "{n} {format:?} columns compared");
    }
}

#[test]
fn convert_writes_every_single_payload_fixtures_columns_byte_for_byte() {
    let cases = fixture_cases();
    let Compared {
        differ,
        compared,
        unread,
    } = compare(&cases);
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    assert!(unread.is_empty(), "{}", unread.join("\n"));
    for (format, n) in compared {
        assert!(n >= 5, "{n} {format:?} columns compared");
    }
}

#[test]
fn convert_writes_the_payloads_the_app_peels_from_captured_inputs() {
    let cases = capture_cases();
    assert!(cases.len() >= 45, "{} capture cases", cases.len());
    let Compared {
        differ, compared, ..
    } = compare(&cases);
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    for (format, n) in compared {
        if format != Format::Avro {
            assert!(n >= 40, "{n} {format:?} columns compared");
        }
    }
}

/// The fixture whose value holds a Struct twice: both faces write what prost-reflect writes
/// from the bytes (the Struct's two occurrences merged, as protoc's runtimes read them), not
/// the value's plain JSON with a key twice.
#[test]
fn proto3_json_the_value_cannot_say_is_prost_reflects_in_both_faces() {
    let fallback = root().join("tests/fixtures/protobuf/fallback");
    let case = Case::with(fallback.join("event.pb"), fallback.join("event.proto"));
    let analyses = analyses(&case);
    let [(None, a)] = &analyses[..] else {
        panic!("one payload: {}", analyses.len());
    };
    assert_eq!(a.message.as_deref(), Some("fixture.fallback.Event"));
    let json = a.column(Format::Json).expect("a JSON column");
    assert_eq!(
        std::str::from_utf8(&json.bytes).expect("UTF-8"),
        r#"{"eventName":"checkout","attributes":{"cart":3.0,"coupon":"SPRING","currency":"EUR"},"took":"1.250s","tags":["web","eu"]}"#
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let written = convert(
        &case,
        None,
        a.message.as_deref(),
        Format::Json,
        &dir.path().join("event.json"),
    )
    .expect("converts");
    assert_eq!(written, json.bytes.as_ref());
}
