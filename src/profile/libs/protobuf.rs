//! Protobuf: prost-reflect's `DynamicMessage` with the payload's message type.

use std::hint::black_box;

use prost::Message;
use prost_reflect::DynamicMessage;

use super::{timed, Held, Library, PrepareError, Warmed};
use crate::codec::protobuf::MessageDescriptor;
use crate::profile::bench::Bencher;

/// prost-reflect on `DynamicMessage`. Not a [`super::Codec`]: it reads with the payload's
/// message type, and its round trip cannot be checked by bytes, since a map field is a
/// `HashMap` whose entries each value writes in its own order. When its bytes differ from
/// wirelens', the value they decode to is compared with the one prepared, once, here.
pub struct Prost {
    message: MessageDescriptor,
    value: Held<DynamicMessage>,
    bytes: Vec<u8>,
    warmed: Warmed,
}

impl Prost {
    pub fn new(pb: &[u8], message: &MessageDescriptor) -> Result<Prost, PrepareError> {
        let failed = |e| PrepareError::failed(Library::ProstReflect, e);
        let (value, decode) = timed(|| DynamicMessage::decode(message.clone(), pb));
        let value = value.map_err(failed)?;
        let (bytes, encode) = timed(|| value.encode_to_vec());
        let warmed = Warmed {
            encode: Some(encode),
            decode: (bytes == pb).then_some(decode),
        };
        if bytes != pb {
            let back = DynamicMessage::decode(message.clone(), &bytes[..]).map_err(failed)?;
            if back != value {
                return Err(PrepareError::Mismatch(Library::ProstReflect));
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
