//! The workspace rule against the real disk: lexical check, then symlinks.
//!
//! `forge_domain::path_policy` settles `..` and absolute paths without I/O. What it cannot
//! see is a symlink inside the workspace that points elsewhere (an agent can plant one with
//! a single shell command). So after the lexical check the deepest part of the path that
//! exists is canonicalised and must still be under the canonical root.
//!
//! Limits: this is a check-then-use, so a process racing us to swap a directory for a link
//! between the check and the open is not stopped (that needs `openat2(RESOLVE_BENEATH)`).
//! It stops links that are already there, which is the case that happens.

use std::ffi::OsString;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use forge_domain::ForgeError;
use forge_domain::path_policy::{check_within, resolve_within};

/// The canonical form of `root`, which must be an existing directory.
///
/// # Errors
/// [`ForgeError::InvalidRequest`] when it does not exist or is not a directory;
/// [`ForgeError::Io`] when it cannot be read.
pub(crate) fn canonical_root(root: &Path) -> Result<PathBuf, ForgeError> {
    match std::fs::canonicalize(root) {
        Ok(path) if path.is_dir() => Ok(path),
        Ok(_) => Err(ForgeError::InvalidRequest {
            reason: format!("workspace root {} is not a directory", root.display()),
        }),
        Err(e) if e.kind() == ErrorKind::NotFound => Err(ForgeError::InvalidRequest {
            reason: format!("workspace root {} does not exist", root.display()),
        }),
        Err(e) => Err(ForgeError::io(
            format!("reading workspace root {}", root.display()),
            e,
        )),
    }
}

/// Resolves `requested` to an absolute path inside `root`, following the symlinks of the
/// parts that exist.
///
/// # Errors
/// [`ForgeError::WorkspaceSecurity`] for `..` escapes, absolute paths outside the root,
/// symlinks that lead outside and dangling symlinks (whose target cannot be checked);
/// [`ForgeError::InvalidRequest`] / [`ForgeError::Io`] as [`canonical_root`], or when the
/// disk cannot be read.
pub(crate) fn confine(root: &Path, requested: &Path) -> Result<PathBuf, ForgeError> {
    let real_root = canonical_root(root)?;
    let relative = lexical_relative(root, &real_root, requested)?;
    let candidate = real_root.join(&relative);

    // Split into the deepest ancestor that exists (possibly a symlink) and the names below
    // it that do not exist yet (a file about to be written, its new parent directories).
    let mut existing = candidate;
    let mut missing: Vec<OsString> = Vec::new();
    loop {
        match std::fs::symlink_metadata(&existing) {
            Ok(_) => break,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                // `existing` is under `real_root`, which exists, so a name is always there.
                let Some(name) = existing.file_name() else {
                    return Err(ForgeError::io(
                        format!("resolving {}", requested.display()),
                        "no existing ancestor",
                    ));
                };
                missing.push(name.to_owned());
                existing.pop();
            }
            Err(e) => {
                return Err(ForgeError::io(
                    format!("resolving {}", requested.display()),
                    e,
                ));
            }
        }
    }

    let resolved = match std::fs::canonicalize(&existing) {
        Ok(path) => path,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(refuse(
                requested,
                format!("{} is a dangling symlink", existing.display()),
            ));
        }
        Err(e) => {
            return Err(ForgeError::io(
                format!("resolving {}", requested.display()),
                e,
            ));
        }
    };
    check_within(&real_root, &resolved).map_err(|_| {
        refuse(
            requested,
            format!(
                "a symlink leads outside the workspace (to {})",
                resolved.display()
            ),
        )
    })?;

    let mut out = resolved;
    out.extend(missing.iter().rev());
    Ok(out)
}

/// The lexical rule: `requested` as a path relative to the root. An absolute path may be
/// spelled under the root as the caller gave it or under its canonical form.
fn lexical_relative(
    root: &Path,
    real_root: &Path,
    requested: &Path,
) -> Result<PathBuf, ForgeError> {
    let given_root = std::path::absolute(root)
        .map_err(|e| ForgeError::io(format!("reading workspace root {}", root.display()), e))?;
    let first = relative_under(&given_root, requested);
    match first {
        Err(_) if requested.is_absolute() => relative_under(real_root, requested).or(first),
        other => other,
    }
}

fn relative_under(root: &Path, requested: &Path) -> Result<PathBuf, ForgeError> {
    let normalized_root = resolve_within(root, Path::new(""))?;
    let inside = resolve_within(root, requested)?;
    inside
        .strip_prefix(&normalized_root)
        .map(Path::to_path_buf)
        .map_err(|_| refuse(requested, "it is not under the workspace root".to_owned()))
}

fn refuse(requested: &Path, reason: String) -> ForgeError {
    ForgeError::WorkspaceSecurity {
        path: requested.display().to_string(),
        reason,
    }
}
