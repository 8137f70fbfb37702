//! `task run`: compose the pipeline from the configuration, run it with progress on a
//! terminal, print the report.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use forge_app::delivery::{Delivery, FollowupReply};
use forge_app::task::TaskRequest;
use forge_domain::task::TaskId;

use forge_app::config::TaskConfig;
use forge_app::from_config::apply_request_defaults;
use forge_domain::task::{StopReason, TaskOutcome};
use forge_domain::{PermissionMode, ProviderId};

use super::TaskRunArgs;
use super::execute::{self, Deliver, Executed, ProviderChoice, read_task_config};
use super::render;
use super::url_repo;
use crate::cmd::queue::progress;
use crate::compose;
use crate::config_load::{load_config, load_config_for_url};
use crate::exit::{self, Failure};
use crate::output::style::Style;
use crate::output::write_json_pretty;
use crate::prompt::read_prompt;

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
    let is_url = forge_domain::task::is_repository_url(&repo_arg);
    let task_id = args
        .task_id
        .as_deref()
        .map(TaskId::new)
        .transpose()
        .map_err(|e| Failure::Usage(format!("--task-id: {e}")))?;
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
    // A URL's repository is fetched first: its own forge.toml, at the commit the task
    // starts from, configures the task as a checkout's does.
    let url_repo = if is_url {
        let env: forge_ports::EnvSnapshot = std::env::vars().collect();
        let cache_dir = execute::cache_dir(&env);
        Some(url_repo::open(&repo, &cache_dir, args.base.as_deref()).await?)
    } else {
        None
    };
    let (config, mut task_config) = match &url_repo {
        Some(url) => (
            load_config_for_url(&flags, url.layer()?)?,
            url.task_config(&user_task_config()?)?,
        ),
        None => (load_config(&flags)?, read_task_config(&flags.workdir)?),
    };
    // Explicit flag, else the repository's word, else: required for a queue task (a
    // worker's), not for a task a person runs and watches.
    let under_worker = std::env::var_os(progress::TASK_ID_ENV).is_some();
    task_config.limits.require_validation =
        args.require_validation || task_config.require_validation.unwrap_or(under_worker);
    // The flag, else `[task] permission_mode`, else bypass (the work tree is the sandbox).
    let permission_mode = args
        .permission_mode
        .map(PermissionMode::from)
        .or(task_config.permission_mode)
        .unwrap_or(PermissionMode::Bypass);
    // `ask`: under a worker the requests go to the queue, under the task; else to the
    // repository's store, as `run`'s do.
    let bridge = match permission_mode {
        PermissionMode::Ask => Some(
            crate::permissions::task_bridge(&flags.workdir, task_id.as_ref().map(TaskId::as_str))
                .await?,
        ),
        _ => None,
    };
    let mut builder = compose::configured_agent(&config, &flags).await?;
    if let Some(bridge) = bridge {
        builder = builder.permissions(bridge);
    }
    // Under a worker the agent's events travel to the queue too.
    if std::env::var_os(progress::TASK_ID_ENV).is_some() {
        builder = builder.event_sink(Arc::new(progress::EventLines {
            redactor: compose::environment_redactor(),
        }));
    }
    let agent = builder.build().map_err(|e| Failure::Usage(e.to_string()))?;
    let provider_name = config.default_provider.value.clone();
    let provider = ProviderId::new(provider_name.clone())
        .map_err(|e| Failure::Usage(format!("--provider: {e}")))?;

    let mut template = agent.request("");
    template.provider = provider.clone();
    apply_request_defaults(&config, &mut template);
    template.resume_session_id = resume_session(args.resume_session.as_deref())?;
    template.permission_mode = Some(permission_mode);
    crate::cmd::run::refuse_unaskable(&agent, &template)?;
    let section = config.provider(&provider_name);
    let session_travel = session_travel(&args)?;
    let mut spec = args.brief.spec(task_text)?;
    // A URL task starts from the commit its configuration was read at.
    spec.base = match &url_repo {
        Some(url) => Some(url.base.clone()),
        None => args.base,
    };
    let choice = ProviderChoice {
        provider,
        model: section.model.map(|m| m.value),
        fix_model: section.fix_model.map(|m| m.value),
    };
    let cache = task_config.cache.clone();
    let mut request = execute::task_request(spec, repo, choice, template, task_config);
    request.task_id = task_id;
    request.branch.clone_from(&args.continue_branch);
    request.session_travel = session_travel;
    let reply = (args.reply || args.reply_to.is_some()).then(|| FollowupReply {
        comment_id: args.reply_to,
        thread: args.reply_thread.clone(),
    });
    // Delivery (store, gate, commit/push or approval): in the local repository, or in
    // forge's cache of a URL with the branch pushed to the URL.
    let deliver = if args.no_deliver {
        Deliver::No
    } else if is_url {
        let url = url_repo
            .as_ref()
            .ok_or_else(|| Failure::Other(anyhow::anyhow!("a URL task without its repository")))?;
        let mut delivery = url_delivery(url, &request, args.push)?;
        if args.pull_request {
            delivery = crate::cmd::pull_request::attach(delivery, &url.cache, &request.repo)?;
        }
        let delivery = delivery.for_feedback(args.closes, reply.clone());
        if let Some(found) = delivered_before(&delivery, &request).await? {
            print_delivered_before(&found, args.json);
            return Ok(exit::SUCCESS);
        }
        Deliver::Using(Box::new(delivery))
    } else if args.pull_request {
        let repo = crate::cmd::delivery::repo_root(&flags.workdir)?;
        let delivery = crate::cmd::delivery::open(&repo, args.push.then_some(true)).await?;
        let remote = delivery.settings().remote.clone();
        let delivery = crate::cmd::pull_request::attach(delivery, &repo, &remote)?
            .for_feedback(args.closes, reply);
        Deliver::Using(Box::new(delivery))
    } else {
        Deliver::To {
            repo: &flags.workdir,
            push: args.push,
        }
    };
    let push_asked = args.push;
    let Executed {
        outcome,
        undelivered,
    } = execute::execute(agent, request, &cache, args.json, deliver).await?;
    Ok(report(&outcome, undelivered, args.json, push_asked))
}

