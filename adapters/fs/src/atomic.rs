//! Whole-file writes that a reader sees entirely or not at all.

use std::io::Write;
use std::path::Path;

use forge_domain::ForgeError;

/// Mode of a file that did not exist before: what a plain `create` gives under the usual
/// umask 022. `tempfile` creates 0600, which would surprise a user editing their workspace.
const NEW_FILE_MODE: u32 = 0o644;

/// Writes `contents` to a temp file next to `path`, syncs it and renames it over `path`.
///
/// Renaming replaces a symlink at `path` itself rather than writing through it, which is
/// what the workspace sandbox wants. An existing file keeps its permissions.
///
/// # Errors
/// [`ForgeError::Io`] when the temp file cannot be created, written or renamed.
pub(crate) fn write_atomic(path: &Path, contents: &[u8]) -> Result<(), ForgeError> {
    write_atomic_with(path, |file| file.write_all(contents))
}

/// [`write_atomic`] with the contents written by `fill` straight into the temp file (a
/// large value serialised without building its text first).
///
/// # Errors
/// As [`write_atomic`], and `fill`'s error.
pub(crate) fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), ForgeError> {
    let context = || format!("writing {}", path.display());
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut temp = tempfile::Builder::new()
        .prefix(".forge-tmp-")
        .tempfile_in(dir)
        .map_err(|e| ForgeError::io(context(), e))?;
    {
        let mut writer = std::io::BufWriter::new(temp.as_file_mut());
        fill(&mut writer)
            .and_then(|()| writer.flush())
            .map_err(|e| ForgeError::io(context(), e))?;
    }
    let permissions = match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => meta.permissions(),
        _ => std::os::unix::fs::PermissionsExt::from_mode(NEW_FILE_MODE),
    };
    temp.as_file()
        .set_permissions(permissions)
        .map_err(|e| ForgeError::io(context(), e))?;
    // Sync before the rename: otherwise a power loss can leave the new name pointing at an
    // empty file, which is exactly the torn write this function exists to prevent.
    temp.as_file()
        .sync_all()
        .map_err(|e| ForgeError::io(context(), e))?;
    temp.persist(path)
        .map_err(|e| ForgeError::io(context(), e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn replaces_contents_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("f.json")]);
    }

    #[test]
    fn new_files_are_0644_and_existing_modes_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        write_atomic(&path, b"x").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o644);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&path, b"y").unwrap();
        assert_eq!(mode(&path), 0o600);
    }
}
