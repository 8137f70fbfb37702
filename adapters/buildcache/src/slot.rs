//! Slots: one cache entry may have several, so tasks running at the same time each build
//! in their own; a slot belongs to the task holding its `lock` (flock, released by the
//! kernel even when forge is killed).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use forge_domain::ForgeError;
use forge_domain::task::buildcache::{CacheKind, CacheState, CacheUsage};
use forge_ports::{CacheClaim, ClaimRequest};
use nix::fcntl::{Flock, FlockArg};

use crate::{cargo_lock, io, sources, tree};

const LOCK: &str = "lock";
const LAST_USED: &str = "last-used";
const READY: &str = "ready";
const SOURCES: &str = "sources.json";
const CACHE: &str = "cache";
/// How long seeding waits for a cargo build running in the checkout; past it the slot starts
/// empty (a miss) rather than copying a build being written.
const SEED_WAIT: std::time::Duration = std::time::Duration::from_secs(60);
/// More slots than tasks a machine runs at once on one repository.
const MAX_SLOTS: u32 = 64;

/// The slot directory of a claim's cache directory.
fn slot_of(cache_dir: &Path) -> &Path {
    cache_dir.parent().unwrap_or(cache_dir)
}

pub(crate) fn sources_file(cache_dir: &Path) -> PathBuf {
    slot_of(cache_dir).join(SOURCES)
}

/// The slot's lock, when no one else holds it.
fn try_lock(slot: &Path) -> Result<Option<Flock<File>>, ForgeError> {
    let path = slot.join(LOCK);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| io(&path, e))?;
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => Ok(Some(lock)),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(None),
        Err((_, e)) => Err(io(&path, e)),
    }
}

pub(crate) fn claim(root: &Path, request: &ClaimRequest) -> Result<CacheClaim, ForgeError> {
    let entry = root.join(&request.repo_folder).join(&request.entry);
    for n in 0..MAX_SLOTS {
        let slot = entry.join(format!("slot-{n}"));
        std::fs::create_dir_all(&slot).map_err(|e| io(&slot, e))?;
        let Some(lock) = try_lock(&slot)? else {
            continue;
        };
        std::fs::write(slot.join(LAST_USED), b"").map_err(|e| io(&slot, e))?;
        let dir = slot.join(CACHE);
        let (state, ready) = if slot.join(READY).exists() && dir.exists() {
            (CacheState::Hit, true)
        } else {
            prepare_new(&slot, &dir, request)?
        };
        return Ok(CacheClaim {
            kind: request.kind,
            label: format!("{} slot {n}", request.entry),
            dir,
            ready,
            state,
            lease: Box::new(lock),
        });
    }
    Err(ForgeError::io(
        entry.display().to_string(),
        format!("all {MAX_SLOTS} slots are held by running tasks"),
    ))
}

/// A slot without a complete cache (new, or seeding was interrupted): emptied, then seeded
/// from the checkout's build when there is one, else left empty for the task to fill.
fn prepare_new(
    slot: &Path,
    dir: &Path,
    request: &ClaimRequest,
) -> Result<(CacheState, bool), ForgeError> {
    for stale in [dir.to_owned(), slot.join(SOURCES), slot.join(READY)] {
        remove_any(&stale)?;
    }
    let seed = request.checkout.join(request.kind.seed_dir());
    let mut seedable = request.seed && request.kind != CacheKind::Python && seed.is_dir();
    // Held while the checkout's target is copied: a cargo build running there finishes
    // first, one starting meanwhile waits.
    let mut _builds = None;
    if seedable && request.kind == CacheKind::Cargo {
        _builds = cargo_lock::lock_builds(&seed, SEED_WAIT)?;
        seedable = _builds.is_some();
    }
    if seedable {
        let partial = slot.join(format!("{CACHE}.partial"));
        remove_any(&partial)?;
        tree::link(request.kind, &seed, &partial)?;
        std::fs::rename(&partial, dir).map_err(|e| io(dir, e))?;
        // What the user's build was judged against: the checkout's sources as they are.
        sources::record(&slot.join(SOURCES), &request.checkout)?;
        mark_ready(dir)?;
        return Ok((CacheState::Seeded, true));
    }
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    // An empty target directory is a valid one: cargo fills it itself.
    if request.kind == CacheKind::Cargo {
        mark_ready(dir)?;
        return Ok((CacheState::Miss, true));
    }
    Ok((CacheState::Miss, false))
}

fn remove_any(path: &Path) -> Result<(), ForgeError> {
    let result = match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    };
    result.map_err(|e| io(path, e))
}

pub(crate) fn mark_ready(cache_dir: &Path) -> Result<(), ForgeError> {
    let path = slot_of(cache_dir).join(READY);
    std::fs::write(&path, b"").map_err(|e| io(&path, e))
}

/// The slot directories: `<root>/<repo>/<entry>/slot-<n>`.
fn slots(root: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(root)
        .min_depth(3)
        .max_depth(3)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_dir() && e.file_name().to_string_lossy().starts_with("slot-"))
        .map(walkdir::DirEntry::into_path)
        .collect()
}

fn millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

pub(crate) fn usage(root: &Path) -> Result<Vec<CacheUsage>, ForgeError> {
    let mut out = Vec::new();
    for slot in slots(root) {
        let in_use = try_lock(&slot)?.is_none();
        let last_used_ms = std::fs::metadata(slot.join(LAST_USED))
            .and_then(|m| m.modified())
            .map(millis)
            .unwrap_or(0);
        out.push(CacheUsage {
            path: slot.display().to_string(),
            size_bytes: tree::size(&slot),
            last_used_ms,
            in_use,
        });
    }
    Ok(out)
}

pub(crate) fn remove(root: &Path, path: &Path) -> Result<bool, ForgeError> {
    let is_slot = path.starts_with(root)
        && path.components().count() == root.components().count() + 3
        && path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("slot-"));
    if !is_slot {
        return Err(ForgeError::io(
            path.display().to_string(),
            format!("not a build cache slot under {}", root.display()),
        ));
    }
    let Some(_lock) = try_lock(path)? else {
        return Ok(false);
    };
    // Everything but the lock first (held until the end), then the directory.
    for entry in std::fs::read_dir(path).map_err(|e| io(path, e))? {
        let entry = entry.map_err(|e| io(path, e))?;
        if entry.file_name() != LOCK {
            remove_any(&entry.path())?;
        }
    }
    remove_any(path)?;
    Ok(true)
}
