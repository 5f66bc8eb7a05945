//! Peeling layers off pasted or captured input until the payload is left.
//!
//! Users paste whatever they copied: a hex dump, base64, a JSON string holding escaped JSON, a raw
//! HTTP exchange with a gzip'd chunked body. [`unwrap`] peels one layer at a time, records each
//! as a [`Layer`] (outermost first), and stops when none applies; what is left is a [`Payload`].
//! One input can hold several payloads (pipelined HTTP messages).
//!
//! Order of tests at each step (first match wins):
//! 1. a raw HTTP/1.x request or response ([`super::http`]);
//! 2. a gzip or zstd stream (by its magic number);
//! 3. an Avro Object Container File (`Obj` 0x01): one payload per data block, decompressed,
//!    carrying the header's schema and the block's datum count; or Avro single-object encoding
//!    (`C3 01` and the writer schema's fingerprint), one datum whose schema is looked up by
//!    fingerprint when it is read ([`crate::pipeline::avro_writer`]);
//! 4. a HAR file ([`super::har`]: a JSON object with `log.entries`), one payload per body, before
//!    JSON so that an export is read as the exchanges it holds; then a pasted "Copy as cURL" or
//!    "Copy as fetch" snippet ([`super::snippet`]), the request it makes;
//! 5. JSON text: it *is* the payload, unless it is a lone JSON string whose content is itself
//!    something to peel (JSON, HTTP, hex, base64…), in which case the content is the next input;
//! 6. gRPC-Web-text pasted alone: padded base64 chunks back to back that decode to gRPC frames
//!    ([`super::grpcweb`]);
//! 7. text carrying bytes ([`super::text`]): hex shapes, dumps, base64, `data:` URLs. A dump
//!    that holds several payloads (Wireshark's follow-stream directions, `tshark -x` packets)
//!    gives one payload each; a dump broken at a line is a [`CaptureError`] in the "hex dump"
//!    (or "hex", "hex array") layer at that line's offset, with nothing extracted.
//!
//! The loop is iterative (a work list, no recursion) and bounded by
//! [`UnwrapOptions::max_layers`]; decompression is bounded in bytes and in ratio, each stream on
//! its own and all the streams of one input together (so `gzip, gzip` cannot multiply ratios). Offsets in a
//! [`CaptureError`] and spans in a [`Layer`] are into that layer's own input (for the first
//! layer, the user's input).
//!
//! Not done here: pcap/pcapng and TCP reassembly (the `pcap` module), gRPC frame splitting (wired
//! in elsewhere; HTTP marks gRPC bodies with the meta entry `grpc-body = true`).

use crate::codec::{self, DecodeOptions, Document, Format};

use super::payload::{nest, Budget, Decoded, KEPT_DOCS};
pub use super::payload::{CaptureError, Layer, Payload, UnwrapOptions};
use super::{grpcweb, har, http, snippet, text, SharedBytes};
use crate::model::{Span, Value};

/// What one peeling step found.
enum Step {
    /// No layer applies: the bytes are the payload (with its JSON document, if it is JSON).
    Done(Option<Document>),
    /// One layer, and the bytes under it.
    One {
        layer: Layer,
        bytes: Vec<u8>,
        hint: Option<Format>,
    },
    /// One framing layer that says the bytes under it are Avro, and what it says of them.
    Framed {
        layer: Layer,
        bytes: SharedBytes,
        avro: crate::codec::avro::Framed,
    },
    /// Several payloads (HTTP messages, the directions of a follow-stream dump, the packets of
    /// `tshark -x` output), each with its own layers so far.
    Many(Vec<Payload>),
}

/// Peels layers off `input` until none applies; returns every payload found, in input order.
///
/// ```
/// use wirelens::capture::{unwrap, UnwrapOptions};
///
/// let found = unwrap(b"gaNrZXkB", &UnwrapOptions::default()).expect("base64");
/// assert_eq!(found[0].bytes, [0x81, 0xa3, b'k', b'e', b'y', 0x01]);
/// assert_eq!(found[0].layers[0].name, "base64");
/// ```
///
/// Decompressions of one call share one budget ([`UnwrapOptions::decompression_limit`] of
/// `input`'s size), so nested layers cannot multiply their ratios.
pub fn unwrap(input: &[u8], options: &UnwrapOptions) -> Result<Vec<Payload>, CaptureError> {
    let mut budget = Budget::for_input(input.len(), options);
    unwrap_keeping(&SharedBytes::from(input), options, &mut budget, None)
}

