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
}

/// What went wrong while walking the file: `offset` is in the file.
#[derive(Debug, Clone)]
pub(crate) struct FileFault {
    pub offset: usize,
    pub message: String,
}

/// Which container a file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// Walks every packet of the file, calling `each` for each; stops early when `each` says false.
/// Returns warnings for a cut-short file, or a fault when the structure is broken. The TLS key
/// logs of pcapng Decryption Secrets Blocks (`editcap --inject-secrets tls,…`) are added to
/// `secrets`, one text per block, in file order.
pub(crate) fn walk<'a>(
    bytes: &'a [u8],
    warnings: &mut Vec<String>,
    secrets: &mut Vec<String>,
    each: &mut dyn FnMut(Packet<'a>) -> bool,
) -> Result<FileFormat, FileFault> {
    match sniff(bytes) {
        Some(FileFormat::Pcap) => walk_pcap(bytes, warnings, each).map(|()| FileFormat::Pcap),
        Some(FileFormat::Pcapng) => {
            walk_pcapng(bytes, warnings, secrets, each).map(|()| FileFormat::Pcapng)
        }
        None => Err(FileFault {
            offset: 0,
            message: "the input does not start with a pcap or pcapng header".to_string(),
        }),
    }
}

fn walk_pcap<'a>(
    bytes: &'a [u8],
    warnings: &mut Vec<String>,
    each: &mut dyn FnMut(Packet<'a>) -> bool,
) -> Result<(), FileFault> {
    let (big, nano) = match (read_u32(bytes, 0, false), read_u32(bytes, 0, true)) {
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
    let Some(network) = read_u32(bytes, 20, big) else {
        return Err(FileFault {
            offset: bytes.len(),
            message: format!(
                "the pcap file header needs 24 bytes, the input has {}",
                bytes.len()
            ),
        });
    };
    // The upper bits may carry FCS information (pcap 2.4 "LinkType and additional information").
    let linktype = network & 0x0fff_ffff;
    let per_sec: u128 = if nano { 1_000_000_000 } else { 1_000_000 };
    let mut at = 24usize;
    let mut frame = 0u64;
    while at < bytes.len() {
        let header = (
            read_u32(bytes, at, big),
            read_u32(bytes, at + 4, big),
            read_u32(bytes, at + 8, big),
            read_u32(bytes, at + 12, big),
        );
        let (Some(sec), Some(frac), Some(incl), Some(orig)) = header else {
            warnings.push(format!(
                "the file ends inside a packet record header at byte {at} ({} bytes of 16); it was cut short",
                bytes.len() - at
            ));
            return Ok(());
        };
        frame += 1;
        let data_start = at + 16;
        let incl = incl as usize;
        let left = bytes.len() - data_start.min(bytes.len());
        let (data, end) = if incl > left {
            warnings.push(format!(
                "frame {frame}: the file ends inside its data ({incl} bytes announced, {left} present); it was cut short, the packet is kept as far as it goes"
            ));
            (bytes.get(data_start..).unwrap_or(&[]), bytes.len())
        } else {
            (
                bytes.get(data_start..data_start + incl).unwrap_or(&[]),
                data_start + incl,
            )
        };
        let units = u64::from(sec) * per_sec as u64 + u64::from(frac);
        let packet = Packet {
            frame,
            time: Some(time_from_units(units, per_sec, 0)),
            linktype,
            data,
            orig_len: u64::from(orig),
            record: Span::new(at, end),
        };
        if !each(packet) {
            return Ok(());
        }
        at = end;
    }
    Ok(())
}

/// An interface of the current pcapng section.
struct Interface {
    linktype: u32,
    units_per_sec: u128,
    offset_secs: i64,
}

fn walk_pcapng<'a>(
    bytes: &'a [u8],
    warnings: &mut Vec<String>,
    secrets: &mut Vec<String>,
    each: &mut dyn FnMut(Packet<'a>) -> bool,
) -> Result<(), FileFault> {
    let mut at = 0usize;
    let mut big = false;
    let mut interfaces: Vec<Interface> = Vec::new();
    let mut frame = 0u64;
    let mut warned_interface = false;
    while at < bytes.len() {
        let left = bytes.len() - at;
        if left < 12 {
            warnings.push(format!(
                "the file ends inside a pcapng block header at byte {at} ({left} bytes); it was cut short"
            ));
            return Ok(());
        }
        let block_type = read_u32(bytes, at, big).unwrap_or(0);
        if read_u32(bytes, at, false) == Some(PCAPNG_SHB) {
            // A new section: its byte-order magic decides the endianness of everything in it.
            match read_u32(bytes, at + 8, false) {
                Some(PCAPNG_BOM) => big = false,
                Some(m) if m.swap_bytes() == PCAPNG_BOM => big = true,
                _ => {
                    return Err(FileFault {
                        offset: at + 8,
                        message: "pcapng section header without a valid byte-order magic"
                            .to_string(),
                    })
                }
            }
            interfaces.clear();
        }
        let total = read_u32(bytes, at + 4, big).unwrap_or(0) as usize;
        if total < 12 || total % 4 != 0 {
            return Err(FileFault {
                offset: at + 4,
                message: format!(
                    "pcapng block length {total} is invalid (it must be a multiple of 4, at least 12)"
                ),
            });
        }
        if total > left {
            warnings.push(format!(
                "the file ends inside a pcapng block at byte {at} ({total} bytes announced, {left} present); it was cut short"
            ));
            // A packet block cut short still yields what it holds.
            if block_type == 6 || block_type == 2 {
                if let Some(packet) = timed_packet(
                    bytes,
                    at,
                    bytes.len(),
                    bytes.len(),
                    big,
                    &interfaces,
                    frame + 1,
                ) {
                    each(packet);
                }
            }
            return Ok(());
        }
        let end = at + total;
        let body = at + 8..end - 4;
        match block_type {
            PCAPNG_SHB => {}
            1 => {
                let linktype = read_u16(bytes, body.start, big).unwrap_or(0);
                let mut iface = Interface {
                    linktype: u32::from(linktype),
                    units_per_sec: 1_000_000,
                    offset_secs: 0,
                };
                read_options(
                    bytes,
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
                                    "interface {}: timestamp resolution 0x{r:02x} is out of range; microseconds assumed",
                                    interfaces.len()
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
                interfaces.push(iface);
            }
            6 | 2 | 3 => {
                let packet = if block_type == 3 {
                    simple_packet(bytes, at, end - 4, end, big, &interfaces, frame + 1)
                } else {
                    timed_packet(bytes, at, end - 4, end, big, &interfaces, frame + 1)
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
            PCAPNG_DSB => {
                let kind = read_u32(bytes, body.start, big);
                let len = read_u32(bytes, body.start + 4, big).map(|n| n as usize);
                let data = len.and_then(|n| {
                    let start = body.start + 8;
                    let end = start.checked_add(n).filter(|&e| e <= body.end)?;
                    bytes.get(start..end)
                });
                match (kind, data) {
                    (Some(DSB_TLS_KEY_LOG), Some(text)) => {
                        secrets.push(String::from_utf8_lossy(text).into_owned());
                    }
                    (Some(DSB_TLS_KEY_LOG), None) => warnings.push(format!(
                        "the decryption secrets block at byte {at} is cut short; its TLS key log is not read"
                    )),
                    // WireGuard, ZigBee, SSH … secrets: not used.
                    _ => {}
                }
            }
            _ => {} // name resolution, statistics, custom blocks: nothing to extract
        }
        at = end;
    }
    Ok(())
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

/// The Enhanced Packet Block (type 6) or the obsolete Packet Block (type 2) at `at`: both put the
/// timestamp, captured and original lengths at the same offsets and differ only in how wide the
/// interface id before them is (32 bits, or 16 bits followed by a drops count); the block type
/// at `at` says which.
fn timed_packet<'a>(
    bytes: &'a [u8],
    at: usize,
    limit: usize,
    end: usize,
    big: bool,
    interfaces: &[Interface],
    frame: u64,
) -> Option<Packet<'a>> {
    let obsolete = read_u32(bytes, at, big)? == 2;
    let id = if obsolete {
        usize::from(read_u16(bytes, at + 8, big)?)
    } else {
        read_u32(bytes, at + 8, big)? as usize
    };
    let iface = interfaces.get(id)?;
    let hi = read_u32(bytes, at + 12, big)?;
    let lo = read_u32(bytes, at + 16, big)?;
    let caplen = read_u32(bytes, at + 20, big)? as usize;
    let orig = read_u32(bytes, at + 24, big)?;
    let data_start = at + 28;
    let data_end = data_start.saturating_add(caplen).min(limit).max(data_start);
    let data = bytes.get(data_start..data_end)?;
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
        record: Span::new(at, end),
    })
}

fn simple_packet<'a>(
    bytes: &'a [u8],
    at: usize,
    limit: usize,
    end: usize,
    big: bool,
    interfaces: &[Interface],
    frame: u64,
) -> Option<Packet<'a>> {
    let iface = interfaces.first()?;
    let orig = read_u32(bytes, at + 8, big)?;
    let data_start = at + 12;
    let data_end = data_start
        .saturating_add(orig as usize)
        .min(limit)
        .max(data_start);
    Some(Packet {
        frame,
        time: None,
        linktype: iface.linktype,
        data: bytes.get(data_start..data_end)?,
        orig_len: u64::from(orig),
        record: Span::new(at, end),
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
        let format = walk(&file, &mut warnings, &mut Vec::new(), &mut |p| {
            packets.push((p.frame, p.time, p.data.to_vec(), p.orig_len, p.linktype));
            true
        });
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
