//! The CBOR encoder: a [`Value`] to preferred-serialization bytes, with the spans of every node
//! and notes for what CBOR cannot say (see the parent module for the decisions).

use num_bigint::{BigInt, Sign};

use super::scalar_layout;
use crate::codec::{Depth, Spans, Stop};
use crate::codec::{EncodeError, EncodeOptions, Encoded, FloatPolicy, Format, NoteKind, Notes};
use crate::model::{
    Float, FloatWidth, Kind, NodeId, Path, PathSegment, Segment, Span, SpanTreeBuilder, Timestamp,
    Value, INT_MAX, INT_MIN,
};

/// Writes the shortest head for `major` with argument `arg`.
#[inline]
pub(super) fn head(out: &mut Vec<u8>, major: u8, arg: u64) {
    let m = major << 5;
    if arg < 24 {
        out.push(m | arg as u8);
    } else if arg <= 0xff {
        out.extend_from_slice(&[m | 24, arg as u8]);
    } else if arg <= 0xffff {
        out.push(m | 25);
        out.extend_from_slice(&(arg as u16).to_be_bytes());
    } else if arg <= 0xffff_ffff {
        out.push(m | 26);
        out.extend_from_slice(&(arg as u32).to_be_bytes());
    } else {
        out.push(m | 27);
        out.extend_from_slice(&arg.to_be_bytes());
    }
}

/// Writes the float `v` at `width` (a NaN as float16 as the canonical `0x7e00`).
pub(super) fn write_float(out: &mut Vec<u8>, v: f64, width: FloatWidth) {
    match width {
        FloatWidth::F16 => {
            let bits = if v.is_nan() {
                0x7e00
            } else {
                half::f16::from_f64(v).to_bits()
            };
            out.push(0xf9);
            out.extend_from_slice(&bits.to_be_bytes());
        }
        FloatWidth::F32 => {
            out.push(0xfa);
            out.extend_from_slice(&(v as f32).to_bits().to_be_bytes());
        }
        FloatWidth::F64 => {
            out.push(0xfb);
            out.extend_from_slice(&v.to_bits().to_be_bytes());
        }
    }
}

/// Major type and argument of an integer in [`INT_MIN`]`..=`[`INT_MAX`]; `None` outside.
fn int_head(n: i128) -> Option<(u8, u64)> {
    if !(INT_MIN..=INT_MAX).contains(&n) {
        None
    } else if n >= 0 {
        u64::try_from(n).ok().map(|a| (0, a))
    } else {
        u64::try_from(-1 - n).ok().map(|a| (1, a))
    }
}

/// Writes any integer: major type 0/1 when it fits, else a bignum (tag 2/3 + magnitude bytes).
/// Returns the end of the header by the span conventions.
fn write_integer(out: &mut Vec<u8>, n: &BigInt) -> usize {
    if let Some((major, arg)) = i128::try_from(n).ok().and_then(int_head) {
        let hs = out.len();
        head(out, major, arg);
        return scalar_layout(major, if arg < 24 { 0 } else { 24 }, hs, out.len());
    }
    let (tag, magnitude) = if n.sign() == Sign::Minus {
        (3, -(n + 1u32))
    } else {
        (2, n.clone())
    };
    let (_, bytes) = magnitude.to_bytes_be();
    head(out, 6, tag);
    head(out, 2, bytes.len() as u64);
    let header_end = out.len();
    out.extend_from_slice(&bytes);
    header_end
}

