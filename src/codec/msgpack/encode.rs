//! The MessagePack encoder: smallest encodings, spans, fidelity notes. See the parent module docs.

use std::collections::HashSet;

use super::{epoch_float, key_path_segment, parse_timestamp, timestamp_data, TIMESTAMP_EXT};
use crate::codec::{raw_field_note, Depth, Spans, Step, Stop};
use crate::codec::{EncodeError, EncodeOptions, Encoded, FloatPolicy, Format, NoteKind, Notes};
use crate::model::{
    format_float, Float, FloatWidth, Kind, Path, Segment, Span, SpanTreeBuilder, Timestamp, Value,
};

/// Encodes `value` as MessagePack, with the spans of every node and notes for what MessagePack
/// cannot say.
///
/// # Errors
/// An [`EncodeError`] when a string, byte string, ext, array or map is longer than MessagePack's
/// 2^32 − 1 limit.
pub fn encode(value: &Value, options: &EncodeOptions) -> Result<Encoded, EncodeError> {
    encode_with(value, options, Spans::On, Depth::ANY)
        .map(|(encoded, _)| encoded)
        .map_err(|stop| stop.unbounded(Format::MessagePack))
}

/// Encodes `value`, with the spans of the output unless `spans` is [`Spans::Off`]. Without spans, the encoder stops
/// recording at the first note or error and the flag returned is `false`: the caller encodes
/// again with spans (notes and errors are placed by the paths the spans give). Nesting deeper
/// than `depth` stops it with [`Stop::Deep`].
pub(crate) fn encode_with(
    value: &Value,
    options: &EncodeOptions,
    spans: Spans<'_>,
    depth: Depth,
) -> Result<(Encoded, bool), Stop> {
    let mut enc = Encoder {
        out: Vec::new(),
        builder: spans.builder(value),
        notes: Notes::new(),
        canonical: options.canonical,
        floats: if options.canonical {
            FloatPolicy::Shortest
        } else {
            options.floats
        },
        muted: false,
        spans: spans.on(),
        bailed: false,
        depth: 0,
        max_depth: depth.0,
        deep: false,
    };
    let result = enc.value(
        value,
        Slot::Node {
            segment: Segment::Root,
            key: None,
            step: None,
        },
    );
    if enc.deep {
        return Err(Stop::Deep);
    }
    if enc.bailed || (!spans.on() && result.is_err()) {
        return Ok((Encoded::empty(Format::MessagePack), false));
    }
    result?;
    Ok((
        Encoded {
            format: Format::MessagePack,
            bytes: enc.out,
            spans: spans.finish(enc.builder),
            notes: enc.notes.into_vec(),
        },
        true,
    ))
}

/// How the value being written is placed.
#[derive(Clone)]
enum Slot<'v> {
    /// It gets a node: its segment, the bytes of its map key, and how its parent addresses it
    /// (`None` for the root).
    Node {
        segment: Segment,
        key: Option<Span>,
        step: Option<Step<'v>>,
    },
    /// It is (part of) a map key: no node. Notes go to `path`, the entry's path.
    Key { path: Path },
}

struct Encoder {
    out: Vec<u8>,
    builder: SpanTreeBuilder,
    notes: Notes,
    canonical: bool,
    floats: FloatPolicy,
    /// Set while keys are encoded only to sort them, so their notes are not counted twice.
    muted: bool,
    /// Whether nodes are recorded; without them there are no paths for notes or errors.
    spans: bool,
    /// Set (without spans) at the first note: the result is to be thrown away.
    bailed: bool,
    /// Containers and tags open.
    depth: usize,
    /// How many may be open before the encoder stops ([`Depth`]).
    max_depth: usize,
    /// Set when it stopped for that: the result is [`Stop::Deep`].
    deep: bool,
}

/// What was written for a scalar: the node kind, the header end and the payload start.
struct Written {
    kind: Kind,
    header_end: usize,
    payload_start: usize,
}

/// Writes a marker byte followed by a big-endian length in `n` bytes.
#[inline]
pub(super) fn put_head(out: &mut Vec<u8>, marker: u8, n: usize, len: u64) {
    out.push(marker);
    out.extend_from_slice(&len.to_be_bytes()[8 - n..]);
}

