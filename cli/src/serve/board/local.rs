//! Tasks run locally with `task run`: each repository keeps them in its own store
//! (`.forgecode/forge.db`). The board looks in each root and its direct subdirectories
//! (the usual place of projects), as `/v1/runs` looks for run bundles.

use std::path::{Path, PathBuf};

use forge_adapter_store::{DEFAULT_FILE, SqliteStore};
use forge_domain::ForgeError;
use forge_domain::delivery::TaskRecord;
use forge_domain::task::TaskId;
use forge_ports::TaskStore;

/// The stores under `roots`: `(repository, database file)`, each once.
pub fn stores(roots: &[PathBuf]) -> Vec<(PathBuf, PathBuf)> {
    let mut found: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut look = |dir: &Path| {
        let db = dir.join(DEFAULT_FILE);
        if db.is_file() && found.iter().all(|(_, d)| *d != db) {
            found.push((dir.to_path_buf(), db));
        }
    };
    for root in roots {
        look(root);
        let Ok(entries) = std::fs::read_dir(root) else {
            continue;
        };
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter_map(|e| e.path().canonicalize().ok())
            // A symlinked directory leading out of the roots is not looked into.
            .filter(|p| p.is_dir() && roots.iter().any(|r| p.starts_with(r)))
            .collect();
        dirs.sort();
        for dir in dirs {
            look(&dir);
        }
    }
    found
}

/// Opens a store without blocking the runtime.
///
/// # Errors
/// As [`SqliteStore::open`].
pub async fn open(db: PathBuf) -> Result<SqliteStore, ForgeError> {
    tokio::task::spawn_blocking(move || SqliteStore::open(db))
        .await
        .map_err(|e| ForgeError::io("task store: opening", e))?
}

/// Every local task under `roots`, with the store it is in. A store that cannot be read
/// is skipped and named in the returned problems (the board shows the others).
pub async fn tasks(roots: &[PathBuf]) -> (Vec<(TaskRecord, PathBuf)>, Vec<String>) {
    let mut tasks = Vec::new();
    let mut problems = Vec::new();
    for (repo, db) in stores(roots) {
        let read = async {
            let store = open(db.clone()).await?;
            store.tasks().await
        };
        match read.await {
            Ok(records) => tasks.extend(records.into_iter().map(|r| (r, repo.clone()))),
            Err(e) => problems.push(format!("{}: {e}", db.display())),
        }
    }
    (tasks, problems)
}

/// The local task `id` and its repository's store, `None` when no store has it.
///
/// # Errors
/// When a store that may hold it cannot be read.
pub async fn find(
    roots: &[PathBuf],
    id: &TaskId,
) -> Result<Option<(TaskRecord, SqliteStore, PathBuf)>, ForgeError> {
    for (repo, db) in stores(roots) {
        let store = open(db).await?;
        if let Some(record) = store.task(id).await? {
            return Ok(Some((record, store, repo)));
        }
    }
    Ok(None)
}
