//! Protocols that carry no data format: their datagrams and streams are named, never guessed.
//!
//! A capture holds more than the API traffic a user came for: name lookups (DNS, mDNS, NBNS),
//! discovery (SSDP), address leases (DHCP), signalling (SIP), QUIC. Their bytes are short and
//! binary, and a CBOR or MessagePack decoder "reads" many of them; so each is recognised here,
//! as a dissector table does, by its well-known port *and* the shape of its bytes (a port alone
//! proves nothing: anything can run on 5353), and the payload gets the meta entry
//! `protocol = NAME`, which [`super::verdict::verdict`] turns into a verdict.
//!
//! Each rule is one row of [`RULES`], testable on its own.

use std::net::SocketAddr;

/// The transport protocol of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Transport {
    /// TCP: each direction is a reassembled byte stream.
    Tcp,
    /// UDP: each direction is the datagrams in capture order, one segment each.
    Udp,
}

impl Transport {
    /// `TCP` or `UDP`.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Tcp => "TCP",
            Transport::Udp => "UDP",
        }
    }
}

/// One protocol: its name, the transport and ports it is found on (either end), and whether a
/// message's bytes have its shape.
pub struct Rule {
    /// The name shown: `DNS`, `SIP`…
    pub name: &'static str,
    /// The transport it runs over.
    pub transport: Transport,
    /// Well-known ports (either end of the conversation). Empty: any port.
    pub ports: &'static [u16],
    /// Whether the first bytes of a datagram or a direction have the protocol's shape.
    pub shape: fn(&[u8]) -> bool,
}

/// The protocols that are not data formats, most specific first.
pub const RULES: &[Rule] = &[
    Rule {
        name: "mDNS",
        transport: Transport::Udp,
        ports: &[5353],
        shape: dns_shape,
    },
    Rule {
        name: "LLMNR",
        transport: Transport::Udp,
        ports: &[5355],
        shape: dns_shape,
    },
    Rule {
        name: "DNS",
        transport: Transport::Udp,
        ports: &[53],
        shape: dns_shape,
    },
    Rule {
        name: "DNS",
        transport: Transport::Tcp,
        ports: &[53],
        shape: dns_tcp_shape,
    },
    Rule {
        name: "NBNS",
        transport: Transport::Udp,
        ports: &[137],
        shape: dns_shape,
    },
    Rule {
        name: "NetBIOS datagram",
        transport: Transport::Udp,
        ports: &[138],
        shape: netbios_datagram_shape,
    },
    Rule {
        name: "DHCP",
        transport: Transport::Udp,
        ports: &[67, 68],
        shape: dhcp_shape,
    },
    Rule {
        name: "DHCPv6",
        transport: Transport::Udp,
        ports: &[546, 547],
        shape: dhcpv6_shape,
    },
    Rule {
        name: "NTP",
        transport: Transport::Udp,
        ports: &[123],
        shape: ntp_shape,
    },
    Rule {
        name: "SSDP",
        transport: Transport::Udp,
        ports: &[1900],
        shape: ssdp_shape,
    },
    Rule {
        name: "SIP",
        transport: Transport::Udp,
        ports: &[],
        shape: sip_shape,
    },
    Rule {
        name: "SIP",
        transport: Transport::Tcp,
        ports: &[],
        shape: sip_shape,
    },
    Rule {
        name: "QUIC",
        transport: Transport::Udp,
        ports: &[443, 4433, 8443],
        shape: quic_shape,
    },
    Rule {
        name: "QUIC",
        transport: Transport::Udp,
        ports: &[],
        shape: quic_long_header,
    },
];

/// The protocol of a datagram or direction between `a` and `b` whose bytes start with `bytes`,
/// if it is one of [`RULES`].
pub fn protocol_of(
    transport: Transport,
    a: SocketAddr,
    b: SocketAddr,
    bytes: &[u8],
) -> Option<&'static str> {
    RULES
        .iter()
        .find(|r| {
            r.transport == transport
                && (r.ports.is_empty()
                    || r.ports.contains(&a.port())
                    || r.ports.contains(&b.port()))
                && (r.shape)(bytes)
        })
        .map(|r| r.name)
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