/// Writes a non-negative integer in its shortest form: a positive fixint, or `uint 8` … `uint 64`.
#[inline]
pub(super) fn put_uint(out: &mut Vec<u8>, u: u64) {
    match u {
        0..=0x7f => out.push(u as u8),
        0x80..=0xff => put_head(out, 0xcc, 1, u),
        0x100..=0xffff => put_head(out, 0xcd, 2, u),
        0x1_0000..=0xffff_ffff => put_head(out, 0xce, 4, u),
        _ => put_head(out, 0xcf, 8, u),
    }
}

/// Writes a negative integer in its shortest form: a negative fixint, or `int 8` … `int 64`.
#[inline]
pub(super) fn put_sint(out: &mut Vec<u8>, i: i64) {
    let bits = i as u64;
    if i >= -32 {
        out.push(i as u8);
    } else if i >= i64::from(i8::MIN) {
        put_head(out, 0xd0, 1, bits);
    } else if i >= i64::from(i16::MIN) {
        put_head(out, 0xd1, 2, bits);
    } else if i >= i64::from(i32::MIN) {
        put_head(out, 0xd2, 4, bits);
    } else {
        put_head(out, 0xd3, 8, bits);
    }
}

impl Encoder {
    /// The path of the value in `slot`.
    fn path(&self, slot: &Slot<'_>) -> Path {
        match slot {
            Slot::Node { step, .. } => {
                let mut p = self.builder.current_path();
                if let Some(step) = step {
                    p.push(step.segment());
                }
                p
            }
            Slot::Key { path } => path.clone(),
        }
    }

    fn note(&mut self, kind: NoteKind, slot: &Slot<'_>, message: impl FnOnce() -> String) {
        if !self.spans {
            self.bailed = true;
        } else if !self.muted {
            let path = self.path(slot);
            self.notes.add(kind, path, message);
        }
    }

    fn too_long(&self, slot: &Slot<'_>, what: &str, len: usize) -> EncodeError {
        EncodeError {
            format: Format::MessagePack,
            path: self.path(slot),
            message: format!("{what} of {len} is longer than MessagePack's limit of 4294967295"),
        }
    }

    /// Writes a marker byte followed by a big-endian length in `n` bytes.
    fn head(&mut self, marker: u8, n: usize, len: u64) {
        put_head(&mut self.out, marker, n, len);
    }

