//! The [`forge_ports::TaskQueue`] port over PostgreSQL (tokio-postgres).
//!
//! Workers on any number of machines share one database. Every call is one SQL statement,
//! so it is atomic without a client-side transaction: a claim is one `UPDATE` of the row a
//! `SELECT … FOR UPDATE SKIP LOCKED` picked, so two workers never take the same task and
//! never wait for each other. Leases are measured on the database's clock. A submit or a
//! hand-back sends `NOTIFY forge_queue` in the same statement; idle workers `LISTEN` on a
//! connection of their own, so they wake within milliseconds instead of polling.
//!
//! Connections are made on first use and again after the server went away (restart,
//! network): a call that finds its connection closed fails with [`ForgeError::Io`] and
//! the next call reconnects, so a worker survives a database restart by retrying.
//!
//! [`ForgeError::Io`]: forge_domain::ForgeError::Io

mod approvals;
mod connect;
mod forge_deliveries;
mod listen;
mod migrate;
mod password;
mod permissions;
mod queue;
mod rows;
mod session_archives;
mod shares;
mod tls;

pub use connect::{display_url, is_postgres_url};
pub use migrate::{MIGRATIONS, Migration};
pub use queue::PgQueue;
