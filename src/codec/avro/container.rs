//! Avro Object Container Files: header, data blocks and block codecs.
//!
//! Layout (Avro specification, "Object Container Files"):
//!
//! ```text
//! header: "Obj" 0x01 | metadata: map<bytes> | sync marker (16 bytes)
//! block:  object count (long) | byte size (long) | data (byte size bytes) | sync marker
//! ```
//!
//! The metadata map uses Avro's map encoding: blocks of a zigzag varint entry count, each
//! followed by that many (string key, bytes value) pairs, ended by a zero count; a negative
//! count means `-count` entries preceded by the block's byte size.
//!
//! Every position reported is a byte offset into the caller's input. Nothing here panics on
//! any input, and nothing allocates a size read from the input: metadata keys and values are
//! copied only once their bytes are known to be present, blocks are spans into the input, and
//! [`decompress`] never holds much more than the caller's budget.

use std::borrow::Cow;
use std::fmt;
use std::io::Read;
use std::ops::Range;

use thiserror::Error;

use super::framing::{read_long, VarintError};

/// The four bytes that open every container file: `Obj` and format version 1.
pub const MAGIC: [u8; 4] = *b"Obj\x01";

/// Length of the sync marker that ends the header and every block.
pub const SYNC_LEN: usize = 16;

/// Largest block byte size accepted, as in the Java reference reader (`Integer.MAX_VALUE`).
pub const MAX_BLOCK_SIZE: u64 = i32::MAX as u64;

/// A block compression codec, named by the `avro.codec` metadata entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Codec {
    /// `null`: data stored as is (also the meaning of an absent `avro.codec`).
    Null,
    /// `deflate`: raw DEFLATE (RFC 1951), no zlib header or checksum.
    Deflate,
    /// `snappy`: a Snappy block followed by the big-endian CRC-32 of the uncompressed data.
    Snappy,
    /// `zstandard`: one or more Zstandard frames.
    Zstandard,
    /// `bzip2`: a bzip2 stream.
    Bzip2,
    /// `xz`: an `.xz` stream.
    Xz,
}

impl Codec {
    /// The name written in `avro.codec`.
    pub fn name(self) -> &'static str {
        match self {
            Codec::Null => "null",
            Codec::Deflate => "deflate",
            Codec::Snappy => "snappy",
            Codec::Zstandard => "zstandard",
            Codec::Bzip2 => "bzip2",
            Codec::Xz => "xz",
        }
    }

    /// The codec that `avro.codec` names, if it is one of the six the specification defines.
    pub fn from_name(name: &[u8]) -> Option<Codec> {
        Some(match name {
            b"null" => Codec::Null,
            b"deflate" => Codec::Deflate,
            b"snappy" => Codec::Snappy,
            b"zstandard" => Codec::Zstandard,
            b"bzip2" => Codec::Bzip2,
            b"xz" => Codec::Xz,
            _ => return None,
        })
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything that can go wrong reading a container file or decompressing one of its blocks.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ContainerError {
    /// The input does not start with `Obj\x01`.
    #[error("not an Avro container file: bytes 0..4 are {found:02x?}, expected \"Obj\\x01\"")]
    BadMagic {
        /// The first (up to) four bytes of the input.
        found: Vec<u8>,
    },
    /// The header ends before something it declares.
    #[error("header cut short: {what} needs bytes {at}..{needed} but the input ends at {len}")]
    HeaderTruncated {
        /// What was being read.
        what: &'static str,
        /// Where it starts.
        at: usize,
        /// Offset just past where it would end.
        needed: u64,
        /// Length of the input.
        len: usize,
    },
    /// A varint in the header is malformed or cut short.
    #[error("header {what}: {source}")]
    HeaderVarint {
        /// Which varint.
        what: &'static str,
        /// The varint error, with its offset.
        source: VarintError,
    },
    /// A length or count in the header is negative (or `i64::MIN` as a map block count).
    #[error("header {what} at byte {at} is negative: {value}")]
    HeaderNegative {
        /// Which value.
        what: &'static str,
        /// Its decoded value.
        value: i64,
        /// Offset of its varint.
        at: usize,
    },
    /// A metadata map block's declared byte size disagrees with its entries.
    #[error(
        "metadata map block at byte {at} declares {declared} bytes but its entries take {actual}"
    )]
    MapBlockSize {
        /// Offset of the block's count varint.
        at: usize,
        /// The declared byte size.
        declared: i64,
        /// The bytes its entries actually take.
        actual: usize,
    },
    /// No `avro.schema` metadata entry.
    #[error("header has no avro.schema metadata entry")]
    MissingSchema,
    /// `avro.schema` is not UTF-8.
    #[error("avro.schema value at bytes {span:?} is not UTF-8")]
    SchemaNotUtf8 {
        /// The value's span.
        span: Range<usize>,
    },
    /// `avro.codec` names a codec this reader does not know.
    #[error("unknown codec {name:?} in avro.codec at bytes {span:?}")]
    UnknownCodec {
        /// The name, lossily decoded.
        name: String,
        /// The value's span.
        span: Range<usize>,
    },
    /// A block's count or size varint is malformed or cut short.
    #[error("block {n} (starting at byte {start}): {what}: {source}", n = .block + 1)]
    BlockVarint {
        /// Block number, from 0.
        block: usize,
        /// Offset of the block's first byte.
        start: usize,
        /// Which varint.
        what: &'static str,
        /// The varint error, with its offset.
        source: VarintError,
    },
    /// A block's object count or byte size is negative or beyond [`MAX_BLOCK_SIZE`].
    #[error(
        "block {n} (starting at byte {start}): {what} {value} at byte {at} is invalid",
        n = .block + 1
    )]
    BlockValue {
        /// Block number, from 0.
        block: usize,
        /// Offset of the block's first byte.
        start: usize,
        /// `object count` or `byte size`.
        what: &'static str,
        /// The decoded value.
        value: i64,
        /// Offset of its varint.
        at: usize,
    },
    /// A block's data or sync marker runs past the end of the input.
    #[error(
        "block {n} (starting at byte {start}) cut short: its {what} needs bytes \
         {at}..{needed} but the input ends at {len}",
        n = .block + 1
    )]
    BlockTruncated {
        /// Block number, from 0.
        block: usize,
        /// Offset of the block's first byte.
        start: usize,
        /// `data` or `sync marker`.
        what: &'static str,
        /// Where that part starts.
        at: usize,
        /// Offset just past where it would end.
        needed: u64,
        /// Length of the input.
        len: usize,
    },
    /// Decompressed output would exceed the caller's budget.
    #[error("{codec} block decompresses to more than the budget of {budget} bytes{}",
        declared.map(|d| format!(" (declares {d})")).unwrap_or_default())]
    TooLarge {
        /// The block's codec.
        codec: Codec,
        /// The caller's budget.
        budget: usize,
        /// The uncompressed length the data declares, when the format declares one (Snappy).
        declared: Option<u64>,
    },
    /// The compressed data is corrupt or cut short.
    #[error("{codec} data is corrupt: {message}")]
    Corrupt {
        /// The block's codec.
        codec: Codec,
        /// What the decoder reported.
        message: String,
    },
    /// Snappy data is shorter than its 4-byte CRC trailer.
    #[error("snappy data of {len} bytes is shorter than its 4-byte CRC-32 trailer")]
    SnappyNoCrc {
        /// Length of the block data.
        len: usize,
    },
    /// The CRC-32 after a Snappy block does not match the uncompressed data.
    #[error("snappy CRC-32 mismatch: trailer says {expected:#010x}, data gives {actual:#010x}")]
    SnappyCrc {
        /// The CRC stored in the trailer.
        expected: u32,
        /// The CRC of the decompressed data.
        actual: u32,
    },
}

