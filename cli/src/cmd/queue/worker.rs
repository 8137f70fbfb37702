//! `worker`: claims tasks from the queue and runs each with this machine's provider
//! configuration, until SIGTERM or Ctrl-C — then it claims no more, lets running tasks
//! finish within `--drain-secs` and hands the rest back to the queue.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use forge_app::queue::{Worker, WorkerConfig, WorkerEvent};
use tokio_util::sync::CancellationToken;

use super::commands::QueueFlag;
use super::open;
use super::runner::TaskRunProcess;
use crate::compose;
use crate::exit::{self, Failure};

#[derive(Debug, Args)]
pub struct WorkerArgs {
    #[command(flatten)]
    pub queue: QueueFlag,
    /// How many tasks this worker runs at once [default: `[queue] concurrency`, else 1]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub concurrency: Option<u16>,
    /// How long a task stays this worker's without a heartbeat: a worker that dies loses
    /// its tasks to other workers after this [default: `[queue] lease_ms`, else 30000]
    #[arg(long, value_name = "MS",
          value_parser = clap::value_parser!(u64).range(1_000..=3_600_000))]
    pub lease_ms: Option<u64>,
    /// This worker's name in the queue [default: HOST-PID]
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// After SIGTERM, how long running tasks may go on before they are handed back
    /// [default: `[queue] drain_secs`, else 60]
    #[arg(long, value_name = "SECS")]
    pub drain_secs: Option<u64>,
    /// Print the worker's events as JSON lines on stderr
    #[arg(long)]
    pub json: bool,
    /// Also poll the forges for review comments, reviews, failed checks and labelled issues
    /// (as `forge poll --watch` does), for a worker their webhooks cannot reach
    #[arg(long)]
    pub poll_forge: bool,
    /// Seconds between two polls with --poll-forge
    #[arg(long, value_name = "SECS", requires = "poll_forge",
          default_value_t = crate::cmd::forge::poll::DEFAULT_INTERVAL_SECS,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub poll_interval: u64,
    /// With --poll-forge, poll this repository too (its URL; repeatable)
    #[arg(long = "poll-repo", value_name = "URL", requires = "poll_forge")]
    pub poll_repos: Vec<String>,
}

fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "worker".to_owned())
}

fn default_name() -> String {
    format!("{}-{}", host(), std::process::id())
}

/// The key a worker files held changes under. The default name holds a pid, which a
/// restart changes: without `--name`, the machine and the cache the changes wait in
/// (`HOST:CACHE`), which a restarted worker of the same user shares.
fn holder(name: Option<&str>) -> String {
    name.map_or_else(
        || {
            let env: forge_ports::EnvSnapshot = std::env::vars().collect();
            let cache = crate::cmd::task::execute::forge_cache_home(&env);
            format!("{}:{}", host(), cache.display())
        },
        str::to_owned,
    )
}

