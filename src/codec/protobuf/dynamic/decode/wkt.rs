//! How the decoder reads each well-known type (`google.protobuf.*`) in its natural form when its
//! bytes are plain: a timestamp, a duration's text, a field mask's paths, a wrapper's inner
//! value, a `Value`'s member and an `Any`'s packed message. Anything else reads as the ordinary
//! message, so nothing is lost. What each type is and the text forms it shares with the encoder
//! are in the leaf `dynamic/wkt.rs`; how the encoder writes them is `encode/wkt.rs`.

use prost_reflect::{Kind as PKind, MessageDescriptor};

use super::{
    default_of, expected_wire, scalar, Attach, Decoder, Failure, Flat, MessageNode, Mode, Wkt,
};
use crate::codec::protobuf::dynamic::wkt::{duration_text, is_wkt, WellKnown};
use crate::model::{Kind, Span, Timestamp, Value, WireType};

/// A well-known type's fields read flat, with the bytes they point into.
struct Flats<'f> {
    fields: &'f [Flat],
    bytes: &'f [u8],
}

impl Flats<'_> {
    /// Field `n` if it occurs at most once, with wire type `w`: `None` when it does not fit,
    /// `Some(None)` when it is absent.
    fn one(&self, n: u32, w: WireType) -> Option<Option<Flat>> {
        let mut found = None;
        for f in self.fields {
            if f.number != n {
                continue;
            }
            if f.wire != w || found.is_some() {
                return None;
            }
            found = Some(*f);
        }
        Some(found)
    }

    /// Whether every field is numbered one of `allowed`.
    fn only(&self, allowed: &[u32]) -> bool {
        self.fields.iter().all(|f| allowed.contains(&f.number))
    }

    /// The value bytes of `f`.
    fn slice(&self, f: &Flat) -> &[u8] {
        self.bytes.get(f.start..f.end).unwrap_or_default()
    }
}

/// The seconds and nanos of a `Timestamp` or `Duration` whose bytes are plain (fields 1 and 2,
/// varints, at most once each, nothing else).
fn seconds_and_nanos(flats: &Flats<'_>) -> Option<(i64, i32)> {
    let (Some(s), Some(n)) = (
        flats.one(1, WireType::Varint),
        flats.one(2, WireType::Varint),
    ) else {
        return None;
    };
    if !flats.only(&[1, 2]) {
        return None;
    }
    Some((
        s.map_or(0, |f| f.varint as i64),
        n.map_or(0, |f| f.varint as i32),
    ))
}

/// A `Timestamp` in the range proto3 JSON allows: 0001-01-01 to 9999-12-31.
fn timestamp(flats: &Flats<'_>) -> Option<Value> {
    let (seconds, nanos) = seconds_and_nanos(flats)?;
    if !(0..1_000_000_000).contains(&nanos)
        || !(-62_135_596_800..=253_402_300_799).contains(&seconds)
    {
        return None;
    }
    Some(Value::Timestamp(Timestamp {
        seconds,
        nanos: nanos as u32,
    }))
}

/// A `Duration` as its proto3 JSON text, when its nanos are in range and of its seconds' sign.
fn duration(flats: &Flats<'_>) -> Option<Value> {
    let (seconds, nanos) = seconds_and_nanos(flats)?;
    if nanos.unsigned_abs() >= 1_000_000_000
        || (seconds > 0 && nanos < 0)
        || (seconds < 0 && nanos > 0)
    {
        return None;
    }
    Some(Value::Text(duration_text(seconds, nanos).into()))
}

/// A `FieldMask`'s paths as written, joined by commas (none may hold a comma).
fn field_mask(flats: &Flats<'_>) -> Option<Value> {
    if !flats.only(&[1]) || flats.fields.iter().any(|f| f.wire != WireType::Len) {
        return None;
    }
    let mut paths = Vec::new();
    for f in flats.fields {
        match std::str::from_utf8(flats.slice(f)) {
            Ok(s) if !s.contains(',') => paths.push(s.to_string()),
            _ => return None,
        }
    }
    Some(Value::Text(paths.join(",").into()))
}

