//! The approval bridge of this forge (issue 41): `[permissions]` of the user config narrowed
//! by the workdir's `forge.toml`, and the store the requests are kept in — the workdir's own
//! SQLite file (`.forgecode/forge.db`), which `forge-code-agent permissions …` in another
//! terminal reads and answers too.

use std::path::Path;
use std::sync::Arc;

use forge_adapter_store::{SqliteStore, resolve_location};
use forge_app::config::{PROJECT_FILE, PermissionsConfig, parse_permissions_config};
use forge_app::permission::PermissionBridge;

use crate::config_load::user_config_file;
use crate::exit::Failure;

/// The user's `[permissions]`, narrowed by `workdir`'s `forge.toml`.
///
/// # Errors
/// [`Failure::Config`] for a section that cannot be read.
pub fn config(workdir: &Path) -> Result<PermissionsConfig, Failure> {
    let read = |path: &Path| std::fs::read_to_string(path).ok();
    let user = match user_config_file() {
        Some(path) => match read(&path) {
            Some(text) => parse_permissions_config(&text, &path)?,
            None => Default::default(),
        },
        None => Default::default(),
    };
    let project = workdir.join(PROJECT_FILE);
    let repository = match read(&project) {
        Some(text) => Some(parse_permissions_config(&text, &project)?),
        None => None,
    };
    Ok(PermissionsConfig::new(user, repository))
}

/// The workdir's store of requests.
///
/// # Errors
/// [`Failure::Other`] when the file cannot be opened.
pub fn local_store(workdir: &Path) -> Result<Arc<SqliteStore>, Failure> {
    let location = resolve_location(None, workdir).map_err(|e| Failure::Usage(e.to_string()))?;
    open_store(&location)
}

/// The store at `path` (a queue's SQLite file).
///
/// # Errors
/// [`Failure::Other`] when the file cannot be opened.
pub fn open_store(path: &Path) -> Result<Arc<SqliteStore>, Failure> {
    let store = SqliteStore::open(path).map_err(|e| Failure::Other(anyhow::anyhow!(e)))?;
    Ok(Arc::new(store))
}

/// The bridge a `run` in `workdir` asks through.
///
/// # Errors
/// As [`config`] and [`local_store`].
pub fn bridge(workdir: &Path) -> Result<PermissionBridge, Failure> {
    Ok(PermissionBridge {
        store: local_store(workdir)?,
        config: config(workdir)?,
    })
}
