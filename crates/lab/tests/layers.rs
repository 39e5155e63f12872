//! The lab's modules import one way (issue 25): each stage (a folder of src/) imports only the
//! stages before it, and no module reaches, through `crate::` or `super::` paths in its non-test
//! code, a module that reaches back to it. Also keeps every source file and function under the
//! size the project allows.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Most lines of one source file.
const MAX_FILE_LINES: usize = 620;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under src/, as its module path (`reproduce::claims`) and its text up to its
/// tests (a `#[cfg(test)]` line).
fn modules() -> BTreeMap<String, String> {
    fn walk(dir: &Path, prefix: &[String], out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
            if path.is_dir() {
                let mut p = prefix.to_vec();
                p.push(stem);
                walk(&path, &p, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let mut p = prefix.to_vec();
                if stem != "mod" && stem != "lib" {
                    p.push(stem);
                }
                let text = std::fs::read_to_string(&path).unwrap();
                let code = match text.find("#[cfg(test)]") {
                    Some(i) => text[..i].to_string(),
                    None => text,
                };
                out.insert(p.join("::"), code);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&src(), &[], &mut out);
    out
}

/// The modules `code` (of module `me`) names: the longest known module prefix of each
/// `crate::a::b::...` or `super::...` path, other than `me` itself and its ancestors.
fn imports(me: &str, code: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let parent: Vec<&str> = me.split("::").collect();
    for line in code.lines() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        for (i, _) in line
            .match_indices("crate::")
            .chain(line.match_indices("super::"))
        {
            let rest = &line[i..];
            let path: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
            if segs[0] == "crate" {
                segs.remove(0);
            } else {
                let ups = segs.iter().take_while(|s| **s == "super").count();
                let base = &parent[..parent.len().saturating_sub(ups)];
                segs = base
                    .iter()
                    .copied()
                    .chain(segs[ups..].iter().copied())
                    .collect();
            }
            for n in (1..=segs.len()).rev() {
                let m = segs[..n].join("::");
                if known.contains(&m) {
                    let ancestor = me == m || me.starts_with(&format!("{m}::"));
                    if !ancestor {
                        out.insert(m);
                    }
                    break;
                }
            }
        }
    }
    out
}

/// The import cycles: each strongly connected component of more than one module.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(m) = todo.pop() {
            for n in graph.get(&m).into_iter().flatten() {
                if seen.insert(n.clone()) {
                    todo.push(n.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for m in graph.keys() {
        if done.contains(m) || !reaches[m].contains(m) {
            continue;
        }
        let scc: Vec<String> = reaches[m]
            .iter()
            .filter(|n| reaches[*n].contains(m))
            .cloned()
            .collect();
        done.extend(scc.iter().cloned());
        out.push(scc);
    }
    out
}

#[test]
fn the_lab_modules_import_one_way() {
    let mods = modules();
    let known: BTreeSet<String> = mods.keys().filter(|k| !k.is_empty()).cloned().collect();
    let graph: BTreeMap<String, BTreeSet<String>> = mods
        .iter()
        .filter(|(k, _)| !k.is_empty())
        .map(|(k, code)| (k.clone(), imports(k, code, &known)))
        .collect();
    let found = cycles(&graph);
    let text: Vec<String> = found.iter().map(|c| c.join(" <-> ")).collect();
    assert!(found.is_empty(), "import cycles:\n{}", text.join("\n"));
}

/// The lab's stages, each a top-level module of src/, in pipeline order: a stage imports only
/// the stages before it (lib.rs says what each holds).
const STAGES: &[&str] = &[
    "input",
    "plan",
    "metric",
    "reproduce",
    "spec",
    "exec",
    "store",
    "svg",
    "results",
    "app",
];

#[test]
fn each_stage_imports_only_the_stages_before_it() {
    let mods = modules();
    let known: BTreeSet<String> = mods.keys().filter(|k| !k.is_empty()).cloned().collect();
    let stage = |m: &str| {
        let top = m.split("::").next().unwrap_or_default();
        STAGES.iter().position(|s| *s == top)
    };
    // src/ holds lib.rs and the stages' folders and nothing else.
    for m in &known {
        assert!(stage(m).is_some(), "`{m}` is in no stage of {STAGES:?}");
    }
    let mut against = Vec::new();
    for (m, code) in mods.iter().filter(|(k, _)| !k.is_empty()) {
        // A module's tests may reach further (they build whole runs).
        if m.ends_with("tests") {
            continue;
        }
        for n in imports(m, code, &known) {
            if stage(&n) > stage(m) {
                against.push(format!("{m} imports {n}"));
            }
        }
    }
    assert!(
        against.is_empty(),
        "imports against the stage order: {against:#?}"
    );
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let known: BTreeSet<String> = ["a", "b", "c", "b::x"].map(String::from).into();
    let mut graph = BTreeMap::new();
    graph.insert("a".into(), imports("a", "use crate::b::x::Y;", &known));
    graph.insert(
        "b::x".into(),
        imports("b::x", "use super::super::a;", &known),
    );
    graph.insert(
        "b".into(),
        imports("b", "use self::x; crate::c::f()", &known),
    );
    graph.insert("c".into(), BTreeSet::new());
    assert_eq!(graph["a"], ["b::x".to_string()].into());
    assert_eq!(cycles(&graph), vec![vec!["a".to_string(), "b::x".into()]]);
}

/// Every lab source file under `dir`, with its text.
fn source_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(source_files(&path));
        } else {
            let text = std::fs::read_to_string(&path).unwrap();
            out.push((path, text));
        }
    }
    out
}

