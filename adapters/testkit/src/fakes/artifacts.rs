//! An artifact store in memory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use forge_domain::{AgentEvent, ExecutionRequest, ExecutionResult, ForgeError, RunId, SessionId};
use forge_ports::{ArtifactStore, RunArtifacts, RunRecord, RunSummary};

/// One run's bundle as the fake keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRun {
    pub record: RunRecord,
    pub request: ExecutionRequest,
    pub events: Vec<AgentEvent>,
    pub result: Option<ExecutionResult>,
}

#[derive(Debug, Default, Clone)]
pub struct MemoryArtifactStore {
    runs: Arc<Mutex<BTreeMap<RunId, StoredRun>>>,
}

impl MemoryArtifactStore {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn run(&self, id: &RunId) -> Option<StoredRun> {
        self.runs.lock().ok().and_then(|r| r.get(id).cloned())
    }

    pub fn runs(&self) -> Vec<StoredRun> {
        self.runs
            .lock()
            .map(|r| r.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Pre-loads a finished run (e.g. to test resume).
    pub fn insert(&self, run: StoredRun) {
        if let Ok(mut runs) = self.runs.lock() {
            runs.insert(run.record.run_id.clone(), run);
        }
    }

    fn with_run<T>(
        &self,
        id: &RunId,
        f: impl FnOnce(&mut StoredRun) -> T,
    ) -> Result<T, ForgeError> {
        let mut runs = self
            .runs
            .lock()
            .map_err(|e| ForgeError::io("memory store", e))?;
        let run = runs.get_mut(id).ok_or_else(|| ForgeError::InvalidRequest {
            reason: format!("no run {id}"),
        })?;
        Ok(f(run))
    }
}

fn run_dir(workdir: &Path, id: &RunId) -> PathBuf {
    workdir.join(".forgecode").join("runs").join(id.as_str())
}

struct MemoryRun {
    store: MemoryArtifactStore,
    id: RunId,
    dir: PathBuf,
}

#[async_trait]
impl ArtifactStore for MemoryArtifactStore {
    async fn create_run(
        &self,
        record: &RunRecord,
        request: &ExecutionRequest,
    ) -> Result<Box<dyn RunArtifacts>, ForgeError> {
        let mut runs = self
            .runs
            .lock()
            .map_err(|e| ForgeError::io("memory store", e))?;
        if runs.contains_key(&record.run_id) {
            return Err(ForgeError::InvalidRequest {
                reason: format!("run {} exists", record.run_id),
            });
        }
        runs.insert(
            record.run_id.clone(),
            StoredRun {
                record: record.clone(),
                request: request.clone(),
                events: Vec::new(),
                result: None,
            },
        );
        Ok(Box::new(MemoryRun {
            store: self.clone(),
            id: record.run_id.clone(),
            dir: run_dir(&record.workdir, &record.run_id),
        }))
    }

    async fn list_runs(&self, workdir: &Path) -> Result<Vec<RunSummary>, ForgeError> {
        let runs = self
            .runs
            .lock()
            .map_err(|e| ForgeError::io("memory store", e))?;
        let mut out: Vec<RunSummary> = runs
            .values()
            .filter(|r| r.record.workdir == workdir)
            .map(|r| RunSummary {
                record: r.record.clone(),
                duration_ms: r.result.as_ref().and_then(|x| x.metadata.duration_ms),
                cost_usd: r.result.as_ref().and_then(|x| x.metadata.cost_usd),
                has_result: r.result.is_some(),
            })
            .collect();
        out.sort_by(|a, b| {
            (b.record.started_at_ms, &b.record.run_id)
                .cmp(&(a.record.started_at_ms, &a.record.run_id))
        });
        Ok(out)
    }

    async fn load_result(
        &self,
        _workdir: &Path,
        run_id: &RunId,
    ) -> Result<Option<ExecutionResult>, ForgeError> {
        self.with_run(run_id, |r| r.result.clone())
    }

    async fn load_events(
        &self,
        _workdir: &Path,
        run_id: &RunId,
    ) -> Result<Vec<AgentEvent>, ForgeError> {
        self.with_run(run_id, |r| r.events.clone())
    }

    async fn find_session(
        &self,
        workdir: &Path,
        session_id: &SessionId,
    ) -> Result<Option<RunRecord>, ForgeError> {
        Ok(self
            .list_runs(workdir)
            .await?
            .into_iter()
            .map(|s| s.record)
            .find(|r| r.session_id.as_ref() == Some(session_id)))
    }

    /// The runs stay where they are in memory; their new places are reported.
    async fn keep_runs(
        &self,
        _workdir: &Path,
        run_ids: &[RunId],
        dest: &Path,
    ) -> Result<Vec<PathBuf>, ForgeError> {
        let runs = self
            .runs
            .lock()
            .map_err(|e| ForgeError::io("memory store", e))?;
        Ok(run_ids
            .iter()
            .filter(|id| runs.contains_key(*id))
            .map(|id| dest.join(id.as_str()))
            .collect())
    }
}

#[async_trait]
impl RunArtifacts for MemoryRun {
    fn dir(&self) -> &Path {
        &self.dir
    }

    fn stdout_log(&self) -> PathBuf {
        self.dir.join("stdout.log")
    }

    fn stderr_log(&self) -> PathBuf {
        self.dir.join("stderr.log")
    }

    async fn append_events(&mut self, events: &[AgentEvent]) -> Result<(), ForgeError> {
        self.store
            .with_run(&self.id, |r| r.events.extend_from_slice(events))
    }

    async fn finish(
        &mut self,
        record: &RunRecord,
        result: &ExecutionResult,
    ) -> Result<(), ForgeError> {
        self.store.with_run(&self.id, |r| {
            r.record = record.clone();
            r.result = Some(result.clone());
        })
    }
}
