//! The workspace path rule, lexically: a requested path must stay under the root.
//!
//! This is the pure half. Symlinks need the file system, so the fs adapter resolves them and
//! runs the result through [`check_within`] again.

use std::path::{Component, Path, PathBuf};

use crate::error::ForgeError;

/// Joins `requested` onto `root` and normalises `.` and `..` without touching the disk.
///
/// # Errors
/// [`ForgeError::WorkspaceSecurity`] when the path climbs above the root with `..`, or is
/// absolute and not under the root.
pub fn resolve_within(root: &Path, requested: &Path) -> Result<PathBuf, ForgeError> {
    let refuse = |reason: &str| ForgeError::WorkspaceSecurity {
        path: requested.display().to_string(),
        reason: reason.to_owned(),
    };
    let root = normalize(root);
    let joined = if requested.is_absolute() {
        requested.to_path_buf()
    } else {
        root.join(requested)
    };
    let mut out = PathBuf::new();
    for comp in joined.components() {
        match comp {
            Component::Prefix(p) => out.push(p.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() || !out.starts_with(&root) {
                    return Err(refuse("it climbs above the workspace root"));
                }
            }
            Component::Normal(name) => out.push(name),
        }
    }
    check_within(&root, &out).map_err(|_| {
        if requested.is_absolute() {
            refuse("absolute path not under the workspace root")
        } else {
            refuse("it climbs above the workspace root")
        }
    })?;
    Ok(out)
}

/// Checks that an already-normalised (or canonicalised) `path` is `root` or below it.
///
/// # Errors
/// [`ForgeError::WorkspaceSecurity`] when it is not.
pub fn check_within(root: &Path, path: &Path) -> Result<(), ForgeError> {
    if path.starts_with(root) {
        Ok(())
    } else {
        Err(ForgeError::WorkspaceSecurity {
            path: path.display().to_string(),
            reason: format!("resolves outside {}", root.display()),
        })
    }
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(requested: &str, want: Option<&str>) {
        let got = resolve_within(Path::new("/w/ws"), Path::new(requested));
        match want {
            Some(p) => assert_eq!(got.unwrap(), PathBuf::from(p), "{requested}"),
            None => assert!(
                matches!(got, Err(ForgeError::WorkspaceSecurity { .. })),
                "{requested} should be refused, got {got:?}"
            ),
        }
    }

    #[test]
    fn path_table() {
        check("a/b.txt", Some("/w/ws/a/b.txt"));
        check("./a/../b", Some("/w/ws/b"));
        check("/w/ws/x", Some("/w/ws/x"));
        check("", Some("/w/ws"));
        check("../x", None);
        check("a/../../x", None);
        check("/etc/passwd", None);
        check("/w/wsx/evil", None);
        check("/w/ws/../ws2", None);
    }
}
