//! A task on a repository URL: forge's cache of the repository (cloned or fetched here),
//! the commit the task starts from, and the repository's own `forge.toml` at that commit —
//! so a URL task is validated, gated and delivered by the repository's rules exactly as a
//! task on a local checkout of it (see `forge_app::config::repository` for which keys are
//! the worker's).

use std::io::Write;
use std::path::{Path, PathBuf};

use forge_adapter_git::GitCli;
use forge_app::config::{
    DeliveryConfig, IgnoredKeys, Layer, PROJECT_FILE, TaskConfig, delivery_keys,
    parse_delivery_config, parse_file, parse_task_config, repository_delivery, repository_layer,
    repository_task_config,
};
use forge_domain::ForgeError;
use forge_ports::Vcs;

use crate::exit::Failure;

/// The repository's `forge.toml` as of one commit.
#[derive(Debug, Clone)]
pub struct RepoFile {
    pub text: String,
    /// Names the file in messages: `<url>@<commit>/forge.toml`.
    pub origin: PathBuf,
}

/// A URL task's repository, opened before its configuration is read.
pub struct UrlRepo {
    /// forge's cache (a mirror clone).
    pub cache: PathBuf,
    /// The commit the task starts from (`--base`, else the remote's HEAD), resolved once so
    /// the configuration read is the one of the code the agent gets.
    pub base: String,
    pub file: Option<RepoFile>,
}

/// Clones or fetches `url` into `cache_dir` and reads `forge.toml` at `base`.
pub async fn open(url: &str, cache_dir: &Path, base: Option<&str>) -> Result<UrlRepo, Failure> {
    let vcs = crate::compose::git();
    let cache = vcs.clone_or_fetch(url, cache_dir).await.map_err(failure)?;
    let rev = base.unwrap_or("HEAD");
    let commit = vcs
        .resolve_commit(&cache, rev)
        .await
        .map_err(failure)?
        .ok_or_else(|| Failure::Usage(format!("base ref {rev:?} does not exist in {url}")))?;
    let file = read_file(&vcs, &cache, url, &commit).await?;
    Ok(UrlRepo {
        cache,
        base: commit,
        file,
    })
}

/// `forge.toml` of the repository in forge's cache at `commit`, when it has one.
pub async fn read_file(
    vcs: &GitCli,
    cache: &Path,
    url: &str,
    commit: &str,
) -> Result<Option<RepoFile>, Failure> {
    let text = vcs
        .file_at(cache, commit, PROJECT_FILE)
        .await
        .map_err(failure)?;
    Ok(text.map(|text| RepoFile {
        text,
        origin: PathBuf::from(format!("{url}@{commit}/{PROJECT_FILE}")),
    }))
}

fn failure(e: ForgeError) -> Failure {
    match e {
        ForgeError::InvalidRequest { reason } => Failure::Usage(reason),
        other => Failure::Other(anyhow::anyhow!(other)),
    }
}

impl UrlRepo {
    /// The repository's layer of the effective configuration.
    pub fn layer(&self) -> Result<Option<Layer>, Failure> {
        let Some(file) = &self.file else {
            return Ok(None);
        };
        let (layer, ignored) = repository_layer(parse_file(&file.text, &file.origin)?);
        warn_ignored(file, &ignored);
        Ok(Some(layer))
    }

    /// `[validation]` and `[task]` of the repository, the work-tree location and caches
    /// of `worker` (the user configuration's).
    pub fn task_config(&self, worker: &TaskConfig) -> Result<TaskConfig, Failure> {
        let Some(file) = &self.file else {
            return Ok(TaskConfig {
                worktree_root: worker.worktree_root.clone(),
                cache: worker.cache.clone(),
                ..TaskConfig::default()
            });
        };
        let repo = parse_task_config(&file.text, &file.origin)?;
        let (config, ignored) = repository_task_config(repo, worker);
        warn_ignored(file, &ignored);
        Ok(config)
    }
}

/// The delivery configuration of a URL task: the worker's, with what the repository's file
/// (`None`: it has none) says of its gate, push, message and cleanup.
pub fn delivery_config(
    file: Option<&RepoFile>,
    worker: DeliveryConfig,
) -> Result<DeliveryConfig, Failure> {
    let Some(file) = file else {
        return Ok(worker);
    };
    let repo = parse_delivery_config(&file.text, &file.origin)?;
    let (config, ignored) = repository_delivery(repo, &delivery_keys(&file.text), worker);
    warn_ignored(file, &ignored);
    Ok(config)
}

/// Keys the worker decides are named on stderr, never dropped without a word.
fn warn_ignored(file: &RepoFile, ignored: &IgnoredKeys) {
    if ignored.is_empty() {
        return;
    }
    let _ = writeln!(
        std::io::stderr(),
        "warning: {}: {} ignored: on a task from a URL these are the worker's to decide (its own configuration applies)",
        file.origin.display(),
        ignored.join(", ")
    );
}
