//! Pasted request snippets: DevTools' "Copy as cURL" (bash and cmd), "Copy as fetch" / "Copy
//! as Node.js fetch", Python `requests` code (`snippet/python.rs`) and HTTPie commands
//! (`snippet/httpie.rs`) become the request they make, one payload holding its body.
//!
//! cURL (bash): words in `'…'`, `"…"` or `$'…'` (ANSI-C escapes: `\xHH` is that byte, `\uHHHH`
//! its UTF-8, `\n`, `\t`, `\\`, `\'`…), `\` line continuations. cURL (cmd): `^"…^"` words with `^`
//! escaping the next character (`^` before two line breaks is one line break, before one it
//! continues the line), then the C runtime's `\"` and `\\`. Options read: `-X`/`--request`,
//! `-H`/`--header`, `--url`, `--data-raw`, `--data-binary`, `--data`/`-d`, `--data-ascii`,
//! `--data-urlencode` (several are joined with `&`, as curl does), `-b`/`--cookie`; flags such as
//! `--compressed`, `-k`, `-L`, `-s` change nothing in the body. `@file` bodies (outside
//! `--data-raw`) are in a file the snippet does not hold: the payload is empty, with a warning
//! and marked cut ([`Payload::cut`]).
//!
//! fetch: `fetch("url", { "headers": {…}, "body": "…", "method": "POST" })`; strings are JS
//! literals (`"…"`, `'…'`, or `` `…` `` without `${}`) with `\xHH`, `\uHHHH`, `\u{…}`, `\n`…
//! escapes. A body of a binary Content-Type whose characters are all below U+0100 is read as one
//! byte per character (how a binary body appears as a JS string); other text is UTF-8.
//!
//! Layers: `cURL command` (detail `POST https://… (bash)`) or `fetch call`. Meta: `direction =
//! request`, `method`, `url`, `snippet`, each header as HTTP payloads have them, `cookie` from
//! `-b`, `body-file` for `@file`.

use super::har;
use super::payload::{Layer, Payload};
use crate::model::Span;

/// curl's short options that take a value, which may be attached (`-XPUT`).
mod httpie;
mod python;

const SHORT_WITH_VALUE: &[&str] = &[
    "-X", "-H", "-d", "-b", "-u", "-A", "-e", "-o", "-x", "-m", "-T", "-F", "-c", "-D", "-E", "-K",
    "-r", "-U", "-w", "-y", "-Y", "-z",
];

/// Other curl options that take a value the request does not depend on (output, TLS, proxy,
/// timing, tracing): the value is skipped with them, never taken for the URL.
const TAKES_VALUE: &[&str] = &[
    "-c",
    "--cookie-jar",
    "-D",
    "--dump-header",
    "--trace",
    "--trace-ascii",
    "--stderr",
    "--cacert",
    "--capath",
    "-E",
    "--cert",
    "--key",
    "--cert-type",
    "--key-type",
    "--ciphers",
    "--tls-max",
    "--limit-rate",
    "--retry",
    "--retry-delay",
    "--retry-max-time",
    "-y",
    "--speed-time",
    "-Y",
    "--speed-limit",
    "-z",
    "--time-cond",
    "--connect-to",
    "--interface",
    "--local-port",
    "-K",
    "--config",
    "--netrc-file",
    "-U",
    "--proxy-user",
    "--unix-socket",
    "--abstract-unix-socket",
    "--max-filesize",
    "--max-redirs",
    "--keepalive-time",
    "--dns-servers",
    "--happy-eyeballs-timeout-ms",
    "-r",
    "--range",
    "--oauth2-bearer",
    "--expect100-timeout",
];

/// Most nesting of objects in a fetch call's options.
const MAX_DEPTH: usize = 16;

/// The request a pasted snippet makes, or `None` when `bytes` is not a cURL command or a fetch
/// call.
pub(crate) fn parse(bytes: &[u8]) -> Option<Vec<Payload>> {
    // Shell comment lines before the command (`# from issue 328`) are not part of it.
    let mut start = bytes.iter().position(|c| !c.is_ascii_whitespace())?;
    while bytes.get(start) == Some(&b'#') {
        let line_end = start + bytes.get(start..)?.iter().position(|&c| c == b'\n')?;
        start = line_end
            + bytes
                .get(line_end..)?
                .iter()
                .position(|c| !c.is_ascii_whitespace())?;
    }
    let text = bytes.get(start..)?;
    let request = if starts_with_word(text, b"curl") || starts_with_word(text, b"curl.exe") {
        curl(text)?
    } else if starts_with_word(text, b"http") || starts_with_word(text, b"https") {
        httpie::httpie(text)?
    } else if text.starts_with(b"import requests") || text.starts_with(b"from ") {
        python::requests(std::str::from_utf8(text).ok()?)?
    } else {
        fetch(std::str::from_utf8(text).ok()?)?
    };
    Some(vec![request.payload(Span::new(start, bytes.len()))])
}

/// `key=value` of a form or a query, each part form-encoded ([`har::form_encode`]).
fn form_pair(key: &str, value: &str) -> String {
    format!("{}={}", har::form_encode(key), har::form_encode(value))
}

fn starts_with_word(text: &[u8], word: &[u8]) -> bool {
    text.starts_with(word)
        && text
            .get(word.len())
            .is_some_and(|c| c.is_ascii_whitespace() || *c == b'^' || *c == b'\\')
}