/// [`unwrap`] within `budget`, keeping in `keep` the JSON documents of the first payloads.
pub(crate) fn unwrap_keeping(
    input: &SharedBytes,
    options: &UnwrapOptions,
    budget: &mut Budget,
    mut keep: Option<&mut Decoded>,
) -> Result<Vec<Payload>, CaptureError> {
    let mut done: Vec<Payload> = Vec::new();
    if input.peek(|b| b.iter().all(|c| c.is_ascii_whitespace())) {
        return Ok(done);
    }
    // Work list, next item last.
    let mut work: Vec<Payload> = vec![Payload {
        bytes: input.clone(),
        ..Payload::default()
    }];
    while let Some(mut current) = work.pop() {
        let mut split = false;
        loop {
            if current.layers.len() >= options.max_layers {
                current.meta.push((
                    "warning".to_string(),
                    format!(
                        "stopped after {} layers; the bytes may hold more",
                        options.max_layers
                    ),
                ));
                break;
            }
            // Only the first payloads are sampled for detection: documents of later ones would
            // be held for nothing (a HAR's every JSON body at once).
            let want_doc = keep
                .as_deref()
                .is_some_and(|k| k.docs.len() < KEPT_DOCS && !k.walks(current.bytes.len()));
            // Bytes a HAR left in its base64 are read for this step only: a body with no layer
            // under it stays unread until someone looks at it.
            let stepped = current
                .bytes
                .peek(|bytes| step(bytes, options, budget, want_doc));
            match stepped {
                Ok(Step::Done(doc)) => {
                    if let (Some(keep), Some(doc)) = (keep.as_deref_mut(), doc) {
                        let depth = options.json_options().limits.depth();
                        keep.docs.push((current.bytes.clone(), doc, depth));
                    }
                    break;
                }
                Ok(Step::One { layer, bytes, hint }) => {
                    current.layers.push(layer);
                    current.bytes = bytes.into();
                    if hint.is_some() {
                        current.hint = hint;
                    }
                }
                // Two marker bytes are a hint, not a proof: a layer above that named another
                // format (a Content-Type) is not overridden.
                Ok(Step::Framed { .. }) if current.hint.is_some_and(|h| h != Format::Avro) => {
                    break;
                }
                Ok(Step::Framed { layer, bytes, avro }) => {
                    current.layers.push(layer);
                    current.bytes = bytes;
                    current.hint = Some(Format::Avro);
                    current.avro = Some(avro);
                    // What is under the framing is the datum: nothing more to peel.
                    break;
                }
                Ok(Step::Many(found)) => {
                    for p in found.into_iter().rev() {
                        work.push(nest(&current, p));
                    }
                    split = true;
                    break;
                }
                Err(mut e) => {
                    let mut all = done;
                    all.extend(e.extracted.into_iter().map(|p| nest(&current, p)));
                    e.extracted = all;
                    return Err(e);
                }
            }
        }
        if !split {
            done.push(current);
        }
    }
    Ok(done)
}

/// What one peeling step knows: the limits, the decompression budget, and whether a JSON
/// payload's document is kept ([`step`]).
struct Cx<'a> {
    options: &'a UnwrapOptions,
    budget: &'a mut Budget,
    want_doc: bool,
}

