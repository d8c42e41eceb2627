//! The house's shape, checked: the `use crate::...`, `crate::x::`, `super::` and `self::` paths
//! of every file of `src/` make a module graph with no cycle between the top-level modules (the
//! wings) nor between the files of any folder, and without the arrows ARCHITECTURE.md says must
//! not exist ("Arrows that must not exist", mirrored by [`FORBIDDEN`] and [`RUNNER_FACE`]).
//! ARCHITECTURE.md names every crate and every engine file, and no function grows past
//! [`MAX_FN_LINES`] (the longest are printed). Static: reads the source tree, runs nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Wings that must never name other wings, and why. Mirrors ARCHITECTURE.md's table row for
/// row (the test checks that the document holds each row as written here).
const FORBIDDEN: &[(&str, &[&str], &str)] = &[
    (
        "plan",
        &["runner", "report", "serve", "lab", "multihost", "ceph", "fio", "s3"],
        "a plan is made before anything runs; everything else reads it",
    ),
    (
        "runner",
        &["report", "serve", "lab", "multihost", "ceph", "fio", "s3"],
        "the runner runs a plan and hands back results; who watches or prints them is above it",
    ),
    (
        "report",
        &["serve", "lab", "multihost", "ceph", "fio", "s3"],
        "pure translation of results into fiox-report's model",
    ),
    (
        "serve",
        &["report", "lab", "multihost", "ceph", "fio", "s3"],
        "figures are pushed in; the page kit is shared by the lab and live runs",
    ),
    ("lab", &["multihost", "ceph", "fio", "s3"], "the lab runs fiox as child processes and reads reports"),
    (
        "multihost",
        &["lab", "ceph", "fio"],
        "hosts run plans through the runner, not the front end (or a share of an S3 bench, through s3's remote face)",
    ),
    (
        "ceph",
        &["plan", "runner", "report", "serve", "lab", "multihost", "fio", "s3"],
        "the Ceph tools use the engines' Ceph clients; `fiox ceph` runs fiox as child processes",
    ),
    (
        "cli",
        &["plan", "runner", "report", "serve", "lab", "multihost", "ceph", "fio", "s3"],
        "the flag model is a leaf: every wing declares its flags as a table of it",
    ),
    (
        "s3",
        &["plan", "runner", "report", "multihost", "ceph", "fio"],
        "the S3 benchmark talks HTTP through fiox-engine's signer; it runs no job (its live page and --repeat-until are serve's and lab's)",
    ),
];

/// What code outside `runner/` may name inside it (paths below `crate::runner`); everything
/// else there is the runner's own business. Mirrors ARCHITECTURE.md's "runner's public face".
const RUNNER_FACE: &[&str] = &[
    "run",
    "prepare",
    "run_prepared",
    "Prepared",
    "RunObserver",
    "Interval",
    "StatusLine",
    "Diag",
    "STOP",
    "state_char",
    "eta",
    "trigger",
    "depth_search",
    "debug",
    "worker::WorkerResult",
    "logs::text_line",
    "logz::inflate",
];