/// A request read from a snippet.
#[derive(Debug, Default)]
struct Request {
    kind: &'static str,
    shell: &'static str,
    method: Option<String>,
    url: Option<String>,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
    /// The body text as a string (fetch), turned into bytes by its Content-Type.
    body_text: Option<String>,
    cookie: Option<String>,
    body_file: Option<String>,
    warnings: Vec<String>,
}

impl Request {
    fn content_type(&self) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.as_str())
    }

    fn payload(self, span: Span) -> Payload {
        let has_body = self.body.is_some() || self.body_text.is_some() || self.body_file.is_some();
        let method = self
            .method
            .clone()
            .unwrap_or_else(|| if has_body { "POST" } else { "GET" }.to_string());
        let url = self.url.clone().unwrap_or_default();
        let mut content_type = self.content_type().map(str::to_string);
        if content_type.is_none() && has_body && self.kind == "cURL command" {
            // What curl sends for -d and friends without a Content-Type header.
            content_type = Some("application/x-www-form-urlencoded".to_string());
        }
        let ct = content_type.clone().unwrap_or_default();
        let defaulted = self.content_type().is_none() && content_type.is_some();
        let mut notes = Vec::new();
        let bytes = match (self.body, &self.body_text) {
            (Some(b), _) => b,
            (None, Some(t)) => {
                let (b, how) = har::text_bytes(t, &ct);
                if b.len() != t.len() {
                    // Characters below U+0100 read as bytes: fetch itself would send them UTF-8.
                    notes.push(format!(
                        "body: {how}; run as it is, fetch would send these characters UTF-8 encoded"
                    ));
                }
                b.into_owned()
            }
            (None, None) => Vec::new(),
        };
        let mut meta = crate::capture::Meta::from([
            ("direction", "request"),
            ("method", method.as_str()),
            ("url", url.as_str()),
            ("snippet", &format!("{} ({})", self.kind, self.shell)),
        ]);
        meta.extend(self.headers.iter().cloned());
        if let (true, Some(ct)) = (defaulted, &content_type) {
            // The header curl adds: the body is what it says (form data is text).
            meta.push(("Content-Type", ct.clone()));
        }
        if let Some(c) = &self.cookie {
            meta.push(("cookie", c.clone()));
        }
        if let Some(f) = &self.body_file {
            meta.push(("body-file", f.clone()));
            meta.push((
                "warning",
                format!("the body is in the file {f:?}, which the snippet does not hold"),
            ));
        }
        for w in self.warnings {
            meta.push(("warning", w));
        }
        let mut detail = format!("{method} {url} ({})", self.shell);
        if let Some(ct) = &content_type {
            detail.push_str(&format!("; Content-Type: {ct}"));
        }
        for n in notes {
            detail.push_str(&format!("; {n}"));
        }
        Payload {
            message: None,
            avro: None,
            bytes: bytes.into(),
            layers: vec![Layer {
                name: self.kind.to_string(),
                detail,
                span,
            }],
            hint: content_type
                .as_deref()
                .and_then(super::media::hint_for_media_type),
            meta,
            cut: self
                .body_file
                .as_ref()
                .map(|f| format!("the body is in the file {f:?}, which the snippet does not hold")),
            protocol: None,
        }
    }
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A cURL command line (bash or cmd quoting) read as the request it sends, or `None` when it
/// names no URL.
fn curl(text: &[u8]) -> Option<Request> {
    let cmd = text.windows(2).any(|w| w == b"^\"") || text.windows(3).any(|w| w == b" ^\n");
    let (words, stdin) = if cmd {
        (cmd_words(text), None)
    } else {
        bash_words(text)
    };
    let mut command = CurlCommand {
        req: Request {
            kind: "cURL command",
            shell: if cmd { "cmd" } else { "bash" },
            ..Request::default()
        },
        stdin,
        data: Vec::new(),
        json: false,
        head: false,
        url_query: Vec::new(),
        get: false,
        upload: None,
        form: Vec::new(),
    };
    let mut it = words.into_iter().skip(1);
    while let Some(word) = it.next() {
        command.word(word, &mut it);
    }
    command.finish()
}

/// Options that take no value and change nothing read from a cURL command.
const CURL_FLAGS_UNREAD: &[&str] = &[
    "--compressed",
    "-k",
    "--insecure",
    "-L",
    "--location",
    "-s",
    "--silent",
    "-i",
    "--include",
    "-v",
    "--verbose",
    "-S",
    "--show-error",
    "-f",
    "--fail",
    "--http1.1",
    "--http2",
    "--http2-prior-knowledge",
    "-N",
    "--no-buffer",
];

/// A cURL command's words as they are read, before the request is put together.
struct CurlCommand {
    /// The request so far.
    req: Request,
    /// The here-document the command reads as its standard input.
    stdin: Option<Vec<u8>>,
    /// Each piece of data, and whether it is joined to the one before as it is (--json) rather
    /// than with `&`.
    data: Vec<(Vec<u8>, bool)>,
    /// `--json` was given.
    json: bool,
    /// `-I`: a HEAD request.
    head: bool,
    /// `--url-query` parts.
    url_query: Vec<String>,
    /// -G: the data goes in the URL's query.
    get: bool,
    /// -T: the body is a file, sent with PUT.
    upload: Option<String>,
    /// Multipart fields (-F): named, not rebuilt (curl draws a random boundary, and file parts
    /// are read from disk).
    form: Vec<String>,
}