/// One row of the peeling table: a layer's name and the test that claims the bytes for it
/// (`None`: not this layer's bytes; `Some`: this layer peeled them, or failed to).
struct Peeler {
    /// The layer, as the table's tests name it.
    #[cfg_attr(not(test), allow(dead_code))]
    name: &'static str,
    /// Claims and peels the bytes.
    peel: fn(&SharedBytes, &mut Cx<'_>) -> Option<Result<Step, CaptureError>>,
}

/// The peeling heuristics, read as a dissector table: [`step`] offers the bytes to each row in
/// order and the first that claims them peels them. The order is the table's logic: framing a
/// protocol states (an HTTP start line, a compression magic number, a HAR or snippet's own
/// syntax) before JSON, and JSON before text encodings, since base64 and hex digits are also
/// JSON numbers and strings. Each row is tested on its own (`peelers_claim_their_shapes`).
const PEELERS: &[Peeler] = &[
    Peeler {
        name: "HTTP/1.x messages",
        peel: peel_http,
    },
    Peeler {
        name: "compressed (gzip, zstd)",
        peel: peel_compressed,
    },
    Peeler {
        name: "Avro container",
        peel: peel_avro_container,
    },
    Peeler {
        name: "Avro single object",
        peel: peel_avro_single_object,
    },
    Peeler {
        name: "HAR",
        peel: peel_har,
    },
    Peeler {
        name: "request snippet",
        peel: peel_snippet,
    },
    Peeler {
        name: "JSON",
        peel: peel_json,
    },
    Peeler {
        name: "gRPC-Web-text",
        peel: peel_grpc_web_text,
    },
    Peeler {
        name: "text encoding (dumps, base64, data: URLs)",
        peel: peel_text,
    },
];

/// One layer off `bytes`. `want_doc`: a JSON payload's document is kept for detection, so it is
/// decoded; otherwise JSON is only validated, which builds nothing.
fn step(
    bytes: &SharedBytes,
    options: &UnwrapOptions,
    budget: &mut Budget,
    want_doc: bool,
) -> Result<Step, CaptureError> {
    if bytes.is_empty() {
        return Ok(Step::Done(None));
    }
    let mut cx = Cx {
        options,
        budget,
        want_doc,
    };
    PEELERS
        .iter()
        .find_map(|p| (p.peel)(bytes, &mut cx))
        .unwrap_or(Ok(Step::Done(None)))
}

/// The name of the table row that claims `bytes`, if any (for the table's tests).
#[cfg(test)]
fn claimed_by(bytes: &[u8]) -> Option<&'static str> {
    let options = UnwrapOptions::default();
    let mut budget = Budget::for_input(bytes.len(), &options);
    let bytes = SharedBytes::from(bytes);
    let mut cx = Cx {
        options: &options,
        budget: &mut budget,
        want_doc: false,
    };
    PEELERS
        .iter()
        .find(|p| (p.peel)(&bytes, &mut cx).is_some())
        .map(|p| p.name)
}

/// HTTP/1.x messages: a request or status line.
fn peel_http(bytes: &SharedBytes, cx: &mut Cx<'_>) -> Option<Result<Step, CaptureError>> {
    if !http::looks_like_http(bytes) {
        return None;
    }
    Some(http::parse_messages_within(bytes, cx.options, cx.budget).map(Step::Many))
}

/// A gzip or zstd stream, by its magic number, within the decompression budget.
fn peel_compressed(bytes: &SharedBytes, cx: &mut Cx<'_>) -> Option<Result<Step, CaptureError>> {
    let encoding = compression_magic(bytes)?;
    let out =
        http::decompress_within(encoding, bytes, cx.options, cx.budget).map_err(|e| CaptureError {
            layer: encoding.to_string(),
            offset: 0,
            message: e.to_string(),
            extracted: vec![Payload {
                bytes: bytes.into(),
                cut: Some(format!("{encoding} stops early")),
                ..Payload::default()
            }],
        });
    let out = match out {
        Ok(out) => out,
        Err(e) => return Some(Err(e)),
    };
    Some(Ok(Step::One {
        layer: Layer {
            name: encoding.to_string(),
            detail: format!("{} → {} bytes", bytes.len(), out.len()),
            span: Span::new(0, bytes.len()),
        },
        bytes: out,
        hint: None,
    }))
}

