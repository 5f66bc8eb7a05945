//! The proto3 JSON mapping of a large payload without holding it decoded:
//! [`to_proto3_json_streamed`].
//!
//! [`super::to_proto3_json`] reads the whole payload into one decoded value and then writes it: for a
//! 9 MB OTLP trace batch that is several times the payload at once. Most large payloads are a few big messages holding many small
//! records, so the walk here writes the big messages itself and reads every message of at most
//! [`CHUNK`] bytes, and every other field, as a piece of its own: a repeated field's small
//! items in groups of about a chunk, a batch of groups at once on every core.
//!
//! A big message is walked like this. Its fields are found by their tags; each field the schema
//! names is written in field-number order, as prost-reflect writes a message: a repeated message
//! field (not a map) item by item, each item walked in turn, and a message field that occurs once
//! walked in place; any other field is read on its own (the bytes of all its occurrences, in
//! their order, read as the enclosing type: a repeated scalar's packed and unpacked runs are
//! joined, and the last of a scalar's occurrences wins, as in a whole read) and the entry
//! written for it is copied. Extensions come after the fields, read together, as prost-reflect
//! writes them; fields the schema does not name are left out, as it leaves them.
//!
//! Each piece is read by the schema-guided decoder and written from its value
//! ([`super::proto3_json_of_value`]), or, where that value cannot say it, read again for its
//! JSON (`decode_for_json`) and written by the same writer. The text is [`super::to_proto3_json`]'s (a
//! test holds the two, and prost-reflect's serializer as the oracle, together on every payload
//! with a schema among the tests' data, walking every message and walking none).
//!
//! What it does not walk: well-known types (their JSON is not an object of fields), map entries,
//! groups (read as pieces), and a message field with more than one occurrence (occurrences
//! merge). It gives `None`, and the caller converts the ordinary way (which reports the error
//! with its offset in the whole payload, or repairs strings with `utf8_validation = NONE` with
//! notes that name them by their path from the root), for pretty output, a big message with two
//! members of one `oneof` (the last one wins, which a field-by-field reading cannot tell), a
//! malformed tag in a walked message, a piece that is refused or needs a note.
//!
//! The nesting limit of a piece's writing (`MAX_DEPTH` of `proto3_value.rs`) counts from the
//! piece, so a payload nested that deep below a big message converts here where a whole read
//! would stop; the walk itself goes no deeper than [`MAX_WALK_DEPTH`] messages.

use std::borrow::Cow;
use std::collections::BTreeMap;

use prost_reflect::MessageDescriptor;
use rayon::prelude::*;

use super::decode::{decode_for_json, decode_value, Tables};
use super::proto3_value::{Proto3JsonOptions, Writer};
use super::wkt::is_wkt;
use crate::codec::protobuf::varint;
use crate::codec::DecodeOptions;

/// Messages of at most this many bytes are read whole.
pub const CHUNK: usize = 64 << 10;

/// How many messages deep the walk goes; below that, messages are read whole.
pub const MAX_WALK_DEPTH: usize = 16;

/// Groups of a repeated field's items read at once on the worker threads, per thread: enough
/// to keep every core busy, few enough that the text held before it is placed stays small.
const GROUPS_PER_THREAD: usize = 4;

/// The proto3 JSON text of `bytes` read as `message`, as [`super::to_proto3_json`] writes it
/// (UTF-8 bytes: every piece is written from Rust strings, and the whole, tens of megabytes for
/// a large payload, is not checked again; no notes, as a payload that would need one is not
/// walked), holding at most one small piece of the payload decoded at a time; `None` when the
/// walk does not apply (see the module docs) and the caller should convert the ordinary way.
pub fn to_proto3_json_streamed(
    bytes: &[u8],
    message: &MessageDescriptor,
    options: Proto3JsonOptions,
) -> Option<Vec<u8>> {
    to_proto3_json_in_chunks(bytes, message, options, CHUNK)
}