impl ContainerError {
    /// The byte of the input the fault is at, as near as the error knows it (0 for faults of
    /// the header as a whole, and of a block's decompressed data).
    pub fn offset(&self) -> usize {
        match self {
            ContainerError::HeaderTruncated { at, .. }
            | ContainerError::HeaderNegative { at, .. }
            | ContainerError::MapBlockSize { at, .. }
            | ContainerError::BlockValue { at, .. }
            | ContainerError::BlockTruncated { at, .. } => *at,
            ContainerError::HeaderVarint { source, .. }
            | ContainerError::BlockVarint { source, .. } => source.offset(),
            ContainerError::SchemaNotUtf8 { span } | ContainerError::UnknownCodec { span, .. } => {
                span.start
            }
            _ => 0,
        }
    }
}

/// One metadata entry of the header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaEntry {
    /// The key, lossily decoded if not UTF-8.
    pub key: String,
    /// The value bytes.
    pub value: Vec<u8>,
    /// The whole entry: key length, key, value length, value.
    pub span: Range<usize>,
    /// The key's bytes (after its length varint).
    pub key_span: Range<usize>,
    /// The value's bytes (after its length varint).
    pub value_span: Range<usize>,
}

/// The count (and, for a negative count, byte size) that opens a block of the metadata map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapBlockHeader {
    /// The count as written: negative when a byte size follows, 0 for the map's end.
    pub count: i64,
    /// The count varint.
    pub count_span: Range<usize>,
    /// The byte size varint and its value, present when `count` is negative.
    pub byte_size: Option<(i64, Range<usize>)>,
}

/// The parsed container header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The magic bytes (always `0..4`).
    pub magic: Range<usize>,
    /// The metadata entries, in file order (duplicates kept).
    pub metadata: Vec<MetaEntry>,
    /// The metadata map's block headers, including the final zero count.
    pub map_blocks: Vec<MapBlockHeader>,
    /// The whole metadata map.
    pub metadata_span: Range<usize>,
    /// The writer schema's JSON text (`avro.schema`; the first entry if repeated).
    pub schema_json: String,
    /// The block codec (`avro.codec`; [`Codec::Null`] if absent; the first entry if repeated).
    pub codec: Codec,
    /// The sync marker.
    pub sync: [u8; SYNC_LEN],
    /// Where the sync marker is.
    pub sync_span: Range<usize>,
    /// Where the first block starts (just past the sync marker).
    pub end: usize,
}

impl Header {
    /// The value of the first metadata entry with this key.
    pub fn get(&self, key: &str) -> Option<&MetaEntry> {
        self.metadata.iter().find(|e| e.key == key)
    }
}

fn header_truncated(what: &'static str, at: usize, len: u64, input: usize) -> ContainerError {
    ContainerError::HeaderTruncated {
        what,
        at,
        needed: (at as u64).saturating_add(len),
        len: input,
    }
}

/// Reads a length-prefixed byte string of the header; returns its span.
fn read_header_bytes(
    bytes: &[u8],
    at: usize,
    what: &'static str,
) -> Result<Range<usize>, ContainerError> {
    let (len, start) =
        read_long(bytes, at).map_err(|source| ContainerError::HeaderVarint { what, source })?;
    if len < 0 {
        return Err(ContainerError::HeaderNegative {
            what,
            value: len,
            at,
        });
    }
    let remaining = bytes.len() - start;
    if len as u64 > remaining as u64 {
        return Err(header_truncated(what, start, len as u64, bytes.len()));
    }
    Ok(start..start + len as usize)
}