/// An Avro Object Container File (`Obj` 0x01): one payload per data block, its datums
/// decompressed within the budget and read by the header's schema. A block whose codec fails
/// is kept as its compressed bytes, cut, with the decoder's words; a block whose sync marker is
/// wrong is cut (its size or an earlier byte is corrupt) and reading goes on past the next
/// marker. A block the file ends inside stops the reading, keeping the blocks before it.
fn peel_avro_container(bytes: &SharedBytes, cx: &mut Cx<'_>) -> Option<Result<Step, CaptureError>> {
    use crate::codec::avro::{container, AvroSchema, Framed};
    if !bytes.starts_with(&container::MAGIC) {
        return None;
    }
    let fail = |offset: usize, message: String, extracted: Vec<Payload>| CaptureError {
        layer: "Avro container".to_string(),
        offset,
        message,
        extracted,
    };
    // A file no block of which can be read stays as it is, with the reason.
    let unread = |why: String| {
        vec![Payload {
            bytes: bytes.clone(),
            cut: Some(format!("the Avro container is not read: {why}")),
            ..Payload::default()
        }]
    };
    let header = match container::read_header(bytes) {
        Ok(h) => h,
        Err(e) => return Some(Err(fail(e.offset(), e.to_string(), unread(e.to_string())))),
    };
    let schema = match AvroSchema::parse(&header.schema_json, "the container's avro.schema") {
        Ok(s) => s,
        Err(e) => {
            let at = header.get("avro.schema").map_or(0, |m| m.value_span.start);
            return Some(Err(fail(at, e.to_string(), unread(e.to_string()))));
        }
    };
    let codec = header.codec;
    let mut found: Vec<Payload> = Vec::new();
    let mut fault = None;
    for block in container::blocks(bytes, &header) {
        match block {
            Ok(block) => found.push(avro_block(bytes, &block, codec, &schema, cx)),
            Err(e) => {
                fault = Some(e);
                break;
            }
        }
    }
    // A block the file ends inside keeps what it has: its datums are read as far as they go.
    if let Some(container::ContainerError::BlockTruncated { block, start, .. }) = &fault {
        found.extend(avro_cut_block(bytes, *block, *start, codec, &schema));
    }
    // An empty file still holds its schema: one payload of no datums says so.
    if found.is_empty() && fault.is_none() {
        found.push(Payload {
            bytes: bytes.slice(header.end..header.end),
            avro: Some(Framed {
                schema: Some(schema.clone()),
                items: Some(0),
                fingerprint: None,
            }),
            hint: Some(Format::Avro),
            layers: vec![Layer {
                name: "Avro block".to_string(),
                detail: "no blocks: the file holds no datums".to_string(),
                span: Span::new(header.end, header.end),
            }],
            ..Payload::default()
        });
    }
    let outer = Layer {
        name: "Avro container".to_string(),
        detail: format!(
            "schema {}, codec {codec}, {} block{}, header {} bytes",
            schema.title(),
            found.len(),
            if found.len() == 1 { "" } else { "s" },
            header.end
        ),
        span: Span::new(0, bytes.len()),
    };
    for p in &mut found {
        p.layers.insert(0, outer.clone());
    }
    match fault {
        // Not one block read: the file stays as it is, with the reason, rather than vanish.
        Some(e) if found.is_empty() => {
            let why = e.to_string();
            let mut kept = unread(why.clone());
            for p in &mut kept {
                p.layers.push(outer.clone());
            }
            Some(Err(fail(e.offset(), why, kept)))
        }
        Some(e) => Some(Err(fail(e.offset(), e.to_string(), found))),
        None => Some(Ok(Step::Many(found))),
    }
}

