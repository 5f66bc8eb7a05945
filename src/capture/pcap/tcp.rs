//! TCP stream reassembly, per direction, by sequence number.
//!
//! Segments are collected per direction with their offset relative to a reference sequence
//! number (unwrapped step by step, so 32-bit wrap-around is handled), then put in order at the
//! end. The stream starts after the SYN's ISN when the SYN was seen, else at the lowest offset
//! seen. Retransmitted or overlapping data is kept once: when copies overlap, the one that
//! starts earliest in the stream wins (on a tie, the earlier frame). A copy whose bytes differ
//! from the kept ones (an attack on reassembly, or a broken middlebox) gives a warning naming
//! both frames and the stream bytes; a retransmission of the same bytes passes silently, and so
//! does a keep-alive probe (one byte, or none, at the next expected sequence number less one: its
//! byte is a stand-in the receiver drops). **A gap (lost or uncaptured segment)** is closed up
//! with a warning and recorded in [`Direction::gaps`]: the bytes before it are the direction's
//! contiguous stream ([`Direction::contiguous`]), which every parser reads; a parser that can
//! find its next message after a gap (HTTP/1.x) reads on from there. FIN bounds a direction; RST
//! ends the connection. A SYN on a 4-tuple whose connection was used or closed starts a new
//! stream (port reuse).

use std::net::SocketAddr;

use crate::model::{Span, Timestamp};

use super::net::TcpSegment;
use super::{Direction, Gap, SegmentRef};

/// One buffered segment.
struct Piece {
    off: i64,
    data: Held,
    frame: u64,
    time: Option<Timestamp>,
    record: Span,
    /// Where `data` lies in the capture file (see [`SegmentRef::at`]).
    at: Option<usize>,
}

/// A segment's data: a range of the capture file itself (no copy), or bytes of its own (a
/// datagram put together from IP fragments).
enum Held {
    Input(std::ops::Range<usize>),
    Owned(Vec<u8>),
}

impl Held {
    /// `data` as held: a range of `input` when it lies in it, else a copy.
    fn of(data: &[u8], input: &[u8]) -> Held {
        let base = input.as_ptr() as usize;
        let at = data.as_ptr() as usize;
        match at.checked_sub(base) {
            Some(start) if start.saturating_add(data.len()) <= input.len() => {
                Held::Input(start..start + data.len())
            }
            _ => Held::Owned(data.to_vec()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Held::Input(r) => r.len(),
            Held::Owned(v) => v.len(),
        }
    }

    fn bytes<'a>(&'a self, input: &'a [u8]) -> &'a [u8] {
        match self {
            Held::Input(r) => input.get(r.clone()).unwrap_or(&[]),
            Held::Owned(v) => v,
        }
    }
}

/// One direction while it is being collected.
#[derive(Default)]
pub(crate) struct Collecting {
    /// Last sequence number seen and its unwrapped offset.
    reference: Option<(u32, i64)>,
    /// Offset of the first data byte when the SYN was seen.
    start: Option<i64>,
    /// Offset of the FIN, when seen.
    fin: Option<i64>,
    /// The end of the furthest data seen so far: a one-byte segment just before it is a
    /// keep-alive probe.
    next: Option<i64>,
    /// Keep-alive probes left out.
    probes: usize,
    pieces: Vec<Piece>,
}

impl Collecting {
    fn unwrap_seq(&mut self, seq: u32) -> i64 {
        let off = match self.reference {
            None => 0,
            Some((last, last_off)) => last_off + i64::from(seq.wrapping_sub(last) as i32),
        };
        self.reference = Some((seq, off));
        off
    }
}

/// A TCP connection being collected.
pub(crate) struct Connection {
    pub client: SocketAddr,
    pub server: SocketAddr,
    /// [client→server, server→client]
    pub dirs: [Collecting; 2],
    /// The ISN of the client's SYN, when seen (tells a retransmitted SYN from port reuse).
    pub client_isn: Option<u32>,
    pub closed: bool,
    pub has_data: bool,
    /// Payload bytes held for this connection, charged to the capture's budget (given back when
    /// the connection is handed on).
    pub held: usize,
}

impl Connection {
    pub(crate) fn new(client: SocketAddr, server: SocketAddr) -> Connection {
        Connection {
            client,
            server,
            dirs: [Collecting::default(), Collecting::default()],
            client_isn: None,
            closed: false,
            has_data: false,
            held: 0,
        }
    }

