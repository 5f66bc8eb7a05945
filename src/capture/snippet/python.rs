//! Python `requests` snippets, as "Copy as Python" converters write them: `NAME = value`
//! assignments (dicts, lists, tuples, strings), then one `requests.get(url, …)` or
//! `requests.request('METHOD', url, …)` call whose keyword arguments name them. The request is
//! made as `requests` would make it: `params` in the query, `data` as bytes or a form,
//! `json=` serialised as `json.dumps` writes it, `cookies` and `auth` as headers.

use super::{form_pair, Request};

/// Most assignments read before the call, and deepest nesting of a value.
const MAX_NAMES: usize = 64;
const MAX_DEPTH: usize = 32;

/// A Python literal.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Py {
    Str(String),
    Bytes(Vec<u8>),
    /// A number, as written.
    Num(String),
    Bool(bool),
    None,
    List(Vec<Py>),
    Dict(Vec<(Py, Py)>),
    /// A call or name the snippet does not define (`open('f', 'rb')`): its text.
    Other(String),
}

impl Py {
    /// The text a form or a query gives a value (`str(v)`).
    pub(super) fn as_text(&self) -> String {
        match self {
            Py::Str(s) | Py::Num(s) | Py::Other(s) => s.clone(),
            Py::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            Py::Bool(true) => "True".into(),
            Py::Bool(false) => "False".into(),
            Py::None => "None".into(),
            Py::List(_) | Py::Dict(_) => String::new(),
        }
    }

    /// `json.dumps(self)` with its defaults: `", "` and `": "`, non-ASCII as `\uXXXX`.
    pub(super) fn json(&self, out: &mut String) {
        match self {
            Py::Str(s) => json_string(s, out),
            Py::Bytes(b) => json_string(&String::from_utf8_lossy(b), out),
            Py::Num(n) => out.push_str(n),
            Py::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Py::None | Py::Other(_) => out.push_str("null"),
            Py::List(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.json(out);
                }
                out.push(']');
            }
            Py::Dict(entries) => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    json_string(&k.as_text(), out);
                    out.push_str(": ");
                    v.json(out);
                }
                out.push('}');
            }
        }
    }
}

/// A JSON string as `json.dumps` writes it (`ensure_ascii`).
fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A reader of the Python a converter writes: literals, names, comments.
struct Reader<'a> {
    s: &'a [u8],
    i: usize,
    names: Vec<(String, Py)>,
}

