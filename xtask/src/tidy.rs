//! Tidy checks, in the manner of rust-analyzer's `xtask/src/tidy.rs`: rules about the source tree
//! that no compiler enforces. They run as `#[test]`s of xtask and as the first stage of
//! `cargo xtask test`. Sources are scanned as text (no parser): see [`source`].
//!
//! Integration tests (`tests/` dirs), `#[cfg(test)]` items and modules, `vendor/`, `target/` and
//! `node_modules/` are exempt everywhere.
//!
//! The `*_TODO` lists name today's offenders so the checks pass while they are fixed; each check
//! fails for anything else, and for an entry that no longer offends (so the lists only shrink).

mod imports;
mod source;
pub mod wasm;

use std::fs;
use std::path::Path;

use anyhow::{bail, Result};

use crate::project_root;
use source::{line_of, read_sources, Source};

/// Member crates not yet opted into the workspace lints (`[lints] workspace = true`).
const LINTS_TODO: &[&str] = &[];

/// The only files where `cfg(target_arch = "wasm32")` may appear (STYLE.md, "Where
/// `cfg(target_arch = "wasm32")` appears"). Cargo target tables are not scanned.
const WASM_CFG_ALLOWED: &[&str] = &[
    // Which kind of peer this build announces itself as.
    "node-wasm/src/agent.rs",
    "node-wasm/src/cond_send.rs",
    "node-wasm/src/net/webrtc/mod.rs",
    "node-wasm/src/node/transport.rs",
    "node-wasm/src/rt/mod.rs",
    "node-wasm/src/store/mod.rs",
    // Which SIMD path hashes the BMT's pairs: AVX2/AVX-512 natively, SIMD128 in the page.
    "node-wasm/proto/src/swarm/keccak/mod.rs",
];

/// Crates that must stay sans-IO, and the dependencies that would break that: the cores and the
/// simulator build without libp2p, an async runtime, the browser's APIs or a store.
const SANS_IO_CRATES: &[&str] = &["node-wasm/proto", "node-wasm/sim"];
const IO_DEPENDENCIES: &[&str] = &[
    "libp2p",
    "tokio",
    "futures",
    "async-std",
    "web-sys",
    "js-sys",
    "wasm-bindgen",
    "wasm-bindgen-futures",
    "gloo-timers",
    "idb",
    "syncscope-node",
];

/// The most lines a source file may have before its first `#[cfg(test)]`.
const MAX_LINES: usize = 700;

/// Files longer than [`MAX_LINES`] today, being split.
const OVERSIZE_TODO: &[&str] = &[];

/// Pairs of files that import each other today, each pair sorted.
const CYCLES_TODO: &[(&str, &str)] = &[];

/// Public error and event types with a `String` field today: (file, type).
const STRING_TODO: &[(&str, &str)] = &[];

/// Runs every check on the project and fails if any finds a problem.
pub fn run() -> Result<()> {
    let root = project_root();
    let sources = read_sources(&root);
    let problems: Vec<String> = [
        lints(&root, LINTS_TODO),
        sans_io(&root, SANS_IO_CRATES),
        wasm_cfg(&sources, WASM_CFG_ALLOWED),
        oversize(&sources, OVERSIZE_TODO),
        import_cycles(&sources, CYCLES_TODO),
        string_fields(&sources, STRING_TODO),
    ]
    .concat();
    for problem in &problems {
        eprintln!("tidy: {problem}\n");
    }
    for group in imports::cycles(&imports::edges(&sources)).iter().filter(|g| g.len() > 2) {
        let files: Vec<&str> = group.iter().map(String::as_str).collect();
        println!("note (not enforced yet): import cycle through {}", files.join(", "));
    }
    wasm::check_dir(&root.join("dist"))?;
    if !problems.is_empty() {
        bail!("{} tidy problem(s)", problems.len());
    }
    println!("tidy: all checks pass");
    Ok(())
}

/// Check 1: clippy's `unwrap_used` is denied workspace-wide, allowed in tests, and every member
/// (but those in `todo`) inherits the workspace lints.
fn lints(root: &Path, todo: &[&str]) -> Vec<String> {
    let read = |path: &str| fs::read_to_string(root.join(path)).unwrap_or_default();
    let manifest = read("Cargo.toml");
    let members: Vec<(String, String)> = workspace_members(&manifest)
        .into_iter()
        .map(|m| {
            let text = read(&format!("{m}/Cargo.toml"));
            (m, text)
        })
        .collect();
    lint_problems(&manifest, &read("clippy.toml"), &members, todo)
}