    /// Writes any value; containers recurse.
    fn value<'v>(&mut self, v: &'v Value, slot: Slot<'v>) -> Result<(), EncodeError> {
        match v {
            Value::Array(_) | Value::Map(_) | Value::Tag(..) => {
                self.depth += 1;
                if self.depth > self.max_depth {
                    return Err(crate::codec::stop_deep(&mut self.deep, Format::MessagePack));
                }
                let r = match v {
                    Value::Array(items) => self.array(items, slot),
                    Value::Map(entries) => self.map(entries, slot),
                    Value::Tag(tag, inner) => self.tag(*tag, inner, slot),
                    _ => Ok(()),
                };
                self.depth -= 1;
                r
            }
            scalar => {
                let start = self.out.len();
                let w = self.scalar(scalar, &slot)?;
                if let (Slot::Node { segment, key, .. }, true) = (slot, self.spans) {
                    let end = self.out.len();
                    self.builder.leaf(
                        w.kind,
                        segment,
                        key,
                        Span::new(start, end),
                        w.header_end,
                        Span::new(w.payload_start, end),
                    );
                }
                Ok(())
            }
        }
    }

    /// A CBOR tag: date-times become timestamps, anything else is written without its tag.
    fn tag<'v>(&mut self, tag: u64, inner: &'v Value, slot: Slot<'v>) -> Result<(), EncodeError> {
        let ts = match (tag, inner) {
            (0, Value::Text(s)) => Timestamp::parse_rfc3339(s),
            (1, Value::Int(n)) => i64::try_from(*n)
                .ok()
                .map(|seconds| Timestamp { seconds, nanos: 0 }),
            (1, Value::Float(f)) => epoch_float(f.value),
            _ => None,
        };
        match ts {
            Some(ts) => self.value(&Value::Timestamp(ts), slot),
            None => {
                self.note(NoteKind::TagDropped, &slot, || {
                    format!(
                        "CBOR tag {tag} has no MessagePack equivalent; the tagged value {} is written without it",
                        inner.summary(40)
                    )
                });
                self.value(inner, slot)
            }
        }
    }

    fn array<'v>(&mut self, items: &'v [Value], slot: Slot<'v>) -> Result<(), EncodeError> {
        let start = self.out.len();
        let len = items.len();
        match len {
            0..=15 => self.out.push(0x90 | len as u8),
            16..=0xffff => self.head(0xdc, 2, len as u64),
            _ if u32::try_from(len).is_ok() => self.head(0xdd, 4, len as u64),
            _ => return Err(self.too_long(&slot, "an array", len)),
        }
        let node = self.open(Kind::Array, &slot, start);
        for (i, item) in items.iter().enumerate() {
            let child = self.child_slot(&slot, node, Segment::Index(i as u32), Step::Index(i));
            self.value(item, child)?;
        }
        if node && self.spans {
            let end = self.out.len();
            self.builder.close(end, end);
        }
        Ok(())
    }

    fn map<'v>(
        &mut self,
        entries: &'v [(Value, Value)],
        slot: Slot<'v>,
    ) -> Result<(), EncodeError> {
        let start = self.out.len();
        let len = entries.len();
        match len {
            0..=15 => self.out.push(0x80 | len as u8),
            16..=0xffff => self.head(0xde, 2, len as u64),
            _ if u32::try_from(len).is_ok() => self.head(0xdf, 4, len as u64),
            _ => return Err(self.too_long(&slot, "a map", len)),
        }
        let node = self.open(Kind::Map, &slot, start);
        let mut key_bytes: Vec<Vec<u8>> = Vec::new();
        // The entry at each position: sorted when canonical, else in order (no list made).
        let order: Option<Vec<usize>> = if self.canonical {
            Some(self.canonical_order(entries, &slot, &mut key_bytes)?)
        } else {
            None
        };
        let at = |position: usize| match &order {
            Some(order) => order.get(position).copied(),
            None => Some(position),
        };
        // Text keys repeat exactly when their text does: found up front, without their bytes.
        // Other keys are compared by their bytes as they are written: small maps in place, larger
        // ones through a set.
        let all_text = entries.iter().all(|(k, _)| matches!(k, Value::Text(_)));
        let text_repeats = if all_text {
            let text = |i: usize| match at(i).and_then(|e| entries.get(e)) {
                Some((Value::Text(s), _)) => s.as_bytes(),
                _ => &[],
            };
            crate::codec::repeats::repeated(len, text)
        } else {
            Vec::new()
        };
        let mut next_repeat = text_repeats.iter().copied().peekable();
        let mut seen: HashSet<Vec<u8>> = HashSet::new();
        let mut small: Vec<Span> = Vec::new();
        for position in 0..len {
            let Some(i) = at(position) else {
                continue;
            };
            let Some((k, v)) = entries.get(i) else {
                continue;
            };
            let key_start = self.out.len();
            match (k, key_bytes.get(i)) {
                (_, Some(bytes)) => self.out.extend_from_slice(bytes),
                // A text key has no note to give and fits (the map does), so its entry path,
                // which costs a walk up the tree, is not built.
                (Value::Text(s), None) if u32::try_from(s.len()).is_ok() => {
                    let root = Slot::Key { path: Path::root() };
                    self.text(s.as_bytes(), &root)?;
                }
                (_, None) => {
                    let entry_path = self.path(&slot).child(key_path_segment(k));
                    self.value(k, Slot::Key { path: entry_path })?;
                }
            }
            let key_span = Span::new(key_start, self.out.len());
            // Equal keys encode to equal bytes, and keys that differ in the value but not in the
            // bytes (nil from null and undefined) repeat for every reader too.
            if all_text && next_repeat.next_if_eq(&position).is_some() {
                self.duplicate_key(&slot, k);
            }
            if !all_text && self.key_seen(key_span, len, &mut small, &mut seen) {
                self.duplicate_key(&slot, k);
            }
            let child = self.entry_slot(&slot, node, k, key_span);
            self.value(v, child)?;
        }
        if node && self.spans {
            let end = self.out.len();
            self.builder.close(end, end);
        }
        Ok(())
    }

    /// Canonical order of a map's entries: the keys encoded once (muted) to sort by their
    /// bytes, kept in `key_bytes` for writing when this is itself a muted pass.
    ///
    /// Writing the keys again gives their notes; inside a muted pass (a key of a key) there are
    /// none to give, so the bytes are reused, or map keys nested in map keys would cost twice
    /// per level.
    #[inline]
    fn canonical_order<'v>(
        &mut self,
        entries: &'v [(Value, Value)],
        slot: &Slot<'v>,
        key_bytes: &mut Vec<Vec<u8>>,
    ) -> Result<Vec<usize>, EncodeError> {
        let was_muted = self.muted;
        self.muted = true;
        for (k, _) in entries {
            let at = self.out.len();
            let path = self.path(slot).child(key_path_segment(k));
            self.value(k, Slot::Key { path })?;
            key_bytes.push(self.out.split_off(at));
        }
        self.muted = was_muted;
        let mut order: Vec<usize> = (0..entries.len()).collect();
        // Stable: entries with equal keys keep their order.
        order.sort_by(|&a, &b| key_bytes.get(a).cmp(&key_bytes.get(b)));
        if !self.muted {
            key_bytes.clear();
        }
        Ok(order)
    }

    /// Whether the key just written at `key_span` repeats one written before in this map of
    /// `len` entries: small maps compare in place (`small`), larger ones through `seen`.
    #[inline]
    fn key_seen(
        &self,
        key_span: Span,
        len: usize,
        small: &mut Vec<Span>,
        seen: &mut HashSet<Vec<u8>>,
    ) -> bool {
        let Some(key_bytes) = self.out.get(key_span.start..) else {
            return false;
        };
        if len <= 16 {
            let out = &self.out;
            let again = small.iter().any(|s| out.get(s.range()) == Some(key_bytes));
            small.push(key_span);
            again
        } else {
            !seen.insert(key_bytes.to_vec())
        }
    }

    /// Notes that map key `k` appears more than once.
    #[cold]
    fn duplicate_key(&mut self, slot: &Slot<'_>, k: &Value) {
        self.note(NoteKind::DuplicateKey, slot, || {
            format!(
                "key {} appears more than once in this map; every entry is written, most readers keep only one",
                k.summary(40)
            )
        });
    }

    /// The slot of the value of map entry `k` (its key written at `key_span`), in a map that has
    /// a node or is (part of) a key.
    #[inline]
    fn entry_slot<'v>(
        &mut self,
        slot: &Slot<'v>,
        node: bool,
        k: &'v Value,
        key_span: Span,
    ) -> Slot<'v> {
        if node {
            let segment = if self.spans {
                self.builder.segment_for_key(k)
            } else {
                Segment::Root
            };
            Slot::Node {
                segment,
                key: Some(key_span),
                step: Some(Step::Key(k)),
            }
        } else {
            Slot::Key {
                path: self.path(slot).child(key_path_segment(k)),
            }
        }
    }

    /// Opens a container node for a value in `slot` whose header started at `start`; whether it
    /// got a node.
    fn open(&mut self, kind: Kind, slot: &Slot<'_>, start: usize) -> bool {
        match slot {
            Slot::Node { segment, key, .. } => {
                if self.spans {
                    let header_end = self.out.len();
                    self.builder.open(kind, *segment, *key, start, header_end);
                }
                true
            }
            Slot::Key { .. } => false,
        }
    }

    /// The slot of an array item of the container in `parent` (which has a node when `node`).
    fn child_slot<'v>(
        &self,
        parent: &Slot<'v>,
        node: bool,
        segment: Segment,
        step: Step<'v>,
    ) -> Slot<'v> {
        if node {
            Slot::Node {
                segment,
                key: None,
                step: Some(step),
            }
        } else {
            Slot::Key {
                path: self.path(parent).child(step.segment()),
            }
        }
    }

    /// Writes a scalar (anything but arrays, maps and tags).
    fn scalar(&mut self, v: &Value, slot: &Slot<'_>) -> Result<Written, EncodeError> {
        let start = self.out.len();
        // A scalar whose value lives in its marker byte.
        let marker_only = |this: &mut Encoder, byte: u8, kind: Kind| {
            this.out.push(byte);
            Written {
                kind,
                header_end: start,
                payload_start: start,
            }
        };
        let w = match v {
            Value::Null => marker_only(self, 0xc0, Kind::Null),
            Value::Undefined => {
                self.note(NoteKind::SimpleAsNull, slot, || {
                    "CBOR undefined has no MessagePack equivalent; written as nil".into()
                });
                marker_only(self, 0xc0, Kind::Null)
            }
            Value::Simple(n) => {
                self.note(NoteKind::SimpleAsNull, slot, || {
                    format!("CBOR simple value {n} has no MessagePack equivalent; written as nil")
                });
                marker_only(self, 0xc0, Kind::Null)
            }
            Value::Bool(b) => marker_only(self, if *b { 0xc3 } else { 0xc2 }, Kind::Bool),
            Value::Int(n) => {
                if let Ok(u) = u64::try_from(*n) {
                    self.uint(u)
                } else if let Ok(i) = i64::try_from(*n) {
                    self.sint(i)
                } else {
                    self.int_as_text(&n.to_string(), slot)?
                }
            }
            Value::BigInt(n) => self.int_as_text(&n.to_string(), slot)?,
            Value::Float(f) => self.float(*f, slot),
            Value::Decimal(d) => self.decimal(d, slot)?,
            Value::Text(s) => self.text(s.as_bytes(), slot)?,
            Value::Raw(raw) => {
                self.note(NoteKind::RawField, slot, || raw_field_note(raw));
                self.scalar(&Value::Bytes(raw.data.clone()), slot)?
            }
            Value::Bytes(b) => {
                let len = b.len();
                match len {
                    0..=0xff => self.head(0xc4, 1, len as u64),
                    0x100..=0xffff => self.head(0xc5, 2, len as u64),
                    _ if u32::try_from(len).is_ok() => self.head(0xc6, 4, len as u64),
                    _ => return Err(self.too_long(slot, "a byte string", len)),
                }
                let header_end = self.out.len();
                self.out.extend_from_slice(b);
                Written {
                    kind: Kind::Bytes,
                    header_end,
                    payload_start: header_end,
                }
            }
            Value::Ext(t, data) => {
                let kind = if *t == TIMESTAMP_EXT && parse_timestamp(data).is_some() {
                    // The bytes are a valid timestamp: that is what any reader sees.
                    Kind::Timestamp
                } else {
                    Kind::Ext
                };
                self.ext(*t, data, kind, slot)?
            }
            Value::Timestamp(ts) => {
                let data = timestamp_data(*ts);
                // Nanoseconds past 999,999,999 make bytes every reader takes for a plain ext.
                let kind = if parse_timestamp(&data).is_some() {
                    Kind::Timestamp
                } else {
                    Kind::Ext
                };
                self.ext(TIMESTAMP_EXT, &data, kind, slot)?
            }
            // `value` writes these itself and never passes them here.
            Value::Array(_) | Value::Map(_) | Value::Tag(..) => {
                return Err(EncodeError {
                    format: Format::MessagePack,
                    path: self.path(slot),
                    message: format!("{} is not a scalar", v.summary(40)),
                })
            }
        };
        Ok(w)
    }

    fn uint(&mut self, u: u64) -> Written {
        let start = self.out.len();
        put_uint(&mut self.out, u);
        self.int_written(start)
    }

    /// A negative integer.
    fn sint(&mut self, i: i64) -> Written {
        let start = self.out.len();
        put_sint(&mut self.out, i);
        self.int_written(start)
    }

    /// The integer written from `start`: a fixint is its one byte, any other a marker before
    /// its payload.
    fn int_written(&self, start: usize) -> Written {
        let header_end = if self.out.len() - start == 1 {
            start
        } else {
            start + 1
        };
        Written {
            kind: Kind::Int,
            header_end,
            payload_start: header_end,
        }
    }

    fn int_as_text(&mut self, digits: &str, slot: &Slot<'_>) -> Result<Written, EncodeError> {
        self.note(NoteKind::IntegerRange, slot, || {
            format!("integer {digits} does not fit MessagePack's 64-bit integers; written as text")
        });
        self.text(digits.as_bytes(), slot)
    }

    /// Writes the UTF-8 text `s` as a string.
    fn text(&mut self, s: &[u8], slot: &Slot<'_>) -> Result<Written, EncodeError> {
        let len = s.len();
        match len {
            0..=31 => self.out.push(0xa0 | len as u8),
            32..=0xff => self.head(0xd9, 1, len as u64),
            0x100..=0xffff => self.head(0xda, 2, len as u64),
            _ if u32::try_from(len).is_ok() => self.head(0xdb, 4, len as u64),
            _ => return Err(self.too_long(slot, "a string", len)),
        }
        let header_end = self.out.len();
        self.out.extend_from_slice(s);
        Ok(Written {
            kind: Kind::Text,
            header_end,
            payload_start: header_end,
        })
    }

    fn float(&mut self, f: Float, slot: &Slot<'_>) -> Written {
        let narrow = match self.floats {
            FloatPolicy::Shortest => FloatWidth::F32.holds(f.value),
            FloatPolicy::Keep => {
                if f.width == FloatWidth::F16 {
                    self.note(NoteKind::FloatWidth, slot, || {
                        format!(
                            "float16 {} written as float32: MessagePack has no float16",
                            format_float(f.value)
                        )
                    });
                }
                f.width != FloatWidth::F64
            }
        };
        self.write_float(f.value, narrow)
    }

    fn write_float(&mut self, v: f64, narrow: bool) -> Written {
        let start = self.out.len();
        if narrow {
            self.out.push(0xca);
            self.out
                .extend_from_slice(&(v as f32).to_bits().to_be_bytes());
        } else {
            self.out.push(0xcb);
            self.out.extend_from_slice(&v.to_bits().to_be_bytes());
        }
        Written {
            kind: Kind::Float(if narrow {
                FloatWidth::F32
            } else {
                FloatWidth::F64
            }),
            header_end: start + 1,
            payload_start: start + 1,
        }
    }

    fn decimal(&mut self, d: &str, slot: &Slot<'_>) -> Result<Written, EncodeError> {
        let Ok(v) = d.parse::<f64>() else {
            self.note(NoteKind::DecimalRounded, slot, || {
                format!("decimal {d} could not be read as a number; written as text")
            });
            return self.text(d.as_bytes(), slot);
        };
        self.note(NoteKind::DecimalRounded, slot, || {
            if v.is_infinite() {
                format!(
                    "decimal {d} is beyond float64's range; written as {}",
                    format_float(v)
                )
            } else {
                format!(
                    "decimal {d} rounded to the nearest float64, {}",
                    format_float(v)
                )
            }
        });
        let narrow = self.floats == FloatPolicy::Shortest && FloatWidth::F32.holds(v);
        Ok(self.write_float(v, narrow))
    }

    fn ext(
        &mut self,
        t: i8,
        data: &[u8],
        kind: Kind,
        slot: &Slot<'_>,
    ) -> Result<Written, EncodeError> {
        let len = data.len();
        match len {
            1 => self.out.push(0xd4),
            2 => self.out.push(0xd5),
            4 => self.out.push(0xd6),
            8 => self.out.push(0xd7),
            16 => self.out.push(0xd8),
            0..=0xff => self.head(0xc7, 1, len as u64),
            0x100..=0xffff => self.head(0xc8, 2, len as u64),
            _ if u32::try_from(len).is_ok() => self.head(0xc9, 4, len as u64),
            _ => return Err(self.too_long(slot, "an ext", len)),
        }
        self.out.push(t as u8);
        let header_end = self.out.len();
        self.out.extend_from_slice(data);
        Ok(Written {
            kind,
            header_end,
            payload_start: header_end,
        })
    }
}
