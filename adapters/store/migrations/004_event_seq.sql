-- forge's task queue, version 3 (PostgreSQL's 002_event_seq.sql): a task's events are
-- numbered per task (1, 2, 3 …), the resume point of a reader. Appends run in an IMMEDIATE
-- transaction, so the next number is read and written under the file's write lock.

ALTER TABLE queue_events ADD COLUMN task_seq INTEGER;
UPDATE queue_events SET task_seq = (
    SELECT COUNT(*) FROM queue_events older
    WHERE older.task_id = queue_events.task_id AND older.seq <= queue_events.seq);
CREATE UNIQUE INDEX queue_events_task_seq ON queue_events (task_id, task_seq);
