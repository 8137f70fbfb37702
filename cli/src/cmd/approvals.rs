//! `approvals list | show | approve | reject`: a person's side of the delivery gate.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use forge_app::delivery::DeliveryError;
use forge_domain::delivery::{ApprovalId, ApprovalState};

use super::delivery::{ALREADY_DECIDED, delivery_text, failure, open_reconciled, repo_root};
use crate::exit::Failure;
use crate::output::write_json_pretty;

pub(crate) const APPROVALS_EXIT_CODES: &str = "\
Exit codes:
  0  done
  1  the store or git failed (the message names the file or command)
  2  usage error: unknown approval id, bad configuration
  4  already decided: another person or process decided first (nothing was changed)";

#[derive(Debug, Subcommand)]
pub enum ApprovalsCmd {
    /// List approvals (pending ones unless --all)
    List(ListArgs),
    /// Show one approval with its task's report and notifications
    Show(IdArgs),
    /// Approve: commit the held change on its task branch (and push when enabled)
    #[command(after_help = APPROVALS_EXIT_CODES)]
    Approve(ApproveArgs),
    /// Reject: remove the held change's work tree and branch
    #[command(after_help = APPROVALS_EXIT_CODES)]
    Reject(RejectArgs),
}

#[derive(Debug, Args)]
pub struct RepoArgs {
    /// The repository
    #[arg(long, value_name = "PATH", default_value = ".")]
    pub repo: PathBuf,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

/// `--queue [URL]`: approvals of the tasks in a queue instead of a repository's store.
#[derive(Debug, Args)]
pub struct QueueArg {
    /// Approvals of the queue's tasks (held in their workers' caches) instead of the
    /// repository's; URL: postgres://…, postgresql://… or sqlite://PATH [without URL:
    /// FORGE_QUEUE_URL, else `[queue] url` of the user config]
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "")]
    pub queue: Option<String>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub common: RepoArgs,
    #[command(flatten)]
    pub queue: QueueArg,
    /// Decided approvals too
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, Args)]
pub struct IdArgs {
    #[command(flatten)]
    pub common: RepoArgs,
    #[command(flatten)]
    pub queue: QueueArg,
    /// The approval id (`approvals list` shows them)
    pub id: String,
}

#[derive(Debug, Args)]
pub struct ApproveArgs {
    #[command(flatten)]
    pub target: IdArgs,
    /// Push the task branch after committing (overrides [delivery] push)
    #[arg(long)]
    pub push: bool,
}

#[derive(Debug, Args)]
pub struct RejectArgs {
    #[command(flatten)]
    pub target: IdArgs,
    /// Why (recorded in the audit log)
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
}

pub(crate) fn approval_id(text: &str) -> Result<ApprovalId, Failure> {
    ApprovalId::new(text).map_err(|e| Failure::Usage(e.to_string()))
}

/// A lost race is reported with its own exit code; other errors fail as usual.
pub(crate) fn decided_elsewhere(e: DeliveryError) -> Result<u8, Failure> {
    match e {
        DeliveryError::AlreadyDecided { .. } => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            Ok(ALREADY_DECIDED)
        }
        other => Err(failure(other)),
    }
}

/// One approval as `approvals list` prints it: `ID  STATE  task T  risk R  N file(s)`.
pub(crate) fn approval_line(
    id: &ApprovalId,
    state: &str,
    task: &forge_domain::task::TaskId,
    risk: u8,
    files: usize,
) -> String {
    format!("{id}  {state}  task {task}  risk {risk}  {files} file(s)")
}

