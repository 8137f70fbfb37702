//! Where the database lives: `[store] url` or the default under the repository.

use std::path::{Path, PathBuf};

use forge_domain::ForgeError;

/// Relative to the repository root.
pub const DEFAULT_FILE: &str = ".forgecode/forge.db";

/// The database file for `url` (`sqlite:///abs/path`, `sqlite://rel/path`, `sqlite:path` or a
/// plain path; relative paths are taken from `repo`), or the default under `repo`.
///
/// # Errors
/// [`ForgeError::InvalidRequest`] for another scheme (`postgres://…`: no adapter yet) or an
/// empty path.
pub fn resolve_location(url: Option<&str>, repo: &Path) -> Result<PathBuf, ForgeError> {
    let Some(url) = url.map(str::trim) else {
        return Ok(repo.join(DEFAULT_FILE));
    };
    let path = if let Some(rest) = url.strip_prefix("sqlite://") {
        rest
    } else if let Some(rest) = url.strip_prefix("sqlite:") {
        rest
    } else if url.contains("://") {
        return Err(ForgeError::InvalidRequest {
            reason: format!(
                "[store] url {url:?}: only sqlite is supported (sqlite:///path/to/forge.db or a path)"
            ),
        });
    } else {
        url
    };
    if path.is_empty() {
        return Err(ForgeError::InvalidRequest {
            reason: format!("[store] url {url:?} names no file"),
        });
    }
    let path = Path::new(path);
    Ok(if path.is_absolute() {
        path.to_path_buf()
    } else {
        repo.join(path)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(url: Option<&str>, expected: Result<&str, &str>) {
        let got = resolve_location(url, Path::new("/repo"));
        match (got, expected) {
            (Ok(path), Ok(want)) => assert_eq!(path, PathBuf::from(want), "{url:?}"),
            (Err(err), Err(needle)) => assert!(err.to_string().contains(needle), "{err}"),
            (got, want) => panic!("{url:?}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn locations() {
        check(None, Ok("/repo/.forgecode/forge.db"));
        check(Some("sqlite:///var/forge.db"), Ok("/var/forge.db"));
        check(Some("sqlite://state/forge.db"), Ok("/repo/state/forge.db"));
        check(Some("sqlite:x.db"), Ok("/repo/x.db"));
        check(Some("/abs/f.db"), Ok("/abs/f.db"));
        check(Some(" rel.db "), Ok("/repo/rel.db"));
        check(Some("postgres://db/forge"), Err("only sqlite"));
        check(Some("sqlite://"), Err("names no file"));
    }
}
