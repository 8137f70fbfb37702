//! `task list | show <id> | rollback <id>`: the delivery store's view of tasks.

use std::io::Write;

use forge_domain::task::TaskId;
use serde::Serialize;

use super::{TaskIdArgs, TaskListArgs};
use crate::cmd::approvals::RepoArgs;
use crate::cmd::delivery::{delivery_text, failure, open_reconciled, repo_root};
use crate::exit::Failure;
use crate::output::style::Style;
use crate::output::write_json_pretty;

/// One line of `task list --json` (the full report is `task show`).
#[derive(Debug, Serialize)]
struct Listed<'a> {
    task_id: &'a TaskId,
    status: &'a str,
    title: &'a str,
    branch: &'a str,
    risk_score: u8,
    created_at_ms: u64,
    updated_at_ms: u64,
}

fn task_id(text: &str) -> Result<TaskId, Failure> {
    TaskId::new(text).map_err(|e| Failure::Usage(e.to_string()))
}

fn store_failure(e: forge_domain::ForgeError) -> Failure {
    Failure::Other(anyhow::anyhow!(e))
}

pub async fn list(args: TaskListArgs) -> Result<u8, Failure> {
    let RepoArgs { repo, json } = args.common;
    let repo = repo_root(&repo)?;
    let delivery = open_reconciled(&repo, None).await?;
    let tasks = delivery
        .ports()
        .store
        .tasks()
        .await
        .map_err(store_failure)?;
    let mut out = std::io::stdout().lock();
    if json {
        let listed: Vec<Listed<'_>> = tasks
            .iter()
            .map(|t| Listed {
                task_id: &t.task_id,
                status: t.status.as_str(),
                title: &t.title,
                branch: &t.branch,
                risk_score: t.risk_score,
                created_at_ms: t.created_at_ms,
                updated_at_ms: t.updated_at_ms,
            })
            .collect();
        let _ = write_json_pretty(&mut out, &listed);
    } else if tasks.is_empty() {
        let _ = writeln!(out, "no tasks");
    } else {
        for t in &tasks {
            let _ = writeln!(
                out,
                "{}  {:<16}  risk {:>2}  {}",
                t.task_id,
                t.status.as_str(),
                t.risk_score,
                forge_domain::error::excerpt(&t.title, 60)
            );
        }
    }
    Ok(0)
}

pub async fn show(args: TaskIdArgs) -> Result<u8, Failure> {
    let repo = repo_root(&args.common.repo)?;
    let delivery = open_reconciled(&repo, None).await?;
    let id = task_id(&args.id)?;
    let record = delivery
        .ports()
        .store
        .task(&id)
        .await
        .map_err(store_failure)?
        .ok_or_else(|| Failure::Usage(format!("no task with id {id} in the store")))?;
    let mut out = std::io::stdout().lock();
    if args.common.json {
        let _ = write_json_pretty(&mut out, &record.report);
        return Ok(0);
    }
    let outcome: forge_domain::task::TaskOutcome = serde_json::from_value(record.report)
        .map_err(|e| Failure::Other(anyhow::anyhow!("the stored report of {id}: {e}")))?;
    let style = Style::detect(false);
    let _ = out.write_all(super::render::report(&outcome, style).as_bytes());
    let _ = out.write_all(delivery_text(&outcome).as_bytes());
    let audit = delivery
        .ports()
        .store
        .audit(&id)
        .await
        .map_err(store_failure)?;
    let _ = writeln!(out, "audit ({}):", crate::cmd::time::local_zone());
    for e in &audit {
        let _ = writeln!(
            out,
            "  {:>4} {} {:<18} {}  {}",
            e.seq,
            crate::cmd::time::local(e.at_ms),
            e.action.as_str(),
            e.actor,
            e.detail
        );
    }
    Ok(0)
}

pub async fn rollback(args: TaskIdArgs) -> Result<u8, Failure> {
    let repo = repo_root(&args.common.repo)?;
    let delivery = open_reconciled(&repo, None).await?;
    let id = task_id(&args.id)?;
    let outcome = delivery.rollback(&id).await.map_err(failure)?;
    let mut out = std::io::stdout().lock();
    if args.common.json {
        let _ = write_json_pretty(&mut out, &outcome);
    } else {
        let _ = out.write_all(delivery_text(&outcome).as_bytes());
    }
    Ok(0)
}

/// Exit code of `task run` when the change waits for approval.
pub const HELD_FOR_APPROVAL: u8 = 10;

/// `task run`'s last step: the outcome through delivery (reconciling first).
pub async fn deliver(
    repo: &std::path::Path,
    outcome: forge_domain::task::TaskOutcome,
    push: bool,
) -> Result<forge_domain::task::TaskOutcome, Failure> {
    let delivery = open_reconciled(repo, push.then_some(true)).await?;
    delivery.deliver(outcome).await.map_err(failure)
}