fn lint_problems(
    manifest: &str,
    clippy_toml: &str,
    members: &[(String, String)],
    todo: &[&str],
) -> Vec<String> {
    let mut problems = Vec::new();
    let denies = toml_section(manifest, "workspace.lints.clippy").iter().any(|line| {
        let line = line.replace(' ', "");
        line.starts_with("unwrap_used=") && (line.contains("\"deny\"") || line.contains("\"warn\""))
    });
    if !denies {
        problems.push(
            "Cargo.toml: `[workspace.lints.clippy]` must set `unwrap_used = \"deny\"`".to_owned(),
        );
    }
    if !clippy_toml.lines().any(|l| l.replace(' ', "") == "allow-unwrap-in-tests=true") {
        problems.push("clippy.toml must set `allow-unwrap-in-tests = true`".to_owned());
    }
    for (member, text) in members {
        let inherits =
            toml_section(text, "lints").iter().any(|l| l.replace(' ', "") == "workspace=true");
        match (inherits, todo.contains(&member.as_str())) {
            (false, false) => problems.push(format!(
                "{member}/Cargo.toml: add `[lints]\\nworkspace = true` to inherit the workspace lints"
            )),
            (true, true) => problems.push(format!(
                "{member} inherits the workspace lints now: remove it from LINTS_TODO in xtask/src/tidy.rs"
            )),
            _ => {}
        }
    }
    problems
}

/// The `members = [..]` of a workspace manifest.
fn workspace_members(manifest: &str) -> Vec<String> {
    let section = toml_section(manifest, "workspace").join("\n");
    let Some(list) = section.split_once("members").and_then(|(_, rest)| rest.split_once('['))
    else {
        return Vec::new();
    };
    let list = list.1.split(']').next().unwrap_or_default();
    list.split(',')
        .map(|m| m.trim().trim_matches('"').to_owned())
        .filter(|m| !m.is_empty())
        .collect()
}

/// The lines of TOML table `[name]`, up to the next table header.
/// Check: the sans-IO crates depend on nothing that does I/O (any dependency table, target
/// tables included; dev-dependencies too, since tests must not need a runtime either).
fn sans_io(root: &Path, crates: &[&str]) -> Vec<String> {
    crates
        .iter()
        .flat_map(|krate| {
            let manifest =
                fs::read_to_string(root.join(krate).join("Cargo.toml")).unwrap_or_default();
            io_dependencies(&manifest).into_iter().map(move |dep| {
                format!("{krate}/Cargo.toml: depends on `{dep}`, which does I/O; keep it sans-IO")
            })
        })
        .collect()
}

/// The dependencies of `manifest` found in [`IO_DEPENDENCIES`], named in any dependency table.
fn io_dependencies(manifest: &str) -> Vec<String> {
    let mut in_deps = false;
    let mut found = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line.trim_end_matches(']').ends_with("dependencies");
            continue;
        }
        let Some((name, _)) = line.split_once('=') else { continue };
        let name = name.trim().split('.').next().unwrap_or_default().trim_matches('"');
        if in_deps && IO_DEPENDENCIES.contains(&name) {
            found.push(name.to_owned());
        }
    }
    found
}

fn toml_section<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    let header = format!("[{name}]");
    text.lines()
        .map(str::trim)
        .skip_while(|l| *l != header)
        .skip(1)
        .take_while(|l| !l.starts_with('['))
        .collect()
}

/// Check 2: `target_arch = "wasm32"` appears only in the `allowed` files.
fn wasm_cfg(sources: &[Source], allowed: &[&str]) -> Vec<String> {
    let mut problems = Vec::new();
    for source in sources {
        let lines = wasm_cfg_lines(source);
        if !lines.is_empty() && !allowed.contains(&source.path.as_str()) {
            problems.push(format!(
                "{}:{}: `cfg(target_arch = \"wasm32\")` outside the allowed files. Keep the \
                 platform split in one of these (or add the file to WASM_CFG_ALLOWED in \
                 xtask/src/tidy.rs if it really belongs there):\n    {}",
                source.path,
                lines.iter().map(usize::to_string).collect::<Vec<_>>().join(","),
                allowed.join("\n    ")
            ));
        }
    }
    problems.extend(stale(allowed.iter().copied(), sources, "WASM_CFG_ALLOWED", |source| {
        !wasm_cfg_lines(source).is_empty()
    }));
    problems
}

