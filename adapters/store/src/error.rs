//! rusqlite errors as [`ForgeError`]s that name the database and say what to do.

use std::path::Path;

use forge_domain::ForgeError;
use rusqlite::ErrorCode;

/// `context` is what forge was doing ("saving task t1").
pub(crate) fn store_error(path: &Path, context: &str, err: &rusqlite::Error) -> ForgeError {
    let file = path.display();
    let message = match err.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) | Some(ErrorCode::DatabaseCorrupt) => format!(
            "{file} is not a usable forge database ({err}); move it aside and forge creates a new one"
        ),
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => format!(
            "{file} is locked by another process and stayed locked past the busy timeout ({err})"
        ),
        Some(ErrorCode::ReadOnly) | Some(ErrorCode::PermissionDenied) => {
            format!("{file} cannot be written ({err})")
        }
        Some(ErrorCode::CannotOpen) => format!("{file} cannot be opened ({err})"),
        _ => format!("{file}: {err}"),
    };
    ForgeError::Io {
        context: format!("task store: {context}"),
        message,
    }
}

/// A row whose stored text this forge cannot read back (written by a newer one, or edited).
pub(crate) fn bad_row(path: &Path, what: &str, detail: impl std::fmt::Display) -> ForgeError {
    ForgeError::Io {
        context: "task store: reading a row".to_owned(),
        message: format!("{}: {what}: {detail}", path.display()),
    }
}
