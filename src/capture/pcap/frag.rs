//! IPv4 fragment reassembly (RFC 791), bounded.
//!
//! A datagram larger than the path MTU arrives as fragments that share the source, destination,
//! protocol and identification, each with its byte offset and a "more fragments" flag. They are
//! held until the pieces cover the datagram from 0 to the end the last fragment names, in any
//! arrival order. Overlapping pieces are allowed: the copy of a byte that arrived first is kept, and
//! where a later fragment overlaps it with different bytes (a teardrop attack, or a buggy
//! sender) a warning names both frames and the byte range; a repeated fragment with the same
//! bytes passes silently. Memory is bounded: at most
//! [`MAX_DATAGRAMS`] datagrams and [`MAX_BYTES`] fragment bytes are held at once, and no datagram
//! ends past 65,535 bytes; beyond that, fragments are skipped with a warning. Datagrams still
//! incomplete at the end of the capture are reported, not guessed at.
//!
//! Not done: IPv6 fragments (reported and skipped by `net`).

use std::collections::HashMap;
use std::net::Ipv4Addr;

/// Most datagrams waiting for fragments at once.
pub(crate) const MAX_DATAGRAMS: usize = 1024;
/// Most fragment bytes held at once.
pub(crate) const MAX_BYTES: usize = 16 << 20;
/// The largest IPv4 datagram payload.
const MAX_DATAGRAM: usize = 65_535;

/// One IPv4 fragment, as `net` found it.
#[derive(Debug, Clone)]
pub(crate) struct Fragment<'a> {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub id: u16,
    pub proto: u8,
    /// Byte offset of `data` in the datagram's payload.
    pub offset: usize,
    /// The "more fragments" flag: this is not the last piece.
    pub more: bool,
    pub data: &'a [u8],
}

type Key = (Ipv4Addr, Ipv4Addr, u16, u8);

/// A datagram whose fragments are arriving.
#[derive(Debug, Default)]
struct Datagram {
    /// Offset, bytes and frame of each fragment, in arrival order.
    pieces: Vec<(usize, Vec<u8>, u64)>,
    /// Known once the last fragment (no "more" flag) has arrived.
    total: Option<usize>,
    first_frame: u64,
}

/// A datagram made whole: source, destination, protocol and payload.
pub(crate) type Whole = (Ipv4Addr, Ipv4Addr, u8, Vec<u8>);

/// The datagrams being reassembled.
#[derive(Debug, Default)]
pub(crate) struct Reassembly {
    pending: HashMap<Key, Datagram>,
    bytes: usize,
    /// Overlaps with different bytes found in the datagrams made whole so far.
    overlaps: Vec<String>,
    /// Overlaps found beyond [`MAX_OVERLAP_NOTES`], counted.
    more_overlaps: usize,
}

/// Most overlap warnings kept; the rest are counted.
const MAX_OVERLAP_NOTES: usize = 50;

impl Reassembly {
    /// Adds a fragment seen in `frame`. Returns the datagram when this fragment completes it, or
    /// why the fragment was skipped.
    pub(crate) fn add(&mut self, f: Fragment<'_>, frame: u64) -> Result<Option<Whole>, String> {
        let key = (f.src, f.dst, f.id, f.proto);
        let end = f.offset.saturating_add(f.data.len());
        let name = || format!("IPv4 fragment {} → {} (id {})", f.src, f.dst, f.id);
        if end > MAX_DATAGRAM {
            return Err(format!(
                "{} ends at byte {end}, past the 65535 an IPv4 datagram can hold; skipped",
                name()
            ));
        }
        if !self.pending.contains_key(&key) && self.pending.len() >= MAX_DATAGRAMS {
            return Err(format!(
                "{}: {MAX_DATAGRAMS} datagrams are already waiting for fragments; skipped",
                name()
            ));
        }
        if self.bytes.saturating_add(f.data.len()) > MAX_BYTES {
            return Err(format!(
                "{}: {MAX_BYTES} fragment bytes are already held; skipped",
                name()
            ));
        }
        let d = self.pending.entry(key).or_insert_with(|| Datagram {
            first_frame: frame,
            ..Datagram::default()
        });
        d.pieces.push((f.offset, f.data.to_vec(), frame));
        self.bytes += f.data.len();
        if !f.more {
            d.total = Some(end);
        }
        let Some(total) = d.total else {
            return Ok(None);
        };
        let mut extents: Vec<(usize, usize)> = d
            .pieces
            .iter()
            .map(|(offset, data, _)| (*offset, offset + data.len()))
            .collect();
        extents.sort_unstable();
        let mut covered = 0usize;
        for (offset, piece_end) in extents {
            if offset > covered {
                return Ok(None);
            }
            covered = covered.max(piece_end);
        }
        if covered < total {
            return Ok(None);
        }
        let Some(d) = self.pending.remove(&key) else {
            return Ok(None);
        };
        let mut whole = vec![0u8; total];
        // Which fragment supplied each byte (its index into `pieces` plus one; 0: none yet):
        // the first to arrive.
        let mut owner: Vec<u32> = vec![0; total];
        for (i, (offset, data, frame)) in d.pieces.iter().enumerate() {
            self.bytes = self.bytes.saturating_sub(data.len());
            let stop = (offset + data.len()).min(total);
            // Earlier fragments this one overlaps with different bytes, and where.
            let mut differs: Vec<(usize, usize, usize)> = Vec::new();
            for at in *offset..stop {
                let (Some(byte), Some(slot), Some(kept)) =
                    (data.get(at - offset), owner.get_mut(at), whole.get_mut(at))
                else {
                    continue;
                };
                if *slot == 0 {
                    *slot = u32::try_from(i + 1).unwrap_or(u32::MAX);
                    *kept = *byte;
                    continue;
                }
                let first = *slot as usize - 1;
                // Bytes are visited in order, so one earlier fragment's bytes come in runs:
                // comparing with the last one noted keeps this linear.
                if *kept != *byte && differs.last().map(|(j, _, _)| *j) != Some(first) {
                    let Some((first_offset, first_data, _)) = d.pieces.get(first) else {
                        continue;
                    };
                    let from = (*offset).max(*first_offset);
                    let to = stop.min(first_offset + first_data.len());
                    differs.push((first, from, to));
                }
            }
            differs.sort_unstable();
            differs.dedup_by_key(|(j, _, _)| *j);
            for (first, from, to) in differs {
                let first_frame = d.pieces.get(first).map_or(0, |p| p.2);
                self.note_overlap(format!(
                    "frames {first_frame} and {frame}: IPv4 fragments of datagram {} → {} (id 0x{:04x}) overlap at bytes {from}..{to} with different bytes; the first (frame {first_frame}) is kept",
                    f.src, f.dst, f.id
                ));
            }
        }
        Ok(Some((f.src, f.dst, f.proto, whole)))
    }

