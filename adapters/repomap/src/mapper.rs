//! [`TreeSitterMapper`]: walk, read, look up or parse, write the cache back.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::task::repomap::FileTags;
use forge_ports::{RepoMapper, RepoTags};

use crate::cache::{self, Cache, Entry};
use crate::parse::{Lang, tags_of};
use crate::walk;

/// Files larger than this are shown by path only (generated code, data).
const MAX_BYTES: usize = 1024 * 1024;
/// A NUL byte in this many first bytes marks a binary file (shown by path only).
const SNIFF: usize = 8 * 1024;

/// The tree-sitter repository mapper, caching under `cache_dir` (none: parse every time).
#[derive(Debug, Clone, Default)]
pub struct TreeSitterMapper {
    cache_dir: Option<PathBuf>,
}

impl TreeSitterMapper {
    pub fn new(cache_dir: Option<PathBuf>) -> Self {
        Self { cache_dir }
    }

    /// The blocking work of [`RepoMapper::tags`].
    ///
    /// # Errors
    /// [`ForgeError::Io`] when `root` cannot be read.
    pub fn tags_blocking(
        &self,
        root: &Path,
        repo: &Path,
        limit: usize,
    ) -> Result<RepoTags, ForgeError> {
        let files = walk::files(root, limit)?;
        let cache_file = self.cache_dir.as_deref().map(|d| cache::file(d, repo));
        let old = cache_file.as_deref().map(cache::load).unwrap_or_default();
        let results = read_all(&files, &old);
        let mut out = RepoTags::default();
        let mut entries = HashMap::new();
        for r in results {
            if r.cached {
                out.cached += 1;
            } else if r.key.is_some() {
                out.parsed += 1;
            }
            if let Some(key) = r.key {
                entries.insert(
                    key,
                    Entry {
                        defs: r.tags.defs.clone(),
                        refs: r.tags.refs.clone(),
                        terms: r.tags.terms.clone(),
                    },
                );
            }
            out.files.push(r.tags);
        }
        let changed = out.parsed > 0 || entries.len() != old.entries.len();
        if let Some(path) = cache_file
            && changed
        {
            cache::store(&path, entries);
        }
        Ok(out)
    }
}

#[async_trait]
impl RepoMapper for TreeSitterMapper {
    async fn tags(&self, root: &Path, repo: &Path, limit: usize) -> Result<RepoTags, ForgeError> {
        let this = self.clone();
        let (root, repo) = (root.to_path_buf(), repo.to_path_buf());
        match tokio::task::spawn_blocking(move || this.tags_blocking(&root, &repo, limit)).await {
            Ok(result) => result,
            Err(join) => Err(ForgeError::io("mapping a repository", join)),
        }
    }
}

struct Read {
    tags: FileTags,
    /// `None` for a file shown by path only (unreadable, binary, too large).
    key: Option<String>,
    cached: bool,
}

/// Reads and tags `files` on a few threads (parsing is CPU-bound; a repository of a few
/// hundred files parses in well under a second cold).
fn read_all(files: &[(String, PathBuf)], cache: &Cache) -> Vec<Read> {
    let threads = std::thread::available_parallelism()
        .map_or(2, usize::from)
        .clamp(1, 8);
    let chunk = files.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || part.iter().map(|f| read_one(f, cache)).collect::<Vec<_>>())
            })
            .collect();
        let mut all = Vec::with_capacity(files.len());
        for (h, part) in handles.into_iter().zip(files.chunks(chunk)) {
            match h.join() {
                Ok(v) => all.extend(v),
                // A parser that panicked on one file costs that chunk its tags, not the map.
                Err(_) => all.extend(part.iter().map(|(p, _)| path_only(p))),
            }
        }
        all
    })
}

fn path_only(path: &str) -> Read {
    Read {
        tags: FileTags {
            path: path.to_owned(),
            ..FileTags::default()
        },
        key: None,
        cached: false,
    }
}

fn read_one((path, abs): &(String, PathBuf), cache: &Cache) -> Read {
    let Ok(bytes) = std::fs::read(abs) else {
        return path_only(path);
    };
    if bytes.len() > MAX_BYTES || bytes[..bytes.len().min(SNIFF)].contains(&0) {
        return path_only(path);
    }
    let lang = Lang::of(path);
    let key = cache::key(lang.tag(), &bytes);
    if let Some(e) = cache.entries.get(&key) {
        return Read {
            tags: FileTags {
                path: path.clone(),
                defs: e.defs.clone(),
                refs: e.refs.clone(),
                terms: e.terms.clone(),
            },
            key: Some(key),
            cached: true,
        };
    }
    let text = String::from_utf8_lossy(&bytes);
    Read {
        tags: tags_of(path, &text),
        key: Some(key),
        cached: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[tokio::test]
    async fn a_second_call_parses_only_what_changed() {
        let repo = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let root = repo.path();
        write(root, ".gitignore", "target/\n");
        write(root, "src/lib.rs", "pub fn a() {}\n");
        write(root, "src/b.py", "def b():\n    pass\n");
        write(root, "target/x.rs", "fn ignored() {}\n");
        write(root, ".git/HEAD", "ref");
        write(root, "logo.png", "\u{0}\u{1}PNG");
        let mapper = TreeSitterMapper::new(Some(cache.path().to_path_buf()));
        let first = mapper.tags(root, root, 100).await.unwrap();
        let paths: Vec<&str> = first.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            vec![".gitignore", "logo.png", "src/b.py", "src/lib.rs"]
        );
        assert_eq!((first.parsed, first.cached), (3, 0));
        assert_eq!(first.files[3].defs[0].name, "a");

        let again = mapper.tags(root, root, 100).await.unwrap();
        assert_eq!((again.parsed, again.cached), (0, 3));
        assert_eq!(again.files, first.files);

        write(root, "src/lib.rs", "pub fn a2() {}\n");
        let changed = mapper.tags(root, root, 100).await.unwrap();
        assert_eq!((changed.parsed, changed.cached), (1, 2));
        assert_eq!(changed.files[3].defs[0].name, "a2");
    }

    #[tokio::test]
    async fn a_missing_root_is_an_error_and_a_broken_cache_is_not() {
        let cache = tempfile::tempdir().unwrap();
        let mapper = TreeSitterMapper::new(Some(cache.path().to_path_buf()));
        let missing = cache.path().join("nope");
        assert!(mapper.tags(&missing, &missing, 10).await.is_err());
        let repo = tempfile::tempdir().unwrap();
        write(repo.path(), "a.go", "package a\nfunc A() {}\n");
        std::fs::write(cache::file(cache.path(), repo.path()), "not json").unwrap();
        let got = mapper.tags(repo.path(), repo.path(), 10).await.unwrap();
        assert_eq!((got.parsed, got.cached), (1, 0));
    }
}
