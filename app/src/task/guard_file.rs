//! The guardrail instruction file (`CLAUDE.md`, `AGENTS.md`, `GEMINI.md`) in the task's
//! work tree: written before the agent starts, restored to the exact earlier bytes (or
//! removed) in every outcome.
//!
//! Before the file is touched, a marker is written to the task's artifact directory:
//! `guard.json` (which file, whether it existed) and `instruction.original` (its bytes).
//! A forge that is SIGKILLed leaves the marker behind; the next `task run` in the same
//! repository and `task gc` find it and restore the file ([`restore_leftovers`]).

use std::path::{Path, PathBuf};

use forge_domain::ForgeError;
use forge_ports::FileStore;
use serde::{Deserialize, Serialize};

pub const MARKER: &str = "guard.json";
pub const ORIGINAL: &str = "instruction.original";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Marker {
    /// The instruction file (absolute).
    path: PathBuf,
    existed: bool,
}

/// An instruction file forge has written and must put back.
#[derive(Debug, Clone)]
pub struct Guard {
    pub path: PathBuf,
    original: Option<Vec<u8>>,
    task_dir: PathBuf,
}

impl Guard {
    /// The bytes the file had before forge wrote it (`None`: it did not exist).
    pub fn original(&self) -> Option<&[u8]> {
        self.original.as_deref()
    }
}

/// Writes the marker, then `contents(original bytes)` to `path`.
///
/// # Errors
/// [`ForgeError::Io`] when the marker or the file cannot be written (nothing is left half
/// done: a failed file write restores at once).
pub async fn install(
    files: &dyn FileStore,
    task_dir: &Path,
    path: &Path,
    contents: impl FnOnce(Option<&[u8]>) -> Vec<u8>,
) -> Result<Guard, ForgeError> {
    let original = files.read(path).await?;
    if let Some(bytes) = &original {
        files.write(&task_dir.join(ORIGINAL), bytes).await?;
    }
    let marker = Marker {
        path: path.to_path_buf(),
        existed: original.is_some(),
    };
    let json = serde_json::to_vec_pretty(&marker)
        .map_err(|e| ForgeError::io("writing the instruction-file marker", e))?;
    files.write(&task_dir.join(MARKER), &json).await?;
    let guard = Guard {
        path: path.to_path_buf(),
        original,
        task_dir: task_dir.to_path_buf(),
    };
    let text = contents(guard.original());
    if let Err(e) = files.write(path, &text).await {
        restore(files, &guard).await?;
        return Err(e);
    }
    Ok(guard)
}

/// Puts the earlier bytes back (or removes the file), then drops the marker.
///
/// # Errors
/// [`ForgeError::Io`] when the file cannot be written or removed (the marker stays, so
/// `task gc` can try again).
pub async fn restore(files: &dyn FileStore, guard: &Guard) -> Result<(), ForgeError> {
    match &guard.original {
        Some(bytes) => files.write(&guard.path, bytes).await?,
        None => files.remove(&guard.path).await?,
    }
    files.remove(&guard.task_dir.join(MARKER)).await?;
    files.remove(&guard.task_dir.join(ORIGINAL)).await?;
    Ok(())
}

/// Restores every instruction file a crashed task left behind under `tasks_dir`
/// (`.forgecode/tasks/`); returns the files restored.
///
/// # Errors
/// [`ForgeError::Io`] when a marker or file cannot be read or written.
pub async fn restore_leftovers(
    files: &dyn FileStore,
    tasks_dir: &Path,
) -> Result<Vec<PathBuf>, ForgeError> {
    let mut restored = Vec::new();
    for task_dir in files.list(tasks_dir).await? {
        let Some(json) = files.read(&task_dir.join(MARKER)).await? else {
            continue;
        };
        let marker: Marker = serde_json::from_slice(&json).map_err(|e| {
            ForgeError::io(format!("reading {}", task_dir.join(MARKER).display()), e)
        })?;
        let original = if marker.existed {
            files.read(&task_dir.join(ORIGINAL)).await?
        } else {
            None
        };
        if marker.existed && original.is_none() {
            return Err(ForgeError::io(
                format!("restoring {}", marker.path.display()),
                format!("{} is missing", task_dir.join(ORIGINAL).display()),
            ));
        }
        // The work tree may be gone already (removed by hand): then there is nothing to
        // put back, only the marker to drop.
        let tree_exists = match marker.path.parent() {
            Some(dir) => files.read(&dir.join(".git")).await?.is_some(),
            None => false,
        };
        let guard = Guard {
            path: marker.path.clone(),
            original,
            task_dir: task_dir.clone(),
        };
        if tree_exists {
            restore(files, &guard).await?;
            restored.push(marker.path);
        } else {
            files.remove(&task_dir.join(MARKER)).await?;
            files.remove(&task_dir.join(ORIGINAL)).await?;
        }
    }
    Ok(restored)
}
