//! [`TreeSitterMapper`]: walk, read, look up or parse, write the cache back.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::task::repomap::FileTags;
use forge_ports::{RepoMapper, RepoTags};

use crate::cache::{self, Cache, Entry, Stamp};
use crate::parse::{Lang, tags_of};
use crate::walk;

/// Files larger than this are shown by path only (generated code, data).
const MAX_BYTES: usize = 1024 * 1024;
/// A NUL byte in this many first bytes marks a binary file (shown by path only).
const SNIFF: usize = 8 * 1024;
/// A file's stamp is trusted when its mtime is at least this old (see [`stamp_of`]).
const STAMP_AGE: Duration = Duration::from_secs(2);

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
        let mut old = cache_file.as_deref().map(cache::load).unwrap_or_default();
        // Stamps are the checkout's: a task's work tree is a fresh checkout, removed after.
        let checkout = same_dir(root, repo);
        let probes = probe_all(&files, &old, checkout);
        let old_entries = old.entries.len();
        let mut out = RepoTags::default();
        // Content key → the index in `out.files` of the first file with that content.
        let mut first_of: HashMap<String, usize> = HashMap::new();
        let mut stamps = HashMap::new();
        for ((path, abs), probe) in files.iter().zip(probes) {
            let (key, stamp, parsed) = match probe {
                Probe::PathOnly => {
                    out.files.push(path_only(path));
                    continue;
                }
                Probe::Cached { key, stamp } => {
                    out.cached += 1;
                    (key, stamp, None)
                }
                Probe::Parsed { key, stamp, tags } => {
                    out.parsed += 1;
                    (key, stamp, Some(tags))
                }
            };
            let tags = match (parsed, old.entries.remove(&key), first_of.get(&key)) {
                (Some(tags), _, _) => tags,
                (None, Some(e), _) => FileTags {
                    path: path.clone(),
                    defs: e.defs,
                    refs: e.refs,
                    terms: e.terms,
                },
                // The same content as a file before it (its entry already taken).
                (None, None, Some(&i)) => FileTags {
                    path: path.clone(),
                    ..out.files[i].clone()
                },
                (None, None, None) => path_only(path),
            };
            if let Some(stamp) = stamp {
                stamps.insert(
                    abs.to_string_lossy().into_owned(),
                    Stamp {
                        size: stamp.0,
                        mtime_ns: stamp.1,
                        key: key.clone(),
                    },
                );
            }
            first_of.entry(key).or_insert(out.files.len());
            out.files.push(tags);
        }
        if !checkout {
            stamps = std::mem::take(&mut old.stamps);
        }
        let changed = out.parsed > 0 || first_of.len() != old_entries || stamps != old.stamps;
        if let Some(path) = cache_file
            && changed
        {
            let entries = first_of
                .into_iter()
                .map(|(key, i)| {
                    let t = &out.files[i];
                    let entry = Entry {
                        defs: t.defs.clone(),
                        refs: t.refs.clone(),
                        terms: t.terms.clone(),
                    };
                    (key, entry)
                })
                .collect();
            cache::store(&path, entries, stamps);
        }
        Ok(out)
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
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

/// What reading one file found.
enum Probe {
    /// Shown by path only (unreadable, binary, too large).
    PathOnly,
    /// Its tags are in the cache under `key`.
    Cached {
        key: String,
        stamp: Option<(u64, u128)>,
    },
    /// Parsed now.
    Parsed {
        key: String,
        stamp: Option<(u64, u128)>,
        tags: FileTags,
    },
}

/// Probes `files` on a few threads (parsing is CPU-bound; a repository of a few hundred
/// files parses in well under a second cold).
fn probe_all(files: &[(String, PathBuf)], cache: &Cache, checkout: bool) -> Vec<Probe> {
    let threads = std::thread::available_parallelism()
        .map_or(2, usize::from)
        .clamp(1, 8);
    let chunk = files.len().div_ceil(threads).max(1);
    let now = SystemTime::now();
    std::thread::scope(|s| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|f| probe(f, cache, checkout, now))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all = Vec::with_capacity(files.len());
        for (h, part) in handles.into_iter().zip(files.chunks(chunk)) {
            match h.join() {
                Ok(v) => all.extend(v),
                // A parser that panicked on one file costs that chunk its tags, not the map.
                Err(_) => all.extend(part.iter().map(|_| Probe::PathOnly)),
            }
        }
        all
    })
}

