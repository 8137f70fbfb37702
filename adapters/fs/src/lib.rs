//! Sandboxed workspace file access and the artifact bundle under `.forgecode/runs/<id>/`.
//!
//! - [`FsWorkspace`] implements [`forge_ports::Workspace`]: the lexical path rule from
//!   `forge_domain::path_policy`, then the disk's view of symlinks, so neither `..` nor a
//!   link planted inside the workspace can reach a file outside it.
//! - [`FsArtifactStore`] implements [`forge_ports::ArtifactStore`]: one directory per run
//!   with `request.json`, `run.json`, `events.jsonl`, `stdout.log`, `stderr.log` and
//!   `result.json`, redacted before anything reaches the disk.
//!
//! - [`FsFiles`] implements [`forge_ports::FileStore`] (the task pipeline's own files) and
//!   [`FsRepoIndex`] implements [`forge_ports::RepoIndexer`] (a `.gitignore`-aware walk).
//!
//! Every whole-file write is atomic (a temp file in the same directory, then rename), so a
//! reader never sees half a JSON document, whatever happens to the writer.

mod atomic;
mod autoloop;
mod blocking;
mod bundle;
mod confine;
mod files;
mod index;
mod listing;
mod redact_json;
mod run_artifacts;
mod store;
mod workspace;

pub use autoloop::{AUTO_DIR, FsLoopStore, STATE_FILE, StopFile};
pub use bundle::{BUNDLE_FILES, FORGE_DIR, RUNS_DIR};
pub use files::FsFiles;
pub use index::FsRepoIndex;
pub use redact_json::redact_json;
pub use run_artifacts::FsRunArtifacts;
pub use store::FsArtifactStore;
pub use workspace::FsWorkspace;
