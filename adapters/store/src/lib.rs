//! The [`forge_ports::TaskStore`] port over an embedded SQLite database.
//!
//! A real database file, no server: `<repo>/.forgecode/forge.db` by default. Opening applies
//! the migrations in `migrations/` that the file has not seen yet (recorded in
//! `schema_version`), switches on WAL so readers never wait for a writer, and sets a busy
//! timeout so two forge processes take turns instead of failing. Every write that belongs
//! together is one transaction. Errors name the database file.

mod error;
mod forge_deliveries;
mod location;
mod migrate;
mod open;
mod permissions;
mod queue;
mod queue_approvals;
mod rows;
mod session_archives;
mod shares;
mod store;

pub use location::{DEFAULT_FILE, resolve_location};
pub use migrate::{MIGRATIONS, Migration};
pub use queue::POLL_MS;
pub use store::SqliteStore;
