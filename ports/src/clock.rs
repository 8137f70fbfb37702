//! Time and identifiers, as ports so the runtime is deterministic under test.

use forge_domain::RunId;

pub trait Clock: Send + Sync {
    /// Wall-clock milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;
    /// Monotonic milliseconds since an arbitrary origin, for durations.
    fn monotonic_ms(&self) -> u64;
}

pub trait IdGenerator: Send + Sync {
    /// A new, unique, time-sortable run id.
    fn run_id(&self) -> RunId;
}
