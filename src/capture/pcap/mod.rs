//! Captured network traffic: pcap and pcapng files down to the TCP and UDP payload bytes.
//!
//! Engineers hand wirelens a capture saved from Wireshark or tcpdump; what they want to see is
//! the bytes the application sent. This module reads the file container ([`file`]: classic pcap
//! in either byte order with micro- or nanosecond times, and pcapng with its sections, interfaces
//! and timestamp resolutions), peels the link and network layers (`net`: Ethernet with VLAN
//! tags, Linux cooked SLL/SLL2, raw IP, null/loopback, NFLOG; IPv4 and IPv6) and reassembles TCP
//! streams (`tcp`) so each direction of each connection becomes one byte buffer, with a map from
//! byte ranges back to the frames (and times) that carried them. UDP datagrams stay separate.
//!
//! What it does not do: parse HTTP or any application protocol (the HTTP layer does that on the
//! stream bytes), reassemble IPv6 fragments (they are reported and skipped; IPv4 fragments are
//! reassembled by `frag`, bounded), or decode anything
//! above TCP/UDP. Frames are numbered from 1 like Wireshark does, so "frame 4" here is frame 4
//! there.
//!
//! Conventions: nothing here panics on any input; memory is bounded by [`PcapLimits`] (payload
//! bytes held across all streams, or across the connections open at once when [`extract_each`]
//! hands each on as it closes; and packets read); segment data is held as ranges of the file,
//! not copied, until a connection is put in order; exceeding a limit, a file cut short, a
//! truncated packet, a gap in a TCP stream — each gives a warning in [`Capture::warnings`] and as
//! much data as is sound, never an error. Only input that is not a capture file at all, or a
//! pcapng block whose length fields are impossible, is a [`CaptureError`].

mod file;
mod frag;
mod net;
mod tcp;

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;

use crate::capture::tls::{self, TlsSummary};
use crate::model::{Span, Timestamp};

pub use file::FileFormat;

pub use crate::capture::payload::{CaptureError, Layer, Payload};

/// Bounds on the work [`extract`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PcapLimits {
    /// Payload bytes held across all streams (default 256 MiB); beyond it, data is dropped with a
    /// warning. [`extract_each`] gives a connection's bytes back when it hands the connection
    /// on, so there it bounds the connections open at once.
    pub max_stream_bytes: usize,
    /// Packets read (default 10 million); beyond it, reading stops with a warning.
    pub max_packets: usize,
}

impl Default for PcapLimits {
    fn default() -> Self {
        PcapLimits::from(&crate::limits::Limits::default())
    }
}

impl From<&crate::limits::Limits> for PcapLimits {
    /// The pcap reader's bounds.
    fn from(limits: &crate::limits::Limits) -> PcapLimits {
        PcapLimits {
            max_stream_bytes: limits.max_pcap_bytes,
            max_packets: limits.max_pcap_packets,
        }
    }
}

pub use super::protocols::Transport;

/// Which frame carried a range of a direction's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentRef {
    /// The range in [`Direction::bytes`].
    pub span: Span,
    /// The frame number (1-based, as Wireshark counts).
    pub frame: u64,
    /// When the frame was captured (pcapng simple packet blocks have no time).
    pub time: Option<Timestamp>,
    /// The frame's record in the capture file.
    pub record: Span,
    /// Where the range's first byte lies in the capture file, when the bytes lie there as they
    /// were sent (not when they were put together from IP fragments): a payload of these bytes
    /// can be read back from the file instead of held.
    pub at: Option<usize>,
}

/// Where `part` (a slice of packet `p`'s data) lies in the capture file, when it lies in `p`'s
/// data at all (a datagram put together from fragments does not).
fn file_offset(p: &file::Packet<'_>, part: &[u8]) -> Option<usize> {
    let from = (part.as_ptr() as usize).checked_sub(p.data.as_ptr() as usize)?;
    (from.checked_add(part.len())? <= p.data.len()).then_some(p.data_at + from)
}

/// One direction of a stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Direction {
    /// The bytes sent, in stream order (TCP: reassembled, each gap closed up and listed in
    /// [`Direction::gaps`]; [`Direction::contiguous`] is what comes before the first).
    pub bytes: Vec<u8>,
    /// From byte ranges of `bytes` to the frames that carried them, in byte order. UDP: one per
    /// datagram.
    pub segments: Vec<SegmentRef>,
    /// TCP segments whose data was already there in whole or in part (retransmissions,
    /// overlaps); their bytes are kept once.
    pub retransmitted: usize,
    /// TCP keep-alive probes left out (one byte just before the next expected one).
    pub keep_alive_probes: usize,
    /// Where TCP bytes were missing (lost or not captured), in byte order.
    pub gaps: Vec<Gap>,
}

/// Bytes of a TCP direction that were never captured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gap {
    /// Where in [`Direction::bytes`] the missing bytes would have been.
    pub at: usize,
    /// How many bytes are missing.
    pub missing: u64,
    /// The first frame after the gap.
    pub frame: u64,
}

impl Direction {
    /// The bytes before the first gap: the stream as a parser that cannot skip a gap reads it.
    pub fn contiguous(&self) -> &[u8] {
        let end = self.gaps.first().map_or(self.bytes.len(), |g| g.at);
        self.bytes.get(..end).unwrap_or(&self.bytes)
    }

    /// The runs of [`Direction::bytes`] between gaps, in order (one run without a gap).
    pub fn runs(&self) -> Vec<Span> {
        let mut runs = Vec::with_capacity(self.gaps.len() + 1);
        let mut from = 0;
        for g in &self.gaps {
            runs.push(Span::new(from, g.at.max(from)));
            from = g.at.max(from);
        }
        runs.push(Span::new(from, self.bytes.len().max(from)));
        runs
    }

    /// The segments that carried any byte of `span` (a range of [`Direction::bytes`]).
    pub fn segments_in(&self, span: Span) -> &[SegmentRef] {
        let first = self.segments.partition_point(|s| s.span.end <= span.start);
        let last = self.segments.partition_point(|s| s.span.start < span.end);
        self.segments.get(first..last.max(first)).unwrap_or(&[])
    }

    /// The time of the earliest frame that carried data.
    pub fn first_time(&self) -> Option<Timestamp> {
        self.segments
            .iter()
            .min_by_key(|s| s.frame)
            .and_then(|s| s.time)
    }
}

/// One conversation between two endpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stream {
    /// TCP or UDP.
    pub protocol: Transport,
    /// The side that opened it (TCP: the SYN's sender; else the lower-priority guess: the
    /// higher port, or UDP's first sender).
    pub client: SocketAddr,
    /// The other side.
    pub server: SocketAddr,
    /// `[client→server, server→client]`.
    pub directions: [Direction; 2],
}