/// Parses the header: magic, metadata map, sync marker.
///
/// Fails if the magic is wrong, the header is cut short or malformed, `avro.schema` is missing
/// or not UTF-8, or `avro.codec` names an unknown codec (the error names it).
pub fn read_header(bytes: &[u8]) -> Result<Header, ContainerError> {
    if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
        return Err(ContainerError::BadMagic {
            found: bytes[..bytes.len().min(MAGIC.len())].to_vec(),
        });
    }
    let mut pos = MAGIC.len();
    let mut metadata = Vec::new();
    let mut map_blocks = Vec::new();
    loop {
        let block_at = pos;
        let (count, after) =
            read_long(bytes, pos).map_err(|source| ContainerError::HeaderVarint {
                what: "metadata block count",
                source,
            })?;
        pos = after;
        let mut block = MapBlockHeader {
            count,
            count_span: block_at..after,
            byte_size: None,
        };
        if count == 0 {
            map_blocks.push(block);
            break;
        }
        let entries = if count < 0 {
            let (size, after) =
                read_long(bytes, pos).map_err(|source| ContainerError::HeaderVarint {
                    what: "metadata block byte size",
                    source,
                })?;
            if size < 0 {
                return Err(ContainerError::HeaderNegative {
                    what: "metadata block byte size",
                    value: size,
                    at: pos,
                });
            }
            block.byte_size = Some((size, pos..after));
            pos = after;
            count.unsigned_abs()
        } else {
            count as u64
        };
        let entries_start = pos;
        let declared = block.byte_size.as_ref().map(|(s, _)| *s);
        map_blocks.push(block);
        // Each entry consumes at least two bytes or fails, so this loop is bounded by the input.
        for _ in 0..entries {
            let entry_start = pos;
            let key_span = read_header_bytes(bytes, pos, "metadata key")?;
            let value_span = read_header_bytes(bytes, key_span.end, "metadata value")?;
            pos = value_span.end;
            metadata.push(MetaEntry {
                key: String::from_utf8_lossy(&bytes[key_span.clone()]).into_owned(),
                value: bytes[value_span.clone()].to_vec(),
                span: entry_start..pos,
                key_span,
                value_span,
            });
        }
        if let Some(declared) = declared {
            let actual = pos - entries_start;
            if declared as u64 != actual as u64 {
                return Err(ContainerError::MapBlockSize {
                    at: block_at,
                    declared,
                    actual,
                });
            }
        }
    }
    let metadata_span = MAGIC.len()..pos;
    let sync_span = pos..pos.saturating_add(SYNC_LEN);
    let Some(sync) = bytes
        .get(sync_span.clone())
        .and_then(|s| <[u8; SYNC_LEN]>::try_from(s).ok())
    else {
        return Err(header_truncated(
            "sync marker",
            pos,
            SYNC_LEN as u64,
            bytes.len(),
        ));
    };
    let schema = metadata
        .iter()
        .find(|e| e.key == "avro.schema")
        .ok_or(ContainerError::MissingSchema)?;
    let schema_json =
        String::from_utf8(schema.value.clone()).map_err(|_| ContainerError::SchemaNotUtf8 {
            span: schema.value_span.clone(),
        })?;
    let codec = match metadata.iter().find(|e| e.key == "avro.codec") {
        None => Codec::Null,
        Some(e) => Codec::from_name(&e.value).ok_or_else(|| ContainerError::UnknownCodec {
            name: String::from_utf8_lossy(&e.value).into_owned(),
            span: e.value_span.clone(),
        })?,
    };
    Ok(Header {
        magic: 0..MAGIC.len(),
        metadata,
        map_blocks,
        metadata_span,
        schema_json,
        codec,
        sync,
        end: sync_span.end,
        sync_span,
    })
}

/// How the iterator got back on track after a block whose sync marker was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resync {
    /// The bytes passed over: from the bad block's data start to where the next block starts
    /// (or to the end of the input if the marker was not found again).
    pub skipped: Range<usize>,
    /// The next occurrence of the header's sync marker, if any; the next block starts after it.
    pub found: Option<Range<usize>>,
}

/// One data block of a container file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Block number, from 0.
    pub index: usize,
    /// Offset of the block's first byte (its count varint).
    pub start: usize,
    /// Number of objects in the block.
    pub count: u64,
    /// The count varint.
    pub count_span: Range<usize>,
    /// Byte size of the (compressed) data.
    pub size: usize,
    /// The size varint.
    pub size_span: Range<usize>,
    /// The (compressed) data.
    pub data: Range<usize>,
    /// Where the sync marker should be.
    pub sync: Range<usize>,
    /// Whether the bytes there equal the header's sync marker.
    pub sync_ok: bool,
    /// Set when `sync_ok` is false: how the iterator found the next block, if it did. A bad
    /// marker usually means the size (or an earlier byte) is corrupt, so `data` is suspect.
    pub resync: Option<Resync>,
}

/// Iterator over the data blocks of a container file; see [`blocks`].
#[derive(Debug, Clone)]
pub struct Blocks<'a> {
    bytes: &'a [u8],
    sync: [u8; SYNC_LEN],
    pos: usize,
    index: usize,
    done: bool,
}

/// Iterates over the data blocks that follow `header` in `bytes`.
///
/// Stops when the input ends exactly at a block boundary. A block whose sync marker is wrong
/// is yielded with `sync_ok == false`; the iterator then searches the header's sync marker from
/// that block's data start on and resumes just past it ([`Block::resync`] says what was
/// skipped), or ends if there is none. A malformed or cut-short block is an `Err` naming the
/// block and offsets, after which the iterator ends.
pub fn blocks<'a>(bytes: &'a [u8], header: &Header) -> Blocks<'a> {
    Blocks {
        bytes,
        sync: header.sync,
        pos: header.end,
        index: 0,
        done: false,
    }
}

fn find(haystack: &[u8], needle: &[u8; SYNC_LEN], from: usize) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(SYNC_LEN)
        .position(|w| w == needle)
        .map(|p| p + from)
}

