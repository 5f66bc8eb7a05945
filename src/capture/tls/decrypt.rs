//! One TLS connection decrypted with the secrets of a key log: the bytes the application sent
//! each way, and for every run of plaintext the record that carried it.
//!
//! Read: TLS 1.3 (`TLS_AES_128_GCM_SHA256`, `TLS_AES_256_GCM_SHA384`,
//! `TLS_CHACHA20_POLY1305_SHA256`, `TLS_AES_128_CCM_SHA256`, `TLS_AES_128_CCM_8_SHA256`; the
//! handshake traffic secrets for the encrypted handshake, then `*_TRAFFIC_SECRET_0`, then the
//! next secret after each KeyUpdate) and TLS 1.2 with AEAD suites (AES-GCM and AES-CCM/CCM_8
//! with their explicit nonce, ChaCha20-Poly1305 per RFC 7905) or AES-CBC suites
//! (`TLS_{RSA,DHE_RSA,DHE_DSS,ECDHE_RSA,ECDHE_ECDSA}_WITH_AES_{128,256}_CBC_{SHA,SHA256,SHA384}`:
//! an explicit IV per record, HMAC-SHA1/256/384, MAC-then-encrypt, or encrypt-then-MAC per
//! RFC 7366 when the ServerHello carries extension 0x0016); TLS 1.2 keys come from the
//! `CLIENT_RANDOM` master secret through the PRF (P_SHA256, or P_SHA384 for SHA-384 suites).
//! The ALPN protocol chosen is read from the ServerHello (TLS 1.2) or the decrypted
//! EncryptedExtensions (TLS 1.3).
//!
//! A record whose tag, MAC or padding does not verify, or for which the key log has no secret,
//! stops that direction: what was decrypted before it is kept (never unverified plaintext), and
//! the error names the record (its index among the direction's records and the byte offset of
//! its header). A connection whose client random the key log lacks is an error naming that
//! client random and how many other sessions the log holds. Everything is bounded by
//! the input: at most [`MAX_RECORDS`] records per direction, no plaintext larger than its
//! ciphertext, and nothing here panics.

use std::fmt;

use aes_gcm::aead::generic_array::GenericArray;
use aes_gcm::aead::{Aead, KeyInit, Payload as Sealed};
use aes_gcm::{Aes128Gcm, Aes256Gcm};
use cbc::cipher::block_padding::NoPadding;
use cbc::cipher::{BlockDecryptMut, KeyIvInit};
use chacha20poly1305::ChaCha20Poly1305;
use hkdf::Hkdf;
use hmac::{Hmac, Mac};
use sha1::Sha1;
use sha2::{Sha256, Sha384};

use super::keylog::{KeyLog, Secrets};
use super::{alpn_names, cipher_name, extensions, record_header, version_name, Reader};
use crate::model::Span;

/// Most records read per direction.
pub const MAX_RECORDS: usize = 1_000_000;

/// The AEAD tag length of every AEAD suite read here but CCM_8 (8 bytes).
const TAG: usize = 16;

/// Why a connection, or one record of it, could not be decrypted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecryptError {
    /// The direction: 0 client→server, 1 server→client; `None` for the connection as a whole.
    pub direction: Option<usize>,
    /// The record's index among the records of its direction (from 0).
    pub record: Option<usize>,
    /// The byte offset of the record's header in its direction.
    pub offset: Option<usize>,
    /// What went wrong.
    pub message: String,
}

impl DecryptError {
    fn connection(message: impl Into<String>) -> Self {
        DecryptError {
            direction: None,
            record: None,
            offset: None,
            message: message.into(),
        }
    }

    fn record(direction: usize, record: &Record<'_>, message: impl Into<String>) -> Self {
        DecryptError {
            direction: Some(direction),
            record: Some(record.index),
            offset: Some(record.start),
            message: message.into(),
        }
    }
}

impl fmt::Display for DecryptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(d) = self.direction {
            write!(f, "{}", direction_name(d))?;
            if let (Some(r), Some(at)) = (self.record, self.offset) {
                write!(f, " record {r} (byte {at} of the direction)")?;
            }
            write!(f, ": ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for DecryptError {}

/// Where a run of plaintext came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlainSpan {
    /// The bytes of [`DirectionPlain::plaintext`].
    pub plain: Span,
    /// The whole record (header, ciphertext, tag) in the direction's bytes, as given to
    /// [`decrypt()`]: the span to hand to `Direction::segments_in` to name capture frames.
    pub record: Span,
    /// The record's index among the records of its direction (from 0).
    pub index: usize,
}

/// One direction decrypted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirectionPlain {
    /// The application data, every record's plaintext joined in order (what HTTP reads).
    pub plaintext: Vec<u8>,
    /// For each record that gave application data, in order, the plaintext range and the
    /// record; the ranges are contiguous and cover `plaintext`.
    pub spans: Vec<PlainSpan>,
    /// Records decrypted (handshake, alerts and application data).
    pub records: usize,
    /// What stopped this direction before its end, if anything; the plaintext before it is kept.
    pub error: Option<DecryptError>,
}

impl DirectionPlain {
    /// The records that carried any byte of `plain` (a range of [`DirectionPlain::plaintext`]).
    pub fn spans_in(&self, plain: Span) -> &[PlainSpan] {
        let first = self.spans.partition_point(|s| s.plain.end <= plain.start);
        let last = self.spans.partition_point(|s| s.plain.start < plain.end);
        self.spans.get(first..last.max(first)).unwrap_or(&[])
    }

    /// The bytes of the direction's ciphertext, from the first record header to the last
    /// record's end, that carried `plain`; `None` when `plain` is empty or past the end.
    pub fn record_span(&self, plain: Span) -> Option<Span> {
        let spans = self.spans_in(plain);
        Some(Span::new(
            spans.first()?.record.start,
            spans.last()?.record.end,
        ))
    }
}

/// A decrypted connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decrypted {
    /// The version in use: `TLS 1.3`, `TLS 1.2`.
    pub version: String,
    /// The cipher suite's IANA name.
    pub cipher: String,
    /// The ALPN protocol the server chose (`h2`, `http/1.1`), if any.
    pub alpn: Option<String>,
    /// `[client→server, server→client]`.
    pub directions: [DirectionPlain; 2],
    /// What else was seen: alerts, records cut short, bytes that are not records.
    pub notes: Vec<String>,
    /// The cipher suite encrypts nothing (a `NULL` suite): the records were read as sent,
    /// without keys ([`read_unencrypted`]).
    pub unencrypted: bool,
}

impl Decrypted {
    /// The errors that stopped a direction, client→server first.
    pub fn errors(&self) -> impl Iterator<Item = &DecryptError> {
        self.directions.iter().filter_map(|d| d.error.as_ref())
    }
}

fn direction_name(which: usize) -> &'static str {
    if which == 0 {
        "client→server"
    } else {
        "server→client"
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One whole record of a direction.
struct Record<'a> {
    index: usize,
    /// Offset of the header in the direction.
    start: usize,
    kind: u8,
    header: &'a [u8],
    fragment: &'a [u8],
}

impl Record<'_> {
    fn span(&self) -> Span {
        Span::new(
            self.start,
            self.start
                .saturating_add(self.header.len())
                .saturating_add(self.fragment.len()),
        )
    }
}

/// The whole records of a direction, then (in `end`) why reading stopped before the end.
struct Records<'a> {
    bytes: &'a [u8],
    at: usize,
    index: usize,
    end: Option<String>,
}

impl<'a> Records<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Records {
            bytes,
            at: 0,
            index: 0,
            end: None,
        }
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Record<'a>;

    fn next(&mut self) -> Option<Record<'a>> {
        if self.at >= self.bytes.len() || self.end.is_some() {
            return None;
        }
        let left = self.bytes.len().saturating_sub(self.at);
        if self.index >= MAX_RECORDS {
            self.end = Some(format!(
                "stopped after {MAX_RECORDS} records; {left} bytes not read"
            ));
            return None;
        }
        let Some((kind, _, len)) = record_header(self.bytes, self.at) else {
            self.end = Some(if left < 5 {
                format!("{left} bytes after the last whole record (a header cut short)")
            } else {
                format!(
                    "the bytes from {} are not a TLS record ({left} bytes not read)",
                    self.at
                )
            });
            return None;
        };
        let body = self.at.saturating_add(5);
        let end = body.saturating_add(len);
        let (Some(header), Some(fragment)) =
            (self.bytes.get(self.at..body), self.bytes.get(body..end))
        else {
            self.end = Some(format!(
                "record {} at byte {} is cut short ({} of its {len} bytes captured)",
                self.index,
                self.at,
                left.saturating_sub(5)
            ));
            return None;
        };
        let record = Record {
            index: self.index,
            start: self.at,
            kind,
            header,
            fragment,
        };
        self.at = end;
        self.index = self.index.saturating_add(1);
        Some(record)
    }
}

