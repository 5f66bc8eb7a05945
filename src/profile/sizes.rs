//! How many bytes a payload takes in each format, raw and compressed.
//!
//! [`compressed_sizes`] is cheap enough to call on its own (the GUI shows size bars as soon as a
//! file opens): gzip at level 6 (the usual HTTP server default), zstd at level 3 (its default)
//! and brotli at quality 6 with a 4 MiB window (what web servers commonly use for dynamic
//! responses; quality 11 is for static assets compressed once). [`FormatSizes`] is one format's
//! line of a report: bytes, compressed bytes, ratio to JSON, fidelity notes.
//!
//! Compression never fails on in-memory data; if an encoder did report an error, its size is
//! `None` rather than a made-up number.

use std::io::Write;

use serde::Serialize;

use crate::codec::Format;

/// gzip level used for every report.
pub const GZIP_LEVEL: u32 = 6;
/// zstd level used for every report.
pub const ZSTD_LEVEL: i32 = 3;
/// brotli quality (0–11) used for every report.
pub const BROTLI_QUALITY: u32 = 6;
/// brotli window (log2 of its size in bytes).
pub const BROTLI_WINDOW: u32 = 22;

/// One buffer's size raw and after each compressor (`None`: that compressor failed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Compressed {
    /// Bytes as they are.
    pub raw: usize,
    /// After gzip, level [`GZIP_LEVEL`].
    pub gzip: Option<usize>,
    /// After zstd, level [`ZSTD_LEVEL`].
    pub zstd: Option<usize>,
    /// After brotli, quality [`BROTLI_QUALITY`].
    pub brotli: Option<usize>,
}

/// Sizes of `bytes` raw and compressed with gzip, zstd and brotli at the levels above.
pub fn compressed_sizes(bytes: &[u8]) -> Compressed {
    Compressed {
        raw: bytes.len(),
        gzip: gzip_size(bytes).ok(),
        zstd: zstd_size(bytes).ok(),
        brotli: brotli_size(bytes).ok(),
    }
}

/// [`compressed_sizes`] computed with the gzipped bytes kept.
#[derive(Debug)]
pub struct Gzipped {
    /// The sizes.
    pub sizes: Compressed,
    /// The gzipped bytes (the profiler times decompressing them).
    pub gzip: std::io::Result<Vec<u8>>,
    /// Seconds gzip took (the warm-up of the profiler's gzip timing, which compresses the
    /// same bytes the same way).
    pub gzip_seconds: f64,
}

/// [`compressed_sizes`] with the three compressors side by side on the current rayon pool (the
/// profiler's), and the gzipped bytes kept.
pub fn compressed_sizes_and_gzip(bytes: &[u8]) -> Gzipped {
    let ((gz, gzip_seconds), (zstd, brotli)) = rayon::join(
        || {
            let t = std::time::Instant::now();
            let gz = gzip(bytes);
            (gz, t.elapsed().as_secs_f64())
        },
        || rayon::join(|| zstd_size(bytes), || brotli_size(bytes)),
    );
    let sizes = Compressed {
        raw: bytes.len(),
        gzip: gz.as_ref().ok().map(Vec::len),
        zstd: zstd.ok(),
        brotli: brotli.ok(),
    };
    Gzipped {
        sizes,
        gzip: gz,
        gzip_seconds,
    }
}

/// A writer that keeps nothing and counts what it is given: compressed sizes without holding
/// the compressed bytes (a 100 MB file's zstd output buffer is sized for the worst case, more
/// than the file).
#[derive(Debug, Default)]
struct Counter(usize);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The pieces a compressor is given `bytes` in.
const PIECE: usize = 1 << 20;

/// Writes `bytes` to the compressor `w` a piece at a time, giving back each piece's pages once
/// it is written when `bytes` are a mapped file's ([`crate::mapped::let_go`]), so measuring a
/// large mapped document does not leave all of it resident. A compressor's output does not
/// depend on how its input is split into writes.
fn write_in_pieces(w: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    for piece in bytes.chunks(PIECE) {
        w.write_all(piece)?;
        crate::mapped::let_go(piece);
    }
    Ok(())
}