/// What a capture file held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// The streams, in order of their first packet. [`extract_each`] hands them on one at a
    /// time instead: its view holds the one stream handed, [`Capture::first_stream`] its index.
    pub streams: Vec<Stream>,
    /// The index of `streams[0]` among all the capture's streams: 0 for a whole capture.
    pub first_stream: usize,
    /// The streams [`extract_each`] handed on, counted for [`summary`].
    handed: Handed,
    /// Packets read.
    pub packets: usize,
    /// Everything that was not quite right: cut files, truncated packets, gaps, limits, fragments.
    pub warnings: Vec<String>,
    /// pcap or pcapng.
    pub format: FileFormat,
    /// Length of the capture file (the span of the `pcap`/`pcapng` layer).
    pub input_len: usize,
    /// The link types seen, in order of first use.
    pub linktypes: Vec<u32>,
    /// Packets of link types that are not read, per link type, in order of first use.
    pub skipped_linktypes: Vec<(u32, usize)>,
    /// Packets read whose link layer was understood but that carry no TCP or UDP over IP (ARP,
    /// ICMP, other ethertypes).
    pub other_packets: usize,
    /// The frames whose data was captured shorter than it was on the wire (snap length, or the
    /// file cut inside the packet), ascending: every payload they carried is marked cut.
    pub short_frames: Vec<u64>,
    /// The frame at which the payload-bytes limit ([`PcapLimits::max_stream_bytes`]) was
    /// reached: payload data from there on was dropped (a warning says so too).
    pub dropped_from: Option<u64>,
    /// The TLS key logs (NSS format text) embedded in pcapng Decryption Secrets Blocks, one per
    /// block in file order: a capture made with `editcap --inject-secrets tls,KEYLOG` carries
    /// the keys to decrypt itself ([`Capture::tls_key_log`]).
    pub tls_secrets: Vec<String>,
}

/// The streams handed on by [`extract_each`], counted as [`summary`] counts streams.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Handed {
    tcp: usize,
    udp: usize,
    with_data: usize,
    tls: Vec<(usize, TlsSummary)>,
}

impl Handed {
    fn count(&mut self, index: usize, stream: &Stream) {
        match stream.protocol {
            Transport::Tcp => {
                self.tcp += 1;
                if let Some(t) = tls_of(stream) {
                    self.tls.push((index, t));
                }
            }
            Transport::Udp => self.udp += 1,
        }
        if stream.directions.iter().any(|d| !d.bytes.is_empty()) {
            self.with_data += 1;
        }
    }
}

impl Capture {
    /// Stream `index` (counted over the whole capture), when this capture or view holds it.
    pub fn stream(&self, index: usize) -> Option<&Stream> {
        self.streams.get(index.checked_sub(self.first_stream)?)
    }

    /// The key log of the capture's Decryption Secrets Blocks, all blocks merged; empty when
    /// there are none. A malformed block is an error naming the block (from 1) and its line.
    pub fn tls_key_log(&self) -> Result<super::tls::KeyLog, super::tls::KeyLogError> {
        let mut log = super::tls::KeyLog::default();
        for (n, text) in self.tls_secrets.iter().enumerate() {
            let block = super::tls::KeyLog::parse(text).map_err(|e| super::tls::KeyLogError {
                block: Some(n.saturating_add(1)),
                ..e
            })?;
            log.merge(block);
        }
        Ok(log)
    }
}

/// Whether the bytes start like a pcap (either byte order, micro- or nanosecond) or pcapng file.
pub fn is_pcap(bytes: &[u8]) -> bool {
    file::sniff(bytes).is_some()
}

/// Warnings beyond this many are counted, not kept.
const MAX_WARNINGS: usize = 200;

struct Warnings {
    list: Vec<String>,
    dropped: usize,
}

impl Warnings {
    fn push(&mut self, message: String) {
        if self.list.len() < MAX_WARNINGS {
            self.list.push(message);
        } else {
            self.dropped += 1;
        }
    }

    fn finish(mut self) -> Vec<String> {
        if self.dropped > 0 {
            self.list
                .push(format!("{} more warnings are not shown", self.dropped));
        }
        self.list
    }
}

enum Pending {
    Tcp(tcp::Connection),
    Udp(Stream),
    /// A closed TLS connection put in order, handed on at the end, when every key log the file
    /// carries is known.
    Finished(Stream),
    /// Handed on already; later segments of its four-tuple (the last ACK, a retransmitted FIN)
    /// carry nothing new.
    Done,
}

/// Packets after a connection closed (both FINs, or a RST) before it is handed on: segments
/// that arrive late (retransmissions filling a hole before the FIN) still find it.
const CLOSE_GRACE: usize = 1024;

/// Where [`extract_each`] hands streams; false stops the reading.
type Each<'e> = &'e mut dyn FnMut(&mut Capture) -> bool;

struct State<'a> {
    limits: PcapLimits,
    /// The capture file, which most segments' data lies in (empty when it is read from a
    /// reader: then segments hold copies of their data).
    input: &'a [u8],
    /// How much of the file was read: all of it when it is in memory, else up to the last packet.
    input_len: usize,
    format: FileFormat,
    pending: Vec<Pending>,
    /// Closed TCP connections by index in `pending`, with the packet count at closing, in the
    /// order they closed (only when streams are handed on).
    closing: VecDeque<(usize, usize)>,
    handing: bool,
    /// Whoever streams were handed to said to stop: the rest of the file is not read.
    stopped: bool,
    handed: Handed,
    /// (lower address, higher address) → index of the current stream in `pending`.
    current: HashMap<(SocketAddr, SocketAddr), usize>,
    budget: usize,
    /// The frame at which `max_stream_bytes` was reached (payload data from there on is dropped).
    dropped_from: Option<u64>,
    packets: usize,
    truncated: usize,
    first_truncated: u64,
    short_frames: Vec<u64>,
    linktypes: Vec<u32>,
    skipped_linktypes: Vec<(u32, usize)>,
    other_packets: usize,
    warnings: Warnings,
    frags: frag::Reassembly,
}

