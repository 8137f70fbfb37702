-- forge's task queue on PostgreSQL, version 2: one delivery per task. The primary key is
-- the rule that a task is delivered once, whichever worker pushed it.

CREATE TABLE queue_deliveries (
    task_id   TEXT PRIMARY KEY NOT NULL REFERENCES queue_tasks (task_id) ON DELETE CASCADE,
    branch    TEXT NOT NULL,
    commit_id TEXT NOT NULL,
    worker    TEXT NOT NULL,
    at_ms     BIGINT NOT NULL
);
