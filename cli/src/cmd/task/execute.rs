//! Running one composed task: the pipeline with its stage progress on stderr, then delivery.
//! `task run` and `demo` both end here, so the demo shows exactly what a user's task does.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use forge_adapter_buildcache::FsBuildCache;
use forge_adapter_fs::{FsFiles, FsRepoIndex};
use forge_adapter_git::GitCli;
use forge_adapter_repomap::TreeSitterMapper;
use forge_app::CodeAgent;
use forge_app::config::{CacheConfig, PROJECT_FILE, TaskConfig, parse_task_config};
use forge_app::task::{TaskPipeline, TaskPorts, TaskRequest};
use forge_domain::task::{TaskOutcome, TaskSpec};
use forge_domain::{ExecutionRequest, ForgeError, ProviderId};
use forge_ports::{EnvSnapshot, ProcessRunner};

use crate::compose;
use crate::exit::Failure;
use crate::output::style::Style;
use crate::signals;

/// The task ports over the real adapters; the build caches as `[cache]` says.
pub fn task_ports(runner: Arc<dyn ProcessRunner>, cache: &CacheConfig) -> TaskPorts {
    TaskPorts {
        vcs: Arc::new(GitCli::new(runner)),
        index: Arc::new(FsRepoIndex::new()),
        mapper: Arc::new(TreeSitterMapper::new(Some(context_cache_dir()))),
        files: Arc::new(FsFiles::new()),
        redactor: compose::environment_redactor(),
        build_cache: cache.enabled.then(|| {
            let root = cache
                .dir
                .clone()
                .unwrap_or_else(|| forge_cache_home(&std::env::vars().collect()).join("build"));
            Arc::new(FsBuildCache::new(root)) as Arc<dyn forge_ports::BuildCache>
        }),
    }
}

/// The `[task]` and `[validation]` tables of `<dir>/forge.toml` (defaults when absent).
pub fn read_task_config(dir: &Path) -> Result<TaskConfig, Failure> {
    let path = dir.join(PROJECT_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(parse_task_config(&text, &path)?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TaskConfig::default()),
        Err(e) => Err(Failure::Usage(format!("{}: {e}", path.display()))),
    }
}

/// Which provider runs the task, and with which models.
pub struct ProviderChoice {
    pub provider: ProviderId,
    pub model: Option<String>,
    pub fix_model: Option<String>,
}

/// The pipeline's request: `spec` with the limits and instructions of `task_config`, run
/// by `choice` in `repo` with `run_template`'s knobs; the process environment for the
/// provider's availability check.
pub fn task_request(
    mut spec: TaskSpec,
    repo: String,
    choice: ProviderChoice,
    run_template: ExecutionRequest,
    task_config: TaskConfig,
) -> TaskRequest {
    spec.limits = task_config.limits;
    spec.instructions = task_config.instructions;
    spec.context_chars = task_config.context_chars;
    let env: EnvSnapshot = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
        .collect();
    TaskRequest {
        task_id: None,
        spec,
        repo,
        provider: choice.provider,
        run_template,
        branch: None,
        model: choice.model,
        fix_model: choice.fix_model,
        validation: task_config.validation,
        worktree_root: task_config.worktree_root,
        cache_dir: cache_dir(&env),
        env,
        session_travel: Default::default(),
    }
}

/// `$XDG_CACHE_HOME/forge-code-agent/repos`, else `~/.cache/forge-code-agent/repos`.
pub fn cache_dir(env: &EnvSnapshot) -> PathBuf {
    forge_cache_home(env).join("repos")
}

/// forge's cache of the repository `url` (a mirror clone), where `task run --repo URL`
/// clones it and a held change of the task waits.
pub fn repo_cache(env: &EnvSnapshot, url: &str) -> PathBuf {
    cache_dir(env).join(forge_adapter_git::cache_name(url))
}

/// Where the repository map's tags are cached: `<forge cache>/context`.
pub fn context_cache_dir() -> PathBuf {
    forge_cache_home(&std::env::vars().collect()).join("context")
}

/// `$XDG_CACHE_HOME/forge-code-agent`, else `~/.cache/forge-code-agent`.
pub fn forge_cache_home(env: &EnvSnapshot) -> PathBuf {
    let get = |k: &str| env.get(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    get("XDG_CACHE_HOME")
        .or_else(|| get("HOME").map(|h| h.join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("forge-code-agent")
}

/// Where the change goes after the pipeline.
pub enum Deliver<'a> {
    /// Nowhere: the change stays in its work tree.
    No,
    /// The delivery step of the local repository at this path (`push` overrides
    /// `[delivery] push`).
    To { repo: &'a Path, push: bool },
    /// This delivery (a URL's, composed on forge's cache of it), reconciled first.
    Using(Box<forge_app::delivery::Delivery>),
}

/// What [`execute`] ends with: the outcome (delivered when asked and possible) and, when
/// delivery failed, why (the undelivered outcome is still worth printing).
pub struct Executed {
    pub outcome: TaskOutcome,
    pub undelivered: Option<Failure>,
}

/// Runs the pipeline (Ctrl-C cancels it; stage progress on stderr unless `quiet`), then
/// delivers. Errors are setup failures: the task never started.
pub async fn execute(
    agent: CodeAgent,
    request: TaskRequest,
    cache: &CacheConfig,
    quiet: bool,
    deliver: Deliver<'_>,
) -> Result<Executed, Failure> {
    let ports = task_ports(Arc::clone(&agent.runtime().runner), cache);
    let pipeline = TaskPipeline::new(agent, ports);
    let canceller = TaskPipeline::canceller();
    let watcher = signals::watch(canceller.clone(), quiet)?;
    let stderr_tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let printer = tokio::spawn(crate::cmd::queue::progress::print(
        rx,
        Style::detect(stderr_tty),
        !quiet,
    ));
    let result = pipeline.run(request, Some(tx), canceller).await;
    let _ = printer.await;
    watcher.abort();
    let outcome = result.map_err(failure_of)?;
    let delivered = match deliver {
        Deliver::No => {
            return Ok(Executed {
                outcome,
                undelivered: None,
            });
        }
        Deliver::Using(delivery) => match crate::cmd::delivery::reconciled(*delivery).await {
            Ok(delivery) => delivery
                .deliver(outcome.clone())
                .await
                .map_err(crate::cmd::delivery::failure),
            Err(failure) => Err(failure),
        },
        Deliver::To { repo, push } => super::records::deliver(repo, outcome.clone(), push).await,
    };
    // A delivery that fails still leaves the pipeline's report to print.
    Ok(match delivered {
        Ok(delivered) => Executed {
            outcome: delivered,
            undelivered: None,
        },
        Err(failure) => Executed {
            outcome,
            undelivered: Some(failure),
        },
    })
}

/// Setup failures are usage errors (exit 2): the task never started.
fn failure_of(e: ForgeError) -> Failure {
    match e {
        ForgeError::Io { .. } => Failure::Other(anyhow::anyhow!(e)),
        other => Failure::Usage(other.to_string()),
    }
}
