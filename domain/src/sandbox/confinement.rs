//! What one run is confined to: carried by the run's `Invocation`, set by the use case that
//! knows the run (its work tree, its CLI home), enforced by the sandbox adapter.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// How the run may treat its work tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkTreeAccess {
    #[default]
    ReadWrite,
    /// A review: the work tree is read, never written.
    ReadOnly,
}

/// One run's confinement. `None` on an invocation means forge's own command (git, a
/// version probe): not the agent, not its code.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Confinement {
    /// The directory the agent works in (absolute).
    pub work_tree: PathBuf,
    pub access: WorkTreeAccess,
    /// Writable besides the work tree: the run's private CLI home and state directories,
    /// a build cache slot of the task. Writable even when the work tree is read-only.
    pub writable: Vec<PathBuf>,
    /// Environment variable names that are the provider's credentials: passed in although
    /// they look like secrets (as placeholders once the egress injects the real value).
    pub credentials: Vec<String>,
}

impl Confinement {
    /// The confinement of a run that writes only in `work_tree` (and private /tmp).
    pub fn work_tree(work_tree: impl Into<PathBuf>) -> Self {
        Self {
            work_tree: work_tree.into(),
            ..Self::default()
        }
    }

    /// Adds a writable directory (a CLI home), keeping the list free of duplicates.
    #[must_use]
    pub fn with_writable(mut self, dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        if !self.writable.contains(&dir) {
            self.writable.push(dir);
        }
        self
    }
}
