//! The source files a build judged (digest, mtime), and giving identical files that time
//! back (`forge_domain::task::buildcache::restorable_mtimes`).

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use forge_domain::ForgeError;
use forge_domain::task::buildcache::{CacheKind, SourceFile, restorable_mtimes};

use crate::{digest, io};

fn nanos(time: SystemTime) -> i128 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(d) => i128::try_from(d.as_nanos()).unwrap_or(i128::MAX),
        Err(e) => -i128::try_from(e.duration().as_nanos()).unwrap_or(i128::MAX),
    }
}

fn time_of(ns: i128) -> SystemTime {
    let magnitude = Duration::from_nanos(u64::try_from(ns.unsigned_abs()).unwrap_or(u64::MAX));
    if ns >= 0 {
        UNIX_EPOCH + magnitude
    } else {
        UNIX_EPOCH - magnitude
    }
}

/// The files of the tree at `dir` that are not ignored (`.gitignore`, `.git/info/exclude`),
/// plus the lockfiles a build reads even when ignored; never `.git` or `.forgecode`.
pub(crate) fn scan(dir: &Path) -> Result<Vec<SourceFile>, ForgeError> {
    let mut files = Vec::new();
    let walk = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .parents(false)
        .require_git(false)
        .filter_entry(|e| {
            let name = e.file_name();
            name != ".git" && name != ".forgecode"
        })
        .build();
    for entry in walk {
        let entry = entry.map_err(|e| io(dir, e))?;
        if entry.file_type().is_some_and(|t| t.is_file()) {
            files.push(file(dir, entry.path())?);
        }
    }
    for kind in CacheKind::ALL {
        for name in kind.lockfiles() {
            let path = dir.join(name);
            let relative = (*name).to_owned();
            if path.is_file() && !files.iter().any(|f| f.path == relative) {
                files.push(file(dir, &path)?);
            }
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

fn file(dir: &Path, path: &Path) -> Result<SourceFile, ForgeError> {
    let bytes = std::fs::read(path).map_err(|e| io(path, e))?;
    let mtime = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .map_err(|e| io(path, e))?;
    Ok(SourceFile {
        path: path
            .strip_prefix(dir)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/"),
        digest: digest::bytes(&bytes),
        mtime_ns: nanos(mtime),
    })
}

pub(crate) fn record(record: &Path, tree: &Path) -> Result<(), ForgeError> {
    let files = scan(tree)?;
    let text = serde_json::to_vec(&files).map_err(|e| io(record, e))?;
    let partial = record.with_extension("json.partial");
    std::fs::write(&partial, text).map_err(|e| io(&partial, e))?;
    std::fs::rename(&partial, record).map_err(|e| io(record, e))
}

pub(crate) fn restore(record: &Path, tree: &Path) -> Result<usize, ForgeError> {
    let seen: Vec<SourceFile> = match std::fs::read(record) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_default(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(io(record, e)),
    };
    let now = scan(tree)?;
    let restore = restorable_mtimes(&seen, &now);
    for (relative, ns) in &restore {
        let path = tree.join(relative);
        let file = std::fs::File::open(&path).map_err(|e| io(&path, e))?;
        file.set_modified(time_of(*ns)).map_err(|e| io(&path, e))?;
    }
    Ok(restore.len())
}
