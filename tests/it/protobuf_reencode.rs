//! Schema-guided decode then encode reproduces real descriptor sets byte for byte: the decoder and
//! the encoder agree with protoc on every field of `google.protobuf.FileDescriptorSet`.

use wirelens::codec::protobuf::schema::Schema;
use wirelens::codec::{decode, encode, DecodeOptions, EncodeOptions, Format};

use crate::common;

#[test]
fn descriptor_sets_re_encode_byte_exactly() {
    let schema = Schema::from_descriptor_set(
        &std::fs::read(common::data("protobuf/descriptor_set.pb")).expect("descriptor set"),
    )
    .expect("loads");
    let message = schema
        .message("google.protobuf.FileDescriptorSet")
        .expect("has FileDescriptorSet");
    for file in [
        "protobuf/descriptor_set.protoc35.pb",
        "protobuf/unittest_descriptor_set.pb",
        "protoscope/testdata/unittest.proto.pb",
    ] {
        let bytes = std::fs::read(common::data(file)).expect("fixture");
        let options = DecodeOptions {
            message: Some(message.clone()),
            ..DecodeOptions::default()
        };
        let doc =
            decode(&bytes, Format::Protobuf, &options).unwrap_or_else(|e| panic!("{file}: {e}"));
        doc.spans.validate(bytes.len()).expect("decoded spans");
        let enc = encode(
            &doc.value,
            Format::Protobuf,
            &EncodeOptions {
                message: Some(message.clone()),
                ..EncodeOptions::default()
            },
        )
        .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(enc.bytes.len(), bytes.len(), "{file}: length");
        assert!(enc.bytes == bytes, "{file}: bytes differ");
        assert_eq!(enc.spans, doc.spans, "{file}: encoder and decoder spans");
    }
}
