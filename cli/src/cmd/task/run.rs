//! `task run`: compose the pipeline from the configuration, run it with progress on a
//! terminal, print the report.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use forge_app::CodeAgent;
use forge_app::config::TaskConfig;
use forge_app::from_config::apply_request_defaults;
use forge_domain::task::{ContextFile, Goal, StopReason, TaskOutcome, TaskSpec};
use forge_domain::{PermissionMode, ProviderId};

use super::TaskRunArgs;
use super::execute::{self, Deliver, Executed, ProviderChoice, read_task_config};
use super::render;
use crate::compose;
use crate::config_load::load_config;
use crate::exit::{self, Failure};
use crate::output::style::Style;
use crate::output::write_json_pretty;
use crate::prompt::read_prompt;

/// Why `--push` with a repository URL is refused instead of silently doing nothing.
pub const URL_PUSH_UNSUPPORTED: &str = "--push with a repository URL cannot be honoured yet: \
a task on a URL is validated in forge's cached clone, which is not delivered (no commit, no \
push); run the task in a local clone of the repository, or leave out --push";

/// Exit code of a task stopped by a cost or turn limit.
pub const STOPPED_BY_LIMIT: u8 = 5;

pub async fn run(args: TaskRunArgs) -> Result<u8, Failure> {
    let task_text = read_prompt(args.task.as_deref())?;
    // `--workdir` (shared with `run`) names the repository too when `--repo` is not given.
    let repo_arg = if args.repo == "." && args.config.workdir != std::path::Path::new(".") {
        args.config.workdir.display().to_string()
    } else {
        args.repo.clone()
    };
    let is_url = repo_arg.contains("://") || repo_arg.starts_with("git@");
    if is_url && args.push && !args.no_deliver {
        return Err(Failure::Usage(URL_PUSH_UNSUPPORTED.to_owned()));
    }
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
    for path in &args.context_files {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::Usage(format!("--context-file {}: {e}", path.display())))?;
        spec.context_files.push(ContextFile {
            name: path.display().to_string(),
            text,
        });
    }
    let choice = ProviderChoice {
        provider,
        model: section.model.map(|m| m.value),
        fix_model: section.fix_model.map(|m| m.value),
    };
    let cache = task_config.cache.clone();
    let request = execute::task_request(spec, repo, choice, template, task_config);
    // Delivery (store, gate, commit/push or approval) for a local repository.
    let deliver = if is_url || args.no_deliver {
        Deliver::No
    } else {
        Deliver::To {
            repo: &flags.workdir,
            push: args.push,
        }
    };
    let Executed {
        outcome,
        undelivered,
    } = execute::execute(agent, request, &cache, args.json, deliver).await?;
    let mut out = std::io::stdout().lock();
    if args.json {
        let _ = write_json_pretty(&mut out, &outcome);
    } else {
        let style = Style::detect(std::io::stdout().is_terminal());
        let _ = out.write_all(render::report_with_delivery(&outcome, style).as_bytes());
    }
    if let Some(failure) = undelivered {
        let _ = writeln!(std::io::stderr(), "error: delivery failed: {failure}");
        return Ok(exit::RUN_ERROR);
    }
    Ok(exit_code(&outcome))
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
