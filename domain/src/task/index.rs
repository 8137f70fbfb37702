//! The repository index summary handed to the agent: a file tree with sizes and kinds,
//! bounded (3000 characters by default).
//!
//! The caller walks the worktree (respecting `.gitignore`) and hands in the files; this only
//! formats. To fit the bound it shows the tree to the deepest level that fits — deeper
//! directories collapse to `name/ (N files, size)` — and at most [`MAX_CHILDREN`] entries per
//! directory. A header line gives the totals and the main kinds.

use std::collections::BTreeMap;
use std::fmt::Write as _;

pub const DEFAULT_MAX_CHARS: usize = 3_000;
/// Entries shown per directory; the rest are summed up in one line.
pub const MAX_CHILDREN: usize = 25;

/// One file of the worktree: its repository-relative, `/`-separated path and size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub path: String,
    pub size_bytes: u64,
}

/// The kind of a file, from its name.
pub fn kind_of(name: &str) -> &'static str {
    let lower = name.to_ascii_lowercase();
    match lower.as_str() {
        "dockerfile" => return "docker",
        "makefile" | "gnumakefile" => return "make",
        "cargo.lock" | "package-lock.json" | "yarn.lock" | "pnpm-lock.yaml" | "poetry.lock" => {
            return "lockfile";
        }
        _ => {}
    }
    let ext = lower.rsplit_once('.').map_or("", |(_, e)| e);
    match ext {
        "rs" => "rust",
        "ts" | "tsx" | "mts" | "cts" => "typescript",
        "js" | "jsx" | "mjs" | "cjs" => "javascript",
        "py" | "pyi" => "python",
        "go" => "go",
        "java" | "kt" | "kts" => "jvm",
        "c" | "h" | "cc" | "cpp" | "hpp" | "cxx" => "c/c++",
        "rb" => "ruby",
        "php" => "php",
        "cs" => "c#",
        "swift" => "swift",
        "sh" | "bash" | "zsh" => "shell",
        "md" | "mdx" | "rst" | "txt" | "adoc" => "docs",
        "json" | "jsonl" => "json",
        "toml" => "toml",
        "yml" | "yaml" => "yaml",
        "html" | "htm" | "css" | "scss" | "sass" | "vue" | "svelte" => "web",
        "sql" => "sql",
        "png" | "jpg" | "jpeg" | "gif" | "svg" | "ico" | "webp" => "image",
        "lock" => "lockfile",
        _ => "other",
    }
}

/// `812 B`, `4.2 KB`, `1.3 MB`.
pub fn human_size(bytes: u64) -> String {
    // u64 → f64 only for display; rounding is fine.
    #[expect(clippy::cast_precision_loss, reason = "a size for display")]
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KB", b / 1024.0)
    } else if bytes < 1024 * 1024 * 1024 {
        format!("{:.1} MB", b / (1024.0 * 1024.0))
    } else {
        format!("{:.1} GB", b / (1024.0 * 1024.0 * 1024.0))
    }
}

#[derive(Default)]
struct Dir<'a> {
    dirs: BTreeMap<&'a str, Dir<'a>>,
    files: BTreeMap<&'a str, u64>,
    total_files: usize,
    total_bytes: u64,
}

impl<'a> Dir<'a> {
    fn insert(&mut self, path: &'a str, size: u64) {
        self.total_files += 1;
        self.total_bytes += size;
        match path.split_once('/') {
            Some((dir, rest)) if !rest.is_empty() => {
                self.dirs.entry(dir).or_default().insert(rest, size);
            }
            _ => {
                self.files.insert(path.trim_end_matches('/'), size);
            }
        }
    }

    fn depth(&self) -> usize {
        self.dirs.values().map(|d| d.depth() + 1).max().unwrap_or(0)
    }

    fn render(&self, out: &mut String, indent: usize, levels: usize) {
        let pad = "  ".repeat(indent);
        let mut shown = 0;
        for (name, dir) in &self.dirs {
            if shown == MAX_CHILDREN {
                break;
            }
            shown += 1;
            let _ = writeln!(
                out,
                "{pad}{name}/ ({}, {})",
                files(dir.total_files),
                human_size(dir.total_bytes)
            );
            if levels > 0 {
                dir.render(out, indent + 1, levels - 1);
            }
        }
        for (name, size) in &self.files {
            if shown == MAX_CHILDREN {
                break;
            }
            shown += 1;
            let _ = writeln!(out, "{pad}{name}  {}  {}", human_size(*size), kind_of(name));
        }
        let hidden = self.dirs.len() + self.files.len() - shown;
        if hidden > 0 {
            let _ = writeln!(out, "{pad}… {hidden} more entries");
        }
    }
}

