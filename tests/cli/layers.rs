//! The layer order of `src/` (docs/architecture.md, "Layers") holds: every `crate::` path in
//! the library's non-test code names a top-level module of a lower layer than its own, so
//! the modules cannot form a cycle. The order is read from docs/architecture.md itself, so the
//! document and the check cannot drift apart; a module missing from it fails too.
//!
//! Written here rather than taken from a crate: the whole need is to find `crate::` paths
//! outside comments, strings and `#[cfg(test)]` code, which a small lexer does; a Rust parser
//! would bring far more than that to the test build.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One import against the order.
#[derive(Debug, PartialEq)]
struct Violation {
    file: String,
    line: usize,
    from: String,
    to: String,
}

/// The layers of docs/architecture.md: each numbered line of its "Layers" section lists its
/// modules in backticks before a colon, lowest layer first.
fn layers_from_doc(doc: &str) -> Vec<Vec<String>> {
    let mut layers = Vec::new();
    let mut inside = false;
    for line in doc.lines() {
        if line.starts_with("## ") {
            inside = line.trim() == "## Layers";
            continue;
        }
        let Some((head, _)) = line.split_once(':') else {
            continue;
        };
        let numbered = head
            .split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if !inside || !numbered {
            continue;
        }
        let names: Vec<String> = head
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect();
        assert!(!names.is_empty(), "a layer line names no module: {line}");
        layers.push(names);
    }
    layers
}

