//! The files of a work tree as the map sees them: what git would track (`.gitignore`,
//! `.ignore`, the global excludes respected), without `.git/` and forge's `.forgecode/`.

use std::path::{Path, PathBuf};

use forge_domain::ForgeError;
use ignore::WalkBuilder;

/// `(path from the root with '/' separators, absolute path)` of each file, sorted, at
/// most `limit`.
pub(crate) fn files(root: &Path, limit: usize) -> Result<Vec<(String, PathBuf)>, ForgeError> {
    if !root.is_dir() {
        return Err(ForgeError::io(
            format!("mapping {}", root.display()),
            "not a directory",
        ));
    }
    let mut out = Vec::new();
    let walker = WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .filter_entry(|e| {
            let name = e.file_name();
            e.depth() == 0 || (name != ".git" && name != ".forgecode")
        })
        .build();
    for entry in walker.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        out.push((
            rel.to_string_lossy().replace('\\', "/"),
            entry.path().to_path_buf(),
        ));
    }
    out.sort();
    out.truncate(limit);
    Ok(out)
}