/// A DNS message (RFC 1035 §4.1.1; mDNS, LLMNR and NBNS share the header): a 12-byte header with
/// a known opcode and counts the message can hold, and at least one record or question.
fn dns_shape(b: &[u8]) -> bool {
    let (Some(flags), Some(qd), Some(an), Some(ns), Some(ar)) = (
        u16_at(b, 2),
        u16_at(b, 4),
        u16_at(b, 6),
        u16_at(b, 8),
        u16_at(b, 10),
    ) else {
        return false;
    };
    let opcode = (flags >> 11) & 0xf;
    let records = usize::from(qd) + usize::from(an) + usize::from(ns) + usize::from(ar);
    // Every question or record takes at least 5 bytes (a root name, type and class; NBNS names
    // are longer). A datagram the capture cut short holds fewer than its counts say, but still
    // asks at most one question.
    let fits = 12 + records * 5 <= b.len().max(12);
    opcode <= 6 && records > 0 && (fits || (qd <= 1 && records <= 512))
}

/// DNS over TCP: a two-byte length before each message.
fn dns_tcp_shape(b: &[u8]) -> bool {
    u16_at(b, 0).is_some_and(|n| usize::from(n) >= 12) && dns_shape(b.get(2..).unwrap_or(&[]))
}

/// A NetBIOS datagram (RFC 1002 §4.4.1): message type 0x10–0x16 and a length that fits.
fn netbios_datagram_shape(b: &[u8]) -> bool {
    matches!(b.first(), Some(0x10..=0x16)) && b.len() >= 10
}

/// A DHCP (BOOTP) message: op 1 or 2, Ethernet hardware, and the magic cookie at byte 236.
fn dhcp_shape(b: &[u8]) -> bool {
    matches!(b.first(), Some(1 | 2)) && b.get(236..240) == Some(&[0x63, 0x82, 0x53, 0x63][..])
}

/// A DHCPv6 message: a known message type (1–13) and room for its transaction id.
fn dhcpv6_shape(b: &[u8]) -> bool {
    matches!(b.first(), Some(1..=13)) && b.len() >= 4
}

/// An NTP packet: version 1–4 and a mode; 48 bytes or more for time (modes 1–5), a 12-byte
/// header for control messages (mode 6, RFC 1305 appendix B), 8 for private ones (mode 7).
fn ntp_shape(b: &[u8]) -> bool {
    let Some(&first) = b.first() else {
        return false;
    };
    let (version, mode) = ((first >> 3) & 7, first & 7);
    let least = match mode {
        0 => return false,
        6 => 12,
        7 => 8,
        _ => 48,
    };
    (1..=4).contains(&version) && b.len() >= least
}

/// SSDP: HTTP-shaped text over UDP (`M-SEARCH`, `NOTIFY`, or a response).
fn ssdp_shape(b: &[u8]) -> bool {
    b.starts_with(b"M-SEARCH * HTTP/1.1")
        || b.starts_with(b"NOTIFY * HTTP/1.1")
        || b.starts_with(b"HTTP/1.1 200")
}

