//! The file graph of `use crate::..`, `use super::..` and `use self::..` lines in each crate's
//! `src/`, and the pairs of files that import each other.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::source::{is_ident, line_of, Source};

/// `from` imports from `to`; `line` is the first such `use` in `from`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub line: usize,
}

/// A crate directory and the module path of a file under its `src/`, or `None` for files
/// outside any `src/` (examples, build scripts).
fn module_of(path: &str) -> Option<(&str, Vec<String>)> {
    let (krate, rest) = path.split_once("/src/").or(path.strip_prefix("src/").map(|r| ("", r)))?;
    let mut segments: Vec<String> =
        rest.trim_end_matches(".rs").split('/').map(str::to_owned).collect();
    if matches!(segments.last().map(String::as_str), Some("mod")) {
        segments.pop();
    }
    if segments.len() == 1 && matches!(segments[0].as_str(), "lib" | "main") {
        segments.clear();
    }
    Some((krate, segments))
}

/// Every edge between two different files of the same crate, sorted.
pub fn edges(sources: &[Source]) -> Vec<Edge> {
    let mut files: HashMap<(&str, Vec<String>), &str> = HashMap::new();
    for source in sources {
        if let Some(module) = module_of(&source.path) {
            files.entry(module).or_insert(&source.path);
        }
    }
    let mut found: BTreeMap<(String, String), usize> = BTreeMap::new();
    for source in sources {
        let Some((krate, module)) = module_of(&source.path) else { continue };
        let code = source.non_test_code();
        for (byte, inline, tree) in use_statements(&code) {
            let current: Vec<String> = module.iter().chain(&inline).cloned().collect();
            for path in expand(&tree) {
                let Some(absolute) = absolute(&current, &path) else { continue };
                let target = (0..=absolute.len())
                    .rev()
                    .find_map(|n| files.get(&(krate, absolute[..n].to_vec())));
                if let Some(&target) = target {
                    if target != source.path {
                        found
                            .entry((source.path.clone(), target.to_owned()))
                            .or_insert_with(|| line_of(&code, byte));
                    }
                }
            }
        }
    }
    found.into_iter().map(|((from, to), line)| Edge { from, to, line }).collect()
}

/// Pairs of files importing each other: `(a→b, b→a)` with `a < b`.
pub fn two_cycles(edges: &[Edge]) -> Vec<(Edge, Edge)> {
    let index: BTreeMap<(&str, &str), &Edge> =
        edges.iter().map(|e| ((e.from.as_str(), e.to.as_str()), e)).collect();
    edges
        .iter()
        .filter(|e| e.from < e.to)
        .filter_map(|e| {
            index.get(&(e.to.as_str(), e.from.as_str())).map(|b| (e.clone(), (*b).clone()))
        })
        .collect()
}

