-- forge's task queue, version 5 (PostgreSQL's 004_queue_approvals.sql): approvals decided
-- through the queue. One row per task (its held change), decided once: a decision is an
-- UPDATE … WHERE state = 'pending', so the loser changes nothing. `holder` is the worker
-- whose repository cache holds the change; `outcome` (JSON) is what it did with the
-- decision, NULL until it has.

CREATE TABLE queue_approvals (
    approval_id     TEXT PRIMARY KEY NOT NULL,
    task_id         TEXT NOT NULL UNIQUE REFERENCES queue_tasks (task_id) ON DELETE CASCADE,
    holder          TEXT NOT NULL,
    risk_score      INTEGER NOT NULL,
    reasons         TEXT NOT NULL,
    files           TEXT NOT NULL,
    summary         TEXT,
    push            INTEGER NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'rejected')),
    requested_at_ms INTEGER NOT NULL,
    decided_by      TEXT,
    reason          TEXT,
    decided_at_ms   INTEGER,
    outcome         TEXT
);
CREATE INDEX queue_approvals_holder ON queue_approvals (holder, state);
