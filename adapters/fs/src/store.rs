//! [`FsArtifactStore`]: run bundles under `<workdir>/.forgecode/runs/<run_id>/`.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use forge_domain::{
    AgentEvent, ExecutionRequest, ExecutionResult, ForgeError, Redactor, RunId, SessionId,
};
use forge_ports::{ArtifactStore, RunArtifacts, RunRecord, RunSummary};

use crate::atomic::write_atomic;
use crate::blocking::run_blocking;
use crate::bundle::{
    EVENTS, GITIGNORE, GITIGNORE_CONTENTS, REQUEST, RUN, STDERR, STDOUT, forge_dir, run_dir,
    runs_dir,
};
use crate::listing::{read_all, read_events, read_result};
use crate::redact_json::redact_json;
use crate::run_artifacts::{FsRunArtifacts, record_json};

/// The local-disk [`ArtifactStore`]. What it writes (`request.json`, events, `result.json`)
/// goes through its [`Redactor`] first; `stdout.log` / `stderr.log` are written by the
/// process runner, which redacts with its own.
#[derive(Debug, Clone, Default)]
pub struct FsArtifactStore {
    redactor: Arc<Redactor>,
}

impl FsArtifactStore {
    pub fn new(redactor: Redactor) -> Self {
        Self {
            redactor: Arc::new(redactor),
        }
    }

    /// The same store with another redactor (e.g. one that knows this run's secrets).
    #[must_use]
    pub fn with_redactor(mut self, redactor: Redactor) -> Self {
        self.redactor = Arc::new(redactor);
        self
    }
}

#[async_trait]
impl ArtifactStore for FsArtifactStore {
    async fn create_run(
        &self,
        record: &RunRecord,
        request: &ExecutionRequest,
    ) -> Result<Box<dyn RunArtifacts>, ForgeError> {
        let dir = run_dir(&record.workdir, &record.run_id)?;
        let forge = forge_dir(&record.workdir)?;
        let request_text = redact_json(&self.redactor, request, true)?;
        let record_text = record_json(record)?;
        let bundle = dir.clone();
        run_blocking("creating run bundle", move || {
            create_bundle(&forge, &bundle, &request_text, &record_text)
        })
        .await?;
        let events = tokio::fs::OpenOptions::new()
            .append(true)
            .open(dir.join(EVENTS))
            .await
            .map_err(|e| ForgeError::io(format!("opening {}", dir.join(EVENTS).display()), e))?
            .into_std()
            .await;
        Ok(Box::new(FsRunArtifacts::new(
            dir,
            events,
            Arc::clone(&self.redactor),
        )))
    }

    async fn list_runs(&self, workdir: &Path) -> Result<Vec<RunSummary>, ForgeError> {
        let runs = runs_dir(workdir)?;
        run_blocking("listing runs", move || {
            Ok(read_all(&runs)?.iter().map(|run| run.summary()).collect())
        })
        .await
    }

    async fn load_result(
        &self,
        workdir: &Path,
        run_id: &RunId,
    ) -> Result<Option<ExecutionResult>, ForgeError> {
        let dir = existing_run_dir(workdir, run_id)?;
        run_blocking("loading result", move || read_result(&dir)).await
    }

    async fn load_events(
        &self,
        workdir: &Path,
        run_id: &RunId,
    ) -> Result<Vec<AgentEvent>, ForgeError> {
        let dir = existing_run_dir(workdir, run_id)?;
        run_blocking("loading events", move || read_events(&dir)).await
    }

    async fn find_session(
        &self,
        workdir: &Path,
        session_id: &SessionId,
    ) -> Result<Option<RunRecord>, ForgeError> {
        let runs = runs_dir(workdir)?;
        let wanted = session_id.clone();
        run_blocking("finding session", move || {
            Ok(read_all(&runs)?.into_iter().find_map(|run| {
                let from_result = run
                    .result
                    .as_ref()
                    .and_then(|r| r.metadata.session_id.as_ref());
                let matches =
                    run.record.session_id.as_ref() == Some(&wanted) || from_result == Some(&wanted);
                matches.then(|| RunRecord {
                    // run.json may predate the session announcement; say which one matched.
                    session_id: Some(wanted.clone()),
                    ..run.record
                })
            }))
        })
        .await
    }

    async fn keep_runs(
        &self,
        workdir: &Path,
        run_ids: &[RunId],
        dest: &Path,
    ) -> Result<Vec<PathBuf>, ForgeError> {
        let moves = run_ids
            .iter()
            .map(|id| Ok((run_dir(workdir, id)?, dest.join(id.as_str()))))
            .collect::<Result<Vec<_>, ForgeError>>()?;
        let dest = dest.to_path_buf();
        run_blocking("keeping run bundles", move || {
            let mut kept = Vec::new();
            for (from, to) in moves.into_iter().filter(|(from, _)| from.is_dir()) {
                std::fs::create_dir_all(&dest)
                    .map_err(|e| ForgeError::io(format!("creating {}", dest.display()), e))?;
                move_dir(&from, &to)?;
                kept.push(to);
            }
            Ok(kept)
        })
        .await
    }
}