/// A SIP request or response line (RFC 3261 §7.1): `METHOD sip:… SIP/2.0` or `SIP/2.0 NNN`.
fn sip_shape(b: &[u8]) -> bool {
    let line = b.split(|&c| c == b'\r' || c == b'\n').next().unwrap_or(&[]);
    if line.len() > 2048 {
        return false;
    }
    if let Some(rest) = line.strip_prefix(b"SIP/2.0 ") {
        return rest.len() >= 3 && rest.iter().take(3).all(u8::is_ascii_digit);
    }
    let mut parts = line.split(|&c| c == b' ');
    let (Some(method), Some(uri), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    !method.is_empty()
        && method.iter().all(u8::is_ascii_uppercase)
        && (uri.starts_with(b"sip:") || uri.starts_with(b"sips:") || uri.starts_with(b"tel:"))
        && version == b"SIP/2.0"
}

/// A QUIC packet with a long header (RFC 9000 §17.2): the form and fixed bits set and a version
/// word (version 0 is version negotiation), with connection-id lengths that fit.
fn quic_long_header(b: &[u8]) -> bool {
    let Some(&first) = b.first() else {
        return false;
    };
    if first & 0xc0 != 0xc0 || b.len() < 7 {
        return false;
    }
    // Version negotiation (0), QUIC v1 and v2 (RFC 9369), the IETF drafts (0xff0000xx): other
    // words make this a binary payload that starts like one.
    let version = u32::from_be_bytes([b[1], b[2], b[3], b[4]]);
    // Google QUIC from Q046 on writes this header with its own version and an older
    // connection-id length byte.
    if b[1] == b'Q' && b[2..5].iter().all(u8::is_ascii_digit) {
        return true;
    }
    // The reserved versions 0x?a?a?a?a (RFC 9000 §15) force a version negotiation.
    let reserved = version & 0x0f0f_0f0f == 0x0a0a_0a0a;
    if !reserved && !matches!(version, 0 | 1 | 0x6b33_43cf | 0xff00_0000..=0xff00_00ff) {
        return false;
    }
    let dcid = usize::from(b.get(5).copied().unwrap_or(u8::MAX));
    let scid = b.get(6 + dcid).copied().map(usize::from);
    dcid <= 20 && scid.is_some_and(|s| s <= 20 && 7 + dcid + s <= b.len())
}

/// QUIC on its usual ports: a long header, or a short header (the fixed bit set; RFC 9000
/// §17.3) of a packet long enough to hold a connection id and a tag, or Google QUIC.
fn quic_shape(b: &[u8]) -> bool {
    quic_long_header(b)
        || (b.first().is_some_and(|f| f & 0xc0 == 0x40) && b.len() >= 21)
        || google_quic(b)
}

/// A QUIC short-header (1-RTT) packet: the fixed bit set, the long-header bit clear, and room
/// for a packet number and an AEAD tag. Alone it is too weak a shape to name a datagram off the
/// usual ports; on a flow that has carried a long-header packet it is QUIC
/// (see `pcap::stream_payloads`).
pub(crate) fn quic_short_header(b: &[u8]) -> bool {
    b.first().is_some_and(|f| f & 0xc0 == 0x40) && b.len() >= 18
}

/// Google QUIC (before IETF QUIC): public flags with the version bit and an 8-byte connection
/// id, then a version `Q` and three digits (`Q043`).
fn google_quic(b: &[u8]) -> bool {
    b.first().is_some_and(|f| f & 0x09 == 0x09)
        && b.get(9) == Some(&b'Q')
        && b.get(10..13)
            .is_some_and(|v| v.iter().all(u8::is_ascii_digit))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(port: u16) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 1], port))
    }

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
            .collect()
    }

    fn of(transport: Transport, port: u16, bytes: &[u8]) -> Option<&'static str> {
        protocol_of(transport, at(40000), at(port), bytes)
    }

    const QUERY: &str = "abcd01000001000000000000076578616d706c6503636f6d0000010001";

    #[test]
    fn a_dns_query_is_dns_on_its_port_only() {
        let q = unhex(QUERY);
        assert_eq!(of(Transport::Udp, 53, &q), Some("DNS"));
        assert_eq!(of(Transport::Udp, 5353, &q), Some("mDNS"));
        assert_eq!(of(Transport::Udp, 137, &q), Some("NBNS"));
        assert_eq!(of(Transport::Udp, 9999, &q), None, "a port proves it");
        let mut tcp = vec![0, q.len() as u8];
        tcp.extend_from_slice(&q);
        assert_eq!(of(Transport::Tcp, 53, &tcp), Some("DNS"));
    }

    #[test]
    fn a_data_payload_on_a_dns_port_is_not_dns() {
        // A JSON document and a MessagePack map have no DNS header with records that fit.
        assert_eq!(of(Transport::Udp, 53, br#"{"a":1}"#), None);
        assert_eq!(of(Transport::Udp, 5353, &[0x81, 0xa1, 0x61, 0x01]), None);
        // Counts that claim more questions than the bytes hold.
        let mut q = unhex(QUERY);
        q[5] = 200;
        assert_eq!(of(Transport::Udp, 53, &q), None);
        // A response cut by the snap length holds fewer records than it counts: one question,
        // a few answers, still DNS.
        let mut cut = unhex(QUERY);
        cut[7] = 12;
        assert_eq!(of(Transport::Udp, 53, &cut), Some("DNS"));
    }

    #[test]
    fn sip_is_known_by_its_start_line_on_any_port() {
        let invite = b"INVITE sip:bob@example.com SIP/2.0\r\nVia: SIP/2.0/UDP x\r\n\r\n";
        assert_eq!(of(Transport::Udp, 5060, invite), Some("SIP"));
        assert_eq!(of(Transport::Tcp, 15060, invite), Some("SIP"));
        assert_eq!(of(Transport::Udp, 5060, b"SIP/2.0 200 OK\r\n"), Some("SIP"));
        assert_eq!(of(Transport::Udp, 5060, b"GET / HTTP/1.1\r\n"), None);
    }

    #[test]
    fn ssdp_dhcp_ntp_and_quic_have_their_shapes() {
        assert_eq!(
            of(
                Transport::Udp,
                1900,
                b"M-SEARCH * HTTP/1.1\r\nHOST: x\r\n\r\n"
            ),
            Some("SSDP")
        );
        let mut dhcp = vec![0u8; 300];
        dhcp[0] = 1;
        dhcp[236..240].copy_from_slice(&[0x63, 0x82, 0x53, 0x63]);
        assert_eq!(of(Transport::Udp, 67, &dhcp), Some("DHCP"));
        dhcp[236] = 0;
        assert_eq!(of(Transport::Udp, 67, &dhcp), None);
        let mut ntp = vec![0u8; 48];
        ntp[0] = 0x23; // version 4, client
        assert_eq!(of(Transport::Udp, 123, &ntp), Some("NTP"));
        // A control message (mode 6) is a 12-byte header; a time packet that short is not NTP.
        let control = [0x16, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(of(Transport::Udp, 123, &control), Some("NTP"));
        assert_eq!(of(Transport::Udp, 123, &ntp[..12]), None);
        // A QUIC Initial: long header, version 1, 8-byte DCID, empty SCID.
        let mut quic = vec![0xc3, 0, 0, 0, 1, 8];
        quic.extend_from_slice(&[7; 8]);
        quic.push(0);
        quic.extend_from_slice(&[0; 40]);
        assert_eq!(of(Transport::Udp, 443, &quic), Some("QUIC"));
        assert_eq!(of(Transport::Udp, 9999, &quic), Some("QUIC"));
        // Google QUIC Q046: a long header with a Q version.
        let mut q046 = vec![0xc3, b'Q', b'0', b'4', b'6', 0x50];
        q046.extend_from_slice(&[0; 40]);
        assert_eq!(of(Transport::Udp, 443, &q046), Some("QUIC"));
        // Google QUIC: public flags 0x0d, an 8-byte connection id, version Q043.
        let mut gquic = vec![0x0d];
        gquic.extend_from_slice(&[1; 8]);
        gquic.extend_from_slice(b"Q043");
        gquic.extend_from_slice(&[0; 40]);
        assert_eq!(of(Transport::Udp, 443, &gquic), Some("QUIC"));
        // A short header only on QUIC's ports.
        let short = [0x41u8; 40];
        assert_eq!(of(Transport::Udp, 443, &short), Some("QUIC"));
        assert_eq!(of(Transport::Udp, 9999, &short), None);
    }
}
