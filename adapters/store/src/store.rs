//! [`SqliteStore`]: the [`TaskStore`] port over one SQLite connection.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::delivery::{
    Approval, ApprovalId, ApprovalState, AuditEntry, CodeChange, Decision, NotificationResult,
    TaskRecord,
};
use forge_domain::task::TaskId;
use forge_ports::{DecideOutcome, TaskStore};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use crate::error::store_error;
use crate::rows::{
    APPROVAL_COLUMNS, AUDIT_COLUMNS, CHANGE_COLUMNS, Raw, TASK_COLUMNS, approval_from, audit_from,
    change_from, int, list_json, notification_from, raw, task_from,
};

/// A handle on the database; cheap to clone (one connection behind a mutex, used from a
/// blocking thread so a busy wait never stalls the async runtime).
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (creating when missing) the database at `path` and brings its schema up to date.
    ///
    /// # Errors
    /// [`ForgeError::Io`] naming the file when it cannot be created, is not a database, is
    /// locked past the busy timeout, or has a newer schema than this forge knows.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, ForgeError> {
        Self::open_with_busy_timeout(path, crate::open::BUSY_TIMEOUT)
    }

    /// [`SqliteStore::open`] with another busy timeout (tests use a short one).
    ///
    /// # Errors
    /// As for [`SqliteStore::open`].
    pub fn open_with_busy_timeout(
        path: impl Into<PathBuf>,
        busy: Duration,
    ) -> Result<Self, ForgeError> {
        let path = path.into();
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let conn = crate::open::open(&path, busy, now_ms)?;
        Ok(Self {
            inner: Arc::new(Inner {
                path,
                conn: Mutex::new(conn),
            }),
        })
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The schema version the file is at.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when it cannot be read.
    pub fn schema_version(&self) -> Result<u32, ForgeError> {
        let conn = self.lock()?;
        crate::migrate::version(&conn)
            .map_err(|e| store_error(&self.inner.path, "reading the schema version", &e))
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Connection>, ForgeError> {
        self.inner.conn.lock().map_err(|_| ForgeError::Io {
            context: "task store".to_owned(),
            message: format!(
                "{}: a previous operation panicked while holding the connection",
                self.inner.path.display()
            ),
        })
    }

    /// Runs `work` on a blocking thread with the connection.
    pub(crate) async fn with<T, F>(&self, work: F) -> Result<T, ForgeError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection, &Path) -> Result<T, ForgeError> + Send + 'static,
    {
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = this.lock()?;
            work(&mut conn, &this.inner.path)
        })
        .await
        .map_err(|e| ForgeError::io("task store: worker thread", e))?
    }

    /// Runs `work` in one IMMEDIATE transaction (the write lock is taken up front, so a
    /// second writer waits on the busy timeout instead of failing mid-way).
    pub(crate) async fn write<T, F>(&self, context: String, work: F) -> Result<T, ForgeError>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>, &Path) -> Result<T, ForgeError> + Send + 'static,
    {
        self.with(move |conn, path| {
            let fail = |e: rusqlite::Error| store_error(path, &context, &e);
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(fail)?;
            let value = work(&tx, path)?;
            tx.commit().map_err(fail)?;
            Ok(value)
        })
        .await
    }

    async fn read_all<T, F>(
        &self,
        context: String,
        sql: String,
        args: Vec<String>,
        width: usize,
        map: F,
    ) -> Result<Vec<T>, ForgeError>
    where
        T: Send + 'static,
        F: Fn(&Path, Raw) -> Result<T, ForgeError> + Send + 'static,
    {
        self.with(move |conn, path| {
            let fail = |e: rusqlite::Error| store_error(path, &context, &e);
            let mut stmt = conn.prepare_cached(&sql).map_err(fail)?;
            let rows = stmt
                .query_map(rusqlite::params_from_iter(args.iter()), |row| {
                    raw(row, width)
                })
                .map_err(fail)?;
            let mut out = Vec::new();
            for row in rows {
                out.push(map(path, row.map_err(fail)?)?);
            }
            Ok(out)
        })
        .await
    }
}

fn append(tx: &Transaction<'_>, path: &Path, entry: &AuditEntry) -> Result<u64, ForgeError> {
    tx.execute(
        "INSERT INTO audit_log (task_id, at_ms, actor, action, detail) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            entry.task_id.as_str(),
            int(entry.at_ms),
            entry.actor,
            entry.action.as_str(),
            entry.detail
        ],
    )
    .map_err(|e| store_error(path, "appending to the audit log", &e))?;
    Ok(u64::try_from(tx.last_insert_rowid()).unwrap_or_default())
}

