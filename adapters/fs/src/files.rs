//! [`FsFiles`]: the [`FileStore`] port on the local disk (atomic writes).

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_ports::FileStore;

use crate::atomic::write_atomic;
use crate::blocking::run_blocking;

#[derive(Debug, Clone, Copy, Default)]
pub struct FsFiles;

impl FsFiles {
    pub fn new() -> Self {
        Self
    }
}

#[async_trait]
impl FileStore for FsFiles {
    async fn read(&self, path: &Path) -> Result<Option<Vec<u8>>, ForgeError> {
        let path = path.to_path_buf();
        run_blocking("reading a file", move || match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(ForgeError::io(format!("reading {}", path.display()), e)),
        })
        .await
    }

    async fn write(&self, path: &Path, contents: &[u8]) -> Result<(), ForgeError> {
        let path = path.to_path_buf();
        let contents = contents.to_vec();
        run_blocking("writing a file", move || {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| ForgeError::io(format!("creating {}", dir.display()), e))?;
            }
            write_atomic(&path, &contents)
        })
        .await
    }

    async fn remove(&self, path: &Path) -> Result<(), ForgeError> {
        let path = path.to_path_buf();
        run_blocking("removing a file", move || {
            match std::fs::remove_file(&path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(ForgeError::io(format!("removing {}", path.display()), e)),
            }
        })
        .await
    }

    async fn list(&self, dir: &Path) -> Result<Vec<PathBuf>, ForgeError> {
        let dir = dir.to_path_buf();
        run_blocking("listing a directory", move || {
            let entries = match std::fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
                Err(e) => return Err(ForgeError::io(format!("listing {}", dir.display()), e)),
            };
            let mut paths = Vec::new();
            for entry in entries {
                let entry =
                    entry.map_err(|e| ForgeError::io(format!("listing {}", dir.display()), e))?;
                paths.push(entry.path());
            }
            paths.sort();
            Ok(paths)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn write_read_list_remove() {
        let dir = tempfile::tempdir().unwrap();
        let files = FsFiles::new();
        let path = dir.path().join("a/b/c.txt");
        assert_eq!(files.read(&path).await.unwrap(), None);
        files.write(&path, b"x\r\ny").await.unwrap();
        assert_eq!(files.read(&path).await.unwrap(), Some(b"x\r\ny".to_vec()));
        assert_eq!(
            files.list(&dir.path().join("a/b")).await.unwrap(),
            vec![path.clone()]
        );
        assert!(
            files
                .list(&dir.path().join("none"))
                .await
                .unwrap()
                .is_empty()
        );
        files.remove(&path).await.unwrap();
        files.remove(&path).await.unwrap();
        assert_eq!(files.read(&path).await.unwrap(), None);
    }
}