/// `bytes` gzipped at [`GZIP_LEVEL`] into `out`, which is returned.
fn gzip_into<W: Write>(bytes: &[u8], out: W) -> std::io::Result<W> {
    let mut enc = flate2::write::GzEncoder::new(out, flate2::Compression::new(GZIP_LEVEL));
    write_in_pieces(&mut enc, bytes)?;
    enc.finish()
}

/// `bytes` compressed with brotli at [`BROTLI_QUALITY`] into `out`.
fn brotli_into<W: Write>(bytes: &[u8], out: &mut W) -> std::io::Result<()> {
    let mut w = brotli::CompressorWriter::new(out, 4096, BROTLI_QUALITY, BROTLI_WINDOW);
    write_in_pieces(&mut w, bytes)?;
    w.flush()
}

/// The size of `bytes` after gzip at [`GZIP_LEVEL`].
pub fn gzip_size(bytes: &[u8]) -> std::io::Result<usize> {
    Ok(gzip_into(bytes, Counter::default())?.0)
}

/// The size of `bytes` after zstd at [`ZSTD_LEVEL`].
pub fn zstd_size(bytes: &[u8]) -> std::io::Result<usize> {
    let mut enc = zstd::stream::write::Encoder::new(Counter::default(), ZSTD_LEVEL)?;
    // Told the size up front, zstd picks the parameters and frame header a one-shot compression
    // of the same bytes would, so the size is the same.
    enc.set_pledged_src_size(Some(bytes.len() as u64))?;
    write_in_pieces(&mut enc, bytes)?;
    Ok(enc.finish()?.0)
}

/// The size of `bytes` after brotli at [`BROTLI_QUALITY`].
pub fn brotli_size(bytes: &[u8]) -> std::io::Result<usize> {
    let mut count = Counter::default();
    brotli_into(bytes, &mut count)?;
    Ok(count.0)
}

/// `bytes` compressed with gzip at [`GZIP_LEVEL`].
pub fn gzip(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    gzip_into(bytes, Vec::with_capacity(bytes.len() / 4 + 64))
}

/// `bytes` compressed with brotli at [`BROTLI_QUALITY`].
pub fn brotli(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len() / 4 + 64);
    brotli_into(bytes, &mut out)?;
    Ok(out)
}

/// Where a protobuf schema came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SchemaSource {
    /// The user named the message type (`--proto`/`--descriptor-set` with `--message`, or the
    /// input was protobuf decoded with a schema).
    Given,
    /// wirelens inferred one from the value.
    Inferred,
    /// The format needs no schema.
    None,
}

impl SchemaSource {
    /// `given`, `inferred` or `none`.
    pub fn name(self) -> &'static str {
        match self {
            SchemaSource::Given => "given",
            SchemaSource::Inferred => "inferred",
            SchemaSource::None => "none",
        }
    }
}

/// One format's sizes in a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FormatSizes {
    /// The format.
    #[serde(serialize_with = "super::ser_format")]
    pub format: Format,
    /// Raw and compressed sizes of wirelens' encoding.
    pub sizes: Compressed,
    /// Raw size over the JSON encoding's raw size.
    pub ratio_to_json: f64,
    /// Where the protobuf or Avro schema came from.
    pub schema: SchemaSource,
    /// Fidelity notes the encoding raised (grouped notes, summed counts).
    pub notes: usize,
    /// The first few notes, as text.
    pub note_texts: Vec<String>,
}

/// Another way to write a format than its default, sized beside it so the saving is visible:
/// the default is what the reference libraries write (floats at their width, keys in the
/// payload's order), a variant what a choice of the sender would change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Variant {
    /// Every float in the narrowest width that holds it exactly (CBOR preferred serialization,
    /// RFC 8949 §4.1; float32 in MessagePack where exact).
    ShortestFloats,
    /// Deterministic: map keys sorted by their encoded bytes, floats shortest (CBOR core
    /// deterministic encoding, RFC 8949 §4.2.1; MessagePack likewise).
    Canonical,
}

