-- forge's task queue on PostgreSQL, version 2: a task's events are numbered per task (1, 2,
-- 3 …), so a reader's resume point (the SSE id, `Last-Event-ID`) is the task's own count,
-- whatever other tasks logged meanwhile. The task row keeps the last number: an append
-- increments it with an UPDATE, whose row lock orders concurrent appends to one task.

ALTER TABLE queue_tasks ADD COLUMN event_seq BIGINT NOT NULL DEFAULT 0;
ALTER TABLE queue_events ADD COLUMN task_seq BIGINT;
UPDATE queue_events e SET task_seq = n.task_seq FROM (
    SELECT seq, row_number() OVER (PARTITION BY task_id ORDER BY seq) AS task_seq
    FROM queue_events) n
WHERE e.seq = n.seq;
UPDATE queue_tasks t SET event_seq = c.n FROM (
    SELECT task_id, MAX(task_seq) AS n FROM queue_events GROUP BY task_id) c
WHERE t.task_id = c.task_id;
ALTER TABLE queue_events ALTER COLUMN task_seq SET NOT NULL;
ALTER TABLE queue_events ADD CONSTRAINT queue_events_task_seq UNIQUE (task_id, task_seq);
DROP INDEX queue_events_by_task;