fn key(a: SocketAddr, b: SocketAddr) -> (SocketAddr, SocketAddr) {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

impl State<'_> {
    fn over_budget(&mut self, frame: u64, len: usize) {
        if self.dropped_from.is_none() {
            self.dropped_from = Some(frame);
            self.warnings.push(format!(
                "the limit of {} payload bytes was reached at frame {frame} ({len} more bytes); later payload data is dropped",
                self.limits.max_stream_bytes
            ));
        }
    }

    fn packet(&mut self, p: file::Packet<'_>) -> bool {
        if self.packets >= self.limits.max_packets {
            self.warnings.push(format!(
                "the limit of {} packets was reached; reading stopped before frame {}",
                self.limits.max_packets, p.frame
            ));
            return false;
        }
        self.packets += 1;
        self.input_len = self.input_len.max(p.record.end);
        if !self.linktypes.contains(&p.linktype) {
            self.linktypes.push(p.linktype);
        }
        if (p.data.len() as u64) < p.orig_len {
            if self.truncated == 0 {
                self.first_truncated = p.frame;
            }
            self.truncated += 1;
            self.short_frames.push(p.frame);
        }
        if !net::is_supported(p.linktype) {
            // Counted, not warned per frame: one line in `finish` says how many were skipped.
            match self
                .skipped_linktypes
                .iter_mut()
                .find(|(l, _)| *l == p.linktype)
            {
                Some((_, n)) => *n += 1,
                None => self.skipped_linktypes.push((p.linktype, 1)),
            }
            return true;
        }
        match net::parse(p.linktype, p.data) {
            Err(None) => self.other_packets += 1,
            Err(Some(why)) => self.warnings.push(format!("frame {}: {why}", p.frame)),
            Ok(net::Transport::Tcp(seg)) => self.tcp(seg, &p),
            Ok(net::Transport::Udp(dgram)) => self.udp(dgram, &p),
            Ok(net::Transport::Fragment(f)) => match self.frags.add(f, p.frame) {
                Ok(None) => {}
                Err(why) => self.warnings.push(format!("frame {}: {why}", p.frame)),
                Ok(Some((src, dst, proto, bytes))) => {
                    match net::transport(proto, src.into(), dst.into(), &bytes) {
                        Ok(net::Transport::Tcp(seg)) => self.tcp(seg, &p),
                        Ok(net::Transport::Udp(dgram)) => self.udp(dgram, &p),
                        Ok(net::Transport::Fragment(_)) | Err(None) => {}
                        Err(Some(why)) => self.warnings.push(format!(
                            "frame {} (last fragment of a datagram): {why}",
                            p.frame
                        )),
                    }
                }
            },
        }
        true
    }

    fn tcp(&mut self, seg: net::TcpSegment<'_>, p: &file::Packet<'_>) {
        let k = key(seg.src, seg.dst);
        let open_new = match self.current.get(&k).and_then(|&i| self.pending.get(i)) {
            // Handed on: only a new connection on the same ports is news.
            Some(Pending::Done | Pending::Finished(_)) if !seg.syn || seg.ack => return,
            Some(Pending::Tcp(c)) => {
                if seg.syn && !seg.ack {
                    // A retransmitted SYN keeps the connection; a fresh one (port reuse) does not.
                    c.closed || c.has_data || c.client_isn.is_some_and(|isn| isn != seg.seq)
                } else {
                    seg.syn && c.closed
                }
            }
            _ => true,
        };
        if open_new {
            let (client, server) = if seg.syn {
                if seg.ack {
                    (seg.dst, seg.src)
                } else {
                    (seg.src, seg.dst)
                }
            } else if seg.src.port() > seg.dst.port() {
                (seg.src, seg.dst)
            } else {
                (seg.dst, seg.src)
            };
            let mut conn = tcp::Connection::new(client, server);
            if seg.syn && !seg.ack {
                conn.client_isn = Some(seg.seq);
            }
            self.current.insert(k, self.pending.len());
            self.pending.push(Pending::Tcp(conn));
        }
        let Some(&index) = self.current.get(&k) else {
            return;
        };
        let seg = if self.dropped_from.is_some() {
            net::TcpSegment {
                payload: &[],
                ..seg
            }
        } else {
            seg
        };
        let at = file_offset(p, seg.payload);
        let Some(Pending::Tcp(conn)) = self.pending.get_mut(index) else {
            return;
        };
        let was_closed = conn.closed;
        let added = conn.add(
            &seg,
            self.input,
            (p.frame, p.time, p.record, at),
            &mut self.budget,
        );
        if let Err(len) = added {
            // Keep the flags (FIN/RST) even when the data is dropped.
            let _ = conn.add(
                &net::TcpSegment {
                    payload: &[],
                    ..seg
                },
                self.input,
                (p.frame, p.time, p.record, None),
                &mut self.budget,
            );
            let closed = conn.closed;
            self.over_budget(p.frame, len);
            if self.handing && closed && !was_closed {
                self.closing.push_back((index, self.packets));
            }
            return;
        }
        let closed = conn.closed;
        if self.handing && closed && !was_closed {
            self.closing.push_back((index, self.packets));
        }
    }

    /// Stream `index`, made of what `pending` held for it (a TCP connection put in order, its
    /// bytes given back to the budget).
    fn stream_of(&mut self, index: usize, pending: Pending) -> Option<Stream> {
        match pending {
            Pending::Udp(s) | Pending::Finished(s) => Some(s),
            Pending::Done => None,
            Pending::Tcp(c) => {
                let (client, server) = (c.client, c.server);
                self.budget = self.budget.saturating_add(c.held);
                let label = format!("stream {index} (TCP {client} → {server})");
                let mut list = Vec::new();
                let directions = c.finish(&label, self.input, &mut list);
                for w in list {
                    self.warnings.push(w);
                }
                Some(Stream {
                    protocol: Transport::Tcp,
                    client,
                    server,
                    directions,
                })
            }
        }
    }

    /// Hands on the connections that closed at least [`CLOSE_GRACE`] packets ago, except TLS
    /// ones (kept for the key logs of the rest of the file).
    fn hand_closed(&mut self, each: Each<'_>) {
        while let Some(&(index, at)) = self.closing.front() {
            if self.stopped || self.packets < at.saturating_add(CLOSE_GRACE) {
                break;
            }
            self.closing.pop_front();
            let Some(slot) = self.pending.get_mut(index) else {
                continue;
            };
            let pending = std::mem::replace(slot, Pending::Done);
            let Some(stream) = self.stream_of(index, pending) else {
                continue;
            };
            let tls = tls_of(&stream).is_some()
                || stream
                    .directions
                    .iter()
                    .any(|d| tls::looks_like_tls(d.contiguous()));
            if tls {
                if let Some(slot) = self.pending.get_mut(index) {
                    *slot = Pending::Finished(stream);
                }
                continue;
            }
            self.hand(index, stream, Vec::new(), each);
        }
    }

    /// Gives `each` a view of the capture so far holding stream `index` alone.
    fn hand(&mut self, index: usize, stream: Stream, tls_secrets: Vec<String>, each: Each<'_>) {
        self.handed.count(index, &stream);
        let mut view = Capture {
            streams: vec![stream],
            first_stream: index,
            handed: Handed::default(),
            packets: self.packets,
            warnings: Vec::new(),
            format: self.format,
            input_len: self.input_len,
            linktypes: std::mem::take(&mut self.linktypes),
            skipped_linktypes: Vec::new(),
            other_packets: self.other_packets,
            short_frames: std::mem::take(&mut self.short_frames),
            dropped_from: self.dropped_from,
            tls_secrets,
        };
        if !each(&mut view) {
            self.stopped = true;
        }
        self.linktypes = view.linktypes;
        self.short_frames = view.short_frames;
    }

    fn udp(&mut self, d: net::UdpDatagram<'_>, p: &file::Packet<'_>) {
        let k = key(d.src, d.dst);
        let index = match self.current.get(&k) {
            Some(&i) if matches!(self.pending.get(i), Some(Pending::Udp(_))) => i,
            _ => {
                self.current.insert(k, self.pending.len());
                self.pending.push(Pending::Udp(Stream {
                    protocol: Transport::Udp,
                    client: d.src,
                    server: d.dst,
                    directions: [Direction::default(), Direction::default()],
                }));
                self.pending.len() - 1
            }
        };
        if d.payload.len() > self.budget {
            self.over_budget(p.frame, d.payload.len());
            return;
        }
        self.budget -= d.payload.len();
        let Some(Pending::Udp(stream)) = self.pending.get_mut(index) else {
            return;
        };
        let which = usize::from(d.src != stream.client);
        let Some(dir) = stream.directions.get_mut(which) else {
            return;
        };
        let from = dir.bytes.len();
        dir.bytes.extend_from_slice(d.payload);
        dir.segments.push(SegmentRef {
            span: Span::new(from, dir.bytes.len()),
            frame: p.frame,
            time: p.time,
            record: p.record,
            at: file_offset(p, d.payload),
        });
    }

    /// The capture: its streams (or, handing on, each one given to `each`, in order), its
    /// counts and its warnings.
    fn finish(mut self, tls_secrets: Vec<String>, mut each: Option<Each<'_>>) -> Capture {
        for &(linktype, n) in &self.skipped_linktypes {
            self.warnings.push(skipped_sentence(linktype, n));
        }
        for line in self.frags.unfinished() {
            self.warnings.push(line);
        }
        if self.truncated > 0 {
            self.warnings.push(format!(
                "{} packets were captured shorter than they were on the wire (first: frame {}); their data is kept as far as it was captured",
                self.truncated, self.first_truncated
            ));
        }
        let pending = std::mem::take(&mut self.pending);
        let mut streams = Vec::with_capacity(if each.is_some() { 0 } else { pending.len() });
        for (i, pending) in pending.into_iter().enumerate() {
            if self.stopped {
                break;
            }
            let Some(stream) = self.stream_of(i, pending) else {
                continue;
            };
            match each.as_deref_mut() {
                Some(each) => self.hand(i, stream, tls_secrets.clone(), each),
                None => streams.push(stream),
            }
        }
        Capture {
            streams,
            first_stream: 0,
            handed: self.handed,
            packets: self.packets,
            warnings: self.warnings.finish(),
            format: self.format,
            input_len: self.input_len,
            linktypes: self.linktypes,
            skipped_linktypes: self.skipped_linktypes,
            other_packets: self.other_packets,
            short_frames: self.short_frames,
            dropped_from: self.dropped_from,
            tls_secrets,
        }
    }
}