/// The handshake bytes of a direction's plaintext records before its first ChangeCipherSpec
/// or application-data record (the hellos).
fn plain_handshake(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in Records::new(bytes) {
        if r.kind != 22 || out.len() >= super::MAX_HANDSHAKE {
            break;
        }
        out.extend_from_slice(r.fragment);
    }
    out
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Hash {
    Sha256,
    Sha384,
}

impl Hash {
    fn len(self) -> usize {
        match self {
            Hash::Sha256 => 32,
            Hash::Sha384 => 48,
        }
    }
}

/// The HMAC hash of a TLS 1.2 CBC suite.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum MacHash {
    Sha1,
    Sha256,
    Sha384,
}

impl MacHash {
    fn len(self) -> usize {
        match self {
            MacHash::Sha1 => 20,
            MacHash::Sha256 => 32,
            MacHash::Sha384 => 48,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Aes128Gcm,
    Aes256Gcm,
    ChaCha20Poly1305,
    /// AES-CCM: `short_tag` is CCM_8's 8-byte tag (else 16), `wide` a 256-bit key.
    AesCcm {
        wide: bool,
        short_tag: bool,
    },
    /// TLS 1.2 AES-CBC with an HMAC (MAC-then-encrypt, or encrypt-then-MAC per RFC 7366).
    Aes128Cbc(MacHash),
    Aes256Cbc(MacHash),
}

impl Kind {
    fn key_len(self) -> usize {
        match self {
            Kind::Aes128Gcm | Kind::Aes128Cbc(_) | Kind::AesCcm { wide: false, .. } => 16,
            Kind::Aes256Gcm
            | Kind::ChaCha20Poly1305
            | Kind::Aes256Cbc(_)
            | Kind::AesCcm { wide: true, .. } => 32,
        }
    }

    /// The HMAC of a CBC suite; `None` for the AEAD suites.
    fn mac(self) -> Option<MacHash> {
        match self {
            Kind::Aes128Cbc(m) | Kind::Aes256Cbc(m) => Some(m),
            _ => None,
        }
    }
}

/// A cipher suite read here: its hash (key schedule, PRF) and its record cipher.
#[derive(Clone, Copy, Debug)]
struct Suite {
    hash: Hash,
    kind: Kind,
}

fn suite(id: u16, tls13: bool) -> Option<Suite> {
    use Hash::*;
    use Kind::*;
    let ccm = |wide, short_tag| AesCcm { wide, short_tag };
    let (hash, kind) = match (tls13, id) {
        (true, 0x1301) => (Sha256, Aes128Gcm),
        (true, 0x1302) => (Sha384, Aes256Gcm),
        (true, 0x1303) => (Sha256, ChaCha20Poly1305),
        (true, 0x1304) => (Sha256, ccm(false, false)),
        (true, 0x1305) => (Sha256, ccm(false, true)),
        // ECDHE_ECDSA, ECDHE_RSA, RSA and DHE_RSA with AES-GCM; the key exchange does not matter
        // once the master secret is known.
        (false, 0xc02b | 0xc02f | 0x009c | 0x009e) => (Sha256, Aes128Gcm),
        (false, 0xc02c | 0xc030 | 0x009d | 0x009f) => (Sha384, Aes256Gcm),
        (false, 0xcca8..=0xccaa) => (Sha256, ChaCha20Poly1305),
        // AES-CCM and CCM_8 (RFC 6655 for RSA and DHE_RSA, RFC 7251 for ECDHE_ECDSA): the
        // default PRF, SHA-256.
        (false, 0xc09c | 0xc09e | 0xc0ac) => (Sha256, ccm(false, false)),
        (false, 0xc09d | 0xc09f | 0xc0ad) => (Sha256, ccm(true, false)),
        (false, 0xc0a0 | 0xc0a2 | 0xc0ae) => (Sha256, ccm(false, true)),
        (false, 0xc0a1 | 0xc0a3 | 0xc0af) => (Sha256, ccm(true, true)),
        // AES-CBC with HMAC-SHA1 (RSA, DHE_DSS, DHE_RSA, ECDHE_ECDSA, ECDHE_RSA): the TLS 1.2 PRF
        // is SHA-256 for every suite that does not name SHA-384.
        (false, 0x002f | 0x0032 | 0x0033 | 0xc009 | 0xc013) => (Sha256, Aes128Cbc(MacHash::Sha1)),
        (false, 0x0035 | 0x0038 | 0x0039 | 0xc00a | 0xc014) => (Sha256, Aes256Cbc(MacHash::Sha1)),
        // AES-CBC with HMAC-SHA256 and HMAC-SHA384.
        (false, 0x003c | 0x0040 | 0x0067 | 0xc023 | 0xc027) => (Sha256, Aes128Cbc(MacHash::Sha256)),
        (false, 0x003d | 0x006a | 0x006b) => (Sha256, Aes256Cbc(MacHash::Sha256)),
        (false, 0xc024 | 0xc028) => (Sha384, Aes256Cbc(MacHash::Sha384)),
        _ => return None,
    };
    Some(Suite { hash, kind })
}

/// AES-CCM with a 16-byte tag and a 12-byte nonce, as TLS uses it.
type Aes128Ccm = ccm::Ccm<aes::Aes128, ccm::consts::U16, ccm::consts::U12>;
type Aes256Ccm = ccm::Ccm<aes::Aes256, ccm::consts::U16, ccm::consts::U12>;
/// AES-CCM_8: the same with an 8-byte tag.
type Aes128Ccm8 = ccm::Ccm<aes::Aes128, ccm::consts::U8, ccm::consts::U12>;
type Aes256Ccm8 = ccm::Ccm<aes::Aes256, ccm::consts::U8, ccm::consts::U12>;

/// A record cipher with its key.
enum Cipher {
    Aes128(Box<Aes128Gcm>),
    Aes256(Box<Aes256Gcm>),
    ChaCha(Box<ChaCha20Poly1305>),
    Ccm128(Box<Aes128Ccm>),
    Ccm256(Box<Aes256Ccm>),
    Ccm128Short(Box<Aes128Ccm8>),
    Ccm256Short(Box<Aes256Ccm8>),
}

impl Cipher {
    fn new(kind: Kind, key: &[u8]) -> Option<Cipher> {
        Some(match kind {
            Kind::Aes128Gcm => Cipher::Aes128(Box::new(Aes128Gcm::new_from_slice(key).ok()?)),
            Kind::Aes256Gcm => Cipher::Aes256(Box::new(Aes256Gcm::new_from_slice(key).ok()?)),
            Kind::ChaCha20Poly1305 => {
                Cipher::ChaCha(Box::new(ChaCha20Poly1305::new_from_slice(key).ok()?))
            }
            Kind::AesCcm { wide, short_tag } => match (wide, short_tag) {
                (false, false) => Cipher::Ccm128(Box::new(Aes128Ccm::new_from_slice(key).ok()?)),
                (true, false) => Cipher::Ccm256(Box::new(Aes256Ccm::new_from_slice(key).ok()?)),
                (false, true) => {
                    Cipher::Ccm128Short(Box::new(Aes128Ccm8::new_from_slice(key).ok()?))
                }
                (true, true) => {
                    Cipher::Ccm256Short(Box::new(Aes256Ccm8::new_from_slice(key).ok()?))
                }
            },
            // CBC records are opened by `CbcKeys`, not by an AEAD.
            Kind::Aes128Cbc(_) | Kind::Aes256Cbc(_) => return None,
        })
    }

    /// The plaintext, or `None` when the tag does not verify.
    fn open(&self, nonce: [u8; 12], aad: &[u8], msg: &[u8]) -> Option<Vec<u8>> {
        let nonce = GenericArray::from(nonce);
        let sealed = Sealed { msg, aad };
        match self {
            Cipher::Aes128(c) => c.decrypt(&nonce, sealed).ok(),
            Cipher::Aes256(c) => c.decrypt(&nonce, sealed).ok(),
            Cipher::ChaCha(c) => c.decrypt(&nonce, sealed).ok(),
            Cipher::Ccm128(c) => c.decrypt(&nonce, sealed).ok(),
            Cipher::Ccm256(c) => c.decrypt(&nonce, sealed).ok(),
            Cipher::Ccm128Short(c) => c.decrypt(&nonce, sealed).ok(),
            Cipher::Ccm256Short(c) => c.decrypt(&nonce, sealed).ok(),
        }
    }

    /// The length of this cipher's tag.
    fn tag_len(&self) -> usize {
        match self {
            Cipher::Ccm128Short(_) | Cipher::Ccm256Short(_) => 8,
            _ => TAG,
        }
    }
}

/// The keys of one direction, and its record sequence number.
struct Keys {
    cipher: Cipher,
    /// TLS 1.3 and ChaCha20-Poly1305: the 12-byte IV; TLS 1.2 AES-GCM: the 4-byte salt.
    iv: Vec<u8>,
    seq: u64,
}

impl Keys {
    /// The per-record nonce: the IV XOR the sequence number (left-padded to 12 bytes).
    fn xor_nonce(&self) -> Option<[u8; 12]> {
        let mut nonce: [u8; 12] = self.iv.as_slice().try_into().ok()?;
        for (n, s) in nonce.iter_mut().skip(4).zip(self.seq.to_be_bytes()) {
            *n ^= s;
        }
        Some(nonce)
    }

    fn advance(&mut self) -> Result<(), String> {
        self.seq = self
            .seq
            .checked_add(1)
            .ok_or("the record sequence number wrapped")?;
        Ok(())
    }
}

/// AES-CBC block size, and the length of the explicit per-record IV of TLS 1.1 and later.
const BLOCK: usize = 16;

/// The keys of one direction of a TLS 1.2 CBC suite, and its record sequence number.
struct CbcKeys {
    key: Vec<u8>,
    mac: MacHash,
    mac_key: Vec<u8>,
    /// RFC 7366 encrypt-then-MAC (the ServerHello carried extension 0x0016): the MAC covers
    /// the IV and ciphertext, and is sent after them in the clear.
    etm: bool,
    seq: u64,
}

/// Whether HMAC(`key`, `parts`…) equals `tag`, compared in constant time.
fn mac_verifies(hash: MacHash, key: &[u8], parts: &[&[u8]], tag: &[u8]) -> bool {
    fn check<M: Mac + hmac::digest::KeyInit>(key: &[u8], parts: &[&[u8]], tag: &[u8]) -> bool {
        let Ok(mut m) = <M as Mac>::new_from_slice(key) else {
            return false;
        };
        for p in parts {
            m.update(p);
        }
        m.verify_slice(tag).is_ok()
    }
    match hash {
        MacHash::Sha1 => check::<Hmac<Sha1>>(key, parts, tag),
        MacHash::Sha256 => check::<Hmac<Sha256>>(key, parts, tag),
        MacHash::Sha384 => check::<Hmac<Sha384>>(key, parts, tag),
    }
}

/// `IV ‖ ciphertext` (whole blocks, at least two) decrypted with AES-CBC; `None` when the
/// length is not whole blocks or the key is not 16 or 32 bytes.
fn cbc_decrypt(key: &[u8], sealed: &[u8]) -> Option<Vec<u8>> {
    let (iv, ciphertext) = (sealed.get(..BLOCK)?, sealed.get(BLOCK..)?);
    if ciphertext.is_empty() || ciphertext.len() % BLOCK != 0 {
        return None;
    }
    let mut buf = ciphertext.to_vec();
    let len = match key.len() {
        16 => cbc::Decryptor::<aes::Aes128>::new_from_slices(key, iv)
            .ok()?
            .decrypt_padded_mut::<NoPadding>(&mut buf)
            .ok()?
            .len(),
        32 => cbc::Decryptor::<aes::Aes256>::new_from_slices(key, iv)
            .ok()?
            .decrypt_padded_mut::<NoPadding>(&mut buf)
            .ok()?
            .len(),
        _ => return None,
    };
    buf.truncate(len);
    Some(buf)
}

/// Whether `padded` ends in valid TLS padding (`n + 1` bytes of value `n`) with room for
/// `room` more bytes before it; checked over the last 256 bytes without stopping early, so the
/// time taken does not depend on where the padding goes wrong.
fn padding_ok(padded: &[u8], room: usize) -> (bool, usize) {
    let Some(&pad) = padded.last() else {
        return (false, 0);
    };
    let strip = usize::from(pad).saturating_add(1);
    let fits = strip.saturating_add(room) <= padded.len();
    let mut diff = 0u8;
    for (i, &b) in padded.iter().rev().take(256).enumerate() {
        // 0xff for the bytes that belong to the padding, 0 past it.
        let inside = 0u8.wrapping_sub(u8::from(i < strip));
        diff |= inside & (b ^ pad);
    }
    (fits & (diff == 0), strip)
}

impl CbcKeys {
    /// The plaintext of one record; advances the sequence number. A MAC or padding that does
    /// not verify is an error, never plaintext.
    fn open(&mut self, record: &Record<'_>) -> Result<Vec<u8>, String> {
        let seq = self.seq.to_be_bytes();
        let (kind, version) = (
            record.header.get(..1).unwrap_or(&[]),
            record.header.get(1..3).unwrap_or(&[]),
        );
        let mac_len = self.mac.len();
        let fragment = record.fragment;
        let plain = if self.etm {
            let sealed_len = fragment.len().saturating_sub(mac_len);
            let (sealed, tag) = fragment.split_at(sealed_len);
            if sealed.len() < 2 * BLOCK || sealed.len() % BLOCK != 0 {
                return Err(format!(
                    "the record's {} bytes are not an IV, whole AES blocks and a {mac_len}-byte MAC (encrypt-then-MAC)",
                    fragment.len()
                ));
            }
            let length = u16::try_from(sealed.len())
                .map_err(|_| "the record is longer than a TLS record can be")?
                .to_be_bytes();
            if !mac_verifies(
                self.mac,
                &self.mac_key,
                &[&seq, kind, version, &length, sealed],
                tag,
            ) {
                return Err(format!(
                    "the MAC does not verify (sequence number {}, encrypt-then-MAC): a corrupted record or the wrong master secret",
                    self.seq
                ));
            }
            let padded = cbc_decrypt(&self.key, sealed).ok_or("AES-CBC could not be set up")?;
            let (ok, strip) = padding_ok(&padded, 0);
            if !ok {
                return Err(format!(
                    "the padding is malformed (sequence number {}) though the MAC verified",
                    self.seq
                ));
            }
            let mut padded = padded;
            padded.truncate(padded.len().saturating_sub(strip));
            padded
        } else {
            // MAC-then-encrypt: IV ‖ AES-CBC(content ‖ MAC ‖ padding ‖ padding length).
            if fragment.len() < 2 * BLOCK
                || fragment.len() % BLOCK != 0
                || fragment.len() < BLOCK + mac_len + 1
            {
                return Err(format!(
                    "the record's {} bytes are not an IV and whole AES blocks holding a {mac_len}-byte MAC",
                    fragment.len()
                ));
            }
            let padded = cbc_decrypt(&self.key, fragment).ok_or("AES-CBC could not be set up")?;
            let (pad_ok, strip) = padding_ok(&padded, mac_len);
            // With bad padding the MAC is still computed (as if there were none), so both
            // failures take the same path.
            let strip = if pad_ok { strip } else { 0 };
            let content_len = padded.len().saturating_sub(strip).saturating_sub(mac_len);
            let (content, rest) = padded.split_at(content_len);
            let tag = rest.get(..mac_len).unwrap_or(&[]);
            let length = u16::try_from(content_len)
                .map_err(|_| "the record is longer than a TLS record can be")?
                .to_be_bytes();
            let mac_ok = mac_verifies(
                self.mac,
                &self.mac_key,
                &[&seq, kind, version, &length, content],
                tag,
            );
            if !(pad_ok & mac_ok) {
                return Err(format!(
                    "the MAC or padding does not verify (sequence number {}): a corrupted record or the wrong master secret",
                    self.seq
                ));
            }
            content.to_vec()
        };
        self.seq = self
            .seq
            .checked_add(1)
            .ok_or("the record sequence number wrapped")?;
        Ok(plain)
    }
}

/// How one TLS 1.2 direction's records are protected.
enum Protection {
    /// AES-GCM (`explicit_nonce`: 8 bytes of nonce lead each record) or ChaCha20-Poly1305.
    Aead {
        keys: Keys,
        explicit_nonce: bool,
    },
    Cbc(CbcKeys),
    /// A `NULL` suite: each record is its content and then a MAC of this many bytes, not
    /// checked (that takes the keys, and the content is readable without them).
    Null(usize),
}

impl Protection {
    /// The plaintext of one record; advances the sequence number.
    fn open(&mut self, record: &Record<'_>) -> Result<Vec<u8>, String> {
        let (keys, explicit_nonce) = match self {
            Protection::Cbc(cbc) => return cbc.open(record),
            Protection::Null(mac_len) => {
                let content = record.fragment.len().checked_sub(*mac_len).ok_or_else(|| {
                    format!(
                        "the record's {} bytes are shorter than its {mac_len}-byte MAC",
                        record.fragment.len()
                    )
                })?;
                return Ok(record.fragment.get(..content).unwrap_or_default().to_vec());
            }
            Protection::Aead {
                keys,
                explicit_nonce,
            } => (keys, *explicit_nonce),
        };
        let (nonce, msg) = if explicit_nonce {
            let (Some(explicit), Some(msg)) = (record.fragment.get(..8), record.fragment.get(8..))
            else {
                return Err("the record is too short for its explicit nonce".into());
            };
            let mut nonce = [0u8; 12];
            for (n, b) in nonce.iter_mut().zip(keys.iv.iter().chain(explicit)) {
                *n = *b;
            }
            (Some(nonce), msg)
        } else {
            (keys.xor_nonce(), record.fragment)
        };
        let Some(plain_len) = msg
            .len()
            .checked_sub(keys.cipher.tag_len())
            .and_then(|n| u16::try_from(n).ok())
        else {
            return Err("the record is shorter than its tag".into());
        };
        let mut aad = keys.seq.to_be_bytes().to_vec();
        aad.extend_from_slice(record.header.get(..3).unwrap_or(&[]));
        aad.extend_from_slice(&plain_len.to_be_bytes());
        let Some(data) = nonce.and_then(|n| keys.cipher.open(n, &aad, msg)) else {
            return Err(format!(
                "the tag does not verify (sequence number {}): a corrupted record or the wrong master secret",
                keys.seq
            ));
        };
        keys.advance()?;
        Ok(data)
    }
}

fn hmac(hash: Hash, key: &[u8], parts: &[&[u8]]) -> Option<Vec<u8>> {
    match hash {
        Hash::Sha256 => {
            let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).ok()?;
            for p in parts {
                m.update(p);
            }
            Some(m.finalize().into_bytes().to_vec())
        }
        Hash::Sha384 => {
            let mut m = <Hmac<Sha384> as Mac>::new_from_slice(key).ok()?;
            for p in parts {
                m.update(p);
            }
            Some(m.finalize().into_bytes().to_vec())
        }
    }
}

/// The TLS 1.2 PRF (RFC 5246 section 5): P_hash(secret, label + seed), `len` bytes.
fn prf(hash: Hash, secret: &[u8], label: &[u8], seed: &[u8], len: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(len);
    let mut a = hmac(hash, secret, &[label, seed])?;
    while out.len() < len {
        out.extend(hmac(hash, secret, &[&a, label, seed])?);
        a = hmac(hash, secret, &[&a])?;
    }
    out.truncate(len);
    Some(out)
}

/// HKDF-Expand-Label (RFC 8446 section 7.1) with an empty context.
fn expand_label(hash: Hash, secret: &[u8], label: &str, len: usize) -> Option<Vec<u8>> {
    let full = format!("tls13 {label}");
    let mut info = u16::try_from(len).ok()?.to_be_bytes().to_vec();
    info.push(u8::try_from(full.len()).ok()?);
    info.extend_from_slice(full.as_bytes());
    info.push(0);
    let mut out = vec![0; len];
    match hash {
        Hash::Sha256 => Hkdf::<Sha256>::from_prk(secret)
            .ok()?
            .expand(&info, &mut out)
            .ok()?,
        Hash::Sha384 => Hkdf::<Sha384>::from_prk(secret)
            .ok()?
            .expand(&info, &mut out)
            .ok()?,
    }
    Some(out)
}

/// TLS 1.3 keys from a traffic secret.
fn keys13(suite: Suite, secret: &[u8]) -> Option<Keys> {
    let key = expand_label(suite.hash, secret, "key", suite.kind.key_len())?;
    let iv = expand_label(suite.hash, secret, "iv", 12)?;
    Some(Keys {
        cipher: Cipher::new(suite.kind, &key)?,
        iv,
        seq: 0,
    })
}

fn alert_name(description: u8) -> String {
    let name = match description {
        0 => "close_notify",
        10 => "unexpected_message",
        20 => "bad_record_mac",
        22 => "record_overflow",
        40 => "handshake_failure",
        42 => "bad_certificate",
        43 => "unsupported_certificate",
        44 => "certificate_revoked",
        45 => "certificate_expired",
        46 => "certificate_unknown",
        47 => "illegal_parameter",
        48 => "unknown_ca",
        49 => "access_denied",
        50 => "decode_error",
        51 => "decrypt_error",
        70 => "protocol_version",
        71 => "insufficient_security",
        80 => "internal_error",
        86 => "inappropriate_fallback",
        90 => "user_canceled",
        100 => "no_renegotiation",
        109 => "missing_extension",
        110 => "unsupported_extension",
        112 => "unrecognized_name",
        113 => "bad_certificate_status_response",
        115 => "unknown_psk_identity",
        116 => "certificate_required",
        120 => "no_application_protocol",
        n => return format!("alert {n}"),
    };
    name.into()
}

fn alert_note(which: usize, record: &Record<'_>, alert: &[u8], encrypted: bool) -> String {
    let what = match alert {
        [level, description] => format!(
            "{} alert {}",
            match level {
                1 => "warning",
                2 => "fatal",
                _ => "unknown-level",
            },
            alert_name(*description)
        ),
        _ => format!("an alert of {} bytes", alert.len()),
    };
    format!(
        "{}: {what} ({}record {} at byte {})",
        direction_name(which),
        if encrypted { "encrypted " } else { "" },
        record.index,
        record.start
    )
}

/// Handshake messages carried in the decrypted records of one direction, gathered across
/// records until whole.
#[derive(Default)]
struct HandshakeBuffer {
    pending: Vec<u8>,
}

impl HandshakeBuffer {
    /// Adds bytes and returns the whole messages now complete, as (type, body).
    fn feed(&mut self, bytes: &[u8]) -> Vec<(u8, Vec<u8>)> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut r = Reader::new(&self.pending);
        loop {
            let start = r.at;
            let (Some(kind), Some(len)) = (r.u8(), r.u24()) else {
                r.at = start;
                break;
            };
            let Some(body) = r.take(len) else {
                r.at = start;
                break;
            };
            out.push((kind, body.to_vec()));
        }
        let used = r.at;
        self.pending.drain(..used.min(self.pending.len()));
        out
    }
}

