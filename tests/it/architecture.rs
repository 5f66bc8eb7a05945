//! The module graph read from the source: which module's code names which other module
//! (`crate::…` paths and `super::…` paths, comments and `#[cfg(test)]` items left out), and the
//! cycles in it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `src/`, with its module path (`capture::http`, `codec`).
fn modules() -> Vec<(String, PathBuf)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).expect("a source folder") {
            let p = e.expect("an entry").path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&src).expect("under src").with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            (parts.join("::"), p)
        })
        .collect()
}

/// `source` without comments and without the items `#[cfg(test)]` marks.
fn code_of(source: &str) -> String {
    let no_comments: String = source
        .lines()
        .map(|l| match l.find("//") {
            // A `//` inside a string (a URL) cuts nothing that names a module.
            Some(at) => &l[..at],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = String::new();
    let mut rest = no_comments.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        // The item ends at `;` before any brace, or at the brace that closes its first one.
        let semi = after.find(';');
        let open = after.find('{');
        let end = match (open, semi) {
            (Some(o), Some(s)) if s < o => s + 1,
            (Some(o), _) => {
                let mut depth = 0usize;
                let mut end = after.len();
                for (i, c) in after[o..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = o + i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, Some(s)) => s + 1,
            (None, None) => after.len(),
        };
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The module paths a piece of code names after `prefix` (`crate::` or `super::`), with a
/// brace group expanded one level (`use super::{a, b::c}` names `a` and `b::c`; a nested group
/// names its head, `e::{f, g}` names `e`).
fn named_after(code: &str, prefix: &str) -> Vec<String> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find(prefix) {
        let start = from + at + prefix.len();
        let before = code[..from + at].chars().next_back();
        let len = code[start..]
            .find(|c: char| !(ident(c) || c == ':'))
            .unwrap_or(code.len() - start);
        from = start + len;
        if before.is_some_and(ident) {
            continue;
        }
        let head = code[start..start + len].trim_end_matches(':');
        let group = code[start + len..].starts_with('{')
            && (len == 0 || code[start..start + len].ends_with("::"));
        if !group {
            out.push(head.to_string());
            continue;
        }
        // A group: its items, split at its own commas.
        let mut depth = 0usize;
        let mut items = vec![String::new()];
        for (i, c) in code[start + len..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 1 => items.push(String::new()),
                _ => {}
            }
            if depth == 0 {
                from = start + len + i + 1;
                break;
            }
            if depth > 1 || (c != '{' && c != ',') {
                items.last_mut().expect("an item").push(c);
            }
        }
        for item in items {
            let item = item.split(" as ").next().unwrap_or("").trim();
            let item = item.split('{').next().unwrap_or("").trim_end_matches(':');
            if !item.is_empty() && item != "self" {
                out.push(if head.is_empty() {
                    item.to_string()
                } else {
                    format!("{head}::{item}")
                });
            }
        }
    }
    out
}

/// The module graph cut at `depth` path segments: an edge from each module to each other
/// module its code names (neither inside the other).
fn graph(depth: usize) -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules();
    let names: BTreeSet<String> = mods.iter().map(|(m, _)| m.clone()).collect();
    let resolve = |path: &str| -> Option<String> {
        let parts: Vec<&str> = path.split("::").collect();
        (1..=parts.len())
            .rev()
            .map(|k| parts[..k].join("::"))
            .find(|m| names.contains(m))
    };
    let cut = |m: &str| m.split("::").take(depth).collect::<Vec<_>>().join("::");
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, path) in &mods {
        let code = code_of(&std::fs::read_to_string(path).expect("a source file"));
        // `super` of `a::b` is `a`, whether `a::b` is `a/b.rs` or `a/b/mod.rs`.
        let parent: Vec<&str> = {
            let mut p: Vec<&str> = module.split("::").collect();
            p.pop();
            p
        };
        let mut targets: Vec<String> = named_after(&code, "crate::")
            .iter()
            .filter_map(|s| resolve(s))
            .collect();
        targets.extend(named_after(&code, "super::").iter().filter_map(|s| {
            let mut full = parent.clone();
            full.extend(s.split("::"));
            resolve(&full.join("::"))
        }));
        let a = cut(module);
        for t in targets {
            let b = cut(&t);
            let nested =
                a == b || b.starts_with(&format!("{a}::")) || a.starts_with(&format!("{b}::"));
            if !nested && !a.is_empty() && !b.is_empty() {
                edges.entry(a.clone()).or_default().insert(b);
            }
        }
    }
    edges
}

