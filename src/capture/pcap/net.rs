//! From a link-layer frame to a TCP segment or UDP datagram.
//!
//! Link types: null/loopback (0, 108), Ethernet (1, with any number of 802.1Q/802.1ad VLAN
//! tags), raw IP (101, 228, 229), Linux cooked capture SLL (113) and SLL2 (276). IPv4 and IPv6
//! (extension headers skipped). IPv4 fragments are handed to [`super::frag`] for reassembly;
//! IPv6 fragments are *reported, not reassembled*: such a datagram gives a warning and is skipped. Lengths always come from the smaller of what the
//! header says and what was captured, so Ethernet padding never becomes payload and a truncated
//! packet is kept as far as it goes.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use super::frag::Fragment;

/// A transport-layer unit found in a frame.
#[derive(Debug, Clone)]
pub(crate) enum Transport<'a> {
    Tcp(TcpSegment<'a>),
    Udp(UdpDatagram<'a>),
    /// An IPv4 fragment, for [`super::frag::Reassembly`].
    Fragment(Fragment<'a>),
}

/// The parts of a TCP segment reassembly needs.
#[derive(Debug, Clone)]
pub(crate) struct TcpSegment<'a> {
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub seq: u32,
    pub syn: bool,
    pub ack: bool,
    pub fin: bool,
    pub rst: bool,
    pub payload: &'a [u8],
}

/// A UDP datagram.
#[derive(Debug, Clone)]
pub(crate) struct UdpDatagram<'a> {
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub payload: &'a [u8],
}

/// Why a frame gave nothing: `None` for frames that are simply not TCP/UDP over IP (ARP, ICMP…),
/// `Some(message)` for something the user should hear about.
pub(crate) type Skip = Option<String>;

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The name of a link type, for layer details.
pub(crate) fn linktype_name(linktype: u32) -> String {
    match linktype {
        0 => "null/loopback".to_string(),
        1 => "Ethernet".to_string(),
        101 => "raw IP".to_string(),
        108 => "OpenBSD loopback".to_string(),
        113 => "Linux cooked (SLL)".to_string(),
        239 => "NFLOG".to_string(),
        228 => "raw IPv4".to_string(),
        229 => "raw IPv6".to_string(),
        276 => "Linux cooked (SLL2)".to_string(),
        other => match unsupported_name(other) {
            Some(name) => name.to_string(),
            None => format!("link type {other}"),
        },
    }
}

/// Whether [`parse`] reads frames of this link type.
pub(crate) fn is_supported(linktype: u32) -> bool {
    matches!(linktype, 0 | 1 | 101 | 108 | 113 | 228 | 229 | 239 | 276)
}

/// The name of a common link type wirelens does not read, for "link type 258 (PKTAP) is not
/// supported".
pub(crate) fn unsupported_name(linktype: u32) -> Option<&'static str> {
    Some(match linktype {
        6 => "Token Ring",
        9 => "PPP",
        10 => "FDDI",
        50 => "PPP over serial (HDLC)",
        104 => "Cisco HDLC",
        105 => "IEEE 802.11",
        107 => "Frame Relay",
        119 => "IEEE 802.11 with Prism header",
        127 => "IEEE 802.11 with radiotap header",
        143 => "DOCSIS",
        163 => "IEEE 802.11 with AVS header",
        186 => "USB (with Linux header)",
        187 => "Bluetooth HCI H4",
        189 => "USB Linux",
        192 => "PPI",
        195 => "IEEE 802.15.4",
        201 => "Bluetooth HCI H4 with direction",
        215 => "IEEE 802.15.4 without FCS",
        220 => "USB Linux (memory-mapped)",
        227 => "SocketCAN",
        240 => "Netanalyzer",
        249 => "USBPcap",
        251 => "Bluetooth LE link layer",
        254 => "Bluetooth Linux monitor",
        256 => "Bluetooth LE with pseudo-header",
        258 => "PKTAP",
        263 => "Bluetooth BR/EDR baseband",
        272 => "nRF Sniffer for Bluetooth LE",
        _ => return None,
    })
}

/// `link type 258 (PKTAP)`, or `link type 300` for a type without a name here.
pub(crate) fn linktype_label(linktype: u32) -> String {
    match unsupported_name(linktype) {
        Some(name) => format!("link type {linktype} ({name})"),
        None if is_supported(linktype) => {
            format!("link type {linktype} ({})", linktype_name(linktype))
        }
        None => format!("link type {linktype}"),
    }
}

