//! The agent session travelling with a queued task (issue 39), the worker's half: before
//! `task run`, a follow-up's parent session is read from the queue's store and handed over
//! as a file (`--import-session`), or why it cannot be (`--session-unavailable`), with the
//! parent's task for a new session (`--parent-task-file`); every task is asked to export its
//! session (`--export-session`), which the worker stores with the task afterwards, where any
//! worker's follow-up finds it.

use std::path::{Path, PathBuf};

use forge_app::queue::{TaskEvent, TaskOptions};
use forge_domain::queue::QueuedTask;
use forge_domain::session_archive::SessionArchive;
use forge_ports::{SessionArchives, TaskQueue};

/// Where `task run` writes the task's session archive, in the task's directory.
pub fn export_path(cwd: &Path) -> PathBuf {
    cwd.join("session-out.json")
}

/// The `task run` arguments of the session's travel for `options` (see the module docs);
/// files go in `cwd`.
pub async fn args(
    options: &TaskOptions,
    queue: &dyn TaskQueue,
    sessions: &dyn SessionArchives,
    cwd: &Path,
) -> Vec<String> {
    let out = export_path(cwd);
    // A file an earlier attempt left is not this attempt's session.
    let _ = std::fs::remove_file(&out);
    let mut args = vec!["--export-session".to_owned(), out.display().to_string()];
    let Some(of) = &options.followup else {
        return args;
    };
    let Some(session) = &of.session else {
        return args;
    };
    if let Ok(Some(parent)) = queue.task(&of.parent).await {
        let path = cwd.join("parent-task.md");
        if std::fs::write(&path, &parent.prompt).is_ok() {
            args.extend(["--parent-task-file".to_owned(), path.display().to_string()]);
        }
    }
    match archive_file(of.provider.as_deref(), session, sessions, cwd).await {
        Ok(path) => args.extend(["--import-session".to_owned(), path.display().to_string()]),
        Err(why) => args.extend(["--session-unavailable".to_owned(), why]),
    }
    args
}

/// The parent session's archive written to a file in `cwd`, or why there is none.
async fn archive_file(
    provider: Option<&str>,
    session: &str,
    sessions: &dyn SessionArchives,
    cwd: &Path,
) -> Result<PathBuf, String> {
    let provider = provider.ok_or_else(|| format!("session {session}'s provider is not known"))?;
    let archive = sessions
        .session_archive(provider, session)
        .await
        .map_err(|e| format!("reading session {session}'s archive from the queue: {e}"))?
        .ok_or_else(|| {
            format!(
                "the queue holds no archive of {provider} session {session} (its task ran \
                 where sessions were not kept, or the session could not be exported)"
            )
        })?;
    let path = cwd.join("session-in.json");
    let json = serde_json::to_vec(&archive).map_err(|e| e.to_string())?;
    std::fs::write(&path, json).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(path)
}

/// Stores the session `task run` exported in `cwd` with `task`; the event that says so.
pub async fn store(
    task: &QueuedTask,
    sessions: &dyn SessionArchives,
    cwd: &Path,
) -> Option<TaskEvent> {
    let bytes = std::fs::read(export_path(cwd)).ok()?;
    let stored = match serde_json::from_slice::<SessionArchive>(&bytes) {
        Ok(archive) => sessions
            .put_session_archive(&task.task_id, &archive)
            .await
            .map(|()| archive)
            .map_err(|e| e.to_string()),
        Err(e) => Err(format!("the exported session cannot be read: {e}")),
    };
    let data = match stored {
        Ok(a) => serde_json::json!({"stored": true, "provider": a.provider,
                                    "session_id": a.session_id, "bytes": a.size()}),
        Err(error) => {
            tracing::warn!(task = %task.task_id, %error, "storing the task's session");
            serde_json::json!({"stored": false, "error": error})
        }
    };
    Some(TaskEvent {
        kind: "session_archive".to_owned(),
        data,
    })
}
