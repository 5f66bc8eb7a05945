//! TLS recognised in the two directions of a TCP stream, so an encrypted stream is labelled as
//! what it is ("TLS 1.3, SNI api.example.test, TLS_AES_128_GCM_SHA256, 14 records encrypted")
//! instead of being offered as a MessagePack or CBOR guess.
//!
//! What is read: the record layer (content types 20–23, record versions 0x0300–0x0304, lengths up
//! to 2^14 + 2048), the ClientHello (server name, ALPN protocols offered, versions offered) and
//! the ServerHello (the version chosen, from `supported_versions` for TLS 1.3, and the cipher
//! suite). Nothing is decrypted: in TLS 1.3 the ALPN protocol the server chose travels in the
//! encrypted EncryptedExtensions, so only the protocols offered are known.
//!
//! With the user's key log ([`keylog`], the NSS format browsers and curl write for
//! `SSLKEYLOGFILE`), [`decrypt()`] turns the records of one connection back into the bytes the
//! application sent, each plaintext byte traced to the record that carried it.
//!
//! Everything here is bounded by the input (each record read advances at least 5 bytes; at most
//! [`MAX_HANDSHAKE`] bytes of handshake messages are gathered per direction) and never panics.

pub mod decrypt;
pub mod keylog;

pub use decrypt::{decrypt, read_unencrypted, DecryptError, Decrypted, DirectionPlain, PlainSpan};
pub use keylog::{KeyLog, KeyLogError, Secrets};

/// Most bytes of handshake messages gathered per direction to find the hello messages.
pub const MAX_HANDSHAKE: usize = 64 << 10;

/// The largest record length TLS allows (2^14 plus the 2048 bytes of expansion TLS 1.2 permits).
pub(crate) const MAX_RECORD: usize = (1 << 14) + 2048;

/// What the two directions of a TLS stream show without a key.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TlsSummary {
    /// The version in use: `TLS 1.3`, `TLS 1.2`, …; `TLS` when no ServerHello was captured.
    pub version: String,
    /// The server name the client asked for (the `server_name` extension).
    pub sni: Option<String>,
    /// The cipher suite the server chose: its IANA name for common suites, else `0x1234`.
    pub cipher: Option<String>,
    /// The ALPN protocols the client offered, in its order.
    pub alpn: Vec<String>,
    /// The ALPN protocol the server chose, when it is visible (TLS 1.2 and earlier).
    pub alpn_chosen: Option<String>,
    /// Records per direction, `[client→server, server→client]`.
    pub records: [usize; 2],
    /// Application-data records per direction (in TLS 1.3 this includes the encrypted
    /// handshake).
    pub encrypted: [usize; 2],
    /// Bytes per direction after the last whole record (a record cut short, or a gap).
    pub trailing: [usize; 2],
}

impl TlsSummary {
    /// One line for the user: `TLS 1.3, SNI api.example.test, TLS_AES_128_GCM_SHA256, ALPN
    /// offered h2, http/1.1, 14 records encrypted — give a key log to decrypt`.
    pub fn describe(&self) -> String {
        let mut parts = vec![self.version.clone()];
        if let Some(sni) = &self.sni {
            parts.push(format!("SNI {sni}"));
        }
        if let Some(cipher) = &self.cipher {
            parts.push(cipher.clone());
        }
        match &self.alpn_chosen {
            Some(chosen) => parts.push(format!("ALPN {chosen}")),
            None if !self.alpn.is_empty() => {
                parts.push(format!("ALPN offered {}", self.alpn.join(", ")));
            }
            None => {}
        }
        let encrypted = self.encrypted[0].saturating_add(self.encrypted[1]);
        let records = if encrypted == 1 { "record" } else { "records" };
        // A suite that encrypts nothing: no key log would help.
        let null = self
            .cipher
            .as_deref()
            .is_some_and(|c| c.contains("_WITH_NULL_"));
        if null {
            parts.push(format!(
                "{encrypted} {records} not encrypted (a NULL cipher suite)"
            ));
        } else {
            parts.push(format!("{encrypted} {records} encrypted"));
        }
        let trailing = self.trailing[0].saturating_add(self.trailing[1]);
        if trailing > 0 {
            parts.push(format!("{trailing} bytes after the last whole record"));
        }
        if null {
            return parts.join(", ");
        }
        format!("{} — give a key log to decrypt", parts.join(", "))
    }
}

