-- forge's task queue, version 9 (PostgreSQL's 008_session_archives.sql): the agent session
-- a queued task ran, stored with the task so a follow-up on any worker resumes it (issue 39).
-- `archive` is the session's files as JSON (the conversation, never credentials), at most
-- 16 MiB; a resumed session keeps its id, so lookups take the last stored of a session
-- (`seq`, counted up on every store).

CREATE TABLE session_archives (
    task_id      TEXT PRIMARY KEY NOT NULL,
    provider     TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    archive      TEXT NOT NULL,
    size         INTEGER NOT NULL,
    stored_at_ms INTEGER NOT NULL,
    seq          INTEGER NOT NULL
);

CREATE INDEX session_archives_by_session
    ON session_archives (provider, session_id, seq);
