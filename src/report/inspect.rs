//! The `inspect` report: how the bytes were read, the tree of fields with their byte ranges, and
//! an annotated hex dump in which every line names the field its bytes belong to (in the manner of
//! protoscope and cbor.me).
//!
//! Lines of the annotated dump start where a node starts (its key, if it has one), where a
//! container's items start, and where a container closes; separators and whitespace stay on the
//! line before them. A line holds at most 16 bytes; longer runs continue on unlabelled lines.

use std::io::{self, Write};

use crate::capture::{LayerReading, Payload};
use crate::codec::detect::ReadingSummary;
use crate::codec::Document;
use crate::model::{ByteRole, NodeId, Segment, SpanTree, Value};

/// Bytes per line of the annotated hex dump.
pub const BYTES_PER_LINE: usize = 16;

/// Writes the readings: the chosen one first, the others indented below. A format asked for
/// says so: "chosen with --from".
pub fn write_readings(w: &mut dyn Write, readings: &[ReadingSummary]) -> io::Result<()> {
    for (i, r) in readings.iter().enumerate() {
        let lead = if i == 0 { "format: " } else { "  other: " };
        let asked = r.asked.then_some("chosen with --from".to_string());
        let reasons: Vec<String> = asked.into_iter().chain(r.reasons.clone()).collect();
        writeln!(
            w,
            "{lead}{} ({}%): {}",
            r.format.name(),
            r.confidence,
            reasons.join("; ")
        )?;
    }
    Ok(())
}

/// What `inspect` says when no reading is a claim ([`ReadingSummary::is_claim`]): no known
/// format, then each format's partial reading, best first.
pub fn write_no_known_format(w: &mut dyn Write, readings: &[ReadingSummary]) -> io::Result<()> {
    writeln!(
        w,
        "format: no known format (no format reads the whole input; the best partial readings:)"
    )?;
    for r in readings {
        writeln!(
            w,
            "  partial: {} ({}%): {}",
            r.format.name(),
            r.confidence,
            r.reasons.join("; ")
        )?;
    }
    Ok(())
}

/// The value of every node of `doc`, by node id, when the value and the tree agree.
fn node_values(doc: &Document) -> Option<Vec<&Value>> {
    let values = doc.value.preorder();
    (values.len() == doc.spans.len()).then_some(values)
}

fn segment_label(tree: &SpanTree, segment: Segment) -> String {
    match segment {
        Segment::Root => "$".into(),
        _ => tree
            .segment_path(segment)
            .map(|s| s.brief().to_string())
            .unwrap_or_default(),
    }
}

/// Writes the tree: one line per node with its byte range, indented by depth.
pub fn write_tree(w: &mut dyn Write, doc: &Document) -> io::Result<()> {
    write_tree_with(w, doc, &|_| None)
}

/// [`write_tree`], each node's line ending with what `note` says of it (the schema-resolution
/// rule that read it, for Avro read with a reader's schema).
pub fn write_tree_with(
    w: &mut dyn Write,
    doc: &Document,
    note: &dyn Fn(NodeId) -> Option<String>,
) -> io::Result<()> {
    let tree = &doc.spans;
    let values = node_values(doc);
    let mut depth = vec![0usize; tree.len()];
    let width = tree
        .nodes()
        .map(|n| n.span.to_string().len())
        .max()
        .unwrap_or(1);
    for (i, n) in tree.nodes().enumerate() {
        if let Some(p) = n.parent {
            depth[i] = depth[p.index()] + 1;
        }
        let summary = values
            .as_ref()
            .map_or_else(|| n.kind.to_string(), |v| v[i].summary(60));
        let note = u32::try_from(i)
            .ok()
            .and_then(|i| note(NodeId(i)))
            .map_or_else(String::new, |n| format!("  ({n})"));
        writeln!(
            w,
            "{:>width$}  {:indent$}{}  {}{note}",
            n.span.to_string(),
            "",
            segment_label(tree, n.segment),
            summary,
            indent = depth[i] * 2,
        )?;
    }
    Ok(())
}