impl Blocks<'_> {
    fn next_block(&mut self) -> Result<Option<Block>, ContainerError> {
        let bytes = self.bytes;
        let start = self.pos;
        if start >= bytes.len() {
            return Ok(None);
        }
        let block = self.index;
        let varint = |what: &'static str| {
            move |source| ContainerError::BlockVarint {
                block,
                start,
                what,
                source,
            }
        };
        let value = |what: &'static str, value: i64, at: usize| ContainerError::BlockValue {
            block,
            start,
            what,
            value,
            at,
        };
        let (count, after_count) = read_long(bytes, start).map_err(varint("object count"))?;
        if count < 0 {
            return Err(value("object count", count, start));
        }
        let (size, data_start) = read_long(bytes, after_count).map_err(varint("byte size"))?;
        if size < 0 || size as u64 > MAX_BLOCK_SIZE {
            return Err(value("byte size", size, after_count));
        }
        let truncated = |what: &'static str, at: usize, len: u64| ContainerError::BlockTruncated {
            block,
            start,
            what,
            at,
            needed: (at as u64).saturating_add(len),
            len: bytes.len(),
        };
        let remaining = bytes.len() - data_start;
        if size as u64 > remaining as u64 {
            return Err(truncated("data", data_start, size as u64));
        }
        let data_end = data_start + size as usize;
        if bytes.len() - data_end < SYNC_LEN {
            return Err(truncated("sync marker", data_end, SYNC_LEN as u64));
        }
        let sync = data_end..data_end + SYNC_LEN;
        let sync_ok = bytes[sync.clone()] == self.sync;
        let resync = if sync_ok {
            self.pos = sync.end;
            None
        } else {
            let found = find(bytes, &self.sync, data_start).map(|m| m..m + SYNC_LEN);
            let next = match &found {
                Some(m) => m.end,
                None => {
                    self.done = true;
                    bytes.len()
                }
            };
            self.pos = next;
            Some(Resync {
                skipped: data_start..next,
                found,
            })
        };
        self.index += 1;
        Ok(Some(Block {
            index: block,
            start,
            count: count as u64,
            count_span: start..after_count,
            size: size as usize,
            size_span: after_count..data_start,
            data: data_start..data_end,
            sync,
            sync_ok,
            resync,
        }))
    }
}

impl std::iter::FusedIterator for Blocks<'_> {}

