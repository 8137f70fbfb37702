-- forge's task store, version 7 (PostgreSQL's 006_permission_requests.sql): the agents'
-- permission requests (issue 41), pending until one decision — a person's, a rule's, a
-- timeout's or a cancel's — is written once. `tool` and `decision` are JSON
-- (forge_domain::permission::ToolRequest, PermissionDecision); `decision` NULL: pending.
-- The owner has no foreign key: a run's requests are kept as a task's are.

CREATE TABLE permission_requests (
    request_id    TEXT PRIMARY KEY NOT NULL,
    owner_kind    TEXT NOT NULL,
    owner_id      TEXT NOT NULL,
    provider      TEXT NOT NULL,
    tool          TEXT NOT NULL,
    requested_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    decision      TEXT
);
CREATE INDEX permission_requests_pending ON permission_requests (requested_at_ms)
    WHERE decision IS NULL;
CREATE INDEX permission_requests_owner ON permission_requests (owner_kind, owner_id);