/// A wrapper (`Int32Value`…): field 1 of the wrapped type, or absent (the default, its payload
/// empty at `limit`); with the bytes that hold it.
fn wrapper(desc: &MessageDescriptor, flats: &Flats<'_>, limit: usize) -> Option<(Value, Span)> {
    let kind = desc.get_field(1)?.kind();
    let f = flats.one(1, expected_wire(&kind, false))?;
    if !flats.only(&[1]) {
        return None;
    }
    match f {
        None => Some((default_of(&kind), Span::empty(limit))),
        Some(f) => {
            let (v, _) = scalar(&kind, f.varint, flats.slice(&f)).ok()?;
            Some((v, Span::new(f.start, f.end)))
        }
    }
}

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
        let Some(wkt) = WellKnown::of(desc.full_name()) else {
            return Ok(Wkt::Plain);
        };
        if matches!(wkt, WellKnown::Struct | WellKnown::ListValue) {
            return Ok(Wkt::Plain);
        }
        let Some(fields) = self.flat(node.content, node.limit) else {
            return Ok(Wkt::Plain);
        };
        let flats = Flats {
            fields: &fields,
            bytes: self.bytes,
        };
        let whole = |v: Option<Value>| v.map(|v| (v, Span::new(node.content, node.limit)));
        let read = match wkt {
            WellKnown::Timestamp => whole(timestamp(&flats)),
            WellKnown::Duration => whole(duration(&flats)),
            WellKnown::FieldMask => whole(field_mask(&flats)),
            WellKnown::Empty => whole(fields.is_empty().then(|| Value::Map(Vec::new()))),
            WellKnown::Wrapper => wrapper(desc, &flats, node.limit),
            WellKnown::Value => return self.wkt_value(desc, &flats, node, attach),
            WellKnown::Any => return self.wkt_any(desc, &flats, node, attach),
            WellKnown::Struct | WellKnown::ListValue => None,
        };
        Ok(match read {
            Some((value, payload)) => self.wkt_leaf(node, value, payload),
            None => Wkt::Plain,
        })
    }

    /// Adds a well-known type read as one leaf: the node's bytes, `payload` the part that holds
    /// the value.
    fn wkt_leaf(&mut self, node: &MessageNode, value: Value, payload: Span) -> Wkt {
        self.stats.known += 1;
        let header_end = payload.start.max(node.content);
        self.builder.leaf(
            value.kind(),
            node.segment,
            node.key,
            Span::new(node.start, node.resume),
            header_end,
            payload,
        );
        Wkt::Leaf(value)
    }

    /// A `google.protobuf.Value` of exactly one member: null, a number, text or a bool is a
    /// leaf; a struct or list pushes its frame.
    fn wkt_value(
        &mut self,
        desc: &MessageDescriptor,
        flats: &Flats<'_>,
        node: &MessageNode,
        attach: &Attach,
    ) -> Result<Wkt, Failure> {
        let &[f] = flats.fields else {
            return Ok(Wkt::Plain);
        };
        let value = match (f.number, f.wire) {
            (1, WireType::Varint) => Value::Null,
            (2, WireType::I64) => {
                scalar(&PKind::Double, 0, flats.slice(&f))
                    .unwrap_or_default()
                    .0
            }
            (3, WireType::Len) => match std::str::from_utf8(flats.slice(&f)) {
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
                // The Value node is the struct or list node: its header runs to the inner
                // message's bytes.
                let inner_node = MessageNode {
                    content: f.start,
                    limit: f.end,
                    ..*node
                };
                self.begin_message(&inner, inner_node, attach.clone())?;
                return Ok(Wkt::Pushed);
            }
            _ => return Ok(Wkt::Plain),
        };
        Ok(self.wkt_leaf(node, value, Span::new(f.start, f.end)))
    }

    /// An `Any` whose type URL comes first: a map with `"@type"`, then the packed message's
    /// fields (a frame this pushes) when the pool has its type and it is not well-known, else
    /// the `"value"` bytes.
    fn wkt_any(
        &mut self,
        desc: &MessageDescriptor,
        flats: &Flats<'_>,
        node: &MessageNode,
        attach: &Attach,
    ) -> Result<Wkt, Failure> {
        let (Some(Some(t)), Some(v)) = (flats.one(1, WireType::Len), flats.one(2, WireType::Len))
        else {
            return Ok(Wkt::Plain);
        };
        if !flats.only(&[1, 2]) || v.is_some_and(|v| v.tag_start < t.tag_start) {
            return Ok(Wkt::Plain);
        }
        let Ok(type_url) = std::str::from_utf8(flats.slice(&t)) else {
            return Ok(Wkt::Plain);
        };
        let type_name = type_url.rsplit('/').next().unwrap_or_default();
        let resolved = desc
            .parent_pool()
            .get_message_by_name(type_name)
            .filter(|m| !is_wkt(m.full_name()));
        self.check_depth(node.start, node.path_seg)?;
        self.builder
            .open(Kind::Map, node.segment, node.key, node.start, node.content);
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
        let Some(m) = resolved else {
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
                entries.push((Value::text("value"), Value::Bytes(flats.slice(&v).to_vec())));
            }
            self.builder.close(node.limit, node.resume);
            self.stats.known += entries.len();
            return Ok(Wkt::Leaf(Value::Map(entries)));
        };
        let (vs, ve) = v.map_or((t.end, t.end), |v| (v.start, v.end));
        let fields = self.fields_of(&m);
        self.push_frame(fields, ve, node.resume, None, Mode::Message, attach.clone());
        self.entries.extend(entries);
        self.pos = vs;
        Ok(Wkt::Pushed)
    }
}
