//! NSS key logs: the text file browsers, curl and other OpenSSL, BoringSSL or NSS clients write
//! when `SSLKEYLOGFILE` is set, and that Wireshark reads.
//!
//! Each line is `LABEL <client random, 64 hex digits> <secret, hex>`; `#` comments and blank
//! lines are skipped. The labels read are `CLIENT_RANDOM` (the TLS 1.2 master secret) and the
//! TLS 1.3 secrets `CLIENT_HANDSHAKE_TRAFFIC_SECRET`, `SERVER_HANDSHAKE_TRAFFIC_SECRET`,
//! `CLIENT_TRAFFIC_SECRET_0`, `SERVER_TRAFFIC_SECRET_0`, `EXPORTER_SECRET` (and
//! `CLIENT_EARLY_TRAFFIC_SECRET`, `EARLY_EXPORTER_SECRET`, kept but not used to decrypt). Lines
//! with another label (`RSA` pre-master secrets, labels of newer tools) are well formed but not
//! used: they are counted, not errors. A line that is not `LABEL HEX HEX` is an error naming its
//! line number.

use std::collections::HashMap;

/// Most bytes of one secret (the largest hash in use is SHA-384, 48 bytes; room to spare).
const MAX_SECRET: usize = 64;

/// The secrets logged for one TLS connection (one client random).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Secrets {
    /// `CLIENT_RANDOM`: the TLS 1.2 (and earlier) master secret, 48 bytes.
    pub master_secret: Option<Vec<u8>>,
    /// `CLIENT_HANDSHAKE_TRAFFIC_SECRET` (TLS 1.3).
    pub client_handshake: Option<Vec<u8>>,
    /// `SERVER_HANDSHAKE_TRAFFIC_SECRET` (TLS 1.3).
    pub server_handshake: Option<Vec<u8>>,
    /// `CLIENT_TRAFFIC_SECRET_0` (TLS 1.3).
    pub client_traffic: Option<Vec<u8>>,
    /// `SERVER_TRAFFIC_SECRET_0` (TLS 1.3).
    pub server_traffic: Option<Vec<u8>>,
    /// `EXPORTER_SECRET` (TLS 1.3; not needed to decrypt).
    pub exporter: Option<Vec<u8>>,
    /// `CLIENT_EARLY_TRAFFIC_SECRET` (TLS 1.3 0-RTT; kept, not used to decrypt).
    pub client_early: Option<Vec<u8>>,
    /// `EARLY_EXPORTER_SECRET` (TLS 1.3 0-RTT).
    pub early_exporter: Option<Vec<u8>>,
}

/// A parsed key log: the secrets of each connection, keyed by its client random.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyLog {
    entries: HashMap<[u8; 32], Secrets>,
    unused_lines: usize,
}

/// Bytes of a hex string (either case), or `None` when it is not an even run of hex digits.
fn hex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    let digit = |c: u8| {
        char::from(c)
            .to_digit(16)
            .and_then(|d| u8::try_from(d).ok())
    };
    text.as_bytes()
        .chunks(2)
        .map(|pair| match pair {
            [hi, lo] => Some(digit(*hi)? << 4 | digit(*lo)?),
            _ => None,
        })
        .collect()
}

impl KeyLog {
    /// Parses NSS key log text. Comments (`#`) and blank lines are skipped; a malformed line is
    /// an error naming its line number (counted from 1).
    ///
    /// ```
    /// use wirelens::capture::tls::KeyLog;
    ///
    /// let random = "11".repeat(32);
    /// let log = KeyLog::parse(&format!("# curl\nCLIENT_RANDOM {random} {}\n", "ab".repeat(48)))
    ///     .expect("a key log");
    /// assert_eq!(log.len(), 1);
    /// assert!(log.get(&[0x11; 32]).and_then(|s| s.master_secret.as_ref()).is_some());
    /// let err = KeyLog::parse("\nCLIENT_RANDOM zz 00\n").expect_err("not hex");
    /// assert_eq!(err.line, 2);
    /// assert!(err.to_string().starts_with("key log line 2:"), "{err}");
    /// ```
    pub fn parse(text: &str) -> Result<KeyLog, KeyLogError> {
        let mut log = KeyLog::default();
        for (n, line) in text.lines().enumerate() {
            let number = n.saturating_add(1);
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            log.add_line(line).map_err(|message| KeyLogError {
                block: None,
                line: number,
                message,
            })?;
        }
        Ok(log)
    }

