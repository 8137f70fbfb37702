//! [`FsRepoIndex`]: the [`RepoIndexer`] port over the `ignore` crate's walker (the one
//! ripgrep uses): `.gitignore`, `.ignore`, `.git/info/exclude` and the global excludes are
//! respected, hidden files are kept (a `.github/` or `.env.example` matters to a reviewer),
//! `.git/` itself and forge's own `.forgecode/` are left out.

use std::path::Path;

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_ports::{EntryKind, IndexEntry, RepoIndexer};
use ignore::WalkBuilder;

use crate::blocking::run_blocking;

#[derive(Debug, Clone, Copy, Default)]
pub struct FsRepoIndex;

impl FsRepoIndex {
    pub fn new() -> Self {
        Self
    }
}

#[async_trait]
impl RepoIndexer for FsRepoIndex {
    async fn index(&self, root: &Path, limit: usize) -> Result<Vec<IndexEntry>, ForgeError> {
        let root = root.to_path_buf();
        run_blocking("indexing a repository", move || walk(&root, limit)).await
    }
}

fn walk(root: &Path, limit: usize) -> Result<Vec<IndexEntry>, ForgeError> {
    if !root.is_dir() {
        return Err(ForgeError::io(
            format!("indexing {}", root.display()),
            "not a directory",
        ));
    }
    let walker = WalkBuilder::new(root)
        .hidden(false)
        // Respect .gitignore even where there is no `.git` (a plain directory, a bare
        // mirror's work tree).
        .require_git(false)
        .filter_entry(|e| {
            let name = e.file_name();
            e.depth() == 0 || (name != ".git" && name != ".forgecode")
        })
        .build();
    let mut entries = Vec::new();
    for item in walker {
        // An unreadable subdirectory is skipped, not fatal: the index is a summary.
        let Ok(entry) = item else { continue };
        if entry.depth() == 0 {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let Some(file_type) = entry.file_type() else {
            continue;
        };
        let (kind, size) = if file_type.is_symlink() {
            (EntryKind::Symlink, 0)
        } else if file_type.is_dir() {
            (EntryKind::Dir, 0)
        } else {
            (
                EntryKind::File,
                entry.metadata().map(|m| m.len()).unwrap_or(0),
            )
        };
        entries.push(IndexEntry {
            path: rel.to_string_lossy().replace('\\', "/"),
            kind,
            size,
        });
        if entries.len() >= limit {
            break;
        }
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn respects_gitignore_and_skips_git_and_forge_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (path, text) in [
            (".gitignore", "target/\n*.log\n"),
            ("src/main.rs", "fn main() {}\n"),
            ("target/debug/x", "bin"),
            ("run.log", "log"),
            (".git/HEAD", "ref"),
            (".forgecode/runs/r/result.json", "{}"),
            (".github/workflows/ci.yml", "on: push\n"),
        ] {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let entries = FsRepoIndex::new().index(root, 100).await.unwrap();
        let got: Vec<(String, EntryKind, u64)> = entries
            .into_iter()
            .map(|e| (e.path, e.kind, e.size))
            .collect();
        assert_eq!(
            got,
            vec![
                (".github".to_owned(), EntryKind::Dir, 0),
                (".github/workflows".to_owned(), EntryKind::Dir, 0),
                (".github/workflows/ci.yml".to_owned(), EntryKind::File, 9),
                (".gitignore".to_owned(), EntryKind::File, 14),
                ("src".to_owned(), EntryKind::Dir, 0),
                ("src/main.rs".to_owned(), EntryKind::File, 13),
            ]
        );
    }
}