impl Iterator for Blocks<'_> {
    type Item = Result<Block, ContainerError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_block() {
            Ok(Some(b)) => Some(Ok(b)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Chunk size for streaming decoders.
const CHUNK: usize = 64 * 1024;

/// Floor of the Zstandard window accepted whatever the budget: 8 MiB, what `zstd -19` declares
/// for streamed input. The decoder allocates the window the frame declares, up to this limit.
const ZSTD_MIN_WINDOW_LOG: u32 = 23;

/// Floor of the memory the xz decoder may use whatever the budget: enough for preset 9
/// (64 MiB dictionary), which apache-avro writes by default. liblzma allocates the dictionary
/// the stream declares, up to this limit; pages are only touched as output is produced.
const XZ_MIN_MEMLIMIT: u64 = 80 << 20;

fn corrupt(codec: Codec, e: impl fmt::Display) -> ContainerError {
    ContainerError::Corrupt {
        codec,
        message: e.to_string(),
    }
}

/// Reads `r` to its end, failing with `TooLarge` as soon as more than `budget` bytes come out.
/// The buffer grows geometrically but never beyond `budget + CHUNK` bytes of capacity.
fn read_bounded(mut r: impl Read, codec: Codec, budget: usize) -> Result<Vec<u8>, ContainerError> {
    let mut out: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let n = match r.read(&mut chunk) {
            Ok(0) => return Ok(out),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(corrupt(codec, e)),
        };
        if n > budget - out.len() {
            return Err(ContainerError::TooLarge {
                codec,
                budget,
                declared: None,
            });
        }
        let needed = out.len() + n;
        if needed > out.capacity() {
            let target = out.capacity().saturating_mul(2).min(budget).max(needed);
            out.reserve_exact(target - out.len());
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

/// Decompresses one block's data with `codec`.
///
/// `null` data is borrowed. Output beyond `budget` bytes fails with
/// [`ContainerError::TooLarge`] as soon as it is produced, so at most about `budget` bytes (plus
/// a 64 KiB chunk) are ever held; Snappy's declared length is checked against the budget before
/// anything is allocated. Decoder state declared by the stream is also capped: the Zstandard
/// window at the larger of the budget and 8 MiB, the xz decoder's memory at the larger of the
/// budget and 80 MiB (both reserved, not touched, until output is produced).
pub fn decompress(
    codec: Codec,
    data: &[u8],
    budget: usize,
) -> Result<Cow<'_, [u8]>, ContainerError> {
    let too_large = |declared: Option<u64>| ContainerError::TooLarge {
        codec,
        budget,
        declared,
    };
    let out = match codec {
        Codec::Null => {
            if data.len() > budget {
                return Err(too_large(Some(data.len() as u64)));
            }
            return Ok(Cow::Borrowed(data));
        }
        Codec::Deflate => read_bounded(flate2::read::DeflateDecoder::new(data), codec, budget)?,
        Codec::Snappy => {
            let Some(split) = data.len().checked_sub(4) else {
                return Err(ContainerError::SnappyNoCrc { len: data.len() });
            };
            let (block, crc) = data.split_at(split);
            let expected = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
            let declared = snap::raw::decompress_len(block).map_err(|e| corrupt(codec, e))?;
            if declared > budget {
                return Err(too_large(Some(declared as u64)));
            }
            let mut out = vec![0u8; declared];
            let n = snap::raw::Decoder::new()
                .decompress(block, &mut out)
                .map_err(|e| corrupt(codec, e))?;
            out.truncate(n);
            let actual = crc32fast::hash(&out);
            if actual != expected {
                return Err(ContainerError::SnappyCrc { expected, actual });
            }
            out
        }
        Codec::Zstandard => {
            let mut dec =
                zstd::stream::read::Decoder::with_buffer(data).map_err(|e| corrupt(codec, e))?;
            // ceil(log2(budget)): the smallest window that can hold the whole budget.
            let log = usize::BITS - budget.saturating_sub(1).leading_zeros();
            dec.window_log_max(log.clamp(ZSTD_MIN_WINDOW_LOG, 31))
                .map_err(|e| corrupt(codec, e))?;
            read_bounded(dec, codec, budget)?
        }
        Codec::Bzip2 => read_bounded(bzip2::read::BzDecoder::new(data), codec, budget)?,
        Codec::Xz => {
            let memlimit = (budget as u64).max(XZ_MIN_MEMLIMIT);
            let stream = liblzma::stream::Stream::new_stream_decoder(memlimit, 0)
                .map_err(|e| corrupt(codec, e))?;
            read_bounded(
                liblzma::read::XzDecoder::new_stream(data, stream),
                codec,
                budget,
            )?
        }
    };
    Ok(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    #![allow(deprecated)] // apache_avro::from_avro_datum, kept in 0.22 behind a deprecation

    use super::*;
    use apache_avro::types::Value;
    use apache_avro::Schema;
    use std::path::PathBuf;
    use std::time::Instant;

    const MIB: usize = 1 << 20;

    fn testdata(name: &str) -> Vec<u8> {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/avro/container-tests")
            .join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// Parses a whole file: the header, then every block decompressed and decoded with
    /// apache-avro. Returns the blocks, their decompressed data and all decoded values.
    fn parse_all(bytes: &[u8]) -> (Header, Vec<Block>, Vec<Vec<u8>>, Vec<Value>) {
        let header = read_header(bytes).expect("header");
        let schema = Schema::parse_str(&header.schema_json).expect("schema parses");
        let mut all = Vec::new();
        let mut datas = Vec::new();
        let mut values = Vec::new();
        for block in blocks(bytes, &header) {
            let block = block.expect("block");
            assert!(block.sync_ok, "block {} sync", block.index);
            let data = decompress(header.codec, &bytes[block.data.clone()], 64 * MIB)
                .expect("decompress")
                .into_owned();
            let mut cursor = &data[..];
            for _ in 0..block.count {
                values
                    .push(apache_avro::from_avro_datum(&schema, &mut cursor, None).expect("datum"));
            }
            assert!(
                cursor.is_empty(),
                "block {} has trailing bytes",
                block.index
            );
            datas.push(data);
            all.push(block);
        }
        (header, all, datas, values)
    }

    fn apache_codecs() -> Vec<(Codec, apache_avro::Codec)> {
        use apache_avro::{Bzip2Settings, DeflateSettings, XzSettings, ZstandardSettings};
        vec![
            (Codec::Null, apache_avro::Codec::Null),
            (
                Codec::Deflate,
                apache_avro::Codec::Deflate(DeflateSettings::default()),
            ),
            (Codec::Snappy, apache_avro::Codec::Snappy),
            (
                Codec::Zstandard,
                apache_avro::Codec::Zstandard(ZstandardSettings::default()),
            ),
            (
                Codec::Bzip2,
                apache_avro::Codec::Bzip2(Bzip2Settings::default()),
            ),
            (Codec::Xz, apache_avro::Codec::Xz(XzSettings::default())),
        ]
    }

    const SCHEMA: &str = r#"{"type":"record","name":"Row","namespace":"t","fields":[
        {"name":"id","type":"long"},{"name":"label","type":"string"},
        {"name":"blob","type":["null","bytes"]}]}"#;

    fn row(i: i64) -> Value {
        Value::Record(vec![
            ("id".into(), Value::Long(i * 1_000_003 - 77)),
            ("label".into(), Value::String(format!("row number {i}"))),
            (
                "blob".into(),
                Value::Union(
                    (i % 2) as u32,
                    Box::new(if i % 2 == 0 {
                        Value::Null
                    } else {
                        Value::Bytes(vec![i as u8; (i % 50) as usize])
                    }),
                ),
            ),
        ])
    }

    /// Writes `n` rows with apache-avro's Writer, flushing every `per_block` rows.
    fn apache_file(codec: apache_avro::Codec, n: i64, per_block: i64) -> Vec<u8> {
        let schema = Schema::parse_str(SCHEMA).expect("schema");
        let mut w = apache_avro::Writer::with_codec(&schema, Vec::new(), codec).expect("writer");
        w.add_user_metadata("wirelens.test".into(), b"\x00\xffbytes")
            .expect("metadata");
        for i in 0..n {
            w.append(row(i)).expect("append");
            if (i + 1) % per_block == 0 {
                w.flush().expect("flush");
            }
        }
        w.into_inner().expect("into_inner")
    }

    #[test]
    fn apache_avro_files_every_codec() {
        let schema = Schema::parse_str(SCHEMA).expect("schema");
        for (ours, theirs) in apache_codecs() {
            let bytes = apache_file(theirs, 500, 120);
            let (header, blocks, datas, values) = parse_all(&bytes);
            assert_eq!(header.codec, ours);
            assert_eq!(header.magic, 0..4);
            assert_eq!(
                Schema::parse_str(&header.schema_json).expect("parses"),
                schema,
                "{ours}"
            );
            let entry = header.get("avro.schema").expect("schema entry");
            assert_eq!(
                header.schema_json.as_bytes(),
                &bytes[entry.value_span.clone()]
            );
            let reader = apache_avro::Reader::new(&bytes[..]).expect("reader");
            assert_eq!(reader.writer_schema(), &schema);
            let extra = header.get("wirelens.test").expect("user metadata");
            assert_eq!(extra.value, b"\x00\xffbytes");
            assert_eq!(&bytes[extra.value_span.clone()], b"\x00\xffbytes");
            assert_eq!(&bytes[extra.key_span.clone()], b"wirelens.test");
            assert_eq!(header.sync_span.end, header.end);
            assert_eq!(&bytes[header.sync_span.clone()], &header.sync);
            // 500 rows flushed every 120: 4 full blocks and a last one of 20.
            let counts: Vec<u64> = blocks.iter().map(|b| b.count).collect();
            assert_eq!(counts, vec![120, 120, 120, 120, 20], "{ours}");
            assert_eq!(blocks.last().map(|b| b.sync.end), Some(bytes.len()));
            for (i, b) in blocks.iter().enumerate() {
                assert_eq!(b.index, i);
                assert_eq!(b.data.len(), b.size);
                assert!(b.resync.is_none());
            }
            // Decoded values equal what was written and what apache-avro's reader reads.
            let written: Vec<Value> = (0..500).map(row).collect();
            assert_eq!(values, written, "{ours}");
            let reread: Vec<Value> = apache_avro::Reader::new(&bytes[..])
                .expect("reader")
                .map(|v| v.expect("value"))
                .collect();
            assert_eq!(values, reread);
            let total: usize = datas.iter().map(Vec::len).sum();
            let expected: usize = written
                .iter()
                .map(|v| {
                    apache_avro::to_avro_datum(&schema, v.clone())
                        .expect("encode")
                        .len()
                })
                .sum();
            assert_eq!(total, expected, "{ours}");
        }
    }

    #[test]
    fn fastavro_files_every_codec() {
        let schema_text = String::from_utf8(testdata("fastavro-schema.json")).expect("utf-8");
        let expect = String::from_utf8(testdata("fastavro-expect.txt")).expect("utf-8");
        let mut seen = 0;
        for codec in ["null", "deflate", "snappy", "zstandard", "bzip2", "xz"] {
            let bytes = testdata(&format!("fastavro-{codec}.avro"));
            let (header, blocks, datas, values) = parse_all(&bytes);
            assert_eq!(header.codec.name(), codec);
            assert_eq!(header.schema_json, schema_text);
            assert_eq!(
                header.get("wirelens.note").map(|e| e.value.as_slice()),
                Some(&b"generated by gen_fastavro.py"[..])
            );
            // fastavro's block_reader: records, whole block size, decompressed length.
            let rows: Vec<(u64, usize, usize)> = expect
                .lines()
                .filter_map(|l| {
                    let mut f = l.split(' ');
                    (f.next() == Some(codec)).then(|| {
                        let mut n = f.map(|x| x.parse::<usize>().expect("number"));
                        (
                            n.next().expect("count") as u64,
                            n.next().expect("size"),
                            n.next().expect("len"),
                        )
                    })
                })
                .collect();
            let ours: Vec<(u64, usize, usize)> = blocks
                .iter()
                .zip(&datas)
                .map(|(b, d)| (b.count, b.sync.end - b.start, d.len()))
                .collect();
            assert_eq!(ours, rows, "{codec}");
            assert_eq!(values.len(), 1000, "{codec}");
            let reread: Vec<Value> = apache_avro::Reader::new(&bytes[..])
                .expect("reader")
                .map(|v| v.expect("value"))
                .collect();
            assert_eq!(values, reread, "{codec}");
            seen += 1;
        }
        assert_eq!(seen, 6);
    }

    #[test]
    fn truncated_at_every_offset() {
        for (ours, theirs) in apache_codecs() {
            let bytes = apache_file(theirs, 12, 5);
            let full = blocks(&bytes, &read_header(&bytes).expect("header")).count();
            assert_eq!(full, 3);
            for n in 0..bytes.len() {
                let cut = &bytes[..n];
                let Ok(header) = read_header(cut) else {
                    continue;
                };
                let mut ok = 0;
                let mut errors = 0;
                for b in blocks(cut, &header) {
                    match b {
                        Ok(b) => {
                            assert!(b.sync_ok);
                            assert!(b.sync.end <= n);
                            let _ = decompress(header.codec, &cut[b.data], MIB);
                            ok += 1;
                        }
                        Err(e) => {
                            let text = e.to_string();
                            // Numbered from 1: the block after the `ok` whole ones.
                            let number = ok + 1;
                            assert!(
                                text.contains(&format!("block {number} ")),
                                "{ours} {n}: {text}"
                            );
                            errors += 1;
                        }
                    }
                }
                assert!(errors <= 1);
                assert!(ok < full || n == bytes.len());
                // Cut inside a block: exactly one error; cut at a block boundary: none.
                if ok + errors == 0 {
                    assert_eq!(n, header.end);
                }
            }
            // The data of every block cut short: an error, never a panic.
            let header = read_header(&bytes).expect("header");
            for b in blocks(&bytes, &header) {
                let b = b.expect("block");
                let data = &bytes[b.data];
                for n in 0..data.len() {
                    let got = decompress(ours, &data[..n], MIB);
                    // Every compressed format notices that its end is missing.
                    assert!(ours == Codec::Null || got.is_err(), "{ours} cut at {n}");
                }
            }
        }
    }

    #[test]
    fn header_errors() {
        let bytes = apache_file(apache_avro::Codec::Null, 3, 10);
        assert!(matches!(
            read_header(b"Obj"),
            Err(ContainerError::BadMagic { .. })
        ));
        assert!(matches!(
            read_header(b"Obj\x02\x00"),
            Err(ContainerError::BadMagic { .. })
        ));
        // Missing schema, unknown codec, bad schema text.
        let mut h = b"Obj\x01".to_vec();
        h.extend([0x02, 0x14]);
        h.extend(b"avro.codec");
        h.extend([0x0A]);
        h.extend(b"lz4xx");
        h.push(0);
        h.extend([0xAB; 16]);
        assert_eq!(read_header(&h), Err(ContainerError::MissingSchema));
        let mut h = b"Obj\x01".to_vec();
        h.extend([0x04, 0x14]);
        h.extend(b"avro.codec");
        h.extend([0x0A]);
        h.extend(b"lz4xx");
        h.extend([0x16]);
        h.extend(b"avro.schema");
        h.extend([0x0C]);
        h.extend(b"\"null\"");
        h.push(0);
        h.extend([0xAB; 16]);
        let err = read_header(&h).expect_err("unknown codec");
        assert!(err.to_string().contains("\"lz4xx\""), "{err}");
        // Same entries in a negative-count block with the right byte size: accepted up to the
        // codec error; with a wrong byte size: MapBlockSize.
        let entries = &h[5..h.len() - 17];
        let mut neg = b"Obj\x01".to_vec();
        neg.extend([0x03, (entries.len() * 2) as u8]);
        neg.extend(entries);
        neg.push(0);
        neg.extend([0xAB; 16]);
        assert!(matches!(
            read_header(&neg),
            Err(ContainerError::UnknownCodec { .. })
        ));
        neg[5] += 2;
        assert!(matches!(
            read_header(&neg),
            Err(ContainerError::MapBlockSize { .. })
        ));
        // i64::MIN map block count, and an 11-byte varint as the count.
        let mut h = b"Obj\x01".to_vec();
        h.extend([
            0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x00,
        ]);
        assert!(read_header(&h).is_err());
        let mut h = b"Obj\x01".to_vec();
        h.extend([0x80; 10]);
        h.push(0x00);
        let err = read_header(&h).expect_err("overlong");
        assert!(matches!(
            err,
            ContainerError::HeaderVarint {
                source: VarintError::Overlong { at: 4 },
                ..
            }
        ));
        // Huge key length.
        let mut h = b"Obj\x01\x02".to_vec();
        h.extend([0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]);
        let err = read_header(&h).expect_err("huge key");
        assert!(
            matches!(
                err,
                ContainerError::HeaderTruncated {
                    what: "metadata key",
                    at: 15,
                    ..
                }
            ),
            "{err}"
        );
        // Huge entry count with nothing behind it.
        let mut h = b"Obj\x01".to_vec();
        h.extend([0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]);
        assert!(read_header(&h).is_err());
        // A valid header is still valid.
        assert!(read_header(&bytes).is_ok());
    }

    #[test]
    fn block_errors() {
        let bytes = apache_file(apache_avro::Codec::Null, 3, 10);
        let header = read_header(&bytes).expect("header");
        let head = &bytes[..header.end];
        let with = |tail: &[u8]| {
            let mut v = head.to_vec();
            v.extend_from_slice(tail);
            v
        };
        let collect = |v: &[u8]| blocks(v, &header).collect::<Vec<_>>();
        // No blocks at all.
        assert!(collect(head).is_empty());
        // Negative count, negative size, absurd size, 11-byte varints, huge size.
        let cases: Vec<Vec<u8>> = vec![
            vec![0x01, 0x00],
            vec![0x02, 0x01],
            vec![0x02, 0xFE, 0xFF, 0xFF, 0xFF, 0x0F],
            vec![
                0x02, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01,
            ],
            [vec![0x80; 10], vec![0x00, 0x00]].concat(),
            [vec![0x02], vec![0x80; 10], vec![0x00]].concat(),
            vec![0x02, 0x80, 0x80, 0x80, 0x80, 0x04],
            vec![0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],
        ];
        for case in cases {
            let v = with(&case);
            let got = collect(&v);
            assert_eq!(got.len(), 1, "{case:02x?}");
            let err = got[0].clone().expect_err("error");
            // Blocks are numbered from 1 for the user, as the peeled layers number them.
            assert!(err.to_string().contains("block 1 "), "{err}");
        }
        // A huge but valid object count with an empty block is fine (no allocation by count).
        let mut tail = vec![
            0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x00,
        ];
        tail.extend(header.sync);
        let v = with(&tail);
        let got = collect(&v);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].as_ref().map(|b| b.count), Ok(i64::MAX as u64));
        // Size naming the offsets.
        let v = with(&[0x02, 0x10, 1, 2]);
        let err = collect(&v).remove(0).expect_err("short");
        assert_eq!(
            err,
            ContainerError::BlockTruncated {
                block: 0,
                start: header.end,
                what: "data",
                at: header.end + 2,
                needed: header.end as u64 + 10,
                len: header.end + 4,
            }
        );
    }

    #[test]
    fn wrong_sync_resyncs() {
        let mut bytes = apache_file(apache_avro::Codec::Deflate(Default::default()), 50, 10);
        let header = read_header(&bytes).expect("header");
        let good: Vec<Block> = blocks(&bytes, &header).map(|b| b.expect("block")).collect();
        assert_eq!(good.len(), 5);
        // Corrupt block 1's sync marker: block 1 is reported bad, block 2 is skipped by the
        // search (its marker is the next occurrence), blocks 3 and 4 are read again.
        bytes[good[1].sync.start + 3] ^= 0x55;
        let got: Vec<Block> = blocks(&bytes, &header).map(|b| b.expect("block")).collect();
        assert_eq!(got.len(), 4);
        assert!(got[0].sync_ok);
        assert!(!got[1].sync_ok);
        let resync = got[1].resync.clone().expect("resync");
        assert_eq!(resync.found, Some(good[2].sync.clone()));
        assert_eq!(resync.skipped, good[1].data.start..good[2].sync.end);
        assert_eq!(got[2].start, good[3].start);
        assert_eq!(got[2].index, 2);
        assert!(got[2].sync_ok && got[3].sync_ok);
        assert_eq!(got[3].sync.end, bytes.len());

        // A corrupt size (claims one byte less) leaves the marker inside the claimed range; the
        // search finds it and the following blocks are all read.
        let mut bytes = apache_file(apache_avro::Codec::Null, 50, 10);
        let header = read_header(&bytes).expect("header");
        let good: Vec<Block> = blocks(&bytes, &header).map(|b| b.expect("block")).collect();
        let size_at = good[1].size_span.start;
        assert_eq!(good[1].size_span.len(), 2);
        bytes[size_at] -= 2; // zigzag: size - 1
        let got: Vec<Block> = blocks(&bytes, &header).map(|b| b.expect("block")).collect();
        assert_eq!(got.len(), 5);
        assert!(!got[1].sync_ok);
        assert_eq!(
            got[1].resync.as_ref().and_then(|r| r.found.clone()),
            Some(good[1].sync.clone())
        );
        assert_eq!(got[2].start, good[2].start);
        assert!(got[2..].iter().all(|b| b.sync_ok));

        // Marker never found again: one bad block, then the end.
        let n = bytes.len();
        bytes[n - 1] ^= 1;
        let mut bytes2 = apache_file(apache_avro::Codec::Null, 5, 10);
        let n2 = bytes2.len();
        bytes2[n2 - 1] ^= 1;
        let header2 = read_header(&bytes2).expect("header");
        let got: Vec<_> = blocks(&bytes2, &header2).collect();
        assert_eq!(got.len(), 1);
        let b = got[0].clone().expect("block");
        assert!(!b.sync_ok);
        assert_eq!(
            b.resync,
            Some(Resync {
                skipped: b.data.start..n2,
                found: None
            })
        );
    }

    #[test]
    fn snappy_checks() {
        let raw = b"hello hello hello hello snappy".to_vec();
        let mut data = snap::raw::Encoder::new()
            .compress_vec(&raw)
            .expect("compress");
        data.extend(crc32fast::hash(&raw).to_be_bytes());
        assert_eq!(
            decompress(Codec::Snappy, &data, 1024).expect("ok").as_ref(),
            &raw[..]
        );
        assert!(matches!(
            decompress(Codec::Snappy, &data, 10),
            Err(ContainerError::TooLarge {
                budget: 10,
                declared: Some(30),
                ..
            })
        ));
        let n = data.len();
        data[n - 1] ^= 1;
        assert!(matches!(
            decompress(Codec::Snappy, &data, 1024),
            Err(ContainerError::SnappyCrc { .. })
        ));
        assert_eq!(
            decompress(Codec::Snappy, &[1, 2], 1024),
            Err(ContainerError::SnappyNoCrc { len: 2 })
        );
        // Declared length of 4 GiB - 1: refused before any allocation.
        let bomb = [0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0, 0, 0, 0];
        assert!(matches!(
            decompress(Codec::Snappy, &bomb, 16 * MIB),
            Err(ContainerError::TooLarge {
                declared: Some(0xFFFF_FFFF),
                ..
            })
        ));
        assert!(matches!(
            decompress(Codec::Null, &[0; 10], 9),
            Err(ContainerError::TooLarge { .. })
        ));
        assert!(matches!(
            decompress(Codec::Deflate, &[0xFF; 10], 1024),
            Err(ContainerError::Corrupt { .. })
        ));
    }

    /// Raw deflate of 1 GiB of zeros: a fully flushed 1 MiB chunk (which refers to nothing
    /// before it) repeated 1024 times, then the final block.
    fn deflate_bomb() -> Vec<u8> {
        use flate2::{Compress, Compression, FlushCompress};
        let mut c = Compress::new(Compression::best(), false);
        let zeros = vec![0u8; MIB];
        let mut run = |input: &[u8], flush| {
            let mut out = Vec::with_capacity(64 * 1024);
            c.compress_vec(input, &mut out, flush).expect("compress");
            out
        };
        let _first = run(&zeros, FlushCompress::Full);
        let chunk = run(&zeros, FlushCompress::Full);
        let end = run(&[], FlushCompress::Finish);
        let mut bomb = Vec::with_capacity(chunk.len() * 1024 + end.len());
        for _ in 0..1024 {
            bomb.extend_from_slice(&chunk);
        }
        bomb.extend_from_slice(&end);
        bomb
    }

    /// Each bomb really inflates to 1 GiB (streamed to a sink; slow in debug builds).
    #[test]
    #[ignore = "inflates 4 GiB in all; run with --ignored"]
    fn bombs_are_one_gib() {
        let sizes = [
            std::io::copy(
                &mut flate2::read::DeflateDecoder::new(&deflate_bomb()[..]),
                &mut std::io::sink(),
            ),
            std::io::copy(
                &mut zstd::stream::read::Decoder::new(&testdata("bomb.zstd")[..]).expect("zstd"),
                &mut std::io::sink(),
            ),
            std::io::copy(
                &mut bzip2::read::BzDecoder::new(&testdata("bomb.bzip2")[..]),
                &mut std::io::sink(),
            ),
            std::io::copy(
                &mut liblzma::read::XzDecoder::new(&testdata("bomb.xz")[..]),
                &mut std::io::sink(),
            ),
        ];
        for size in sizes {
            assert_eq!(size.expect("inflates"), 1 << 30);
        }
    }

    #[test]
    fn bombs_fail_fast() {
        let budget = 16 * MIB;
        let deflate = deflate_bomb();
        for (codec, data) in [
            (Codec::Deflate, deflate),
            (Codec::Zstandard, testdata("bomb.zstd")),
            (Codec::Bzip2, testdata("bomb.bzip2")),
            (Codec::Xz, testdata("bomb.xz")),
        ] {
            let t = Instant::now();
            let err = decompress(codec, &data, budget).expect_err("bomb");
            assert_eq!(
                err,
                ContainerError::TooLarge {
                    codec,
                    budget,
                    declared: None
                }
            );
            eprintln!(
                "bomb {codec}: {} compressed bytes, TooLarge in {:?}",
                data.len(),
                t.elapsed()
            );
            // Just under and exactly at the budget is fine on a smaller slice of zeros.
            let small = match codec {
                Codec::Deflate => {
                    let mut e =
                        flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
                    std::io::Write::write_all(&mut e, &[0u8; 5000]).expect("write");
                    e.finish().expect("finish")
                }
                Codec::Zstandard => zstd::bulk::compress(&[0u8; 5000], 3).expect("zstd"),
                Codec::Bzip2 => {
                    let mut out = Vec::new();
                    bzip2::read::BzEncoder::new(&[0u8; 5000][..], bzip2::Compression::fast())
                        .read_to_end(&mut out)
                        .expect("bzip2");
                    out
                }
                _ => {
                    let mut out = Vec::new();
                    liblzma::read::XzEncoder::new(&[0u8; 5000][..], 6)
                        .read_to_end(&mut out)
                        .expect("xz");
                    out
                }
            };
            assert_eq!(decompress(codec, &small, 5000).expect("fits").len(), 5000);
            assert!(matches!(
                decompress(codec, &small, 4999),
                Err(ContainerError::TooLarge { .. })
            ));
        }
    }
}