#[test]
fn no_lab_source_file_is_over_the_size_the_project_allows() {
    let long: Vec<String> = source_files(&src())
        .into_iter()
        .filter_map(|(path, text)| {
            let n = text.lines().count();
            (n > MAX_FILE_LINES).then(|| format!("{} ({n} lines)", path.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_FILE_LINES} lines: {long:?}"
    );
}

/// Most lines of one function, from its `fn` line to its closing brace.
const MAX_FN_LINES: usize = 80;

/// The functions of `text` longer than `max` lines, as (name, first line, lines). A scanner over
/// the source: braces inside strings, character literals and comments do not count, a `fn`
/// followed by `;` before its body (a trait's declaration) has none, and `fn(` is a type.
fn long_functions(text: &str, max: usize) -> Vec<(String, usize, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let (mut line, mut depth, mut i) = (1, 0usize, 0);
    // A `fn` whose body has not opened yet (name, line, depth), and the open bodies.
    let mut pending: Option<(String, usize, usize)> = None;
    let mut open: Vec<(String, usize, usize)> = Vec::new();
    let mut out = Vec::new();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied().unwrap_or(' ');
        match c {
            '\n' => line += 1,
            '/' if next == '/' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '/' if next == '*' => {
                while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                    line += usize::from(chars[i] == '\n');
                    i += 1;
                }
                i += 1;
            }
            '"' => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    line += usize::from(chars[i] == '\n');
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
            }
            '\'' if chars.get(i + 2) == Some(&'\'') || next == '\\' => {
                i += if next == '\\' { 3 } else { 2 };
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
            }
            '{' => {
                depth += 1;
                if let Some((name, start, _)) = pending.take() {
                    open.push((name, start, depth));
                }
            }
            '}' => {
                if open.last().is_some_and(|(_, _, d)| *d == depth) {
                    let (name, start, _) = open.pop().unwrap();
                    if line - start + 1 > max {
                        out.push((name, start, line - start + 1));
                    }
                }
                depth = depth.saturating_sub(1);
            }
            ';' if pending.as_ref().is_some_and(|(_, _, d)| *d == depth) => pending = None,
            'f' if next == 'n'
                && (i == 0 || !ident(chars[i - 1]))
                && chars.get(i + 2).is_some_and(|c| c.is_whitespace()) =>
            {
                let name: String = chars[i + 2..]
                    .iter()
                    .skip_while(|c| c.is_whitespace())
                    .take_while(|c| ident(**c))
                    .collect();
                if !name.is_empty() {
                    pending = Some((name, line, depth));
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

#[test]
fn no_lab_function_is_over_the_length_the_project_allows() {
    let mut long = Vec::new();
    for (path, text) in source_files(&src()) {
        for (name, at, n) in long_functions(&text, MAX_FN_LINES) {
            long.push(format!("{}:{at} {name} ({n} lines)", path.display()));
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_function_scanner_counts_bodies_only() {
    let text = "trait T {\n    fn decl(&self, a: [u8; 2]);\n}\nfn f(g: fn(u8) -> u8) {\n    \
                let s = \"}}{\";\n    let c = '}';\n    // }\n    if true {\n    }\n}\n";
    assert_eq!(long_functions(text, 6), vec![("f".to_string(), 4, 7)]);
    assert!(long_functions(text, 7).is_empty());
}