/// Groups of two or more files that import each other through a cycle of any length
/// (strongly connected components), each sorted.
pub fn cycles(edges: &[Edge]) -> Vec<BTreeSet<String>> {
    let mut graph: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for e in edges {
        graph.entry(&e.from).or_default().push(&e.to);
        graph.entry(&e.to).or_default();
    }
    let reaches = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from];
        while let Some(node) = stack.pop() {
            for &next in &graph[node] {
                if seen.insert(next) {
                    stack.push(next);
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&str, BTreeSet<&str>> = graph.keys().map(|&n| (n, reaches(n))).collect();
    let mut groups: Vec<BTreeSet<String>> = Vec::new();
    for (&node, reachable) in &reach {
        if groups.iter().any(|g| g.contains(node)) {
            continue;
        }
        let group: BTreeSet<String> = reachable
            .iter()
            .filter(|&&other| reach[other].contains(node))
            .map(|&s| s.to_owned())
            .collect();
        if group.len() >= 2 {
            groups.push(group);
        }
    }
    groups
}

/// Every `use` statement: its byte offset, the inline modules (`mod name { .. }`) it sits in,
/// and the tree after `use` up to the `;`.
fn use_statements(code: &str) -> Vec<(usize, Vec<String>, String)> {
    let bytes = code.as_bytes();
    let word_at = |i: usize, word: &str| {
        code[i..].starts_with(word)
            && (i == 0 || !is_ident(bytes[i - 1] as char))
            && code[i + word.len()..].starts_with(|c: char| c.is_whitespace())
    };
    let mut found = Vec::new();
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut pending_mod: Option<String> = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => {
                depth += 1;
                if let Some(name) = pending_mod.take() {
                    inline.push((name, depth));
                }
            }
            b'}' => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            b';' => pending_mod = None,
            _ if word_at(i, "mod") => {
                let name: String =
                    code[i + 3..].trim_start().chars().take_while(|&c| is_ident(c)).collect();
                pending_mod = Some(name);
            }
            _ if word_at(i, "use") => {
                let end = code[i..].find(';').map_or(code.len(), |p| i + p);
                let names = inline.iter().map(|(n, _)| n.clone()).collect();
                found.push((i, names, code[i + 3..end].to_owned()));
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// The paths a use tree names: `crate::{a, b::{c, self}}` gives `crate::a`, `crate::b::c`,
/// `crate::b`; a glob names its module.
pub fn expand(tree: &str) -> Vec<Vec<String>> {
    let mut tokens = Vec::new();
    let mut chars = tree.chars().peekable();
    while let Some(c) = chars.next() {
        if is_ident(c) {
            let mut word = c.to_string();
            while let Some(&c) = chars.peek().filter(|c| is_ident(**c)) {
                word.push(c);
                chars.next();
            }
            tokens.push(word);
        } else if c == ':' {
            if chars.peek() == Some(&':') {
                chars.next();
            }
        } else if !c.is_whitespace() {
            tokens.push(c.to_string());
        }
    }
    let mut pos = 0;
    let mut out = Vec::new();
    parse_tree(&tokens, &mut pos, &[], &mut out);
    out
}

fn parse_tree(tokens: &[String], pos: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    while let Some(token) = tokens.get(*pos) {
        match token.as_str() {
            "{" => {
                *pos += 1;
                while tokens.get(*pos).is_some_and(|t| t != "}") {
                    parse_tree(tokens, pos, &path, out);
                    if tokens.get(*pos).is_some_and(|t| t == ",") {
                        *pos += 1;
                    }
                }
                *pos += 1;
                return;
            }
            "," | "}" => break,
            "*" => *pos += 1,
            "as" => *pos += 2,
            "self" if !path.is_empty() => *pos += 1,
            _ => {
                path.push(token.clone());
                *pos += 1;
            }
        }
    }
    out.push(path);
}

/// `path` as a module path from the crate root, seen from module `current`; `None` for paths
/// into other crates.
fn absolute(current: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut base = match path.first()?.as_str() {
        "crate" => Vec::new(),
        "self" | "super" => current.to_vec(),
        _ => return None,
    };
    let mut rest = &path[usize::from(path[0] == "crate")..];
    while let Some(first) = rest.first() {
        match first.as_str() {
            "super" => {
                base.pop();
            }
            "self" => {}
            _ => break,
        }
        rest = &rest[1..];
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(tree: &str) -> Vec<String> {
        expand(tree).iter().map(|p| p.join("::")).collect()
    }

    #[test]
    fn expands_nested_groups() {
        assert_eq!(
            paths(" crate::{a, b::{c::D, self}, e::*, f as g}"),
            ["crate::a", "crate::b::c::D", "crate::b", "crate::e", "crate::f"]
        );
        assert_eq!(paths(" super::super::x::Y"), ["super::super::x::Y"]);
    }

    #[test]
    fn resolves_relative_paths() {
        let current = ["net".to_owned(), "node".to_owned()];
        let abs = |p: &str| absolute(&current, &expand(p)[0]).map(|p| p.join("::"));
        assert_eq!(abs("super::driver::Driver").as_deref(), Some("net::driver::Driver"));
        assert_eq!(abs("super::super::rt").as_deref(), Some("rt"));
        assert_eq!(abs("self::x").as_deref(), Some("net::node::x"));
        assert_eq!(abs("crate::store::S").as_deref(), Some("store::S"));
        assert_eq!(abs("libp2p::Swarm"), None);
    }

    #[test]
    fn flags_files_importing_each_other() {
        let sources = [
            Source::new("c/src/lib.rs", "mod net;\nuse crate::net::A;\n"),
            Source::new("c/src/net/mod.rs", "mod a;\nmod b;\npub use a::A;\npub struct Config;\n"),
            Source::new(
                "c/src/net/a.rs",
                "pub(crate) use super::{\n    b::{B, self},\n    Config,\n};\npub struct A;\n",
            ),
            Source::new(
                "c/src/net/b.rs",
                "pub use crate::net::a::A;\nmod imp {\n    use super::*;\n}\n#[cfg(test)]\nmod tests { use super::super::Config; }\n",
            ),
        ];
        let edges = edges(&sources);
        let pairs: Vec<(String, String)> =
            edges.iter().map(|e| (e.from.clone(), e.to.clone())).collect();
        assert_eq!(
            pairs,
            [
                ("c/src/lib.rs".into(), "c/src/net/mod.rs".into()),
                ("c/src/net/a.rs".into(), "c/src/net/b.rs".into()),
                ("c/src/net/a.rs".into(), "c/src/net/mod.rs".into()),
                ("c/src/net/b.rs".into(), "c/src/net/a.rs".into()),
            ]
        );
        let cycles = two_cycles(&edges);
        assert_eq!(cycles.len(), 1);
        assert_eq!((cycles[0].0.from.as_str(), cycles[0].0.line), ("c/src/net/a.rs", 1));
        assert_eq!(cycles[0].1.from, "c/src/net/b.rs");
    }

    #[test]
    fn finds_longer_cycles() {
        let edge = |from: &str, to: &str| Edge { from: from.into(), to: to.into(), line: 1 };
        let edges = [edge("a", "b"), edge("b", "c"), edge("c", "a"), edge("c", "d")];
        assert!(two_cycles(&edges).is_empty());
        let all: Vec<Vec<String>> =
            cycles(&edges).into_iter().map(|g| g.into_iter().collect()).collect();
        assert_eq!(all, [["a", "b", "c"]]);
    }
}