/// One block of an Avro container file as a payload: its datums decompressed (within the
/// capture's budget) with the writer schema, or its bytes as they are with the reason when
/// they cannot be; a wrong sync marker is a warning.
fn avro_block(
    bytes: &SharedBytes,
    block: &crate::codec::avro::container::Block,
    codec: crate::codec::avro::container::Codec,
    schema: &crate::codec::avro::AvroSchema,
    cx: &mut Cx<'_>,
) -> Payload {
    use crate::codec::avro::{container, Framed};
    let span = Span::new(block.start, block.sync.end);
    let compressed = &bytes[block.data.clone()];
    let budget = cx.budget.left.min(cx.options.max_decompressed);
    let mut detail = format!("block {}: {} datums", block.index + 1, block.count);
    let mut payload = Payload {
        avro: Some(Framed {
            schema: Some(schema.clone()),
            items: Some(block.count),
            fingerprint: None,
        }),
        hint: Some(Format::Avro),
        ..Payload::default()
    };
    match container::decompress(codec, compressed, budget) {
        Ok(data) => {
            if codec != container::Codec::Null {
                detail.push_str(&format!(
                    ", {codec} {} → {} bytes",
                    compressed.len(),
                    data.len()
                ));
                cx.budget.left = cx.budget.left.saturating_sub(data.len());
            } else {
                detail.push_str(&format!(", {} bytes", data.len()));
            }
            payload.bytes = match data {
                std::borrow::Cow::Borrowed(_) => bytes.slice(block.data.clone()),
                std::borrow::Cow::Owned(v) => v.into(),
            };
        }
        Err(e) => {
            let why = format!(
                "block {} (bytes {}..{}): {e}",
                block.index + 1,
                block.data.start,
                block.data.end
            );
            detail.push_str(&format!(
                ", {codec} {} bytes, not decompressed",
                compressed.len()
            ));
            payload.bytes = bytes.slice(block.data.clone());
            payload.avro = None;
            payload.hint = None;
            payload.meta.push(("warning".to_string(), why.clone()));
            payload.cut = Some(why);
        }
    }
    if block.sync_ok {
        detail.push_str(", sync marker ok");
    } else {
        let why = avro_sync_warning(block);
        detail.push_str(", sync marker wrong");
        payload.meta.push(("warning".to_string(), why.clone()));
        payload.cut.get_or_insert(why);
    }
    payload.layers.push(Layer {
        name: "Avro block".to_string(),
        detail,
        span,
    });
    payload
}

/// What a block whose sync marker is not the header's says: where, and what resyncing passed
/// over.
fn avro_sync_warning(block: &crate::codec::avro::container::Block) -> String {
    let skipped = block.resync.as_ref().map(|r| {
        let next = r.found.as_ref().map_or_else(
            || "none follows".to_string(),
            |f| format!("the next is at byte {}", f.start),
        );
        format!(
            "; bytes {}..{} passed over, {next}",
            r.skipped.start, r.skipped.end
        )
    });
    format!(
        "block {}'s sync marker at bytes {}..{} is not the header's: its size or an \
         earlier byte is corrupt{}",
        block.index + 1,
        block.sync.start,
        block.sync.end,
        skipped.unwrap_or_default()
    )
}

/// The block (index `block`, from byte `start`) the file ends inside, as a payload of the data
/// bytes it has, cut; readable as Avro only when the container does not compress.
fn avro_cut_block(
    bytes: &SharedBytes,
    block: usize,
    start: usize,
    codec: crate::codec::avro::container::Codec,
    schema: &crate::codec::avro::AvroSchema,
) -> Option<Payload> {
    use crate::codec::avro::framing::read_long;
    use crate::codec::avro::{container, Framed};
    let (count, size, data) = read_long(bytes, start)
        .and_then(|(count, at)| read_long(bytes, at).map(|(size, data)| (count, size, data)))
        .ok()?;
    let end = usize::try_from(size)
        .ok()
        .and_then(|s| data.checked_add(s))
        .map_or(bytes.len(), |e| e.min(bytes.len()));
    let why = format!(
        "the file ends inside block {}: {} of its {size} data bytes are here",
        block + 1,
        end - data
    );
    let readable = codec == container::Codec::Null;
    Some(Payload {
        bytes: bytes.slice(data..end),
        avro: readable.then(|| Framed {
            schema: Some(schema.clone()),
            items: u64::try_from(count).ok(),
            fingerprint: None,
        }),
        hint: readable.then_some(Format::Avro),
        layers: vec![Layer {
            name: "Avro block".to_string(),
            detail: format!("block {}: {count} datums, cut short", block + 1),
            span: Span::new(start, bytes.len()),
        }],
        cut: Some(why),
        ..Payload::default()
    })
}

/// Avro single-object encoding: `C3 01` and the writer schema's 8-byte fingerprint before one
/// datum. The schema is found among the loaded ones when the payload is read
/// ([`crate::pipeline::avro_writer`]).
fn peel_avro_single_object(
    bytes: &SharedBytes,
    _: &mut Cx<'_>,
) -> Option<Result<Step, CaptureError>> {
    let found = crate::codec::avro::framing::single_object(bytes)?;
    Some(Ok(Step::Framed {
        layer: Layer {
            name: "Avro single object".to_string(),
            detail: format!(
                "schema fingerprint {:#018x} (CRC-64-AVRO), {} bytes of datum",
                found.fingerprint,
                found.body.len()
            ),
            span: Span::new(found.header.start, found.header.end),
        },
        bytes: bytes.slice(found.body),
        avro: crate::codec::avro::Framed {
            fingerprint: Some(found.fingerprint),
            ..Default::default()
        },
    }))
}

