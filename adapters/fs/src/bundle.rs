//! Where things live in a run's artifact bundle.

use std::path::{Path, PathBuf};

use forge_domain::{ForgeError, RunId};

/// forge's directory inside a workdir.
pub const FORGE_DIR: &str = ".forgecode";
/// The directory of run bundles inside [`FORGE_DIR`].
pub const RUNS_DIR: &str = "runs";

pub(crate) const REQUEST: &str = "request.json";
pub(crate) const RUN: &str = "run.json";
pub(crate) const EVENTS: &str = "events.jsonl";
pub(crate) const STDOUT: &str = "stdout.log";
pub(crate) const STDERR: &str = "stderr.log";
pub(crate) const RESULT: &str = "result.json";

/// Every file of a complete bundle, in the order they are created.
pub const BUNDLE_FILES: [&str; 6] = [REQUEST, RUN, EVENTS, STDOUT, STDERR, RESULT];

/// Written into `.forgecode/` so runs never show up in the user's `git status`.
pub(crate) const GITIGNORE: &str = ".gitignore";
pub(crate) const GITIGNORE_CONTENTS: &str = "*\n";

/// `<workdir>/.forgecode`, absolute.
pub(crate) fn forge_dir(workdir: &Path) -> Result<PathBuf, ForgeError> {
    let workdir = std::path::absolute(workdir)
        .map_err(|e| ForgeError::io(format!("resolving {}", workdir.display()), e))?;
    Ok(workdir.join(FORGE_DIR))
}

/// `<workdir>/.forgecode/runs`, absolute.
pub(crate) fn runs_dir(workdir: &Path) -> Result<PathBuf, ForgeError> {
    Ok(forge_dir(workdir)?.join(RUNS_DIR))
}

/// `<workdir>/.forgecode/runs/<run_id>`, refusing ids that would name another directory.
///
/// # Errors
/// [`ForgeError::InvalidRequest`] for `.` and `..`; [`ForgeError::Io`] when the workdir
/// cannot be made absolute.
pub(crate) fn run_dir(workdir: &Path, run_id: &RunId) -> Result<PathBuf, ForgeError> {
    if !run_id.is_path_safe() {
        return Err(ForgeError::InvalidRequest {
            reason: format!("run id {run_id:?} cannot name a bundle directory"),
        });
    }
    Ok(runs_dir(workdir)?.join(run_id.as_str()))
}