    /// Records one segment, sent by `seg.src`; `input` is the capture file, which the
    /// segment's payload is usually a part of (then only its range is kept), and the last of
    /// the frame's facts where the payload lies in the file (kept in the segment's
    /// [`SegmentRef::at`]). Charges the bytes kept to `budget`, or gives their number back when
    /// they do not fit.
    pub(crate) fn add(
        &mut self,
        seg: &TcpSegment<'_>,
        input: &[u8],
        (frame, time, record, at): (u64, Option<Timestamp>, Span, Option<usize>),
        budget: &mut usize,
    ) -> Result<(), usize> {
        let (from, seq, payload) = (seg.src, seg.seq, seg.payload);
        let (syn, fin, rst) = (seg.syn, seg.fin, seg.rst);
        let d = usize::from(from != self.client);
        let dir = &mut self.dirs[d.min(1)];
        let off = dir.unwrap_seq(seq);
        let data_off = if syn {
            dir.start = Some(off + 1);
            off + 1
        } else {
            off
        };
        // A keep-alive probe (RFC 9293 §3.8.4): one byte (or none) at the next expected
        // sequence number less one, sent to make the peer acknowledge. Its byte repeats one
        // already sent (or is a stand-in, often zero) and is never data.
        let probe = !syn
            && !fin
            && !rst
            && payload.len() == 1
            && dir.next.is_some_and(|next| data_off + 1 == next);
        if probe {
            dir.probes += 1;
        } else if !payload.is_empty() {
            let end = data_off + payload.len() as i64;
            dir.next = Some(dir.next.map_or(end, |n| n.max(end)));
            if payload.len() > *budget {
                return Err(payload.len());
            }
            *budget -= payload.len();
            self.held += payload.len();
            self.has_data = true;
            dir.pieces.push(Piece {
                off: data_off,
                data: Held::of(payload, input),
                frame,
                time,
                record,
                at,
            });
        }
        if fin {
            let fin_off = data_off + payload.len() as i64;
            dir.fin = Some(dir.fin.map_or(fin_off, |f| f.min(fin_off)));
        }
        if rst {
            self.closed = true;
        }
        if self.dirs.iter().all(|d| d.fin.is_some()) {
            self.closed = true;
        }
        Ok(())
    }