impl Reader<'_> {
    /// Skips blanks, line ends and `#` comments.
    fn ws(&mut self) {
        while let Some(&c) = self.s.get(self.i) {
            if c.is_ascii_whitespace() || c == b'\\' {
                self.i += 1;
            } else if c == b'#' {
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

    fn identifier(&mut self) -> Option<String> {
        self.ws();
        let start = self.i;
        while self
            .s
            .get(self.i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'.')
        {
            self.i += 1;
        }
        (self.i > start).then(|| String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    /// One string literal (prefixes `b`, `r`, `u`, `rb`; single, double or triple quotes).
    fn string(&mut self) -> Option<Py> {
        self.ws();
        let start = self.i;
        let mut raw = false;
        let mut bytes = false;
        while let Some(&c) = self.s.get(self.i) {
            match c.to_ascii_lowercase() {
                b'r' => raw = true,
                b'b' => bytes = true,
                b'u' => {}
                _ => break,
            }
            self.i += 1;
        }
        let quote = *self.s.get(self.i)?;
        if !matches!(quote, b'\'' | b'"') || self.i - start > 2 {
            self.i = start;
            return None;
        }
        let triple = self.s.get(self.i..self.i + 3) == Some(&[quote; 3][..]);
        self.i += if triple { 3 } else { 1 };
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = *self.s.get(self.i)?;
            if triple {
                if self.s.get(self.i..self.i + 3) == Some(&[quote; 3][..]) {
                    self.i += 3;
                    break;
                }
            } else if c == quote {
                self.i += 1;
                break;
            } else if c == b'\n' {
                return None;
            }
            if c == b'\\' && !raw {
                self.i += 1;
                let e = *self.s.get(self.i)?;
                self.i += 1;
                match e {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'0' => out.push(0),
                    b'\n' => {}
                    b'x' => {
                        let hex = std::str::from_utf8(self.s.get(self.i..self.i + 2)?).ok()?;
                        let b = u8::from_str_radix(hex, 16).ok()?;
                        self.i += 2;
                        if bytes {
                            out.push(b);
                        } else {
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(char::from(b).encode_utf8(&mut buf).as_bytes());
                        }
                    }
                    b'u' if !bytes => {
                        let hex = std::str::from_utf8(self.s.get(self.i..self.i + 4)?).ok()?;
                        let c = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
                        self.i += 4;
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    }
                    other => {
                        if !matches!(other, b'\\' | b'\'' | b'"') {
                            out.push(b'\\');
                        }
                        out.push(other);
                    }
                }
                continue;
            }
            out.push(c);
            self.i += 1;
        }
        Some(if bytes {
            Py::Bytes(out)
        } else {
            Py::Str(String::from_utf8(out).ok()?)
        })
    }

    /// A value: literals (adjacent strings joined), containers, names defined before.
    fn value(&mut self, depth: usize) -> Option<Py> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        let c = *self.s.get(self.i)?;
        if let Some(first) = self.string() {
            // Adjacent literals are one string.
            let mut joined = first;
            loop {
                let at = self.i;
                match (self.string(), &mut joined) {
                    (Some(Py::Str(more)), Py::Str(s)) => s.push_str(&more),
                    (Some(Py::Bytes(more)), Py::Bytes(b)) => b.extend(more),
                    _ => {
                        self.i = at;
                        break;
                    }
                }
            }
            return Some(joined);
        }
        match c {
            b'{' => {
                self.i += 1;
                let mut entries = Vec::new();
                while !self.eat(b'}') {
                    let k = self.value(depth + 1)?;
                    if !self.eat(b':') {
                        return None;
                    }
                    let v = self.value(depth + 1)?;
                    entries.push((k, v));
                    if !self.eat(b',') {
                        if !self.eat(b'}') {
                            return None;
                        }
                        break;
                    }
                }
                Some(Py::Dict(entries))
            }
            b'[' | b'(' => {
                let close = if c == b'[' { b']' } else { b')' };
                self.i += 1;
                let mut items = Vec::new();
                while !self.eat(close) {
                    items.push(self.value(depth + 1)?);
                    if !self.eat(b',') {
                        if !self.eat(close) {
                            return None;
                        }
                        break;
                    }
                }
                Some(Py::List(items))
            }
            b'-' | b'0'..=b'9' => {
                let start = self.i;
                self.i += 1;
                while self
                    .s
                    .get(self.i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_'))
                {
                    self.i += 1;
                }
                Some(Py::Num(
                    String::from_utf8_lossy(&self.s[start..self.i]).into_owned(),
                ))
            }
            _ => {
                let name = self.identifier()?;
                match name.as_str() {
                    "True" => return Some(Py::Bool(true)),
                    "False" => return Some(Py::Bool(false)),
                    "None" => return Some(Py::None),
                    _ => {}
                }
                if self.eat(b'(') {
                    // A call: its arguments are read and the call kept as text
                    // (`open('file.bin', 'rb')`).
                    let mut args = Vec::new();
                    while !self.eat(b')') {
                        args.push(self.value(depth + 1)?.as_text());
                        if !self.eat(b',') {
                            if !self.eat(b')') {
                                return None;
                            }
                            break;
                        }
                    }
                    return Some(Py::Other(format!("{name}({})", args.join(", "))));
                }
                self.names
                    .iter()
                    .rev()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.clone())
                    .or(Some(Py::Other(name)))
            }
        }
    }
}

impl Reader<'_> {
    /// Reads the `import …` lines and the assignments (kept as names) up to the
    /// `requests.…` call: the call's name (`requests.get`), or `None` when something else
    /// comes first.
    fn call_name(&mut self) -> Option<String> {
        loop {
            self.ws();
            let rest = self.s.get(self.i..)?;
            if rest.starts_with(b"import ") || rest.starts_with(b"from ") {
                self.i += rest.iter().position(|&c| c == b'\n')?;
                continue;
            }
            let name = self.identifier()?;
            if name.starts_with("requests.") {
                return Some(name);
            }
            if !self.eat(b'=') {
                return None;
            }
            // `response = requests.get(…)`: the call is the value.
            self.ws();
            if self.s.get(self.i..)?.starts_with(b"requests.") {
                return self.identifier();
            }
            let value = self.value(0)?;
            self.names.push((name, value));
            if self.names.len() > MAX_NAMES {
                return None;
            }
        }
    }

    /// Reads a call's arguments, after its opening parenthesis, through the closing one.
    fn arguments(&mut self) -> Option<(Vec<Py>, Keywords)> {
        let mut positional: Vec<Py> = Vec::new();
        let mut keywords: Vec<(String, Py)> = Vec::new();
        while !self.eat(b')') {
            let at = self.i;
            let keyword = self.identifier().filter(|_| {
                self.ws();
                self.s.get(self.i) == Some(&b'=') && self.s.get(self.i + 1) != Some(&b'=')
            });
            match keyword {
                Some(k) => {
                    self.eat(b'=');
                    keywords.push((k, self.value(0)?));
                }
                None => {
                    self.i = at;
                    positional.push(self.value(0)?);
                }
            }
            if !self.eat(b',') {
                if !self.eat(b')') {
                    return None;
                }
                break;
            }
        }
        Some((positional, Keywords(keywords)))
    }
}

/// The keyword arguments of the `requests` call, in the order written.
struct Keywords(Vec<(String, Py)>);

impl Keywords {
    /// The value of keyword `k` (the first, if it is given twice).
    fn get(&self, k: &str) -> Option<&Py> {
        self.0.iter().find(|(n, _)| n == k).map(|(_, v)| v)
    }

    /// Adds the headers `headers=`, `cookies=` and `auth=` give.
    fn add_headers(&self, req: &mut Request) {
        if let Some(Py::Dict(headers)) = self.get("headers") {
            for (k, v) in headers {
                req.headers.push((k.as_text(), v.as_text()));
            }
        }
        if let Some(Py::Dict(cookies)) = self.get("cookies") {
            let list: Vec<String> = cookies
                .iter()
                .map(|(k, v)| format!("{}={}", k.as_text(), v.as_text()))
                .collect();
            req.cookie = Some(list.join("; "));
        }
        if let Some(Py::List(auth)) = self.get("auth") {
            if let [user, password] = auth.as_slice() {
                use base64::Engine;
                let token = base64::engine::general_purpose::STANDARD.encode(format!(
                    "{}:{}",
                    user.as_text(),
                    password.as_text()
                ));
                req.headers
                    .push(("Authorization".into(), format!("Basic {token}")));
            }
        }
    }

    /// Adds the body `data=` or `json=` gives, with its Content-Type unless a header set one.
    fn add_body(&self, req: &mut Request) {
        let set_type = |req: &mut Request, ct: &str| {
            if req.content_type().is_none() {
                req.headers.push(("Content-Type".into(), ct.into()));
            }
        };
        match (self.get("data"), self.get("json")) {
            (Some(Py::Str(s)), _) => req.body = Some(s.clone().into_bytes()),
            (Some(Py::Bytes(b)), _) => req.body = Some(b.clone()),
            (Some(Py::Other(call)), _) => req.body_file = Some(call.clone()),
            (Some(form @ (Py::Dict(_) | Py::List(_))), _) => {
                let body: Vec<String> = pairs(form).iter().map(|(k, v)| form_pair(k, v)).collect();
                req.body = Some(body.join("&").into_bytes());
                set_type(req, "application/x-www-form-urlencoded");
            }
            (_, Some(json)) => {
                let mut body = String::new();
                json.json(&mut body);
                req.body = Some(body.into_bytes());
                set_type(req, "application/json");
            }
            _ => {}
        }
        if self.get("files").is_some() {
            req.warnings
                .push("files= sends a multipart body the snippet does not hold; not read".into());
        }
    }
}

/// The request a Python `requests` snippet makes, or `None` when `text` is not one.
pub(super) fn requests(text: &str) -> Option<Request> {
    if !text.contains("import requests") {
        return None;
    }
    let mut r = Reader {
        s: text.as_bytes(),
        i: 0,
        names: Vec::new(),
    };
    // `import …` lines, assignments, then the call.
    let call = r.call_name()?;
    let verb = call.strip_prefix("requests.")?.to_string();
    if !r.eat(b'(') {
        return None;
    }
    let (positional, keywords) = r.arguments()?;
    let (method, url) = if verb == "request" {
        let mut it = positional.into_iter();
        (it.next()?.as_text(), it.next())
    } else {
        (verb.to_ascii_uppercase(), positional.into_iter().next())
    };
    let Some(Py::Str(mut url)) = url.or_else(|| keywords.get("url").cloned()) else {
        return None;
    };
    let mut req = Request {
        kind: "Python requests call",
        shell: "Python",
        method: Some(method.to_ascii_uppercase()),
        ..Request::default()
    };
    if let Some(params) = keywords.get("params") {
        let pairs = pairs(params);
        if !pairs.is_empty() {
            let query: Vec<String> = pairs.iter().map(|(k, v)| form_pair(k, v)).collect();
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str(&query.join("&"));
        }
    }
    keywords.add_headers(&mut req);
    keywords.add_body(&mut req);
    req.url = Some(url);
    Some(req)
}

/// The `(key, value)` pairs `requests` encodes from a dict (list values repeat the key) or a
/// list of pairs.
fn pairs(v: &Py) -> Vec<(String, String)> {
    let mut out = Vec::new();
    match v {
        Py::Dict(entries) => {
            for (k, v) in entries {
                match v {
                    Py::List(items) => {
                        for item in items {
                            out.push((k.as_text(), item.as_text()));
                        }
                    }
                    Py::None => {}
                    v => out.push((k.as_text(), v.as_text())),
                }
            }
        }
        Py::List(items) => {
            for item in items {
                if let Py::List(pair) = item {
                    if let [k, v] = pair.as_slice() {
                        out.push((k.as_text(), v.as_text()));
                    }
                }
            }
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_read_as_python_reads_them() {
        let mut r = Reader {
            s: br#"{'a': 'x\'y' "z", "b": [1, -2.5, None, True], 'c': ('\x00\xff', r'\n')}"#,
            i: 0,
            names: Vec::new(),
        };
        let v = r.value(0).expect("a dict");
        let mut json = String::new();
        v.json(&mut json);
        assert_eq!(
            json,
            r#"{"a": "x'yz", "b": [1, -2.5, null, true], "c": ["\u0000\u00ff", "\\n"]}"#
        );
    }

    #[test]
    fn a_call_with_params_data_and_json() {
        let req = requests(
            "import requests\n\nparams = [('q', 'a b'), ('k[]', '1')]\njson_data = {'é': 1}\n\
             response = requests.post('https://api.example/x', params=params, json=json_data)\n",
        )
        .expect("a request");
        assert_eq!(req.method.as_deref(), Some("POST"));
        assert_eq!(
            req.url.as_deref(),
            Some("https://api.example/x?q=a+b&k%5B%5D=1")
        );
        assert_eq!(req.body.as_deref(), Some(&br#"{"\u00e9": 1}"#[..]));
        assert_eq!(req.content_type(), Some("application/json"));
        // Not a requests call: no request.
        assert!(requests("import requests\nprint('hi')\n").is_none());
        assert!(requests("x = {'a': 1}\n").is_none());
    }
}
