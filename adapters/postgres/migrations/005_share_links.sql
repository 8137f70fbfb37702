-- forge's task queue, version 5 (SQLite's 006_share_links.sql): share links, a read-only
-- capability for one task each (`serve`'s board). The secret is kept as its SHA-256 digest
-- only. `task_id` has no foreign key: a task run locally (`task run`, in a repository's own
-- store) may be shared too.

CREATE TABLE share_links (
    share_id      TEXT PRIMARY KEY NOT NULL,
    task_id       TEXT NOT NULL,
    secret_digest TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    revoked_at_ms BIGINT
);
CREATE INDEX share_links_task ON share_links (task_id);