/// `link type 258 (PKTAP) is not supported: 4 packets skipped`.
fn skipped_sentence(linktype: u32, packets: usize) -> String {
    format!(
        "{} is not supported: {packets} {} skipped",
        net::linktype_label(linktype),
        plural(packets, "packet", "packets")
    )
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// Reads a pcap or pcapng capture and reassembles its TCP streams and UDP conversations.
///
/// Errors only when the bytes are not a capture file or a pcapng block is malformed; the error
/// then carries the payloads found before the fault. Everything else (a file cut short, truncated
/// packets, gaps, limits) is a warning in the returned [`Capture`].
pub fn extract(bytes: &[u8], limits: &PcapLimits) -> Result<Capture, CaptureError> {
    read(&mut { bytes }, bytes, limits, None)
}

/// [`extract`], handing each stream to `each` as soon as it is complete instead of keeping them
/// all: a TCP connection 1,024 packets after it closed (both FINs, or a RST), the
/// rest (and closed TLS connections, so that every key log in the file is known) at the end,
/// each in a view of the capture so far that holds it alone ([`Capture::first_stream`]). Only
/// the connections open at once are held, so a capture of many short connections takes memory
/// for the few open at a time, not for all of them; `pcap-bytes` bounds the bytes they hold.
/// Streams are handed on in the order they close, not by index. `each` returns false to stop:
/// no stream is handed on after it, and the rest of the file is not read.
///
/// The capture returned holds no streams, only its counts and warnings; on an error, the
/// streams read before the fault were handed on and the error carries no payloads.
pub fn extract_each(
    bytes: &[u8],
    limits: &PcapLimits,
    each: &mut dyn FnMut(&mut Capture) -> bool,
) -> Result<Capture, CaptureError> {
    read(&mut { bytes }, bytes, limits, Some(each))
}

/// [`extract_each`] of a capture read from `reader` record by record (a file of any size, or
/// `tcpdump -w -` on standard input): the file is not held, only the data of the connections
/// open at once (copied out of their packets) and the record being read. The capture layer of a
/// stream handed on says the packets and bytes read so far.
pub fn extract_each_from(
    reader: &mut dyn std::io::Read,
    limits: &PcapLimits,
    each: &mut dyn FnMut(&mut Capture) -> bool,
) -> Result<Capture, CaptureError> {
    let mut source = file::ReadSource::new(reader);
    let read = read(&mut source, &[], limits, Some(each));
    read.map(|mut capture| {
        capture.input_len = capture.input_len.max(source.read_len());
        capture
    })
}

fn read(
    src: &mut dyn file::Source,
    bytes: &[u8],
    limits: &PcapLimits,
    mut each: Option<Each<'_>>,
) -> Result<Capture, CaptureError> {
    let sniffed = match src.get(0, 12) {
        Ok(head) => file::sniff(head).ok_or_else(|| file::FileFault {
            offset: 0,
            message: "the input does not start with a pcap or pcapng header".to_string(),
        }),
        Err(fault) => Err(fault),
    };
    let format = match sniffed {
        Ok(format) => format,
        Err(fault) => {
            return Err(CaptureError {
                layer: "pcap".to_string(),
                offset: fault.offset,
                message: fault.message,
                extracted: Vec::new(),
            })
        }
    };
    let mut state = State {
        limits: *limits,
        input: bytes,
        input_len: bytes.len(),
        format,
        closing: VecDeque::new(),
        handing: each.is_some(),
        stopped: false,
        handed: Handed::default(),
        pending: Vec::new(),
        current: HashMap::new(),
        budget: limits.max_stream_bytes,
        dropped_from: None,
        packets: 0,
        truncated: 0,
        first_truncated: 0,
        short_frames: Vec::new(),
        linktypes: Vec::new(),
        skipped_linktypes: Vec::new(),
        other_packets: 0,
        warnings: Warnings {
            list: Vec::new(),
            dropped: 0,
        },
        frags: frag::Reassembly::default(),
    };
    let mut file_warnings = Vec::new();
    let mut secrets = Vec::new();
    let walked = file::walk(src, &mut file_warnings, &mut secrets, &mut |p| {
        let go = state.packet(p);
        if let Some(each) = each.as_deref_mut() {
            state.hand_closed(each);
        }
        go && !state.stopped
    });
    for w in file_warnings {
        state.warnings.push(w);
    }
    match walked {
        Ok(_) => Ok(state.finish(secrets, each)),
        Err(fault) => {
            let layer = format.name().to_string();
            let handing = each.is_some();
            let capture = state.finish(secrets, each);
            let extracted = if handing {
                Vec::new()
            } else {
                payloads(&capture)
            };
            Err(CaptureError {
                layer,
                offset: fault.offset,
                message: fault.message,
                extracted,
            })
        }
    }
}

/// Frame numbers as a short list: `4, 6, 8–9`.
fn frame_list(frames: &mut Vec<u64>) -> String {
    frames.sort_unstable();
    frames.dedup();
    let mut out = String::new();
    let mut i = 0;
    while let Some(&first) = frames.get(i) {
        let mut last = first;
        while let Some(next) = last.checked_add(1).filter(|n| frames.get(i + 1) == Some(n)) {
            i += 1;
            last = next;
        }
        if !out.is_empty() {
            out.push_str(", ");
        }
        if last == first {
            out.push_str(&first.to_string());
        } else {
            out.push_str(&format!("{first}–{last}"));
        }
        i += 1;
    }
    out
}

/// Most characters of the frame numbers in a stream layer's detail; the whole list is in the
/// payload's `frames` meta.
const FRAMES_IN_DETAIL: usize = 80;

/// `list` (as [`frame_list`] writes it, `count` frames) in at most about `max` characters: the
/// list itself when it fits, else its first runs and `… (N frames in M runs)`.
fn frame_summary(list: &str, count: usize, max: usize) -> String {
    if list.chars().count() <= max {
        return list.to_string();
    }
    let runs = list.split(", ").count();
    let tail = format!("… ({count} frames in {runs} runs)");
    let room = max.saturating_sub(tail.chars().count());
    let mut out = String::new();
    let mut used = 0usize;
    for run in list.split(", ") {
        let len = run.chars().count() + 2;
        // The first run is always shown, so the summary says where the stream starts.
        if used > 0 && used + len > room {
            break;
        }
        out.push_str(run);
        out.push_str(", ");
        used += len;
    }
    out.push_str(&tail);
    out
}

fn payload_for(
    capture: &Capture,
    index: usize,
    stream: &Stream,
    which: usize,
    bytes: &[u8],
    segments: &[SegmentRef],
) -> Payload {
    let (from, to, dir_name) = if which == 0 {
        (stream.client, stream.server, "client→server")
    } else {
        (stream.server, stream.client, "server→client")
    };
    let mut frames: Vec<u64> = segments.iter().map(|s| s.frame).collect();
    let all_frames = frame_list(&mut frames);
    let frames_in_detail = frame_summary(&all_frames, frames.len(), FRAMES_IN_DETAIL);
    let record = match (
        segments.iter().map(|s| s.record.start).min(),
        segments.iter().map(|s| s.record.end).max(),
    ) {
        (Some(a), Some(b)) => Span::new(a, b.max(a)),
        _ => Span::empty(0),
    };
    let first_time = segments
        .iter()
        .min_by_key(|s| s.frame)
        .and_then(|s| s.time)
        .map(|t| t.to_rfc3339());
    let mut meta = crate::capture::Meta::from([
        ("stream", index.to_string()),
        ("direction", dir_name.to_string()),
    ]);
    if let Some(t) = first_time {
        meta.push(("first time".to_string(), t));
    }
    meta.push(("frames".to_string(), all_frames));
    // Bytes the capture never had: what was read of them is cut, whatever read it.
    let cut = frames
        .iter()
        .find(|f| capture.short_frames.binary_search(f).is_ok())
        .map(|short| format!("frame {short} was captured shorter than it was on the wire"));
    Payload {
        message: None,
        avro: None,
        bytes: bytes.into(),
        layers: vec![
            capture_layer(capture),
            Layer {
                name: format!("{} {from} → {to}", stream.protocol.name()),
                detail: format!("stream {index}, {dir_name}, frames {frames_in_detail}"),
                span: record,
            },
        ],
        hint: None,
        meta,
        cut,
        protocol: None,
    }
}

/// The outermost layer of every payload of `capture`: the file, its packets and link types.
pub(crate) fn capture_layer(capture: &Capture) -> Layer {
    let links: Vec<String> = capture
        .linktypes
        .iter()
        .map(|&l| net::linktype_name(l))
        .collect();
    Layer {
        name: capture.format.name().to_string(),
        detail: format!("{} packets, {}", capture.packets, links.join(", ")),
        span: Span::new(0, capture.input_len),
    }
}

/// One payload per non-empty direction of each TCP stream, and one per UDP datagram, in stream
/// order (client→server before server→client).
///
/// A TCP stream whose directions are TLS records ([`tls::summarize`]) is marked as encrypted:
/// each direction gets a layer named for the version (`TLS 1.3`) whose detail is the summary's
/// [`TlsSummary::describe`], and the meta entry `("encrypted", "TLS")`, so no format is guessed
/// for it.
pub fn payloads(capture: &Capture) -> Vec<Payload> {
    (capture.first_stream..capture.first_stream + capture.streams.len())
        .flat_map(|index| stream_payloads(capture, index))
        .map(|(payload, _, _)| payload)
        .collect()
}

/// [`payloads`] of stream `index` alone, each with its direction and the range of that
/// direction's bytes it is.
pub(crate) fn stream_payloads(capture: &Capture, index: usize) -> Vec<(Payload, usize, Span)> {
    let mut out = Vec::new();
    let Some(stream) = capture.stream(index) else {
        return out;
    };
    let tls = match stream.protocol {
        Transport::Tcp => tls_of(stream),
        Transport::Udp => None,
    };
    // A UDP flow that carried a QUIC long-header packet (its handshake) goes on in short-header
    // packets, which name no version: those are QUIC too.
    let quic_flow = stream.protocol == Transport::Udp
        && stream.directions.iter().any(|d| {
            d.segments.iter().any(|seg| {
                let bytes = d.bytes.get(seg.span.range()).unwrap_or(&[]);
                super::protocols::protocol_of(stream.protocol, stream.client, stream.server, bytes)
                    == Some("QUIC")
            })
        });
    for (which, dir) in stream.directions.iter().enumerate() {
        match stream.protocol {
            Transport::Tcp => {
                // One payload a run: the bytes after a gap are what was captured, not a
                // continuation of the bytes before it (as tshark shows each segment after
                // "previous segment not captured").
                for (n, run) in dir.runs().into_iter().enumerate() {
                    let Some(bytes) = dir.bytes.get(run.range()).filter(|b| !b.is_empty()) else {
                        continue;
                    };
                    let segments = dir.segments_in(run);
                    let mut payload = payload_for(capture, index, stream, which, bytes, segments);
                    // A run that a gap ends or starts may be a message without its end or its
                    // start: cut, so it is not converted as if whole.
                    let before = n.checked_sub(1).and_then(|g| dir.gaps.get(g));
                    let after = dir.gaps.get(n);
                    if let Some(gap) = before {
                        payload.meta.push((
                            "after a gap".to_string(),
                            format!(
                                "{} bytes not captured before frame {}",
                                gap.missing, gap.frame
                            ),
                        ));
                    }
                    if (before.is_some() || after.is_some()) && payload.cut.is_none() {
                        payload.cut = Some(
                            "a gap in the TCP stream lies at its start or its end".to_string(),
                        );
                    }
                    if let Some(summary) = &tls {
                        mark_encrypted(&mut payload, summary);
                    } else {
                        mark_protocol(&mut payload, stream, bytes);
                    }
                    out.push((payload, which, run));
                }
            }
            Transport::Udp => {
                for seg in &dir.segments {
                    let bytes = dir.bytes.get(seg.span.range()).unwrap_or(&[]);
                    let mut payload = payload_for(
                        capture,
                        index,
                        stream,
                        which,
                        bytes,
                        std::slice::from_ref(seg),
                    );
                    mark_protocol(&mut payload, stream, bytes);
                    if quic_flow
                        && payload.protocol.is_none()
                        && super::protocols::quic_short_header(bytes)
                    {
                        payload.hint = None;
                        payload.protocol = Some("QUIC".to_string());
                    }
                    out.push((payload, which, seg.span));
                }
            }
        }
    }
    out
}

/// The capture and TCP layers (and their meta) of the bytes `span` of direction `which` of
/// stream `index`, naming only the frames that carried that span; its bytes are empty, for the
/// caller to fill with what the application layers made of them. Also the first of those
/// frames' numbers, the order messages are listed in.
pub(crate) fn span_payload(
    capture: &Capture,
    index: usize,
    which: usize,
    span: Span,
) -> (Payload, u64) {
    let Some(stream) = capture.stream(index) else {
        return (Payload::default(), 0);
    };
    let Some(dir) = stream.directions.get(which) else {
        return (Payload::default(), 0);
    };
    let segments = dir.segments_in(span);
    super::work::add(segments.len());
    let first = segments.iter().map(|s| s.frame).min().unwrap_or(0);
    (
        payload_for(capture, index, stream, which, &[], segments),
        first,
    )
}

/// The frame numbers that carried `span` of direction `which` of stream `index`, as a short list
/// (`4, 6–9`).
pub(crate) fn span_frames(capture: &Capture, index: usize, which: usize, span: Span) -> String {
    let mut frames: Vec<u64> = capture
        .stream(index)
        .and_then(|s| s.directions.get(which))
        .map(|d| d.segments_in(span).iter().map(|s| s.frame).collect())
        .unwrap_or_default();
    super::work::add(frames.len());
    frame_list(&mut frames)
}

/// The TLS summary of a TCP stream, if it is TLS.
fn tls_of(stream: &Stream) -> Option<TlsSummary> {
    let [client, server] = &stream.directions;
    tls::summarize(client.contiguous(), server.contiguous())
}

/// Marks one direction of a TLS stream: a layer `TLS 1.3` with the summary as its detail, and
/// the meta entry `("encrypted", "TLS")`.
pub fn mark_encrypted(payload: &mut Payload, summary: &TlsSummary) {
    payload.layers.push(Layer {
        name: summary.version.clone(),
        detail: summary.describe(),
        span: Span::new(0, payload.bytes.len()),
    });
    payload.hint = None;
    payload
        .meta
        .push(("encrypted".to_string(), "TLS".to_string()));
}

/// Marks a datagram or direction of a protocol that is no data format (DNS, SIP, QUIC…: see
/// [`super::protocols`]) with the meta entry `protocol`, which makes it a verdict, not a guess.
fn mark_protocol(payload: &mut Payload, stream: &Stream, bytes: &[u8]) {
    if let Some(name) =
        super::protocols::protocol_of(stream.protocol, stream.client, stream.server, bytes)
    {
        payload.hint = None;
        payload.protocol = Some(name.to_string());
    }
}

/// A link type whose packets were skipped, and how many.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedLinktype {
    /// The link-layer header type number (LINKTYPE_*).
    pub linktype: u32,
    /// Its name, for the common ones (`NFLOG`, `PKTAP`, `IEEE 802.11`).
    pub name: Option<String>,
    /// Packets skipped.
    pub packets: usize,
}