/// Parses one frame down to TCP or UDP.
pub(crate) fn parse(linktype: u32, frame: &[u8]) -> Result<Transport<'_>, Skip> {
    let (ethertype, ip) = match linktype {
        0 | 108 => {
            // A 4-byte address family in the capturing host's byte order (108: network order).
            let fam_le = frame
                .get(..4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            let fam_be = be32(frame, 0);
            let fam = match (fam_le, fam_be) {
                (Some(le), Some(be)) => {
                    if le < 256 {
                        le
                    } else {
                        be
                    }
                }
                _ => return Err(Some("loopback header cut short".to_string())),
            };
            let ethertype = match fam {
                2 => 0x0800,
                10 | 24 | 28 | 30 => 0x86dd,
                _ => return Err(None),
            };
            (ethertype, frame.get(4..).unwrap_or(&[]))
        }
        1 => {
            let mut at = 12;
            let mut ethertype =
                be16(frame, at).ok_or(Some("Ethernet header cut short".to_string()))?;
            // VLAN tags, stacked (bounded by the frame length: each costs 4 bytes).
            while matches!(ethertype, 0x8100 | 0x88a8 | 0x9100) {
                at += 4;
                ethertype = be16(frame, at).ok_or(Some("VLAN tag cut short".to_string()))?;
            }
            (ethertype, frame.get(at + 2..).unwrap_or(&[]))
        }
        101 | 228 | 229 => match frame.first().map(|b| b >> 4) {
            Some(4) => (0x0800, frame),
            Some(6) => (0x86dd, frame),
            _ => return Err(None),
        },
        113 => (
            be16(frame, 14).ok_or(Some("Linux cooked header cut short".to_string()))?,
            frame.get(16..).unwrap_or(&[]),
        ),
        276 => (
            be16(frame, 0).ok_or(Some("Linux cooked v2 header cut short".to_string()))?,
            frame.get(20..).unwrap_or(&[]),
        ),
        239 => nflog(frame)?,
        other => return Err(Some(format!("{} is not supported", linktype_label(other)))),
    };
    match ethertype {
        0x0800 => ipv4(ip),
        0x86dd => ipv6(ip),
        _ => Err(None),
    }
}

/// An NFLOG frame (Linux netfilter's log, `tcpdump -i nflog:N`): a 4-byte header (address
/// family, version, resource id), then TLVs in the capturing host's byte order, each padded to 4
/// bytes; the packet is the NFULA_PAYLOAD (type 9) one.
fn nflog(frame: &[u8]) -> Result<(u16, &[u8]), Skip> {
    let family = *frame
        .first()
        .ok_or_else(|| Some("NFLOG header cut short".to_string()))?;
    let ethertype = match family {
        2 => 0x0800,
        10 => 0x86dd,
        _ => return Err(None),
    };
    let mut at = 4usize;
    while let Some(tlv) = frame.get(at..at.saturating_add(4)) {
        let le = usize::from(u16::from_le_bytes([tlv[0], tlv[1]]));
        let be = usize::from(u16::from_be_bytes([tlv[0], tlv[1]]));
        let left = frame.len() - at;
        // Host byte order: the reading whose length fits.
        let (len, kind) = if (4..=left).contains(&le) {
            (le, u16::from_le_bytes([tlv[2], tlv[3]]))
        } else if (4..=left).contains(&be) {
            (be, u16::from_be_bytes([tlv[2], tlv[3]]))
        } else {
            return Err(Some(format!(
                "NFLOG TLV at byte {at} has no length that fits"
            )));
        };
        if kind == 9 {
            return Ok((ethertype, frame.get(at + 4..at + len).unwrap_or(&[])));
        }
        at += len.div_ceil(4) * 4;
    }
    Err(None)
}

