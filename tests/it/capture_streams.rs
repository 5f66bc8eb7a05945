//! Payloads holding several messages: gRPC-Web (binary and text, with trailers), CBOR sequences,
//! MessagePack streams, varint- and 4-byte-delimited protobuf; and the layer readings that rank
//! the ways of peeling an input. Fixtures are in `tests/fixtures/capture/` (see `COMMANDS.md`);
//! every message must come out as exactly the bytes it was made from.

use wirelens::capture::{peel, peel_readings, Framing, PeelChoice, PeelOptions, Split};
use wirelens::codec::{DecodeOptions, Format};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/fixtures/capture/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("fixture")
}

fn sample(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))).expect("sample")
}

/// The messages of `samples/user-profiles.grpc`, cut by hand at the lengths its frames state
/// (56, 55 and 50 bytes after each 5-byte prefix).
fn grpc_messages() -> Vec<Vec<u8>> {
    let d = sample("user-profiles.grpc");
    vec![d[5..61].to_vec(), d[66..121].to_vec(), d[126..176].to_vec()]
}

fn bodies(input: &[u8]) -> Vec<Vec<u8>> {
    peel(input, &PeelOptions::default())
        .payloads
        .into_iter()
        .map(|p| p.bytes.to_vec())
        .collect()
}

#[test]
fn grpc_web_text_response_gives_each_message_and_the_trailers_as_meta() {
    let peeled = peel(fixture("http-grpc-web-text.http"), &PeelOptions::default());
    assert!(peeled.error.is_none(), "{:?}", peeled.error);
    let got: Vec<Vec<u8>> = peeled.payloads.iter().map(|p| p.bytes.to_vec()).collect();
    assert_eq!(got, grpc_messages());
    let last = &peeled.payloads[2];
    assert_eq!(
        last.provenance(),
        "HTTP/1.1 response → gRPC-Web-text → gRPC frame"
    );
    assert_eq!(last.hint, Some(Format::Protobuf));
    assert_eq!(
        last.meta_value("grpc-web trailers"),
        Some("grpc-status: 0; grpc-message:")
    );
    let frame = last.layers.last().expect("frame layer");
    assert_eq!(
        frame.detail,
        "message 3 of 3, then trailers grpc-status: 0; grpc-message:"
    );
    // Frame spans are in the decoded body: the third frame starts after 61 + 60 bytes.
    assert_eq!((frame.span.start, frame.span.end), (121, 176));
}

#[test]
fn grpc_web_text_pasted_alone_and_binary_grpc_web_bodies() {
    assert_eq!(bodies(&fixture("grpc-web-text.b64")), grpc_messages());
    let pasted = peel(fixture("grpc-web-text.b64"), &PeelOptions::default());
    assert_eq!(
        pasted.payloads[0].provenance(),
        "gRPC-Web-text → gRPC frame"
    );
    let binary = peel(fixture("grpc-web-trailers.bin"), &PeelOptions::default());
    assert_eq!(
        binary
            .payloads
            .iter()
            .map(|p| p.bytes.clone())
            .collect::<Vec<_>>(),
        grpc_messages()
    );
    assert_eq!(binary.payloads[0].provenance(), "gRPC frame");
}

#[test]
fn a_trailers_only_grpc_web_body_is_one_empty_payload_with_the_trailers() {
    let mut input =
        b"HTTP/1.1 200 OK\r\nContent-Type: application/grpc-web+proto\r\nContent-Length: 23\r\n\r\n"
            .to_vec();
    input.extend(b"\x80\x00\x00\x00\x12grpc-status: 5\r\n\r\n");
    let peeled = peel(&input, &PeelOptions::default());
    assert_eq!(peeled.payloads.len(), 1);
    assert!(peeled.payloads[0].bytes.is_empty());
    assert_eq!(
        peeled.payloads[0].provenance(),
        "HTTP/1.1 response → gRPC-Web trailers"
    );
    assert_eq!(peeled.payloads[0].layers[1].detail, "grpc-status: 5");
}

#[test]
fn a_cut_grpc_body_names_the_layer_and_keeps_the_messages_before() {
    let body = sample("user-profiles.grpc");
    let cut = &body[..150];
    let mut input = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/grpc\r\nContent-Length: {}\r\n\r\n",
        cut.len()
    )
    .into_bytes();
    input.extend_from_slice(cut);
    let peeled = peel(&input, &PeelOptions::default());
    let e = peeled.error.expect("an error");
    assert_eq!(e.layer, "gRPC frame");
    assert_eq!(e.offset, 122, "{e}");
    assert!(e.to_string().contains("frame 3"), "{e}");
    assert_eq!(peeled.payloads.len(), 3);
    assert_eq!(peeled.payloads[0].bytes, grpc_messages()[0]);
    assert_eq!(peeled.payloads[1].bytes, grpc_messages()[1]);
    assert_eq!(peeled.payloads[2].bytes, &cut[121..]);
    assert!(peeled.payloads[2].cut.is_some());
}

#[test]
fn a_bad_grpc_web_text_body_names_the_layer_and_offset() {
    let mut input = b"HTTP/1.1 200 OK\r\nContent-Type: application/grpc-web-text\r\n\r\n".to_vec();
    input.extend(b"AAAAAAIIAQ==AA*A");
    let peeled = peel(&input, &PeelOptions::default());
    let e = peeled.error.expect("an error");
    assert_eq!((e.layer.as_str(), e.offset), ("gRPC-Web-text", 14));
    assert_eq!(
        peeled.payloads[0].bytes, b"AAAAAAIIAQ==AA*A",
        "the body is kept"
    );
}