    fn add_line(&mut self, line: &str) -> Result<(), String> {
        let mut fields = line.split_whitespace();
        let (Some(label), Some(random), Some(secret), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err("expected `LABEL CLIENT_RANDOM SECRET` (three fields)".into());
        };
        let valid_label = label
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        if !valid_label {
            return Err(format!("`{label}` is not a key log label"));
        }
        let random_bytes =
            hex(random).ok_or_else(|| format!("{label}: the second field is not hex"))?;
        let secret = hex(secret).ok_or_else(|| format!("{label}: the secret is not hex"))?;
        let slot: fn(&mut Secrets) -> &mut Option<Vec<u8>> = match label {
            "CLIENT_RANDOM" => |s: &mut Secrets| &mut s.master_secret,
            "CLIENT_HANDSHAKE_TRAFFIC_SECRET" => |s: &mut Secrets| &mut s.client_handshake,
            "SERVER_HANDSHAKE_TRAFFIC_SECRET" => |s: &mut Secrets| &mut s.server_handshake,
            "CLIENT_TRAFFIC_SECRET_0" => |s: &mut Secrets| &mut s.client_traffic,
            "SERVER_TRAFFIC_SECRET_0" => |s: &mut Secrets| &mut s.server_traffic,
            "EXPORTER_SECRET" => |s: &mut Secrets| &mut s.exporter,
            "CLIENT_EARLY_TRAFFIC_SECRET" => |s: &mut Secrets| &mut s.client_early,
            "EARLY_EXPORTER_SECRET" => |s: &mut Secrets| &mut s.early_exporter,
            _ => {
                // `RSA` lines (keyed by an encrypted pre-master prefix) and labels this
                // version does not use.
                self.unused_lines = self.unused_lines.saturating_add(1);
                return Ok(());
            }
        };
        let random: [u8; 32] = random_bytes.as_slice().try_into().map_err(|_| {
            format!(
                "{label}: the client random is {} bytes, not 32",
                random_bytes.len()
            )
        })?;
        if secret.is_empty() || secret.len() > MAX_SECRET {
            return Err(format!(
                "{label}: a secret of {} bytes (expected 1 to {MAX_SECRET})",
                secret.len()
            ));
        }
        if label == "CLIENT_RANDOM" && secret.len() != 48 {
            return Err(format!(
                "CLIENT_RANDOM: the master secret is {} bytes, not 48",
                secret.len()
            ));
        }
        *slot(self.entries.entry(random).or_default()) = Some(secret);
        Ok(())
    }

    /// The secrets logged for the connection with this client random.
    pub fn get(&self, client_random: &[u8]) -> Option<&Secrets> {
        let key: [u8; 32] = client_random.try_into().ok()?;
        self.entries.get(&key)
    }

    /// Connections (client randoms) with at least one secret.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no connection has a secret.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Well-formed lines with a label that is not used to decrypt (`RSA`, newer labels).
    pub fn unused_lines(&self) -> usize {
        self.unused_lines
    }

    /// Adds the secrets of `other` (another key log file, or another pcapng Decryption Secrets
    /// Block); a secret logged in both is taken from `other`.
    pub fn merge(&mut self, other: KeyLog) {
        for (random, secrets) in other.entries {
            let mine = self.entries.entry(random).or_default();
            let take = |a: &mut Option<Vec<u8>>, b: Option<Vec<u8>>| {
                if b.is_some() {
                    *a = b;
                }
            };
            take(&mut mine.master_secret, secrets.master_secret);
            take(&mut mine.client_handshake, secrets.client_handshake);
            take(&mut mine.server_handshake, secrets.server_handshake);
            take(&mut mine.client_traffic, secrets.client_traffic);
            take(&mut mine.server_traffic, secrets.server_traffic);
            take(&mut mine.exporter, secrets.exporter);
            take(&mut mine.client_early, secrets.client_early);
            take(&mut mine.early_exporter, secrets.early_exporter);
        }
        self.unused_lines = self.unused_lines.saturating_add(other.unused_lines);
    }
}