impl CurlCommand {
    /// Reads one word of the command, and the option's value from `it` when it takes one and
    /// has none attached.
    fn word(&mut self, word: Vec<u8>, it: &mut dyn Iterator<Item = Vec<u8>>) {
        let w = lossy(&word);
        let (name, inline) = match w.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.as_bytes().to_vec())),
            // A short option with its value attached: `-XPUT`, `-d@body.json`, `-Hx:y`.
            _ if !w.starts_with("--")
                && w.len() > 2
                && w.is_char_boundary(2)
                && SHORT_WITH_VALUE.contains(&&w[..2]) =>
            {
                (w[..2].to_string(), Some(word[2..].to_vec()))
            }
            _ => (w.clone(), None),
        };
        let value = |it: &mut dyn Iterator<Item = Vec<u8>>| inline.clone().or_else(|| it.next());
        let req = &mut self.req;
        match name.as_str() {
            "-X" | "--request" => req.method = value(it).map(|v| lossy(&v)),
            "-H" | "--header" => {
                if let Some(h) = value(it) {
                    let h = lossy(&h);
                    match h.split_once(':') {
                        Some((k, v)) => req
                            .headers
                            .push((k.trim().to_string(), v.trim().to_string())),
                        None => req
                            .warnings
                            .push(format!("header {h:?} has no `:`; not read")),
                    }
                }
            }
            "--url" => req.url = value(it).map(|v| lossy(&v)),
            "-b" | "--cookie" => req.cookie = value(it).map(|v| lossy(&v)),
            "--data-raw" => self.data.extend(value(it).map(|v| (v, false))),
            "-d" | "--data" | "--data-binary" | "--data-ascii" | "--data-urlencode" | "--json" => {
                let joined = name == "--json";
                if joined {
                    // curl 7.82: the data as --data-binary, and JSON's headers unless given.
                    self.json = true;
                }
                if let Some(v) = value(it) {
                    self.data_option(&name, v, joined);
                }
            }
            "-A" | "--user-agent" => {
                if let Some(v) = value(it) {
                    req.headers.push(("User-Agent".into(), lossy(&v)));
                }
            }
            "-e" | "--referer" => {
                if let Some(v) = value(it) {
                    req.headers.push(("Referer".into(), lossy(&v)));
                }
            }
            "-G" | "--get" => self.get = true,
            "-I" | "--head" => self.head = true,
            "-T" | "--upload-file" => {
                // Each -T goes with one URL; the first request is the one read.
                if let Some(file) = value(it) {
                    self.upload.get_or_insert_with(|| lossy(&file));
                }
            }
            "--url-query" => self.url_query.extend(value(it).map(|q| lossy(&q))),
            "-u" | "--user" | "-o" | "--output" | "-x" | "--proxy" | "-m" | "--max-time"
            | "--connect-timeout" | "--resolve" | "-w" | "--write-out" => {
                let _ = value(it);
            }
            "-F" | "--form" | "--form-string" => {
                if let Some(v) = value(it) {
                    self.form_field(&name, &lossy(&v));
                }
            }
            _ if TAKES_VALUE.contains(&name.as_str()) => {
                let _ = value(it);
            }
            _ if w.starts_with('-') && w.len() > 1 => {
                if !CURL_FLAGS_UNREAD.contains(&w.as_str()) {
                    req.warnings.push(format!("option {w} not read"));
                }
            }
            _ => {
                if req.url.is_none() {
                    req.url = Some(w);
                }
            }
        }
    }

    /// The value `v` of a data option `name` (`-d`, `--data-binary`, `--json`…): data, a file
    /// it names (`@file`), or the here-document (`@-`).
    fn data_option(&mut self, name: &str, v: Vec<u8>, joined: bool) {
        match v.strip_prefix(b"@") {
            Some(b"-") if name != "--data-urlencode" => match &self.stdin {
                // `@-` reads standard input: the here-document. curl strips carriage returns
                // and newlines from -d/--data files, keeps them for --data-binary and --json.
                Some(text) if matches!(name, "--data-binary" | "--json") => {
                    self.data.push((text.clone(), joined))
                }
                Some(text) => self.data.push((
                    text.iter()
                        .copied()
                        .filter(|c| !matches!(c, b'\r' | b'\n'))
                        .collect(),
                    false,
                )),
                None => self.req.body_file = Some("standard input (@-)".to_string()),
            },
            Some(file) if name != "--data-urlencode" => {
                self.req.body_file = Some(lossy(file));
            }
            _ => self.data.push((v, joined)),
        }
    }

    /// A multipart field `v` of option `name` (`field=value`, `field=@file`), named.
    fn form_field(&mut self, name: &str, v: &str) {
        let (field, content) = v.split_once('=').unwrap_or((v, ""));
        self.form.push(match content.strip_prefix(['@', '<']) {
            Some(file) if name != "--form-string" => {
                format!("{field} (the file {file:?}, not in the snippet)")
            }
            _ => format!("{field} = {content:?}"),
        });
    }

    /// The request the command sends: the data joined into the body (or the URL's query with
    /// -G), the method the options imply, an uploaded file, and a multipart body named.
    fn finish(self) -> Option<Request> {
        let CurlCommand {
            mut req,
            data,
            json,
            head,
            mut url_query,
            get,
            upload,
            form,
            ..
        } = self;
        req.url.as_ref()?;
        if json {
            for (header, value) in [
                ("Content-Type", "application/json"),
                ("Accept", "application/json"),
            ] {
                if !req
                    .headers
                    .iter()
                    .any(|(k, _)| k.eq_ignore_ascii_case(header))
                {
                    req.headers.push((header.to_string(), value.to_string()));
                }
            }
        }
        let mut body: Option<Vec<u8>> = None;
        for (piece, joined) in data {
            let b = body.get_or_insert_with(Vec::new);
            if !b.is_empty() && !joined {
                b.push(b'&');
            }
            b.extend_from_slice(&piece);
        }
        if get {
            // curl -G: the data goes in the URL's query (`url?a&b`, `url?q&a&b`), a GET, no
            // body.
            url_query.extend(body.take().map(|b| lossy(&b)));
            req.method.get_or_insert_with(|| "GET".to_string());
        }
        if let (false, Some(url)) = (url_query.is_empty(), &mut req.url) {
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str(&url_query.join("&"));
        }
        if head {
            req.method.get_or_insert_with(|| "HEAD".to_string());
        }
        req.body = body;
        if let Some(file) = upload {
            req.method.get_or_insert_with(|| "PUT".to_string());
            // curl appends the file's name to a URL that names no file.
            if let Some(url) = &mut req.url {
                let path_start = url.find("://").map_or(0, |i| i + 3);
                if url.get(path_start..).is_none_or(|rest| !rest.contains('/')) {
                    url.push('/');
                }
                if url.ends_with('/') {
                    url.push_str(file.rsplit('/').next().unwrap_or(&file));
                }
            }
            req.body_file = Some(file);
        }
        if !form.is_empty() {
            if req.method.is_none() {
                req.method = Some("POST".to_string());
            }
            req.warnings.push(format!(
                "a multipart/form-data body (-F) of {} field(s): {}; its bytes are not rebuilt",
                form.len(),
                form.join(", ")
            ));
        }
        if req.body_file.is_some() {
            req.body = None;
        }
        Some(req)
    }
}

