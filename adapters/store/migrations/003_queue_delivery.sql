-- forge's task queue, version 3: one delivery per task. The primary key is the rule that a
-- task is delivered once, whichever worker pushed it (adapters/postgres/migrations/
-- 002_queue_delivery.sql has the same table).

CREATE TABLE queue_deliveries (
    task_id   TEXT PRIMARY KEY NOT NULL REFERENCES queue_tasks (task_id) ON DELETE CASCADE,
    branch    TEXT NOT NULL,
    commit_id TEXT NOT NULL,
    worker    TEXT NOT NULL,
    at_ms     INTEGER NOT NULL
);