/// `--import-session`, `--session-unavailable`, `--parent-task-file`, `--export-session`:
/// the agent session travelling with a queued task (issue 39). An archive that cannot be
/// read is a reason the session cannot be resumed here, not a failed task.
fn session_travel(args: &TaskRunArgs) -> Result<forge_app::task::SessionTravelPlan, Failure> {
    let import = match (&args.import_session, &args.session_unavailable) {
        (Some(path), _) => Some(
            std::fs::read(path)
                .map_err(|e| format!("reading the session archive {}: {e}", path.display()))
                .and_then(|bytes| {
                    serde_json::from_slice(&bytes)
                        .map_err(|e| format!("the session archive cannot be read: {e}"))
                }),
        ),
        (None, Some(why)) => Some(Err(why.clone())),
        (None, None) => None,
    };
    let parent_task =
        match &args.parent_task_file {
            Some(path) => Some(std::fs::read_to_string(path).map_err(|e| {
                Failure::Usage(format!("--parent-task-file {}: {e}", path.display()))
            })?),
            None => None,
        };
    Ok(forge_app::task::SessionTravelPlan {
        import,
        parent_task,
        export_to: args.export_session.clone(),
    })
}

/// `--resume-session`: the follow-up continues its parent's agent session.
fn resume_session(id: Option<&str>) -> Result<Option<forge_domain::SessionId>, Failure> {
    id.map(|id| {
        forge_domain::SessionId::new(id.to_owned())
            .map_err(|e| Failure::Usage(format!("--resume-session: {e}")))
    })
    .transpose()
}

