//! The layer order of `src/` (docs/architecture.md, "Layers") holds: every path in the
//! library's non-test code that leaves its top-level module names a module of a lower layer
//! than its own, so the modules cannot form a cycle. The order is read from
//! docs/architecture.md itself, so the document and the check cannot drift apart; a module
//! missing from it fails too. Inside each folder of `src/` the same holds without an order:
//! its files (child modules, a subfolder counting as one) may use one another, but never in
//! a cycle, which fails naming the files.
//!
//! Written here rather than taken from a crate: the whole need is to find module paths
//! (`crate::`, `super::`, `self::`, and names a `use` brought in) outside comments, strings
//! and `#[cfg(test)]` code, and follow them through the `use`s that re-export them, which a
//! small lexer does; a Rust parser would bring far more than that to the test build.

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

/// The end (just past its `]`) of the attribute that opens at `start`.
fn attr_end(code: &str, start: usize) -> Option<usize> {
    let mut depth = 0;
    for (k, c) in code[start..].char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(start + k + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The end of the item (or field, statement, arm) that starts at `from`: past its `;` or
/// `,`, or past the `}` that closes its body.
fn item_end(code: &str, from: usize) -> usize {
    let mut depth = 0i32;
    for (k, c) in code[from..].char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth < 0 {
                    return from + k;
                }
                if depth == 0 && c == '}' {
                    return from + k + 1;
                }
            }
            ';' | ',' if depth == 0 => return from + k + 1,
            _ => {}
        }
    }
    code.len()
}

/// A `#[cfg(test)]` module in a file of its own: its name and its `#[path]`, if it has one.
struct TestFile {
    name: String,
    path: Option<String>,
}

/// The name of the module `item` declares in a file of its own (`pub mod x;`), if it does.
fn file_module_name(item: &str) -> Option<String> {
    let mut rest = item.trim();
    if let Some(after) = rest.strip_prefix("pub") {
        rest = after.trim_start();
        if rest.starts_with('(') {
            rest = rest[rest.find(')')? + 1..].trim_start();
        }
    }
    let name = ident_at(rest.strip_prefix("mod ")?.trim_start(), 0);
    let tail = rest["mod ".len()..].trim_start()[name.len()..].trim();
    (tail == ";" && !name.is_empty()).then(|| name.to_string())
}

/// `code` (`text` through [`blank_non_code`]) with every `#[cfg(test)]` (or
/// `cfg(all(test, ..))`) item blanked: modules, functions, imports, fields; and the
/// test-only modules it declares in files of their own (`#[cfg(test)] mod x;`).
fn strip_test_items(text: &str, code: &str) -> (String, Vec<TestFile>) {
    let mut out = code.as_bytes().to_vec();
    let mut files = Vec::new();
    let mut search = 0;
    while let Some(n) = code[search..].find("#[") {
        let start = search + n;
        let Some(close) = attr_end(code, start) else {
            break;
        };
        search = close;
        let attr: String = code[start..close]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        if !(attr.starts_with("#[cfg(test)") || attr.starts_with("#[cfg(all(test")) {
            continue;
        }
        // the attributes after it, then the item they are on
        let (mut item, mut path) = (close, None);
        loop {
            item += code[item..].len() - code[item..].trim_start().len();
            if !code[item..].starts_with("#[") {
                break;
            }
            let end = attr_end(code, item).unwrap_or(code.len());
            let written = &text[item..end];
            if written
                .split('=')
                .next()
                .is_some_and(|a| a.contains("path"))
            {
                path = written.split('"').nth(1).map(str::to_string);
            }
            item = end;
        }
        let end = item_end(code, item);
        if let Some(name) = file_module_name(&code[item..end]) {
            files.push(TestFile { name, path });
        }
        for c in &mut out[start..end] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        search = end;
    }
    (String::from_utf8(out).expect("UTF-8"), files)
}

/// The identifier at `i` of `code` (empty if none starts there).
fn ident_at(code: &str, i: usize) -> &str {
    let rest = &code[i..];
    let n = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    if rest.starts_with(|c: char| c.is_ascii_digit()) {
        return "";
    }
    &rest[..n]
}

/// One path in code, as written (`crate`, `self`, `super` kept): where its last segment is,
/// its segments, the name a `use` of it brings in, whether it ends in `*`, whether it is in a
/// `use`.
#[derive(Debug, Clone)]
struct CodePath {
    at: usize,
    segs: Vec<String>,
    name: Option<String>,
    glob: bool,
    imported: bool,
}