/// Moves `src` to `dest`: a rename, or across file systems a copy then a removal.
fn move_dir(src: &Path, dest: &Path) -> Result<(), ForgeError> {
    let io = |what: &str, path: &Path, e: std::io::Error| {
        ForgeError::io(format!("{what} {}", path.display()), e)
    };
    match std::fs::rename(src, dest) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() != ErrorKind::CrossesDevices => return Err(io("moving", src, e)),
        Err(_) => {}
    }
    copy_dir(src, dest)?;
    std::fs::remove_dir_all(src).map_err(|e| io("removing", src, e))
}

fn copy_dir(src: &Path, dest: &Path) -> Result<(), ForgeError> {
    std::fs::create_dir_all(dest)
        .map_err(|e| ForgeError::io(format!("creating {}", dest.display()), e))?;
    let entries = std::fs::read_dir(src)
        .map_err(|e| ForgeError::io(format!("listing {}", src.display()), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| ForgeError::io(format!("listing {}", src.display()), e))?;
        let from = entry.path();
        let to = dest.join(entry.file_name());
        let kind = entry
            .file_type()
            .map_err(|e| ForgeError::io(format!("reading {}", from.display()), e))?;
        if kind.is_symlink() {
            // A link stays a link (gemini's run home links into the user's ~/.gemini): its
            // target is not the bundle's to copy.
            let target = std::fs::read_link(&from)
                .map_err(|e| ForgeError::io(format!("reading {}", from.display()), e))?;
            std::os::unix::fs::symlink(&target, &to)
                .map_err(|e| ForgeError::io(format!("linking {}", to.display()), e))?;
        } else if kind.is_dir() {
            copy_dir(&from, &to)?;
        } else {
            std::fs::copy(&from, &to)
                .map_err(|e| ForgeError::io(format!("copying {}", from.display()), e))?;
        }
    }
    Ok(())
}

/// Creates the bundle directory and every file but `result.json`, so the bundle is
/// complete (bar the result) even when the child never starts.
fn create_bundle(
    forge: &Path,
    bundle: &Path,
    request_text: &str,
    record_text: &str,
) -> Result<(), ForgeError> {
    ensure_forge_dir(forge)?;
    if let Some(runs) = bundle.parent() {
        std::fs::create_dir_all(runs)
            .map_err(|e| ForgeError::io(format!("creating {}", runs.display()), e))?;
    }
    // `create_dir`, not `create_dir_all`: it fails when the bundle exists, which is how two
    // runs with one id are caught.
    match std::fs::create_dir(bundle) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {
            return Err(ForgeError::InvalidRequest {
                reason: format!("a run bundle already exists at {}", bundle.display()),
            });
        }
        Err(e) => return Err(ForgeError::io(format!("creating {}", bundle.display()), e)),
    }
    write_atomic(&bundle.join(REQUEST), request_text.as_bytes())?;
    write_atomic(&bundle.join(RUN), record_text.as_bytes())?;
    for name in [EVENTS, STDOUT, STDERR] {
        let path: PathBuf = bundle.join(name);
        std::fs::File::create(&path)
            .map_err(|e| ForgeError::io(format!("creating {}", path.display()), e))?;
    }
    Ok(())
}

/// Creates `.forgecode/` with a `.gitignore` of `*`, so runs never show in `git status`.
/// An existing `.gitignore` is left alone: the user may have edited it.
fn ensure_forge_dir(forge: &Path) -> Result<(), ForgeError> {
    std::fs::create_dir_all(forge)
        .map_err(|e| ForgeError::io(format!("creating {}", forge.display()), e))?;
    let ignore = forge.join(GITIGNORE);
    if !ignore.exists() {
        write_atomic(&ignore, GITIGNORE_CONTENTS.as_bytes())?;
    }
    Ok(())
}

/// The bundle directory of `run_id`, which must exist.
fn existing_run_dir(workdir: &Path, run_id: &RunId) -> Result<PathBuf, ForgeError> {
    let dir = run_dir(workdir, run_id)?;
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(ForgeError::InvalidRequest {
            reason: format!("no run {run_id} under {}", workdir.display()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copied_bundle_keeps_links_as_links() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(outside.join("deep")).unwrap();
        std::fs::write(outside.join("secret"), "s").unwrap();
        let src = dir.path().join("bundle");
        std::fs::create_dir_all(src.join("home")).unwrap();
        std::fs::write(src.join("home/settings.json"), "{}").unwrap();
        std::os::unix::fs::symlink(&outside, src.join("home/tmp")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret"), src.join("home/creds")).unwrap();
        let dest = dir.path().join("kept");
        copy_dir(&src, &dest).unwrap();
        assert_eq!(
            std::fs::read_to_string(dest.join("home/settings.json")).unwrap(),
            "{}"
        );
        for (link, target) in [("tmp", outside.clone()), ("creds", outside.join("secret"))] {
            assert_eq!(
                std::fs::read_link(dest.join("home").join(link)).unwrap(),
                target
            );
        }
    }
}
