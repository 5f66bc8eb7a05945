//! The capture file containers: classic pcap and pcapng, read record by record.
//!
//! Both are turned into the same [`Packet`] (frame number, time, link type, captured bytes, the
//! original length and where its record lies in the file). A file cut short ends the packet list
//! with a warning; only a header that is not pcap at all, or a pcapng block whose length fields
//! make no sense, is an error.

use crate::model::{Span, Timestamp};

/// One captured packet as the file holds it.
#[derive(Debug, Clone)]
pub(crate) struct Packet<'a> {
    /// 1-based frame number, as Wireshark counts.
    pub frame: u64,
    /// When it was captured (None for pcapng simple packet blocks, which carry no time).
    pub time: Option<Timestamp>,
    /// The link-layer header type of the interface it was captured on.
    pub linktype: u32,
    /// The captured bytes (at most `orig_len`).
    pub data: &'a [u8],
    /// The length of the packet on the wire.
    pub orig_len: u64,
    /// The record's bytes in the file.
    pub record: Span,
    /// Where `data` starts in the file.
    pub data_at: usize,
}

/// What went wrong while walking the file: `offset` is in the file.
#[derive(Debug, Clone)]
pub(crate) struct FileFault {
    pub offset: usize,
    pub message: String,
}

/// Which container a file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileFormat {
    /// Classic libpcap format (micro- or nanosecond timestamps, either byte order).
    Pcap,
    /// pcapng (sections, interfaces, enhanced/simple packet blocks).
    Pcapng,
}

impl FileFormat {
    /// The layer name: `pcap` or `pcapng`.
    pub fn name(self) -> &'static str {
        match self {
            FileFormat::Pcap => "pcap",
            FileFormat::Pcapng => "pcapng",
        }
    }
}

const PCAP_MICRO: u32 = 0xa1b2_c3d4;
const PCAP_NANO: u32 = 0xa1b2_3c4d;
const PCAPNG_SHB: u32 = 0x0a0d_0d0a;
const PCAPNG_BOM: u32 = 0x1a2b_3c4d;
/// pcapng Decryption Secrets Block.
const PCAPNG_DSB: u32 = 0x0000_000a;
/// Its secrets type for a TLS key log (NSS format), "TLSK".
const DSB_TLS_KEY_LOG: u32 = 0x544c_534b;

/// Which container the bytes start with, if any.
pub(crate) fn sniff(bytes: &[u8]) -> Option<FileFormat> {
    let magic_le = read_u32(bytes, 0, false)?;
    let magic_be = read_u32(bytes, 0, true)?;
    if [PCAP_MICRO, PCAP_NANO].contains(&magic_le) || [PCAP_MICRO, PCAP_NANO].contains(&magic_be) {
        return Some(FileFormat::Pcap);
    }
    if magic_le == PCAPNG_SHB {
        let bom_le = read_u32(bytes, 8, false)?;
        if bom_le == PCAPNG_BOM || bom_le.swap_bytes() == PCAPNG_BOM {
            return Some(FileFormat::Pcapng);
        }
    }
    None
}

pub(crate) fn read_u16(bytes: &[u8], at: usize, big: bool) -> Option<u16> {
    let b: [u8; 2] = bytes.get(at..at.checked_add(2)?)?.try_into().ok()?;
    Some(if big {
        u16::from_be_bytes(b)
    } else {
        u16::from_le_bytes(b)
    })
}

pub(crate) fn read_u32(bytes: &[u8], at: usize, big: bool) -> Option<u32> {
    let b: [u8; 4] = bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(if big {
        u32::from_be_bytes(b)
    } else {
        u32::from_le_bytes(b)
    })
}

fn read_u64(bytes: &[u8], at: usize, big: bool) -> Option<u64> {
    let b: [u8; 8] = bytes.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(if big {
        u64::from_be_bytes(b)
    } else {
        u64::from_le_bytes(b)
    })
}

/// Time from a count of `1 / units_per_sec` second units since the epoch, plus a whole-second
/// offset.
fn time_from_units(units: u64, units_per_sec: u128, offset_secs: i64) -> Timestamp {
    let per = units_per_sec.max(1);
    let units = units as u128;
    let secs = i64::try_from(units / per).unwrap_or(i64::MAX);
    let nanos = ((units % per) * 1_000_000_000 / per) as u32;
    Timestamp {
        seconds: secs.saturating_add(offset_secs),
        nanos,
    }
}