/// Words of a bash command line: quotes, `$'…'`, backslash escapes and line continuations; and
/// the text of a here-document (`<<EOF`, `<<'EOF'`, `<<-EOF`) the command reads as its
/// standard input, as snippet generators write `--data @- <<EOF … EOF`.
fn bash_words(text: &[u8]) -> (Vec<Vec<u8>>, Option<Vec<u8>>) {
    let mut words = Vec::new();
    let mut word: Option<Vec<u8>> = None;
    let mut heredoc: Option<(Vec<u8>, bool)> = None;
    let mut i = 0usize;
    let at = |i: usize| text.get(i).copied();
    while let Some(c) = at(i) {
        match c {
            b'<' if at(i + 1) == Some(b'<') && at(i + 2) != Some(b'<') && word.is_none() => {
                // The delimiter word (quotes only say that the body is not expanded).
                let strip_tabs = at(i + 2) == Some(b'-');
                i += if strip_tabs { 3 } else { 2 };
                while at(i).is_some_and(|c| c == b' ' || c == b'\t') {
                    i += 1;
                }
                let mut delimiter = Vec::new();
                while let Some(c) = at(i) {
                    if c.is_ascii_whitespace() {
                        break;
                    }
                    if !matches!(c, b'\'' | b'"' | b'\\') {
                        delimiter.push(c);
                    }
                    i += 1;
                }
                if !delimiter.is_empty() {
                    heredoc = Some((delimiter, strip_tabs));
                }
            }
            b'\n' if heredoc.is_some() => {
                // The command line ends; the here-document's lines follow.
                words.extend(word.take());
                let (delimiter, strip_tabs) = heredoc.take().unwrap_or_default();
                let body = heredoc_body(text.get(i + 1..).unwrap_or(&[]), &delimiter, strip_tabs);
                return (words, Some(body));
            }
            b'\\' => {
                match at(i + 1) {
                    Some(b'\n') => {}
                    Some(b'\r') if at(i + 2) == Some(b'\n') => i += 1,
                    Some(n) => word.get_or_insert_with(Vec::new).push(n),
                    None => {}
                }
                i += 2;
            }
            c if c.is_ascii_whitespace() => {
                words.extend(word.take());
                i += 1;
            }
            b'\'' => {
                let w = word.get_or_insert_with(Vec::new);
                i += 1;
                while let Some(c) = at(i) {
                    i += 1;
                    if c == b'\'' {
                        break;
                    }
                    w.push(c);
                }
            }
            b'$' if at(i + 1) == Some(b'\'') => {
                let w = word.get_or_insert_with(Vec::new);
                i += 2;
                i = ansi_c(text, i, w);
            }
            b'"' => {
                let w = word.get_or_insert_with(Vec::new);
                i += 1;
                while let Some(c) = at(i) {
                    match c {
                        b'"' => {
                            i += 1;
                            break;
                        }
                        b'\\' if matches!(at(i + 1), Some(b'"' | b'\\' | b'$' | b'`')) => {
                            w.extend(at(i + 1));
                            i += 2;
                        }
                        b'\\' if at(i + 1) == Some(b'\n') => i += 2,
                        _ => {
                            w.push(c);
                            i += 1;
                        }
                    }
                }
            }
            _ => {
                word.get_or_insert_with(Vec::new).push(c);
                i += 1;
            }
        }
    }
    words.extend(word);
    (words, None)
}