/// The summary of `entries`, at most `max_chars` characters.
pub fn summarize(entries: &[IndexEntry], max_chars: usize) -> String {
    let mut root = Dir::default();
    let mut kinds: BTreeMap<&str, (usize, u64)> = BTreeMap::new();
    for e in entries {
        let path = e.path.trim_start_matches("./");
        if path.is_empty() {
            continue;
        }
        root.insert(path, e.size_bytes);
        let name = path.rsplit('/').next().unwrap_or(path);
        let k = kinds.entry(kind_of(name)).or_default();
        k.0 += 1;
        k.1 += e.size_bytes;
    }
    let mut by_count: Vec<(&str, (usize, u64))> = kinds.into_iter().collect();
    by_count.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(b.0)));
    let top: Vec<String> = by_count
        .iter()
        .take(6)
        .map(|(k, (n, _))| format!("{k} {n}"))
        .collect();
    let header = format!(
        "{}, {}; kinds: {}\n",
        files(root.total_files),
        human_size(root.total_bytes),
        if top.is_empty() {
            "none".to_owned()
        } else {
            top.join(", ")
        }
    );

    // The deepest rendering that fits; deeper levels only grow the text.
    let mut best = None;
    for levels in 0..=root.depth() {
        let mut body = String::new();
        root.render(&mut body, 0, levels);
        if header.chars().count() + body.chars().count() > max_chars {
            break;
        }
        best = Some(body);
    }
    let body = best.unwrap_or_else(|| {
        let mut body = String::new();
        root.render(&mut body, 0, 0);
        body
    });
    cut(&(header + &body), max_chars)
}

fn files(n: usize) -> String {
    if n == 1 {
        "1 file".to_owned()
    } else {
        format!("{n} files")
    }
}

/// At most `max` characters, cut at a line end and marked.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    const MARK: &str = "… (cut)\n";
    let budget = max.saturating_sub(MARK.chars().count());
    let end = text
        .char_indices()
        .nth(budget)
        .map_or(text.len(), |(i, _)| i);
    let line_end = text[..end].rfind('\n').map_or(0, |i| i + 1);
    format!("{}{MARK}", &text[..line_end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(list: &[(&str, u64)]) -> Vec<IndexEntry> {
        list.iter()
            .map(|(p, s)| IndexEntry {
                path: (*p).to_owned(),
                size_bytes: *s,
            })
            .collect()
    }

    fn small_repo() -> Vec<IndexEntry> {
        entries(&[
            ("Cargo.toml", 420),
            ("Cargo.lock", 40_960),
            ("README.md", 2_100),
            ("src/main.rs", 1_800),
            ("src/auth/jwt.rs", 5_300),
            ("src/auth/mod.rs", 300),
            ("tests/login.rs", 2_400),
            ("scripts/test.sh", 90),
        ])
    }

    #[test]
    fn a_small_repository_shows_in_full() {
        insta::assert_snapshot!("index_small", summarize(&small_repo(), DEFAULT_MAX_CHARS));
    }

    #[test]
    fn a_tight_bound_collapses_deeper_levels_first() {
        insta::assert_snapshot!("index_collapsed", summarize(&small_repo(), 250));
    }

    #[test]
    fn a_large_repository_stays_within_the_bound() {
        let big: Vec<IndexEntry> = (0..10_000)
            .map(|i| IndexEntry {
                path: format!("pkg{}/mod{}/sub{}/file{i}.rs", i % 40, i % 7, i % 3),
                size_bytes: 1_000 + i,
            })
            .collect();
        for max in [3_000, 800, 100, 10] {
            let s = summarize(&big, max);
            assert!(s.chars().count() <= max, "{max}: {}", s.chars().count());
        }
        let s = summarize(&big, DEFAULT_MAX_CHARS);
        assert!(s.starts_with("10000 files,"), "{s}");
        assert!(s.contains("… 15 more entries"), "{s}");
    }

    #[test]
    fn kinds_and_sizes() {
        for (name, kind) in [
            ("main.rs", "rust"),
            ("App.TSX", "typescript"),
            ("Dockerfile", "docker"),
            ("Makefile", "make"),
            ("Cargo.lock", "lockfile"),
            ("notes", "other"),
            (".gitignore", "other"),
        ] {
            assert_eq!(kind_of(name), kind, "{name}");
        }
        for (bytes, text) in [
            (0, "0 B"),
            (1023, "1023 B"),
            (1024, "1.0 KB"),
            (5 * 1024 * 1024, "5.0 MB"),
        ] {
            assert_eq!(human_size(bytes), text);
        }
        assert_eq!(summarize(&[], 100), "0 files, 0 B; kinds: none\n");
    }
}
