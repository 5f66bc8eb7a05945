//! Protobuf: prost-reflect's `DynamicMessage` with the payload's message type.

use std::hint::black_box;

use prost::Message;
use prost_reflect::DynamicMessage;

use super::{mismatch, Library};
use crate::codec::protobuf::MessageDescriptor;
use crate::profile::bench::Bencher;

/// prost-reflect on `DynamicMessage`.
pub struct Prost {
    message: MessageDescriptor,
    value: DynamicMessage,
    bytes: Vec<u8>,
}

impl Prost {
    pub fn new(pb: &[u8], message: &MessageDescriptor) -> Result<Prost, String> {
        let value = DynamicMessage::decode(message.clone(), pb)
            .map_err(|e| format!("prost-reflect: {e}"))?;
        let bytes = value.encode_to_vec();
        let back = DynamicMessage::decode(message.clone(), &bytes[..])
            .map_err(|e| format!("prost-reflect: {e}"))?;
        if back != value {
            return Err(mismatch(Library::ProstReflect));
        }
        Ok(Prost {
            message: message.clone(),
            value,
            bytes,
        })
    }
}

impl super::Adapter for Prost {
    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    fn encode(&self, b: &mut Bencher<'_>) {
        b.iter(|buf| {
            buf.clear();
            black_box(&self.value).encode(&mut *buf).is_ok()
        });
    }
    fn decode(&self, b: &mut Bencher<'_>) {
        b.iter(|_| DynamicMessage::decode(self.message.clone(), black_box(&self.bytes[..])));
    }
}
