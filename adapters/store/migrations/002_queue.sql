-- forge's task queue, version 2: the embedded default of the queue PostgreSQL holds for many
-- machines (adapters/postgres/migrations/001_queue.sql has the same tables). Times are Unix
-- milliseconds; JSON is TEXT.

CREATE TABLE queue_tasks (
    task_id          TEXT PRIMARY KEY NOT NULL,
    position         INTEGER NOT NULL UNIQUE,
    state            TEXT NOT NULL CHECK (state IN
                         ('queued', 'running', 'succeeded', 'failed', 'cancelled', 'dead')),
    repo             TEXT NOT NULL,
    prompt           TEXT NOT NULL,
    options          TEXT NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL CHECK (max_attempts > 0),
    worker           TEXT,
    lease_until_ms   INTEGER,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    submitted_at_ms  INTEGER NOT NULL,
    started_at_ms    INTEGER,
    finished_at_ms   INTEGER,
    exit_code        INTEGER,
    last_error       TEXT,
    report           TEXT,
    CHECK ((state = 'running') = (lease_until_ms IS NOT NULL)),
    CHECK (state <> 'running' OR worker IS NOT NULL)
);
CREATE INDEX queue_tasks_open ON queue_tasks (state, position);

CREATE TABLE queue_events (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL REFERENCES queue_tasks (task_id) ON DELETE CASCADE,
    at_ms   INTEGER NOT NULL,
    kind    TEXT NOT NULL,
    data    TEXT NOT NULL
);
CREATE INDEX queue_events_by_task ON queue_events (task_id, seq);