/// The ALPN protocol in an EncryptedExtensions message.
fn encrypted_extensions_alpn(body: &[u8]) -> Option<String> {
    let mut r = Reader::new(body);
    extensions(&mut r)
        .into_iter()
        .find(|(kind, _)| *kind == 16)
        .and_then(|(_, data)| alpn_names(&data).into_iter().next())
}

/// The key log has no secret of kind `wanted` for `client_random`: says so, with how many other
/// sessions it holds (a key log of another capture, or of another client, is the usual cause).
fn no_secrets(wanted: &str, client_random: &[u8], keys: &KeyLog, why: &str) -> DecryptError {
    let others = keys
        .len()
        .saturating_sub(usize::from(keys.get(client_random).is_some()));
    let held = match others {
        0 => "it holds no other session".to_string(),
        1 => "it holds 1 other session".to_string(),
        n => format!("it holds {n} other sessions"),
    };
    let unused = match keys.unused_lines() {
        0 => String::new(),
        n => format!(
            " and {n} {} not used to decrypt (RSA pre-master secrets, other labels)",
            if n == 1 { "line" } else { "lines" }
        ),
    };
    DecryptError::connection(format!(
        "the key log has no {wanted} for this connection's client random {}{why}; {held}{unused}",
        hex(client_random)
    ))
}