/// The lines of `source` outside tests and comments that mention `target_arch = "wasm32"`.
fn wasm_cfg_lines(source: &Source) -> Vec<usize> {
    let code = source.non_test_code();
    source::find_all(&code, "target_arch")
        .filter(|&at| {
            let after: String = source.text[at..].chars().take(40).collect();
            after.replace(char::is_whitespace, "").starts_with("target_arch=\"wasm32\"")
        })
        .map(|at| line_of(&code, at))
        .collect()
}

/// Check 3: at most [`MAX_LINES`] lines before the first `#[cfg(test)]`.
fn oversize(sources: &[Source], todo: &[&str]) -> Vec<String> {
    let length = |source: &Source| {
        source.text.lines().take_while(|l| !l.trim_start().starts_with("#[cfg(test)]")).count()
    };
    let mut problems: Vec<String> = sources
        .iter()
        .filter(|s| length(s) > MAX_LINES && !todo.contains(&s.path.as_str()))
        .map(|s| {
            format!(
                "{}: {} lines before `#[cfg(test)]`, over the {MAX_LINES}-line limit; split it",
                s.path,
                length(s)
            )
        })
        .collect();
    problems
        .extend(stale(todo.iter().copied(), sources, "OVERSIZE_TODO", |s| length(s) > MAX_LINES));
    problems
}

/// Check 4: no two files import each other (`use crate::..`, `use super::..`, `use self::..`).
fn import_cycles(sources: &[Source], todo: &[(&str, &str)]) -> Vec<String> {
    let pairs = imports::two_cycles(&imports::edges(sources));
    let mut problems: Vec<String> = pairs
        .iter()
        .filter(|(a, b)| !todo.contains(&(a.from.as_str(), b.from.as_str())))
        .map(|(a, b)| {
            format!(
                "{}:{} and {}:{} import each other; move what both need into a third module, \
                 or let one side depend on the other only",
                a.from, a.line, b.from, b.line
            )
        })
        .collect();
    for (a, b) in todo {
        if !pairs.iter().any(|(x, y)| (x.from.as_str(), y.from.as_str()) == (*a, *b)) {
            problems.push(format!(
                "{a} and {b} no longer import each other: remove the pair from CYCLES_TODO in \
                 xtask/src/tidy.rs"
            ));
        }
    }
    problems
}

/// Check 5: public `..Error`, `..Event` and `..Misbehaviour` types carry no `String`: a message
/// is rendered by `Display`, and the data stays typed.
fn string_fields(sources: &[Source], todo: &[(&str, &str)]) -> Vec<String> {
    let found: Vec<(String, String, usize)> = sources
        .iter()
        .flat_map(|s| typed_strings(s).into_iter().map(|(name, line)| (s.path.clone(), name, line)))
        .collect();
    let mut problems = Vec::new();
    for (path, name, line) in &found {
        let first = found.iter().find(|(p, n, _)| (p, n) == (path, name)).map(|(_, _, l)| l);
        if first != Some(line) || todo.contains(&(path.as_str(), name.as_str())) {
            continue; // one report per type, at its first `String`
        }
        problems.push(format!(
            "{path}:{line}: public type `{name}` has a `String` field; keep the typed data \
             (or a `&'static str`) and format it in `Display`"
        ));
    }
    for (path, name) in todo {
        if !found.iter().any(|(p, n, _)| (p.as_str(), n.as_str()) == (*path, *name)) {
            problems.push(format!(
                "{path}: `{name}` has no `String` field now: remove it from STRING_TODO in \
                 xtask/src/tidy.rs"
            ));
        }
    }
    problems
}