/// What a capture carried, counted: what `inspect`, `convert` and the GUI say when a capture
/// gives no payload, or only encrypted ones ([`CaptureSummary::describe`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureSummary {
    /// pcap or pcapng.
    pub format: FileFormat,
    /// Packets read (skipped ones included).
    pub packets: usize,
    /// TCP connections seen (with or without data).
    pub tcp_streams: usize,
    /// UDP conversations seen.
    pub udp_streams: usize,
    /// Streams with at least one payload byte in either direction.
    pub streams_with_data: usize,
    /// Packets whose link layer was read but that carry no TCP or UDP over IP (ARP, ICMP…).
    pub other_packets: usize,
    /// Packets of link types that are not read, per link type.
    pub skipped_linktypes: Vec<SkippedLinktype>,
    /// The TLS streams: (stream index, what they show without a key).
    pub tls: Vec<(usize, TlsSummary)>,
    /// Whether a key log was given or embedded in the capture: the streams left in
    /// [`CaptureSummary::tls`] are then those it did not decrypt (the warnings say why).
    pub key_log: bool,
    /// The frame from which payload data was dropped at the payload-bytes limit
    /// ([`Capture::dropped_from`]): what was read is not the whole capture.
    pub dropped_from: Option<u64>,
}

/// Counts what `capture` carried (see [`CaptureSummary`]).
pub fn summary(capture: &Capture) -> CaptureSummary {
    let mut counted = capture.handed.clone();
    for (i, s) in capture.streams.iter().enumerate() {
        counted.count(capture.first_stream + i, s);
    }
    CaptureSummary {
        format: capture.format,
        packets: capture.packets,
        tcp_streams: counted.tcp,
        udp_streams: counted.udp,
        streams_with_data: counted.with_data,
        other_packets: capture.other_packets,
        skipped_linktypes: capture
            .skipped_linktypes
            .iter()
            .map(|&(linktype, packets)| SkippedLinktype {
                linktype,
                name: net::unsupported_name(linktype).map(str::to_string),
                packets,
            })
            .collect(),
        tls: counted.tls,
        key_log: false,
        dropped_from: capture.dropped_from,
    }
}