/// Reads the path (or `use` tree) at `i` below `prefix`, pushing each path it ends in (a
/// group `a::{b, c::d}` gives two); returns where it ends.
fn use_tree(
    code: &str,
    i: usize,
    prefix: &[String],
    imported: bool,
    out: &mut Vec<CodePath>,
) -> usize {
    let ws = |j: usize| j + (code[j..].len() - code[j..].trim_start().len());
    let mut j = ws(i);
    if code[j..].starts_with('{') {
        j += 1;
        loop {
            j = ws(j);
            if j >= code.len() || code[j..].starts_with('}') {
                return (j + 1).min(code.len());
            }
            j = ws(use_tree(code, j, prefix, imported, out));
            if code[j..].starts_with(',') {
                j += 1;
            } else {
                return if code[j..].starts_with('}') { j + 1 } else { j };
            }
        }
    }
    let glob = code[j..].starts_with('*');
    let id = ident_at(code, j);
    if glob || id.is_empty() {
        // `a::*`, or a path that goes on with `<..>` (`Vec::<u8>::new`)
        if !prefix.is_empty() {
            out.push(CodePath {
                at: j,
                segs: prefix.to_vec(),
                name: prefix.last().cloned(),
                glob,
                imported,
            });
        }
        return j + usize::from(glob);
    }
    let mut segs = prefix.to_vec();
    segs.push(id.to_string());
    let after = j + id.len();
    if code[after..].starts_with("::") {
        return use_tree(code, after + 2, &segs, imported, out);
    }
    let (mut end, mut name) = (after, id.to_string());
    let next = ws(after);
    if imported && code[next..].starts_with("as ") {
        let k = ws(next + 2);
        name = ident_at(code, k).to_string();
        end = k + name.len();
    }
    if name == "self" {
        name = prefix.last().cloned().unwrap_or_default();
    }
    out.push(CodePath {
        at: j,
        segs,
        name: Some(name),
        glob: false,
        imported,
    });
    end
}

/// The paths in `code` (already blanked): every `use` tree, and every path of two or more
/// segments that does not go on from a value (`x.f::<T>()`) or another path.
fn code_paths(code: &str) -> Vec<CodePath> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let boundary = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        let id = if boundary { ident_at(code, i) } else { "" };
        if id.is_empty() {
            i += 1;
            continue;
        }
        let after = i + id.len();
        let before = code[..i].trim_end();
        let goes_on = before.ends_with("::") || (before.ends_with('.') && !before.ends_with(".."));
        i = if id == "use" {
            use_tree(code, after, &[], true, &mut out)
        } else if code[after..].starts_with("::") && !goes_on {
            use_tree(code, i, &[], false, &mut out)
        } else {
            after
        };
    }
    out
}

/// The inline modules (`mod name { .. }`) of `code`: each one's span and name.
fn inline_modules(code: &str) -> Vec<(usize, usize, String)> {
    let mut found = Vec::new();
    let mut search = 0;
    while let Some(n) = code[search..].find("mod ") {
        let at = search + n;
        search = at + 4;
        let prev = code.as_bytes()[at.saturating_sub(1)];
        if at > 0 && (prev.is_ascii_alphanumeric() || prev == b'_') {
            continue;
        }
        let name_at = search + (code[search..].len() - code[search..].trim_start().len());
        let name = ident_at(code, name_at);
        let open = name_at + name.len();
        let open = open + (code[open..].len() - code[open..].trim_start().len());
        if name.is_empty() || !code[open..].starts_with('{') {
            continue;
        }
        found.push((open, item_end(code, open), name.to_string()));
    }
    found
}

/// A non-test source file of `src/`: the path it is shown by, its module path, its code
/// (blanked), its inline modules and its paths.
struct Source {
    shown: String,
    module: Vec<String>,
    code: String,
    inline: Vec<(usize, usize, String)>,
    paths: Vec<CodePath>,
}

impl Source {
    /// The module a place in the file is in: the file's, or an inline module's inside it.
    fn scope_at(&self, at: usize) -> Vec<String> {
        let mut scope = self.module.clone();
        let mut inner: Vec<_> = self
            .inline
            .iter()
            .filter(|(from, to, _)| (*from..*to).contains(&at))
            .collect();
        inner.sort_by_key(|(from, _, _)| *from);
        scope.extend(inner.into_iter().map(|(_, _, name)| name.clone()));
        scope
    }

    fn line_of(&self, at: usize) -> usize {
        self.code[..at].matches('\n').count() + 1
    }
}