/// The TLS 1.2 key block: client and server MAC keys (CBC suites), client and server keys,
/// then client and server fixed IVs (the AEAD suites; CBC in TLS 1.2 sends its IV in each
/// record).
struct KeyBlock {
    block: Vec<u8>,
    kind: Kind,
    mac: Option<MacHash>,
    mac_len: usize,
    key_len: usize,
    iv_len: usize,
    /// RFC 7366: the server agreed to encrypt-then-MAC (only meaningful for CBC suites).
    encrypt_then_mac: bool,
}

impl KeyBlock {
    /// Expands the master secret with the server and client randoms (`seed`).
    fn derive(
        suite: Suite,
        master: &[u8],
        seed: &[u8],
        encrypt_then_mac: bool,
    ) -> Result<KeyBlock, DecryptError> {
        let mac = suite.kind.mac();
        let mac_len = mac.map_or(0, MacHash::len);
        let iv_len = match suite.kind {
            Kind::ChaCha20Poly1305 => 12,
            Kind::Aes128Gcm | Kind::Aes256Gcm | Kind::AesCcm { .. } => 4,
            Kind::Aes128Cbc(_) | Kind::Aes256Cbc(_) => 0,
        };
        let key_len = suite.kind.key_len();
        let total = mac_len
            .saturating_add(key_len)
            .saturating_add(iv_len)
            .saturating_mul(2);
        let block = prf(suite.hash, master, b"key expansion", seed, total)
            .ok_or_else(|| DecryptError::connection("the key block could not be derived"))?;
        Ok(KeyBlock {
            block,
            kind: suite.kind,
            mac,
            mac_len,
            key_len,
            iv_len,
            encrypt_then_mac,
        })
    }

    /// The record protection of direction `which` (0 the client's, 1 the server's); `None`
    /// when the key block is too short or the cipher does not take the key.
    fn protection(&self, which: usize) -> Option<Protection> {
        let (mac_len, key_len, iv_len) = (self.mac_len, self.key_len, self.iv_len);
        let part = |at: usize, len: usize| self.block.get(at..at.saturating_add(len));
        let mac_key = part(mac_len.saturating_mul(which), mac_len);
        let key = part(
            mac_len
                .saturating_mul(2)
                .saturating_add(key_len.saturating_mul(which)),
            key_len,
        );
        let iv = part(
            mac_len
                .saturating_add(key_len)
                .saturating_mul(2)
                .saturating_add(iv_len.saturating_mul(which)),
            iv_len,
        );
        match (self.mac, mac_key, key, iv) {
            (Some(mac), Some(mac_key), Some(key), _) => Some(Protection::Cbc(CbcKeys {
                key: key.to_vec(),
                mac,
                mac_key: mac_key.to_vec(),
                etm: self.encrypt_then_mac,
                seq: 0,
            })),
            (None, _, Some(key), Some(iv)) => {
                Cipher::new(self.kind, key).map(|cipher| Protection::Aead {
                    keys: Keys {
                        cipher,
                        iv: iv.to_vec(),
                        seq: 0,
                    },
                    explicit_nonce: self.kind != Kind::ChaCha20Poly1305,
                })
            }
            _ => None,
        }
    }
}