/// Writes the annotated hex dump of `bytes` (the buffer `doc` was decoded from or encoded to).
pub fn write_annotated_hex(w: &mut dyn Write, bytes: &[u8], doc: &Document) -> io::Result<()> {
    let tree = &doc.spans;
    let values = node_values(doc);
    let mut bounds: Vec<usize> = vec![0, bytes.len()];
    for n in tree.nodes() {
        bounds.push(n.extent().start);
        if n.kind.is_container() {
            bounds.push(n.header_end);
            bounds.push(n.payload.end);
        }
    }
    // No node holds a byte past the root's end (trailing data), so those bytes need no lookup:
    // asking the tree byte by byte walked up every open container of a deep partial document
    // for each trailing byte (depth × size).
    let root_end = tree.nodes().next().map_or(0, |root| root.extent().end);
    bounds.push(root_end);
    // Avro read with a reader's schema: the bytes of writer fields it skips lie between a
    // record's fields and belong to no node; they get lines of their own that say so.
    let skipped = skipped_bytes(doc);
    for gap in &skipped {
        bounds.push(gap.start);
        bounds.push(gap.end);
    }
    bounds.retain(|&b| b <= bytes.len());
    bounds.sort_unstable();
    bounds.dedup();

    // Each line: (start, end, label). Lines of separators and whitespace only join the line before,
    // so one line waits in `pending` until the next is known; the rest are written at once (a
    // list of every line cost more memory than the document on inputs of millions of nodes).
    let mut pending: Option<(usize, usize, String)> = None;
    // The bounds come in order, so one finder walks the tree once for all of them.
    let mut finder = tree.finder();
    for pair in bounds.windows(2) {
        let (start, end) = (pair[0], pair[1]);
        let owner = finder.at(start).map(|(id, n)| (id, *n));
        if skipped.iter().any(|g| g.start == start) {
            if let Some((start, end, label)) = pending.take() {
                write_hex_line(w, bytes, start, end, &label)?;
            }
            let within =
                owner.map_or_else(String::new, |(id, _)| finder.path(id).brief().to_string());
            let label = format!("{within}  (no node: a writer's field the reader's schema skips)");
            pending = Some((start, end, label));
            continue;
        }
        let only_structure = start >= root_end
            || (start..end).all(|o| {
                finder
                    .at(o)
                    .is_none_or(|(_, n)| tree.role_of(n, o) == ByteRole::Structure)
            });
        let closes = owner.is_some_and(|(_, n)| n.kind.is_container() && start == n.payload.end);
        if only_structure && !closes {
            if let Some(last) = pending.as_mut() {
                last.1 = end;
                continue;
            }
        }
        let label = match owner {
            None => String::new(),
            Some((id, _)) if closes => format!("{}  end", finder.path(id).brief()),
            Some((id, n)) => {
                let summary = values
                    .as_ref()
                    .map_or_else(|| n.kind.to_string(), |v| v[id.index()].summary(40));
                format!("{}  {summary}", finder.path(id).brief())
            }
        };
        if let Some((start, end, label)) = pending.replace((start, end, label)) {
            write_hex_line(w, bytes, start, end, &label)?;
        }
    }
    if let Some((start, end, label)) = pending {
        write_hex_line(w, bytes, start, end, &label)?;
    }
    Ok(())
}

/// In an Avro document, the bytes inside a record or array payload that none of its children
/// hold (a writer's field the reader's schema skipped). Other formats have none worth a line:
/// their bytes between children are separators and white space.
fn skipped_bytes(doc: &Document) -> Vec<crate::model::Span> {
    use crate::model::Span;
    let mut out = Vec::new();
    if doc.format != crate::codec::Format::Avro {
        return out;
    }
    let tree = &doc.spans;
    for (i, n) in tree.nodes().enumerate() {
        if !n.kind.is_container() {
            continue;
        }
        let mut at = n.payload.start;
        for child in tree.children(crate::model::NodeId(i as u32)) {
            let extent = tree.node(child).extent();
            if extent.start > at {
                out.push(Span::new(at, extent.start));
            }
            at = at.max(extent.end);
        }
        if n.payload.end > at {
            out.push(Span::new(at, n.payload.end));
        }
    }
    out.sort_by_key(|s| s.start);
    out
}