/// One record header: content type, record version, fragment length.
pub(crate) fn record_header(bytes: &[u8], at: usize) -> Option<(u8, u16, usize)> {
    let header = bytes.get(at..at.checked_add(5)?)?;
    let kind = header[0];
    let version = u16::from_be_bytes([header[1], header[2]]);
    let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
    let valid = (20..=23).contains(&kind)
        && (0x0300..=0x0304).contains(&version)
        && (1..=MAX_RECORD).contains(&len);
    valid.then_some((kind, version, len))
}

/// Whether `bytes` (one direction of a stream) starts as a run of TLS records: the first record
/// header is valid, and so is every following one up to the end of the bytes (or the first
/// 16 records).
pub fn looks_like_tls(bytes: &[u8]) -> bool {
    const CHECKED: usize = 16;
    let mut at = 0usize;
    for i in 0..CHECKED {
        if at >= bytes.len() {
            return i > 0;
        }
        match record_header(bytes, at) {
            Some((_, _, len)) => at = at.saturating_add(5).saturating_add(len),
            // A header cut short by the end of the capture still counts after a whole record.
            None => return i > 0 && bytes.len() - at < 5,
        }
    }
    true
}

/// What one direction shows: records counted, handshake bytes gathered.
#[derive(Default)]
struct Side {
    records: usize,
    encrypted: usize,
    trailing: usize,
    handshake: Vec<u8>,
}

fn read_side(bytes: &[u8]) -> Side {
    let mut side = Side::default();
    let mut at = 0usize;
    // Handshake messages are gathered until the first record that is not handshake: past it
    // (ChangeCipherSpec, application data) the handshake is encrypted.
    let mut gathering = true;
    while at < bytes.len() {
        let Some((kind, _, len)) = record_header(bytes, at) else {
            break;
        };
        let start = at + 5;
        let end = start.saturating_add(len);
        let fragment = bytes.get(start..end.min(bytes.len())).unwrap_or(&[]);
        side.records += 1;
        match kind {
            22 if gathering => {
                let room = MAX_HANDSHAKE.saturating_sub(side.handshake.len());
                side.handshake
                    .extend_from_slice(fragment.get(..room.min(fragment.len())).unwrap_or(&[]));
            }
            23 => {
                side.encrypted += 1;
                gathering = false;
            }
            _ => gathering = false,
        }
        if end > bytes.len() {
            // The last record is cut short; it is counted, its missing bytes are not there.
            at = bytes.len();
            break;
        }
        at = end;
    }
    side.trailing = bytes.len().saturating_sub(at);
    side
}

/// A cursor over handshake bytes; every read is checked.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    pub(crate) at: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(out)
    }

    pub(crate) fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    pub(crate) fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }

    pub(crate) fn u24(&mut self) -> Option<usize> {
        self.take(3)
            .map(|b| usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]))
    }

    /// A vector with a length prefix of `width` bytes.
    pub(crate) fn vector(&mut self, width: usize) -> Option<&'a [u8]> {
        let len = match width {
            1 => usize::from(self.u8()?),
            2 => usize::from(self.u16()?),
            _ => self.u24()?,
        };
        self.take(len)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.at >= self.bytes.len()
    }
}

/// The first handshake message of type `kind` in `handshake`, as far as it was captured.
pub(crate) fn message(handshake: &[u8], kind: u8) -> Option<&[u8]> {
    let mut r = Reader::new(handshake);
    while !r.is_empty() {
        let t = r.u8()?;
        let len = r.u24()?;
        let start = r.at;
        let end = start.saturating_add(len).min(handshake.len());
        if t == kind {
            return handshake.get(start..end);
        }
        r.at = start.saturating_add(len);
    }
    None
}

/// The extensions of a hello message, as (type, data) pairs, read until they end or fail.
pub(crate) fn extensions(r: &mut Reader<'_>) -> Vec<(u16, Vec<u8>)> {
    let mut out = Vec::new();
    let Some(block) = r.vector(2) else {
        return out;
    };
    let mut e = Reader::new(block);
    while !e.is_empty() {
        let (Some(kind), Some(data)) = (e.u16(), e.vector(2)) else {
            break;
        };
        out.push((kind, data.to_vec()));
    }
    out
}