/// The lines of a here-document up to the line that is its delimiter (or the end of the text),
/// each with its newline, leading tabs removed for `<<-`.
fn heredoc_body(text: &[u8], delimiter: &[u8], strip_tabs: bool) -> Vec<u8> {
    let mut body = Vec::new();
    for line in text.split_inclusive(|&c| c == b'\n') {
        let mut content = line.strip_suffix(b"\n").unwrap_or(line);
        content = content.strip_suffix(b"\r").unwrap_or(content);
        let line = if strip_tabs {
            let tabs = line.iter().take_while(|&&c| c == b'\t').count();
            content = content.get(tabs..).unwrap_or(&[]);
            line.get(tabs..).unwrap_or(&[])
        } else {
            line
        };
        if content == delimiter {
            break;
        }
        body.extend_from_slice(line);
    }
    body
}

/// Reads an ANSI-C quoted string (`$'…'`) from `i` (after the quote) into `w`; returns the index
/// after its closing quote.
fn ansi_c(text: &[u8], mut i: usize, w: &mut Vec<u8>) -> usize {
    let at = |i: usize| text.get(i).copied();
    let hex_run = |from: usize, max: usize| -> (u32, usize) {
        let mut v = 0u32;
        let mut n = 0usize;
        while n < max {
            match at(from + n).and_then(|c| (c as char).to_digit(16)) {
                Some(d) => {
                    v = v * 16 + d;
                    n += 1;
                }
                None => break,
            }
        }
        (v, n)
    };
    while let Some(c) = at(i) {
        match c {
            b'\'' => return i + 1,
            b'\\' => {
                let Some(e) = at(i + 1) else {
                    return i + 1;
                };
                i += 2;
                match e {
                    b'n' => w.push(b'\n'),
                    b'r' => w.push(b'\r'),
                    b't' => w.push(b'\t'),
                    b'a' => w.push(0x07),
                    b'b' => w.push(0x08),
                    b'e' | b'E' => w.push(0x1b),
                    b'f' => w.push(0x0c),
                    b'v' => w.push(0x0b),
                    b'x' => {
                        let (v, n) = hex_run(i, 2);
                        if n == 0 {
                            w.extend_from_slice(b"\\x");
                        } else {
                            w.push(v as u8);
                            i += n;
                        }
                    }
                    b'u' | b'U' => {
                        let (v, n) = hex_run(i, if e == b'u' { 4 } else { 8 });
                        match char::from_u32(v).filter(|_| n > 0) {
                            Some(ch) => {
                                let mut buf = [0u8; 4];
                                w.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                                i += n;
                            }
                            None => {
                                w.push(b'\\');
                                w.push(e);
                            }
                        }
                    }
                    b'0'..=b'7' => {
                        let mut v = u32::from(e - b'0');
                        let mut n = 0;
                        while n < 2 {
                            match at(i) {
                                Some(d @ b'0'..=b'7') => {
                                    v = v * 8 + u32::from(d - b'0');
                                    i += 1;
                                    n += 1;
                                }
                                _ => break,
                            }
                        }
                        w.push(v as u8);
                    }
                    other => w.push(other),
                }
            }
            _ => {
                w.push(c);
                i += 1;
            }
        }
    }
    i
}

/// Words of a cmd.exe command line as Chrome writes it: `^` escapes first (cmd's pass), then the
/// C runtime's quoting (`"` toggles, `\"` is a quote, `\\` a backslash).
fn cmd_words(text: &[u8]) -> Vec<Vec<u8>> {
    // cmd's pass: `^X` is X; `^` + line break + line break is one line break; `^` + one line
    // break continues the line. A `"` from `^"` is marked as a quote for the next pass.
    #[derive(Clone, Copy, PartialEq)]
    enum C {
        Byte(u8),
        Quote,
        Space,
    }
    let mut chars: Vec<C> = Vec::with_capacity(text.len());
    let mut i = 0usize;
    let at = |i: usize| text.get(i).copied();
    while let Some(c) = at(i) {
        match c {
            b'^' => {
                let mut j = i + 1;
                if at(j) == Some(b'\r') {
                    j += 1;
                }
                if at(j) == Some(b'\n') {
                    let mut k = j + 1;
                    if at(k) == Some(b'\r') {
                        k += 1;
                    }
                    if at(k) == Some(b'\n') {
                        chars.push(C::Byte(b'\n'));
                        i = k + 1;
                    } else {
                        chars.push(C::Space);
                        i = j + 1;
                    }
                } else {
                    match at(j) {
                        Some(b'"') => chars.push(C::Quote),
                        Some(n) => chars.push(C::Byte(n)),
                        None => {}
                    }
                    i = j + 1;
                }
            }
            b'"' => {
                chars.push(C::Quote);
                i += 1;
            }
            c if c.is_ascii_whitespace() => {
                chars.push(C::Space);
                i += 1;
            }
            _ => {
                chars.push(C::Byte(c));
                i += 1;
            }
        }
    }
    // The C runtime's pass.
    let mut words = Vec::new();
    let mut word: Option<Vec<u8>> = None;
    let mut quoted = false;
    let mut k = 0usize;
    while let Some(&c) = chars.get(k) {
        match c {
            C::Space if !quoted => words.extend(word.take()),
            C::Space => word.get_or_insert_with(Vec::new).push(b' '),
            C::Quote => {
                word.get_or_insert_with(Vec::new);
                quoted = !quoted;
            }
            C::Byte(b'\\') => {
                let mut n = 0usize;
                while chars.get(k + n) == Some(&C::Byte(b'\\')) {
                    n += 1;
                }
                let w = word.get_or_insert_with(Vec::new);
                if chars.get(k + n) == Some(&C::Quote) {
                    w.extend(std::iter::repeat_n(b'\\', n / 2));
                    if n % 2 == 1 {
                        w.push(b'"');
                        k += 1;
                    }
                } else {
                    // Chrome doubles every backslash, so a run of them stands for half as many.
                    w.extend(std::iter::repeat_n(b'\\', n.div_ceil(2)));
                }
                k += n;
                continue;
            }
            C::Byte(b) => word.get_or_insert_with(Vec::new).push(b),
        }
        k += 1;
    }
    words.extend(word);
    words
}