impl CaptureSummary {
    /// Whether any stream carried payload bytes.
    pub fn has_data(&self) -> bool {
        self.streams_with_data > 0
    }

    /// Whether every stream with data is TLS (and there is one).
    pub fn all_encrypted(&self) -> bool {
        !self.tls.is_empty() && self.tls.len() == self.streams_with_data
    }

    /// The capture in one sentence, saying why there is nothing to decode when there is not:
    /// `0 packets: the capture is empty`, `3 packets, TCP handshake only, no application data`,
    /// `link type 258 (PKTAP) is not supported: 4 packets skipped`, `TLS 1.3: 2 encrypted
    /// streams, SNI api.example.test — give a key log to decrypt`.
    pub fn describe(&self) -> String {
        if self.packets == 0 {
            return "0 packets: the capture is empty".to_string();
        }
        let skipped: usize = self.skipped_linktypes.iter().map(|s| s.packets).sum();
        let mut parts = Vec::new();
        let read = self.packets.saturating_sub(skipped);
        if read > 0 {
            parts.push(if self.all_encrypted() {
                self.describe_tls()
            } else {
                self.describe_read()
            });
        }
        parts.extend(
            self.skipped_linktypes
                .iter()
                .map(|s| skipped_sentence(s.linktype, s.packets)),
        );
        parts.join("; ")
    }