/// ALPN protocol names from an `application_layer_protocol_negotiation` extension.
pub(crate) fn alpn_names(data: &[u8]) -> Vec<String> {
    let mut names = Vec::new();
    let mut r = Reader::new(data);
    let Some(list) = r.vector(2) else {
        return names;
    };
    let mut l = Reader::new(list);
    while let Some(name) = l.vector(1) {
        names.push(String::from_utf8_lossy(name).into_owned());
    }
    names
}

/// The host name of a `server_name` extension.
fn server_name(data: &[u8]) -> Option<String> {
    let mut r = Reader::new(data);
    let list = r.vector(2)?;
    let mut l = Reader::new(list);
    while !l.is_empty() {
        let kind = l.u8()?;
        let name = l.vector(2)?;
        if kind == 0 {
            return Some(String::from_utf8_lossy(name).into_owned());
        }
    }
    None
}

/// What a ClientHello says: server name and ALPN protocols offered.
fn client_hello(body: &[u8]) -> (Option<String>, Vec<String>) {
    let mut r = Reader::new(body);
    let skipped = (|| {
        r.take(2 + 32)?;
        r.vector(1)?; // session id
        r.vector(2)?; // cipher suites
        r.vector(1) // compression methods
    })();
    if skipped.is_none() {
        return (None, Vec::new());
    }
    let mut sni = None;
    let mut alpn = Vec::new();
    for (kind, data) in extensions(&mut r) {
        match kind {
            0 => sni = server_name(&data),
            16 => alpn = alpn_names(&data),
            _ => {}
        }
    }
    (sni, alpn)
}

/// What a ServerHello says: the version chosen, the cipher suite, the ALPN protocol (TLS 1.2).
pub(crate) fn server_hello(body: &[u8]) -> Option<(u16, u16, Option<String>)> {
    let mut r = Reader::new(body);
    let legacy = r.u16()?;
    r.take(32)?;
    r.vector(1)?;
    let cipher = r.u16()?;
    r.u8()?;
    let mut version = legacy;
    let mut alpn = None;
    for (kind, data) in extensions(&mut r) {
        match kind {
            43 if data.len() == 2 => version = u16::from_be_bytes([data[0], data[1]]),
            16 => alpn = alpn_names(&data).into_iter().next(),
            _ => {}
        }
    }
    Some((version, cipher, alpn))
}

/// The compression method a ServerHello (its body) chose: 0 none, 1 DEFLATE (RFC 3749).
pub(crate) fn hello_compression(body: &[u8]) -> Option<u8> {
    let mut r = Reader::new(body);
    r.take(2 + 32)?;
    r.vector(1)?; // session id
    r.take(2)?; // cipher suite
    r.u8()
}

/// Whether a ServerHello (its body) carries the extension `kind`, such as 0x0016,
/// `encrypt_then_mac` (RFC 7366).
pub(crate) fn hello_has_extension(body: &[u8], kind: u16) -> bool {
    let mut r = Reader::new(body);
    let skipped = (|| {
        r.take(2 + 32)?;
        r.vector(1)?; // session id
        r.take(2 + 1) // cipher suite, compression method
    })();
    skipped.is_some() && extensions(&mut r).iter().any(|(k, _)| *k == kind)
}

/// The name of a protocol version: `TLS 1.3`, `SSL 3.0`, `TLS 1.3 draft 28`.
pub fn version_name(version: u16) -> String {
    match version {
        0x0300 => "SSL 3.0".into(),
        0x0301 => "TLS 1.0".into(),
        0x0302 => "TLS 1.1".into(),
        0x0303 => "TLS 1.2".into(),
        0x0304 => "TLS 1.3".into(),
        v if v >> 8 == 0x7f => format!("TLS 1.3 draft {}", v & 0xff),
        v => format!("TLS version 0x{v:04x}"),
    }
}