/// A key log line [`KeyLog::parse`] could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyLogError {
    /// The pcapng Decryption Secrets Block it came from (from 1), when it came from a capture.
    pub block: Option<usize>,
    /// The line (from 1).
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

impl std::fmt::Display for KeyLogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(block) = self.block {
            write!(f, "decryption secrets block {block}: ")?;
        }
        write!(f, "key log line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for KeyLogError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_labels_are_read_by_client_random() {
        let r1 = "0a".repeat(32);
        let r2 = "0B".repeat(32);
        let text = format!(
            "# a comment\n\n\
             CLIENT_HANDSHAKE_TRAFFIC_SECRET {r1} {s}\r\n\
             SERVER_HANDSHAKE_TRAFFIC_SECRET {r1} {s}\n\
             CLIENT_TRAFFIC_SECRET_0 {r1} {s}\n\
             SERVER_TRAFFIC_SECRET_0 {r1} {s}\n\
             EXPORTER_SECRET {r1} {s}\n\
             CLIENT_RANDOM {r2} {m}\n\
             RSA 0102030405060708 {m}\n",
            s = "cd".repeat(32),
            m = "ef".repeat(48)
        );
        let log = KeyLog::parse(&text).expect("a key log");
        assert_eq!(log.len(), 2);
        assert_eq!(log.unused_lines(), 1);
        let a = log.get(&[0x0a; 32]).expect("first connection");
        assert_eq!(a.client_handshake.as_deref(), Some(&[0xcd; 32][..]));
        assert!(a.server_handshake.is_some() && a.client_traffic.is_some());
        assert!(a.server_traffic.is_some() && a.exporter.is_some());
        assert!(a.master_secret.is_none());
        let b = log.get(&[0x0b; 32]).expect("second connection");
        assert_eq!(b.master_secret.as_deref(), Some(&[0xef; 48][..]));
        assert!(log.get(&[0; 32]).is_none());
        assert!(log.get(&[0; 5]).is_none());
    }

    #[test]
    fn malformed_lines_name_their_number() {
        let r = "00".repeat(32);
        for (text, wanted) in [
            (format!("CLIENT_RANDOM {r}"), "key log line 1: expected"),
            (
                format!("\n\nCLIENT_RANDOM {r} abc"),
                "key log line 3: CLIENT_RANDOM: the secret is not hex",
            ),
            (
                "# x\nCLIENT_RANDOM 0011 00".to_string(),
                "key log line 2: CLIENT_RANDOM: the client random is 2 bytes",
            ),
            (
                format!("CLIENT_RANDOM {r} 0011"),
                "key log line 1: CLIENT_RANDOM: the master secret is 2 bytes",
            ),
            (format!("lower {r} 00"), "key log line 1: `lower` is not"),
            (
                format!("CLIENT_RANDOM {r} 00 extra"),
                "key log line 1: expected",
            ),
        ] {
            let err = KeyLog::parse(&text).expect_err("malformed");
            assert!(err.to_string().starts_with(wanted), "{err}");
        }
    }

    #[test]
    fn key_logs_merge() {
        let r = "01".repeat(32);
        let mut a =
            KeyLog::parse(&format!("CLIENT_TRAFFIC_SECRET_0 {r} {}", "aa".repeat(32))).expect("a");
        let b =
            KeyLog::parse(&format!("SERVER_TRAFFIC_SECRET_0 {r} {}", "bb".repeat(32))).expect("b");
        a.merge(b);
        let s = a.get(&[1; 32]).expect("merged");
        assert!(s.client_traffic.is_some() && s.server_traffic.is_some());
    }
}