/// Mantissa and exponent of a decimal literal (`-12.5e3` → `(-125, 2)`); `None` if the text is
/// not a decimal number.
pub(super) fn decimal_parts(text: &str) -> Option<(BigInt, BigInt)> {
    let (negative, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (number, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let (int, frac) = match number.find('.') {
        Some(i) => (&number[..i], &number[i + 1..]),
        None => (number, ""),
    };
    let all_digits = |s: &str| s.bytes().all(|c| c.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !all_digits(int) || !all_digits(frac) {
        return None;
    }
    let digits = format!("{int}{frac}");
    let mut mantissa = BigInt::parse_bytes(digits.as_bytes(), 10)?;
    if negative {
        mantissa = -mantissa;
    }
    let exponent = match exp {
        None => BigInt::from(0),
        Some(e) => {
            let unsigned = e.strip_prefix(['+', '-']).unwrap_or(e);
            if unsigned.is_empty() || !all_digits(unsigned) {
                return None;
            }
            BigInt::parse_bytes(e.as_bytes(), 10)?
        }
    };
    Some((mantissa, exponent - frac.len()))
}

/// Where the next item goes: how its parent addresses it.
#[derive(Clone, Copy)]
enum Slot<'v> {
    Root,
    Index(usize),
    /// A map value, with its key and the key's bytes.
    Key(&'v Value, Span),
}

impl Slot<'_> {
    fn key_span(&self) -> Option<Span> {
        match self {
            Slot::Key(_, span) => Some(*span),
            _ => None,
        }
    }

    fn path_segment(&self) -> Option<PathSegment> {
        match self {
            Slot::Root => None,
            Slot::Index(i) => Some(PathSegment::Index(*i)),
            Slot::Key(Value::Text(s), _) => Some(PathSegment::Key(s.to_string())),
            Slot::Key(k, _) => Some(PathSegment::OtherKey(k.summary(48))),
        }
    }
}

struct Encoder {
    out: Vec<u8>,
    builder: SpanTreeBuilder,
    notes: Notes,
    canonical: bool,
    shortest: bool,
    /// How many map keys we are inside: keys produce no node.
    in_key: usize,
    /// Whether nodes are recorded; without them there are no paths for notes or errors.
    spans: bool,
    /// Set (without spans) at the first note: the result is to be thrown away.
    bailed: bool,
    /// Containers open (tags are written in a loop, not by recursion).
    depth: usize,
    /// How many may be open before the encoder stops ([`Depth`]).
    max_depth: usize,
    /// Set when it stopped for that: the result is [`Stop::Deep`].
    deep: bool,
}

/// Encodes `value` as CBOR (preferred serialization, or core deterministic encoding with
/// `options.canonical`), with the spans of every node and notes for what CBOR cannot say.
///
/// Fails only for a [`Value::Decimal`] whose text is not a decimal number.
pub fn encode(value: &Value, options: &EncodeOptions) -> Result<Encoded, EncodeError> {
    encode_with(value, options, Spans::On, Depth::ANY)
        .map(|(encoded, _)| encoded)
        .map_err(|stop| stop.unbounded(Format::Cbor))
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
    let mut e = Encoder {
        out: Vec::new(),
        builder: spans.builder(value),
        notes: Notes::new(),
        canonical: options.canonical,
        shortest: options.canonical || options.floats == FloatPolicy::Shortest,
        in_key: 0,
        spans: spans.on(),
        bailed: false,
        depth: 0,
        max_depth: depth.0,
        deep: false,
    };
    let result = e.item(value, Slot::Root);
    if e.deep {
        return Err(Stop::Deep);
    }
    if e.bailed || (!spans.on() && result.is_err()) {
        return Ok((Encoded::empty(Format::Cbor), false));
    }
    result?;
    Ok((
        Encoded {
            format: Format::Cbor,
            bytes: e.out,
            spans: spans.finish(e.builder),
            notes: e.notes.into_vec(),
        },
        true,
    ))
}

impl Encoder {
    /// Goes one container deeper; past `max_depth`, stops (see [`Stop::Deep`]).
    #[inline]
    fn enter(&mut self) -> Result<(), EncodeError> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(crate::codec::stop_deep(&mut self.deep, Format::Cbor));
        }
        Ok(())
    }

    /// Path of the item in `slot` (inside a key: the map's path).
    fn path(&self, slot: &Slot<'_>) -> Path {
        let mut p = self.builder.current_path();
        if self.in_key == 0 {
            if let Some(s) = slot.path_segment() {
                p.push(s);
            }
        }
        p
    }

    fn segment(&mut self, slot: &Slot<'_>) -> Segment {
        match slot {
            Slot::Root => Segment::Root,
            Slot::Index(i) => Segment::Index(u32::try_from(*i).unwrap_or(u32::MAX)),
            Slot::Key(k, _) => self.builder.segment_for_key(k),
        }
    }

    /// Adds the node of a scalar written from `start` to here.
    fn leaf(
        &mut self,
        kind: Kind,
        slot: &Slot<'_>,
        start: usize,
        header_end: usize,
    ) -> Option<NodeId> {
        if self.in_key > 0 || !self.spans {
            return None;
        }
        let segment = self.segment(slot);
        let end = self.out.len();
        Some(self.builder.leaf(
            kind,
            segment,
            slot.key_span(),
            Span::new(start, end),
            header_end,
            Span::new(header_end, end),
        ))
    }

    fn note(
        &mut self,
        kind: NoteKind,
        node: Option<NodeId>,
        slot: &Slot<'_>,
        message: impl FnOnce() -> String,
    ) {
        if !self.spans {
            self.bailed = true;
            return;
        }
        let path = match node {
            Some(id) => self.builder.path(id),
            None => self.path(slot),
        };
        self.notes.add(kind, path, message);
    }

    /// Writes a head whose argument is the value (integers, simple values); returns the header end.
    fn value_head(&mut self, major: u8, arg: u64) -> usize {
        let hs = self.out.len();
        head(&mut self.out, major, arg);
        scalar_layout(major, if arg < 24 { 0 } else { 24 }, hs, self.out.len())
    }

    fn string(
        &mut self,
        major: u8,
        data: &[u8],
        kind: Kind,
        slot: &Slot<'_>,
        start: usize,
    ) -> Option<NodeId> {
        head(&mut self.out, major, data.len() as u64);
        let header_end = self.out.len();
        self.out.extend_from_slice(data);
        self.leaf(kind, slot, start, header_end)
    }

    fn float(&mut self, v: f64, width: FloatWidth) -> usize {
        let hs = self.out.len();
        write_float(&mut self.out, v, width);
        hs + 1
    }

    fn item(&mut self, value: &Value, slot: Slot<'_>) -> Result<(), EncodeError> {
        let start = self.out.len();
        let mut v = value;
        while let Value::Tag(t, inner) = v {
            head(&mut self.out, 6, *t);
            v = inner;
        }
        match v {
            Value::Null | Value::Undefined | Value::Bool(_) => {
                let (arg, kind) = match v {
                    Value::Bool(false) => (20, Kind::Bool),
                    Value::Bool(true) => (21, Kind::Bool),
                    Value::Null => (22, Kind::Null),
                    _ => (23, Kind::Undefined),
                };
                let he = self.value_head(7, arg);
                self.leaf(kind, &slot, start, he);
            }
            Value::Simple(n) => self.simple(*n, &slot, start),
            Value::Int(n) => {
                let he = match int_head(*n) {
                    Some((major, arg)) => self.value_head(major, arg),
                    None => write_integer(&mut self.out, &BigInt::from(*n)),
                };
                self.leaf(Kind::Int, &slot, start, he);
            }
            Value::BigInt(n) => {
                let he = write_integer(&mut self.out, n);
                self.leaf(Kind::Int, &slot, start, he);
            }
            Value::Float(f) => self.float_item(f, &slot, start),
            Value::Decimal(text) => self.decimal(text, &slot, start)?,
            Value::Text(s) => {
                self.string(3, s.as_bytes(), Kind::Text, &slot, start);
            }
            Value::Bytes(b) => {
                self.string(2, b, Kind::Bytes, &slot, start);
            }
            Value::Raw(raw) => {
                let node = self.string(2, &raw.data, Kind::Bytes, &slot, start);
                self.note(NoteKind::RawField, node, &slot, || {
                    crate::codec::raw_field_note(raw)
                });
            }
            Value::Ext(t, d) => {
                let node = self.string(2, d, Kind::Bytes, &slot, start);
                self.note(NoteKind::ExtDropped, node, &slot, || {
                    format!(
                        "MessagePack extension type {t} ({} bytes) is written as a plain byte \
                         string; the type number is lost",
                        d.len()
                    )
                });
            }
            Value::Timestamp(ts) => self.timestamp(ts, &slot, start),
            Value::Array(items) => {
                self.enter()?;
                head(&mut self.out, 4, items.len() as u64);
                let node = self.open(Kind::Array, &slot, start);
                for (i, item) in items.iter().enumerate() {
                    self.item(item, Slot::Index(i))?;
                }
                self.close(node);
                self.depth -= 1;
            }
            Value::Map(entries) => {
                self.enter()?;
                self.map(entries, &slot, start)?;
                self.depth -= 1;
            }
            Value::Tag(..) => unreachable!("tags were written above"),
        }
        Ok(())
    }

    /// A simple value: those with a meaning of their own under their kind, the two-byte ones
    /// below 32 (not well-formed) as null, noted.
    #[inline]
    fn simple(&mut self, n: u8, slot: &Slot<'_>, start: usize) {
        let (kind, arg) = match n {
            0..=19 | 32.. => (Kind::Simple, u64::from(n)),
            20 | 21 => (Kind::Bool, u64::from(n)),
            22 => (Kind::Null, 22),
            23 => (Kind::Undefined, 23),
            24..=31 => (Kind::Null, 22),
        };
        let he = self.value_head(7, arg);
        let node = self.leaf(kind, slot, start, he);
        if (24..=31).contains(&n) {
            self.note(NoteKind::SimpleAsNull, node, slot, || {
                format!(
                    "simple value {n} cannot be written in CBOR (two-byte simple values \
                     below 32 are not well-formed); written as null"
                )
            });
        }
    }

    /// A float at its own width (the narrowest exact one when shortest), widened (noted) when
    /// the value does not fit the width it is marked with.
    #[inline]
    fn float_item(&mut self, f: &Float, slot: &Slot<'_>, start: usize) {
        let (width, widened) = if self.shortest {
            (FloatWidth::narrowest_exact(f.value), false)
        } else if f.width.holds(f.value) {
            (f.width, false)
        } else if FloatWidth::F32.holds(f.value) {
            (FloatWidth::F32, true)
        } else {
            (FloatWidth::F64, true)
        };
        let he = self.float(f.value, width);
        let node = self.leaf(Kind::Float(width), slot, start, he);
        if widened {
            self.note(NoteKind::FloatWidth, node, slot, || {
                format!(
                    "float {} does not fit float{} as marked; written as float{}",
                    crate::model::format_float(f.value),
                    f.width.bits(),
                    width.bits()
                )
            });
        }
    }

    /// A timestamp: tag 1 and whole epoch seconds, or tag 0 and RFC 3339 text when it has
    /// fractions of a second.
    #[inline]
    fn timestamp(&mut self, ts: &Timestamp, slot: &Slot<'_>, start: usize) {
        if ts.nanos == 0 {
            head(&mut self.out, 6, 1);
            let (major, arg) = if ts.seconds >= 0 {
                (0, ts.seconds.unsigned_abs())
            } else {
                (1, (-1 - i128::from(ts.seconds)).unsigned_abs() as u64)
            };
            let he = self.value_head(major, arg);
            self.leaf(Kind::Timestamp, slot, start, he);
        } else {
            head(&mut self.out, 6, 0);
            self.string(3, ts.to_rfc3339().as_bytes(), Kind::Timestamp, slot, start);
        }
    }

    fn open(&mut self, kind: Kind, slot: &Slot<'_>, start: usize) -> Option<NodeId> {
        if self.in_key > 0 || !self.spans {
            return None;
        }
        let segment = self.segment(slot);
        let header_end = self.out.len();
        Some(
            self.builder
                .open(kind, segment, slot.key_span(), start, header_end),
        )
    }

    fn close(&mut self, node: Option<NodeId>) {
        if node.is_some() {
            let end = self.out.len();
            self.builder.close(end, end);
        }
    }

    fn map(
        &mut self,
        entries: &[(Value, Value)],
        slot: &Slot<'_>,
        start: usize,
    ) -> Result<(), EncodeError> {
        head(&mut self.out, 5, entries.len() as u64);
        let node = self.open(Kind::Map, slot, start);
        if !self.canonical && entries.iter().all(|(k, _)| matches!(k, Value::Text(_))) {
            // Text keys repeat exactly when their text does, and are written in place.
            let text = |i: usize| match entries.get(i) {
                Some((Value::Text(s), _)) => s.as_bytes(),
                _ => &[],
            };
            let repeated = crate::codec::repeats::repeated(entries.len(), text);
            self.note_repeats(entries, &repeated, node, slot);
            for (k, v) in entries {
                let key_start = self.out.len();
                let key: &[u8] = match k {
                    Value::Text(s) => s.as_bytes(),
                    _ => &[],
                };
                head(&mut self.out, 3, key.len() as u64);
                self.out.extend_from_slice(key);
                let key_span = Span::new(key_start, self.out.len());
                self.item(v, Slot::Key(k, key_span))?;
            }
            self.close(node);
            return Ok(());
        }
        // Encode the keys first: canonical order and duplicates are decided on their bytes.
        let mut keys = Vec::with_capacity(entries.len());
        self.in_key += 1;
        for (k, _) in entries {
            let outer = std::mem::take(&mut self.out);
            let r = self.item(k, Slot::Root);
            keys.push(std::mem::replace(&mut self.out, outer));
            if r.is_err() {
                self.in_key -= 1;
                return r;
            }
        }
        self.in_key -= 1;
        let repeated = crate::codec::repeats::repeated(keys.len(), |i| {
            keys.get(i).map_or(&[][..], Vec::as_slice)
        });
        self.note_repeats(entries, &repeated, node, slot);
        let mut order: Vec<usize> = (0..entries.len()).collect();
        if self.canonical {
            order.sort_by(|&a, &b| keys[a].cmp(&keys[b]));
        }
        for i in order {
            let key_start = self.out.len();
            self.out.extend_from_slice(&keys[i]);
            let key_span = Span::new(key_start, self.out.len());
            let (k, v) = &entries[i];
            self.item(v, Slot::Key(k, key_span))?;
        }
        self.close(node);
        Ok(())
    }

    /// Notes each entry whose key repeats an earlier one (`repeated`: their indices).
    fn note_repeats(
        &mut self,
        entries: &[(Value, Value)],
        repeated: &[usize],
        node: Option<NodeId>,
        slot: &Slot<'_>,
    ) {
        for &i in repeated {
            let Some((key, _)) = entries.get(i) else {
                continue;
            };
            self.note(NoteKind::DuplicateKey, node, slot, || {
                format!(
                    "key {} appears more than once in this map; most readers keep only one of \
                     the entries",
                    key.summary(48)
                )
            });
        }
    }

    /// A decimal literal as tag 4 `[exponent, mantissa]`, or (exponent beyond CBOR integers) the
    /// nearest float64 with a note.
    fn decimal(&mut self, text: &str, slot: &Slot<'_>, start: usize) -> Result<(), EncodeError> {
        let Some((mantissa, exponent)) = decimal_parts(text) else {
            return Err(EncodeError {
                format: Format::Cbor,
                path: self.path(slot),
                message: format!("decimal literal {text:?} is not a decimal number"),
            });
        };
        if i128::try_from(&exponent).ok().and_then(int_head).is_some() {
            head(&mut self.out, 6, 4);
            head(&mut self.out, 4, 2);
            let header_end = self.out.len();
            write_integer(&mut self.out, &exponent);
            write_integer(&mut self.out, &mantissa);
            self.leaf(Kind::Decimal, slot, start, header_end);
            return Ok(());
        }
        let v: f64 = text.parse().map_err(|_| EncodeError {
            format: Format::Cbor,
            path: self.path(slot),
            message: format!("decimal literal {text:?} is not a decimal number"),
        })?;
        let width = FloatWidth::narrowest_exact(v);
        let he = self.float(v, width);
        let node = self.leaf(Kind::Float(width), slot, start, he);
        self.note(NoteKind::DecimalRounded, node, slot, || {
            format!(
                "decimal {text} has an exponent beyond CBOR integers; written as the nearest \
                 float64, {}",
                crate::model::format_float(v)
            )
        });
        Ok(())
    }
}
