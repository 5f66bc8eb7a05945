//! How the encoder writes each well-known type (`google.protobuf.*`) from its JSON form:
//! timestamps, durations, wrappers, `Struct`, `ListValue`, `Value`, field masks and `Any`. What
//! each type is and the text forms it shares with the decoder are in the leaf `dynamic/wkt.rs`;
//! how the decoder reads them is `decode/wkt.rs`.

use prost_reflect::{Kind as PKind, MessageDescriptor};

use super::{
    implicit_varint, kind_name, leaf, len_node, len_prefix, tag, Body, Bytes, Content, Encoder,
    Out, Piece, Trail,
};
use crate::codec::protobuf::dynamic::wkt::{is_wkt_json, parse_duration, snake_case, WellKnown};
use crate::codec::{EncodeError, NoteKind};
use crate::model::{Kind, Segment, Timestamp, Value, WireType};

impl Encoder {
    /// The content of a well-known type from its JSON form.
    pub(super) fn well_known<'v>(
        &mut self,
        wkt: WellKnown,
        v: &'v Value,
        desc: &MessageDescriptor,
        path: &Trail<'_>,
    ) -> Result<Content<'v>, EncodeError> {
        match wkt {
            WellKnown::Timestamp => self.timestamp(v, path),
            WellKnown::Duration => self.duration(v, path),
            WellKnown::Wrapper => self.wrapper(v, desc, path),
            WellKnown::Struct => {
                let entries = self.struct_entries(v, path)?;
                Ok(Content::children(Kind::Map, entries))
            }
            WellKnown::ListValue => {
                let items = self.list_items(v, path)?;
                Ok(Content::children(Kind::Array, items))
            }
            WellKnown::Value => self.json_value(v, path),
            WellKnown::FieldMask => self.field_mask(v, path),
            WellKnown::Any => self.any(v, desc, path),
            // Written as the ordinary (empty) message.
            WellKnown::Empty => self.fields_content(v, desc, path),
        }
    }

    pub(super) fn timestamp<'v>(
        &mut self,
        v: &'v Value,
        path: &Trail<'_>,
    ) -> Result<Content<'v>, EncodeError> {
        let t = match v {
            Value::Timestamp(t) => *t,
            Value::Text(s) => match Timestamp::parse_rfc3339(s) {
                Some(t) => t,
                None => {
                    return Err(self.expected(
                        path,
                        "google.protobuf.Timestamp (RFC 3339 text or a timestamp)",
                        v,
                    ))
                }
            },
            other => {
                return Err(self.expected(
                    path,
                    "google.protobuf.Timestamp (RFC 3339 text or a timestamp)",
                    other,
                ))
            }
        };
        if !(-62_135_596_800..=253_402_300_799).contains(&t.seconds) {
            return Err(self.error(
                path,
                format!(
                    "timestamp {} is outside 0001-01-01..9999-12-31, the range of \
                     google.protobuf.Timestamp",
                    t.to_rfc3339()
                ),
            ));
        }
        let mut bytes = Vec::new();
        implicit_varint(1, t.seconds as u64, &mut bytes);
        implicit_varint(2, u64::from(t.nanos), &mut bytes);
        Ok(leaf(Kind::Timestamp, WireType::Len, bytes))
    }

    pub(super) fn duration<'v>(
        &mut self,
        v: &'v Value,
        path: &Trail<'_>,
    ) -> Result<Content<'v>, EncodeError> {
        let what = "google.protobuf.Duration (text like \"1.5s\")";
        let Some((secs, nanos)) = v.as_str().and_then(parse_duration) else {
            return Err(self.expected(path, what, v));
        };
        let mut bytes = Vec::new();
        implicit_varint(1, secs as u64, &mut bytes);
        implicit_varint(2, i64::from(nanos) as u64, &mut bytes);
        Ok(leaf(Kind::Text, WireType::Len, bytes))
    }

    /// A wrapper (`Int32Value`…) from its inner value: the inner tag is header.
    pub(super) fn wrapper<'v>(
        &mut self,
        v: &'v Value,
        desc: &MessageDescriptor,
        path: &Trail<'_>,
    ) -> Result<Content<'v>, EncodeError> {
        let Some(inner) = desc.get_field(1) else {
            return Err(self.error(path, format!("{} has no field 1", desc.full_name())));
        };
        let Some(c) = self.single(&inner.kind(), v, path, false)? else {
            return Err(self.expected(path, &kind_name(&inner.kind()), v));
        };
        if c.default {
            return Ok(Content {
                prefix: Bytes::new(),
                body: Body::Leaf(Bytes::new()),
                ..c
            });
        }
        let mut prefix = tag(1, c.wire);
        if c.wire == WireType::Len {
            prefix.extend(len_prefix(c.size()));
        }
        prefix.extend(c.prefix);
        Ok(Content {
            kind: c.kind,
            wire: WireType::Len,
            prefix,
            body: c.body,
            default: false,
        })
    }

    /// A `Struct`'s entries: map entries of field 1, keyed by text, valued by `Value`s.
    pub(super) fn struct_entries<'v>(
        &mut self,
        v: &'v Value,
        path: &Trail<'_>,
    ) -> Result<Vec<Piece<'v>>, EncodeError> {
        let Some(entries) = v.as_map() else {
            return Err(self.expected(path, "google.protobuf.Struct (a map)", v));
        };
        let mut order: Vec<usize> = (0..entries.len()).collect();
        if self.canonical {
            order.sort_by(|&a, &b| entries[a].0.as_str().cmp(&entries[b].0.as_str()));
        }
        let mut pieces = Vec::with_capacity(entries.len());
        for i in order {
            let (k, val) = (entries[i].0.untagged(), &entries[i].1);
            let kpath = path.key(k);
            let Value::Text(key) = k else {
                return Err(self.expected(&kpath, "a text key in google.protobuf.Struct", k));
            };
            let seg = self.builder.segment_for_key(k);
            let c = self.json_value(val, &kpath)?;
            let mut key_bytes = Bytes::new();
            if !key.is_empty() {
                key_bytes.extend(tag(1, WireType::Len));
                key_bytes.extend(len_prefix(key.len()));
                key_bytes.extend(key.as_bytes());
            }
            let mut header = tag(2, WireType::Len);
            header.extend(len_prefix(c.size()));
            header.extend(c.prefix);
            let entry_len = key_bytes.len() + header.len() + c.body.size();
            let mut k = tag(1, WireType::Len);
            k.extend(len_prefix(entry_len));
            k.extend(key_bytes);
            pieces.push(Piece::Node(Out::new(
                c.kind,
                seg,
                k,
                header,
                c.body,
                Bytes::new(),
            )));
        }
        Ok(pieces)
    }

    /// A `ListValue`'s items: field 1, each a `Value`.
    pub(super) fn list_items<'v>(
        &mut self,
        v: &'v Value,
        path: &Trail<'_>,
    ) -> Result<Vec<Piece<'v>>, EncodeError> {
        let Some(items) = v.as_array() else {
            return Err(self.expected(path, "google.protobuf.ListValue (an array)", v));
        };
        let mut pieces = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let c = self.json_value(item, &path.index(i))?;
            pieces.push(Piece::Node(len_node(1, Segment::Index(i as u32), c)));
        }
        Ok(pieces)
    }

    /// A `google.protobuf.Value` from any JSON-like value: the oneof member's tag (and length)
    /// is header.
    pub(super) fn json_value<'v>(
        &mut self,
        v: &'v Value,
        path: &Trail<'_>,
    ) -> Result<Content<'v>, EncodeError> {
        let v = v.untagged();
        let (kind, number, wire, body) = match v {
            Value::Null => (
                Kind::Null,
                1,
                WireType::Varint,
                Body::Leaf(Bytes::copy(&[0])),
            ),
            Value::Undefined | Value::Simple(_) => {
                let what = v.summary(20);
                self.notes.add(NoteKind::SimpleAsNull, path.to_path(), || {
                    format!("CBOR {what} has no protobuf equivalent; written as null")
                });
                (
                    Kind::Null,
                    1,
                    WireType::Varint,
                    Body::Leaf(Bytes::copy(&[0])),
                )
            }
            Value::Bool(b) => (
                Kind::Bool,
                4,
                WireType::Varint,
                Body::Leaf(Bytes::copy(&[u8::from(*b)])),
            ),
            Value::Int(_) | Value::BigInt(_) | Value::Float(_) | Value::Decimal(_) => {
                let c = self.float(&PKind::Double, v, path)?;
                (c.kind, 2, WireType::I64, c.body)
            }
            Value::Text(s) => (
                Kind::Text,
                3,
                WireType::Len,
                Body::Leaf(Bytes::Borrowed(s.as_bytes())),
            ),
            Value::Map(_) => {
                let pieces = self.struct_entries(v, path)?;
                (Kind::Map, 5, WireType::Len, Body::children(pieces))
            }
            Value::Array(_) => {
                let pieces = self.list_items(v, path)?;
                (Kind::Array, 6, WireType::Len, Body::children(pieces))
            }
            other => {
                return Err(self.expected(
                    path,
                    "google.protobuf.Value (null, bool, number, text, map or array)",
                    other,
                ))
            }
        };
        let mut prefix = tag(number, wire);
        if wire == WireType::Len {
            prefix.extend(len_prefix(body.size()));
        }
        Ok(Content {
            kind,
            wire: WireType::Len,
            prefix,
            body,
            default: false,
        })
    }

    pub(super) fn field_mask<'v>(
        &mut self,
        v: &'v Value,
        path: &Trail<'_>,
    ) -> Result<Content<'v>, EncodeError> {
        let Some(s) = v.as_str() else {
            return Err(self.expected(path, "google.protobuf.FieldMask (comma-separated text)", v));
        };
        let mut bytes = Vec::new();
        for p in s.split(',').filter(|p| !p.is_empty()) {
            let p = snake_case(p);
            bytes.extend_from_slice(&tag(1, WireType::Len));
            bytes.extend_from_slice(&len_prefix(p.len()));
            bytes.extend_from_slice(p.as_bytes());
        }
        Ok(leaf(Kind::Text, WireType::Len, bytes))
    }

    /// An `Any`: `"@type"` names the packed type; its fields (or `"value"` for a well-known
    /// type, or raw bytes for a type not in the pool) follow.
    pub(super) fn any<'v>(
        &mut self,
        v: &'v Value,
        desc: &MessageDescriptor,
        path: &Trail<'_>,
    ) -> Result<Content<'v>, EncodeError> {
        let Some(entries) = v.as_map() else {
            return Err(self.expected(path, "google.protobuf.Any (a map with \"@type\")", v));
        };
        let Some((type_key, type_value)) =
            entries.iter().find(|(k, _)| k.as_str() == Some("@type"))
        else {
            return Err(self.error(
                path,
                "google.protobuf.Any needs an \"@type\" entry naming the packed type".into(),
            ));
        };
        let tpath = path.key(type_key.untagged());
        let Some(url) = type_value.as_str() else {
            return Err(self.expected(&tpath, "a type URL (text)", type_value));
        };
        let type_name = url.rsplit('/').next().unwrap_or(url);
        let mut pieces = Vec::new();
        let tseg = self.builder.segment_for_key(type_key.untagged());
        pieces.push(Piece::Node(Out::new(
            Kind::Text,
            tseg,
            tag(1, WireType::Len),
            len_prefix(url.len()),
            Body::Leaf(Bytes::Borrowed(url.as_bytes())),
            Bytes::new(),
        )));
        let value_entry = entries.iter().find(|(k, _)| k.as_str() == Some("value"));
        match desc.parent_pool().get_message_by_name(type_name) {
            Some(packed) if is_wkt_json(packed.full_name()) => {
                let Some((vk, vv)) = value_entry else {
                    return Err(self.error(
                        path,
                        format!("google.protobuf.Any of {type_name} needs a \"value\" entry"),
                    ));
                };
                let vk = vk.untagged();
                let c = self.message_content(vv, &packed, &path.key(vk))?;
                let seg = self.builder.segment_for_key(vk);
                if c.size() > 0 {
                    pieces.push(Piece::Node(len_node(2, seg, c)));
                }
            }
            Some(packed) => {
                let inner = self.message_fields(v, &packed, path, true)?;
                let size: usize = inner.iter().map(Piece::size).sum();
                if size > 0 {
                    let mut gap = tag(2, WireType::Len);
                    gap.extend(len_prefix(size));
                    pieces.push(Piece::Gap(gap));
                    pieces.extend(inner);
                }
            }
            None => {
                let Some((vk, vv)) = value_entry else {
                    return Err(self.error(
                        &tpath,
                        format!("type {type_name:?} is not in the schema's descriptor pool"),
                    ));
                };
                let vk = vk.untagged();
                let vpath = path.key(vk);
                let Some(c) = self.single(&PKind::Bytes, vv, &vpath, false)? else {
                    return Err(self.expected(&vpath, "bytes", vv));
                };
                if !c.default {
                    let seg = self.builder.segment_for_key(vk);
                    let header = len_prefix(c.size());
                    pieces.push(Piece::Node(Out::new(
                        c.kind,
                        seg,
                        tag(2, WireType::Len),
                        header,
                        c.body,
                        Bytes::new(),
                    )));
                }
            }
        }
        Ok(Content::children(Kind::Map, pieces))
    }
}