/// Reads the hellos, finds the secrets and decrypts both directions of one TLS connection
/// (`client` the bytes the client sent, `server` the bytes it received, each as reassembled
/// from TCP).
///
/// An `Err` means nothing could be decrypted: no ClientHello or ServerHello, a version or
/// cipher suite not read here, or no secret in `keys` for the connection's client random. A
/// record that fails later stops only its direction: see [`DirectionPlain::error`].
pub fn decrypt(client: &[u8], server: &[u8], keys: &KeyLog) -> Result<Decrypted, DecryptError> {
    let client_hs = plain_handshake(client);
    let server_hs = plain_handshake(server);
    let hello = super::message(&client_hs, 1)
        .ok_or_else(|| DecryptError::connection("no ClientHello in the client's first records"))?;
    let client_random = hello
        .get(2..34)
        .ok_or_else(|| DecryptError::connection("the ClientHello is cut short"))?;
    let server_hello = super::message(&server_hs, 2)
        .ok_or_else(|| DecryptError::connection("no ServerHello in the server's first records"))?;
    let server_random = server_hello
        .get(2..34)
        .ok_or_else(|| DecryptError::connection("the ServerHello is cut short"))?;
    let (version, suite_id, alpn) = super::server_hello(server_hello)
        .ok_or_else(|| DecryptError::connection("the ServerHello is cut short"))?;
    let tls13 = version == 0x0304;
    if !tls13 && version != 0x0303 {
        return Err(DecryptError::connection(format!(
            "{} is not decrypted (TLS 1.2 and 1.3 are)",
            version_name(version)
        )));
    }
    let suite = suite(suite_id, tls13).ok_or_else(|| {
        DecryptError::connection(format!(
            "the cipher suite {} is not decrypted (AES-GCM, AES-CCM, ChaCha20-Poly1305 and, in TLS 1.2, AES-CBC with HMAC-SHA1/256/384 are)",
            cipher_name(suite_id)
        ))
    })?;
    // RFC 7366: the server agreed to encrypt-then-MAC (only meaningful for CBC suites).
    let encrypt_then_mac = super::hello_has_extension(server_hello, 0x0016);
    let compression = Compression::of(server_hello, tls13)?;
    let wanted = if tls13 {
        "TLS 1.3 secrets (CLIENT_HANDSHAKE_TRAFFIC_SECRET and the others)"
    } else {
        "CLIENT_RANDOM"
    };
    let secrets = keys
        .get(client_random)
        .ok_or_else(|| no_secrets(wanted, client_random, keys, ""))?;
    let mut out = Decrypted {
        version: version_name(version),
        cipher: cipher_name(suite_id),
        alpn,
        directions: Default::default(),
        notes: Vec::new(),
        unencrypted: false,
    };
    if tls13 {
        for (which, bytes) in [client, server].into_iter().enumerate() {
            let (plain, alpn) = direction13(which, bytes, suite, secrets, &mut out.notes);
            out.directions[which] = plain;
            if alpn.is_some() {
                out.alpn = alpn;
            }
        }
    } else {
        let master = secrets.master_secret.as_deref().ok_or_else(|| {
            no_secrets(
                wanted,
                client_random,
                keys,
                " (only TLS 1.3 secrets for it; TLS 1.2 needs the master secret)",
            )
        })?;
        let seed = [server_random, client_random].concat();
        let block = KeyBlock::derive(suite, master, &seed, encrypt_then_mac)?;
        compression.say(&mut out.notes);
        for (which, bytes) in [client, server].into_iter().enumerate() {
            let protection = block
                .protection(which)
                .ok_or_else(|| DecryptError::connection("the key block could not be derived"))?;
            out.directions[which] =
                direction12(which, bytes, protection, compression, &mut out.notes);
        }
    }
    Ok(out)
}

/// The length of the MAC of cipher suite `id` when it encrypts nothing (a `NULL` suite of
/// TLS 1.2 and earlier): its records are their content followed by that MAC.
fn null_mac_len(id: u16) -> Option<usize> {
    Some(match id {
        0x0001 => 16,
        0x0002 | 0x002c..=0x002e | 0xc001 | 0xc006 | 0xc00b | 0xc010 | 0xc015 | 0xc039 => 20,
        0x003b | 0x00b0 | 0x00b4 | 0x00b8 | 0xc03a => 32,
        0x00b1 | 0x00b5 | 0x00b9 | 0xc03b => 48,
        _ => return None,
    })
}

/// Both directions of one TLS connection whose ServerHello chose a suite that encrypts
/// nothing (`TLS_RSA_WITH_NULL_SHA256` and the other `NULL` suites, in SSL 3.0 to TLS 1.2):
/// after ChangeCipherSpec each record is read as sent, without its MAC, and no key log is
/// needed. `None` for any other connection.
pub fn read_unencrypted(client: &[u8], server: &[u8]) -> Option<Decrypted> {
    let server_hs = plain_handshake(server);
    let server_hello = super::message(&server_hs, 2)?;
    let (version, suite_id, alpn) = super::server_hello(server_hello)?;
    if !(0x0300..=0x0303).contains(&version) {
        return None;
    }
    let mac_len = null_mac_len(suite_id)?;
    let mut out = Decrypted {
        version: version_name(version),
        cipher: cipher_name(suite_id),
        alpn,
        directions: Default::default(),
        notes: vec![format!(
            "the cipher suite {} encrypts nothing: each record after ChangeCipherSpec is read as sent, without its {mac_len}-byte MAC, which is not checked",
            cipher_name(suite_id)
        )],
        unencrypted: true,
    };
    let compression = Compression::of(server_hello, false).unwrap_or_else(|e| {
        // Said, and the records read as they are.
        out.notes
            .push(format!("{e}: the records are read as they were sent"));
        Compression::None
    });
    compression.say(&mut out.notes);
    for (which, bytes) in [client, server].into_iter().enumerate() {
        out.directions[which] = direction12(
            which,
            bytes,
            Protection::Null(mac_len),
            compression,
            &mut out.notes,
        );
    }
    Some(out)
}

/// The record compression a TLS 1.2 (or earlier) connection's ServerHello chose.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Compression {
    None,
    /// DEFLATE (RFC 3749): each direction's records after ChangeCipherSpec are one zlib
    /// stream, each record's content flushed to a byte boundary.
    Deflate,
}

/// The most content one record may hold once decompressed (RFC 5246 §6.2.2).
const MAX_PLAIN: usize = 1 << 14;

impl Compression {
    /// The method the ServerHello `hello` chose; an error for one not read here. TLS 1.3 has
    /// no compression.
    fn of(hello: &[u8], tls13: bool) -> Result<Compression, DecryptError> {
        match (tls13, super::hello_compression(hello)) {
            (true, _) | (false, Some(0) | None) => Ok(Compression::None),
            (false, Some(1)) => Ok(Compression::Deflate),
            (false, Some(m)) => Err(DecryptError::connection(format!(
                "the ServerHello chose compression method {m}, which is not read here (none and DEFLATE are)"
            ))),
        }
    }

    fn say(self, notes: &mut Vec<String>) {
        if self == Compression::Deflate {
            notes.push(
                "the records are compressed with DEFLATE (RFC 3749, the ServerHello's compression method 1): each is inflated after it is opened".into(),
            );
        }
    }
}

/// One record's content inflated by its direction's zlib stream `z`, each record flushed to a
/// byte boundary: at most [`MAX_PLAIN`] bytes, as TLS allows, so a compressed record cannot
/// claim more.
fn inflate_record(z: &mut flate2::Decompress, data: &[u8]) -> Result<Vec<u8>, String> {
    let too_long =
        || format!("the record inflates past {MAX_PLAIN} bytes, the most a TLS record holds");
    // One byte past the most a record holds, to tell a record that inflates past it.
    let mut out = Vec::with_capacity(MAX_PLAIN + 1);
    let mut at = 0;
    loop {
        let (read, written) = (z.total_in(), z.total_out());
        let status = z
            .decompress_vec(
                data.get(at..).unwrap_or_default(),
                &mut out,
                flate2::FlushDecompress::Sync,
            )
            .map_err(|e| format!("its DEFLATE data is not valid ({e})"))?;
        at = at.saturating_add(usize::try_from(z.total_in() - read).unwrap_or(usize::MAX));
        if out.len() > MAX_PLAIN {
            return Err(too_long());
        }
        let stuck = z.total_in() == read && z.total_out() == written;
        if at >= data.len() && (out.len() < out.capacity() || stuck) {
            return Ok(out);
        }
        if status == flate2::Status::StreamEnd || stuck {
            return Err(format!(
                "{} bytes of it are left after its DEFLATE data ends",
                data.len().saturating_sub(at)
            ));
        }
    }
}

