//! Checks over the workspace's own source, for its tests (issues 24 and 25): the module graph
//! of a crate's `src/` (which modules each one names through `crate::` and `super::` paths in
//! its non-test code), its import cycles, and the files and functions longer than the project
//! allows. A scanner over the text, not a parser: comment lines are skipped and a file's tests
//! (from its `#[cfg(test)]` line) are not counted as imports.

#![forbid(unsafe_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Most lines of one source file the project allows.
pub const MAX_FILE_LINES: usize = 620;

/// Most lines of one function the project allows, from its `fn` line to its closing brace.
pub const MAX_FN_LINES: usize = 80;

/// Every `.rs` file under `src`, as its module path (`reproduce::claims`) and its text up to its
/// tests (a `#[cfg(test)]` line).
pub fn modules(src: &Path) -> BTreeMap<String, String> {
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
    walk(src, &[], &mut out);
    out
}

/// The modules `code` (of module `me`) names: the longest known module prefix of each
/// `crate::a::b::...` or `super::...` path, other than `me` itself and its ancestors.
pub fn imports(me: &str, code: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
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
pub fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
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

/// The import graph of the crate whose source is `src`: each module (its path, `a::b`) and the
/// modules it names, and its own child modules (a folder's `mod.rs` declares and re-exports
/// them, so what a child imports its parent reaches too).
pub fn import_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules(src);
    let known: BTreeSet<String> = mods.keys().filter(|k| !k.is_empty()).cloned().collect();
    let children = |m: &str| {
        known
            .iter()
            .filter(|k| {
                k.strip_prefix(m)
                    .and_then(|rest| rest.strip_prefix("::"))
                    .is_some_and(|rest| !rest.contains("::"))
            })
            .cloned()
            .collect::<Vec<_>>()
    };
    mods.iter()
        .filter(|(k, _)| !k.is_empty())
        .map(|(k, code)| {
            let mut edges = imports(k, code, &known);
            edges.extend(children(k));
            (k.clone(), edges)
        })
        .collect()
}

/// The files under `src` longer than [`MAX_FILE_LINES`], as `path (n lines)`.
pub fn long_files(src: &Path) -> Vec<String> {
    source_files(src)
        .into_iter()
        .filter_map(|(path, text)| {
            let n = text.lines().count();
            (n > MAX_FILE_LINES).then(|| format!("{} ({n} lines)", path.display()))
        })
        .collect()
}

/// The functions under `src` longer than [`MAX_FN_LINES`], as `path:line name (n lines)`.
pub fn long_functions_in(src: &Path) -> Vec<String> {
    let mut long = Vec::new();
    for (path, text) in source_files(src) {
        for (name, at, n) in long_functions(&text, MAX_FN_LINES) {
            long.push(format!("{}:{at} {name} ({n} lines)", path.display()));
        }
    }
    long
}

/// Panics, naming them, if `src` has files over [`MAX_FILE_LINES`] lines or functions over
/// [`MAX_FN_LINES`]: the size check every crate's tests run on their own source.
pub fn assert_within_limits(src: &Path) {
    let files = long_files(src);
    let functions = long_functions_in(src);
    assert!(
        files.is_empty() && functions.is_empty(),
        "{}: files over {MAX_FILE_LINES} lines: {files:#?}; functions over {MAX_FN_LINES} lines: \
         {functions:#?}",
        src.display()
    );
}

/// Panics, naming them, if the modules under `src` import one another in a cycle.
pub fn assert_no_import_cycles(src: &Path) {
    let found = cycles(&import_graph(src));
    let text: Vec<String> = found.iter().map(|c| c.join(" <-> ")).collect();
    assert!(
        found.is_empty(),
        "{}: import cycles:\n{}",
        src.display(),
        text.join("\n")
    );
}

/// Every source file under `dir`, with its text.
pub fn source_files(dir: &Path) -> Vec<(PathBuf, String)> {
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

/// The functions of `text` longer than `max` lines, as (name, first line, lines). A scanner over
/// the source: braces inside strings, character literals and comments do not count, a `fn`
/// followed by `;` before its body (a trait's declaration) has none, and `fn(` is a type.
pub fn long_functions(text: &str, max: usize) -> Vec<(String, usize, usize)> {
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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn the_function_scanner_counts_bodies_only() {
        let text = "trait T {\n    fn decl(&self, a: [u8; 2]);\n}\nfn f(g: fn(u8) -> u8) {\n    \
                    let s = \"}}{\";\n    let c = '}';\n    // }\n    if true {\n    }\n}\n";
        assert_eq!(long_functions(text, 6), vec![("f".to_string(), 4, 7)]);
        assert!(long_functions(text, 7).is_empty());
    }

    #[test]
    fn a_parent_reaches_what_its_children_import() {
        let dir = std::env::temp_dir().join(format!("srccheck-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("q")).unwrap();
        std::fs::write(dir.join("lib.rs"), "pub mod p;\npub mod q;\n").unwrap();
        std::fs::write(dir.join("p.rs"), "pub struct Op(crate::q::Pause);\n").unwrap();
        std::fs::write(dir.join("q/mod.rs"), "mod spin;\npub use spin::Pause;\n").unwrap();
        std::fs::write(
            dir.join("q/spin.rs"),
            "use crate::p::Op;\npub struct Pause;\n",
        )
        .unwrap();
        let graph = import_graph(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(graph["q"].contains("q::spin"));
        assert_eq!(
            cycles(&graph),
            vec![vec!["p".to_string(), "q".into(), "q::spin".into()]]
        );
    }

    /// A folder of `files` (name, text) under the system's temporary folder, named by `tag`.
    fn tree(tag: &str, files: &[(&str, String)]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("srccheck-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn the_size_check_passes_at_the_limits_and_names_what_is_over_them() {
        let body = |n: usize| format!("fn f() {{\n{}}}\n", "    let _x = 1;\n".repeat(n - 2));
        let at = tree(
            "at",
            &[
                ("lib.rs", body(MAX_FN_LINES)),
                ("long.rs", "// a line\n".repeat(MAX_FILE_LINES)),
            ],
        );
        assert_within_limits(&at);
        std::fs::remove_dir_all(&at).unwrap();
        for (tag, name, text, said) in [
            (
                "file",
                "long.rs",
                "//\n".repeat(MAX_FILE_LINES + 1),
                "long.rs (621 lines)",
            ),
            (
                "fn",
                "lib.rs",
                body(MAX_FN_LINES + 1),
                "lib.rs:1 f (81 lines)",
            ),
        ] {
            let over = tree(tag, &[(name, text)]);
            let caught = std::panic::catch_unwind(|| assert_within_limits(&over));
            std::fs::remove_dir_all(&over).unwrap();
            let message = *caught.expect_err(tag).downcast::<String>().unwrap();
            assert!(message.contains(said), "{message}");
        }
    }

    #[test]
    fn the_cycle_check_names_the_cycle() {
        let dir = tree(
            "cycle",
            &[
                ("lib.rs", "mod a;\nmod b;\n".into()),
                ("a.rs", "use crate::b::B;\npub struct A;\n".into()),
                ("b.rs", "use crate::a::A;\npub struct B;\n".into()),
            ],
        );
        let caught = std::panic::catch_unwind(|| assert_no_import_cycles(&dir));
        std::fs::remove_dir_all(&dir).unwrap();
        let message = *caught.expect_err("a cycle").downcast::<String>().unwrap();
        assert!(message.contains("a <-> b"), "{message}");
    }
}