/// The IANA name of a common cipher suite, else its number as `0x1234`.
pub fn cipher_name(suite: u16) -> String {
    let name = match suite {
        0x1301 => "TLS_AES_128_GCM_SHA256",
        0x1302 => "TLS_AES_256_GCM_SHA384",
        0x1303 => "TLS_CHACHA20_POLY1305_SHA256",
        0x1304 => "TLS_AES_128_CCM_SHA256",
        0x1305 => "TLS_AES_128_CCM_8_SHA256",
        0xc02b => "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        0xc02c => "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        0xc02f => "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        0xc030 => "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        0xcca8 => "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        0xcca9 => "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        0xc009 => "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
        0xc00a => "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
        0xc013 => "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
        0xc014 => "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
        0xc027 => "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
        0xc028 => "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384",
        0x009c => "TLS_RSA_WITH_AES_128_GCM_SHA256",
        0x009d => "TLS_RSA_WITH_AES_256_GCM_SHA384",
        0x009e => "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
        0x009f => "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384",
        0x002f => "TLS_RSA_WITH_AES_128_CBC_SHA",
        0x0035 => "TLS_RSA_WITH_AES_256_CBC_SHA",
        0x003c => "TLS_RSA_WITH_AES_128_CBC_SHA256",
        0x003d => "TLS_RSA_WITH_AES_256_CBC_SHA256",
        0x0032 => "TLS_DHE_DSS_WITH_AES_128_CBC_SHA",
        0x0033 => "TLS_DHE_RSA_WITH_AES_128_CBC_SHA",
        0x0038 => "TLS_DHE_DSS_WITH_AES_256_CBC_SHA",
        0x0039 => "TLS_DHE_RSA_WITH_AES_256_CBC_SHA",
        0x0040 => "TLS_DHE_DSS_WITH_AES_128_CBC_SHA256",
        0x0067 => "TLS_DHE_RSA_WITH_AES_128_CBC_SHA256",
        0x006a => "TLS_DHE_DSS_WITH_AES_256_CBC_SHA256",
        0x006b => "TLS_DHE_RSA_WITH_AES_256_CBC_SHA256",
        0xc023 => "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
        0xc024 => "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384",
        0xccaa => "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        0xc09c => "TLS_RSA_WITH_AES_128_CCM",
        0xc09d => "TLS_RSA_WITH_AES_256_CCM",
        0xc09e => "TLS_DHE_RSA_WITH_AES_128_CCM",
        0xc09f => "TLS_DHE_RSA_WITH_AES_256_CCM",
        0xc0a0 => "TLS_RSA_WITH_AES_128_CCM_8",
        0xc0a1 => "TLS_RSA_WITH_AES_256_CCM_8",
        0xc0a2 => "TLS_DHE_RSA_WITH_AES_128_CCM_8",
        0xc0a3 => "TLS_DHE_RSA_WITH_AES_256_CCM_8",
        0xc0ac => "TLS_ECDHE_ECDSA_WITH_AES_128_CCM",
        0xc0ad => "TLS_ECDHE_ECDSA_WITH_AES_256_CCM",
        0xc0ae => "TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8",
        0xc0af => "TLS_ECDHE_ECDSA_WITH_AES_256_CCM_8",
        // Suites that encrypt nothing (read without keys: `decrypt::null_mac_len`).
        0x0001 => "TLS_RSA_WITH_NULL_MD5",
        0x0002 => "TLS_RSA_WITH_NULL_SHA",
        0x002c => "TLS_PSK_WITH_NULL_SHA",
        0x002d => "TLS_DHE_PSK_WITH_NULL_SHA",
        0x002e => "TLS_RSA_PSK_WITH_NULL_SHA",
        0x003b => "TLS_RSA_WITH_NULL_SHA256",
        0x00b0 => "TLS_PSK_WITH_NULL_SHA256",
        0x00b1 => "TLS_PSK_WITH_NULL_SHA384",
        0x00b4 => "TLS_DHE_PSK_WITH_NULL_SHA256",
        0x00b5 => "TLS_DHE_PSK_WITH_NULL_SHA384",
        0x00b8 => "TLS_RSA_PSK_WITH_NULL_SHA256",
        0x00b9 => "TLS_RSA_PSK_WITH_NULL_SHA384",
        0xc001 => "TLS_ECDH_ECDSA_WITH_NULL_SHA",
        0xc006 => "TLS_ECDHE_ECDSA_WITH_NULL_SHA",
        0xc00b => "TLS_ECDH_RSA_WITH_NULL_SHA",
        0xc010 => "TLS_ECDHE_RSA_WITH_NULL_SHA",
        0xc015 => "TLS_ECDH_anon_WITH_NULL_SHA",
        0xc039 => "TLS_ECDHE_PSK_WITH_NULL_SHA",
        0xc03a => "TLS_ECDHE_PSK_WITH_NULL_SHA256",
        0xc03b => "TLS_ECDHE_PSK_WITH_NULL_SHA384",
        _ => return format!("0x{suite:04x}"),
    };
    name.into()
}

