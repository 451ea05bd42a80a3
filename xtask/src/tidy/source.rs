//! Reading the project's Rust sources without a parser: which files count, their code with
//! comments and literals blanked out, and the same with `#[cfg(test)]` items removed.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// Directories never scanned, wherever they are: vendored crates, build output, npm packages,
/// and integration tests (exempt from every check).
const SKIPPED_DIRS: &[&str] = &["vendor", "target", "node_modules", "tests", "dist"];

/// Every `.rs` file of the project, as paths relative to `root` with `/` separators, sorted.
pub fn rust_files(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    walk(root, root, &mut files);
    files.sort();
    files
}

fn walk(root: &Path, dir: &Path, files: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !name.starts_with('.') && !SKIPPED_DIRS.contains(&name.as_str()) {
                walk(root, &path, files);
            }
        } else if name.ends_with(".rs") {
            files.push(relative(root, &path));
        }
    }
}

/// `path` relative to `root`, with `/` separators on every platform.
pub fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

/// A source file: its path relative to the root, its text, and its code with comments and the
/// contents of string and char literals replaced by spaces (newlines kept, so lines still line up).
pub struct Source {
    pub path: String,
    pub text: String,
    pub code: String,
}

impl Source {
    pub fn new(path: &str, text: &str) -> Self {
        Source {
            path: path.to_owned(),
            text: text.to_owned(),
            code: blank_comments_and_literals(text),
        }
    }

    /// The code with every `#[cfg(test)]` item blanked out too (empty if the whole file is
    /// `#![cfg(test)]`).
    pub fn non_test_code(&self) -> String {
        strip_cfg_test(&self.code)
    }
}

/// Reads every project `.rs` file except test-only ones (see [`test_only_files`]).
pub fn read_sources(root: &Path) -> Vec<Source> {
    let sources: Vec<Source> = rust_files(root)
        .into_iter()
        .filter_map(|path| {
            let text = fs::read_to_string(root.join(&path)).ok()?;
            Some(Source::new(&path, &text))
        })
        .collect();
    let test_only = test_only_files(&sources);
    sources.into_iter().filter(|s| !test_only.contains(&s.path)).collect()
}

/// Files that are test code because their parent declares them `#[cfg(test)] mod name;`
/// (or because they sit below such a module's directory).
pub fn test_only_files(sources: &[Source]) -> BTreeSet<String> {
    let mut test_dirs = Vec::new();
    for source in sources {
        let chars: Vec<char> = source.code.chars().collect();
        for start in find_all(&source.code, "#[cfg(test)]") {
            let after = skip_attributes(&chars, char_index(&source.code, start) + 12);
            let rest: String = chars[after..].iter().take(200).collect();
            let rest = rest.trim_start();
            let rest =
                rest.strip_prefix("pub(crate) ").or(rest.strip_prefix("pub ")).unwrap_or(rest);
            let Some(decl) = rest.strip_prefix("mod ") else { continue };
            let name: String = decl.chars().take_while(|c| is_ident(*c)).collect();
            if decl[name.len()..].trim_start().starts_with(';') {
                test_dirs.push(format!("{}/{name}", module_dir(&source.path)));
            }
        }
    }
    sources
        .iter()
        .map(|s| &s.path)
        .filter(|path| {
            test_dirs
                .iter()
                .any(|dir| **path == format!("{dir}.rs") || path.starts_with(&format!("{dir}/")))
        })
        .cloned()
        .collect()
}

/// The directory holding the files of `path`'s child modules: `a/b` for `a/b.rs`, `a` for
/// `a/mod.rs`, `a/lib.rs` and `a/main.rs`.
pub fn module_dir(path: &str) -> String {
    let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
    match file {
        "mod.rs" | "lib.rs" | "main.rs" => dir.to_owned(),
        _ => format!("{dir}/{}", file.trim_end_matches(".rs")),
    }
}

pub fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Byte offsets of every occurrence of `needle` in `haystack`.
pub fn find_all<'a>(haystack: &'a str, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    haystack.match_indices(needle).map(|(i, _)| i)
}

/// The char index of byte offset `byte` in `s`.
pub fn char_index(s: &str, byte: usize) -> usize {
    s[..byte].chars().count()
}

/// The 1-based line number of byte offset `byte` in `s`.
pub fn line_of(s: &str, byte: usize) -> usize {
    s[..byte].matches('\n').count() + 1
}

/// Whether the `r` at `i` follows a lone `b`, as in `br"..."`.
fn byte_prefix(chars: &[char], i: usize) -> bool {
    chars[i - 1] == 'b' && (i == 1 || !is_ident(chars[i - 2]))
}

/// From `i`, skips whitespace and any further `#[...]` attributes; returns the index of the item.
fn skip_attributes(chars: &[char], mut i: usize) -> usize {
    loop {
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        if chars.get(i) == Some(&'#') && chars.get(i + 1) == Some(&'[') {
            i = matching(chars, i + 1, '[', ']');
        } else {
            return i;
        }
    }
}

/// The index just past the bracket closing the one at `open` (or the end of input).
fn matching(chars: &[char], open: usize, left: char, right: char) -> usize {
    let mut depth = 0usize;
    for (i, &c) in chars.iter().enumerate().skip(open) {
        if c == left {
            depth += 1;
        } else if c == right {
            depth -= 1;
            if depth == 0 {
                return i + 1;
            }
        }
    }
    chars.len()
}