/// A small reader of the JS that "Copy as fetch" writes.
struct Js<'a> {
    s: &'a [u8],
    i: usize,
    /// The values declared before the call (`const url = "…"`), by name.
    vars: Vec<(String, JsValue)>,
}

/// A JS value in a fetch call's options.
#[derive(Clone)]
enum JsValue {
    Str(String),
    Obj(Vec<(String, JsValue)>),
    Other,
}

impl Js<'_> {
    fn ws(&mut self) {
        while let Some(c) = self.s.get(self.i) {
            if c.is_ascii_whitespace() {
                self.i += 1;
            } else if self.s.get(self.i..self.i + 2) == Some(b"//") {
                while self.s.get(self.i).is_some_and(|&c| c != b'\n') {
                    self.i += 1;
                }
            } else {
                break;
            }
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// A string literal at the cursor.
    fn string(&mut self) -> Option<String> {
        self.ws();
        let quote = *self.s.get(self.i)?;
        if !matches!(quote, b'"' | b'\'' | b'`') {
            return None;
        }
        self.i += 1;
        let mut units: Vec<u16> = Vec::new();
        let rest = std::str::from_utf8(self.s.get(self.i..)?).ok()?;
        let mut chars = rest.char_indices().peekable();
        let hex = |chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>, n: usize| {
            let mut v = 0u32;
            for _ in 0..n {
                let d = chars.next()?.1.to_digit(16)?;
                v = v * 16 + d;
            }
            Some(v)
        };
        while let Some((at, c)) = chars.next() {
            match c {
                c if c as u32 == u32::from(quote) => {
                    self.i += at + 1;
                    return Some(String::from_utf16_lossy(&units));
                }
                '$' if quote == b'`' && chars.peek().map(|p| p.1) == Some('{') => {
                    // `${name}` of a declared string; any other expression is not read.
                    chars.next();
                    let mut name = String::new();
                    loop {
                        let (_, d) = chars.next()?;
                        if d == '}' {
                            break;
                        }
                        name.push(d);
                    }
                    let name = name.trim();
                    let Some((_, JsValue::Str(v))) = self.vars.iter().find(|(n, _)| n == name)
                    else {
                        return None;
                    };
                    units.extend(v.encode_utf16());
                }
                '\\' => {
                    let (_, e) = chars.next()?;
                    let v = match e {
                        'n' => 0x0a,
                        'r' => 0x0d,
                        't' => 0x09,
                        'b' => 0x08,
                        'f' => 0x0c,
                        'v' => 0x0b,
                        '0' => 0,
                        'x' => hex(&mut chars, 2)?,
                        'u' if chars.peek().map(|p| p.1) == Some('{') => {
                            chars.next();
                            let mut v = 0u32;
                            loop {
                                let (_, d) = chars.next()?;
                                if d == '}' {
                                    break;
                                }
                                v = v.checked_mul(16)?.checked_add(d.to_digit(16)?)?;
                            }
                            let ch = char::from_u32(v)?;
                            let mut buf = [0u16; 2];
                            units.extend_from_slice(ch.encode_utf16(&mut buf));
                            continue;
                        }
                        'u' => hex(&mut chars, 4)?,
                        '\n' => continue,
                        other => {
                            let mut buf = [0u16; 2];
                            units.extend_from_slice(other.encode_utf16(&mut buf));
                            continue;
                        }
                    };
                    units.push(v as u16);
                }
                c => {
                    let mut buf = [0u16; 2];
                    units.extend_from_slice(c.encode_utf16(&mut buf));
                }
            }
        }
        None
    }

    fn value(&mut self, depth: usize) -> Option<JsValue> {
        self.ws();
        match *self.s.get(self.i)? {
            b'"' | b'\'' | b'`' => {
                let text = self.string()?;
                self.ws();
                if self.s.get(self.i) == Some(&b'+') {
                    // `'Basic ' + btoa(…)`: an expression, not read.
                    return self.other();
                }
                Some(JsValue::Str(text))
            }
            b'{' if depth < MAX_DEPTH => {
                self.i += 1;
                let mut fields = Vec::new();
                loop {
                    if self.eat(b'}') {
                        return Some(JsValue::Obj(fields));
                    }
                    self.ws();
                    let key = match self.s.get(self.i)? {
                        b'"' | b'\'' => self.string()?,
                        _ => {
                            let start = self.i;
                            while self.s.get(self.i).is_some_and(|c| {
                                c.is_ascii_alphanumeric() || *c == b'_' || *c == b'$'
                            }) {
                                self.i += 1;
                            }
                            lossy(self.s.get(start..self.i)?)
                        }
                    };
                    if key.is_empty() || !self.eat(b':') {
                        return None;
                    }
                    let v = self.value(depth + 1)?;
                    fields.push((key, v));
                    if !self.eat(b',') {
                        return self.eat(b'}').then_some(JsValue::Obj(fields));
                    }
                }
            }
            c if c.is_ascii_alphabetic() || c == b'_' || c == b'$' => {
                // A declared name stands for its value; `null`, `true` and other names are
                // read as nothing.
                let start = self.i;
                let name = self.identifier()?;
                if let Some((_, v)) = self.vars.iter().find(|(n, _)| *n == name) {
                    return Some(v.clone());
                }
                self.i = start;
                self.other()
            }
            _ => self.other(),
        }
    }

    /// A name at the cursor: letters, digits, `_` and `$`.
    fn identifier(&mut self) -> Option<String> {
        self.ws();
        let start = self.i;
        while self
            .s
            .get(self.i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'$')
        {
            self.i += 1;
        }
        let name = lossy(self.s.get(start..self.i)?);
        (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
    }

    /// A value that is not read (a number, `null`, an expression): up to the next `,`, closing
    /// brace or `;` at this level.
    fn other(&mut self) -> Option<JsValue> {
        // An expression (`btoa('u:p')`, `JSON.stringify({…})`, `new URLSearchParams(…)`): its
        // brackets and strings are skipped whole, so what follows it is still read.
        let mut depth = 0usize;
        while let Some(&c) = self.s.get(self.i) {
            match c {
                b',' | b'}' | b')' | b']' | b';' if depth == 0 => break,
                b'{' | b'[' | b'(' => {
                    depth += 1;
                    if depth > MAX_DEPTH * 4 {
                        return None;
                    }
                }
                b'}' | b']' | b')' => depth -= 1,
                b'"' | b'\'' | b'`' => {
                    // A template literal's `${…}` of names not declared ends the read.
                    self.string()?;
                    continue;
                }
                _ => {}
            }
            self.i += 1;
        }
        Some(JsValue::Other)
    }
}

/// A fetch call, alone (`fetch("url", {…})`, `await fetch(…)`) or after the declarations of
/// the values it is called with (`const url = "…"; const options = {…}; fetch(url, options)`,
/// as Postman, Insomnia and snippet generators write it).
fn fetch(text: &str) -> Option<Request> {
    let mut js = Js {
        s: text.as_bytes(),
        i: 0,
        vars: Vec::new(),
    };
    // Declarations before the call: `const|let|var NAME = VALUE;`.
    loop {
        js.ws();
        let rest = js.s.get(js.i..)?;
        let keyword = [&b"const "[..], b"let ", b"var "]
            .into_iter()
            .find(|k| rest.starts_with(k));
        let Some(keyword) = keyword else {
            break;
        };
        js.i += keyword.len();
        let name = js.identifier()?;
        if !js.eat(b'=') {
            return None;
        }
        let value = js.value(0)?;
        js.vars.push((name, value));
        js.eat(b';');
        if js.vars.len() > 32 {
            return None;
        }
    }
    js.ws();
    if js.s.get(js.i..)?.starts_with(b"await ") {
        js.i += "await ".len();
        js.ws();
    }
    if !js.s.get(js.i..)?.starts_with(b"fetch(") {
        return None;
    }
    js.i += "fetch(".len();
    let Some(JsValue::Str(url)) = js.value(0) else {
        return None;
    };
    let mut req = Request {
        kind: "fetch call",
        shell: "JavaScript",
        url: Some(url),
        ..Request::default()
    };
    if js.eat(b',') {
        let Some(JsValue::Obj(fields)) = js.value(0) else {
            return None;
        };
        for (key, v) in fields {
            match (key.as_str(), v) {
                ("headers", JsValue::Obj(h)) => {
                    for (k, v) in h {
                        if let JsValue::Str(v) = v {
                            req.headers.push((k, v));
                        }
                    }
                }
                ("body", JsValue::Str(b)) => req.body_text = Some(b),
                ("body", JsValue::Obj(_)) => req
                    .warnings
                    .push("the body is an object, not a string; not read".into()),
                ("method", JsValue::Str(m)) => req.method = Some(m),
                _ => {}
            }
        }
    }
    if !js.eat(b')') {
        return None;
    }
    // fetch's default method is GET even with a body (which fetch then refuses).
    if req.method.is_none() {
        req.method = Some("GET".into());
    }
    Some(req)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Format;

    fn one(s: &str) -> Payload {
        let mut p = parse(s.as_bytes()).unwrap_or_default();
        assert_eq!(p.len(), 1, "{s}");
        p.remove(0)
    }

    #[test]
    fn bash_curl_with_ansi_c_binary() {
        let p = one("curl 'https://api.example/x' \\\n  -H 'content-type: application/msgpack' \\\n  --data-raw $'\\x82\\xa4name\\xa3Ada\\x01\\'' \\\n  --compressed");
        assert_eq!(p.meta_value("method"), Some("POST"));
        assert_eq!(p.meta_value("url"), Some("https://api.example/x"));
        assert_eq!(p.hint, Some(Format::MessagePack));
        assert_eq!(p.bytes, b"\x82\xa4name\xa3Ada\x01'");
        assert_eq!(p.layers[0].name, "cURL command");
    }

    #[test]
    fn cmd_curl() {
        let p = one("curl ^\"https://api.example/x^\" ^\n  -H ^\"content-type: application/json^\" ^\n  --data-raw ^\"^{^\\^\"a^\\^\":^\\^\"50^%^ off^\\^\"^}^\"");
        assert_eq!(p.meta_value("snippet"), Some("cURL command (cmd)"));
        assert_eq!(p.meta_value("url"), Some("https://api.example/x"));
        assert_eq!(p.bytes, b"{\"a\":\"50% off\"}");
        assert_eq!(p.hint, Some(Format::Json));
    }

    #[test]
    fn at_file_warns() {
        let p = one(
            "curl -X PUT https://h/x --data-binary @body.bin -H 'Content-Type: application/cbor'",
        );
        assert!(p.bytes.is_empty());
        assert_eq!(p.meta_value("method"), Some("PUT"));
        assert_eq!(p.meta_value("body-file"), Some("body.bin"));
        assert!(p
            .meta_value("warning")
            .is_some_and(|w| w.contains("body.bin")));
    }

    #[test]
    fn fetch_with_escapes() {
        let p = one(
            "fetch(\"https://api.example/y\", {\n  \"headers\": {\n    \"content-type\": \"application/msgpack\"\n  },\n  \"body\": \"\\x81\\u00a1a\\u0001\",\n  \"method\": \"POST\"\n});",
        );
        assert_eq!(p.meta_value("method"), Some("POST"));
        assert_eq!(p.bytes, [0x81, 0xa1, b'a', 0x01]);
        assert_eq!(p.hint, Some(Format::MessagePack));
        let p = one("fetch(\"https://h/\", {\"body\": \"é\\n\", \"method\": \"POST\", \"headers\": {\"content-type\": \"text/plain\"}});");
        assert_eq!(p.bytes, "é\n".as_bytes());
    }

    #[test]
    fn curl_reads_a_here_document_as_its_standard_input() {
        // As snippet generators write it: `--data @-` and the body in a here-document.
        let text = "curl -X POST https://h/items \\\n  -H 'Content-Type: application/json' \\\n  --data @- <<'EOF'\n{\n  \"a\": 1\n}\nEOF\n";
        let p = one(text);
        assert_eq!(p.meta_value("method"), Some("POST"));
        // -d strips newlines from what it reads, as curl does with a file.
        assert_eq!(p.bytes, b"{  \"a\": 1}");
        assert!(p.meta_value("body-file").is_none());
        let binary = one("curl https://h/x --data-binary @- <<EOF\nline 1\nline 2\nEOF");
        assert_eq!(binary.bytes, b"line 1\nline 2\n");
        let tabs = one("curl https://h/x --data-binary @- <<-END\n\t\tkept\n\tEND\n");
        assert_eq!(tabs.bytes, b"kept\n");
        // Without a here-document, @- is standard input the snippet does not hold.
        let none = one("curl https://h/x -d @-");
        assert!(none.bytes.is_empty());
        assert!(none.cut.is_some());
    }

    #[test]
    fn curl_json_and_form_fields() {
        let p = one("curl https://h/x --json '{\"a\":[1]}'");
        assert_eq!(p.bytes, br#"{"a":[1]}"#);
        assert_eq!(p.meta_value("Content-Type"), Some("application/json"));
        assert_eq!(p.meta_value("Accept"), Some("application/json"));
        assert_eq!(p.hint, Some(Format::Json));
        let f = one("curl https://h/upload -F name=ada -F 'photo=@me.png'");
        assert_eq!(f.meta_value("method"), Some("POST"));
        let w = f.meta_value("warning").unwrap_or_default();
        assert!(
            w.contains("2 field(s): name = \"ada\", photo (the file \"me.png\""),
            "{w}"
        );
    }

    #[test]
    fn fetch_called_with_declared_values() {
        let text = "const url = 'https://api.example/v1/items';\nconst options = {\n  method: 'POST',\n  headers: {'Content-Type': 'application/json'},\n  body: '{\"id\":7}'\n};\n\nfetch(url, options)\n  .then(res => res.json())\n  .then(json => console.log(json));\n";
        let p = parse(text.as_bytes()).expect("a fetch call").remove(0);
        assert_eq!(p.meta_value("url"), Some("https://api.example/v1/items"));
        assert_eq!(p.meta_value("method"), Some("POST"));
        assert_eq!(p.bytes, br#"{"id":7}"#);
        assert_eq!(p.hint, Some(Format::Json));
        // A template literal of declared strings.
        let p =
            one("const base = \"https://h\"; const id = '42'; await fetch(`${base}/items/${id}`)");
        assert_eq!(p.meta_value("url"), Some("https://h/items/42"));
        // An expression it cannot evaluate is not guessed.
        assert!(parse(b"fetch(`${location.origin}/x`)").is_none());
    }

    #[test]
    fn not_snippets() {
        assert!(parse(b"curly braces").is_none());
        assert!(parse(b"fetch(").is_none());
        // An option whose value is an expression is skipped; an unclosed one is no call.
        assert!(parse(b"fetch(\"u\", {\"a\": [1]})").is_some());
        assert!(parse(b"fetch(\"u\", {\"a\": [1})").is_none());
        assert!(parse(b"curl").is_none());
    }
}