fn ipv4(ip: &[u8]) -> Result<Transport<'_>, Skip> {
    let cut = || Some("IPv4 header cut short".to_string());
    let first = *ip.first().ok_or_else(cut)?;
    if first >> 4 != 4 {
        return Err(Some(format!("IPv4 header with version {}", first >> 4)));
    }
    let ihl = usize::from(first & 0x0f) * 4;
    if ihl < 20 {
        return Err(Some(format!("IPv4 header length {ihl} is below 20")));
    }
    let total = usize::from(be16(ip, 2).ok_or_else(cut)?);
    let flags_frag = be16(ip, 6).ok_or_else(cut)?;
    let proto = *ip.get(9).ok_or_else(cut)?;
    let src = Ipv4Addr::from(be32(ip, 12).ok_or_else(cut)?);
    let dst = Ipv4Addr::from(be32(ip, 16).ok_or_else(cut)?);
    // total == 0 happens with TCP segmentation offload; then take what was captured.
    let end = if total == 0 {
        ip.len()
    } else {
        total.min(ip.len())
    };
    let body = ip.get(ihl..end).ok_or_else(cut)?;
    if flags_frag & 0x3fff != 0 {
        return Ok(Transport::Fragment(Fragment {
            src,
            dst,
            id: be16(ip, 4).ok_or_else(cut)?,
            proto,
            offset: usize::from(flags_frag & 0x1fff) * 8,
            more: flags_frag & 0x2000 != 0,
            data: body,
        }));
    }
    transport(proto, IpAddr::V4(src), IpAddr::V4(dst), body)
}

fn ipv6(ip: &[u8]) -> Result<Transport<'_>, Skip> {
    let cut = || Some("IPv6 header cut short".to_string());
    let payload_len = usize::from(be16(ip, 4).ok_or_else(cut)?);
    let mut next = *ip.get(6).ok_or_else(cut)?;
    let src: [u8; 16] = ip
        .get(8..24)
        .ok_or_else(cut)?
        .try_into()
        .map_err(|_| cut())?;
    let dst: [u8; 16] = ip
        .get(24..40)
        .ok_or_else(cut)?
        .try_into()
        .map_err(|_| cut())?;
    let (src, dst) = (Ipv6Addr::from(src), Ipv6Addr::from(dst));
    let end = if payload_len == 0 {
        ip.len() // jumbogram or offload: take what was captured
    } else {
        (40 + payload_len).min(ip.len())
    };
    let mut at = 40usize;
    // Extension headers: each advances `at` by at least 8, so this ends within the packet.
    loop {
        match next {
            0 | 43 | 60 | 51 => {
                let nh = *ip.get(at).ok_or_else(cut)?;
                let len = usize::from(*ip.get(at + 1).ok_or_else(cut)?);
                at += if next == 51 {
                    (len + 2) * 4
                } else {
                    (len + 1) * 8
                };
                next = nh;
                if at > end {
                    return Err(cut());
                }
            }
            44 => {
                return Err(Some(format!(
                    "IPv6 fragment {src} → {dst}: fragments are not reassembled, it is skipped"
                )))
            }
            _ => break,
        }
    }
    let body = ip.get(at..end).ok_or_else(cut)?;
    transport(next, IpAddr::V6(src), IpAddr::V6(dst), body)
}

pub(crate) fn transport(
    proto: u8,
    src: IpAddr,
    dst: IpAddr,
    body: &[u8],
) -> Result<Transport<'_>, Skip> {
    match proto {
        6 => {
            let cut = || Some(format!("TCP header {src} → {dst} cut short"));
            let sport = be16(body, 0).ok_or_else(cut)?;
            let dport = be16(body, 2).ok_or_else(cut)?;
            let seq = be32(body, 4).ok_or_else(cut)?;
            let offset = usize::from(*body.get(12).ok_or_else(cut)? >> 4) * 4;
            let flags = *body.get(13).ok_or_else(cut)?;
            if offset < 20 {
                return Err(Some(format!("TCP header length {offset} is below 20")));
            }
            let payload = body.get(offset..).ok_or_else(cut)?;
            Ok(Transport::Tcp(TcpSegment {
                src: SocketAddr::new(src, sport),
                dst: SocketAddr::new(dst, dport),
                seq,
                fin: flags & 0x01 != 0,
                syn: flags & 0x02 != 0,
                rst: flags & 0x04 != 0,
                ack: flags & 0x10 != 0,
                payload,
            }))
        }
        17 => {
            let cut = || Some(format!("UDP header {src} → {dst} cut short"));
            let sport = be16(body, 0).ok_or_else(cut)?;
            let dport = be16(body, 2).ok_or_else(cut)?;
            let len = usize::from(be16(body, 4).ok_or_else(cut)?);
            let end = if len < 8 {
                body.len()
            } else {
                len.min(body.len())
            };
            Ok(Transport::Udp(UdpDatagram {
                src: SocketAddr::new(src, sport),
                dst: SocketAddr::new(dst, dport),
                payload: body.get(8..end).ok_or_else(cut)?,
            }))
        }
        _ => Err(None),
    }
}