/// The module path of a file under `src` (`a/b.rs` and `a/b/mod.rs` are `[a, b]`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> = rel
        .iter()
        .filter_map(|p| p.to_str())
        .map(str::to_string)
        .collect();
    let last = parts.pop().unwrap_or_default();
    let root = parts.is_empty() && matches!(last.as_str(), "lib.rs" | "main.rs");
    if last != "mod.rs" && !root {
        parts.push(last.trim_end_matches(".rs").to_string());
    }
    parts
}

/// The non-test source files under `src` (test-only modules and the files they declare are
/// left out).
fn sources(src: &Path) -> Vec<Source> {
    let files = rust_files(src);
    let mut test_only: Vec<PathBuf> = Vec::new();
    let mut stripped = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let (code, test_files) = strip_test_items(&text, &blank_non_code(&text));
        for t in test_files {
            match t.path {
                Some(p) => test_only.push(f.parent().expect("a folder").join(p)),
                None => test_only.extend(module_paths(f, &t.name)),
            }
        }
        stripped.push((f.clone(), code));
    }
    let shown_from = src.parent().unwrap_or(src);
    stripped
        .into_iter()
        .filter(|(f, _)| !test_only.iter().any(|t| f == t || f.starts_with(t)))
        .map(|(f, code)| Source {
            shown: f
                .strip_prefix(shown_from)
                .unwrap_or(&f)
                .display()
                .to_string(),
            module: module_path(src, &f),
            inline: inline_modules(&code),
            paths: code_paths(&code),
            code,
        })
        .collect()
}

/// What the `use`s of one module bring in: each name to the path it stands for, and the
/// modules it takes everything from (`use a::*`).
#[derive(Default)]
struct Scope {
    names: BTreeMap<String, Vec<String>>,
    globs: Vec<Vec<String>>,
}

/// The modules of the crate (from its files) and what each module's `use`s bring in.
struct Tree {
    modules: BTreeSet<Vec<String>>,
    scopes: BTreeMap<Vec<String>, Scope>,
}

impl Tree {
    fn new(sources: &[Source]) -> Tree {
        let mut modules = BTreeSet::new();
        for s in sources {
            for n in 0..=s.module.len() {
                modules.insert(s.module[..n].to_vec());
            }
        }
        let mut tree = Tree {
            modules,
            scopes: BTreeMap::new(),
        };
        // twice: a `use` may go through a name another `use` brought in
        for _ in 0..2 {
            let mut scopes: BTreeMap<Vec<String>, Scope> = BTreeMap::new();
            for s in sources {
                for p in s.paths.iter().filter(|p| p.imported) {
                    let scope = s.scope_at(p.at);
                    let Some(target) = tree.absolute(&scope, &p.segs) else {
                        continue;
                    };
                    let entry = scopes.entry(scope).or_default();
                    match &p.name {
                        _ if p.glob => entry.globs.push(target),
                        Some(name) if name != "_" => {
                            entry.names.insert(name.clone(), target);
                        }
                        _ => {}
                    }
                }
            }
            tree.scopes = scopes;
        }
        tree
    }

    /// `segs` read in module `scope` as an absolute path: `crate::`, `self::` and `super::`
    /// paths, and a bare path whose first name is a module below `scope`, a name it imports,
    /// or one it takes from a glob.
    fn absolute(&self, scope: &[String], segs: &[String]) -> Option<Vec<String>> {
        let mut segs = segs.to_vec();
        if segs.len() > 1 && segs.last().is_some_and(|s| s == "self") {
            segs.pop();
        }
        let supers = segs.iter().take_while(|s| *s == "super").count();
        match segs.first()?.as_str() {
            "crate" => return Some(segs[1..].to_vec()),
            "self" => return Some([scope, &segs[1..]].concat()),
            "super" if supers <= scope.len() => {
                return Some([&scope[..scope.len() - supers], &segs[supers..]].concat())
            }
            "super" => return None,
            _ => {}
        }
        let within = |m: &[String]| {
            let mut child = m.to_vec();
            child.push(segs[0].clone());
            if self.modules.contains(&child) {
                return Some([m, &segs[..]].concat());
            }
            let target = self.scopes.get(m)?.names.get(&segs[0])?;
            Some([target.as_slice(), &segs[1..]].concat())
        };
        within(scope).or_else(|| self.scopes.get(scope)?.globs.iter().find_map(|g| within(g)))
    }

