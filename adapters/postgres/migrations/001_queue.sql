-- forge's task queue on PostgreSQL, version 1. Applied once, in a transaction under an
-- advisory lock, by PgQueue::connect. Times are Unix milliseconds on the database's clock,
-- so the leases of workers on different machines are measured by one clock.

CREATE FUNCTION forge_now_ms() RETURNS BIGINT LANGUAGE SQL VOLATILE AS
$$ SELECT (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT $$;

CREATE TABLE queue_tasks (
    task_id          TEXT PRIMARY KEY NOT NULL,
    -- Submission order: the oldest claimable task is claimed first.
    position         BIGSERIAL NOT NULL,
    state            TEXT NOT NULL CHECK (state IN
                         ('queued', 'running', 'succeeded', 'failed', 'cancelled', 'dead')),
    repo             TEXT NOT NULL,
    prompt           TEXT NOT NULL,
    options          JSONB NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL CHECK (max_attempts > 0),
    worker           TEXT,
    lease_until_ms   BIGINT,
    cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
    submitted_at_ms  BIGINT NOT NULL,
    started_at_ms    BIGINT,
    finished_at_ms   BIGINT,
    exit_code        INTEGER,
    last_error       TEXT,
    report           JSONB,
    -- A running task has its worker and lease; no other state has a lease.
    CHECK ((state = 'running') = (lease_until_ms IS NOT NULL)),
    CHECK (state <> 'running' OR worker IS NOT NULL)
);
CREATE INDEX queue_tasks_open ON queue_tasks (position) WHERE state IN ('queued', 'running');

CREATE TABLE queue_events (
    seq     BIGSERIAL PRIMARY KEY,
    task_id TEXT NOT NULL REFERENCES queue_tasks (task_id) ON DELETE CASCADE,
    at_ms   BIGINT NOT NULL,
    kind    TEXT NOT NULL,
    data    JSONB NOT NULL
);
CREATE INDEX queue_events_by_task ON queue_events (task_id, seq);
