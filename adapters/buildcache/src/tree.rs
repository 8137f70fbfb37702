//! Copying trees: hard links where the file is only ever replaced, copies (with their
//! modification time) where a tool rewrites it in place.

use std::path::Path;

use forge_domain::ForgeError;
use forge_domain::task::buildcache::{CacheKind, SeedAction, seed_action};

use crate::io;

/// Recreates `from` at `to` following [`seed_action`] for `kind`.
pub(crate) fn link(kind: CacheKind, from: &Path, to: &Path) -> Result<(), ForgeError> {
    std::fs::create_dir_all(to).map_err(|e| io(to, e))?;
    for entry in walkdir::WalkDir::new(from).min_depth(1) {
        let entry = entry.map_err(|e| io(from, e))?;
        let relative = entry.path().strip_prefix(from).unwrap_or(entry.path());
        let rel_text = relative.to_string_lossy().replace('\\', "/");
        let target = to.join(relative);
        let file_type = entry.file_type();
        if file_type.is_dir() {
            if seed_action(kind, &format!("{rel_text}/")) != SeedAction::Skip {
                std::fs::create_dir_all(&target).map_err(|e| io(&target, e))?;
            }
            continue;
        }
        let action = seed_action(kind, &rel_text);
        if action == SeedAction::Skip {
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        if file_type.is_symlink() {
            let points_to = std::fs::read_link(entry.path()).map_err(|e| io(entry.path(), e))?;
            std::os::unix::fs::symlink(points_to, &target).map_err(|e| io(&target, e))?;
            continue;
        }
        if action == SeedAction::Link && std::fs::hard_link(entry.path(), &target).is_ok() {
            continue;
        }
        copy_with_time(entry.path(), &target)?;
    }
    Ok(())
}

/// Copies a file and gives the copy the original's modification time (cargo compares them).
pub(crate) fn copy_with_time(from: &Path, to: &Path) -> Result<(), ForgeError> {
    std::fs::copy(from, to).map_err(|e| io(to, e))?;
    let modified = std::fs::metadata(from)
        .and_then(|m| m.modified())
        .map_err(|e| io(from, e))?;
    // Setting explicit times needs ownership, not write access (read-only files too).
    let file = std::fs::File::open(to).map_err(|e| io(to, e))?;
    file.set_modified(modified).map_err(|e| io(to, e))
}

pub(crate) fn copy_missing(
    from: &Path,
    to: &Path,
    names: &[String],
) -> Result<Vec<String>, ForgeError> {
    let mut copied = Vec::new();
    for name in names {
        let (source, target) = (from.join(name), to.join(name));
        if source.is_file() && !target.exists() {
            copy_with_time(&source, &target)?;
            copied.push(name.clone());
        }
    }
    Ok(copied)
}

/// The bytes of the files under `dir` (a file hard-linked with the user's build counts in
/// full, so the limit errs on the side of trimming).
pub(crate) fn size(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}
