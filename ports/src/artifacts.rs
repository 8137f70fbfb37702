//! The replayable artifact bundle of each run: `.forgecode/runs/<run_id>/`.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use forge_domain::{
    AgentEvent, ExecutionRequest, ExecutionResult, ExecutionStatus, ForgeError, ProviderId, RunId,
    SessionId,
};
use serde::{Deserialize, Serialize};

/// `run.json`: facts about a run that are not in the request or result, written at start
/// and rewritten at the end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub run_id: RunId,
    pub provider: ProviderId,
    pub workdir: PathBuf,
    /// The CLI home the run used, so a resume can use it again.
    #[serde(default)]
    pub home: Option<PathBuf>,
    pub started_at_ms: u64,
    #[serde(default)]
    pub finished_at_ms: Option<u64>,
    #[serde(default)]
    pub session_id: Option<SessionId>,
    #[serde(default)]
    pub status: Option<ExecutionStatus>,
    #[serde(default)]
    pub pid: Option<u32>,
}

/// One line of `runs list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub record: RunRecord,
    #[serde(default)]
    pub duration_ms: Option<u64>,
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// Whether `result.json` exists (a run that is still going, or whose forge died, has none).
    pub has_result: bool,
}

#[async_trait]
pub trait ArtifactStore: Send + Sync {
    /// Creates `<workdir>/.forgecode/runs/<run_id>/` and writes `request.json` and `run.json`.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the directory or files cannot be written;
    /// [`ForgeError::InvalidRequest`] when a bundle for this run id already exists.
    async fn create_run(
        &self,
        record: &RunRecord,
        request: &ExecutionRequest,
    ) -> Result<Box<dyn RunArtifacts>, ForgeError>;

    /// Runs under `workdir`, newest first. A bundle that cannot be read is skipped.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the runs directory exists but cannot be listed.
    async fn list_runs(&self, workdir: &Path) -> Result<Vec<RunSummary>, ForgeError>;

    /// `result.json` of a run, `None` when the run has none (yet).
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when there is no such run; [`ForgeError::Io`] when the
    /// file cannot be read or parsed.
    async fn load_result(
        &self,
        workdir: &Path,
        run_id: &RunId,
    ) -> Result<Option<ExecutionResult>, ForgeError>;

    /// `events.jsonl` of a run; lines that cannot be parsed are skipped.
    ///
    /// # Errors
    /// As [`ArtifactStore::load_result`].
    async fn load_events(
        &self,
        workdir: &Path,
        run_id: &RunId,
    ) -> Result<Vec<AgentEvent>, ForgeError>;

    /// The newest run under `workdir` whose session is `session_id`.
    ///
    /// # Errors
    /// As [`ArtifactStore::list_runs`].
    async fn find_session(
        &self,
        workdir: &Path,
        session_id: &SessionId,
    ) -> Result<Option<RunRecord>, ForgeError>;

    /// Moves the bundles of `run_ids` out of `workdir` into `dest` (as `dest/<run_id>`)
    /// before `workdir` goes away (a review's work tree); a run without a bundle there is
    /// skipped. Returns where the moved bundles are now.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when a bundle cannot be moved; [`ForgeError::InvalidRequest`]
    /// for an id that cannot name a directory.
    async fn keep_runs(
        &self,
        workdir: &Path,
        run_ids: &[RunId],
        dest: &Path,
    ) -> Result<Vec<PathBuf>, ForgeError>;
}

/// The bundle of one run, open for writing.
#[async_trait]
pub trait RunArtifacts: Send {
    /// The bundle directory (absolute).
    fn dir(&self) -> &Path;

    /// Where the process runner should copy the child's stdout and stderr.
    fn stdout_log(&self) -> PathBuf;
    fn stderr_log(&self) -> PathBuf;

    /// Appends events to `events.jsonl` and flushes, so a crash of forge loses nothing
    /// already appended.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the file cannot be written.
    async fn append_events(&mut self, events: &[AgentEvent]) -> Result<(), ForgeError>;

    /// Writes `result.json` atomically (temp file + rename) and rewrites `run.json`.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when either cannot be written.
    async fn finish(
        &mut self,
        record: &RunRecord,
        result: &ExecutionResult,
    ) -> Result<(), ForgeError>;
}