pub async fn run(cmd: ApprovalsCmd) -> Result<u8, Failure> {
    if let Some(url) = crate::cmd::queue::approvals::queue_of(&cmd)? {
        return crate::cmd::queue::approvals::run(cmd, &url).await;
    }
    let mut out = std::io::stdout().lock();
    match cmd {
        ApprovalsCmd::List(args) => {
            let repo = repo_root(&args.common.repo)?;
            let delivery = open_reconciled(&repo, None).await?;
            let state = (!args.all).then_some(ApprovalState::Pending);
            let approvals = delivery
                .ports()
                .store
                .approvals(state)
                .await
                .map_err(|e| Failure::Other(anyhow::anyhow!(e)))?;
            if args.common.json {
                let _ = write_json_pretty(&mut out, &approvals);
            } else if approvals.is_empty() {
                let _ = writeln!(out, "no approvals");
            } else {
                for a in &approvals {
                    let line = approval_line(
                        &a.id,
                        a.state.as_str(),
                        &a.task_id,
                        a.risk_score,
                        a.files.len(),
                    );
                    let _ = writeln!(out, "{line}");
                }
            }
            Ok(0)
        }
        ApprovalsCmd::Show(args) => {
            let repo = repo_root(&args.common.repo)?;
            let delivery = open_reconciled(&repo, None).await?;
            let id = approval_id(&args.id)?;
            let (approval, outcome) = delivery.approval(&id).await.map_err(failure)?;
            let notifications = delivery
                .ports()
                .store
                .notifications(&id)
                .await
                .map_err(|e| Failure::Other(anyhow::anyhow!(e)))?;
            if args.common.json {
                let value = serde_json::json!({
                    "approval": approval,
                    "notifications": notifications,
                    "task": outcome,
                });
                let _ = write_json_pretty(&mut out, &value);
            } else {
                let _ = writeln!(
                    out,
                    "{}  {}  task {}: {}\nrisk {}",
                    approval.id,
                    approval.state.as_str(),
                    approval.task_id,
                    outcome.task,
                    approval.risk_score
                );
                for r in &approval.reasons {
                    let _ = writeln!(out, "  {r}");
                }
                for f in &approval.files {
                    let _ = writeln!(out, "  file {f}");
                }
                for n in &notifications {
                    let what = n.error.as_deref().unwrap_or("ok");
                    let _ = writeln!(out, "  {}: {what}", n.channel);
                }
            }
            Ok(0)
        }
        ApprovalsCmd::Approve(args) => {
            let repo = repo_root(&args.target.common.repo)?;
            let delivery = open_reconciled(&repo, args.push.then_some(true)).await?;
            let id = approval_id(&args.target.id)?;
            let delivery = with_its_pull_request(delivery, &repo, &id).await?;
            let approved = match delivery.approve(&id).await {
                Ok(a) => a,
                Err(e) => return decided_elsewhere(e),
            };
            if let Some(note) = &approved.base_moved {
                let _ = writeln!(std::io::stderr(), "note: {note}");
            }
            if args.target.common.json {
                let _ = write_json_pretty(&mut out, &approved.outcome);
            } else {
                let _ = out.write_all(delivery_text(&approved.outcome).as_bytes());
            }
            Ok(0)
        }
        ApprovalsCmd::Reject(args) => {
            let repo = repo_root(&args.target.common.repo)?;
            let delivery = open_reconciled(&repo, None).await?;
            let id = approval_id(&args.target.id)?;
            let outcome = match delivery.reject(&id, args.reason.as_deref()).await {
                Ok(o) => o,
                Err(e) => return decided_elsewhere(e),
            };
            if args.target.common.json {
                let _ = write_json_pretty(&mut out, &outcome);
            } else {
                let _ = out.write_all(delivery_text(&outcome).as_bytes());
            }
            Ok(0)
        }
    }
}

/// A held task that opened its draft with `--pull-request` (not `[delivery] pull_request`)
/// is still the pull request's: its approval marks it ready as the key's would.
async fn with_its_pull_request(
    delivery: forge_app::delivery::Delivery,
    repo: &std::path::Path,
    id: &ApprovalId,
) -> Result<forge_app::delivery::Delivery, Failure> {
    if delivery.delivers_pull_requests() {
        return Ok(delivery);
    }
    let opened = match delivery.approval(id).await {
        Ok((_, outcome)) => outcome.pull_request.is_some_and(|pr| pr.opened.is_some()),
        // The approval itself says why it cannot be decided.
        Err(_) => false,
    };
    if !opened {
        return Ok(delivery);
    }
    let remote = super::delivery::remote_of(repo)?;
    crate::cmd::pull_request::attach(delivery, repo, &remote)
}