/// Each `String` in a derived `pub enum`/`pub struct` named `..Error`, `..Event` or
/// `..Misbehaviour`: the type's name and the line.
fn typed_strings(source: &Source) -> Vec<(String, usize)> {
    let code = source.non_test_code();
    let mut found = Vec::new();
    for keyword in ["pub enum ", "pub struct "] {
        for at in source::find_all(&code, keyword) {
            if at > 0 && source::is_ident(char::from(code.as_bytes()[at - 1])) {
                continue;
            }
            let rest = &code[at + keyword.len()..];
            let name: String = rest.chars().take_while(|&c| source::is_ident(c)).collect();
            if !["Error", "Event", "Misbehaviour"].iter().any(|s| name.ends_with(s)) {
                continue;
            }
            let item_start = code[..at].rfind([';', '}']).map_or(0, |p| p + 1);
            if !code[item_start..at].contains("derive") {
                continue;
            }
            let Some(open) = rest.find(['{', '(', ';']) else { continue };
            if rest.as_bytes()[open] == b';' {
                continue;
            }
            let body_start = at + keyword.len() + open;
            let body_end = body_end(&code, body_start);
            for (offset, _) in code[body_start..body_end].match_indices("String") {
                let s = body_start + offset;
                let bytes = code.as_bytes();
                let word = !source::is_ident(char::from(bytes[s - 1]))
                    && !bytes.get(s + 6).is_some_and(|&b| source::is_ident(char::from(b)));
                if word {
                    found.push((name.clone(), line_of(&code, s)));
                }
            }
        }
    }
    found
}

