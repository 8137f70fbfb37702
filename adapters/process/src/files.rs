//! Writing an invocation's prepared files before the child starts.

use forge_domain::ForgeError;
use forge_ports::{FileSource, PreparedFile};

/// Writes each file, creating parent directories. A `CopyOf` whose source is missing is
/// skipped: the CLI then runs without that optional file.
///
/// # Errors
/// [`ForgeError::Io`] naming the file that could not be written.
pub(crate) async fn write_prepared(files: &[PreparedFile]) -> Result<(), ForgeError> {
    for file in files {
        let context = || format!("writing prepared file {}", file.path.display());
        if let Some(dir) = file.path.parent() {
            tokio::fs::create_dir_all(dir)
                .await
                .map_err(|err| ForgeError::io(context(), err))?;
        }
        match &file.source {
            FileSource::Contents(bytes) => write_private(&file.path, bytes)
                .await
                .map_err(|err| ForgeError::io(context(), err))?,
            FileSource::CopyOf(source) => match tokio::fs::copy(source, &file.path).await {
                Ok(_) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound && !source.exists() => {}
                Err(err) => return Err(ForgeError::io(context(), err)),
            },
            FileSource::SymlinkTo(target) => symlink(target, &file.path)
                .await
                .map_err(|err| ForgeError::io(context(), err))?,
        }
    }
    Ok(())
}

/// Makes `link` a symbolic link to `target`, replacing a file or link already there (never
/// following it: the old link's target is left alone).
async fn symlink(target: &std::path::Path, link: &std::path::Path) -> std::io::Result<()> {
    match tokio::fs::symlink_metadata(link).await {
        Ok(meta) if !meta.is_dir() => tokio::fs::remove_file(link).await?,
        Ok(_) | Err(_) => {}
    }
    tokio::fs::symlink(target, link).await
}

/// Writes `bytes` to a file only its owner can read and write: prepared files hold tokens
/// and settings.
async fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    use tokio::io::AsyncWriteExt;
    let mut file = tokio::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .await?;
    // An existing file keeps its mode on open: narrow it too.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .await?;
    file.write_all(bytes).await?;
    file.flush().await
}
