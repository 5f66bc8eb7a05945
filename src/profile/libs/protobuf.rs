//! Protobuf: prost-reflect's `DynamicMessage` with the payload's message type.

use std::hint::black_box;

use prost::Message;
use prost_reflect::DynamicMessage;

use super::{mismatch, timed, Held, Library, Warmed};
use crate::codec::protobuf::MessageDescriptor;
use crate::profile::bench::Bencher;

/// prost-reflect on `DynamicMessage`.
pub struct Prost {
    message: MessageDescriptor,
    value: Held<DynamicMessage>,
    bytes: Vec<u8>,
    warmed: Warmed,
}

impl Prost {
    pub fn new(pb: &[u8], message: &MessageDescriptor) -> Result<Prost, String> {
        let (value, decode) = timed(|| DynamicMessage::decode(message.clone(), pb));
        let value = value.map_err(|e| format!("prost-reflect: {e}"))?;
        let (bytes, encode) = timed(|| value.encode_to_vec());
        let warmed = Warmed {
            encode: Some(encode),
            decode: (bytes == pb).then_some(decode),
        };
        if bytes != pb {
            let back = DynamicMessage::decode(message.clone(), &bytes[..])
                .map_err(|e| format!("prost-reflect: {e}"))?;
            if back != value {
                return Err(mismatch(Library::ProstReflect));
            }
        }
        Ok(Prost {
            message: message.clone(),
            value: Held::new(value),
            bytes,
            warmed,
        })
    }
}

impl super::Adapter for Prost {
    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    fn encode(&self, b: &mut Bencher<'_>) {
        self.value.with(b, |b, value| {
            b.iter(|buf| {
                buf.clear();
                black_box(value).encode(&mut *buf).is_ok()
            })
        });
    }
    fn decode(&self, b: &mut Bencher<'_>) {
        b.iter(|_| DynamicMessage::decode(self.message.clone(), black_box(&self.bytes[..])));
    }
    fn release_value(&self) {
        self.value.release();
    }
    fn warmed(&self) -> Warmed {
        self.warmed
    }
}
