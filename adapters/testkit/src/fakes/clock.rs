//! A clock that advances one millisecond per reading, and sequential run ids.

use std::sync::atomic::{AtomicU64, Ordering};

use forge_domain::RunId;
use forge_ports::{Clock, IdGenerator};

/// Starts at `start_ms`; every reading advances it by 1 ms, so durations are small and
/// deterministic.
#[derive(Debug)]
pub struct FixedClock {
    now: AtomicU64,
}

impl FixedClock {
    pub fn new(start_ms: u64) -> Self {
        Self {
            now: AtomicU64::new(start_ms),
        }
    }
}

impl Default for FixedClock {
    fn default() -> Self {
        Self::new(1_700_000_000_000)
    }
}

impl Clock for FixedClock {
    fn now_ms(&self) -> u64 {
        self.now.fetch_add(1, Ordering::SeqCst)
    }

    fn monotonic_ms(&self) -> u64 {
        self.now.fetch_add(1, Ordering::SeqCst)
    }
}

/// `run-0001`, `run-0002`, …
#[derive(Debug, Default)]
pub struct SequentialIds {
    next: AtomicU64,
}

impl IdGenerator for SequentialIds {
    fn run_id(&self) -> RunId {
        let n = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        match RunId::new(format!("run-{n:04}")) {
            Ok(id) => id,
            Err(_) => unreachable_run_id(),
        }
    }
}

#[expect(clippy::unreachable, reason = "run-NNNN is always a valid run id")]
fn unreachable_run_id() -> RunId {
    unreachable!("run-NNNN is a valid run id")
}