impl Variant {
    /// Every variant, in report order.
    pub const ALL: [Variant; 2] = [Variant::ShortestFloats, Variant::Canonical];

    /// `shortest floats` or `canonical`.
    pub fn name(self) -> &'static str {
        match self {
            Variant::ShortestFloats => "shortest floats",
            Variant::Canonical => "canonical",
        }
    }

    /// The formats it applies to: MessagePack and CBOR (JSON's canonical form only reorders
    /// keys, and protobuf has one encoding per schema).
    pub fn applies_to(self, format: Format) -> bool {
        matches!(format, Format::MessagePack | Format::Cbor)
    }

    /// The encoder options that write it.
    pub fn options(self) -> crate::codec::EncodeOptions {
        match self {
            Variant::ShortestFloats => crate::codec::EncodeOptions {
                floats: crate::codec::FloatPolicy::Shortest,
                ..Default::default()
            },
            Variant::Canonical => crate::codec::EncodeOptions {
                canonical: true,
                ..Default::default()
            },
        }
    }
}

/// A variant's sizes, beside its format's default.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantSizes {
    /// Which variant.
    pub variant: Variant,
    /// Raw and compressed sizes of wirelens' encoding in this variant.
    pub sizes: Compressed,
    /// Raw bytes minus the default encoding's (negative: the variant is smaller).
    pub delta: i64,
}