/// A HAR export.
fn peel_har(bytes: &SharedBytes, _: &mut Cx<'_>) -> Option<Result<Step, CaptureError>> {
    har::parse(bytes).map(|found| found.map(Step::Many))
}

/// A request snippet (cURL, fetch): the request it makes.
fn peel_snippet(bytes: &SharedBytes, _: &mut Cx<'_>) -> Option<Result<Step, CaptureError>> {
    snippet::parse(bytes).map(|found| Ok(Step::Many(found)))
}

/// JSON: the payload itself, or a lone string whose content peels further.
fn peel_json(bytes: &SharedBytes, cx: &mut Cx<'_>) -> Option<Result<Step, CaptureError>> {
    // What text decoding may produce: a dump's `*` lines repeat a line up to an offset, so a few
    // bytes can claim gigabytes; past the text's own size that is an expansion like a
    // decompression's, and it draws on the same budget.
    let text_output = cx.budget.left.max(bytes.len());
    let inner = json_verdict(bytes, text_output, &cx.options.json_options(), cx.want_doc)?;
    Some(Ok(match inner {
        Err(doc) => Step::Done(doc),
        Ok(text) => {
            let start = bytes.iter().position(|&c| c == b'"').unwrap_or(0);
            let end = bytes
                .iter()
                .rposition(|&c| c == b'"')
                .map_or(bytes.len(), |e| e + 1);
            Step::One {
                layer: Layer {
                    name: "JSON string".to_string(),
                    detail: format!("{} characters once unescaped", text.chars().count()),
                    span: Span::new(start, end.max(start)),
                },
                bytes: text.into_bytes(),
                hint: None,
            }
        }
    }))
}

/// gRPC-Web-text: base64 of gRPC frames.
fn peel_grpc_web_text(bytes: &SharedBytes, _: &mut Cx<'_>) -> Option<Result<Step, CaptureError>> {
    let (frames, chunks) = grpcweb::grpc_web_text(bytes)?;
    Some(Ok(Step::One {
        layer: Layer {
            name: "gRPC-Web-text".to_string(),
            detail: format!("base64 in {chunks} chunks"),
            span: Span::new(0, bytes.len()),
        },
        bytes: frames,
        hint: Some(Format::Protobuf),
    }))
}

/// A text encoding of bytes: hex and tshark/tcpdump dumps, base64, data: URLs, escapes.
fn peel_text(bytes: &SharedBytes, cx: &mut Cx<'_>) -> Option<Result<Step, CaptureError>> {
    // What text decoding may produce: a dump's `*` lines repeat a line up to an offset, so a few
    // bytes can claim gigabytes; past the text's own size that is an expansion like a
    // decompression's, and it draws on the same budget.
    let text_output = cx.budget.left.max(bytes.len());
    let found = text::decode_text_checked(bytes, text_output).map_err(|e| CaptureError {
        layer: e.shape.name().to_string(),
        offset: e.offset,
        message: e.to_string(),
        // A dump is read whole or not at all: nothing was extracted.
        extracted: Vec::new(),
    });
    let d = match found {
        Ok(found) => found?,
        Err(e) => return Some(Err(e)),
    };
    let produced = d
        .more
        .iter()
        .fold(d.bytes.len(), |n, p| n.saturating_add(p.bytes.len()));
    cx.budget.left = cx
        .budget
        .left
        .saturating_sub(produced.saturating_sub(bytes.len()));
    let start = bytes
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(0);
    let end = bytes
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    let hint = match d.shape {
        text::TextShape::DataUrlBase64 | text::TextShape::DataUrlPercent => {
            super::media::hint_for_media_type(&d.detail)
        }
        _ => None,
    };
    let layer = |detail: String| Layer {
        name: d.shape.name().to_string(),
        detail,
        span: Span::new(start, end),
    };
    if !d.more.is_empty() {
        // Several payloads that must stay apart (a follow-stream dump's two directions,
        // tshark's packet dumps): one payload each, its layer detail naming which it is.
        let first = Payload {
            bytes: d.bytes.into(),
            layers: vec![layer(d.detail)],
            ..Payload::default()
        };
        let rest = d.more.into_iter().map(|p| Payload {
            bytes: p.bytes.into(),
            layers: vec![layer(p.detail)],
            ..Payload::default()
        });
        return Some(Ok(Step::Many(std::iter::once(first).chain(rest).collect())));
    }
    Some(Ok(Step::One {
        layer: layer(d.detail),
        bytes: d.bytes,
        hint,
    }))
}