    /// The packets that were read, when not every stream with data is TLS.
    fn describe_read(&self) -> String {
        let mut parts = vec![format!(
            "{} {}",
            self.packets,
            plural(self.packets, "packet", "packets")
        )];
        if self.has_data() {
            parts.push(format!(
                "{} {} with data",
                self.streams_with_data,
                plural(self.streams_with_data, "stream", "streams")
            ));
            if !self.tls.is_empty() {
                parts.push(format!("{} of them TLS", self.tls.len()));
            }
            return parts.join(", ");
        }
        match self.tcp_streams {
            0 => {}
            1 => parts.push("TCP handshake only".to_string()),
            n => parts.push(format!("{n} TCP connections, handshakes only")),
        }
        if self.udp_streams > 0 {
            parts.push(format!(
                "{} UDP {} with empty datagrams",
                self.udp_streams,
                plural(self.udp_streams, "conversation", "conversations")
            ));
        }
        if self.other_packets > 0 {
            parts.push(format!("{} not TCP or UDP over IP", self.other_packets));
        }
        parts.push("no application data".to_string());
        parts.join(", ")
    }

    /// `TLS 1.3: 2 encrypted streams, SNI api.example.test — give a key log to decrypt`, or
    /// `— not decrypted with the key log given (see the warnings)` when one was given.
    fn describe_tls(&self) -> String {
        let mut versions: Vec<&str> = Vec::new();
        let mut names: Vec<&str> = Vec::new();
        for (_, t) in &self.tls {
            if !versions.contains(&t.version.as_str()) {
                versions.push(&t.version);
            }
            if let Some(sni) = t.sni.as_deref().filter(|s| !names.contains(s)) {
                names.push(sni);
            }
        }
        let n = self.tls.len();
        let mut line = format!(
            "{}: {n} encrypted {}",
            versions.join(", "),
            plural(n, "stream", "streams")
        );
        if !names.is_empty() {
            line.push_str(&format!(", SNI {}", names.join(", ")));
        }
        line.push_str(if self.key_log {
            " — not decrypted with the key log given (see the warnings)"
        } else {
            " — give a key log to decrypt"
        });
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_lists_collapse_runs() {
        assert_eq!(frame_list(&mut vec![9, 4, 5, 6, 8, 4]), "4–6, 8–9");
        assert_eq!(frame_list(&mut vec![7]), "7");
        assert_eq!(
            frame_list(&mut vec![u64::MAX, 1]),
            "1, 18446744073709551615"
        );
        assert_eq!(frame_list(&mut Vec::new()), "");
    }

    #[test]
    fn frame_summaries_keep_the_first_runs_within_the_width() {
        assert_eq!(frame_summary("4–6, 8–9", 5, 80), "4–6, 8–9");
        let mut every_other: Vec<u64> = (1..=2000).map(|n| n * 2).collect();
        let list = frame_list(&mut every_other);
        let summary = frame_summary(&list, every_other.len(), 80);
        assert!(summary.chars().count() <= 80, "{summary}");
        assert!(summary.starts_with("2, 4, 6, 8, "), "{summary}");
        assert!(
            summary.ends_with(", … (2000 frames in 2000 runs)"),
            "{summary}"
        );
        // Every run shown is a run of the full list, in order.
        let shown: Vec<&str> = summary.split(", ").collect();
        let full: Vec<&str> = list.split(", ").collect();
        assert_eq!(shown[..shown.len() - 1], full[..shown.len() - 1]);
        // A first run wider than the room is still shown.
        let wide = "18446744073709551610–18446744073709551615, 1";
        assert_eq!(
            frame_summary(wide, 7, 20),
            "18446744073709551610–18446744073709551615, … (7 frames in 2 runs)"
        );
    }

    #[test]
    fn segments_in_finds_the_frames_of_a_range() {
        let seg = |a, b, frame| SegmentRef {
            span: Span::new(a, b),
            frame,
            time: None,
            record: Span::empty(0),
            at: None,
        };
        let d = Direction {
            bytes: vec![0; 30],
            segments: vec![seg(0, 10, 3), seg(10, 20, 5), seg(20, 30, 4)],
            ..Direction::default()
        };
        let frames = |a, b| -> Vec<u64> {
            d.segments_in(Span::new(a, b))
                .iter()
                .map(|s| s.frame)
                .collect()
        };
        assert_eq!(frames(0, 10), vec![3]);
        assert_eq!(frames(9, 11), vec![3, 5]);
        assert_eq!(frames(15, 30), vec![5, 4]);
        assert_eq!(frames(30, 40), Vec::<u64>::new());
    }

    #[test]
    fn is_pcap_knows_all_four_pcap_magics_and_pcapng() {
        for magic in [0xa1b2_c3d4u32, 0xa1b2_3c4d] {
            let mut b = magic.to_le_bytes().to_vec();
            b.resize(24, 0);
            assert!(is_pcap(&b));
            let mut b = magic.to_be_bytes().to_vec();
            b.resize(24, 0);
            assert!(is_pcap(&b));
        }
        let mut ng = 0x0a0d_0d0au32.to_le_bytes().to_vec();
        ng.extend_from_slice(&28u32.to_le_bytes());
        ng.extend_from_slice(&0x1a2b_3c4du32.to_be_bytes());
        assert!(is_pcap(&ng));
        assert!(!is_pcap(&ng[..8]));
        assert!(!is_pcap(b"\x0a\x0d\x0d\x0a\0\0\0\0\0\0\0\0"));
    }

    /// A pcap (Ethernet, IPv4) of `n` connections one after another, from client port 40000 +
    /// i to port 80: SYN, a `size`-byte request, a `size`-byte answer, FIN both ways.
    fn sequential_connections(n: u16, size: usize) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(0xA1B2_C3D4u32.to_le_bytes());
        out.extend(2u16.to_le_bytes());
        out.extend(4u16.to_le_bytes());
        out.extend([0u8; 8]);
        out.extend(65_535u32.to_le_bytes());
        out.extend(1u32.to_le_bytes());
        let mut packet = |port: u16, to_server: bool, seq: u32, flags: u8, data: &[u8]| {
            let (sp, dp) = if to_server { (port, 80) } else { (80, port) };
            let (src, dst) = if to_server {
                ([10, 0, 0, 1], [10, 0, 0, 2])
            } else {
                ([10, 0, 0, 2], [10, 0, 0, 1])
            };
            let mut tcp = Vec::new();
            tcp.extend(sp.to_be_bytes());
            tcp.extend(dp.to_be_bytes());
            tcp.extend(seq.to_be_bytes());
            tcp.extend(0u32.to_be_bytes());
            tcp.extend([5 << 4, flags]);
            tcp.extend(65_535u16.to_be_bytes());
            tcp.extend([0u8; 4]);
            tcp.extend(data);
            let total = u16::try_from(20 + tcp.len()).expect("fits an IP packet");
            let mut frame = vec![2u8; 6];
            frame.extend([4u8; 6]);
            frame.extend([0x08, 0x00, 0x45, 0]);
            frame.extend(total.to_be_bytes());
            frame.extend([0, 0, 0, 0, 64, 6, 0, 0]);
            frame.extend(src);
            frame.extend(dst);
            frame.extend(tcp);
            let len = u32::try_from(frame.len()).expect("small frame");
            out.extend([0u8; 8]);
            out.extend(len.to_le_bytes());
            out.extend(len.to_le_bytes());
            out.extend(frame);
        };
        let (syn, fin, psh) = (0x02, 0x11, 0x18);
        for i in 0..n {
            let port = 40_000 + i;
            let size32 = u32::try_from(size).expect("small");
            packet(port, true, 99, syn, &[]);
            packet(port, false, 499, syn | 0x10, &[]);
            packet(port, true, 100, psh, &vec![b'q'; size]);
            packet(port, false, 500, psh, &vec![b'a'; size]);
            packet(port, true, 100 + size32, fin, &[]);
            packet(port, false, 500 + size32, fin, &[]);
        }
        out
    }