/// The byte just past the bracket that closes the one at `open`.
fn body_end(code: &str, open: usize) -> usize {
    let mut depth = 0usize;
    for (i, b) in code.bytes().enumerate().skip(open) {
        match b {
            b'{' | b'(' => depth += 1,
            b'}' | b')' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// Allow-list entries naming a file that is gone or no longer `offends`.
fn stale<'a>(
    entries: impl Iterator<Item = &'a str>,
    sources: &[Source],
    list: &str,
    offends: impl Fn(&Source) -> bool,
) -> Vec<String> {
    entries
        .filter(|entry| !sources.iter().any(|s| s.path == *entry && offends(s)))
        .map(|entry| {
            format!("{entry} is gone or passes now: remove it from {list} in xtask/src/tidy.rs")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_clean(problems: Vec<String>) {
        assert!(problems.is_empty(), "\n{}", problems.join("\n\n"));
    }

    fn project() -> Vec<Source> {
        read_sources(&project_root())
    }

    #[test]
    fn tidy_workspace_lints() {
        assert_clean(lints(&project_root(), LINTS_TODO));
    }

    #[test]
    fn tidy_cores_and_simulator_are_sans_io() {
        assert_clean(sans_io(&project_root(), SANS_IO_CRATES));
    }

    #[test]
    fn sans_io_flags_io_dependencies_in_any_table() {
        let manifest = "[package]\nname = \"x\"\n[dependencies]\nbytes.workspace = true\n\
                        libp2p = { workspace = true }\n[target.'cfg(unix)'.dev-dependencies]\n\
                        tokio.workspace = true\n[features]\nfutures = []\n";
        assert_eq!(io_dependencies(manifest), ["libp2p", "tokio"]);
    }

    #[test]
    fn tidy_wasm_cfg_only_in_allowed_files() {
        assert_clean(wasm_cfg(&project(), WASM_CFG_ALLOWED));
    }

    #[test]
    fn tidy_file_length() {
        assert_clean(oversize(&project(), OVERSIZE_TODO));
    }

    #[test]
    fn tidy_no_files_importing_each_other() {
        assert_clean(import_cycles(&project(), CYCLES_TODO));
    }

    #[test]
    fn tidy_no_strings_in_error_and_event_types() {
        assert_clean(string_fields(&project(), STRING_TODO));
    }

    #[test]
    fn tidy_built_wasm_imports_nothing_from_env() {
        wasm::check_dir(&project_root().join("dist")).unwrap();
    }

    const GOOD_MANIFEST: &str = "[workspace]\nmembers = [\"a\", \"b\"]\n\n[workspace.lints.clippy]\nunwrap_used = \"deny\"\n";
    const INHERITS: &str = "[package]\nname = \"a\"\n\n[lints]\nworkspace = true\n";

    #[test]
    fn lints_flags_missing_settings() {
        assert_eq!(workspace_members(GOOD_MANIFEST), ["a", "b"]);
        let members =
            |b: &str| vec![("a".to_owned(), INHERITS.to_owned()), ("b".to_owned(), b.to_owned())];
        let clippy = "allow-unwrap-in-tests = true\n";
        assert_clean(lint_problems(GOOD_MANIFEST, clippy, &members(INHERITS), &[]));
        let problems = lint_problems(GOOD_MANIFEST, clippy, &members("[package]\n"), &[]);
        assert!(problems.len() == 1 && problems[0].starts_with("b/Cargo.toml"), "{problems:?}");
        assert_eq!(lint_problems(GOOD_MANIFEST, clippy, &members(INHERITS), &["b"]).len(), 1);
        let no_deny = GOOD_MANIFEST.replace("unwrap_used", "expect_used");
        assert_eq!(lint_problems(&no_deny, clippy, &members(INHERITS), &[]).len(), 1);
        assert_eq!(lint_problems(GOOD_MANIFEST, "", &members(INHERITS), &[]).len(), 1);
    }

    #[test]
    fn wasm_cfg_flags_other_files() {
        let sources = [
            Source::new("c/src/rt.rs", "#[cfg(target_arch = \"wasm32\")]\nmod imp {}\n"),
            Source::new(
                "c/src/core.rs",
                "fn a() {}\n#[cfg(not(target_arch=\"wasm32\"))]\nfn b() {}\n",
            ),
            Source::new(
                "c/src/x86.rs",
                "#[cfg(target_arch = \"x86_64\")]\nfn c() {}\n// target_arch = \"wasm32\"\n",
            ),
            Source::new(
                "c/src/t.rs",
                "#[cfg(test)]\nmod tests {\n#[cfg(target_arch = \"wasm32\")]\nfn d() {}\n}\n",
            ),
        ];
        let problems = wasm_cfg(&sources, &["c/src/rt.rs"]);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("c/src/core.rs:2:") && problems[0].contains("c/src/rt.rs"));
        assert_eq!(wasm_cfg(&sources, &["c/src/rt.rs", "c/src/core.rs", "c/src/x86.rs"]).len(), 1);
    }

    #[test]
    fn oversize_flags_long_files() {
        let long = "fn a() {}\n".repeat(MAX_LINES + 1);
        let with_tests = format!("{}#[cfg(test)]\n{long}", "fn a() {}\n".repeat(MAX_LINES));
        let sources =
            [Source::new("c/src/long.rs", &long), Source::new("c/src/ok.rs", &with_tests)];
        let problems = oversize(&sources, &[]);
        assert!(
            problems.len() == 1 && problems[0].starts_with("c/src/long.rs: 701 lines"),
            "{problems:?}"
        );
        assert_clean(oversize(&sources, &["c/src/long.rs"]));
        assert_eq!(oversize(&sources, &["c/src/long.rs", "c/src/ok.rs"]).len(), 1);
    }

    #[test]
    fn import_cycles_flags_pairs() {
        let sources = [
            Source::new("c/src/lib.rs", "mod a;\nmod b;\n"),
            Source::new("c/src/a.rs", "use crate::b::B;\npub struct A;\n"),
            Source::new("c/src/b.rs", "use super::a::A;\npub struct B;\n"),
        ];
        let problems = import_cycles(&sources, &[]);
        assert!(
            problems.len() == 1 && problems[0].starts_with("c/src/a.rs:1 and c/src/b.rs:1"),
            "{problems:?}"
        );
        assert_clean(import_cycles(&sources, &[("c/src/a.rs", "c/src/b.rs")]));
        assert_eq!(import_cycles(&sources[..2], &[("c/src/a.rs", "c/src/b.rs")]).len(), 1);
    }

    #[test]
    fn string_fields_flags_errors_and_events() {
        let text = "#[derive(Debug, thiserror::Error)]\npub enum FooError {\n    #[error(\"bad String\")]\n    Bad(String),\n    Typed { len: usize },\n}\n\
                    #[derive(Debug)]\npub struct BarEvent {\n    pub reason: String,\n}\n\
                    #[derive(Debug)]\npub struct Note {\n    text: String,\n}\n\
                    #[derive(Debug)]\npub enum PeerMisbehaviour {\n    Spam { count: u32 },\n}\n\
                    pub struct PlainError(String);\n";
        let sources = [Source::new("c/src/e.rs", text)];
        let problems = string_fields(&sources, &[]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("c/src/e.rs:4: public type `FooError`"), "{problems:?}");
        assert!(problems[1].starts_with("c/src/e.rs:9: public type `BarEvent`"), "{problems:?}");
        assert_eq!(
            string_fields(&sources, &[("c/src/e.rs", "FooError"), ("c/src/e.rs", "BarEvent")]),
            Vec::<String>::new()
        );
        assert_eq!(string_fields(&sources, &[("c/src/e.rs", "PeerMisbehaviour")]).len(), 3);
    }
}
