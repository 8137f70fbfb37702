//! Where the autonomous loop keeps its state, events, log and report, and how it learns of
//! an emergency stop.

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::autoloop::{LoopEvent, LoopReport, LoopState};

#[async_trait]
pub trait LoopStore: Send + Sync {
    /// The saved state, `None` when no loop was saved here.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the state file exists but cannot be read or parsed.
    async fn load_state(&self) -> Result<Option<LoopState>, ForgeError>;

    /// Replaces the saved state in one atomic write: a reader (or a resume after a crash)
    /// sees the old state or the new one, never a mix.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the file cannot be written.
    async fn save_state(&self, state: &LoopState) -> Result<(), ForgeError>;

    /// Appends events to the event store, one JSON line each, and a line each to the log.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the files cannot be appended to.
    async fn append_events(&self, events: &[LoopEvent]) -> Result<(), ForgeError>;

    /// Writes `report.json` and `report.md` (each atomically).
    ///
    /// # Errors
    /// [`ForgeError::Io`] when a file cannot be written.
    async fn write_report(&self, report: &LoopReport, markdown: &str) -> Result<(), ForgeError>;
}

/// The emergency stop: set when its file exists. Polled often, so it must be cheap.
pub trait StopSignal: Send + Sync {
    fn requested(&self) -> bool;
}