/// Writes the hex of `bytes[start..end]`, `label` on its first row.
fn write_hex_line(
    w: &mut dyn Write,
    bytes: &[u8],
    start: usize,
    end: usize,
    label: &str,
) -> io::Result<()> {
    let mut at = start;
    let mut first = true;
    while at < end {
        let stop = (at + BYTES_PER_LINE).min(end);
        let chunk = &bytes[at..stop];
        let hex: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
        let ascii: String = chunk
            .iter()
            .map(|&b| {
                if (0x20..0x7f).contains(&b) {
                    b as char
                } else {
                    '.'
                }
            })
            .collect();
        let note = if first { label } else { "" };
        let line = format!(
            "{at:08x}  {:<hexw$}  {ascii:<asciiw$}  {note}",
            hex.join(" "),
            hexw = BYTES_PER_LINE * 3 - 1,
            asciiw = BYTES_PER_LINE,
        );
        writeln!(w, "{}", line.trim_end())?;
        first = false;
        at = stop;
    }
    Ok(())
}

/// Writes the layer readings (ways of peeling the input), numbered from 1 as `--layer N` takes
/// them; `used` marks the one the report shows.
pub fn write_layer_readings(
    w: &mut dyn Write,
    readings: &[LayerReading],
    used: Option<usize>,
) -> io::Result<()> {
    writeln!(w, "layer readings, best first (choose with --layer N):")?;
    for (i, r) in readings.iter().enumerate() {
        let mark = if used == Some(i) { '*' } else { ' ' };
        let count = r.payload_count();
        writeln!(
            w,
            "{mark} {}. {} ({}%): {} payload{}{}; {}",
            i + 1,
            r.layers(),
            r.confidence,
            count,
            if count == 1 { "" } else { "s" },
            r.format
                .map(|f| format!(", {}", f.name()))
                .unwrap_or_default(),
            r.reasons.join("; ")
        )?;
    }
    Ok(())
}

/// Most characters of a layer's detail on a payload line; a longer one is cut with `…` (the
/// payload's meta keeps everything, e.g. a capture's whole `frames` list).
pub const MAX_DETAIL_CHARS: usize = 120;

/// Writes the payload list: one line per payload, numbered from 1 as `--pick N` takes them, the
/// one the report shows (`chosen`) marked `*`, with its size, layer chain and the detail of its
/// last layer (at most [`MAX_DETAIL_CHARS`] characters of it).
pub fn write_payloads(w: &mut dyn Write, payloads: &[Payload], chosen: usize) -> io::Result<()> {
    for (i, p) in payloads.iter().enumerate() {
        write_payload_line(w, i + 1, p, i == chosen)?;
    }
    Ok(())
}

/// One line of [`write_payloads`]: payload `number` (1-based), marked `*` when it is the one
/// read below the list.
pub fn write_payload_line(
    w: &mut dyn Write,
    number: usize,
    p: &Payload,
    chosen: bool,
) -> io::Result<()> {
    let mark = if chosen { '*' } else { ' ' };
    let detail = p
        .layers
        .last()
        .filter(|l| !l.detail.is_empty())
        .map(|l| format!(" ({})", cut_chars(&l.detail, MAX_DETAIL_CHARS)))
        .unwrap_or_default();
    // The call, stream and direction of a captured exchange.
    let headline = p
        .headline()
        .map(|h| format!(" [{}]", cut_chars(&h, MAX_DETAIL_CHARS)))
        .unwrap_or_default();
    // What the protocol said the bytes are, where it said so: text, or no data at all.
    let said = match crate::capture::verdict::verdict(p) {
        Some(v @ crate::capture::verdict::Verdict::NotData { .. }) => format!(": {}", v.name()),
        Some(crate::capture::verdict::Verdict::Text { media_type, .. }) => {
            format!(": text ({media_type})")
        }
        _ => String::new(),
    };
    writeln!(
        w,
        "{mark} {number}. {} bytes via {}{detail}{headline}{said}",
        p.bytes.len(),
        p.provenance(),
    )
}