/// Blanks every `#[cfg(test)]` item (attribute included) in code whose comments and literals are
/// already blank; a file starting with `#![cfg(test)]` is blanked entirely.
pub fn strip_cfg_test(code: &str) -> String {
    let original: Vec<char> = code.chars().collect();
    let mut chars = original.clone();
    let mut blank = vec![false; chars.len()];
    if code.contains("#![cfg(test)]") {
        return blanked(&original, &vec![true; chars.len()]);
    }
    let starts: Vec<usize> = find_all(code, "#[cfg(test)]").map(|b| char_index(code, b)).collect();
    for start in starts {
        if chars[start] != '#' {
            continue; // inside an item already blanked
        }
        let item = skip_attributes(&chars, start + 12);
        let mut end = chars.len();
        for i in item..chars.len() {
            match chars[i] {
                ';' => {
                    end = i + 1;
                    break;
                }
                '{' => {
                    end = matching(&chars, i, '{', '}');
                    break;
                }
                _ => {}
            }
        }
        for c in &mut chars[start..end] {
            *c = ' ';
        }
        for flag in &mut blank[start..end] {
            *flag = true;
        }
    }
    blanked(&original, &blank)
}

/// Replaces comments and the contents of string, raw string and char literals with spaces,
/// keeping newlines and the quotes themselves. Byte offsets are kept too: a blanked character
/// becomes as many spaces as its UTF-8 length.
pub fn blank_comments_and_literals(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = vec![false; chars.len()];
    let blank = |out: &mut Vec<bool>, from: usize, to: usize| {
        for keep in &mut out[from..to.min(chars.len())] {
            *keep = true;
        }
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let prev_ident = i > 0 && is_ident(chars[i - 1]);
        if c == '/' && next == Some('/') {
            let end = chars[i..].iter().position(|&c| c == '\n').map_or(chars.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if c == '/' && next == Some('*') {
            let (mut depth, mut j) = (0usize, i);
            while j < chars.len() {
                if chars[j] == '/' && chars.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if chars[j] == '*' && chars.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if c == 'r'
            && matches!(next, Some('"' | '#'))
            && (!prev_ident || byte_prefix(&chars, i))
        {
            let hashes = chars[i + 1..].iter().take_while(|&&c| c == '#').count();
            if chars.get(i + 1 + hashes) != Some(&'"') {
                i += 1;
                continue;
            }
            let body = i + 2 + hashes;
            let mut j = body;
            while j < chars.len() {
                if chars[j] == '"'
                    && chars[j + 1..].iter().take(hashes).filter(|&&c| c == '#').count() == hashes
                {
                    break;
                }
                j += 1;
            }
            blank(&mut out, body, j);
            i = j + 1 + hashes;
        } else if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            blank(&mut out, i + 1, j);
            i = j + 1;
        } else if c == '\'' && !prev_ident {
            let end = if next == Some('\\') {
                chars[i + 2..].iter().position(|&c| c == '\'').map(|p| i + 2 + p)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None // a lifetime or label
            };
            match end {
                Some(end) => {
                    blank(&mut out, i + 1, end);
                    i = end + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    blanked(&chars, &out)
}

/// `chars` with each character flagged in `blank` (other than a newline) turned into spaces.
fn blanked(chars: &[char], blank: &[bool]) -> String {
    let mut out = String::with_capacity(chars.len());
    for (&c, &blank) in chars.iter().zip(blank) {
        if blank && c != '\n' {
            out.extend(std::iter::repeat_n(' ', c.len_utf8()));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanks_comments_strings_and_chars_but_not_lifetimes() {
        let code = blank_comments_and_literals(
            "let a = \"{ x\"; // }\nlet b: &'a str = r#\"}\"#; let c = '{'; /* { */ let d = '\\'';",
        );
        assert_eq!(code.matches('{').count(), 0, "{code}");
        assert_eq!(code.matches('}').count(), 0, "{code}");
        assert!(code.contains("&'a str"), "{code}");
        assert_eq!(code.lines().count(), 2);
    }

    #[test]
    fn strips_test_modules_and_items() {
        let code = "fn a() {}\n#[cfg(test)]\nmod tests {\n    fn b() { {} }\n}\n#[cfg(test)]\nuse x::y;\nfn c() {}\n";
        let stripped = strip_cfg_test(code);
        assert!(stripped.contains("fn a()") && stripped.contains("fn c()"), "{stripped}");
        assert!(!stripped.contains("fn b") && !stripped.contains("use x"), "{stripped}");
        assert_eq!(stripped.lines().count(), code.lines().count());
        assert!(strip_cfg_test("#![cfg(test)]\nfn a() {}").trim().is_empty());
    }

    #[test]
    fn finds_files_of_test_modules() {
        let sources = [
            Source::new("c/src/p/mod.rs", "#[cfg(test)]\nmod tests;\nmod real;\n"),
            Source::new("c/src/p/tests.rs", ""),
            Source::new("c/src/p/real.rs", "#[cfg(test)]\npub(crate) mod vectors;"),
            Source::new("c/src/p/real/vectors/mod.rs", ""),
        ];
        let test_only: Vec<_> = test_only_files(&sources).into_iter().collect();
        assert_eq!(test_only, ["c/src/p/real/vectors/mod.rs", "c/src/p/tests.rs"]);
    }
}
