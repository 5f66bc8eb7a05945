//! HTTPie command lines (`http [METHOD] URL [ITEM …]`, `https …`), as converters write them: the
//! words as bash reads them, options (`--raw`, `--form`, `--json`, `-a`), then request items by
//! their separator: `Header:value`, `name==query`, `field=text`, `field:=json`, `field@file`.
//! Data fields make a JSON object (HTTPie's default) or, with `--form`, a form body; nested
//! paths (`a[b][]`) build objects and arrays as HTTPie does.

use super::python::Py;
use super::{bash_words, form_pair, Request};

/// The item separators, longest first where two start at the same place.
const SEPARATORS: &[&str] = &[":=@", "=@", "==", ":=", "@", "=", ":"];

/// Most request items read from one command.
const MAX_ITEMS: usize = 4096;

/// The request an HTTPie command makes, or `None` when `text` is not one.
pub(super) fn httpie(text: &[u8]) -> Option<Request> {
    let (words, _) = bash_words(text);
    let mut words = words
        .into_iter()
        .map(|w| String::from_utf8_lossy(&w).into_owned());
    let program = words.next()?;
    let scheme = match program.as_str() {
        "http" => "http",
        "https" => "https",
        _ => return None,
    };
    let mut req = Request {
        kind: "HTTPie command",
        shell: "bash",
        ..Request::default()
    };
    let (options, positional) = read_options(words, &mut req)?;
    // An optional METHOD (letters only) before the URL.
    let mut rest = positional.into_iter().peekable();
    let first = rest.next()?;
    let (method, url) = if first.chars().all(|c| c.is_ascii_alphabetic())
        && rest.peek().is_some()
        && !first.contains(['.', ':', '/'])
    {
        (Some(first.to_ascii_uppercase()), rest.next()?)
    } else {
        (None, first)
    };
    let mut url = full_url(url, scheme);
    let items = read_items(rest, &mut req)?;
    if !items.query.is_empty() {
        url.push(if url.contains('?') { '&' } else { '?' });
        url.push_str(&items.query.join("&"));
    }
    add_body(&mut req, options, &items)?;
    let sends = req.body.is_some() || req.body_file.is_some();
    req.method = Some(method.unwrap_or_else(|| if sends { "POST" } else { "GET" }.into()));
    req.url = Some(url);
    Some(req)
}

/// What the command's options say about its body.
struct Options {
    /// `--form`: the data fields make a form body, not a JSON object.
    form: bool,
    /// `--raw`: the body as given.
    raw: Option<String>,
}

/// Reads the options in `words` (`-a`/`--auth` adds its Authorization header to `req`; those
/// the request does not need are skipped) and keeps the other words, the METHOD, URL and
/// request items. `None` past [`MAX_ITEMS`] of them.
fn read_options(
    words: impl Iterator<Item = String>,
    req: &mut Request,
) -> Option<(Options, Vec<String>)> {
    let (mut form, mut raw) = (false, None::<String>);
    let mut positional: Vec<String> = Vec::new();
    let mut pending: Option<String> = None;
    for w in words {
        if let Some(option) = pending.take() {
            match option.as_str() {
                "--raw" => raw = Some(w),
                "-a" | "--auth" => {
                    use base64::Engine;
                    let token = base64::engine::general_purpose::STANDARD.encode(&w);
                    req.headers
                        .push(("Authorization".into(), format!("Basic {token}")));
                }
                _ => {}
            }
            continue;
        }
        if w.starts_with('-') && positional.is_empty() || w.starts_with("--") {
            match w.as_str() {
                "--form" | "-f" => form = true,
                "--json" | "-j" => form = false,
                "--raw" | "-a" | "--auth" | "--auth-type" | "-A" | "--output" | "-o"
                | "--session" | "--verify" | "--cert" | "--cert-key" | "--proxy" | "--timeout"
                | "--print" | "-p" | "--pretty" | "--style" | "-s" => pending = Some(w),
                _ => {}
            }
            continue;
        }
        positional.push(w);
        if positional.len() > MAX_ITEMS {
            return None;
        }
    }
    Some((Options { form, raw }, positional))
}

/// The URL as HTTPie completes it: `:3000/path` is localhost, and a URL without a scheme takes
/// the program's (`http` or `https`).
fn full_url(url: String, scheme: &str) -> String {
    if let Some(port_path) = url.strip_prefix(':') {
        // `:3000/path` is localhost.
        let (port, path) = match port_path.find('/') {
            Some(at) => port_path.split_at(at),
            None => (port_path, ""),
        };
        format!("{scheme}://localhost:{port}{path}")
    } else if url.contains("://") {
        url
    } else {
        format!("{scheme}://{url}")
    }
}

/// What the request items give besides headers.
struct Items {
    /// `name==value` items, as query pairs.
    query: Vec<String>,
    /// The data fields (`field=text`, `field:=json`), as one object.
    fields: Py,
    /// Whether any item gives data (a field, or a file).
    has_data: bool,
}

/// Reads the request items: headers and a `field@file` go into `req`, a word that is no item
/// is left out with a warning. `None` when a field's path is not one.
fn read_items(items: impl Iterator<Item = String>, req: &mut Request) -> Option<Items> {
    let mut query = Vec::new();
    let mut fields = Py::Dict(Vec::new());
    let mut has_data = false;
    for item in items {
        let Some((key, sep, value)) = split_item(&item) else {
            req.warnings
                .push(format!("{item:?} is no request item; left out"));
            continue;
        };
        match sep {
            ":" => req.headers.push((key, value)),
            "==" => query.push(form_pair(&key, &value)),
            "=" => {
                has_data = true;
                set_path(&mut fields, &key, Py::Str(value))?;
            }
            ":=" => {
                has_data = true;
                set_path(&mut fields, &key, json_value(&value))?;
            }
            _ => {
                has_data = true;
                req.body_file = Some(value);
            }
        }
    }
    Some(Items {
        query,
        fields,
        has_data,
    })
}