fn append_all(tx: &Transaction<'_>, path: &Path, audit: &[AuditEntry]) -> Result<(), ForgeError> {
    for entry in audit {
        append(tx, path, entry)?;
    }
    Ok(())
}

#[async_trait]
impl TaskStore for SqliteStore {
    async fn save_task(&self, task: &TaskRecord, audit: &[AuditEntry]) -> Result<(), ForgeError> {
        let task = task.clone();
        let audit = audit.to_vec();
        let context = format!("saving task {}", task.task_id);
        self.write(context.clone(), move |tx, path| {
            tx.execute(
                &format!(
                    "INSERT OR REPLACE INTO tasks ({TASK_COLUMNS}) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
                ),
                params![
                    task.task_id.as_str(),
                    task.status.as_str(),
                    task.title,
                    task.repo,
                    task.branch,
                    task.worktree,
                    task.risk_score,
                    int(task.created_at_ms),
                    int(task.updated_at_ms),
                    task.report.to_string()
                ],
            )
            .map_err(|e| store_error(path, &context, &e))?;
            append_all(tx, path, &audit)
        })
        .await
    }

    async fn task(&self, id: &TaskId) -> Result<Option<TaskRecord>, ForgeError> {
        let sql = format!("SELECT {TASK_COLUMNS} FROM tasks WHERE task_id = ?1");
        let rows = self
            .read_all(
                format!("reading task {id}"),
                sql,
                vec![id.to_string()],
                10,
                task_from,
            )
            .await?;
        Ok(rows.into_iter().next())
    }

    async fn tasks(&self) -> Result<Vec<TaskRecord>, ForgeError> {
        let sql =
            format!("SELECT {TASK_COLUMNS} FROM tasks ORDER BY created_at_ms DESC, task_id DESC");
        self.read_all("listing tasks".into(), sql, vec![], 10, task_from)
            .await
    }

    async fn save_change(
        &self,
        change: &CodeChange,
        audit: &[AuditEntry],
    ) -> Result<(), ForgeError> {
        let change = change.clone();
        let audit = audit.to_vec();
        let context = format!("saving the change of task {}", change.task_id);
        self.write(context.clone(), move |tx, path| {
            tx.execute(
                &format!(
                    "INSERT OR REPLACE INTO code_changes ({CHANGE_COLUMNS}) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
                ),
                params![
                    change.task_id.as_str(),
                    change.branch,
                    change.commit,
                    change.base,
                    change.pushed,
                    change.push_error,
                    list_json(&change.files),
                    int(change.at_ms)
                ],
            )
            .map_err(|e| store_error(path, &context, &e))?;
            append_all(tx, path, &audit)
        })
        .await
    }

    async fn change(&self, task: &TaskId) -> Result<Option<CodeChange>, ForgeError> {
        let sql = format!("SELECT {CHANGE_COLUMNS} FROM code_changes WHERE task_id = ?1");
        let rows = self
            .read_all(
                format!("reading the change of task {task}"),
                sql,
                vec![task.to_string()],
                8,
                change_from,
            )
            .await?;
        Ok(rows.into_iter().next())
    }

    async fn create_approval(
        &self,
        approval: &Approval,
        audit: &[AuditEntry],
    ) -> Result<(), ForgeError> {
        let approval = approval.clone();
        let audit = audit.to_vec();
        let context = format!("creating approval {}", approval.id);
        self.write(context.clone(), move |tx, path| {
            let inserted = tx
                .execute(
                    &format!(
                        "INSERT OR IGNORE INTO approvals ({APPROVAL_COLUMNS}) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
                    ),
                    params![
                        approval.id.as_str(),
                        approval.task_id.as_str(),
                        approval.state.as_str(),
                        approval.risk_score,
                        list_json(&approval.reasons),
                        list_json(&approval.files),
                        int(approval.requested_at_ms),
                        approval.decided_at_ms.map(int),
                        approval.decided_by,
                        approval.reason
                    ],
                )
                .map_err(|e| store_error(path, &context, &e))?;
            if inserted == 0 {
                return Err(ForgeError::InvalidRequest {
                    reason: format!("approval {} already exists", approval.id),
                });
            }
            append_all(tx, path, &audit)
        })
        .await
    }

    async fn approval(&self, id: &ApprovalId) -> Result<Option<Approval>, ForgeError> {
        let sql = format!("SELECT {APPROVAL_COLUMNS} FROM approvals WHERE approval_id = ?1");
        let rows = self
            .read_all(
                format!("reading approval {id}"),
                sql,
                vec![id.to_string()],
                10,
                approval_from,
            )
            .await?;
        Ok(rows.into_iter().next())
    }

