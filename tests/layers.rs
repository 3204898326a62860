//! The crate's module layering (issue 40, item 4), checked over src/ as scripts/module-graph.py
//! checks it: no two files import each other, and no layer imports a higher one. The layers,
//! lowest first: decode (bytes → frames), source (files and live captures, tagging records with
//! decode's link type), analyze (with filter, nccl and correlate beside it), output, pipeline,
//! tui, cli; generate and synth stand apart, and only cli runs generate.
//!
//! A dependency is a `use` path or a `crate::…` / `super::…` / `self::…` path in code: comments
//! (doc links included) and the bodies of `#[cfg(test)] mod tests` are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Lowest first.
const LAYERS: &[&str] = &[
    "decode",
    "source",
    "analyze",
    "filter",
    "nccl",
    "correlate",
    "output",
    "pipeline",
    "tui",
    "cli",
];

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("src/ is readable") {
        let p = e.expect("a directory entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file under src/ (`src/analyze/flow.rs` → `analyze::flow`,
/// `src/decode/encap/mod.rs` → `decode::encap`, `src/lib.rs` → ``).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src/");
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|l| l == "mod" || l == "lib") {
        parts.pop();
    }
    parts.join("::")
}

/// The code of a file: without its `#[cfg(test)] mod tests` body and everything after it,
/// and without comments.
fn code(text: &str) -> String {
    let mut cut = text.len();
    let mut from = 0;
    while let Some(i) = text[from..].find("#[cfg(test)]") {
        let at = from + i;
        let rest = text[at + "#[cfg(test)]".len()..].trim_start();
        if rest.starts_with("mod tests") {
            cut = at;
            break;
        }
        from = at + 1;
    }
    text[..cut]
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths of a use tree (`a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`).
fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let mut depth = 0;
    let mut item = String::new();
    let mut items = Vec::new();
    for ch in tree.chars() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            items.push(std::mem::take(&mut item));
        } else {
            item.push(ch);
        }
    }
    items.push(item);
    for it in items {
        match (it.find('{'), it.rfind('}')) {
            (Some(i), Some(j)) if j > i => {
                expand(&format!("{prefix}{}", &it[..i]), &it[i + 1..j], out)
            }
            _ => out.push(format!("{prefix}{it}")),
        }
    }
}

/// Every path the code names: its `use` trees, and each `crate::…`, `super::…` or `self::…`
/// written in place.
fn paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let word = |i: usize| i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
    let mut from = 0;
    while let Some(i) = code[from..].find("use ") {
        let at = from + i;
        from = at + 4;
        if !word(at) {
            continue;
        }
        let Some(end) = code[from..].find(';') else {
            break;
        };
        let tree: String = code[from..from + end]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        expand("", &tree, &mut out);
    }
    for root in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(root) {
            let at = from + i;
            from = at + root.len();
            if !word(at) {
                continue;
            }
            let len = code[at..]
                .find(|c: char| {
                    !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == ':')
                })
                .unwrap_or(code.len() - at);
            out.push(code[at..at + len].trim_end_matches(':').to_string());
        }
    }
    out
}

/// The longest module of `mods` that `segs` starts with.
fn resolve(mods: &BTreeSet<String>, segs: &[String]) -> Option<String> {
    (1..=segs.len())
        .rev()
        .map(|n| segs[..n].join("::"))
        .find(|m| mods.contains(m))
}

/// Module → the modules it imports (not itself, not its ancestors).
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    // The binary (src/main.rs) uses the library by its name, not `crate::`.
    let modules: Vec<(String, PathBuf)> = files
        .into_iter()
        .filter(|f| f != &src.join("main.rs"))
        .map(|f| (module_of(&src, &f), f))
        .collect();
    let names: BTreeSet<String> = modules.iter().map(|(m, ..)| m.clone()).collect();
    let mut edges = BTreeMap::new();
    for (m, f) in &modules {
        let text = std::fs::read_to_string(f).expect("a source file is readable");
        let here: Vec<String> = m
            .split("::")
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        // `super` of module `a::b` is `a`, whether its file is `a/b.rs` or `a/b/mod.rs`.
        let mut deps = BTreeSet::new();
        for p in paths(&code(&text)) {
            let segs: Vec<&str> = p.split("::").collect();
            let full: Vec<String> = match segs[0] {
                "crate" => segs[1..].iter().map(|s| s.to_string()).collect(),
                "super" => {
                    let ups = segs.iter().take_while(|s| **s == "super").count();
                    let mut b = here.clone();
                    b.truncate(b.len().saturating_sub(ups));
                    b.extend(segs[ups..].iter().map(|s| s.to_string()));
                    b
                }
                "self" => {
                    let mut b = here.clone();
                    b.extend(segs[1..].iter().map(|s| s.to_string()));
                    b
                }
                _ => continue,
            };
            if let Some(r) = resolve(&names, &full)
                && r != *m
                && !m.starts_with(&format!("{r}::"))
            {
                deps.insert(r);
            }
        }
        edges.insert(m.clone(), deps);
    }
    edges
}

/// The top-level module of a module path.
fn top(m: &str) -> &str {
    m.split("::").next().unwrap_or(m)
}

#[test]
fn no_two_files_import_each_other() {
    let g = graph();
    let cycles: Vec<String> = g
        .iter()
        .flat_map(|(a, ds)| ds.iter().map(move |b| (a, b)))
        .filter(|(a, b)| a < b && g.get(*b).is_some_and(|d| d.contains(*a)))
        .map(|(a, b)| format!("{a} <-> {b}"))
        .collect();
    assert!(cycles.is_empty(), "module cycles: {cycles:#?}");
}

#[test]
fn no_layer_imports_a_higher_one() {
    let g = graph();
    let rank = |m: &str| LAYERS.iter().position(|l| *l == top(m));
    let up: Vec<String> = g
        .iter()
        .flat_map(|(a, ds)| ds.iter().map(move |b| (a, b)))
        .filter(|(a, b)| matches!((rank(a), rank(b)), (Some(x), Some(y)) if y > x))
        .map(|(a, b)| format!("{a} -> {b}"))
        .collect();
    assert!(
        up.is_empty(),
        "imports from a lower layer to a higher one: {up:#?}"
    );
}

#[test]
fn only_cli_runs_generate() {
    let g = graph();
    let users: Vec<String> = g
        .iter()
        .filter(|(a, ds)| {
            !matches!(top(a), "cli" | "generate") && ds.iter().any(|b| top(b) == "generate")
        })
        .map(|(a, _)| a.clone())
        .collect();
    assert!(users.is_empty(), "modules importing generate: {users:?}");
}

/// The checker itself: a `super::` path of a `mod.rs`, a nested use tree, a comment and a test
/// body (hand-written, not read from src/).
#[test]
fn the_checker_reads_paths_as_written() {
    let text = "use super::a::{b, c::{d, e}};\n// use crate::x;\nfn f() { crate::y::z(); }\n\
                #[cfg(test)]\nmod tests { use crate::w; }\n";
    let got = paths(&code(text));
    // The use tree's paths, then each path written in place (the tree's prefix among them).
    assert_eq!(
        got,
        [
            "super::a::b",
            "super::a::c::d",
            "super::a::c::e",
            "crate::y::z",
            "super::a"
        ]
    );
    let src = Path::new("src");
    assert_eq!(
        module_of(src, Path::new("src/decode/encap/mod.rs")),
        "decode::encap"
    );
    assert_eq!(
        module_of(src, Path::new("src/analyze/flow.rs")),
        "analyze::flow"
    );
    assert_eq!(module_of(src, Path::new("src/lib.rs")), "");
}