/// [`to_proto3_json_streamed`] with another chunk size (tests walk every message with 0).
pub fn to_proto3_json_in_chunks(
    bytes: &[u8],
    message: &MessageDescriptor,
    options: Proto3JsonOptions,
    chunk: usize,
) -> Option<Vec<u8>> {
    if options.pretty {
        return None;
    }
    let mut walk = Walk {
        reader: Reader::new(message, options.proto_names),
        chunk,
        // Proto3 JSON takes two to three times the payload's bytes (room for the newline the
        // CLI adds included); pages not written are never touched.
        out: Vec::with_capacity(bytes.len().saturating_mul(3).saturating_add(1)),
        joined: Vec::new(),
    };
    walk.message(message, bytes, 0)?;
    Some(walk.out)
}

struct Walk {
    /// Reads the pieces.
    reader: Reader,
    chunk: usize,
    out: Vec<u8>,
    /// The occurrences of one field, joined.
    joined: Vec<u8>,
}

/// Reads pieces and writes their text, keeping the field tables from piece to piece: the walk
/// has one, and so does each worker thread reading a repeated field's items.
struct Reader {
    /// Writes each piece's value.
    writer: Writer,
    /// The decoder's field tables.
    tables: Tables,
    proto_names: bool,
    /// The text written for one piece.
    piece: Vec<u8>,
}

impl Reader {
    /// A reader of messages of `message`'s pool.
    fn new(message: &MessageDescriptor, proto_names: bool) -> Reader {
        let options = Proto3JsonOptions {
            proto_names,
            pretty: false,
        };
        Reader {
            writer: Writer::new(message, options),
            tables: Tables::new(),
            proto_names,
            piece: Vec::new(),
        }
    }

    /// Reads `bytes` as one `desc` message and writes its compact JSON into [`Reader::piece`]:
    /// from the schema-guided decoder's value ([`proto3_json_of_value`], whose map entries are
    /// in key order, as the ordinary way writes them), or read again for its JSON where that
    /// value cannot say it; `None` where the piece is refused or needs a note.
    fn read_piece(&mut self, desc: &MessageDescriptor, bytes: &[u8]) -> Option<()> {
        self.piece.clear();
        if let Some(value) = decode_value(bytes, desc, &DecodeOptions::default(), &mut self.tables)
        {
            if let Ok(notes) = self.writer.write(&value, desc, false, &mut self.piece) {
                return notes.is_empty().then_some(());
            }
        }
        let value = decode_for_json(bytes, desc, &mut self.tables).ok()?;
        let notes = self
            .writer
            .write(&value, desc, true, &mut self.piece)
            .ok()?;
        notes.is_empty().then_some(())
    }

    /// The text of the items `group` of `bytes`, each read whole as `desc`, joined by commas.
    fn group(
        &mut self,
        desc: &MessageDescriptor,
        bytes: &[u8],
        group: &[&Occurrence],
    ) -> Option<Vec<u8>> {
        let mut text = Vec::new();
        for (i, o) in group.iter().enumerate() {
            if i > 0 {
                text.push(b',');
            }
            self.read_piece(desc, bytes.get(o.value..o.end)?)?;
            text.extend_from_slice(&self.piece);
        }
        Some(text)
    }
}

/// One field occurrence of a message: its number, wire type, where its tag starts, where its
/// value (after a length, for wire type 2) starts, and where it ends.
pub(super) struct Occurrence {
    pub number: u32,
    pub wire: u8,
    pub start: usize,
    pub value: usize,
    pub end: usize,
}