    /// `path` with a name a module imports from elsewhere replaced by what it imports (a
    /// re-export followed to its source), as far as modules go.
    fn canonical(&self, mut path: Vec<String>) -> Vec<String> {
        'follow: for _ in 0..16 {
            for k in 0..path.len() {
                if self.modules.contains(&path[..=k]) {
                    continue;
                }
                let module = &path[..k];
                let imported = self.scopes.get(module).and_then(|s| s.names.get(&path[k]));
                if let Some(target) = imported.filter(|t| t.as_slice() != &path[..=k]) {
                    path = [target.as_slice(), &path[k + 1..]].concat();
                    continue 'follow;
                }
                break;
            }
            break;
        }
        path
    }

    /// How a child of module `folder` is shown: `name.rs`, or `name/` if it has a folder.
    fn label(&self, folder: &[String], name: &str) -> String {
        let mut module = folder.to_vec();
        module.push(name.to_string());
        let has_children = self
            .modules
            .iter()
            .any(|m| m.len() > module.len() && m.starts_with(&module));
        if has_children {
            format!("{name}/")
        } else {
            format!("{name}.rs")
        }
    }
}

/// A use from one child of a folder of `src/` of another child of it: the folder (a module
/// path, empty for `src/` itself), the two children's names, where the use is written.
#[derive(Debug, Clone, PartialEq)]
struct Edge {
    folder: Vec<String>,
    from: String,
    to: String,
    file: String,
    line: usize,
}

/// Every edge between children of one module in the non-test code under `src`, and the
/// tree they were read against. A path counts both as written and followed through the
/// re-exports on its way, so a name a parent re-exports from a child leads to that child.
fn edges(src: &Path) -> (Tree, Vec<Edge>) {
    let sources = sources(src);
    let tree = Tree::new(&sources);
    let mut found = Vec::new();
    for s in &sources {
        for p in &s.paths {
            let Some(written) = tree.absolute(&s.scope_at(p.at), &p.segs) else {
                continue;
            };
            let followed = tree.canonical(written.clone());
            for target in [written, followed] {
                let shared = s.module.iter().zip(&target).take_while(|(a, b)| a == b);
                let n = shared.count();
                if n >= s.module.len() || n >= target.len() || !tree.modules.contains(&target[..=n])
                {
                    continue;
                }
                let edge = Edge {
                    folder: s.module[..n].to_vec(),
                    from: s.module[n].clone(),
                    to: target[n].clone(),
                    file: s.shown.clone(),
                    line: s.line_of(p.at),
                };
                if !found.contains(&edge) {
                    found.push(edge);
                }
            }
        }
    }
    (tree, found)
}

/// Every edge between top-level modules in the non-test code under `src`: (from, to, file,
/// line), `file` relative to `src`'s parent.
fn module_edges(src: &Path) -> Vec<(String, String, String, usize)> {
    edges(src)
        .1
        .into_iter()
        .filter(|e| e.folder.is_empty())
        .map(|e| (e.from, e.to, e.file, e.line))
        .collect()
}

/// The shortest cycle from `start` back to itself in `graph`, through `within` only.
fn shortest_cycle(
    graph: &BTreeMap<String, BTreeSet<String>>,
    start: &str,
    within: &BTreeSet<String>,
) -> Vec<String> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(at) = queue.pop_front() {
        for next in graph.get(at).into_iter().flatten() {
            if next.as_str() == start {
                let mut cycle = vec![start.to_string()];
                let mut back = at;
                while back != start {
                    cycle.push(back.to_string());
                    back = came_from[back];
                }
                cycle.push(start.to_string());
                cycle.reverse();
                return cycle;
            }
            if within.contains(next) && !came_from.contains_key(next.as_str()) {
                came_from.insert(next.as_str(), at);
                queue.push_back(next.as_str());
            }
        }
    }
    Vec::new()
}

/// The files `from` reaches in `graph` (itself only if through a cycle).
fn reach(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(at) = stack.pop() {
        for next in graph.get(&at).into_iter().flatten() {
            if seen.insert(next.clone()) {
                stack.push(next.clone());
            }
        }
    }
    seen
}

