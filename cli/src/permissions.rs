//! The approval bridge of this forge (issue 41): `[permissions]` of the user config narrowed
//! by the workdir's `forge.toml`, and the store the requests are kept in — the workdir's own
//! SQLite file (`.forgecode/forge.db`), which `forge-code-agent permissions …` in another
//! terminal reads and answers too.

use std::path::Path;
use std::sync::Arc;

use forge_adapter_store::{SqliteStore, resolve_location};
use forge_app::config::{PROJECT_FILE, PermissionsConfig, parse_permissions_config};
use forge_app::permission::PermissionBridge;
use forge_ports::PermissionRequests;

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
        owner: None,
    })
}

/// Where a queued task's worker hands `task run` its queue: requests of the task's agent
/// runs are kept there, under the task, so anyone with the queue answers them. (Forge's own
/// variables never reach the agent: the sandbox drops every `FORGE_*`.)
pub const QUEUE_ENV: &str = "FORGE_PERMISSIONS_QUEUE";

/// The bridge `task run` in `workdir` asks through: the queue's (from its worker, under
/// the task `task_id`), else the workdir's own store as `run` does.
///
/// # Errors
/// As [`config`], [`local_store`] and [`queue_store`].
pub async fn task_bridge(
    workdir: &Path,
    task_id: Option<&str>,
) -> Result<PermissionBridge, Failure> {
    let queue = std::env::var(QUEUE_ENV).ok().filter(|u| !u.is_empty());
    let (Some(url), Some(task)) = (queue, task_id) else {
        return bridge(workdir);
    };
    let task = forge_domain::TaskId::new(task)
        .map_err(|e| Failure::Usage(format!("the queued task's id: {e}")))?;
    Ok(PermissionBridge {
        store: queue_store(&url).await?,
        config: config(workdir)?,
        owner: Some(forge_domain::permission::PermissionOwner::Task(task)),
    })
}

/// The store of the queue at `url` (postgres://… or sqlite://PATH): where a queued task's
/// worker asks, and where anyone with the queue answers.
///
/// # Errors
/// A usage error for a bad URL; [`Failure::Other`] when the queue cannot be reached.
pub async fn queue_store(url: &str) -> Result<Arc<dyn PermissionRequests>, Failure> {
    use crate::cmd::queue::{QueueUrl, failure, parse_url};
    match parse_url(url)? {
        QueueUrl::Postgres(url) => Ok(Arc::new(
            forge_adapter_postgres::PgQueue::connect(&url)
                .await
                .map_err(failure)?,
        )),
        QueueUrl::Sqlite(path) => Ok(open_store(&path)?),
    }
}

/// How often a serve or worker denies the overdue requests of runs no process waits on
/// any more (one that restarted): nothing is left pending past its time for long.
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Denies by timeout, now and every few seconds, the requests past their time — those of
/// a run whose process is gone included, so a restart never leaves one pending forever.
pub fn sweep(store: Arc<dyn PermissionRequests>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            if let Err(e) = store.expire_permissions().await {
                tracing::warn!(error = %e, "permission requests: the expiry sweep failed");
            }
            tokio::time::sleep(SWEEP_EVERY).await;
        }
    })
}