/// Prints the task's report and says how it ended: a delivery that failed, or a push asked
/// for that did not happen, is an error, not a footnote.
fn report(outcome: &TaskOutcome, undelivered: Option<Failure>, json: bool, push_asked: bool) -> u8 {
    let mut out = std::io::stdout().lock();
    if json {
        let _ = write_json_pretty(&mut out, outcome);
    } else {
        let style = Style::detect(std::io::stdout().is_terminal());
        let _ = out.write_all(render::report_with_delivery(outcome, style).as_bytes());
    }
    if let Some(failure) = undelivered {
        let _ = writeln!(std::io::stderr(), "error: delivery failed: {failure}");
        return exit::RUN_ERROR;
    }
    // A push that was asked for and did not happen is an error, not a footnote.
    if let Some(error) = outcome
        .delivery
        .as_ref()
        .and_then(|d| d.push_error.as_deref())
        .filter(|_| push_asked)
    {
        let _ = writeln!(
            std::io::stderr(),
            "error: --push asked for, but the push failed (the commit is kept): {error}"
        );
        return exit::RUN_ERROR;
    }
    exit_code(outcome)
}

/// A task on a URL is delivered in forge's cache of the repository (cloned or fetched
/// before the configuration was read; the pipeline only fetches again), its branch pushed
/// to the URL, by the repository's own delivery rules.
fn url_delivery(
    url: &url_repo::UrlRepo,
    request: &TaskRequest,
    push: bool,
) -> Result<Delivery, Failure> {
    crate::cmd::delivery::open_for_url(
        &url.cache,
        &request.repo,
        push.then_some(true),
        url.file.as_ref(),
    )
}

/// What an earlier attempt of the task (given by `--task-id`) delivered: the commit its
/// branch holds on the remote, with the task's trailer.
struct DeliveredBefore {
    task_id: TaskId,
    commit: String,
}

async fn delivered_before(
    delivery: &Delivery,
    request: &TaskRequest,
) -> Result<Option<DeliveredBefore>, Failure> {
    let Some(id) = &request.task_id else {
        return Ok(None);
    };
    let found = delivery
        .pushed_commit(id)
        .await
        .map_err(crate::cmd::delivery::failure)?;
    Ok(found.map(|commit| DeliveredBefore {
        task_id: id.clone(),
        commit,
    }))
}

/// The report of a task an earlier attempt delivered: nothing ran, nothing was pushed.
fn print_delivered_before(found: &DeliveredBefore, json: bool) {
    let branch = found.task_id.branch();
    let mut out = std::io::stdout().lock();
    if json {
        let report = serde_json::json!({
            "task_id": found.task_id,
            "status": "committed",
            "delivery": {
                "decision": "committed",
                "branch": branch,
                "commit": found.commit,
                "pushed": true,
            },
            "note": "delivered by an earlier attempt: the remote's branch holds a commit with this task's Forge-Task trailer; nothing was run or pushed again",
        });
        let _ = write_json_pretty(&mut out, &report);
    } else {
        let _ = writeln!(
            out,
            "task {}: already delivered by an earlier attempt (commit {} on {branch}); nothing was run or pushed again",
            found.task_id, found.commit
        );
    }
}

/// The exit code of an outcome (see `TASK_EXIT_CODES`).
pub fn exit_code(outcome: &TaskOutcome) -> u8 {
    if outcome.status == forge_domain::task::TaskStatus::PendingApproval {
        return super::records::HELD_FOR_APPROVAL;
    }
    match outcome.stop_reason {
        StopReason::Validated | StopReason::NoSteps | StopReason::ReviewFindings => exit::SUCCESS,
        StopReason::Timeout => exit::TIMEOUT,
        StopReason::Cancelled => exit::CANCELLED,
        StopReason::CostCeiling | StopReason::RunBudget | StopReason::MaxTurns => STOPPED_BY_LIMIT,
        StopReason::NoChanges | StopReason::MaxCycles | StopReason::Error => exit::RUN_ERROR,
    }
}

/// The user configuration's `[task]` and `[cache]`: a worker's work-tree location and build
/// caches for a URL task.
fn user_task_config() -> Result<TaskConfig, Failure> {
    match crate::config_load::user_config_file() {
        Some(path) if path.is_file() => {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| Failure::Usage(format!("{}: {e}", path.display())))?;
            Ok(forge_app::config::parse_task_config(&text, &path)?)
        }
        _ => Ok(TaskConfig::default()),
    }
}