/// `text` with comments, string and character literals blanked (newlines kept, so line
/// numbers stay), for finding paths in code only.
fn blank_non_code(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(b.len(), |n| i + n);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let (mut depth, mut j) = (1, i + 2);
                while j < b.len() && depth > 0 {
                    if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                        depth += 1;
                        j += 1;
                    } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                        depth -= 1;
                        j += 1;
                    }
                    j += 1;
                }
                blank(&mut out, i, j);
                i = j;
            }
            b'r' if (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let start = i + 2 + hashes;
                let end = text[start..]
                    .find(&close)
                    .map_or(b.len(), |n| start + n + close.len());
                blank(&mut out, i, end);
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i, (j + 1).min(b.len()));
                i = j + 1;
            }
            b'\'' => {
                // a character literal ('x', '\n', '\u{..}'), not a lifetime ('a)
                let rest = &text[i + 1..];
                let len = if rest.starts_with('\\') {
                    rest.find('\'').map(|n| n + 1)
                } else {
                    rest.chars()
                        .next()
                        .filter(|c| rest[c.len_utf8()..].starts_with('\''))
                        .map(|c| c.len_utf8() + 1)
                };
                match len {
                    Some(n) => {
                        blank(&mut out, i, i + 1 + n);
                        i += 1 + n;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8(out)
        .expect("blanking keeps UTF-8: multi-byte characters are only blanked whole")
}

/// Whether an attribute list just before `at` holds `#[cfg(test)]` (or `cfg(all(test, ..))`).
fn test_gated(code: &str, at: usize) -> bool {
    let before = code[..at].trim_end();
    let mut rest = before;
    // walk back over the attributes right before the item
    while rest.ends_with(']') {
        let Some(open) = rest.rfind("#[") else {
            return false;
        };
        let attr: String = rest[open..]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        if attr.starts_with("#[cfg(test)") || attr.starts_with("#[cfg(all(test") {
            return true;
        }
        rest = rest[..open].trim_end();
    }
    false
}

/// `code` with the bodies of `#[cfg(test)] mod x { ... }` blanked; and the names of the
/// test-only modules it declares in files of their own (`#[cfg(test)] mod x;`).
fn strip_test_modules(code: &str) -> (String, Vec<String>) {
    let mut out = code.as_bytes().to_vec();
    let mut file_mods = Vec::new();
    let mut search = 0;
    while let Some(n) = code[search..].find("mod ") {
        let at = search + n;
        search = at + 4;
        let word_start = at == 0 || !code.as_bytes()[at - 1].is_ascii_alphanumeric();
        if !word_start {
            continue;
        }
        let item_start = code[..at].rfind(['\n', ';', '}', ']']).map_or(0, |p| p + 1);
        if !test_gated(code, item_start) {
            continue;
        }
        let after = &code[at + 4..];
        let name: String = after
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let tail = after.trim_start()[name.len()..].trim_start();
        if tail.starts_with(';') {
            file_mods.push(name);
        } else if tail.starts_with('{') {
            let open = code.len() - tail.len();
            let (mut depth, mut j) = (0usize, open);
            for (k, c) in code[open..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            j = open + k + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            for c in &mut out[open..j] {
                if *c != b'\n' {
                    *c = b' ';
                }
            }
        }
    }
    (String::from_utf8(out).expect("UTF-8"), file_mods)
}

/// The top-level modules each `crate::` path (and `super::` path that climbs to the crate
/// root) in `code` names, with its 1-based line.
fn crate_paths(code: &str, depth: usize) -> Vec<(usize, String)> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = Vec::new();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        let boundary = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if boundary && code[i..].starts_with("crate::") {
            let rest = &code[i + 7..];
            if let Some(group) = rest.strip_prefix('{') {
                // `crate::{a::x, b}`: each entry's first segment, at the group's own level
                let (mut level, mut entry_start) = (0, true);
                for (k, c) in group.char_indices() {
                    match c {
                        '{' => level += 1,
                        '}' if level == 0 => break,
                        '}' => level -= 1,
                        ',' if level == 0 => entry_start = true,
                        c if entry_start && !c.is_whitespace() => {
                            entry_start = false;
                            found.push((line_of(i + 8 + k), ident(&group[k..])));
                        }
                        _ => {}
                    }
                }
            } else {
                found.push((line_of(i), ident(rest)));
            }
            i += 7;
            continue;
        }
        if boundary && code[i..].starts_with("super::") {
            let mut n = 0;
            let mut j = i;
            while code[j..].starts_with("super::") {
                n += 1;
                j += 7;
            }
            if n == depth {
                found.push((line_of(i), ident(&code[j..])));
            }
            i = j;
            continue;
        }
        i += 1;
    }
    found
}

/// The `.rs` files under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = entry.expect("a directory entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// The source of a module named `name` declared in `file` (`name.rs` or `name/mod.rs`
/// beside it, or inside the folder of a non-`mod.rs` file).
fn module_paths(file: &Path, name: &str) -> Vec<PathBuf> {
    let dir = file.parent().expect("a file has a folder");
    let stem = file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let base = if matches!(stem, "mod" | "lib" | "main") {
        dir.to_path_buf()
    } else {
        dir.join(stem)
    };
    vec![base.join(format!("{name}.rs")), base.join(name)]
}

/// Every edge between top-level modules in the non-test code under `src`: (from, to, file,
/// line), `file` relative to `src`'s parent.
fn module_edges(src: &Path) -> Vec<(String, String, String, usize)> {
    let files = rust_files(src);
    let mut test_only: Vec<PathBuf> = Vec::new();
    let mut stripped = BTreeMap::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let (code, test_mods) = strip_test_modules(&blank_non_code(&text));
        for m in test_mods {
            test_only.extend(module_paths(f, &m));
        }
        stripped.insert(f.clone(), code);
    }
    let root_name = src.parent().unwrap_or(src);
    let mut edges = Vec::new();
    for (f, code) in &stripped {
        if test_only.iter().any(|t| f == t || f.starts_with(t)) {
            continue;
        }
        let rel = f.strip_prefix(src).expect("under src");
        let parts: Vec<&str> = rel.iter().filter_map(|p| p.to_str()).collect();
        let top = parts[0].trim_end_matches(".rs");
        if matches!(top, "lib" | "main") {
            continue;
        }
        // the module's depth below the crate root: src/a.rs and src/a/mod.rs are 1
        let depth = parts.len() - usize::from(parts.last() == Some(&"mod.rs"));
        let shown = f.strip_prefix(root_name).unwrap_or(f).display().to_string();
        for (line, to) in crate_paths(code, depth) {
            if to != top {
                edges.push((top.to_string(), to, shown.clone(), line));
            }
        }
    }
    edges
}

/// The imports under `src` that go against `layers` (lowest first), and the top-level
/// modules of `src` that no layer lists (or that a layer lists and `src` lacks).
fn check(src: &Path, layers: &[Vec<String>]) -> (Vec<Violation>, Vec<String>) {
    let rank: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(i, l)| l.iter().map(move |m| (m.as_str(), i)))
        .collect();
    let mut tops = BTreeSet::new();
    for entry in std::fs::read_dir(src).expect("src/") {
        let p = entry.expect("an entry").path();
        let name = p
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        if (p.is_dir() || p.extension().is_some_and(|x| x == "rs"))
            && name != "lib"
            && name != "main"
        {
            tops.insert(name);
        }
    }
    let mut unplaced: Vec<String> = tops
        .iter()
        .filter(|t| !rank.contains_key(t.as_str()))
        .map(|t| format!("{t}: a top-level module in no layer"))
        .collect();
    unplaced.extend(
        rank.keys()
            .filter(|m| !tops.contains(**m))
            .map(|m| format!("{m}: listed in a layer, but src/ has no such module")),
    );
    let mut bad = Vec::new();
    for (from, to, file, line) in module_edges(src) {
        let (Some(a), Some(b)) = (rank.get(from.as_str()), rank.get(to.as_str())) else {
            continue;
        };
        if b >= a {
            bad.push(Violation {
                file,
                line,
                from,
                to,
            });
        }
    }
    (bad, unplaced)
}