/// The cycles between the files of each folder of `src/` below the top level (whose modules
/// the layer order keeps apart), one message each: the folder and one cycle through its
/// files, then the others in the same knot if there are more, then where each use inside
/// the knot is written (its first place, and how many more there are).
fn sibling_cycles(src: &Path) -> Vec<String> {
    let (tree, all) = edges(src);
    let root = src.file_name().and_then(|n| n.to_str()).unwrap_or("src");
    let mut folders: BTreeMap<&[String], Vec<&Edge>> = BTreeMap::new();
    for e in all.iter().filter(|e| !e.folder.is_empty()) {
        folders.entry(&e.folder).or_default().push(e);
    }
    let mut messages = Vec::new();
    for (folder, edges) in folders {
        let shown = format!("{root}/{}/", folder.join("/"));
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for e in &edges {
            let from = tree.label(folder, &e.from);
            graph
                .entry(from)
                .or_default()
                .insert(tree.label(folder, &e.to));
        }
        let mut placed = BTreeSet::new();
        for file in graph.keys() {
            let reached = reach(&graph, file);
            if placed.contains(file) || !reached.contains(file) {
                continue;
            }
            let knot: BTreeSet<String> = reached
                .into_iter()
                .filter(|other| reach(&graph, other).contains(file))
                .collect();
            placed.extend(knot.iter().cloned());
            let cycle = shortest_cycle(&graph, file, &knot);
            let mut message = format!("{shown}: {}", cycle.join(" -> "));
            if knot.len() + 1 > cycle.len() {
                let names: Vec<&str> = knot.iter().map(String::as_str).collect();
                message += &format!(" (in a knot of {})", names.join(", "));
            }
            let mut pairs: BTreeMap<(String, String), Vec<&Edge>> = BTreeMap::new();
            for e in &edges {
                let pair = (tree.label(folder, &e.from), tree.label(folder, &e.to));
                if knot.contains(&pair.0) && knot.contains(&pair.1) {
                    pairs.entry(pair).or_default().push(e);
                }
            }
            for ((from, to), uses) in pairs {
                let more = match uses.len() - 1 {
                    0 => String::new(),
                    n => format!(" (and {n} more)"),
                };
                let (file, line) = (&uses[0].file, uses[0].line);
                message += &format!("\n    {file}:{line}: {from} uses {to}{more}");
            }
            messages.push(message);
        }
    }
    messages
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

/// No folder of `src/` has a cycle between its files: each is printed with its files and the
/// places of its uses.
#[test]
fn no_folder_has_a_cycle_between_its_files() {
    let cycles = sibling_cycles(&project().join("src"));
    assert!(
        cycles.is_empty(),
        "files of one folder use each other in a cycle:\n{}",
        cycles.join("\n")
    );
}

/// The folder check itself, on a small tree: two files that use each other (one through a
/// name the folder's `mod.rs` re-exports) are named with the places of their uses, and so is
/// a file and a subfolder, one node; a use in a comment, a string, `#[cfg(test)]` code or a
/// test-only file, and the `mod.rs` re-exporting its children, make no cycle.
#[test]
fn a_cycle_between_files_of_a_folder_is_named() {
    let dir = std::env::temp_dir().join(format!("rightsize-folders-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("sim/deep")).unwrap();
    let write = |p: &str, s: &str| std::fs::write(src.join(p), s).unwrap();
    write("lib.rs", "pub mod sim;\n");
    write(
        "sim/mod.rs",
        "mod a;\nmod b;\nmod c;\nmod deep;\nmod e;\npub use a::A;\nuse b::B;\n",
    );
    write("sim/a.rs", "pub struct A;\nuse super::b::B;\n");
    write(
        "sim/b.rs",
        "pub struct B;\n\nfn f() -> super::A {\n    super::A\n}\n",
    );
    write(
        "sim/c.rs",
        "use crate::sim::{a::A, deep::D};\n// super::e\nfn s() -> &'static str { \"super::e\" }\n\
         #[cfg(test)]\nfn t() {\n    super::e::f();\n}\n",
    );
    write(
        "sim/deep/mod.rs",
        "mod inner;\npub struct D;\n#[cfg(test)]\n#[path = \"deep_checks.rs\"]\nmod checks;\n",
    );
    write(
        "sim/deep/inner.rs",
        "fn f() -> crate::sim::c::C {\n    todo!()\n}\n",
    );
    write("sim/deep/deep_checks.rs", "use crate::sim::e;\n");
    write("sim/e.rs", "use super::c;\n");
    let mut cycles = sibling_cycles(&src);
    cycles.sort();
    assert_eq!(
        cycles,
        vec![
            "src/sim/: a.rs -> b.rs -> a.rs\n    \
             src/sim/a.rs:2: a.rs uses b.rs\n    \
             src/sim/b.rs:3: b.rs uses a.rs (and 1 more)",
            "src/sim/: c.rs -> deep/ -> c.rs\n    \
             src/sim/c.rs:1: c.rs uses deep/\n    \
             src/sim/deep/inner.rs:1: deep/ uses c.rs",
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