    /// Puts each direction in order, its bytes copied out of `input` (the capture file the
    /// segments were added from). Warnings name the stream by `label`.
    pub(crate) fn finish(
        self,
        label: &str,
        input: &[u8],
        warnings: &mut Vec<String>,
    ) -> [Direction; 2] {
        let names = ["client→server", "server→client"];
        let mut out: [Direction; 2] = [Direction::default(), Direction::default()];
        for (i, mut dir) in self.dirs.into_iter().enumerate() {
            let Some(target) = out.get_mut(i) else {
                continue;
            };
            let start = dir
                .start
                .or_else(|| dir.pieces.iter().map(|p| p.off).min())
                .unwrap_or(0);
            dir.pieces.sort_by_key(|p| p.off); // stable: equal offsets keep arrival order
            let mut cursor = start;
            // Where the run of bytes after the last gap starts: its stream offset and its index
            // in the direction's bytes (gaps are closed up).
            let mut run = (start, 0usize);
            let end_limit = dir.fin.unwrap_or(i64::MAX);
            let mut overlaps = 0usize;
            let mut differing = Differing::default();
            let total: usize = dir.pieces.iter().map(|p| p.data.len()).sum();
            target.bytes.reserve(total);
            for piece in dir.pieces {
                let data = piece.data.bytes(input);
                let piece_end = piece.off + data.len() as i64;
                let end = piece_end.min(end_limit);
                differing.check(target, run, cursor, &piece, data, end);
                if end <= cursor {
                    if piece.off >= start && piece.off < end_limit {
                        overlaps += 1;
                    }
                    continue;
                }
                if piece.off > cursor {
                    let missing = piece.off - cursor;
                    warnings.push(format!(
                        "{label} {}: {missing} bytes are missing after stream byte {} (before frame {}); what was read up to them is cut there, and what follows is read on its own (HTTP/1.x from its next message)",
                        names.get(i).copied().unwrap_or(""),
                        cursor - start,
                        piece.frame
                    ));
                    target.gaps.push(Gap {
                        at: target.bytes.len(),
                        missing: u64::try_from(missing).unwrap_or(u64::MAX),
                        frame: piece.frame,
                    });
                    cursor = piece.off;
                    run = (piece.off, target.bytes.len());
                }
                if piece.off < cursor {
                    overlaps += 1;
                }
                let skip = usize::try_from(cursor - piece.off).unwrap_or(0);
                let take = usize::try_from(end - piece.off).unwrap_or(0);
                let Some(bytes) = data.get(skip..take) else {
                    continue;
                };
                let from = target.bytes.len();
                target.bytes.extend_from_slice(bytes);
                target.segments.push(SegmentRef {
                    span: Span::new(from, target.bytes.len()),
                    frame: piece.frame,
                    time: piece.time,
                    record: piece.record,
                    at: piece.at.map(|at| at + skip),
                });
                cursor = end;
            }
            target.retransmitted = overlaps;
            target.keep_alive_probes = dir.probes;
            let dir_name = names.get(i).copied().unwrap_or("");
            for (kept, other, span) in differing.found {
                warnings.push(format!(
                    "frames {kept} and {other}: TCP segments of {label} {dir_name} overlap at stream bytes {span} with different bytes; the first (frame {kept}) is kept"
                ));
            }
            if differing.more > 0 {
                warnings.push(format!(
                    "{label} {dir_name}: {} more overlaps of TCP segments with different bytes are not shown",
                    differing.more
                ));
            }
        }
        out
    }
}

/// Most overlap warnings per direction; the rest are counted.
const MAX_DIFFERING: usize = 20;

/// Overlapping copies of stream bytes that differ from the bytes kept.
#[derive(Default)]
struct Differing {
    /// (frame kept, frame that differs, stream bytes of their overlap).
    found: Vec<(u64, u64, Span)>,
    more: usize,
}

impl Differing {
    /// Compares the part of `piece` (up to stream offset `end`) that falls on bytes already in
    /// `dir` since the last gap (stream offsets `run.0..cursor`, from index `run.1` of its bytes)
    /// with those bytes, per kept segment.
    fn check(
        &mut self,
        dir: &Direction,
        run: (i64, usize),
        cursor: i64,
        piece: &Piece,
        data: &[u8],
        end: i64,
    ) {
        let (start, first) = run;
        let from = piece.off.max(start);
        let to = end.min(cursor);
        if from >= to {
            return;
        }
        let (Ok(lo), Ok(hi)) = (usize::try_from(from - start), usize::try_from(to - start)) else {
            return;
        };
        let (lo, hi) = (lo + first, hi + first);
        for kept in dir.segments_in(Span::new(lo, hi)) {
            let (a, b) = (kept.span.start.max(lo), kept.span.end.min(hi));
            let theirs = dir.bytes.get(a..b);
            let skip = ((a - first) as i64 + start) - piece.off;
            let mine = usize::try_from(skip)
                .ok()
                .and_then(|s| data.get(s..s + (b - a)));
            if let (Some(theirs), Some(mine)) = (theirs, mine) {
                if theirs != mine {
                    if self.found.len() < MAX_DIFFERING {
                        self.found.push((kept.frame, piece.frame, Span::new(a, b)));
                    } else {
                        self.more += 1;
                    }
                }
            }
        }
    }
}