#[test]
fn cbor_sequence_and_msgpack_stream_split_into_their_documents() {
    let cbor = [
        "user-profile.cbor",
        "iot-metrics.cbor",
        "order-graphql.cbor",
    ]
    .map(sample);
    let peeled = peel(fixture("three.cbor-seq"), &PeelOptions::default());
    assert_eq!(
        peeled
            .payloads
            .iter()
            .map(|p| p.bytes.clone())
            .collect::<Vec<_>>(),
        cbor
    );
    let second = &peeled.payloads[1];
    assert_eq!(second.provenance(), "CBOR sequence");
    assert_eq!(second.layers[0].detail, "item 2 of 3");
    assert_eq!(
        (second.layers[0].span.start, second.layers[0].span.end),
        (98, 178)
    );
    assert_eq!(second.hint, Some(Format::Cbor));

    let msgpack = [
        "user-profile.msgpack",
        "iot-metrics.msgpack",
        "edge-cases.msgpack",
    ]
    .map(sample);
    let peeled = peel(fixture("three.msgpack-stream"), &PeelOptions::default());
    assert_eq!(
        peeled
            .payloads
            .iter()
            .map(|p| p.bytes.clone())
            .collect::<Vec<_>>(),
        msgpack
    );
    assert_eq!(peeled.payloads[2].provenance(), "MessagePack sequence");
}

#[test]
fn an_announced_cbor_sequence_splits_scalars_too() {
    let peeled = peel(fixture("http-cbor-seq.http"), &PeelOptions::default());
    assert_eq!(
        peeled
            .payloads
            .iter()
            .map(|p| p.bytes.clone())
            .collect::<Vec<_>>(),
        [
            b"\x01".to_vec(),
            b"\x18\x64".to_vec(),
            sample("iot-metrics.cbor")
        ]
    );
    assert_eq!(
        peeled.payloads[1].provenance(),
        "HTTP/1.1 response → CBOR sequence"
    );
}

#[test]
fn single_values_and_cut_sequences_are_not_split() {
    // A whole sample is one value.
    for name in [
        "transactions-1k.cbor",
        "risk-batch.cbor",
        "transactions-1k.msgpack",
    ] {
        assert_eq!(
            peel(sample(name), &PeelOptions::default()).payloads.len(),
            1,
            "{name}"
        );
    }
    // A sequence cut inside its last item is not taken as a sequence (detection is sure or
    // silent); forcing the framing names the fault and keeps the items before it.
    let seq = fixture("three.cbor-seq");
    let cut = &seq[..seq.len() - 10];
    assert_eq!(peel(cut, &PeelOptions::default()).payloads.len(), 1);
    let forced = peel(
        cut,
        &PeelOptions::choosing(PeelChoice {
            max_layers: None,
            split: Split::Force(Framing::CborSeq),
        }),
    );
    let e = forced.error.expect("error");
    assert_eq!(e.layer, "CBOR sequence");
    assert!(e.offset >= 178 && e.offset <= cut.len(), "{e}");
    assert!(e.message.contains("item 3"), "{e}");
    assert_eq!(forced.payloads.len(), 3);
    assert_eq!(forced.payloads[1].bytes, sample("iot-metrics.cbor"));
    assert_eq!(forced.payloads[2].bytes, &cut[178..]);
}

#[test]
fn delimited_protobuf_streams_split_into_messages() {
    let one = sample("user-profile.pb");
    let peeled = peel(
        fixture("user-profile-x3.pb-varint"),
        &PeelOptions::default(),
    );
    assert_eq!(
        peeled
            .payloads
            .iter()
            .map(|p| p.bytes.clone())
            .collect::<Vec<_>>(),
        vec![one.clone(); 3]
    );
    assert_eq!(peeled.payloads[0].provenance(), "varint-delimited");
    assert_eq!(peeled.payloads[0].hint, Some(Format::Protobuf));
    let peeled = peel(fixture("user-profile-x2.pb-u32"), &PeelOptions::default());
    assert_eq!(
        peeled
            .payloads
            .iter()
            .map(|p| p.bytes.clone())
            .collect::<Vec<_>>(),
        vec![one.clone(); 2]
    );
    assert_eq!(peeled.payloads[1].provenance(), "length-delimited (4-byte)");
    // One message alone is not a stream.
    assert_eq!(bodies(&one), vec![one]);
}

#[test]
fn layer_readings_rank_the_ways_of_peeling() {
    let options = DecodeOptions::default();
    // A CBOR sequence: split beats one value with trailing data.
    let readings = peel_readings(fixture("three.cbor-seq"), &options, None);
    assert_eq!(readings[0].layers(), "CBOR sequence");
    assert_eq!(readings[0].payload_count(), 3);
    assert_eq!(readings[0].format, Some(Format::Cbor));
    let single = readings
        .iter()
        .find(|r| r.payload_count() == 1)
        .expect("the unsplit reading is listed");
    assert!(single.confidence < readings[0].confidence);

    // An HTTP message: its JSON body beats the message text.
    let http = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"id\": 7}";
    let readings = peel_readings(http, &options, None);
    assert_eq!(readings[0].layers(), "HTTP/1.1 response");
    assert_eq!(readings[0].format, Some(Format::Json));
    assert_eq!(readings.len(), 2, "body, raw");
    assert_eq!(readings[1].layers(), "raw bytes");
    assert_eq!(readings[1].peeled.payloads[0].bytes, http);

    // Hex text of a MessagePack map: the bytes beat the text.
    let readings = peel_readings(b"81 a3 6b 65 79 01", &options, None);
    assert_eq!(readings[0].layers(), "hex");
    assert_eq!(readings[0].format, Some(Format::MessagePack));
    assert!(readings[1].confidence < readings[0].confidence);

    // JSON is read as itself: one reading.
    assert_eq!(peel_readings(br#"{"a": [1, 2]}"#, &options, None).len(), 1);
}
