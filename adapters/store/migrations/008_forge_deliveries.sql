-- forge's task queue, version 8 (PostgreSQL's 007_forge_deliveries.sql): what forge
-- remembers of a forge's events (issue 39). Each webhook delivery id (and each event
-- `forge poll` reads) is recorded once: a redelivery finds its row and does nothing.
-- `forge poll` keeps its cursor per source.

CREATE TABLE forge_deliveries (
    source         TEXT NOT NULL,
    delivery_id    TEXT NOT NULL,
    received_at_ms INTEGER NOT NULL,
    PRIMARY KEY (source, delivery_id)
);

CREATE TABLE forge_cursors (
    source        TEXT PRIMARY KEY NOT NULL,
    cursor        TEXT NOT NULL,
    updated_at_ms INTEGER NOT NULL
);
