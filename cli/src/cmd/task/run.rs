//! `task run`: compose the pipeline from the configuration, run it with progress on a
//! terminal, print the report.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use forge_adapter_fs::{FsFiles, FsRepoIndex};
use forge_adapter_git::GitCli;
use forge_app::CodeAgent;
use forge_app::config::{PROJECT_FILE, TaskConfig, parse_task_config};
use forge_app::from_config::apply_request_defaults;
use forge_app::task::{TaskPipeline, TaskPorts, TaskRequest};
use forge_domain::task::{ContextFile, Goal, StopReason, TaskOutcome, TaskSpec};
use forge_domain::{ForgeError, PermissionMode, ProviderId};
use forge_ports::{EnvSnapshot, ProcessRunner};

use super::TaskRunArgs;
use super::render;
use crate::compose;
use crate::config_load::load_config;
use crate::exit::{self, Failure};
use crate::output::style::Style;
use crate::output::write_json_pretty;
use crate::prompt::read_prompt;
use crate::signals;

/// Exit code of a task stopped by a cost or turn limit.
pub const STOPPED_BY_LIMIT: u8 = 5;

/// The task ports over the real adapters.
pub fn task_ports(runner: Arc<dyn ProcessRunner>) -> TaskPorts {
    TaskPorts {
        vcs: Arc::new(GitCli::new(runner)),
        index: Arc::new(FsRepoIndex::new()),
        files: Arc::new(FsFiles::new()),
        redactor: compose::environment_redactor(),
    }
}

pub async fn run(args: TaskRunArgs) -> Result<u8, Failure> {
    let task_text = read_prompt(args.task.as_deref())?;
    // `--workdir` (shared with `run`) names the repository too when `--repo` is not given.
    let repo_arg = if args.repo == "." && args.config.workdir != std::path::Path::new(".") {
        args.config.workdir.display().to_string()
    } else {
        args.repo.clone()
    };
    let is_url = repo_arg.contains("://") || repo_arg.starts_with("git@");
    let mut flags = args.config.clone();
    let repo = if is_url {
        repo_arg.clone()
    } else {
        let path = std::path::absolute(&repo_arg).unwrap_or_else(|_| PathBuf::from(&repo_arg));
        let path = std::fs::canonicalize(&path)
            .map_err(|e| Failure::Usage(format!("--repo {}: {e}", path.display())))?;
        flags.workdir.clone_from(&path);
        path.display().to_string()
    };
    let config = load_config(&flags)?;
    let task_config = if is_url {
        TaskConfig::default()
    } else {
        read_task_config(&flags.workdir)?
    };
    let agent = CodeAgent::builder_from_config(&config, compose::registry(), compose::runtime())
        .and_then(|b| b.redactor(compose::environment_redactor()).build())
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let provider_name = config.default_provider.value.clone();
    let provider = ProviderId::new(provider_name.clone())
        .map_err(|e| Failure::Usage(format!("--provider: {e}")))?;

    let mut template = agent.request("");
    template.provider = provider.clone();
    apply_request_defaults(&config, &mut template);
    template.permission_mode = Some(
        args.permission_mode
            .map_or(PermissionMode::Bypass, Into::into),
    );
    let section = config.provider(&provider_name);
    let mut spec = TaskSpec::new(task_text);
    spec.expected = args.expected;
    spec.task_type = args.task_type.map(Into::into);
    spec.goal = Goal {
        title: args.goal_title,
        description: args.goal_description,
    };
    spec.base = args.base;
    spec.limits = task_config.limits;
    spec.instructions = task_config.instructions.clone();
    for path in &args.context_files {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::Usage(format!("--context-file {}: {e}", path.display())))?;
        spec.context_files.push(ContextFile {
            name: path.display().to_string(),
            text,
        });
    }
    let env: EnvSnapshot = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
        .collect();
    let request = TaskRequest {
        spec,
        repo,
        provider,
        run_template: template,
        model: section.model.map(|m| m.value),
        fix_model: section.fix_model.map(|m| m.value),
        validation: task_config.validation,
        worktree_root: task_config.worktree_root,
        cache_dir: cache_dir(&env),
        env,
    };

    let ports = task_ports(Arc::clone(&agent.runtime().runner));
    let pipeline = TaskPipeline::new(agent, ports);
    let canceller = TaskPipeline::canceller();
    let watcher = signals::watch(canceller.clone(), args.json)?;
    let stderr_tty = std::io::stderr().is_terminal();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let printer = tokio::spawn(render::progress(rx, Style::detect(stderr_tty), !args.json));
    let result = pipeline.run(request, Some(tx), canceller).await;
    let _ = printer.await;
    watcher.abort();
    let outcome = result.map_err(failure_of)?;
    // Delivery (store, gate, commit/push or approval) for a local repository.
    // A delivery that fails still prints the pipeline's report (exit 1 after it).
    let (outcome, undelivered) = match (is_url, args.no_deliver) {
        (false, false) => {
            match super::records::deliver(&flags.workdir, outcome.clone(), args.push).await {
                Ok(delivered) => (delivered, None),
                Err(failure) => (outcome, Some(failure)),
            }
        }
        _ => (outcome, None),
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let _ = write_json_pretty(&mut out, &outcome);
    } else {
        let style = Style::detect(std::io::stdout().is_terminal());
        let _ = out.write_all(render::report(&outcome, style).as_bytes());
        if outcome.delivery.is_some() {
            let _ = out.write_all(crate::cmd::delivery::delivery_text(&outcome).as_bytes());
        }
    }
    if let Some(failure) = undelivered {
        let _ = writeln!(std::io::stderr(), "error: delivery failed: {failure}");
        return Ok(exit::RUN_ERROR);
    }
    Ok(exit_code(&outcome))
}

fn read_task_config(dir: &std::path::Path) -> Result<TaskConfig, Failure> {
    let path = dir.join(PROJECT_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(parse_task_config(&text, &path)?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TaskConfig::default()),
        Err(e) => Err(Failure::Usage(format!("{}: {e}", path.display()))),
    }
}

/// `$XDG_CACHE_HOME/forge-code-agent/repos`, else `~/.cache/forge-code-agent/repos`.
fn cache_dir(env: &EnvSnapshot) -> PathBuf {
    let get = |k: &str| env.get(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    get("XDG_CACHE_HOME")
        .or_else(|| get("HOME").map(|h| h.join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("forge-code-agent/repos")
}

/// Setup failures are usage errors (exit 2): the task never started.
fn failure_of(e: ForgeError) -> Failure {
    match e {
        ForgeError::Io { .. } => Failure::Other(anyhow::anyhow!(e)),
        other => Failure::Usage(other.to_string()),
    }
}

/// The exit code of an outcome (see `TASK_EXIT_CODES`).
pub fn exit_code(outcome: &TaskOutcome) -> u8 {
    if outcome.status == forge_domain::task::TaskStatus::PendingApproval {
        return super::records::HELD_FOR_APPROVAL;
    }
    match outcome.stop_reason {
        StopReason::Validated | StopReason::ReviewFindings => exit::SUCCESS,
        StopReason::Timeout => exit::TIMEOUT,
        StopReason::Cancelled => exit::CANCELLED,
        StopReason::CostCeiling | StopReason::RunBudget | StopReason::MaxTurns => STOPPED_BY_LIMIT,
        StopReason::NoChanges | StopReason::MaxCycles | StopReason::Error => exit::RUN_ERROR,
    }
}