    async fn approvals(&self, state: Option<ApprovalState>) -> Result<Vec<Approval>, ForgeError> {
        let (filter, args) = match state {
            Some(state) => ("WHERE state = ?1", vec![state.as_str().to_owned()]),
            None => ("", vec![]),
        };
        let sql = format!(
            "SELECT {APPROVAL_COLUMNS} FROM approvals {filter} \
             ORDER BY requested_at_ms, approval_id"
        );
        self.read_all("listing approvals".into(), sql, args, 10, approval_from)
            .await
    }

    async fn decide_approval(
        &self,
        id: &ApprovalId,
        decision: Decision,
        by: &str,
        reason: Option<&str>,
        at_ms: u64,
    ) -> Result<DecideOutcome, ForgeError> {
        let id = id.clone();
        let by = by.to_owned();
        let reason = reason.map(str::to_owned);
        let context = format!("deciding approval {id}");
        self.write(context.clone(), move |tx, path| {
            let fail = |e: rusqlite::Error| store_error(path, &context, &e);
            // The state check is in the UPDATE itself: whoever's statement runs first under
            // the write lock flips it; the other matches no row.
            let changed = tx
                .execute(
                    "UPDATE approvals SET state = ?1, decided_at_ms = ?2, decided_by = ?3, reason = ?4 \
                     WHERE approval_id = ?5 AND state = 'pending'",
                    params![decision.state().as_str(), int(at_ms), by, reason, id.as_str()],
                )
                .map_err(fail)?;
            let row: Option<Raw> = tx
                .query_row(
                    &format!("SELECT {APPROVAL_COLUMNS} FROM approvals WHERE approval_id = ?1"),
                    params![id.as_str()],
                    |row| raw(row, 10),
                )
                .optional()
                .map_err(fail)?;
            let Some(row) = row else {
                return Err(ForgeError::InvalidRequest {
                    reason: format!("no approval with id {id} (see `forge-code-agent approvals list`)"),
                });
            };
            let approval = approval_from(path, row)?;
            if changed == 0 {
                return Ok(DecideOutcome::AlreadyDecided(approval));
            }
            let action = match decision {
                Decision::Approve => forge_domain::delivery::AuditAction::Approved,
                Decision::Reject => forge_domain::delivery::AuditAction::Rejected,
            };
            let detail = match &approval.reason {
                Some(reason) => format!("{id}: {reason}"),
                None => id.to_string(),
            };
            let entry = AuditEntry::new(approval.task_id.clone(), at_ms, by, action, detail);
            append(tx, path, &entry)?;
            Ok(DecideOutcome::Decided(approval))
        })
        .await
    }

    async fn record_notification(
        &self,
        approval: &ApprovalId,
        result: &NotificationResult,
        at_ms: u64,
        audit: &[AuditEntry],
    ) -> Result<(), ForgeError> {
        let approval = approval.clone();
        let result = result.clone();
        let audit = audit.to_vec();
        let context = format!("recording a notification for {approval}");
        self.write(context.clone(), move |tx, path| {
            tx.execute(
                "INSERT INTO notifications (approval_id, channel, ok, error, at_ms) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    approval.as_str(),
                    result.channel,
                    result.ok,
                    result.error,
                    int(at_ms)
                ],
            )
            .map_err(|e| store_error(path, &context, &e))?;
            append_all(tx, path, &audit)
        })
        .await
    }

    async fn notifications(
        &self,
        approval: &ApprovalId,
    ) -> Result<Vec<NotificationResult>, ForgeError> {
        let sql = "SELECT channel, ok, error FROM notifications WHERE approval_id = ?1 ORDER BY id"
            .to_owned();
        self.read_all(
            format!("reading notifications of {approval}"),
            sql,
            vec![approval.to_string()],
            3,
            notification_from,
        )
        .await
    }

    async fn append_audit(&self, entry: &AuditEntry) -> Result<u64, ForgeError> {
        let entry = entry.clone();
        self.write(
            format!("auditing task {}", entry.task_id),
            move |tx, path| append(tx, path, &entry),
        )
        .await
    }

    async fn audit(&self, task: &TaskId) -> Result<Vec<AuditEntry>, ForgeError> {
        let sql = format!("SELECT {AUDIT_COLUMNS} FROM audit_log WHERE task_id = ?1 ORDER BY seq");
        self.read_all(
            format!("reading the audit log of {task}"),
            sql,
            vec![task.to_string()],
            6,
            audit_from,
        )
        .await
    }
}
