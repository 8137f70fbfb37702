//! Tasks run locally with `task run`: each repository keeps them in its own store
//! (`.forgecode/forge.db`). The board looks in each root and its direct subdirectories
//! (the usual place of projects), as `/v1/runs` looks for run bundles.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use forge_domain::ForgeError;
use forge_domain::delivery::TaskRecord;
use forge_domain::task::TaskId;
use forge_ports::TaskStore;

use crate::composition::Composition;

/// The stores under `roots`: `(repository, database file)`, each once; `file` is where
/// `task run` keeps a repository's store, relative to the repository.
pub fn stores(roots: &[PathBuf], file: &str) -> Vec<(PathBuf, PathBuf)> {
    let mut found: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut look = |dir: &Path| {
        let db = dir.join(file);
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

/// Every local task under `roots`, with the store it is in. A store that cannot be read
/// is skipped and named in the returned problems (the board shows the others).
pub async fn tasks(
    composition: &dyn Composition,
    roots: &[PathBuf],
) -> (Vec<(TaskRecord, PathBuf)>, Vec<String>) {
    let mut tasks = Vec::new();
    let mut problems = Vec::new();
    for (repo, db) in stores(roots, composition.task_store_file()) {
        let read = async {
            let store = composition.open_task_store(db.clone()).await?;
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
    composition: &dyn Composition,
    roots: &[PathBuf],
    id: &TaskId,
) -> Result<Option<(TaskRecord, Arc<dyn TaskStore>, PathBuf)>, ForgeError> {
    for (repo, db) in stores(roots, composition.task_store_file()) {
        let store = composition.open_task_store(db).await?;
        if let Some(record) = store.task(id).await? {
            return Ok(Some((record, store, repo)));
        }
    }
    Ok(None)
}
