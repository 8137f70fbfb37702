//! The autonomous loop's store and stop signal, in memory.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::autoloop::{LoopEvent, LoopReport, LoopState};
use forge_ports::{LoopStore, StopSignal};

/// Keeps the last saved state, every appended event and the report; counts saves.
#[derive(Debug, Default, Clone)]
pub struct MemoryLoopStore {
    inner: Arc<Mutex<Saved>>,
}

#[derive(Debug, Default)]
struct Saved {
    state: Option<LoopState>,
    saves: usize,
    events: Vec<LoopEvent>,
    report: Option<(LoopReport, String)>,
}

impl MemoryLoopStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// A store that already holds `state` (a loop saved by an earlier, crashed, process).
    pub fn with_state(state: LoopState) -> Self {
        let store = Self::default();
        if let Ok(mut s) = store.inner.lock() {
            s.state = Some(state);
        }
        store
    }

    pub fn state(&self) -> Option<LoopState> {
        self.inner.lock().ok().and_then(|s| s.state.clone())
    }

    pub fn saves(&self) -> usize {
        self.inner.lock().map(|s| s.saves).unwrap_or_default()
    }

    pub fn events(&self) -> Vec<LoopEvent> {
        self.inner
            .lock()
            .map(|s| s.events.clone())
            .unwrap_or_default()
    }

    pub fn report(&self) -> Option<(LoopReport, String)> {
        self.inner.lock().ok().and_then(|s| s.report.clone())
    }

    fn with<T>(&self, f: impl FnOnce(&mut Saved) -> T) -> Result<T, ForgeError> {
        let mut saved = self
            .inner
            .lock()
            .map_err(|e| ForgeError::io("memory loop store", e))?;
        Ok(f(&mut saved))
    }
}

#[async_trait]
impl LoopStore for MemoryLoopStore {
    async fn load_state(&self) -> Result<Option<LoopState>, ForgeError> {
        self.with(|s| s.state.clone())
    }

    async fn save_state(&self, state: &LoopState) -> Result<(), ForgeError> {
        self.with(|s| {
            s.state = Some(state.clone());
            s.saves += 1;
        })
    }

    async fn append_events(&self, events: &[LoopEvent]) -> Result<(), ForgeError> {
        self.with(|s| s.events.extend_from_slice(events))
    }

    async fn write_report(&self, report: &LoopReport, markdown: &str) -> Result<(), ForgeError> {
        self.with(|s| s.report = Some((report.clone(), markdown.to_owned())))
    }
}

/// An emergency stop a test sets and clears.
#[derive(Debug, Default, Clone)]
pub struct FlagStop(Arc<AtomicBool>);

impl FlagStop {
    pub fn set(&self, on: bool) {
        self.0.store(on, Ordering::SeqCst);
    }
}

impl StopSignal for FlagStop {
    fn requested(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}
