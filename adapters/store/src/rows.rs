//! Rows ⇄ domain values. Lists are JSON arrays in TEXT columns.

use std::path::Path;

use forge_domain::ForgeError;
use forge_domain::delivery::{
    Approval, ApprovalId, ApprovalState, AuditAction, AuditEntry, CodeChange, NotificationResult,
    TaskRecord,
};
use forge_domain::task::{TaskId, TaskStatus};
use rusqlite::Row;

use crate::error::bad_row;

pub(crate) const TASK_COLUMNS: &str = "task_id, status, title, repo, branch, worktree, \
     risk_score, created_at_ms, updated_at_ms, report";
pub(crate) const CHANGE_COLUMNS: &str =
    "task_id, branch, commit_id, base, pushed, push_error, files, at_ms";
pub(crate) const APPROVAL_COLUMNS: &str = "approval_id, task_id, state, risk_score, reasons, \
     files, requested_at_ms, decided_at_ms, decided_by, reason";
pub(crate) const AUDIT_COLUMNS: &str = "seq, task_id, at_ms, actor, action, detail";

/// A row as read, before the checks that can fail for reasons SQLite does not know.
pub(crate) type Raw = Vec<rusqlite::types::Value>;

pub(crate) fn raw(row: &Row<'_>, n: usize) -> rusqlite::Result<Raw> {
    (0..n).map(|i| row.get(i)).collect()
}

struct Reader<'a> {
    path: &'a Path,
    what: &'static str,
    values: std::vec::IntoIter<rusqlite::types::Value>,
}

impl Reader<'_> {
    fn next(&mut self) -> rusqlite::types::Value {
        self.values.next().unwrap_or(rusqlite::types::Value::Null)
    }

    fn text(&mut self) -> Result<String, ForgeError> {
        match self.next() {
            rusqlite::types::Value::Text(s) => Ok(s),
            other => Err(bad_row(
                self.path,
                self.what,
                format!("expected text, found {other:?}"),
            )),
        }
    }

    fn opt_text(&mut self) -> Result<Option<String>, ForgeError> {
        match self.next() {
            rusqlite::types::Value::Null => Ok(None),
            rusqlite::types::Value::Text(s) => Ok(Some(s)),
            other => Err(bad_row(
                self.path,
                self.what,
                format!("expected text, found {other:?}"),
            )),
        }
    }

    fn int(&mut self) -> Result<i64, ForgeError> {
        match self.next() {
            rusqlite::types::Value::Integer(i) => Ok(i),
            other => Err(bad_row(
                self.path,
                self.what,
                format!("expected an integer, found {other:?}"),
            )),
        }
    }

    fn opt_int(&mut self) -> Result<Option<i64>, ForgeError> {
        match self.next() {
            rusqlite::types::Value::Null => Ok(None),
            rusqlite::types::Value::Integer(i) => Ok(Some(i)),
            other => Err(bad_row(
                self.path,
                self.what,
                format!("expected an integer, found {other:?}"),
            )),
        }
    }

    fn ms(&mut self) -> Result<u64, ForgeError> {
        let value = self.int()?;
        u64::try_from(value)
            .map_err(|_| bad_row(self.path, self.what, format!("negative time {value}")))
    }

    fn score(&mut self) -> Result<u8, ForgeError> {
        let value = self.int()?;
        u8::try_from(value)
            .map_err(|_| bad_row(self.path, self.what, format!("risk score {value}")))
    }

    fn task_id(&mut self) -> Result<TaskId, ForgeError> {
        let text = self.text()?;
        TaskId::new(text).map_err(|e| bad_row(self.path, self.what, e))
    }

    fn list(&mut self) -> Result<Vec<String>, ForgeError> {
        let text = self.text()?;
        serde_json::from_str(&text).map_err(|e| bad_row(self.path, self.what, e))
    }
}

fn reader<'a>(path: &'a Path, what: &'static str, raw: Raw) -> Reader<'a> {
    Reader {
        path,
        what,
        values: raw.into_iter(),
    }
}

pub(crate) fn list_json(items: &[String]) -> String {
    serde_json::Value::from(items.to_vec()).to_string()
}

pub(crate) fn task_from(path: &Path, raw: Raw) -> Result<TaskRecord, ForgeError> {
    let mut r = reader(path, "task", raw);
    let task_id = r.task_id()?;
    let status_text = r.text()?;
    let status: TaskStatus = serde_json::from_value(serde_json::Value::String(status_text))
        .map_err(|e| bad_row(path, "task status", e))?;
    Ok(TaskRecord {
        task_id,
        status,
        title: r.text()?,
        repo: r.text()?,
        branch: r.text()?,
        worktree: r.opt_text()?,
        risk_score: r.score()?,
        created_at_ms: r.ms()?,
        updated_at_ms: r.ms()?,
        report: serde_json::from_str(&r.text()?).map_err(|e| bad_row(path, "task report", e))?,
    })
}

pub(crate) fn change_from(path: &Path, raw: Raw) -> Result<CodeChange, ForgeError> {
    let mut r = reader(path, "code change", raw);
    Ok(CodeChange {
        task_id: r.task_id()?,
        branch: r.text()?,
        commit: r.opt_text()?,
        base: r.opt_text()?,
        pushed: r.int()? != 0,
        push_error: r.opt_text()?,
        files: r.list()?,
        at_ms: r.ms()?,
    })
}

pub(crate) fn approval_from(path: &Path, raw: Raw) -> Result<Approval, ForgeError> {
    let mut r = reader(path, "approval", raw);
    let id = ApprovalId::new(r.text()?).map_err(|e| bad_row(path, "approval id", e))?;
    let task_id = r.task_id()?;
    let state_text = r.text()?;
    let state = ApprovalState::parse(&state_text)
        .ok_or_else(|| bad_row(path, "approval state", &state_text))?;
    Ok(Approval {
        id,
        task_id,
        state,
        risk_score: r.score()?,
        reasons: r.list()?,
        files: r.list()?,
        requested_at_ms: r.ms()?,
        decided_at_ms: r.opt_int()?.map(|v| u64::try_from(v).unwrap_or_default()),
        decided_by: r.opt_text()?,
        reason: r.opt_text()?,
    })
}

pub(crate) fn audit_from(path: &Path, raw: Raw) -> Result<AuditEntry, ForgeError> {
    let mut r = reader(path, "audit entry", raw);
    let seq = r.ms()?;
    let task_id = r.task_id()?;
    let at_ms = r.ms()?;
    let actor = r.text()?;
    let action_text = r.text()?;
    let action = AuditAction::parse(&action_text)
        .ok_or_else(|| bad_row(path, "audit action", &action_text))?;
    Ok(AuditEntry {
        seq,
        task_id,
        at_ms,
        actor,
        action,
        detail: r.text()?,
    })
}

pub(crate) fn notification_from(path: &Path, raw: Raw) -> Result<NotificationResult, ForgeError> {
    let mut r = reader(path, "notification", raw);
    Ok(NotificationResult {
        channel: r.text()?,
        ok: r.int()? != 0,
        error: r.opt_text()?,
    })
}

/// Times and scores go into INTEGER columns; a u64 past i64 is a bug upstream, kept as max.
pub(crate) fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}