/// Where [`walk`] reads a capture file from: all of it in memory (`&[u8]`), or a reader taken a
/// record at a time ([`ReadSource`]). The walk asks for the bytes of one record after another,
/// never for bytes before the record it is in.
pub(crate) trait Source {
    /// Up to `len` bytes of the file from byte `at`: fewer where the file ends.
    fn get(&mut self, at: usize, len: usize) -> Result<&[u8], FileFault>;
}

impl Source for &[u8] {
    fn get(&mut self, at: usize, len: usize) -> Result<&[u8], FileFault> {
        let end = at.saturating_add(len).min(self.len());
        Ok(<[u8]>::get(self, at.min(end)..end).unwrap_or(&[]))
    }
}

/// A capture file read from `reader` as the walk goes: only the record being read is held, so
/// a file of any size, or one still being written to standard input (`tcpdump -w -`), is read in
/// the memory of its largest record. A record's length is what the file says, but what is held
/// is what the reader gives: a length that lies past the end of the input holds no more than
/// the input has.
pub(crate) struct ReadSource<'r> {
    reader: &'r mut dyn std::io::Read,
    /// Bytes of the file from `start`.
    held: Vec<u8>,
    start: usize,
}

impl<'r> ReadSource<'r> {
    pub(crate) fn new(reader: &'r mut dyn std::io::Read) -> ReadSource<'r> {
        ReadSource {
            reader,
            held: Vec::new(),
            start: 0,
        }
    }

    /// How many bytes of the file were read.
    pub(crate) fn read_len(&self) -> usize {
        self.start + self.held.len()
    }
}

impl Source for ReadSource<'_> {
    fn get(&mut self, at: usize, len: usize) -> Result<&[u8], FileFault> {
        use std::io::Read as _;
        let held_end = self.start + self.held.len();
        if at >= held_end {
            // Bytes between what is held and `at` (none when records follow each other).
            let skip = (at - held_end) as u64;
            let skipped = std::io::copy(&mut (&mut self.reader).take(skip), &mut std::io::sink())
                .map_err(|e| read_fault(held_end, &e))?;
            self.held.clear();
            self.start = held_end + skipped as usize;
        } else if at > self.start {
            self.held.drain(..at - self.start);
            self.start = at;
        }
        let from = at.saturating_sub(self.start);
        let want = from.saturating_add(len);
        if self.held.len() < want {
            let need = (want - self.held.len()) as u64;
            let before = self.start + self.held.len();
            (&mut self.reader)
                .take(need)
                .read_to_end(&mut self.held)
                .map_err(|e| read_fault(before, &e))?;
        }
        let end = want.min(self.held.len());
        Ok(self.held.get(from.min(end)..end).unwrap_or(&[]))
    }
}

fn read_fault(offset: usize, e: &std::io::Error) -> FileFault {
    FileFault {
        offset,
        message: format!("the input could not be read past byte {offset}: {e}"),
    }
}