/// Adds an application-data plaintext to a direction.
fn push_data(plain: &mut DirectionPlain, record: &Record<'_>, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    let start = plain.plaintext.len();
    plain.plaintext.extend_from_slice(data);
    plain.spans.push(PlainSpan {
        plain: Span::new(start, plain.plaintext.len()),
        record: record.span(),
        index: record.index,
    });
}

/// The secret and keys of a TLS 1.3 traffic secret from the key log (`label` names it in the
/// message when it is missing or does not fit the cipher suite).
fn derive13(
    suite: Suite,
    secret: &Option<Vec<u8>>,
    label: &str,
) -> Result<(Vec<u8>, Keys), String> {
    let secret = secret
        .as_ref()
        .ok_or_else(|| format!("no {label} in the key log for this connection"))?;
    if secret.len() != suite.hash.len() {
        return Err(format!(
            "the {label} is {} bytes, not the {} of this cipher suite's hash",
            secret.len(),
            suite.hash.len()
        ));
    }
    let keys = keys13(suite, secret).ok_or_else(|| format!("no keys from the {label}"))?;
    Ok((secret.clone(), keys))
}

/// Where one TLS 1.3 direction stands as its records are read: the keys in use (the handshake
/// traffic secret's, then the application traffic secret's after Finished, then each
/// KeyUpdate's), the handshake messages gathered so far, and what has been decrypted.
struct Direction13<'s> {
    which: usize,
    suite: Suite,
    /// The application traffic secret, and its key log label.
    application: (&'s Option<Vec<u8>>, &'static str),
    /// The secret in use and its keys, or why there are none.
    current: Result<(Vec<u8>, Keys), String>,
    in_handshake: bool,
    buffer: HandshakeBuffer,
    plain: DirectionPlain,
    alpn: Option<String>,
}

impl Direction13<'_> {
    /// Opens an encrypted record with the current keys and moves them on to the next sequence
    /// number: the record's inner content type, and its content without the padding.
    fn open(&mut self, record: &Record<'_>) -> Result<(u8, Vec<u8>), DecryptError> {
        let which = self.which;
        let keys = match &mut self.current {
            Ok((_, keys)) => keys,
            Err(e) => return Err(DecryptError::record(which, record, e.clone())),
        };
        let opened = keys
            .xor_nonce()
            .and_then(|nonce| keys.cipher.open(nonce, record.header, record.fragment));
        let Some(mut inner) = opened else {
            let what = if self.in_handshake {
                "handshake"
            } else {
                "application"
            };
            return Err(DecryptError::record(
                which,
                record,
                format!(
                    "the tag does not verify with the {what} keys (sequence number {}): a corrupted record or the wrong secret",
                    keys.seq
                ),
            ));
        };
        keys.advance()
            .map_err(|e| DecryptError::record(which, record, e))?;
        self.plain.records = self.plain.records.saturating_add(1);
        // TLSInnerPlaintext: content, the real content type, zero padding.
        let Some(kind_at) = inner.iter().rposition(|&b| b != 0) else {
            return Err(DecryptError::record(
                which,
                record,
                "the decrypted record has no content type (all padding)",
            ));
        };
        let inner_kind = inner.get(kind_at).copied().unwrap_or(0);
        inner.truncate(kind_at);
        Ok((inner_kind, inner))
    }

    /// Reads the handshake messages a decrypted record completes: the ALPN protocol from
    /// EncryptedExtensions, and the keys that follow Finished or a KeyUpdate (the last of
    /// them when the record holds several; they take over after the record).
    fn handshake(
        &mut self,
        record: &Record<'_>,
        content: &[u8],
        notes: &mut Vec<String>,
    ) -> Option<Result<(Vec<u8>, Keys), String>> {
        let mut next = None;
        for (kind, body) in self.buffer.feed(content) {
            match kind {
                // EncryptedExtensions: the ALPN protocol the server chose.
                8 => {
                    if let Some(p) = encrypted_extensions_alpn(&body) {
                        self.alpn = Some(p);
                    }
                }
                // Finished: the application traffic secret follows.
                20 if self.in_handshake => {
                    self.in_handshake = false;
                    let (secret, label) = self.application;
                    next = Some(derive13(self.suite, secret, label));
                }
                // KeyUpdate: the next secret from this one.
                24 => {
                    let updated = self.key_update();
                    notes.push(format!(
                        "{}: KeyUpdate in record {} at byte {}",
                        direction_name(self.which),
                        record.index,
                        record.start
                    ));
                    next = Some(updated);
                }
                _ => {}
            }
        }
        next
    }

    /// The secret and keys a KeyUpdate moves to: the next secret from the one in use.
    fn key_update(&self) -> Result<(Vec<u8>, Keys), String> {
        let suite = self.suite;
        let (secret, _) = self.current.as_ref().map_err(Clone::clone)?;
        expand_label(suite.hash, secret, "traffic upd", suite.hash.len())
            .and_then(|s| Some((keys13(suite, &s)?, s)))
            .map(|(k, s)| (s, k))
            .ok_or_else(|| "no keys after a KeyUpdate".to_string())
    }
}

/// One TLS 1.3 direction; also the ALPN protocol from the server's EncryptedExtensions.
fn direction13(
    which: usize,
    bytes: &[u8],
    suite: Suite,
    secrets: &Secrets,
    notes: &mut Vec<String>,
) -> (DirectionPlain, Option<String>) {
    let (handshake, application, hs_label, app_label) = if which == 0 {
        (
            &secrets.client_handshake,
            &secrets.client_traffic,
            "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
            "CLIENT_TRAFFIC_SECRET_0",
        )
    } else {
        (
            &secrets.server_handshake,
            &secrets.server_traffic,
            "SERVER_HANDSHAKE_TRAFFIC_SECRET",
            "SERVER_TRAFFIC_SECRET_0",
        )
    };
    let mut state = Direction13 {
        which,
        suite,
        application: (application, app_label),
        current: derive13(suite, handshake, hs_label),
        in_handshake: true,
        buffer: HandshakeBuffer::default(),
        plain: DirectionPlain::default(),
        alpn: None,
    };
    let mut records = Records::new(bytes);
    for record in records.by_ref() {
        match record.kind {
            23 => {}
            21 => {
                notes.push(alert_note(which, &record, record.fragment, false));
                continue;
            }
            // The hellos and the compatibility ChangeCipherSpec are not encrypted.
            _ => continue,
        }
        let (inner_kind, inner) = match state.open(&record) {
            Ok(opened) => opened,
            Err(e) => {
                state.plain.error = Some(e);
                break;
            }
        };
        let mut next = None;
        match inner_kind {
            23 => push_data(&mut state.plain, &record, &inner),
            21 => notes.push(alert_note(which, &record, &inner, true)),
            22 => next = state.handshake(&record, &inner, notes),
            other => {
                notes.push(format!(
                    "{}: record {} at byte {} has inner content type {other}, skipped",
                    direction_name(which),
                    record.index,
                    record.start
                ));
            }
        }
        if let Some(n) = next {
            state.current = n;
        }
    }
    if let Some(end) = records.end {
        notes.push(format!("{}: {end}", direction_name(which)));
    }
    (state.plain, state.alpn)
}

