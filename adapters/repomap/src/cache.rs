//! The per-repository tags cache: one JSON file, `<dir>/<digest of the repository
//! path>.json`, mapping a file's content digest (with its grammar) to its tags. A file
//! whose content is unchanged is not parsed again, whatever work tree it is in; entries of
//! files no longer present are dropped at the next write. The checkout's files also have a
//! stamp (size, modification time → digest), so an unchanged file is not even read. Writes
//! go to a temporary file renamed into place, so a concurrent reader sees the old or the
//! new cache, never half.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use forge_domain::task::repomap::Definition;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Bumped when the tags' meaning changes (tokenizer, what counts as a reference).
const VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Entry {
    pub defs: Vec<Definition>,
    pub refs: Vec<(String, u32)>,
    pub terms: Vec<(String, u32)>,
}

/// What a file of the checkout was when its content had key `key`: a file with the same
/// size and modification time is taken from the cache without being read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stamp {
    pub size: u64,
    pub mtime_ns: u128,
    pub key: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Cache {
    version: u32,
    pub entries: HashMap<String, Entry>,
    /// The checkout's files (absolute path) by size and mtime; not the task work trees'
    /// (fresh checkouts, removed after the task).
    #[serde(default)]
    pub stamps: HashMap<String, Stamp>,
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The cache key of a file's content read as `lang`.
pub(crate) fn key(lang_tag: &str, bytes: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(lang_tag.as_bytes());
    h.update([0]);
    h.update(bytes);
    hex(&h.finalize())
}

/// The cache file of `repo` under `dir`.
pub(crate) fn file(dir: &Path, repo: &Path) -> PathBuf {
    let canonical = repo.canonicalize().unwrap_or_else(|_| repo.to_path_buf());
    let digest = hex(&Sha256::digest(canonical.to_string_lossy().as_bytes()));
    dir.join(format!("{}.json", &digest[..16]))
}

/// The cache at `path`; empty when absent, unreadable or of another version.
pub(crate) fn load(path: &Path) -> Cache {
    let Ok(bytes) = std::fs::read(path) else {
        return Cache::default();
    };
    match serde_json::from_slice::<Cache>(&bytes) {
        Ok(c) if c.version == VERSION => c,
        _ => Cache::default(),
    }
}

/// Writes `entries` as the cache at `path`. Failing to is not an error for the map (the
/// next call parses again), so the result only says whether it was written.
pub(crate) fn store(
    path: &Path,
    entries: HashMap<String, Entry>,
    stamps: HashMap<String, Stamp>,
) -> bool {
    let cache = Cache {
        version: VERSION,
        entries,
        stamps,
    };
    let Some(dir) = path.parent() else {
        return false;
    };
    if std::fs::create_dir_all(dir).is_err() {
        return false;
    }
    let Ok(bytes) = serde_json::to_vec(&cache) else {
        return false;
    };
    let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
    if std::fs::write(&tmp, bytes).is_err() {
        return false;
    }
    if std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
        return false;
    }
    true
}