/// Meta entries that describe how a payload travelled, listed with its layers.
const LAYER_META: &[&str] = &[
    "http2 frames",
    "http2 client control",
    "http2 server control",
    "websocket control",
    "informational",
    "frames",
];

/// A payload's layers one per line, outermost first (name, the bytes it covered in its own
/// input, its detail), then what the layers recorded of the way there: an HTTP/2 stream's
/// frames, WebSocket control frames, the capture frames, the headers.
pub fn write_payload_layers(w: &mut dyn Write, payload: &Payload) -> io::Result<()> {
    writeln!(w, "layers:")?;
    for (i, l) in payload.layers.iter().enumerate() {
        let detail = if l.detail.is_empty() {
            String::new()
        } else {
            format!(": {}", l.detail)
        };
        writeln!(
            w,
            "  {}. {} (bytes {}..{}){detail}",
            i + 1,
            l.name,
            l.span.start,
            l.span.end
        )?;
    }
    if let Some(protocol) = &payload.protocol {
        writeln!(w, "  protocol: {protocol} (not a data format)")?;
    }
    if let Some(cut) = &payload.cut {
        writeln!(w, "  cut short: {}", cut_chars(cut, 8 * MAX_DETAIL_CHARS))?;
    }
    for key in LAYER_META {
        for (k, v) in payload.meta.iter().filter(|(k, _)| k == key) {
            writeln!(w, "  {k}: {}", cut_chars(v, 8 * MAX_DETAIL_CHARS))?;
        }
    }
    let headers: Vec<(&str, &str)> = payload
        .meta
        .iter()
        .filter(|(k, _)| {
            !LAYER_META.contains(k)
                && !matches!(
                    *k,
                    "stream" | "direction" | "first time" | "grpc-body" | "grpc-direction"
                )
        })
        .collect();
    if !headers.is_empty() {
        writeln!(w, "  meta:")?;
        for (k, v) in headers {
            writeln!(w, "    {k}: {}", cut_chars(v, MAX_DETAIL_CHARS))?;
        }
    }
    Ok(())
}

/// `text` with at most `max` characters, the last of them `…` when it was cut.
fn cut_chars(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => text.into(),
        Some(_) => {
            let keep: String = text.chars().take(max.saturating_sub(1)).collect();
            format!("{keep}…").into()
        }
    }
}

#[cfg(test)]
mod payload_tests {
    use super::*;
    use crate::capture::Layer;
    use crate::model::Span;

    fn payload(bytes: &[u8], detail: &str) -> Payload {
        Payload {
            bytes: bytes.into(),
            layers: vec![Layer {
                name: "gRPC frame".into(),
                detail: detail.into(),
                span: Span::new(0, bytes.len()),
            }],
            ..Payload::default()
        }
    }

    #[test]
    fn payload_lines_cut_long_details() {
        let long = "é".repeat(500);
        let payloads = [payload(b"ab", "message 1 of 2"), payload(b"c", &long)];
        let mut out = Vec::new();
        write_payloads(&mut out, &payloads, 1).expect("written");
        let text = String::from_utf8(out).expect("UTF-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "  1. 2 bytes via gRPC frame (message 1 of 2)");
        let cut = format!("* 2. 1 bytes via gRPC frame ({}…)", "é".repeat(119));
        assert_eq!(lines[1], cut);
        assert_eq!(cut_chars("abc", 3), "abc");
        assert_eq!(cut_chars("abcd", 3), "ab…");
    }
}