/// The TLS summary of a TCP stream, given its two directions (`client` the opener's bytes), or
/// `None` when it is not TLS: every direction with bytes must [`looks_like_tls`], and at least
/// one has bytes.
///
/// ```
/// use wirelens::capture::tls::{looks_like_tls, summarize};
///
/// // An application-data record each way.
/// let record = [23u8, 3, 3, 0, 4, 1, 2, 3, 4];
/// assert!(looks_like_tls(&record));
/// let s = summarize(&record, &record).expect("TLS");
/// assert_eq!(s.records, [1, 1]);
/// assert!(s.describe().ends_with("2 records encrypted — give a key log to decrypt"));
/// assert!(summarize(b"GET / HTTP/1.1\r\n\r\n", b"").is_none());
/// ```
pub fn summarize(client: &[u8], server: &[u8]) -> Option<TlsSummary> {
    let sides = [client, server];
    if sides.iter().all(|s| s.is_empty())
        || sides.iter().any(|s| !s.is_empty() && !looks_like_tls(s))
    {
        return None;
    }
    let [c, s] = sides.map(read_side);
    let (sni, alpn) = message(&c.handshake, 1).map_or((None, Vec::new()), client_hello);
    let hello = message(&s.handshake, 2).and_then(server_hello);
    let (version, cipher, alpn_chosen) = match hello {
        Some((v, suite, chosen)) => (version_name(v), Some(cipher_name(suite)), chosen),
        None => ("TLS".to_string(), None, None),
    };
    Some(TlsSummary {
        version,
        sni,
        cipher,
        alpn,
        alpn_chosen,
        records: [c.records, s.records],
        encrypted: [c.encrypted, s.encrypted],
        trailing: [c.trailing, s.trailing],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: u8, body: &[u8]) -> Vec<u8> {
        let mut out = vec![kind, 3, 3];
        out.extend_from_slice(&(body.len() as u16).to_be_bytes());
        out.extend_from_slice(body);
        out
    }

    fn handshake(kind: u8, body: &[u8]) -> Vec<u8> {
        let len = body.len() as u32;
        let mut out = vec![kind];
        out.extend_from_slice(&len.to_be_bytes()[1..]);
        out.extend_from_slice(body);
        out
    }

    fn ext(kind: u16, data: &[u8]) -> Vec<u8> {
        let mut out = kind.to_be_bytes().to_vec();
        out.extend_from_slice(&(data.len() as u16).to_be_bytes());
        out.extend_from_slice(data);
        out
    }

    fn vec2(data: &[u8]) -> Vec<u8> {
        let mut out = (data.len() as u16).to_be_bytes().to_vec();
        out.extend_from_slice(data);
        out
    }

    fn client_hello_bytes(host: &str, alpn: &[&str]) -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend_from_slice(&[7; 32]);
        body.push(0); // session id
        body.extend(vec2(&[0x13, 0x01, 0x13, 0x02]));
        body.extend_from_slice(&[1, 0]);
        let mut name = vec![0];
        name.extend(vec2(host.as_bytes()));
        let mut protos = Vec::new();
        for p in alpn {
            protos.push(p.len() as u8);
            protos.extend_from_slice(p.as_bytes());
        }
        let mut exts = ext(0, &vec2(&name));
        exts.extend(ext(16, &vec2(&protos)));
        exts.extend(ext(43, &[4, 3, 4, 3, 3]));
        body.extend(vec2(&exts));
        record(22, &handshake(1, &body))
    }

    fn server_hello_bytes(suite: u16, version: Option<u16>) -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend_from_slice(&[9; 32]);
        body.push(0);
        body.extend_from_slice(&suite.to_be_bytes());
        body.push(0);
        let exts = version.map_or_else(Vec::new, |v| ext(43, &v.to_be_bytes()));
        body.extend(vec2(&exts));
        record(22, &handshake(2, &body))
    }

    #[test]
    fn a_null_suite_is_not_called_encrypted() {
        let mut client = client_hello_bytes("api.example.test", &[]);
        client.extend(record(20, &[1]));
        client.extend(record(23, &[0; 40]));
        let server = server_hello_bytes(0x003b, None);
        let s = summarize(&client, &server).expect("a TLS stream");
        assert_eq!(
            s.describe(),
            "TLS 1.2, SNI api.example.test, TLS_RSA_WITH_NULL_SHA256, 1 record not encrypted (a NULL cipher suite)"
        );
    }

    #[test]
    fn a_tls13_stream_gives_its_server_name_cipher_and_records() {
        let mut client = client_hello_bytes("api.example.test", &["h2", "http/1.1"]);
        client.extend(record(20, &[1]));
        client.extend(record(23, &[0; 40]));
        client.extend(record(23, &[0; 30]));
        let mut server = server_hello_bytes(0x1301, Some(0x0304));
        server.extend(record(20, &[1]));
        for _ in 0..3 {
            server.extend(record(23, &[5; 64]));
        }
        let s = summarize(&client, &server).expect("a TLS stream");
        assert_eq!(s.version, "TLS 1.3");
        assert_eq!(s.sni.as_deref(), Some("api.example.test"));
        assert_eq!(s.cipher.as_deref(), Some("TLS_AES_128_GCM_SHA256"));
        assert_eq!(s.alpn, ["h2", "http/1.1"]);
        assert_eq!(s.records, [4, 5]);
        assert_eq!(s.encrypted, [2, 3]);
        assert_eq!(
            s.describe(),
            "TLS 1.3, SNI api.example.test, TLS_AES_128_GCM_SHA256, ALPN offered h2, http/1.1, 5 records encrypted — give a key log to decrypt"
        );
    }

    #[test]
    fn a_tls12_server_hello_gives_its_legacy_version() {
        let client = client_hello_bytes("a.test", &[]);
        let server = server_hello_bytes(0xc02f, None);
        let s = summarize(&client, &server).expect("a TLS stream");
        assert_eq!(s.version, "TLS 1.2");
        assert_eq!(
            s.cipher.as_deref(),
            Some("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256")
        );
        assert!(s.alpn.is_empty());
        assert_eq!(version_name(0x7f1c), "TLS 1.3 draft 28");
        assert_eq!(cipher_name(0xabcd), "0xabcd");
    }

    #[test]
    fn other_bytes_are_not_tls() {
        assert!(!looks_like_tls(b""));
        assert!(!looks_like_tls(b"HTTP/1.1 200 OK\r\n"));
        assert!(!looks_like_tls(&[0xa1, 0x61, 0x61, 0x01, 0x00, 0x00]));
        // A valid first header followed by something that is not a record.
        let mut bytes = record(23, &[0; 4]);
        bytes.extend_from_slice(b"GET / HTTP/1.1\r\n");
        assert!(!looks_like_tls(&bytes));
        // A record cut short by the end of the capture is still TLS.
        let cut = record(23, &[0; 100]);
        assert!(looks_like_tls(&cut[..50]));
        assert!(summarize(&[], &[]).is_none());
        assert!(summarize(&cut, b"plain text here").is_none());
    }

    #[test]
    fn cut_and_hostile_hellos_do_not_panic() {
        let full = client_hello_bytes("host.test", &["h2"]);
        for end in 0..full.len() {
            let _ = summarize(&full[..end], &[]);
        }
        // Lengths that point past the end everywhere.
        let mut bytes = vec![22, 3, 1, 0, 12, 1, 0xff, 0xff, 0xff, 3, 3];
        bytes.extend_from_slice(&[0xff; 7]);
        let s = summarize(&bytes, &[]);
        assert!(s.is_some_and(|s| s.sni.is_none()));
    }
}