impl Walk {
    /// Writes `bytes` read as `desc`, `depth` messages below the root.
    fn message(&mut self, desc: &MessageDescriptor, bytes: &[u8], depth: usize) -> Option<()> {
        if !walkable(self.chunk, desc, bytes.len(), depth) {
            self.reader.read_piece(desc, bytes)?;
            self.out.extend_from_slice(&self.reader.piece);
            return Some(());
        }
        let occurrences = fields(bytes)?;
        let mut by_number: BTreeMap<u32, Vec<&Occurrence>> = BTreeMap::new();
        for o in &occurrences {
            by_number.entry(o.number).or_default().push(o);
        }
        // Two members of one oneof: the last occurrence of any of them wins.
        for oneof in desc.oneofs().filter(|o| !o.is_synthetic()) {
            let present = oneof
                .fields()
                .filter(|f| by_number.contains_key(&f.number()))
                .count();
            if present > 1 {
                return None;
            }
        }
        self.out.push(b'{');
        let mut first = true;
        for field in desc.fields() {
            let Some(occ) = by_number.get(&field.number()) else {
                continue;
            };
            let item = field
                .kind()
                .as_message()
                .filter(|_| !field.is_map() && !field.is_group())
                .filter(|_| occ.iter().all(|o| o.wire == 2))
                .filter(|_| field.is_list() || occ.len() == 1)
                .cloned();
            let Some(item) = item else {
                self.read_joined(desc, bytes, occ)?;
                self.copy_entries(&mut first);
                continue;
            };
            if !first {
                self.out.push(b',');
            }
            first = false;
            let name = if self.reader.proto_names {
                field.name()
            } else {
                field.json_name()
            };
            serde_json::to_writer(&mut self.out, name).ok()?;
            self.out.push(b':');
            if field.is_list() {
                self.out.push(b'[');
                self.items(&item, bytes, occ, depth + 1)?;
                self.out.push(b']');
            } else {
                self.message(&item, &bytes[occ[0].value..occ[0].end], depth + 1)?;
            }
        }
        let extensions: Vec<&Occurrence> = occurrences
            .iter()
            .filter(|o| desc.get_field(o.number).is_none())
            .filter(|o| desc.get_extension(o.number).is_some())
            .collect();
        if !extensions.is_empty() {
            self.read_joined(desc, bytes, &extensions)?;
            self.copy_entries(&mut first);
        }
        self.out.push(b'}');
        Some(())
    }

    /// Writes the items `occ` of a repeated `desc` field of `bytes`, `depth` messages below the
    /// root, joined by commas. Items read whole go in groups of about one chunk each, a batch
    /// of groups at once on the worker threads (each with its own [`Reader`]), written in
    /// order; a big item is walked here.
    fn items(
        &mut self,
        desc: &MessageDescriptor,
        bytes: &[u8],
        occ: &[&Occurrence],
        depth: usize,
    ) -> Option<()> {
        let chunk = self.chunk;
        // The type's part of the rule is decided once for all the items; only sizes differ.
        let walks = walks(desc, depth);
        let whole = |o: &Occurrence| !walks || o.end - o.value <= chunk;
        let most = rayon::current_num_threads().max(1) * GROUPS_PER_THREAD;
        let mut i = 0;
        while let Some(o) = occ.get(i) {
            if !whole(o) {
                if i > 0 {
                    self.out.push(b',');
                }
                self.message(desc, bytes.get(o.value..o.end)?, depth)?;
                i += 1;
                continue;
            }
            let mut groups: Vec<&[&Occurrence]> = Vec::with_capacity(most);
            let mut k = i;
            while groups.len() < most && occ.get(k).is_some_and(|o| whole(o)) {
                let mut size = 0;
                let mut end = k;
                while let Some(o) = occ.get(end).filter(|o| whole(o)) {
                    if end > k && size + (o.end - o.value) > chunk.max(1) {
                        break;
                    }
                    size += o.end - o.value;
                    end += 1;
                }
                groups.push(occ.get(k..end)?);
                k = end;
            }
            let proto_names = self.reader.proto_names;
            let texts: Vec<Option<Vec<u8>>> = groups
                .par_iter()
                .map_init(
                    || Reader::new(desc, proto_names),
                    |reader, group| reader.group(desc, bytes, group),
                )
                .collect();
            for (group, text) in groups.iter().zip(texts) {
                if i > 0 {
                    self.out.push(b',');
                }
                self.out.extend_from_slice(&text?);
                i += group.len();
            }
        }
        Some(())
    }