/// `$XDG_CACHE_HOME/forge-code-agent/worker/<name>`, else under `~/.cache`.
fn worker_dir(name: &str) -> PathBuf {
    let get = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    get("XDG_CACHE_HOME")
        .or_else(|| get("HOME").map(|h| h.join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("forge-code-agent/worker")
        .join(name)
}

fn describe(event: &WorkerEvent) -> (String, serde_json::Value) {
    match event {
        WorkerEvent::Claimed { task, attempt } => (
            format!("claimed {task} (attempt {attempt})"),
            serde_json::json!({"event": "claimed", "task_id": task, "attempt": attempt}),
        ),
        WorkerEvent::Finished { task, state } => (
            format!("finished {task}: {state}"),
            serde_json::json!({"event": "finished", "task_id": task, "state": state}),
        ),
        WorkerEvent::Stopped { task, reason } => (
            format!("stopped {task}: {reason:?}"),
            serde_json::json!({"event": "stopped", "task_id": task, "reason": format!("{reason:?}")}),
        ),
        WorkerEvent::QueueError { doing, error } => (
            format!("queue error while {doing}: {error}"),
            serde_json::json!({"event": "queue_error", "doing": doing, "error": error}),
        ),
        WorkerEvent::ApprovalCarriedOut {
            approval,
            state,
            error,
        } => (
            format!(
                "carried out {approval} ({}): {}",
                state.as_str(),
                error.as_deref().unwrap_or("done")
            ),
            serde_json::json!({"event": "approval", "approval_id": approval,
                               "state": state, "error": error}),
        ),
    }
}

pub async fn run(args: WorkerArgs) -> Result<u8, Failure> {
    let defaults = super::config::load()?;
    let concurrency = args.concurrency.or(defaults.concurrency).unwrap_or(1);
    let lease_ms = args.lease_ms.or(defaults.lease_ms).unwrap_or(30_000);
    let drain_secs = args.drain_secs.or(defaults.drain_secs).unwrap_or(60);
    let url = args.queue.url()?;
    let queue = open(&url).await?;
    // The agents' permission requests of this worker's tasks are kept in the queue; those a
    // worker that died left waiting are denied once overdue (now and every few seconds).
    let permissions = crate::permissions::queue_store(&url).await?;
    let _sweep = crate::permissions::sweep(Arc::clone(&permissions));
    let holder = holder(args.name.as_deref());
    let name = args.name.clone().unwrap_or_else(default_name);
    let program = std::env::current_exe()
        .map_err(|e| Failure::Other(anyhow::anyhow!("locating this binary: {e}")))?;
    let runner = TaskRunProcess {
        runner: Arc::clone(&compose::runtime().runner),
        program,
        dir: worker_dir(&name),
        queue_url: url.clone(),
        permissions,
        queue: Arc::clone(&queue),
        sessions: super::open_sessions(&url).await?,
    };
    let mut config = WorkerConfig::new(name.clone());
    config.holder = holder;
    config.concurrency = usize::from(concurrency);
    config.lease_ms = lease_ms;
    config.heartbeat_ms = (lease_ms / 4).clamp(100, 250);
    config.drain = Duration::from_secs(drain_secs);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let json = args.json;
    let printer = tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            let (line, value) = describe(&event);
            let mut err = std::io::stderr().lock();
            let _ = if json {
                writeln!(err, "{value}")
            } else {
                writeln!(err, "worker {line}")
            };
        }
    });
    let stop = CancellationToken::new();
    let poller = if args.poll_forge {
        Some(poller(&url, &queue, &args, &stop).await?)
    } else {
        None
    };
    let signals = watch_signals(stop.clone())?;
    {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "worker {name}: waiting for tasks (concurrency {}, lease {} ms)",
            concurrency, lease_ms
        );
    }
    let summary = Worker::new(queue, Arc::new(runner), config)
        .events(tx)
        .run(stop)
        .await;
    signals.abort();
    if let Some(poller) = poller {
        let _ = poller.await;
    }
    let _ = printer.await;
    let _ = writeln!(
        std::io::stderr(),
        "worker {name} stopped: {} claimed, {} finished, {} handed back, {} lost",
        summary.claimed,
        summary.finished,
        summary.handed_back,
        summary.lost
    );
    Ok(exit::SUCCESS)
}

/// `--poll-forge`: `forge poll --watch` beside the tasks, until `stop`; a pass that fails
/// is said on stderr and the next one catches up.
///
/// # Errors
/// [`Failure::Usage`] when no forge has a token or a `--poll-repo` is served by none.
async fn poller(
    url: &str,
    queue: &Arc<dyn forge_ports::TaskQueue>,
    args: &WorkerArgs,
    stop: &CancellationToken,
) -> Result<tokio::task::JoinHandle<()>, Failure> {
    use crate::cmd::forge::poll;
    let feedback = crate::cmd::forge::feedback(url, Arc::clone(queue))
        .await?
        .ok_or_else(poll::no_forge)?;
    // A wrong --poll-repo is a usage error now, not a line in the log later.
    poll::pass(&feedback, &args.poll_repos, args.json).await?;
    let (repos, json, stop) = (args.poll_repos.clone(), args.json, stop.clone());
    let interval = Duration::from_secs(args.poll_interval);
    Ok(tokio::spawn(async move {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(interval) => {}
        }
        if let Err(e) = poll::watch(&feedback, &repos, json, interval, &stop).await {
            let _ = writeln!(std::io::stderr(), "worker forge poll stopped: {e}");
        }
    }))
}

/// SIGTERM or SIGINT stops claiming.
pub(crate) fn watch_signals(
    stop: CancellationToken,
) -> Result<tokio::task::JoinHandle<()>, Failure> {
    use tokio::signal::unix::{SignalKind, signal};
    let listen = |kind: SignalKind| {
        signal(kind).map_err(|e| Failure::Other(anyhow::anyhow!("listening for signals: {e}")))
    };
    let mut term = listen(SignalKind::terminate())?;
    let mut int = listen(SignalKind::interrupt())?;
    Ok(tokio::spawn(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        stop.cancel();
    }))
}