/// Sets the body: `--raw`'s, else the data fields as a form (`--form`) or a JSON object, with
/// its Content-Type unless a header set one. A file's body is left to `req.body_file`.
fn add_body(req: &mut Request, options: Options, items: &Items) -> Option<()> {
    let set_type = |req: &mut Request, ct: &str| {
        if req.content_type().is_none() {
            req.headers.push(("Content-Type".into(), ct.into()));
        }
    };
    if let Some(raw) = options.raw {
        req.body = Some(raw.into_bytes());
    } else if items.has_data && req.body_file.is_none() {
        if options.form {
            let Py::Dict(entries) = &items.fields else {
                return None;
            };
            let body: Vec<String> = entries
                .iter()
                .map(|(k, v)| form_pair(&k.as_text(), &v.as_text()))
                .collect();
            req.body = Some(body.join("&").into_bytes());
            set_type(req, "application/x-www-form-urlencoded; charset=utf-8");
        } else {
            let mut body = String::new();
            items.fields.json(&mut body);
            req.body = Some(body.into_bytes());
            set_type(req, "application/json");
        }
    }
    Some(())
}

/// `(key, separator, value)` of a request item: the separator that starts first, the longest
/// of those that start there.
fn split_item(item: &str) -> Option<(String, &'static str, String)> {
    let (at, sep) = SEPARATORS
        .iter()
        .filter_map(|s| item.find(s).map(|at| (at, *s)))
        .min_by_key(|(at, s)| (*at, std::cmp::Reverse(s.len())))?;
    let key = &item[..at];
    if key.is_empty() {
        return None;
    }
    Some((key.to_string(), sep, item[at + sep.len()..].to_string()))
}

/// A `:=` value: JSON literals for what the request needs (`null`, `true`, `[]`, numbers),
/// anything else kept as written.
fn json_value(text: &str) -> Py {
    match text.trim() {
        "null" => Py::None,
        "true" => Py::Bool(true),
        "false" => Py::Bool(false),
        "[]" => Py::List(Vec::new()),
        "{}" => Py::Dict(Vec::new()),
        t if !t.is_empty() && t.parse::<f64>().is_ok() => Py::Num(t.to_string()),
        t => Py::Other(t.to_string()),
    }
}

/// Sets `path` (`name`, `a[b][c]`, `list[]` appending) in `root` to `value`, as HTTPie's nested
/// JSON does. `None` when the path is not one.
fn set_path(root: &mut Py, path: &str, value: Py) -> Option<()> {
    let (head, mut rest) = match path.find('[') {
        Some(at) if path.ends_with(']') => (&path[..at], &path[at..]),
        _ => (path, ""),
    };
    let mut keys: Vec<Option<String>> = vec![Some(head.to_string())];
    while let Some(inner) = rest.strip_prefix('[') {
        let close = inner.find(']')?;
        let key = &inner[..close];
        keys.push((!key.is_empty()).then(|| key.to_string()));
        rest = &inner[close + 1..];
        if keys.len() > 32 {
            return None;
        }
    }
    let mut node = root;
    for (i, key) in keys.iter().enumerate() {
        let last = i + 1 == keys.len();
        let next = if last {
            value.clone()
        } else if keys[i + 1].is_none() {
            Py::List(Vec::new())
        } else {
            Py::Dict(Vec::new())
        };
        node = match (node, key) {
            (Py::Dict(entries), Some(k)) => {
                let at = match entries.iter().position(|(n, _)| n.as_text() == *k) {
                    Some(at) if !last => at,
                    Some(at) => {
                        entries[at].1 = next;
                        at
                    }
                    None => {
                        entries.push((Py::Str(k.clone()), next));
                        entries.len() - 1
                    }
                };
                &mut entries[at].1
            }
            (Py::List(items), None) => {
                items.push(next);
                items.last_mut()?
            }
            _ => return None,
        };
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_by_their_separators() {
        assert_eq!(split_item("a:=1"), Some(("a".into(), ":=", "1".into())));
        assert_eq!(split_item("q==x=y"), Some(("q".into(), "==", "x=y".into())));
        assert_eq!(
            split_item("Cookie:a=b"),
            Some(("Cookie".into(), ":", "a=b".into()))
        );
        assert_eq!(split_item("=x"), None);
    }

    #[test]
    fn a_command_with_json_fields_a_query_and_a_header() {
        let req = httpie(
            b"http PUT :8080/x q==a\\ b X-Token:t name=Ada 'tags[]'=a 'tags[]'=b n:=3 ok:=true",
        )
        .expect("a request");
        assert_eq!(req.method.as_deref(), Some("PUT"));
        assert_eq!(req.url.as_deref(), Some("http://localhost:8080/x?q=a+b"));
        assert_eq!(
            req.body.as_deref(),
            Some(&br#"{"name": "Ada", "tags": ["a", "b"], "n": 3, "ok": true}"#[..])
        );
        assert_eq!(req.content_type(), Some("application/json"));
        let form = httpie(b"http --form example.org/post a=1 b=x\\ y").expect("a form");
        assert_eq!(form.method.as_deref(), Some("POST"));
        assert_eq!(form.url.as_deref(), Some("http://example.org/post"));
        assert_eq!(form.body.as_deref(), Some(&b"a=1&b=x+y"[..]));
        assert!(httpie(b"httpd -k start").is_none());
    }
}
