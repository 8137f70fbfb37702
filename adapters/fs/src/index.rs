//! [`FsRepoIndex`]: the [`RepoIndexer`] port over the `ignore` crate's walker (the one
//! ripgrep uses): `.gitignore`, `.ignore`, `.git/info/exclude` and the global excludes are
//! respected, hidden files are kept (a `.github/` or `.env.example` matters to a reviewer),
//! `.git/` itself and forge's own `.forgecode/` are left out.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_ports::{EntryKind, IndexEntry, RepoIndexer};
use ignore::{WalkBuilder, WalkState};

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
    // The parallel walker: a directory read and a stat per file is most of the cost, and
    // they overlap well across threads.
    let threads = std::thread::available_parallelism()
        .map_or(2, usize::from)
        .min(8);
    let walker = WalkBuilder::new(root)
        .hidden(false)
        // Respect .gitignore even where there is no `.git` (a plain directory, a bare
        // mirror's work tree).
        .require_git(false)
        .threads(threads)
        .filter_entry(|e| {
            let name = e.file_name();
            e.depth() == 0 || (name != ".git" && name != ".forgecode")
        })
        .build_parallel();
    let found: Mutex<Vec<IndexEntry>> = Mutex::new(Vec::new());
    let full = AtomicBool::new(false);
    let (found_ref, full_ref) = (&found, &full);
    walker.run(|| {
        let mut batch = Batch {
            local: Vec::new(),
            found: found_ref,
            limit,
            full: full_ref,
        };
        Box::new(move |item| {
            // An unreadable subdirectory is skipped, not fatal: the index is a summary.
            let Ok(entry) = item else {
                return WalkState::Continue;
            };
            if entry.depth() > 0 {
                if let Some(e) = to_entry(root, &entry) {
                    batch.local.push(e);
                }
            }
            if batch.local.len() >= 256 {
                batch.flush();
            }
            if full_ref.load(Ordering::Relaxed) {
                return WalkState::Quit;
            }
            WalkState::Continue
        })
    });
    let mut entries = found
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    entries.truncate(limit);
    Ok(entries)
}

/// One walker thread's entries, handed to the shared list in batches (and the rest when
/// the thread's visitor is dropped at the end of the walk).
struct Batch<'a> {
    local: Vec<IndexEntry>,
    found: &'a Mutex<Vec<IndexEntry>>,
    limit: usize,
    full: &'a AtomicBool,
}

impl Batch<'_> {
    fn flush(&mut self) {
        let mut all = self
            .found
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        all.append(&mut self.local);
        if all.len() >= self.limit {
            self.full.store(true, Ordering::Relaxed);
        }
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

fn to_entry(root: &Path, entry: &ignore::DirEntry) -> Option<IndexEntry> {
    let rel = entry.path().strip_prefix(root).ok()?;
    let file_type = entry.file_type()?;
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
    Some(IndexEntry {
        path: rel.to_string_lossy().replace('\\', "/"),
        kind,
        size,
    })
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