/// Walks every packet of the file, calling `each` for each; stops early when `each` says false.
/// Returns warnings for a cut-short file, or a fault when the structure is broken. The TLS key
/// logs of pcapng Decryption Secrets Blocks (`editcap --inject-secrets tls,…`) are added to
/// `secrets`, one text per block, in file order.
pub(crate) fn walk(
    src: &mut dyn Source,
    warnings: &mut Vec<String>,
    secrets: &mut Vec<String>,
    each: &mut dyn FnMut(Packet<'_>) -> bool,
) -> Result<FileFormat, FileFault> {
    match sniff(src.get(0, 12)?) {
        Some(FileFormat::Pcap) => walk_pcap(src, warnings, each).map(|()| FileFormat::Pcap),
        Some(FileFormat::Pcapng) => {
            walk_pcapng(src, warnings, secrets, each).map(|()| FileFormat::Pcapng)
        }
        None => Err(FileFault {
            offset: 0,
            message: "the input does not start with a pcap or pcapng header".to_string(),
        }),
    }
}

fn walk_pcap(
    src: &mut dyn Source,
    warnings: &mut Vec<String>,
    each: &mut dyn FnMut(Packet<'_>) -> bool,
) -> Result<(), FileFault> {
    let head = src.get(0, 24)?;
    let (big, nano) = match (read_u32(head, 0, false), read_u32(head, 0, true)) {
        (Some(PCAP_MICRO), _) => (false, false),
        (Some(PCAP_NANO), _) => (false, true),
        (_, Some(PCAP_MICRO)) => (true, false),
        (_, Some(PCAP_NANO)) => (true, true),
        _ => {
            return Err(FileFault {
                offset: 0,
                message: "no pcap magic number".to_string(),
            })
        }
    };
    let Some(network) = read_u32(head, 20, big) else {
        return Err(FileFault {
            offset: head.len(),
            message: format!(
                "the pcap file header needs 24 bytes, the input has {}",
                head.len()
            ),
        });
    };
    // The upper bits may carry FCS information (pcap 2.4 "LinkType and additional information").
    let linktype = network & 0x0fff_ffff;
    let per_sec: u128 = if nano { 1_000_000_000 } else { 1_000_000 };
    let mut at = 24usize;
    let mut frame = 0u64;
    loop {
        let header = src.get(at, 16)?;
        if header.is_empty() {
            return Ok(());
        }
        let fields = (
            read_u32(header, 0, big),
            read_u32(header, 4, big),
            read_u32(header, 8, big),
            read_u32(header, 12, big),
        );
        let (Some(sec), Some(frac), Some(incl), Some(orig)) = fields else {
            warnings.push(format!(
                "the file ends inside a packet record header at byte {at} ({} bytes of 16); it was cut short",
                header.len()
            ));
            return Ok(());
        };
        frame += 1;
        let data_start = at + 16;
        let incl = incl as usize;
        let data = src.get(data_start, incl)?;
        let end = data_start + data.len();
        let cut = data.len() < incl;
        if cut {
            warnings.push(format!(
                "frame {frame}: the file ends inside its data ({incl} bytes announced, {} present); it was cut short, the packet is kept as far as it goes",
                data.len()
            ));
        }
        let units = u64::from(sec) * per_sec as u64 + u64::from(frac);
        let packet = Packet {
            frame,
            time: Some(time_from_units(units, per_sec, 0)),
            linktype,
            data,
            orig_len: u64::from(orig),
            record: Span::new(at, end),
            data_at: data_start,
        };
        if !each(packet) || cut {
            return Ok(());
        }
        at = end;
    }
}

/// An interface of the current pcapng section.
struct Interface {
    linktype: u32,
    units_per_sec: u128,
    offset_secs: i64,
}

fn walk_pcapng(
    src: &mut dyn Source,
    warnings: &mut Vec<String>,
    secrets: &mut Vec<String>,
    each: &mut dyn FnMut(Packet<'_>) -> bool,
) -> Result<(), FileFault> {
    let mut at = 0usize;
    let mut big = false;
    let mut interfaces: Vec<Interface> = Vec::new();
    let mut frame = 0u64;
    let mut warned_interface = false;
    loop {
        let head = src.get(at, 12)?;
        let left = head.len();
        if left == 0 {
            return Ok(());
        }
        if left < 12 {
            warnings.push(format!(
                "the file ends inside a pcapng block header at byte {at} ({left} bytes); it was cut short"
            ));
            return Ok(());
        }
        let block_type = read_u32(head, 0, big).unwrap_or(0);
        if read_u32(head, 0, false) == Some(PCAPNG_SHB) {
            big = section_is_big_endian(head, at)?;
            interfaces.clear();
        }
        let total = read_u32(head, 4, big).unwrap_or(0) as usize;
        if total < 12 || total % 4 != 0 {
            return Err(FileFault {
                offset: at + 4,
                message: format!(
                    "pcapng block length {total} is invalid (it must be a multiple of 4, at least 12)"
                ),
            });
        }
        // The block, its offsets from its start.
        let block = src.get(at, total)?;
        if block.len() < total {
            warnings.push(format!(
                "the file ends inside a pcapng block at byte {at} ({total} bytes announced, {} present); it was cut short",
                block.len()
            ));
            // A packet block cut short still yields what it holds.
            if block_type == 6 || block_type == 2 {
                let record = Span::new(at, at + block.len());
                let len = block.len();
                if let Some(packet) = timed_packet(block, len, big, &interfaces, frame + 1, record)
                {
                    each(packet);
                }
            }
            return Ok(());
        }
        let record = Span::new(at, at + total);
        let body = 8..total - 4;
        match block_type {
            PCAPNG_SHB => {}
            1 => {
                let iface = describe_interface(block, body, big, interfaces.len(), warnings);
                interfaces.push(iface);
            }
            6 | 2 | 3 => {
                let packet = if block_type == 3 {
                    simple_packet(block, body.end, big, &interfaces, frame + 1, record)
                } else {
                    timed_packet(block, body.end, big, &interfaces, frame + 1, record)
                };
                match packet {
                    Some(p) => {
                        frame += 1;
                        if !each(p) {
                            return Ok(());
                        }
                    }
                    None => {
                        if !warned_interface {
                            warned_interface = true;
                            warnings.push(format!(
                                "the packet block at byte {at} names an interface that was not described, or is too short; it is skipped"
                            ));
                        }
                    }
                }
            }
            PCAPNG_DSB => read_secrets_block(block, body, big, at, warnings, secrets),
            _ => {} // name resolution, statistics, custom blocks: nothing to extract
        }
        at += total;
    }
}

/// Whether the section whose header block starts at `at` is big-endian: its byte-order magic
/// decides the endianness of everything in the section.
fn section_is_big_endian(head: &[u8], at: usize) -> Result<bool, FileFault> {
    match read_u32(head, 8, false) {
        Some(PCAPNG_BOM) => Ok(false),
        Some(m) if m.swap_bytes() == PCAPNG_BOM => Ok(true),
        _ => Err(FileFault {
            offset: at + 8,
            message: "pcapng section header without a valid byte-order magic".to_string(),
        }),
    }
}

/// The interface an interface description block describes: its link type, and the timestamp
/// resolution and offset from its options. `index` is its number in the section, for warnings.
fn describe_interface(
    block: &[u8],
    body: std::ops::Range<usize>,
    big: bool,
    index: usize,
    warnings: &mut Vec<String>,
) -> Interface {
    let linktype = read_u16(block, body.start, big).unwrap_or(0);
    let mut iface = Interface {
        linktype: u32::from(linktype),
        units_per_sec: 1_000_000,
        offset_secs: 0,
    };
    read_options(
        block,
        body.start + 8,
        body.end,
        big,
        |code, value| match code {
            9 => {
                if let Some(&r) = value.first() {
                    let exp = u32::from(r & 0x7f);
                    let per = if r & 0x80 == 0 {
                        10u128.checked_pow(exp)
                    } else {
                        1u128.checked_shl(exp)
                    };
                    match per {
                        Some(p) => iface.units_per_sec = p,
                        None => warnings.push(format!(
                            "interface {index}: timestamp resolution 0x{r:02x} is out of range; microseconds assumed"
                        )),
                    }
                }
            }
            14 => {
                if let Some(off) = read_u64(value, 0, big) {
                    iface.offset_secs = off as i64;
                }
            }
            _ => {}
        },
    );
    iface
}

/// Keeps the TLS key log of a decryption secrets block starting at `at` (other kinds of
/// secrets, WireGuard, ZigBee, SSH …, are not used).
fn read_secrets_block(
    block: &[u8],
    body: std::ops::Range<usize>,
    big: bool,
    at: usize,
    warnings: &mut Vec<String>,
    secrets: &mut Vec<String>,
) {
    let kind = read_u32(block, body.start, big);
    let len = read_u32(block, body.start + 4, big).map(|n| n as usize);
    let data = len.and_then(|n| {
        let start = body.start + 8;
        let end = start.checked_add(n).filter(|&e| e <= body.end)?;
        block.get(start..end)
    });
    match (kind, data) {
        (Some(DSB_TLS_KEY_LOG), Some(text)) => {
            secrets.push(String::from_utf8_lossy(text).into_owned());
        }
        (Some(DSB_TLS_KEY_LOG), None) => warnings.push(format!(
            "the decryption secrets block at byte {at} is cut short; its TLS key log is not read"
        )),
        _ => {}
    }
}

/// Calls `each(code, value)` for every option in `start..end` until opt_endofopt or the end.
fn read_options(
    bytes: &[u8],
    start: usize,
    end: usize,
    big: bool,
    mut each: impl FnMut(u16, &[u8]),
) {
    let mut at = start;
    while at + 4 <= end {
        let (Some(code), Some(len)) = (read_u16(bytes, at, big), read_u16(bytes, at + 2, big))
        else {
            return;
        };
        if code == 0 {
            return;
        }
        let vstart = at + 4;
        let vend = vstart + usize::from(len);
        let Some(value) = bytes.get(vstart..vend.min(end)) else {
            return;
        };
        each(code, value);
        at = vstart + usize::from(len).div_ceil(4) * 4;
    }
}

/// The packet of an Enhanced Packet Block (type 6) or an obsolete Packet Block (type 2),
/// `block` (its data ends by `limit`, an offset in it; `record` is where it lies in the file):
/// both put the timestamp, captured and original lengths at the same offsets and differ only in
/// how wide the interface id before them is (32 bits, or 16 bits followed by a drops count);
/// the block type says which.
fn timed_packet<'a>(
    block: &'a [u8],
    limit: usize,
    big: bool,
    interfaces: &[Interface],
    frame: u64,
    record: Span,
) -> Option<Packet<'a>> {
    let obsolete = read_u32(block, 0, big)? == 2;
    let id = if obsolete {
        usize::from(read_u16(block, 8, big)?)
    } else {
        read_u32(block, 8, big)? as usize
    };
    let iface = interfaces.get(id)?;
    let hi = read_u32(block, 12, big)?;
    let lo = read_u32(block, 16, big)?;
    let caplen = read_u32(block, 20, big)? as usize;
    let orig = read_u32(block, 24, big)?;
    let data_start = 28;
    let data_end = caplen.saturating_add(data_start).min(limit).max(data_start);
    let data = block.get(data_start..data_end)?;
    let units = (u64::from(hi) << 32) | u64::from(lo);
    Some(Packet {
        frame,
        time: Some(time_from_units(
            units,
            iface.units_per_sec,
            iface.offset_secs,
        )),
        linktype: iface.linktype,
        data,
        orig_len: u64::from(orig),
        data_at: record.start + data_start,
        record,
    })
}

/// The packet of a Simple Packet Block, `block` (see [`timed_packet`]).
fn simple_packet<'a>(
    block: &'a [u8],
    limit: usize,
    big: bool,
    interfaces: &[Interface],
    frame: u64,
    record: Span,
) -> Option<Packet<'a>> {
    let iface = interfaces.first()?;
    let orig = read_u32(block, 8, big)?;
    let data_start = 12;
    let data_end = (orig as usize)
        .saturating_add(data_start)
        .min(limit)
        .max(data_start);
    Some(Packet {
        frame,
        time: None,
        linktype: iface.linktype,
        data: block.get(data_start..data_end)?,
        orig_len: u64::from(orig),
        data_at: record.start + data_start,
        record,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A little-endian pcapng block: type, total length, body (padded to 4), total length.
    fn block(kind: u32, body: &[u8]) -> Vec<u8> {
        let padded = body.len().div_ceil(4) * 4;
        let total = (12 + padded) as u32;
        let mut b = Vec::new();
        b.extend_from_slice(&kind.to_le_bytes());
        b.extend_from_slice(&total.to_le_bytes());
        b.extend_from_slice(body);
        b.resize(8 + padded, 0);
        b.extend_from_slice(&total.to_le_bytes());
        b
    }

    /// The Enhanced Packet Block and the obsolete Packet Block carry the same packet the same
    /// way but for the width of the interface id; both read back to the same data and time.
    #[test]
    fn enhanced_and_obsolete_packet_blocks_read_alike() {
        let data = b"\x01\x02\x03\x04\x05";
        let micros: u64 = 1_700_000_000_123_456;
        let times = [(micros >> 32) as u32, micros as u32];
        let mut shb = Vec::new();
        shb.extend_from_slice(&PCAPNG_BOM.to_le_bytes());
        shb.extend_from_slice(&[1, 0, 0, 0]); // version 1.0
        shb.extend_from_slice(&u64::MAX.to_le_bytes()); // section length unknown
        let mut idb = Vec::new();
        idb.extend_from_slice(&1u16.to_le_bytes()); // Ethernet
        idb.extend_from_slice(&[0, 0]);
        idb.extend_from_slice(&0u32.to_le_bytes()); // snaplen
        let packet_body = |id: &[u8]| {
            let mut b = id.to_vec();
            for t in times {
                b.extend_from_slice(&t.to_le_bytes());
            }
            b.extend_from_slice(&(data.len() as u32).to_le_bytes());
            b.extend_from_slice(&9u32.to_le_bytes()); // original length
            b.extend_from_slice(data);
            b
        };
        let mut file = block(PCAPNG_SHB, &shb);
        file.extend(block(1, &idb));
        file.extend(block(6, &packet_body(&0u32.to_le_bytes())));
        // Obsolete: a 16-bit interface id, then a 16-bit drops count.
        file.extend(block(2, &packet_body(&[0, 0, 0, 0])));
        let mut warnings = Vec::new();
        let mut packets = Vec::new();
        let format = walk(
            &mut file.as_slice(),
            &mut warnings,
            &mut Vec::new(),
            &mut |p| {
                packets.push((p.frame, p.time, p.data.to_vec(), p.orig_len, p.linktype));
                true
            },
        );
        assert_eq!(format.ok(), Some(FileFormat::Pcapng));
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(packets.len(), 2);
        assert_eq!(packets[0].1, packets[1].1);
        assert!(packets[0].1.is_some());
        for (i, p) in packets.iter().enumerate() {
            assert_eq!(p.0, i as u64 + 1);
            assert_eq!((p.2.as_slice(), p.3, p.4), (&data[..], 9, 1));
        }
    }
}