fn describe(v: &Violation, layers: &[Vec<String>]) -> String {
    let layer = |m: &str| {
        layers
            .iter()
            .position(|l| l.iter().any(|x| x == m))
            .map_or(0, |i| i + 1)
    };
    format!(
        "{}:{}: `{}` (layer {}) imports `{}` (layer {}): an import must go to a lower layer",
        v.file,
        v.line,
        v.from,
        layer(&v.from),
        v.to,
        layer(&v.to)
    )
}

fn project() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_import_goes_to_a_lower_layer() {
    let doc = std::fs::read_to_string(project().join("docs/architecture.md"))
        .expect("docs/architecture.md");
    let layers = layers_from_doc(&doc);
    assert!(
        layers.len() >= 5,
        "docs/architecture.md lists too few layers: {layers:?}"
    );
    let (bad, unplaced) = check(&project().join("src"), &layers);
    let mut problems: Vec<String> = bad.iter().map(|v| describe(v, &layers)).collect();
    problems.extend(unplaced);
    assert!(
        problems.is_empty(),
        "the layer order of docs/architecture.md is broken:\n{}",
        problems.join("\n")
    );
}

/// The graph between top-level modules has no cycle, whatever the document says: a cycle is
/// printed with the files and lines of its edges.
#[test]
fn the_module_graph_has_no_cycle() {
    let edges = module_edges(&project().join("src"));
    let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (from, to, _, _) in &edges {
        graph.entry(from).or_default().insert(to);
    }
    // repeatedly remove the modules nothing left imports from; what remains is in cycles
    let mut left: BTreeSet<&str> = graph.keys().copied().collect();
    loop {
        let sinks: Vec<&str> = left
            .iter()
            .copied()
            .filter(|m| {
                graph
                    .get(m)
                    .is_none_or(|to| to.iter().all(|t| !left.contains(t)))
            })
            .collect();
        if sinks.is_empty() {
            break;
        }
        for s in sinks {
            left.remove(s);
        }
    }
    let cyclic: Vec<String> = edges
        .iter()
        .filter(|(f, t, _, _)| left.contains(f.as_str()) && left.contains(t.as_str()))
        .map(|(f, t, file, line)| format!("{file}:{line}: {f} -> {t}"))
        .collect();
    assert!(
        cyclic.is_empty(),
        "import cycles among {left:?}:\n{}",
        cyclic.join("\n")
    );
}

/// The check itself, on a small tree: an upward import fails naming its file and line, while
/// the same path in a comment, a string, a test module or a test-only file does not count.
#[test]
fn an_upward_import_is_named_with_its_file_and_line() {
    let dir = std::env::temp_dir().join(format!("rightsize-layers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("high")).unwrap();
    let write = |p: &str, s: &str| std::fs::write(src.join(p), s).unwrap();
    write("lib.rs", "pub mod high;\npub mod low;\npub mod leaf;\n");
    write("leaf.rs", "pub struct L;\n");
    write(
        "low.rs",
        "//! uses crate::high in a comment only\nuse crate::leaf::L;\nfn f() -> &'static str { \"crate::high\" }\n\
         fn g(c: char) -> bool { c == '{' }\nuse crate::high::H;\n\
         #[cfg(test)]\nmod tests {\n    use crate::high::H;\n}\n#[cfg(test)]\nmod checks;\n",
    );
    write(
        "high/mod.rs",
        "pub mod part;\npub struct H;\nuse crate::{leaf::L, low};\n",
    );
    write("high/part.rs", "use super::super::low::f;\n");
    std::fs::create_dir_all(src.join("low")).unwrap();
    write("low/checks.rs", "use crate::high::H;\n");
    let layers = layers_from_doc(
        "# x\n## Layers\n1. `leaf`: the leaf\n2. `low`: above it\n3. `high`: the top\n## Other\n4. `nope`: not a layer\n",
    );
    assert_eq!(layers, vec![vec!["leaf"], vec!["low"], vec!["high"]]);
    let (bad, unplaced) = check(&src, &layers);
    assert_eq!(unplaced, Vec::<String>::new());
    assert_eq!(
        bad,
        vec![Violation {
            file: "src/low.rs".into(),
            line: 5,
            from: "low".into(),
            to: "high".into(),
        }]
    );
    assert_eq!(
        describe(&bad[0], &layers),
        "src/low.rs:5: `low` (layer 2) imports `high` (layer 3): an import must go to a lower layer"
    );
    // a module the document does not place is named too
    let (_, unplaced) = check(&src, &layers[..2]);
    assert_eq!(unplaced, vec!["high: a top-level module in no layer"]);
    let _ = std::fs::remove_dir_all(&dir);
}