/// The strongly connected components of more than one module (Tarjan's algorithm).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        next: usize,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on.insert(v);
        let edges = s.edges;
        for w in edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn the_top_level_modules_form_no_cycle() {
    // model and codec at the bottom, capture and profile above them, pipeline, workspace, the
    // faces (cli, gui) on top: a module never names one that names it back.
    let g = graph(1);
    assert!(g.get("codec").is_some_and(|t| t.contains("model")), "{g:?}");
    assert_eq!(cycles(&g), Vec::<BTreeSet<String>>::new(), "{g:?}");
}

#[test]
fn no_module_forms_a_cycle_at_any_depth() {
    // File by file: `capture`'s payload types sit on its ground floor (`payload.rs`) below the
    // peeling table and the readers, the well-known types' names below the protobuf decoder and
    // encoder (`wkt.rs`), schema errors below protoc's runner (`error.rs`), the plot helpers
    // below the profiler's charts and tables (`plot.rs`).
    let g = graph(usize::MAX);
    let named: usize = g.values().map(BTreeSet::len).sum();
    assert!(named > 300, "{named} edges: the paths are read");
    assert!(
        g.get("capture::layers")
            .is_some_and(|t| t.contains("capture::payload") && t.contains("capture::har")),
        "brace groups are read: {:?}",
        g.get("capture::layers")
    );
    assert_eq!(cycles(&g), Vec::<BTreeSet<String>>::new());
}

#[test]
fn paths_are_read_with_their_groups() {
    let code = "use super::{a, b::c as d, e::{f, g}};\nlet x = crate::m::n(1);\nfoo_super::x;\n";
    assert_eq!(named_after(code, "super::"), ["a", "b::c", "e"]);
    assert_eq!(named_after(code, "crate::"), ["m::n"]);
    assert_eq!(
        named_after("use super::x::{y, z};", "super::"),
        ["x::y", "x::z"]
    );
}

#[test]
fn the_well_known_types_sit_below_both_protobuf_directions() {
    // `dynamic/wkt.rs` names the google.protobuf.* types for the decoder, the encoder and the
    // proto3 JSON writers and names none of them; how each direction reads or writes the types
    // lives inside that direction (`decode/wkt.rs`, `encode/wkt.rs`), and neither direction
    // names the other.
    let g = graph(usize::MAX);
    let dynamic = "codec::protobuf::dynamic";
    let leaf = format!("{dynamic}::wkt");
    let below: Vec<&String> = g
        .get(&leaf)
        .into_iter()
        .flatten()
        .filter(|t| t.starts_with(dynamic))
        .collect();
    assert!(below.is_empty(), "{leaf} names {below:?}");
    for (side, other) in [("decode", "encode"), ("encode", "decode")] {
        let reads = g.get(&format!("{dynamic}::{side}::wkt"));
        assert!(
            reads.is_some_and(|t| t.contains(&leaf)),
            "{side}/wkt.rs is read: {reads:?}"
        );
        for module in [
            format!("{dynamic}::{side}"),
            format!("{dynamic}::{side}::wkt"),
        ] {
            let named = g.get(&module);
            assert!(
                !named.is_some_and(|t| t
                    .iter()
                    .any(|t| t.starts_with(&format!("{dynamic}::{other}")))),
                "{module} names {other}: {named:?}"
            );
        }
    }
}

