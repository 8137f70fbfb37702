-- forge's task store, version 1. Applied once, in a transaction, by SqliteStore::open.
-- Lists (files, reasons) are JSON arrays in TEXT columns; times are Unix milliseconds.

CREATE TABLE tasks (
    task_id       TEXT PRIMARY KEY NOT NULL,
    status        TEXT NOT NULL,
    title         TEXT NOT NULL,
    repo          TEXT NOT NULL,
    branch        TEXT NOT NULL,
    worktree      TEXT,
    risk_score    INTEGER NOT NULL,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    report        TEXT NOT NULL
);

CREATE TABLE code_changes (
    task_id    TEXT PRIMARY KEY NOT NULL,
    branch     TEXT NOT NULL,
    commit_id  TEXT,
    base       TEXT,
    pushed     INTEGER NOT NULL,
    push_error TEXT,
    files      TEXT NOT NULL,
    at_ms      INTEGER NOT NULL
);

CREATE TABLE approvals (
    approval_id     TEXT PRIMARY KEY NOT NULL,
    task_id         TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'rejected')),
    risk_score      INTEGER NOT NULL,
    reasons         TEXT NOT NULL,
    files           TEXT NOT NULL,
    requested_at_ms INTEGER NOT NULL,
    decided_at_ms   INTEGER,
    decided_by      TEXT,
    reason          TEXT
);
CREATE INDEX approvals_by_state ON approvals (state, requested_at_ms);

CREATE TABLE notifications (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    approval_id TEXT NOT NULL,
    channel     TEXT NOT NULL,
    ok          INTEGER NOT NULL,
    error       TEXT,
    at_ms       INTEGER NOT NULL
);
CREATE INDEX notifications_by_approval ON notifications (approval_id, id);

CREATE TABLE audit_log (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL,
    at_ms   INTEGER NOT NULL,
    actor   TEXT NOT NULL,
    action  TEXT NOT NULL,
    detail  TEXT NOT NULL
);
CREATE INDEX audit_by_task ON audit_log (task_id, seq);

-- The audit log is append-only: the database itself refuses to change history.
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;