fn path_only(path: &str) -> FileTags {
    FileTags {
        path: path.to_owned(),
        ..FileTags::default()
    }
}

/// A stamp trusted later: the file's size and mtime, when the mtime is at least
/// [`STAMP_AGE`] old (a file written again within the file system's time granularity
/// could keep its mtime; an older one cannot).
fn stamp_of(meta: &std::fs::Metadata, now: SystemTime) -> Option<(u64, u128)> {
    let mtime = meta.modified().ok()?;
    now.duration_since(mtime)
        .ok()
        .filter(|age| *age >= STAMP_AGE)?;
    let ns = mtime
        .duration_since(SystemTime::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    Some((meta.len(), ns))
}

fn probe((path, abs): &(String, PathBuf), cache: &Cache, checkout: bool, now: SystemTime) -> Probe {
    let Ok(meta) = std::fs::metadata(abs) else {
        return Probe::PathOnly;
    };
    if usize::try_from(meta.len()).map_or(true, |n| n > MAX_BYTES) {
        return Probe::PathOnly;
    }
    let stamp = if checkout { stamp_of(&meta, now) } else { None };
    if let Some((size, mtime_ns)) = stamp
        && let Some(old) = cache.stamps.get(abs.to_string_lossy().as_ref())
        && old.size == size
        && old.mtime_ns == mtime_ns
        && cache.entries.contains_key(&old.key)
    {
        return Probe::Cached {
            key: old.key.clone(),
            stamp,
        };
    }
    let Ok(bytes) = std::fs::read(abs) else {
        return Probe::PathOnly;
    };
    if bytes.len() > MAX_BYTES || bytes[..bytes.len().min(SNIFF)].contains(&0) {
        return Probe::PathOnly;
    }
    let lang = Lang::of(path);
    let key = cache::key(lang.tag(), &bytes);
    if cache.entries.contains_key(&key) {
        return Probe::Cached { key, stamp };
    }
    let text = String::from_utf8_lossy(&bytes);
    Probe::Parsed {
        key,
        stamp,
        tags: tags_of(path, &text),
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

    fn age(path: &Path, secs: u64) -> SystemTime {
        let when = SystemTime::now() - Duration::from_secs(secs);
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(when)
            .unwrap();
        when
    }

    #[tokio::test]
    async fn an_old_file_of_the_checkout_with_its_size_and_mtime_is_not_read_again() {
        let repo = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let root = repo.path();
        write(root, "old.rs", "pub fn a() {}\n");
        write(root, "new.rs", "pub fn b() {}\n");
        let old_time = age(&root.join("old.rs"), 3600);
        let mapper = TreeSitterMapper::new(Some(cache.path().to_path_buf()));
        let first = mapper.tags(root, root, 100).await.unwrap();
        assert_eq!((first.parsed, first.cached), (2, 0));
        // Same size, same mtime, other content: the stamp says unchanged, so it is not
        // read (the trade every stamp-based cache makes, git's index included).
        write(root, "old.rs", "pub fn z() {}\n");
        std::fs::File::options()
            .write(true)
            .open(root.join("old.rs"))
            .unwrap()
            .set_modified(old_time)
            .unwrap();
        // A file written just now is read whatever its stamp: its mtime is too recent.
        write(root, "new.rs", "pub fn c() {}\n");
        let again = mapper.tags(root, root, 100).await.unwrap();
        let names: Vec<&str> = again
            .files
            .iter()
            .map(|f| f.defs[0].name.as_str())
            .collect();
        assert_eq!(names, vec!["c", "a"]);
        assert_eq!((again.parsed, again.cached), (1, 1));
        // Another mtime: read, and its new content parsed.
        age(&root.join("old.rs"), 7200);
        let moved = mapper.tags(root, root, 100).await.unwrap();
        assert_eq!(moved.files[1].defs[0].name, "z");
        // A work tree other than the checkout uses and records no stamps.
        let tree = tempfile::tempdir().unwrap();
        write(tree.path(), "old.rs", "pub fn z() {}\n");
        let other = mapper.tags(tree.path(), root, 100).await.unwrap();
        assert_eq!((other.parsed, other.cached), (0, 1));
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
