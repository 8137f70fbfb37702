//! The board: every task at a glance — the queue's (every worker's, every repository's)
//! and those run locally with `task run` (the repositories' own stores under the roots) —
//! as cards in columns, a task's detail (stages, validation, review, risk, delivery, diff),
//! small statistics for the charts, and share links (a read-only capability for one task).
//!
//! Pure mapping lives here; the routes (`routes/board.rs`) read the ports and call it.

pub mod card;
pub mod detail;
pub mod diff;
pub mod local;
pub mod share;
pub mod snapshots;
pub mod stats;