    /// Reads the occurrences `occ` of `bytes` as one `desc` message into [`Reader::piece`].
    fn read_joined(
        &mut self,
        desc: &MessageDescriptor,
        bytes: &[u8],
        occ: &[&Occurrence],
    ) -> Option<()> {
        let joined = match occ {
            [one] => Cow::Borrowed(&bytes[one.start..one.end]),
            _ => {
                let mut joined = std::mem::take(&mut self.joined);
                joined.clear();
                for o in occ {
                    joined.extend_from_slice(&bytes[o.start..o.end]);
                }
                Cow::Owned(joined)
            }
        };
        let read = self.reader.read_piece(desc, &joined);
        if let Cow::Owned(joined) = joined {
            self.joined = joined;
        }
        read
    }

    /// Copies the entries of the object in [`Reader::piece`] (none when it is `{}`).
    fn copy_entries(&mut self, first: &mut bool) {
        let piece = &self.reader.piece;
        let inner = &piece[1..piece.len() - 1];
        if inner.is_empty() {
            return;
        }
        if !*first {
            self.out.push(b',');
        }
        *first = false;
        self.out.extend_from_slice(inner);
    }
}

/// Whether a `desc` message of `len` bytes, `depth` messages below the root, is walked rather
/// than read whole, in a walk of chunks of `chunk` bytes.
fn walkable(chunk: usize, desc: &MessageDescriptor, len: usize, depth: usize) -> bool {
    len > chunk && walks(desc, depth)
}

/// Whether a `desc` message `depth` messages below the root is walked when it is bigger than a
/// chunk (its size aside: the same for every item of a repeated field).
fn walks(desc: &MessageDescriptor, depth: usize) -> bool {
    depth < MAX_WALK_DEPTH && !desc.is_map_entry() && !is_wkt(desc.full_name())
}

/// The field occurrences of one message's bytes, in order (a group from its start tag to the
/// end of its end tag); `None` for a malformed tag or length, field number 0, or an end-group
/// tag without its start.
pub(super) fn fields(bytes: &[u8]) -> Option<Vec<Occurrence>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        let (number, wire, value, end) = field(bytes, at, 0)?;
        if wire == 4 {
            return None;
        }
        at = end;
        out.push(Occurrence {
            number,
            wire,
            start,
            value,
            end,
        });
    }
    Some(out)
}

/// The field whose tag is at `at`: its number, wire type, where its value starts (after the
/// length of wire type 2) and where it ends (a group after its end tag; an end-group tag is a
/// field of its own, which ends after the tag). Groups nested more than 100 deep give `None`.
fn field(bytes: &[u8], mut at: usize, depth: usize) -> Option<(u32, u8, usize, usize)> {
    let end = bytes.len();
    let (tag, n) = varint::read(bytes, at, end).ok()?;
    at += n;
    let number = u32::try_from(tag >> 3).ok()?;
    let wire = (tag & 7) as u8;
    if number == 0 || number > 536_870_911 {
        return None;
    }
    let mut value = at;
    at = match wire {
        0 => at + varint::read(bytes, at, end).ok()?.1,
        1 => at.checked_add(8)?,
        2 => {
            let (len, n) = varint::read(bytes, at, end).ok()?;
            value = at + n;
            value.checked_add(usize::try_from(len).ok()?)?
        }
        3 => loop {
            // The group's fields up to the end tag of the same number; groups inside are
            // skipped whole by the call.
            if depth >= 100 {
                return None;
            }
            let (inner, inner_wire, _, inner_end) = field(bytes, at, depth + 1)?;
            at = inner_end;
            if inner_wire == 4 {
                if inner != number {
                    return None;
                }
                break at;
            }
        },
        4 => at,
        5 => at.checked_add(4)?,
        _ => return None,
    };
    (at <= end).then_some((number, wire, value, at))
}
