//! `approvals list | show | approve | reject --queue URL`: the delivery gate over the
//! queue's tasks, from any machine. A decision is taken in the queue, once (a second is
//! told, exit 4, as locally); the worker holding the change carries it out with the local
//! command in its cache and records the outcome, which `list`/`show` then print.

use std::io::Write;

use forge_app::delivery::DeliveryError;
use forge_app::queue::approval_json;
use forge_domain::delivery::{ApprovalId, Decision};
use forge_domain::queue_approval::{ApprovalOutcome, Decided, QueueApproval, QueueDecision};
use forge_ports::TaskQueue;

use super::{QUEUE_ENV, failure, open};
use crate::cmd::approvals::{ApprovalsCmd, approval_id, approval_line, decided_elsewhere};
use crate::exit::{self, Failure};
use crate::output::write_json_pretty;

/// The queue a command names (`--queue URL`, or `--queue` alone: `FORGE_QUEUE_URL`, else
/// `[queue] url`); `None`: the repository's own approvals.
///
/// # Errors
/// A usage error when `--queue` is given alone and no queue is configured.
pub fn queue_of(cmd: &ApprovalsCmd) -> Result<Option<String>, Failure> {
    let flag = match cmd {
        ApprovalsCmd::List(a) => &a.queue.queue,
        ApprovalsCmd::Show(a) => &a.queue.queue,
        ApprovalsCmd::Approve(a) => &a.target.queue.queue,
        ApprovalsCmd::Reject(a) => &a.target.queue.queue,
    };
    let Some(flag) = flag else {
        return Ok(None);
    };
    let env = std::env::var(QUEUE_ENV).ok();
    let url = super::queue_url(
        Some(flag.as_str())
            .filter(|f| !f.is_empty())
            .or(env.as_deref()),
    )?;
    url.map(Some).ok_or_else(|| {
        Failure::Usage(format!(
            "--queue: no URL; pass --queue URL, set {QUEUE_ENV}, or put url in [queue] of the user config"
        ))
    })
}

/// An approval as JSON: its row and the state as a person reads it (`status`).
fn line(a: &QueueApproval) -> String {
    let line = approval_line(
        &a.approval_id,
        &a.status_text(),
        &a.task_id,
        a.risk_score,
        a.files.len(),
    );
    format!("{line}  worker {}", a.worker)
}

async fn find(queue: &dyn TaskQueue, id: &ApprovalId) -> Result<QueueApproval, Failure> {
    queue
        .approval(id)
        .await
        .map_err(failure)?
        .ok_or_else(|| no_such(id))
}

fn no_such(id: &ApprovalId) -> Failure {
    Failure::Usage(format!(
        "no approval with id {id} in the queue (see `forge-code-agent approvals list --queue`)"
    ))
}

/// Who decides: the user of this machine.
fn decider() -> String {
    let user = std::env::var("USER")
        .ok()
        .filter(|u| !u.trim().is_empty())
        .unwrap_or_else(|| "forge".to_owned());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    match host.trim() {
        "" => user,
        host => format!("{user}@{host}"),
    }
}

pub async fn run(cmd: ApprovalsCmd, url: &str) -> Result<u8, Failure> {
    let queue = open(url).await?;
    let mut out = std::io::stdout().lock();
    let (id, json, decision) = match cmd {
        ApprovalsCmd::List(args) => {
            let approvals = queue.approvals(args.all).await.map_err(failure)?;
            if args.common.json {
                let listed: Vec<_> = approvals.iter().map(approval_json).collect();
                let _ = write_json_pretty(&mut out, &listed);
            } else if approvals.is_empty() {
                let _ = writeln!(out, "no approvals");
            } else {
                for a in &approvals {
                    let _ = writeln!(out, "{}", line(a));
                }
            }
            return Ok(exit::SUCCESS);
        }
        ApprovalsCmd::Show(args) => {
            let id = approval_id(&args.id)?;
            let approval = find(queue.as_ref(), &id).await?;
            let task = queue.task(&approval.task_id).await.map_err(failure)?;
            if args.common.json {
                let value = serde_json::json!({"approval": approval_json(&approval), "task": task});
                let _ = write_json_pretty(&mut out, &value);
            } else {
                let _ = writeln!(out, "{}", show_text(&approval));
            }
            return Ok(exit::SUCCESS);
        }
        ApprovalsCmd::Approve(args) => {
            let decision = QueueDecision {
                decision: Decision::Approve,
                by: decider(),
                reason: None,
                push: args.push,
            };
            (args.target.id, args.target.common.json, decision)
        }
        ApprovalsCmd::Reject(args) => {
            let decision = QueueDecision {
                decision: Decision::Reject,
                by: decider(),
                reason: args.reason,
                push: false,
            };
            (args.target.id, args.target.common.json, decision)
        }
    };
    let id = approval_id(&id)?;
    match queue
        .decide_approval(&id, &decision)
        .await
        .map_err(failure)?
    {
        None => Err(no_such(&id)),
        Some(Decided::Already(standing)) => decided_elsewhere(DeliveryError::AlreadyDecided {
            id,
            state: standing.state,
            by: standing.decided_by,
        }),
        Some(Decided::Now(decided)) => {
            if json {
                let _ = write_json_pretty(&mut out, &approval_json(&decided));
            } else {
                let _ = writeln!(out, "{}", line(&decided));
            }
            Ok(exit::SUCCESS)
        }
    }
}

fn show_text(a: &QueueApproval) -> String {
    let mut text = format!(
        "{}  {}  task {}  worker {}\nrisk {}",
        a.approval_id,
        a.status_text(),
        a.task_id,
        a.worker,
        a.risk_score
    );
    for r in &a.reasons {
        text.push_str(&format!("\n  {r}"));
    }
    for f in &a.files {
        text.push_str(&format!("\n  file {f}"));
    }
    if let Some(summary) = &a.summary {
        text.push_str(&format!("\nsummary: {summary}"));
    }
    if let Some(by) = &a.decided_by {
        text.push_str(&format!("\ndecided by {by}"));
        if let Some(reason) = &a.reason {
            text.push_str(&format!(": {reason}"));
        }
    }
    if let Some(ApprovalOutcome::Done { report }) = &a.outcome {
        let delivery = &report["delivery"];
        if let Some(commit) = delivery["commit"].as_str() {
            let pushed = if delivery["pushed"] == true {
                "pushed"
            } else {
                "not pushed"
            };
            text.push_str(&format!(
                "\ncommit {commit} on {} ({pushed})",
                delivery["branch"].as_str().unwrap_or_default()
            ));
        }
    }
    text
}