/// One TLS 1.2 direction: records after its ChangeCipherSpec are encrypted.
fn direction12(
    which: usize,
    bytes: &[u8],
    mut protection: Protection,
    compression: Compression,
    notes: &mut Vec<String>,
) -> DirectionPlain {
    let mut plain = DirectionPlain::default();
    let mut inflater = (compression == Compression::Deflate).then(|| flate2::Decompress::new(true));
    let mut encrypted = false;
    let mut records = Records::new(bytes);
    for record in records.by_ref() {
        if !encrypted {
            match record.kind {
                20 => encrypted = true,
                21 => notes.push(alert_note(which, &record, record.fragment, false)),
                23 => notes.push(format!(
                    "{}: application data before ChangeCipherSpec in record {} at byte {}, skipped",
                    direction_name(which),
                    record.index,
                    record.start
                )),
                _ => {}
            }
            continue;
        }
        if record.kind == 20 {
            notes.push(format!(
                "{}: a second ChangeCipherSpec (renegotiation) in record {} at byte {}; the rest is not decrypted",
                direction_name(which),
                record.index,
                record.start
            ));
            break;
        }
        let opened = protection
            .open(&record)
            .and_then(|data| match &mut inflater {
                Some(z) => inflate_record(z, &data),
                None => Ok(data),
            });
        let data = match opened {
            Ok(data) => data,
            Err(e) => {
                plain.error = Some(DecryptError::record(which, &record, e));
                break;
            }
        };
        plain.records = plain.records.saturating_add(1);
        match record.kind {
            23 => push_data(&mut plain, &record, &data),
            21 => notes.push(alert_note(which, &record, &data, true)),
            // Finished (and a HelloRequest, not followed).
            _ => {}
        }
    }
    if let Some(end) = records.end {
        notes.push(format!("{}: {end}", direction_name(which)));
    }
    plain
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TLS 1.2 record sealed as a CCM suite would seal it: the 4-byte salt and 8-byte explicit
    /// nonce, the additional data of sequence number, header and plaintext length.
    fn ccm_record(kind: Kind, key: &[u8], salt: &[u8], seq: u64, plain: &[u8]) -> Vec<u8> {
        let explicit = [7u8, 6, 5, 4, 3, 2, 1, 0];
        let mut nonce = [0u8; 12];
        nonce[..4].copy_from_slice(salt);
        nonce[4..].copy_from_slice(&explicit);
        let header = [23u8, 3, 3];
        let mut aad = seq.to_be_bytes().to_vec();
        aad.extend_from_slice(&header);
        aad.extend_from_slice(&(plain.len() as u16).to_be_bytes());
        let nonce = GenericArray::from(nonce);
        let sealed = Sealed {
            msg: plain,
            aad: &aad,
        };
        let body = match kind {
            Kind::AesCcm {
                wide: false,
                short_tag: true,
            } => Aes128Ccm8::new_from_slice(key)
                .expect("key")
                .encrypt(&nonce, sealed),
            Kind::AesCcm {
                wide: true,
                short_tag: false,
            } => Aes256Ccm::new_from_slice(key)
                .expect("key")
                .encrypt(&nonce, sealed),
            _ => unreachable!("a CCM kind"),
        }
        .expect("sealed");
        let mut fragment = explicit.to_vec();
        fragment.extend(body);
        fragment
    }

    #[test]
    fn ccm_and_ccm8_records_open_with_their_own_tag_length() {
        for (kind, key_len, tag) in [
            (
                Kind::AesCcm {
                    wide: false,
                    short_tag: true,
                },
                16,
                8,
            ),
            (
                Kind::AesCcm {
                    wide: true,
                    short_tag: false,
                },
                32,
                16,
            ),
        ] {
            let key = vec![0x42u8; key_len];
            let salt = [9u8, 8, 7, 6];
            let plain = b"GET / HTTP/1.1\r\n\r\n";
            let fragment = ccm_record(kind, &key, &salt, 0, plain);
            assert_eq!(fragment.len(), 8 + plain.len() + tag);
            let header = [23u8, 3, 3, 0, fragment.len() as u8];
            let record = Record {
                index: 0,
                start: 0,
                kind: 23,
                header: &header,
                fragment: &fragment,
            };
            let mut protection = Protection::Aead {
                keys: Keys {
                    cipher: Cipher::new(kind, &key).expect("a cipher"),
                    iv: salt.to_vec(),
                    seq: 0,
                },
                explicit_nonce: true,
            };
            assert_eq!(protection.open(&record).expect("opens"), plain);
            // The next record has sequence number 1: the same bytes no longer verify.
            let again = protection.open(&record).expect_err("sequence number 1");
            assert!(again.contains("does not verify"), "{again}");
        }
    }

    const REAL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/capture/real/");

    /// The two directions of the fixture's only TCP stream, and its key log.
    fn fixture(name: &str) -> (Vec<u8>, Vec<u8>, KeyLog) {
        let pcap = std::fs::read(format!("{REAL}{name}.pcap")).expect("fixture pcap");
        let capture = crate::capture::pcap::extract(&pcap, &Default::default()).expect("capture");
        let stream = capture.streams.first().expect("one stream");
        let [c, s] = &stream.directions;
        let text = std::fs::read_to_string(format!("{REAL}{name}.keylog")).expect("key log");
        (
            c.bytes.clone(),
            s.bytes.clone(),
            KeyLog::parse(&text).expect("a key log"),
        )
    }

    /// The bodies of the HTTP responses tshark decrypted (`answers.tsv`, `body_hex` column).
    fn response_bodies(name: &str) -> Vec<Vec<u8>> {
        let text = std::fs::read_to_string(format!("{REAL}{name}.answers.tsv")).expect("answers");
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().expect("header").split('\t').collect();
        let kind = header.iter().position(|h| *h == "kind").expect("kind");
        let body = header
            .iter()
            .position(|h| *h == "body_hex")
            .expect("body_hex");
        lines
            .map(|l| l.split('\t').collect::<Vec<_>>())
            .filter(|f| f.get(kind).is_some_and(|k| k.ends_with("response")))
            .filter_map(|f| f.get(body).filter(|b| !b.is_empty()).map(|b| unhex(b)))
            .collect()
    }

    fn unhex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
            .collect()
    }

    fn contains(haystack: &[u8], needle: &[u8]) -> bool {
        haystack.windows(needle.len()).any(|w| w == needle)
    }

    /// Every plaintext byte is traced to one record, in order, without gaps.
    fn assert_spans_cover(d: &DirectionPlain, bytes: &[u8]) {
        let mut at = 0;
        for s in &d.spans {
            assert_eq!(s.plain.start, at);
            assert!(s.plain.end > s.plain.start);
            assert!(s.record.end <= bytes.len());
            assert_eq!(bytes[s.record.start], 23, "an application-data record");
            // The ciphertext is the plaintext plus at least a tag.
            assert!(s.record.len() >= s.plain.len() + 5 + TAG);
            at = s.plain.end;
        }
        assert_eq!(at, d.plaintext.len());
    }

    fn check_http1(name: &str, version: &str, cipher: &str) -> Decrypted {
        let (c, s, keys) = fixture(name);
        let d = decrypt(&c, &s, &keys).expect("decrypted");
        assert_eq!(d.version, version);
        assert_eq!(d.cipher, cipher);
        assert_eq!(d.alpn.as_deref(), Some("http/1.1"));
        assert_eq!(
            d.errors().count(),
            0,
            "{:?}",
            d.errors().collect::<Vec<_>>()
        );
        let [client, server] = &d.directions;
        assert!(client
            .plaintext
            .starts_with(b"GET /api/users/42 HTTP/1.1\r\n"));
        assert!(contains(
            &client.plaintext,
            b"GET /api/iot/metrics HTTP/1.1\r\n"
        ));
        assert!(
            server.plaintext.starts_with(b"HTTP/1.0 200")
                || server.plaintext.starts_with(b"HTTP/1.1 200")
        );
        let bodies = response_bodies(name);
        assert_eq!(bodies.len(), 2);
        for body in &bodies {
            assert!(
                contains(&server.plaintext, body),
                "a response body tshark decrypted"
            );
        }
        assert_spans_cover(client, &c);
        assert_spans_cover(server, &s);
        // A body byte maps back to the record, which maps to capture frames.
        let at = server.plaintext.len() - 1;
        let record = server.record_span(Span::new(at, at + 1)).expect("a record");
        assert!(record.end <= s.len());
        assert!(server
            .record_span(Span::new(
                server.plaintext.len(),
                server.plaintext.len() + 1
            ))
            .is_none());
        d
    }

    #[test]
    fn tls13_aes256_gcm_http1_decrypts_like_tshark() {
        let d = check_http1("tls13-http1", "TLS 1.3", "TLS_AES_256_GCM_SHA384");
        // Encrypted handshake (EncryptedExtensions … Finished, session tickets) and data.
        assert!(d.directions.iter().all(|p| p.records >= 3));
        assert!(
            d.notes.iter().any(|n| n.contains("close_notify")),
            "{:?}",
            d.notes
        );
    }

    #[test]
    fn tls12_ecdhe_aes256_gcm_http1_decrypts_like_tshark() {
        check_http1(
            "tls12-http1",
            "TLS 1.2",
            "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        );
    }

    #[test]
    fn tls13_h2_starts_with_the_preface_and_gives_alpn_h2() {
        let (c, s, keys) = fixture("tls13-h2");
        let d = decrypt(&c, &s, &keys).expect("decrypted");
        assert_eq!(d.version, "TLS 1.3");
        assert_eq!(d.alpn.as_deref(), Some("h2"));
        assert!(d.directions[0]
            .plaintext
            .starts_with(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
        assert_eq!(
            d.errors().count(),
            0,
            "{:?}",
            d.errors().collect::<Vec<_>>()
        );
        // The response bodies are in HTTP/2 DATA frames of the server's plaintext.
        for body in response_bodies("tls13-h2") {
            assert!(contains(&d.directions[1].plaintext, &body));
        }
        assert!(
            d.notes.iter().any(|n| n.contains("decode_error")),
            "{:?}",
            d.notes
        );
        assert_spans_cover(&d.directions[0], &c);
    }

    #[test]
    fn tls13_chacha20_with_a_key_update_decrypts_like_tshark() {
        // openssl s_client sent a KeyUpdate (update_requested) between its two lines.
        let (c, s, keys) = fixture("tls13-chacha-keyupdate");
        let d = decrypt(&c, &s, &keys).expect("decrypted");
        assert_eq!(d.version, "TLS 1.3");
        assert_eq!(d.cipher, "TLS_CHACHA20_POLY1305_SHA256");
        assert_eq!(
            d.errors().count(),
            0,
            "{:?}",
            d.errors().collect::<Vec<_>>()
        );
        // tshark: frames 12 and 17 (client), 13 (server).
        assert_eq!(
            d.directions[0].plaintext,
            b"first line\nafter the key update\n"
        );
        assert_eq!(d.directions[1].plaintext, b"hello from the server\n");
        assert!(
            d.notes
                .iter()
                .any(|n| n.starts_with("client→server: KeyUpdate")),
            "{:?}",
            d.notes
        );
        assert_eq!(d.directions[0].spans.len(), 2);
        assert_spans_cover(&d.directions[0], &c);
    }

    #[test]
    fn tls12_ecdhe_chacha20_decrypts_like_tshark() {
        let (c, s, keys) = fixture("tls12-chacha");
        let d = decrypt(&c, &s, &keys).expect("decrypted");
        assert_eq!(d.version, "TLS 1.2");
        assert_eq!(d.cipher, "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256");
        assert_eq!(
            d.errors().count(),
            0,
            "{:?}",
            d.errors().collect::<Vec<_>>()
        );
        assert_eq!(d.directions[0].plaintext, b"first line\nsecond line\n");
        assert_eq!(d.directions[1].plaintext, b"hello from the server\n");
        assert_spans_cover(&d.directions[1], &s);
    }

    #[test]
    fn aes128_gcm_in_tls13_and_tls12_decrypts_like_tshark() {
        for (name, version, cipher) in [
            ("tls13-aes128", "TLS 1.3", "TLS_AES_128_GCM_SHA256"),
            (
                "tls12-aes128",
                "TLS 1.2",
                "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
            ),
        ] {
            let (c, s, keys) = fixture(name);
            let d = decrypt(&c, &s, &keys).expect("decrypted");
            assert_eq!((d.version.as_str(), d.cipher.as_str()), (version, cipher));
            assert_eq!(
                d.errors().count(),
                0,
                "{name}: {:?}",
                d.errors().collect::<Vec<_>>()
            );
            assert_eq!(d.directions[0].plaintext, b"first line\n", "{name}");
            assert_eq!(
                d.directions[1].plaintext, b"hello from the server\n",
                "{name}"
            );
        }
    }

    #[test]
    fn a_pcapng_with_injected_secrets_decrypts_by_itself() {
        // `editcap --inject-secrets tls,tls13-http1.keylog tls13-http1.pcap tls13-http1-dsb.pcapng`
        let file = std::fs::read(format!("{REAL}tls13-http1-dsb.pcapng")).expect("fixture");
        let capture = crate::capture::pcap::extract(&file, &Default::default()).expect("capture");
        assert_eq!(capture.tls_secrets.len(), 1);
        let keys = capture.tls_key_log().expect("a key log");
        let (_, _, from_file) = fixture("tls13-http1");
        assert_eq!(keys, from_file);
        let [c, s] = &capture.streams.first().expect("a stream").directions;
        let d = decrypt(&c.bytes, &s.bytes, &keys).expect("decrypted");
        assert!(d.directions[0]
            .plaintext
            .starts_with(b"GET /api/users/42 HTTP/1.1\r\n"));
        // A capture without the block has no secrets.
        let (_, _, _) = fixture("tls12-http1");
        let pcap = std::fs::read(format!("{REAL}tls12-http1.pcap")).expect("fixture");
        let plain = crate::capture::pcap::extract(&pcap, &Default::default()).expect("capture");
        assert!(plain.tls_secrets.is_empty());
        assert!(plain.tls_key_log().expect("empty").is_empty());
    }

    #[test]
    fn a_corrupted_record_names_itself_and_keeps_what_came_before() {
        for name in ["tls13-http1", "tls12-http1"] {
            let (c, mut s, keys) = fixture(name);
            let whole = decrypt(&c, &s, &keys).expect("decrypted");
            let last = *whole.directions[1].spans.last().expect("spans");
            s[last.record.start + 10] ^= 1;
            let d = decrypt(&c, &s, &keys).expect("decrypted up to the record");
            let server = &d.directions[1];
            let e = server.error.as_ref().expect("an error");
            assert_eq!(
                (e.direction, e.record, e.offset),
                (Some(1), Some(last.index), Some(last.record.start))
            );
            let text = e.to_string();
            assert!(
                text.starts_with(&format!(
                    "server→client record {} (byte {} of the direction): the tag does not verify",
                    last.index, last.record.start
                )),
                "{text}"
            );
            assert_eq!(
                server.plaintext,
                whole.directions[1].plaintext[..last.plain.start]
            );
            assert_eq!(d.directions[0], whole.directions[0]);
        }
    }

    /// A key log of two sessions that are not in the `real` fixtures, and one RSA line.
    fn other_for_12() -> KeyLog {
        KeyLog::parse(&format!(
            "CLIENT_RANDOM {} {m}\nCLIENT_RANDOM {} {m}\nRSA 0102 {m}\n",
            "01".repeat(32),
            "02".repeat(32),
            m = "ab".repeat(48)
        ))
        .expect("a key log")
    }

    #[test]
    fn a_key_log_without_the_client_random_says_so() {
        let (c, s, _) = fixture("tls13-http1");
        let (_, _, other) = fixture("tls12-http1");
        let e = decrypt(&c, &s, &other).expect_err("no key");
        assert!(
            e.to_string()
                .starts_with("the key log has no TLS 1.3 secrets (CLIENT_HANDSHAKE_TRAFFIC_SECRET and the others) for this connection's client random 17d2fe969f448f7d27c1f548"),
            "{e}"
        );
        assert!(e.to_string().ends_with("; it holds 1 other session"), "{e}");
        let e = decrypt(&c, &s, &KeyLog::default()).expect_err("no key");
        assert!(
            e.to_string().ends_with("; it holds no other session"),
            "{e}"
        );
        // A TLS 1.2 connection asks for its CLIENT_RANDOM line.
        let (c12, s12, _) = fixture("tls12-http1");
        let e = decrypt(&c12, &s12, &other_for_12()).expect_err("no key");
        assert!(
            e.to_string().starts_with(
                "the key log has no CLIENT_RANDOM for this connection's client random "
            ),
            "{e}"
        );
        // A TLS 1.3 log missing the application secret stops at the first data record.
        let (c, s, keys) = fixture("tls13-http1");
        let text = std::fs::read_to_string(format!("{REAL}tls13-http1.keylog")).expect("log");
        let partial: String = text
            .lines()
            .filter(|l| !l.starts_with("SERVER_TRAFFIC"))
            .map(|l| format!("{l}\n"))
            .collect();
        let d = decrypt(&c, &s, &KeyLog::parse(&partial).expect("log")).expect("handshake");
        let e = d.directions[1].error.as_ref().expect("stopped");
        assert!(e.message.contains("no SERVER_TRAFFIC_SECRET_0"), "{e}");
        assert!(d.directions[1].plaintext.is_empty());
        assert!(d.directions[0].error.is_none());
        let _ = keys;
    }

    #[test]
    fn cbc_padding_is_checked_whole_and_with_room_for_the_mac() {
        assert_eq!(padding_ok(&[9, 0], 0), (true, 1));
        assert_eq!(padding_ok(&[9, 2, 2, 2], 0), (true, 3));
        assert!(!padding_ok(&[9, 3, 2, 2], 0).0, "a byte that differs");
        assert!(!padding_ok(&[2, 2], 0).0, "padding longer than the record");
        assert!(!padding_ok(&[], 0).0);
        // MAC-then-encrypt: the MAC must fit before the padding.
        assert!(padding_ok(&[[7; 20].as_slice(), &[1, 1]].concat(), 20).0);
        assert!(!padding_ok(&[[7; 19].as_slice(), &[1, 1]].concat(), 20).0);
        // 256 bytes of padding (the most TLS allows) are all checked.
        let mut long = vec![0xff; 256];
        assert!(padding_ok(&long, 0).0);
        long[0] = 0xfe;
        assert!(!padding_ok(&long, 0).0);
        // AES-CBC wants whole blocks after the IV.
        assert!(cbc_decrypt(&[0; 16], &[0; 31]).is_none());
        assert!(cbc_decrypt(&[0; 16], &[0; 16]).is_none());
        assert!(cbc_decrypt(&[0; 24], &[0; 32]).is_none());
        assert_eq!(cbc_decrypt(&[0; 32], &[0; 48]).map(|p| p.len()), Some(32));
    }

    #[test]
    fn cut_and_hostile_input_does_not_panic() {
        let (c, s, keys) = fixture("tls13-h2");
        for end in (0..s.len()).step_by(97) {
            let _ = decrypt(&c, &s[..end], &keys);
            let _ = decrypt(&c[..end.min(c.len())], &s, &keys);
        }
        let mut noisy = s.clone();
        for i in (0..noisy.len()).step_by(13) {
            noisy[i] = noisy[i].wrapping_mul(31).wrapping_add(7);
        }
        let _ = decrypt(&c, &noisy, &keys);
        assert!(decrypt(b"", b"", &keys).is_err());
        assert!(decrypt(b"GET / HTTP/1.1\r\n\r\n", b"", &keys).is_err());
    }
}
