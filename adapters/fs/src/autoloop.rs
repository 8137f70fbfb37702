//! The autonomous loop's files under `<workdir>/.forgecode/auto/`: `workflow_state.json`
//! (atomic), `events/events.jsonl` and `logs/workflow.log` (appended), `report.json` and
//! `report.md` (atomic); and the emergency-stop file.

use std::io::Write;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::autoloop::{LoopEvent, LoopReport, LoopState};
use forge_ports::{LoopStore, StopSignal};

use crate::atomic::write_atomic;
use crate::blocking::run_blocking;
use crate::bundle::FORGE_DIR;

/// The loop's directory inside [`FORGE_DIR`].
pub const AUTO_DIR: &str = "auto";
pub const STATE_FILE: &str = "workflow_state.json";
pub const EVENTS_FILE: &str = "events/events.jsonl";
pub const LOG_FILE: &str = "logs/workflow.log";
pub const REPORT_JSON: &str = "report.json";
pub const REPORT_MD: &str = "report.md";

#[derive(Debug, Clone)]
pub struct FsLoopStore {
    dir: PathBuf,
}

impl FsLoopStore {
    /// The store of the loop run in `workdir`.
    pub fn for_workdir(workdir: &Path) -> Self {
        Self {
            dir: workdir.join(FORGE_DIR).join(AUTO_DIR),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

fn io(context: String) -> impl FnOnce(std::io::Error) -> ForgeError {
    move |e| ForgeError::io(context, e)
}

fn append(path: &Path, text: &str) -> Result<(), ForgeError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io(format!("creating {}", parent.display())))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io(format!("opening {}", path.display())))?;
    file.write_all(text.as_bytes())
        .map_err(io(format!("appending to {}", path.display())))
}

fn write_whole(path: &Path, contents: &[u8]) -> Result<(), ForgeError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io(format!("creating {}", parent.display())))?;
    }
    write_atomic(path, contents)
}

fn json<T: serde::Serialize>(value: &T, what: &str) -> Result<Vec<u8>, ForgeError> {
    serde_json::to_vec_pretty(value).map_err(|e| ForgeError::io(format!("serialising {what}"), e))
}

/// One log line: time, iteration, then the event as compact JSON.
fn log_line(event: &LoopEvent) -> String {
    let kind = serde_json::to_string(&event.kind).unwrap_or_default();
    let run = event
        .run_id
        .as_ref()
        .map(|r| format!(" run={}", r.as_str()))
        .unwrap_or_default();
    format!(
        "{} iteration={}{run} {kind}\n",
        event.at_ms, event.iteration
    )
}

#[async_trait]
impl LoopStore for FsLoopStore {
    async fn load_state(&self) -> Result<Option<LoopState>, ForgeError> {
        let path = self.dir.join(STATE_FILE);
        run_blocking("reading the loop state", move || {
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(ForgeError::io(format!("reading {}", path.display()), e)),
            };
            serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| ForgeError::io(format!("parsing {}", path.display()), e))
        })
        .await
    }

    async fn save_state(&self, state: &LoopState) -> Result<(), ForgeError> {
        let path = self.dir.join(STATE_FILE);
        let bytes = json(state, "the loop state")?;
        run_blocking("saving the loop state", move || write_whole(&path, &bytes)).await
    }

    async fn append_events(&self, events: &[LoopEvent]) -> Result<(), ForgeError> {
        if events.is_empty() {
            return Ok(());
        }
        let mut lines = String::new();
        let mut log = String::new();
        for event in events {
            let line = serde_json::to_string(event)
                .map_err(|e| ForgeError::io("serialising a loop event", e))?;
            lines.push_str(&line);
            lines.push('\n');
            log.push_str(&log_line(event));
        }
        let (events_path, log_path) = (self.dir.join(EVENTS_FILE), self.dir.join(LOG_FILE));
        run_blocking("appending loop events", move || {
            append(&events_path, &lines)?;
            append(&log_path, &log)
        })
        .await
    }

    async fn write_report(&self, report: &LoopReport, markdown: &str) -> Result<(), ForgeError> {
        let bytes = json(report, "the loop report")?;
        let md = markdown.as_bytes().to_vec();
        let dir = self.dir.clone();
        run_blocking("writing the loop report", move || {
            write_whole(&dir.join(REPORT_JSON), &bytes)?;
            write_whole(&dir.join(REPORT_MD), &md)
        })
        .await
    }
}

/// The emergency stop as a file: requested while it exists.
#[derive(Debug, Clone)]
pub struct StopFile {
    path: PathBuf,
}

impl StopFile {
    /// `path` relative to `workdir` unless absolute.
    pub fn new(workdir: &Path, path: &str) -> Self {
        Self {
            path: workdir.join(path),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl StopSignal for StopFile {
    fn requested(&self) -> bool {
        // A metadata call: cheap enough to poll several times a second.
        self.path.symlink_metadata().is_ok()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a panic is how a test fails")]
    use super::*;

    #[tokio::test]
    async fn state_round_trip_events_log_and_stop_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = FsLoopStore::for_workdir(dir.path());
        assert_eq!(store.load_state().await.unwrap(), None);
        let raw: forge_domain::autoloop::RawAutoConfig = serde_json::from_value(
            serde_json::json!({"task": {"goal": "g"}, "provider": {"name": "claude"}}),
        )
        .unwrap();
        let config =
            forge_domain::autoloop::AutoConfig::from_raw(raw, "auto.yaml", &["claude"]).unwrap();
        let mut state = LoopState::new(&config, 5);
        let events = state.start_iteration(6);
        store.save_state(&state).await.unwrap();
        store.append_events(&events).await.unwrap();
        store.append_events(&events).await.unwrap();
        assert_eq!(store.load_state().await.unwrap(), Some(state));
        let lines = std::fs::read_to_string(store.dir().join(EVENTS_FILE)).unwrap();
        assert_eq!(lines.lines().count(), 2);
        let log = std::fs::read_to_string(store.dir().join(LOG_FILE)).unwrap();
        assert_eq!(
            log.lines().next(),
            Some(r#"6 iteration=1 {"event":"iteration_started"}"#)
        );
        std::fs::write(store.dir().join(STATE_FILE), "{").unwrap();
        assert!(store.load_state().await.is_err());

        let stop = StopFile::new(dir.path(), "STOP");
        assert!(!stop.requested());
        std::fs::write(dir.path().join("STOP"), "").unwrap();
        assert!(stop.requested());
    }
}