/// `source` with the text of comments, strings and character literals blanked out (line breaks
/// kept), so braces and `fn` in them count for nothing.
fn masked(source: &str) -> String {
    let s: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        let next = s.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < s.len() && s[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0usize;
            while i < s.len() {
                if s[i] == '/' && s.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if s[i] == '*' && s.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(s[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('"' | '#')) && !ident_before(&s, i) {
            // A raw string: r"…", r#"…"#; its end is a quote and as many hashes.
            let hashes = s[i + 1..].iter().take_while(|&&h| h == '#').count();
            if s.get(i + 1 + hashes) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let end: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let body_start = i + 2 + hashes;
            let rest: String = s[body_start..].iter().collect();
            let body_len = rest
                .find(&end)
                .map_or(rest.len(), |at| rest[..at].chars().count());
            out.push('"');
            out.extend(
                s[body_start..body_start + body_len]
                    .iter()
                    .map(|&c| blank(c)),
            );
            out.push('"');
            i = (body_start + body_len + end.chars().count()).min(s.len());
            out.extend(std::iter::repeat_n(' ', 2 * hashes));
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < s.len() && s[i] != '"' {
                if s[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < s.len() {
                    out.push(blank(s[i]));
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{7f}') or a lifetime ('a).
            let len = if next == Some('\\') {
                s[i + 2..].iter().position(|&q| q == '\'').map(|at| at + 3)
            } else if s.get(i + 2) == Some(&'\'') {
                Some(3)
            } else {
                None
            };
            match len {
                Some(len) => {
                    out.push_str(&" ".repeat(len));
                    i += len;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Whether the character before `at` continues an identifier (so `r` at `at` is not a raw
/// string's prefix but the end of a name like `for`).
fn ident_before(s: &[char], at: usize) -> bool {
    at > 0 && (s[at - 1].is_alphanumeric() || s[at - 1] == '_') && s[at - 1] != 'b'
        || at > 1 && s[at - 1] == 'b' && (s[at - 2].is_alphanumeric() || s[at - 2] == '_')
}

/// The functions of `code` (masked, test items left out) with a body, as (name, first line,
/// length in lines from the `fn` line to its closing brace).
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("fn ") {
        let start = from + at;
        from = start + 3;
        if start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
            continue;
        }
        let name: String = code[from..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        let (Some(open), semi) = (code[from..].find('{'), code[from..].find(';')) else {
            continue;
        };
        if semi.is_some_and(|s| s < open) {
            continue; // a declaration without a body
        }
        let mut depth = 0usize;
        let mut end = code.len();
        for (i, c) in code[from + open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = from + open + i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let line = code[..start].matches('\n').count() + 1;
        let lines = code[start..end].matches('\n').count() + 1;
        out.push((name, line, lines));
        // Functions inside this one are counted as part of it.
        from = end;
    }
    out
}

/// The longest a function outside tests may be, in lines.
const LONGEST_FUNCTION: usize = 120;

/// Functions still longer than [`LONGEST_FUNCTION`], to be split into their steps (module path,
/// function name). No function joins this list: it only shrinks, and the test fails when one
/// on it is split without being taken off.
const NOT_YET_SPLIT: &[(&str, &str)] = &[];

#[test]
fn no_function_outside_tests_is_longer_than_120_lines() {
    let mut long = Vec::new();
    let mut listed_seen = BTreeSet::new();
    for (module, path) in modules() {
        let source = std::fs::read_to_string(&path).expect("a source file");
        let code = code_of(&masked(&source));
        for (name, line, lines) in functions(&code) {
            if lines <= LONGEST_FUNCTION {
                continue;
            }
            if NOT_YET_SPLIT
                .iter()
                .any(|(m, f)| *m == module && *f == name)
            {
                listed_seen.insert((module.clone(), name));
                continue;
            }
            long.push(format!("{module}::{name} (line {line}): {lines} lines"));
        }
    }
    assert!(
        long.is_empty(),
        "functions over {LONGEST_FUNCTION} lines:\n{}",
        long.join("\n")
    );
    // Every function listed is still there and still long (the list cannot go stale).
    for (module, name) in NOT_YET_SPLIT {
        assert!(
            listed_seen.contains(&(module.to_string(), name.to_string())),
            "{module}::{name} is no longer over {LONGEST_FUNCTION} lines: take it off NOT_YET_SPLIT"
        );
    }
}

#[test]
fn functions_are_measured_past_strings_comments_and_characters() {
    let source = "fn a() {\n    let s = \"}\"; // }\n    let c = '{';\n    let r = r#\"}\"#;\n}\n\
                  /* fn b() { */\nfn c<'x>(v: &'x str) -> &'x str {\n    v\n}\nfn d();\n";
    let code = code_of(&masked(source));
    assert_eq!(
        functions(&code),
        [("a".to_string(), 1, 5), ("c".to_string(), 7, 3)]
    );
}

/// The public functions of `code` (masked, test items left out) whose error type is `String`,
/// as (name, first line). A function is public when it is `pub` without a restriction
/// (`pub(crate)`, `pub(super)` are not); its signature may run over several lines. The return
/// type is `Result<…, String>` by any path to `Result` or `String` (`std::result::Result`,
/// `std::string::String`).
fn string_errors(code: &str) -> Vec<(String, usize)> {
    let bytes = code.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("pub") {
        let start = from + at;
        from = start + 3;
        if start > 0 && ident(bytes[start - 1]) || bytes.get(from).copied().is_some_and(ident) {
            continue;
        }
        // `pub`, then qualifiers, then `fn`; `pub(crate)` and items other than functions stop.
        let mut rest = code[from..].trim_start();
        if !code[from..].starts_with(char::is_whitespace) {
            continue;
        }
        for qualifier in ["const ", "async ", "unsafe ", "extern \"C\" ", "extern "] {
            if let Some(after) = rest.strip_prefix(qualifier) {
                rest = after.trim_start();
            }
        }
        let Some(after_fn) = rest.strip_prefix("fn ") else {
            continue;
        };
        let name: String = after_fn
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // The signature ends at the body's `{` or the declaration's `;` outside brackets
        // (`[u8; 4]` holds one).
        let mut depth = 0usize;
        let mut signature = String::new();
        for c in after_fn.chars() {
            match c {
                '(' | '[' => depth += 1,
                ')' | ']' => depth = depth.saturating_sub(1),
                '{' | ';' if depth == 0 => break,
                _ => {}
            }
            signature.push(c);
        }
        if returns_string_error(&signature) {
            out.push((name, code[..start].matches('\n').count() + 1));
        }
    }
    out
}

/// Whether `signature` (from the name to the body) returns `Result<_, String>`.
fn returns_string_error(signature: &str) -> bool {
    // The return type: after the `->` outside the parameters' brackets, before any `where`.
    let mut depth = 0usize;
    let mut arrow = None;
    let chars: Vec<char> = signature.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            '-' if depth == 0 && chars.get(i + 1) == Some(&'>') => {
                arrow = Some(i + 2);
                break;
            }
            _ => {}
        }
    }
    let Some(arrow) = arrow else {
        return false;
    };
    let ret: String = chars[arrow..].iter().collect();
    let ret: String = ret
        .split_whitespace()
        .take_while(|word| *word != "where")
        .collect();
    let Some((head, args)) = ret.split_once('<') else {
        return false;
    };
    let Some(args) = args.strip_suffix('>') else {
        return false;
    };
    if !matches!(
        head,
        "Result" | "std::result::Result" | "core::result::Result" | "::std::result::Result"
    ) {
        return false;
    }
    // The type's arguments, split at its own commas (a trailing one ends none).
    let mut depth = 0usize;
    let mut split = vec![String::new()];
    for c in args.chars() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                split.push(String::new());
                continue;
            }
            _ => {}
        }
        split.last_mut().expect("an argument").push(c);
    }
    split.retain(|a| !a.is_empty());
    split.len() == 2
        && matches!(
            split[1].as_str(),
            "String" | "std::string::String" | "alloc::string::String" | "::std::string::String"
        )
}

/// Public functions fail with an error type that says what failed (an enum or a struct with
/// `Display`, `std::error::Error` and the underlying error as its `source()`), not a `String`:
/// callers can tell the failures apart without reading the words, and the words stay the same.
#[test]
fn no_public_function_fails_with_a_string() {
    let mut found = Vec::new();
    for (module, path) in modules() {
        let source = std::fs::read_to_string(&path).expect("a source file");
        let code = code_of(&masked(&source));
        for (name, line) in string_errors(&code) {
            found.push(format!("{module}::{name} (line {line})"));
        }
    }
    assert!(
        found.is_empty(),
        "public functions returning Result<_, String> (give each an error type):\n{}",
        found.join("\n")
    );
}

#[test]
fn string_errors_are_found_over_several_lines_and_only_in_public_functions() {
    let source = "pub fn a(\n    x: &[u8; 4],\n) -> Result<\n    Vec<u8>,\n    String,\n> {\n    todo()\n}\n\
                  pub(crate) fn b() -> Result<(), String> {}\n\
                  fn c() -> Result<(), String> {}\n\
                  pub fn d() -> std::io::Result<String> {}\n\
                  pub fn e(f: impl Fn() -> Result<(), String>) -> Result<(), Error> {}\n\
                  pub async fn g<T>(t: T) -> std::result::Result<Option<T>, std::string::String>\n\
                  where\n    T: Clone,\n{}\n\
                  pub fn h() -> Result<String, Error> {}\n\
                  pub struct S(pub fn() -> Result<(), String>);\n\
                  #[cfg(test)]\nmod tests {\n    pub fn i() -> Result<(), String> {}\n}\n\
                  /// pub fn j() -> Result<(), String>\n\
                  pub fn k() -> Result<(), &'static str> { let s = \"pub fn l() -> Result<(), String> {\"; }\n";
    let code = code_of(&masked(source));
    assert_eq!(
        string_errors(&code),
        [("a".to_string(), 1), ("g".to_string(), 13)]
    );
}

/// A function that needs more than seven arguments groups them (a struct of what belongs
/// together, or a method on the state they share); clippy's limit is not switched off.
#[test]
fn no_function_allows_too_many_arguments() {
    let mut found = Vec::new();
    for (module, path) in modules() {
        let source = std::fs::read_to_string(&path).expect("a source file");
        let code = masked(&source);
        for (i, line) in code.lines().enumerate() {
            if line.contains("too_many_arguments") {
                found.push(format!("{module} (line {})", i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "clippy::too_many_arguments allowed in:\n{}",
        found.join("\n")
    );
}