    fn note_overlap(&mut self, line: String) {
        if self.overlaps.len() < MAX_OVERLAP_NOTES {
            self.overlaps.push(line);
        } else {
            self.more_overlaps += 1;
        }
    }

    /// What to report once the capture is read: the overlaps with different bytes found while
    /// reassembling, then one line per datagram whose fragments never all arrived.
    pub(crate) fn unfinished(&self) -> Vec<String> {
        let mut lines = self.overlaps.clone();
        if self.more_overlaps > 0 {
            lines.push(format!(
                "{} more overlaps of IPv4 fragments with different bytes are not shown",
                self.more_overlaps
            ));
        }
        let mut list: Vec<_> = self.pending.iter().collect();
        list.sort_by_key(|(_, d)| d.first_frame);
        lines.extend(list.iter().map(|((src, dst, id, _), d)| {
                let held: usize = d.pieces.iter().map(|(_, p, _)| p.len()).sum();
                format!(
                    "IPv4 datagram {src} → {dst} (id {id}, first fragment in frame {}): {held} bytes in {} fragment(s) never completed; skipped",
                    d.first_frame,
                    d.pieces.len()
                )
            }));
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frag(offset: usize, more: bool, data: &[u8]) -> Fragment<'_> {
        Fragment {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            id: 7,
            proto: 17,
            offset,
            more,
            data,
        }
    }

    #[test]
    fn out_of_order_and_overlapping_fragments_make_the_datagram() {
        let mut r = Reassembly::default();
        assert_eq!(r.add(frag(16, false, b"qrst"), 1), Ok(None));
        assert_eq!(r.add(frag(0, true, b"abcdefgh"), 2), Ok(None));
        let whole = r
            .add(frag(8, true, b"ijklmnop"), 3)
            .expect("ok")
            .expect("whole");
        assert_eq!(whole.3, b"abcdefghijklmnopqrst");
        assert_eq!(r.bytes, 0);
        assert!(r.unfinished().is_empty());
        // A hole stays a hole.
        assert_eq!(r.add(frag(0, true, b"abcdefgh"), 4), Ok(None));
        assert_eq!(r.add(frag(16, false, b"qrst"), 5), Ok(None));
        assert_eq!(r.unfinished().len(), 1);
        assert!(r.add(frag(65_530, true, b"0123456789"), 6).is_err());
    }

    #[test]
    fn overlaps_with_different_bytes_are_reported_and_the_first_copy_kept() {
        let mut r = Reassembly::default();
        assert_eq!(r.add(frag(0, true, b"abcdefgh"), 3), Ok(None));
        // The same bytes again (a duplicate): silent.
        assert_eq!(r.add(frag(0, true, b"abcdefgh"), 4), Ok(None));
        // Overlaps bytes 4..8 with "EFGH" instead of "efgh".
        assert_eq!(r.add(frag(4, true, b"EFGHijkl"), 7), Ok(None));
        let whole = r
            .add(frag(12, false, b"mnop"), 9)
            .expect("ok")
            .expect("whole");
        assert_eq!(whole.3, b"abcdefghijklmnop");
        assert_eq!(
            r.unfinished(),
            ["frames 3 and 7: IPv4 fragments of datagram 10.0.0.1 → 10.0.0.2 (id 0x0007) overlap at bytes 4..8 with different bytes; the first (frame 3) is kept"]
        );
        // Overlapping with the same bytes is no news.
        let mut r = Reassembly::default();
        assert_eq!(r.add(frag(0, true, b"abcdefgh"), 1), Ok(None));
        assert!(r.add(frag(4, false, b"efghij"), 2).expect("ok").is_some());
        assert!(r.unfinished().is_empty());
    }
}
