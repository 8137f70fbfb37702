mod concurrency;
mod faults;
mod queue;
mod round_trip;

use forge_domain::delivery::{
    Approval, ApprovalId, ApprovalState, AuditAction, AuditEntry, TaskRecord,
};
use forge_domain::task::{TaskId, TaskStatus};

pub(crate) fn id(s: &str) -> TaskId {
    TaskId::new(s).unwrap()
}

pub(crate) fn task(name: &str, created: u64) -> TaskRecord {
    TaskRecord {
        task_id: id(name),
        status: TaskStatus::Validated,
        title: format!("task {name}"),
        repo: "/repo".into(),
        branch: format!("forge/{name}"),
        worktree: Some(format!("/repo/.forgecode/worktrees/{name}")),
        risk_score: 1,
        created_at_ms: created,
        updated_at_ms: created,
        report: serde_json::json!({"task_id": name, "status": "validated"}),
    }
}

pub(crate) fn pending(name: &str, at: u64) -> Approval {
    let task_id = id(name);
    Approval {
        id: ApprovalId::for_task(&task_id),
        task_id,
        state: ApprovalState::Pending,
        risk_score: 6,
        reasons: vec!["+4 critical finding".into()],
        files: vec![".env".into()],
        requested_at_ms: at,
        decided_at_ms: None,
        decided_by: None,
        reason: None,
    }
}

pub(crate) fn entry(name: &str, at: u64, action: AuditAction) -> AuditEntry {
    AuditEntry::new(id(name), at, "forge", action, "")
}

/// The schema version a freshly opened file is at.
pub(crate) const LATEST: u32 = 9;