/// The longest function of `src/` and `crates/*/src` may not grow past this (brace-matched
/// line count). Lower it as the long functions are cut, never raise it.
const MAX_FN_LINES: usize = 144;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The source with comments and the contents of string and character literals blanked out
/// (newlines kept, so line numbers still hold), so that neither paths nor braces are seen
/// where the compiler would not see them.
fn code_only(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |ch: char| if ch == '\n' { '\n' } else { ' ' };
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    while i < c.len() {
        let prev_ident = i > 0 && ident(c[i - 1]);
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(c[i]));
                    i += 1;
                }
            }
        } else if !prev_ident && (c[i] == 'r' || (c[i] == 'b' && c.get(i + 1) == Some(&'r'))) && {
            let mut j = i + if c[i] == 'b' { 2 } else { 1 };
            while c.get(j) == Some(&'#') {
                j += 1;
            }
            c.get(j) == Some(&'"')
        } {
            // A raw string: r"..." or r#"..."#, as many hashes closing as opening.
            let mut j = i + if c[i] == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while c[j] == '#' {
                hashes += 1;
                j += 1;
            }
            out.extend(std::iter::repeat_n(' ', j + 1 - i));
            i = j + 1;
            while i < c.len() {
                if c[i] == '"' && (0..hashes).all(|k| c.get(i + 1 + k) == Some(&'#')) {
                    out.extend(std::iter::repeat_n(' ', 1 + hashes));
                    i += 1 + hashes;
                    break;
                }
                out.push(blank(c[i]));
                i += 1;
            }
        } else if c[i] == '"' {
            out.push(' ');
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < c.len() {
                    out.push(blank(c[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c[i] == '\'' && (c.get(i + 1) == Some(&'\\') || c.get(i + 2) == Some(&'\'')) {
            // A character literal ('{', '\n', '\''); a lifetime ('a) has no closing quote.
            let mut j = i + 1;
            if c[j] == '\\' {
                j += 2;
            }
            while j < c.len() && c[j] != '\'' {
                j += 1;
            }
            out.extend(std::iter::repeat_n(' ', j + 1 - i));
            i = j + 1;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// The code before the file's unit tests (`#[cfg(test)] mod NAME {`, by convention last).
fn without_tests(code: &str) -> &str {
    let mut from = 0;
    while let Some(at) = code[from..].find("#[cfg(test)]") {
        let at = from + at;
        let rest = code[at + "#[cfg(test)]".len()..].trim_start();
        if rest.starts_with("mod ") && rest.split(['{', ';']).next().is_some_and(|h| !h.contains('(')) {
            let head = &rest[..rest.find(['{', ';']).unwrap_or(0) + 1];
            if head.ends_with('{') {
                return &code[..at];
            }
        }
        from = at + 1;
    }
    code
}

/// A source file as the graph sees it: its module path and the paths it names.
struct File {
    rel: String,
    module: Vec<String>,
    refs: Vec<Vec<String>>,
}

fn module_of(rel: &Path) -> Vec<String> {
    let mut m: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
    let last = m.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        m.push(stem.to_string());
    }
    m
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Parses a path (or a `use` tree) at `s[i..]`, the part after `PREFIX::`; returns each path it
/// names with the name it binds (last segment, `as` alias, or the prefix for `self`).
fn parse_tree(s: &[char], mut i: usize, prefix: Vec<String>, out: &mut Vec<(Vec<String>, String)>) -> usize {
    let skip_ws = |i: &mut usize| {
        while *i < s.len() && s[*i].is_whitespace() {
            *i += 1;
        }
    };
    let mut path = prefix;
    loop {
        skip_ws(&mut i);
        if i < s.len() && s[i] == '{' {
            i += 1;
            loop {
                skip_ws(&mut i);
                if i >= s.len() || s[i] == '}' {
                    return i + 1;
                }
                i = parse_tree(s, i, path.clone(), out);
                skip_ws(&mut i);
                if i < s.len() && s[i] == ',' {
                    i += 1;
                }
            }
        }
        if i < s.len() && s[i] == '*' {
            out.push((path.clone(), String::new()));
            return i + 1;
        }
        let start = i;
        while i < s.len() && is_ident(s[i]) {
            i += 1;
        }
        let seg: String = s[start..i].iter().collect();
        if seg.is_empty() {
            let name = path.last().cloned().unwrap_or_default();
            out.push((path, name));
            return i;
        }
        if seg == "self" {
            let name = path.last().cloned().unwrap_or_default();
            let (j, alias) = alias_at(s, i);
            out.push((path, alias.unwrap_or(name)));
            return j;
        }
        path.push(seg.clone());
        if s.get(i) == Some(&':') && s.get(i + 1) == Some(&':') {
            i += 2;
            continue;
        }
        let (j, alias) = alias_at(s, i);
        out.push((path, alias.unwrap_or(seg)));
        return j;
    }
}

/// ` as NAME` after a path, if there.
fn alias_at(s: &[char], i: usize) -> (usize, Option<String>) {
    let rest: String = s[i..(i + 64).min(s.len())].iter().collect();
    let t = rest.trim_start();
    if let Some(after) = t.strip_prefix("as ") {
        let name: String = after.trim_start().chars().take_while(|&c| is_ident(c)).collect();
        let consumed = rest.len() - t.len() + 3 + (after.len() - after.trim_start().len()) + name.len();
        return (i + consumed, Some(name));
    }
    (i, None)
}

fn read_src() -> (Vec<File>, BTreeSet<Vec<String>>) {
    let src = root().join("src");
    let mut paths = Vec::new();
    rs_files(&src, &mut paths);
    let modules: BTreeSet<Vec<String>> = paths
        .iter()
        .map(|p| module_of(p.strip_prefix(&src).unwrap()))
        .filter(|m| m.first().is_none_or(|f| f != "main"))
        .collect();
    let mut files = Vec::new();
    for p in &paths {
        let rel = p.strip_prefix(&src).unwrap();
        let module = module_of(rel);
        if module.first().is_some_and(|f| f == "main") {
            continue;
        }
        let text = std::fs::read_to_string(p).unwrap();
        let code = code_only(&text);
        let code: Vec<char> = without_tests(&code).chars().collect();
        let mut named = Vec::new();
        let mut i = 0;
        while i < code.len() {
            let boundary = i == 0 || !(is_ident(code[i - 1]) || code[i - 1] == ':');
            let at = |w: &str| boundary && code[i..].iter().take(w.len()).copied().eq(w.chars());
            if at("crate::") {
                i = parse_tree(&code, i + 7, Vec::new(), &mut named);
            } else if at("super::") || at("self::") {
                // Relative to the file's module (a mod.rs is its folder's module).
                let mut base = module.clone();
                let mut j = i;
                loop {
                    let w: String = code[j..(j + 7).min(code.len())].iter().collect();
                    if w == "super::" {
                        base.pop();
                        j += 7;
                    } else if w.starts_with("self::") {
                        j += 6;
                    } else {
                        break;
                    }
                }
                i = parse_tree(&code, j, base, &mut named);
            } else {
                i += 1;
            }
        }
        // Names bound to modules (`use crate::report::summary;`, `html::{self, ..}`): their
        // uses (`summary::build`) name paths too.
        let aliases: BTreeMap<String, Vec<String>> = named
            .iter()
            .filter(|(p, name)| !name.is_empty() && modules.contains(p) && !p.is_empty())
            .map(|(p, name)| (name.clone(), p.clone()))
            .collect();
        let mut refs: Vec<Vec<String>> = named.into_iter().map(|(p, _)| p).collect();
        for (name, target) in &aliases {
            let pat: Vec<char> = format!("{name}::").chars().collect();
            let mut i = 0;
            while i + pat.len() <= code.len() {
                let boundary = i == 0 || !(is_ident(code[i - 1]) || code[i - 1] == ':');
                if boundary && code[i..i + pat.len()] == pat[..] {
                    let mut more = Vec::new();
                    i = parse_tree(&code, i + pat.len(), target.clone(), &mut more);
                    refs.extend(more.into_iter().map(|(p, _)| p));
                } else {
                    i += 1;
                }
            }
        }
        files.push(File { rel: format!("src/{}", rel.display()), module, refs });
    }
    (files, modules)
}

/// A cycle in `edges`, if there is one (as the path around it).
fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        v: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(v.to_string(), 1);
        stack.push(v.to_string());
        for w in edges.get(v).into_iter().flatten() {
            match state.get(w.as_str()) {
                Some(1) => {
                    let from = stack.iter().position(|s| s == w).unwrap();
                    let mut cyc = stack[from..].to_vec();
                    cyc.push(w.clone());
                    return Some(cyc);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(w, edges, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(v.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for v in edges.keys() {
        if !state.contains_key(v) {
            if let Some(c) = visit(v, edges, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn src_imports_are_one_way() {
    let (files, modules) = read_src();
    let tops: BTreeSet<&str> = modules.iter().filter_map(|m| m.first().map(String::as_str)).collect();
    let mut problems = Vec::new();

    // (a) between the top-level modules (lib.rs, the root that declares them, aside).
    let mut top = BTreeMap::<String, BTreeSet<String>>::new();
    let mut why = BTreeMap::<(String, String), String>::new();
    for f in files.iter().filter(|f| !f.module.is_empty()) {
        for r in &f.refs {
            if let Some(to) = r.first().filter(|t| tops.contains(t.as_str()) && **t != f.module[0]) {
                top.entry(f.module[0].clone()).or_default().insert(to.clone());
                why.entry((f.module[0].clone(), to.clone()))
                    .or_insert_with(|| format!("{} names {}", f.rel, r.join("::")));
            }
        }
    }
    if let Some(c) = find_cycle(&top) {
        let arrows: Vec<String> = c.windows(2).map(|w| why[&(w[0].clone(), w[1].clone())].clone()).collect();
        problems.push(format!("cycle between top-level modules {}: {}", c.join(" -> "), arrows.join("; ")));
    }

    // (b) between the children (files and subfolders) of each folder; a folder's mod.rs
    // declares them all and stays out.
    let folders =
        modules.iter().filter(|m| !m.is_empty() && modules.iter().any(|o| o.len() == m.len() + 1 && o.starts_with(m)));
    for folder in folders {
        let n = folder.len();
        let children: BTreeSet<&String> =
            modules.iter().filter(|o| o.len() == n + 1 && o.starts_with(folder)).map(|o| &o[n]).collect();
        let mut edges = BTreeMap::<String, BTreeSet<String>>::new();
        let mut why = BTreeMap::<(String, String), String>::new();
        for f in files.iter().filter(|f| f.module.len() > n && f.module.starts_with(folder)) {
            let from = &f.module[n];
            for r in f.refs.iter().filter(|r| r.len() > n && r.starts_with(folder)) {
                if children.contains(&r[n]) && r[n] != *from {
                    edges.entry(from.clone()).or_default().insert(r[n].clone());
                    why.entry((from.clone(), r[n].clone()))
                        .or_insert_with(|| format!("{} names {}", f.rel, r.join("::")));
                }
            }
        }
        if let Some(c) = find_cycle(&edges) {
            let arrows: Vec<String> = c.windows(2).map(|w| why[&(w[0].clone(), w[1].clone())].clone()).collect();
            let name = folder.join("/");
            problems.push(format!("cycle between the files of src/{name}: {}: {}", c.join(" -> "), arrows.join("; ")));
        }
    }

    // (c) arrows ARCHITECTURE.md says must not exist.
    for (from, to, reason) in FORBIDDEN {
        assert!(tops.contains(from), "FORBIDDEN names '{from}', which is not a top-level module of src/");
        for t in *to {
            if let Some(w) = why.get(&(from.to_string(), t.to_string())) {
                problems.push(format!("forbidden arrow {from} -> {t} ({reason}): {w}"));
            }
        }
    }
    let face: Vec<Vec<&str>> = RUNNER_FACE.iter().map(|p| p.split("::").collect()).collect();
    for f in files.iter().filter(|f| f.module.first().is_some_and(|m| m != "runner")) {
        for r in f.refs.iter().filter(|r| r.len() > 1 && r[0] == "runner") {
            if !face.iter().any(|p| r.len() > p.len() && r[1..=p.len()].iter().zip(p).all(|(a, b)| a == b)) {
                problems.push(format!(
                    "{} names {}, which is not part of the runner's public face (RUNNER_FACE)",
                    f.rel,
                    r.join("::")
                ));
            }
        }
    }
    assert!(problems.is_empty(), "the module graph of src/:\n  {}", problems.join("\n  "));
}

#[test]
fn architecture_md_mirrors_the_tree() {
    let arch = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let mut missing = Vec::new();
    for (from, to, _) in FORBIDDEN {
        let cells: Vec<String> = to.iter().map(|t| format!("`{t}`")).collect();
        let row = format!("| `{from}` | {} |", cells.join(", "));
        if !arch.contains(&row) {
            missing.push(format!("the row of forbidden arrows {row}"));
        }
    }
    // The paragraph that starts with the face.
    let face: String = arch
        .lines()
        .skip_while(|l| !l.contains("runner's public face"))
        .take_while(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    missing.extend(
        RUNNER_FACE
            .iter()
            .filter(|p| !face.contains(&format!("`{p}`")))
            .map(|p| format!("`{p}` in the paragraph of the runner's public face")),
    );
    let mut crates: Vec<String> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    crates.sort();
    assert!(crates.len() >= 8, "crates/ holds {crates:?}");
    for c in &crates {
        if !arch.contains(&format!("crates/{c}")) {
            missing.push(format!("crates/{c}"));
        }
    }
    let mut engines = Vec::new();
    rs_files(&root().join("crates/engine/src/engines"), &mut engines);
    for e in engines.iter().filter(|e| e.parent().unwrap().ends_with("engines")) {
        let name = e.file_name().unwrap().to_string_lossy().into_owned();
        if name != "mod.rs" && !arch.contains(&format!("`{name}`")) {
            missing.push(format!("the engine file `{name}`"));
        }
    }
    // Every wing of src/ is described.
    for entry in std::fs::read_dir(root().join("src")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let shown = if name.ends_with(".rs") { format!("`{name}`") } else { format!("`src/{name}/`") };
        if !arch.contains(&shown) {
            missing.push(format!("src/ entry {shown}"));
        }
    }
    assert!(missing.is_empty(), "ARCHITECTURE.md does not name:\n  {}", missing.join("\n  "));
}

#[test]
fn src_has_few_top_level_entries() {
    let entries: Vec<String> = std::fs::read_dir(root().join("src"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        entries.len() <= 12,
        "src/ has {} entries, at most 12 (a wing, not a room, for something new): {entries:?}",
        entries.len()
    );
}

/// Each function's length in lines (signature to closing brace), longest first.
fn function_lengths() -> Vec<(usize, String)> {
    let mut paths = Vec::new();
    rs_files(&root().join("src"), &mut paths);
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    for c in &crates {
        rs_files(c, &mut paths);
    }
    let mut out = Vec::new();
    for p in &paths {
        let code = code_only(&std::fs::read_to_string(p).unwrap());
        let lines: Vec<&str> = code.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let Some(name) = fn_name(lines[i]) else {
                i += 1;
                continue;
            };
            // The body starts at the first `{` (unless a `;` ends a declaration first).
            let (mut depth, mut started, mut j) = (0i64, false, i);
            'scan: while j < lines.len() {
                for ch in lines[j].chars() {
                    match ch {
                        ';' if !started && depth == 0 => break 'scan,
                        '{' => {
                            depth += 1;
                            started = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                    if started && depth == 0 {
                        break 'scan;
                    }
                }
                j += 1;
            }
            if started {
                let rel = p.strip_prefix(root()).unwrap().display().to_string();
                out.push((j - i + 1, format!("{rel}:{} {name}", i + 1)));
                i = j + 1;
            } else {
                i += 1;
            }
        }
    }
    out.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    out
}

/// The function a line starts, if it starts one (`pub(crate) async unsafe fn name`).
fn fn_name(line: &str) -> Option<String> {
    let mut t = line.trim_start();
    if let Some(rest) = t.strip_prefix("pub") {
        t = rest.trim_start();
        if t.starts_with('(') {
            t = t[t.find(')')? + 1..].trim_start();
        }
    }
    for q in ["default ", "const ", "async ", "unsafe ", "extern \"C\" "] {
        t = t.strip_prefix(q).unwrap_or(t).trim_start();
    }
    let rest = t.strip_prefix("fn ")?;
    let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
    (!name.is_empty()).then_some(name)
}

#[test]
fn functions_do_not_grow() {
    let lengths = function_lengths();
    println!("longest functions of src/ and crates/*/src (at most {MAX_FN_LINES} lines):");
    for (n, f) in lengths.iter().take(10) {
        println!("  {n:4}  {f}");
    }
    let over: Vec<String> =
        lengths.iter().filter(|(n, _)| *n > MAX_FN_LINES).map(|(n, f)| format!("{f}: {n} lines")).collect();
    assert!(
        over.is_empty(),
        "functions longer than MAX_FN_LINES ({MAX_FN_LINES}); cut them into parts:\n  {}",
        over.join("\n  ")
    );
}

/// The reader itself: paths in strings, comments and unit tests are not arrows; `use` trees,
/// `self`, `super` and module aliases are.
#[test]
fn the_reader_sees_what_the_compiler_sees() {
    let code =
        code_only("let s = \"crate::a::b\"; // crate::c\n/* crate::d */ let c = '{'; let r = r#\"crate::e\"#;\n");
    assert!(!code.contains("crate::"), "{code}");
    assert!(!code.contains('{'), "{code}");
    let s: Vec<char> = "{plan, report::summary as sum, serve::html::{self, Page}};".chars().collect();
    let mut named = Vec::new();
    parse_tree(&s, 0, Vec::new(), &mut named);
    let got: Vec<(String, String)> = named.into_iter().map(|(p, n)| (p.join("::"), n)).collect();
    let want = [("plan", "plan"), ("report::summary", "sum"), ("serve::html", "html"), ("serve::html::Page", "Page")];
    assert_eq!(got, want.map(|(p, n)| (p.to_string(), n.to_string())));
    assert_eq!(without_tests("fn a() {}\n#[cfg(test)]\nmod tests {\n use crate::x;\n}\n"), "fn a() {}\n");
    assert_eq!(fn_name("    pub(crate) async fn run_plan("), Some("run_plan".into()));
    assert_eq!(fn_name("    let f = fn_name;"), None);
}
