//! The well-known types (`google.protobuf.*`), both directions in one place: which types read
//! and write in their JSON form, how the decoder reads each one's plain bytes as that form
//! ([`Decoder::try_wkt`]) and how the encoder writes that form back (`Encoder::timestamp` and
//! the others), with the text forms both share (durations, field-mask paths).
//!
//! Not here: the ordinary message walk (`decode.rs`, `encode.rs`) and proto3 JSON output of a
//! whole message (`proto3_value.rs` from the decoded value, `proto3_json.rs` through
//! prost-reflect).

use prost_reflect::{Kind as PKind, MessageDescriptor};

use super::decode::{
    default_of, expected_wire, scalar, Attach, Decoder, Failure, Flat, MessageNode, Mode, Wkt,
};
use super::encode::{
    implicit_varint, kind_name, leaf, len_node, len_prefix, tag, Body, Bytes, Content, Encoder,
    Out, Piece, Trail,
};
use super::wkt::{duration_text, is_wkt, is_wkt_json, parse_duration, snake_case, WellKnown};
use crate::codec::{EncodeError, NoteKind};
use crate::model::{Kind, Segment, Span, Timestamp, Value, WireType};

impl Decoder<'_> {
    /// Reads a well-known type in its natural form when its bytes are plain. `Some(value)` when
    /// it was a leaf (already added to the tree); `None` to decode it as a frame (either the
    /// ordinary message, or, for `Any`/`Value` containers, a frame this pushed itself — then
    /// `self.stack` grew and the caller must not push again).
    pub(super) fn try_wkt(
        &mut self,
        desc: &MessageDescriptor,
        node: &MessageNode,
        attach: &Attach,
    ) -> Result<Wkt, Failure> {
        let MessageNode {
            segment,
            key,
            start,
            content,
            limit,
            resume,
            path_seg,
        } = *node;
        let name = desc.full_name();
        if matches!(name, "google.protobuf.Struct" | "google.protobuf.ListValue") {
            return Ok(Wkt::Plain);
        }
        let Some(fields) = self.flat(content, limit) else {
            return Ok(Wkt::Plain);
        };
        let one = |n: u32, w: WireType| -> Option<Option<Flat>> {
            let mut found = None;
            for f in &fields {
                if f.number != n {
                    continue;
                }
                if f.wire != w || found.is_some() {
                    return None;
                }
                found = Some(*f);
            }
            Some(found)
        };
        let only = |allowed: &[u32]| fields.iter().all(|f| allowed.contains(&f.number));
        let bytes = self.bytes;
        let slice = |f: &Flat| bytes.get(f.start..f.end).unwrap_or_default();
        let mut payload = Span::new(content, limit);
        let value = match name {
            "google.protobuf.Timestamp" | "google.protobuf.Duration" => {
                let (Some(s), Some(n)) = (one(1, WireType::Varint), one(2, WireType::Varint))
                else {
                    return Ok(Wkt::Plain);
                };
                if !only(&[1, 2]) {
                    return Ok(Wkt::Plain);
                }
                let seconds = s.map_or(0, |f| f.varint as i64);
                let nanos = n.map_or(0, |f| f.varint as i32);
                if name == "google.protobuf.Timestamp" {
                    // The range proto3 JSON allows: 0001-01-01 to 9999-12-31.
                    if !(0..1_000_000_000).contains(&nanos)
                        || !(-62_135_596_800..=253_402_300_799).contains(&seconds)
                    {
                        return Ok(Wkt::Plain);
                    }
                    Value::Timestamp(Timestamp {
                        seconds,
                        nanos: nanos as u32,
                    })
                } else {
                    if nanos.unsigned_abs() >= 1_000_000_000
                        || (seconds > 0 && nanos < 0)
                        || (seconds < 0 && nanos > 0)
                    {
                        return Ok(Wkt::Plain);
                    }
                    Value::Text(duration_text(seconds, nanos).into())
                }
            }
            "google.protobuf.FieldMask" => {
                if !only(&[1]) || fields.iter().any(|f| f.wire != WireType::Len) {
                    return Ok(Wkt::Plain);
                }
                let mut paths = Vec::new();
                for f in &fields {
                    match std::str::from_utf8(slice(f)) {
                        Ok(s) if !s.contains(',') => paths.push(s.to_string()),
                        _ => return Ok(Wkt::Plain),
                    }
                }
                Value::Text(paths.join(",").into())
            }
            "google.protobuf.Empty" => {
                if !fields.is_empty() {
                    return Ok(Wkt::Plain);
                }
                Value::Map(Vec::new())
            }
            "google.protobuf.Value" => {
                if fields.len() > 1 {
                    return Ok(Wkt::Plain);
                }
                let Some(f) = fields.first() else {
                    return Ok(Wkt::Plain);
                };
                payload = Span::new(f.start, f.end);
                match (f.number, f.wire) {
                    (1, WireType::Varint) => Value::Null,
                    (2, WireType::I64) => scalar(&PKind::Double, 0, slice(f)).unwrap_or_default().0,
                    (3, WireType::Len) => match std::str::from_utf8(slice(f)) {
                        Ok(s) => Value::text(s),
                        Err(_) => return Ok(Wkt::Plain),
                    },
                    (4, WireType::Varint) => Value::Bool(f.varint != 0),
                    (5 | 6, WireType::Len) => {
                        let Some(inner) = desc
                            .get_field(f.number)
                            .and_then(|fd| fd.kind().as_message().cloned())
                        else {
                            return Ok(Wkt::Plain);
                        };
                        // The Value node is the struct or list node: its header runs to the
                        // inner message's bytes.
                        let inner_node = MessageNode {
                            content: f.start,
                            limit: f.end,
                            ..*node
                        };
                        self.begin_message(&inner, inner_node, attach.clone())?;
                        return Ok(Wkt::Pushed);
                    }
                    _ => return Ok(Wkt::Plain),
                }
            }
            "google.protobuf.Any" => {
                let (Some(Some(t)), Some(v)) = (one(1, WireType::Len), one(2, WireType::Len))
                else {
                    return Ok(Wkt::Plain);
                };
                if !only(&[1, 2]) || v.is_some_and(|v| v.tag_start < t.tag_start) {
                    return Ok(Wkt::Plain);
                }
                let Ok(type_url) = std::str::from_utf8(slice(&t)) else {
                    return Ok(Wkt::Plain);
                };
                let type_name = type_url.rsplit('/').next().unwrap_or_default();
                let resolved = desc
                    .parent_pool()
                    .get_message_by_name(type_name)
                    .filter(|m| !is_wkt(m.full_name()));
                self.check_depth(start, path_seg)?;
                self.builder.open(Kind::Map, segment, key, start, content);
                let at_type = self.builder.key("@type");
                let type_tag = Span::new(t.tag_start, self.len_start(t.tag_start));
                self.builder.leaf(
                    Kind::Text,
                    at_type,
                    Some(type_tag),
                    Span::new(self.len_start(t.tag_start), t.end),
                    t.start,
                    Span::new(t.start, t.end),
                );
                let mut entries = vec![(Value::text("@type"), Value::text(type_url))];
                match (resolved, v) {
                    (Some(m), v) => {
                        let (vs, ve) = v.map_or((t.end, t.end), |v| (v.start, v.end));
                        let fields = self.fields_of(&m);
                        self.push_frame(fields, ve, resume, None, Mode::Message, attach.clone());
                        self.entries.extend(entries);
                        self.pos = vs;
                        return Ok(Wkt::Pushed);
                    }
                    (None, v) => {
                        if let Some(v) = v {
                            let seg = self.builder.key("value");
                            let after_tag = self.len_start(v.tag_start);
                            self.builder.leaf(
                                Kind::Bytes,
                                seg,
                                Some(Span::new(v.tag_start, after_tag)),
                                Span::new(after_tag, v.end),
                                v.start,
                                Span::new(v.start, v.end),
                            );
                            entries.push((Value::text("value"), Value::Bytes(slice(&v).to_vec())));
                        }
                        self.builder.close(limit, resume);
                        self.stats.known += entries.len();
                        return Ok(Wkt::Leaf(Value::Map(entries)));
                    }
                }
            }
            _ => {
                // Wrappers: field 1 of the wrapped type, or absent (the default).
                let Some(fd) = desc.get_field(1) else {
                    return Ok(Wkt::Plain);
                };
                let kind = fd.kind();
                let Some(f) = one(1, expected_wire(&kind, false)) else {
                    return Ok(Wkt::Plain);
                };
                if !only(&[1]) {
                    return Ok(Wkt::Plain);
                }
                match f {
                    None => {
                        payload = Span::empty(limit);
                        default_of(&kind)
                    }
                    Some(f) => {
                        payload = Span::new(f.start, f.end);
                        match scalar(&kind, f.varint, slice(&f)) {
                            Ok((v, _)) => v,
                            Err(_) => return Ok(Wkt::Plain),
                        }
                    }
                }
            }
        };
        self.stats.known += 1;
        let header_end = payload.start.max(content);
        self.builder.leaf(
            value.kind(),
            segment,
            key,
            Span::new(start, resume),
            header_end,
            payload,
        );
        Ok(Wkt::Leaf(value))
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_proto3_json_text() {
        assert_eq!(duration_text(1, 500_000_000), "1.5s");
        assert_eq!(duration_text(0, -1_000), "-0.000001s");
        assert_eq!(duration_text(-3, 0), "-3s");
        assert_eq!(duration_text(0, 1), "0.000000001s");
    }

    #[test]
    fn durations_and_masks_from_text() {
        assert_eq!(parse_duration("1.5s"), Some((1, 500_000_000)));
        assert_eq!(parse_duration("-0.000000001s"), Some((0, -1)));
        assert_eq!(parse_duration("3s"), Some((3, 0)));
        assert_eq!(parse_duration("1.s"), None);
        assert_eq!(parse_duration("1.5"), None);
        assert_eq!(parse_duration("1.0000000001s"), None);
        assert_eq!(snake_case("fooBar.bazQux"), "foo_bar.baz_qux");
    }
}