    /// Whoever streams are handed to can stop the reading: no stream after, and the rest of
    /// the file is not read (a listing whose output went away, a payload limit reached).
    #[test]
    fn handing_on_stops_when_asked() {
        let pcap = sequential_connections(3000, 100);
        let limits = PcapLimits::default();
        let mut handed = 0;
        let capture = extract_each(&pcap, &limits, &mut |_| {
            handed += 1;
            handed < 2
        })
        .expect("a capture");
        assert_eq!(handed, 2);
        // 6 packets a connection; the second is handed on CLOSE_GRACE packets after it closed.
        assert_eq!(capture.packets, 12 + CLOSE_GRACE);
        let whole = extract(&pcap, &limits).expect("a capture");
        assert_eq!(whole.packets, 18_000);
    }

    #[test]
    fn closed_connections_are_handed_on_and_give_their_bytes_back() {
        // 4,000 connections of 2 KB each way: 16 MB of stream bytes, against a budget of 1 MiB
        // (the connections closed within the last CLOSE_GRACE packets hold about 680 KB).
        let (n, size) = (4000u16, 2000usize);
        let pcap = sequential_connections(n, size);
        let limits = PcapLimits {
            max_stream_bytes: 1 << 20,
            max_packets: 10_000_000,
        };
        let mut handed: Vec<(usize, usize, usize)> = Vec::new();
        let capture = extract_each(&pcap, &limits, &mut |view| {
            let [c, s] = &view.streams[0].directions;
            handed.push((
                view.first_stream,
                view.packets,
                c.bytes.len() + s.bytes.len(),
            ));
            true
        })
        .expect("a capture");
        assert_eq!(handed.len(), usize::from(n));
        assert!(
            capture.warnings.is_empty(),
            "no limit reached: {:?}",
            capture.warnings
        );
        // Every stream whole, in the order they closed, the first long before the file ended.
        assert!(handed.iter().all(|&(_, _, bytes)| bytes == 2 * size));
        assert!(handed.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(handed[0].1 < 2 * CLOSE_GRACE, "{:?}", handed[0]);
        assert_eq!(capture.packets, 6 * usize::from(n));
        let summary = summary(&capture);
        assert_eq!(
            (summary.tcp_streams, summary.streams_with_data),
            (usize::from(n), usize::from(n))
        );
        // Read whole first, the same capture stops at the budget.
        let whole = extract(&pcap, &limits).expect("a capture");
        assert!(
            whole
                .warnings
                .iter()
                .any(|w| w.contains("the limit of 1048576 payload bytes")),
            "{:?}",
            whole.warnings
        );
    }

    #[test]
    fn warnings_are_bounded() {
        let mut w = Warnings {
            list: Vec::new(),
            dropped: 0,
        };
        for i in 0..MAX_WARNINGS + 5 {
            w.push(i.to_string());
        }
        let list = w.finish();
        assert_eq!(list.len(), MAX_WARNINGS + 1);
        assert_eq!(
            list.last().map(String::as_str),
            Some("5 more warnings are not shown")
        );
    }
}