fn compression_magic(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x1f, 0x8b, 0x08, ..] => Some("gzip"),
        [0x28, 0xb5, 0x2f, 0xfd, ..] => Some("zstd"),
        _ => None,
    }
}

/// `None`: not JSON. `Some(Err(document))`: JSON, and it is the payload (its document when
/// `want_doc`, else only validated: `None`). `Some(Ok(text))`: a lone JSON string whose content is
/// to be peeled further.
fn json_verdict(
    bytes: &[u8],
    max_output: usize,
    options: &DecodeOptions,
    want_doc: bool,
) -> Option<Result<String, Option<Document>>> {
    let first = *bytes.iter().find(|c| !c.is_ascii_whitespace())?;
    if !matches!(
        first,
        b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
    ) {
        return None;
    }
    if first != b'"' && !want_doc {
        return codec::json::is_json(bytes, &options.limits).then_some(Err(None));
    }
    let doc = codec::decode(bytes, Format::Json, options).ok()?;
    let Value::Text(inner) = &doc.value else {
        return Some(Err(Some(doc)));
    };
    let peelable = http::looks_like_http(inner.as_bytes())
        || codec::json::is_json(inner.as_bytes(), &options.limits)
        // A string holding a broken dump is peeled too, so that the dump's error is told.
        || !matches!(text::decode_text_checked(inner.as_bytes(), max_output), Ok(None));
    if !peelable {
        return Some(Err(Some(doc)));
    }
    match doc.value {
        Value::Text(inner) => Some(Ok(inner.into_string())),
        _ => Some(Err(Some(doc))),
    }
}

#[cfg(test)]
mod table_tests {
    use super::claimed_by;

    #[test]
    fn peelers_claim_their_shapes() {
        // One input per row of the table, and inputs no row claims (the payload as it is).
        let gzip = {
            use std::io::Write;
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            enc.write_all(b"{}").expect("gzip");
            enc.finish().expect("gzip")
        };
        let cases: [(&[u8], Option<&str>); 13] = [
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
                Some("HTTP/1.x messages"),
            ),
            (&gzip, Some("compressed (gzip, zstd)")),
            (b"Obj\x01\x00", Some("Avro container")),
            (
                b"\xc3\x01\x01\x02\x03\x04\x05\x06\x07\x08\x02",
                Some("Avro single object"),
            ),
            (br#"{"log":{"version":"1.2","entries":[]}}"#, Some("HAR")),
            (
                b"curl -X POST https://api.example/x -d 'a=1'",
                Some("request snippet"),
            ),
            (br#"{"id": 7}"#, Some("JSON")),
            // Padded base64 chunks, one per frame (a message, then trailers).
            (b"AAAAAAIIAQ==gAAAAAA=", Some("gRPC-Web-text")),
            (
                b"00000000: 7b7d                                     {}",
                Some("text encoding (dumps, base64, data: URLs)"),
            ),
            (
                b"data:application/json;base64,e30=",
                Some("text encoding (dumps, base64, data: URLs)"),
            ),
            // Base64 digits that are also JSON: JSON wins, as the table's order says.
            (b"1234", Some("JSON")),
            (&[0x82, 0xa1, b'a', 0x01, 0xa1, b'b', 0x02], None),
            (b"plain words, nothing to peel", None),
        ];
        for (bytes, want) in cases {
            assert_eq!(
                claimed_by(bytes),
                want,
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }
}