/// Sizes of `value` written as `format` in each [`Variant`] that applies to it, against the
/// default encoding (`default`, whose sizes are `default_sizes`). A variant the encoder refuses
/// is left out; one whose bytes are the default's (no float narrows, keys already in order) has
/// the default's sizes without compressing it again. The variants are encoded and compressed
/// side by side on the current rayon pool.
pub fn variant_sizes(
    value: &crate::model::Value,
    format: Format,
    default: &[u8],
    default_sizes: Compressed,
) -> Vec<VariantSizes> {
    use rayon::prelude::*;
    Variant::ALL
        .into_par_iter()
        .filter(|v| v.applies_to(format))
        .filter_map(|variant| {
            let encoded = crate::codec::encode_fast(value, format, &variant.options()).ok()?;
            let raw = encoded.bytes.len();
            let sizes = if encoded.bytes == default {
                default_sizes
            } else {
                compressed_sizes_and_gzip(&encoded.bytes).sizes
            };
            Some(VariantSizes {
                variant,
                sizes,
                delta: raw as i64 - default.len() as i64,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn counted_sizes_equal_the_lengths_of_the_compressed_bytes() {
        let samples = concat!(env!("CARGO_MANIFEST_DIR"), "/samples");
        let mut inputs: Vec<Vec<u8>> = vec![Vec::new(), b"x".to_vec()];
        for name in [
            "transactions-1k.json",
            "transactions-1k.pb",
            "edge-cases.cbor",
        ] {
            inputs.push(std::fs::read(format!("{samples}/{name}")).expect("a sample"));
        }
        for bytes in &inputs {
            let gz = gzip(bytes).expect("gzip");
            assert_eq!(gzip_size(bytes).expect("gzip"), gz.len());
            let zs = zstd::bulk::compress(bytes, ZSTD_LEVEL).expect("zstd");
            assert_eq!(zstd_size(bytes).expect("zstd"), zs.len());
            assert_eq!(
                brotli_size(bytes).expect("brotli"),
                brotli(bytes).expect("brotli").len()
            );
        }
    }

    #[test]
    fn compressed_sizes_round_trip_and_shrink_repetitive_data() {
        let data: Vec<u8> = b"{\"user_id\":12345,\"status\":\"ok\"},".repeat(200);
        let c = compressed_sizes(&data);
        assert_eq!(c.raw, data.len());
        for size in [c.gzip, c.zstd, c.brotli] {
            let size = size.expect("compressed");
            assert!(size > 0 && size < data.len() / 10, "{size}");
        }
        // Each output decompresses back to the input.
        let gz = gzip(&data).expect("gzip");
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut back)
            .expect("gunzip");
        assert_eq!(back, data);
        let br = brotli(&data).expect("brotli");
        let mut back = Vec::new();
        brotli_decompressor::Decompressor::new(&br[..], 4096)
            .read_to_end(&mut back)
            .expect("unbrotli");
        assert_eq!(back, data);
        let zs = zstd::bulk::compress(&data, ZSTD_LEVEL).expect("zstd");
        assert_eq!(
            zstd::bulk::decompress(&zs, data.len()).expect("unzstd"),
            data
        );
    }

    #[test]
    fn variants_of_iot_metrics_save_what_narrow_floats_save() {
        let json = br#"{"device_id":"sensor-0042","metrics":[24.5,26.1,25.8],"active":true,"retry_count":3}"#;
        let doc = crate::codec::decode(json, Format::Json, &Default::default()).expect("json");
        // The defaults are 80 bytes each (what Python's msgpack and cbor2 write); only 24.5
        // narrows: to a float32 in MessagePack (−4), a float16 in CBOR (−6). Canonical also
        // sorts the keys, which changes no size.
        for (format, default, saved) in [(Format::MessagePack, 80, -4), (Format::Cbor, 80, -6)] {
            let bytes = crate::codec::encode(&doc.value, format, &Default::default())
                .expect("encodes")
                .bytes;
            assert_eq!(bytes.len(), default);
            let v = variant_sizes(&doc.value, format, &bytes, compressed_sizes(&bytes));
            let names: Vec<_> = v.iter().map(|v| (v.variant, v.delta)).collect();
            assert_eq!(
                names,
                [
                    (Variant::ShortestFloats, saved),
                    (Variant::Canonical, saved)
                ],
                "{format:?}"
            );
            assert_eq!(v[0].sizes.raw as i64, default as i64 + saved);
            // Sizes of the variant's own bytes, not the default's.
            let own = crate::codec::encode(&doc.value, format, &Variant::ShortestFloats.options())
                .expect("encodes")
                .bytes;
            assert_eq!(v[0].sizes, compressed_sizes(&own));
        }
        let none = compressed_sizes(b"");
        assert!(variant_sizes(&doc.value, Format::Json, b"", none).is_empty());
        assert!(variant_sizes(&doc.value, Format::Protobuf, b"", none).is_empty());
    }

    #[test]
    fn a_variant_written_as_the_default_has_its_sizes_without_compressing_again() {
        // No float to narrow and the keys in order: both variants are the default's bytes.
        let json = br#"{"a":1,"b":"text","c":[true,null]}"#;
        let doc = crate::codec::decode(json, Format::Json, &Default::default()).expect("json");
        for format in [Format::MessagePack, Format::Cbor] {
            let bytes = crate::codec::encode(&doc.value, format, &Default::default())
                .expect("encodes")
                .bytes;
            // Sizes the compressors could not give: if the variant were compressed again, its
            // sizes would be the real ones, not these.
            let marked = Compressed {
                raw: bytes.len(),
                gzip: Some(1),
                zstd: Some(2),
                brotli: Some(3),
            };
            let v = variant_sizes(&doc.value, format, &bytes, marked);
            assert_eq!(v.len(), 2, "{format:?}");
            for variant in &v {
                assert_eq!((variant.sizes, variant.delta), (marked, 0), "{format:?}");
            }
        }
        // The sizes computed side by side are the one-by-one ones, and the kept gzip is theirs.
        let data = b"{\"user_id\":12345,\"status\":\"ok\"},".repeat(100);
        let both = compressed_sizes_and_gzip(&data);
        assert_eq!(both.sizes, compressed_sizes(&data));
        assert_eq!(both.gzip.expect("gzip"), gzip(&data).expect("gzip"));
    }

    #[test]
    fn empty_input() {
        let c = compressed_sizes(&[]);
        assert_eq!(c.raw, 0);
        assert!(c.gzip.is_some_and(|g| g > 0)); // a gzip header even for nothing
    }
}
