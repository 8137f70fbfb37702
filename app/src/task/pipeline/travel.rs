//! The agent session's travel around a task's runs (issue 39). Before a follow-up's main run
//! its parent's session, brought from the queue's store, is imported into this machine's CLI
//! home for the work tree — and registered as a run of the work tree, so the resumed run
//! finds the home it is in, as for a session that ran here. Where that cannot be done the
//! follow-up says why in its report and its new session is given the conversation (the
//! parent's task, then the follow-up's). After the task's runs, its last session is exported
//! for its own follow-ups.

use std::path::{Path, PathBuf};

use forge_domain::session_archive::SessionArchive;
use forge_domain::task::TaskOutcome;
use forge_domain::task::travel::{SessionTravel, conversation_prompt};
use forge_domain::{ForgeError, SessionId};
use forge_ports::{Provider, RunRecord};

use super::super::request::TaskRequest;
use super::TaskPipeline;

/// Imports the parent's session for a follow-up of `req` (see the module docs): the note
/// for the report, `None` when nothing was to be imported. Falls back by rewriting `req`.
pub(super) async fn arrive(
    pipeline: &TaskPipeline,
    req: &mut TaskRequest,
    provider: &dyn Provider,
    worktree: &Path,
) -> Option<SessionTravel> {
    let brought = req.session_travel.import.take()?;
    let session = req.run_template.resume_session_id.clone()?;
    let mut note = SessionTravel {
        resumed_session: Some(session.to_string()),
        ..SessionTravel::default()
    };
    let imported = match brought {
        Ok(archive) => import(pipeline, req, provider, &archive, &session, worktree).await,
        Err(why) => Err(why),
    };
    match imported {
        Ok(()) => note.resumed = true,
        Err(why) => {
            // A new session, given the conversation so far.
            req.run_template.resume_session_id = None;
            let parent = req
                .session_travel
                .parent_task
                .clone()
                .unwrap_or_else(|| "(the earlier task's text is not known here)".to_owned());
            req.spec.task = conversation_prompt(&parent, &req.spec.task);
            note.not_resumed = Some(why);
        }
    }
    Some(note)
}

/// Imports `archive` for `worktree` into the home the resumed run will use.
async fn import(
    pipeline: &TaskPipeline,
    req: &TaskRequest,
    provider: &dyn Provider,
    archive: &SessionArchive,
    session: &SessionId,
    worktree: &Path,
) -> Result<(), String> {
    let Some(travel) = provider.session_travel() else {
        return Err(format!(
            "{} cannot resume a session on another machine",
            provider.id()
        ));
    };
    let home = arrival_home(pipeline, req, provider, session, worktree)
        .await
        .map_err(|e| format!("preparing a home for the session: {e}"))?;
    travel
        .import_session(pipeline.ports.files.as_ref(), archive, worktree, &home)
        .await
        .map_err(|e| format!("importing session {session}: {e}"))
}

/// The CLI home the follow-up's run will use, as the runtime chooses it: the configured
/// home, else (isolated homes) a home of a run registered here for the session, else the
/// user's.
async fn arrival_home(
    pipeline: &TaskPipeline,
    req: &TaskRequest,
    provider: &dyn Provider,
    session: &SessionId,
    worktree: &Path,
) -> Result<PathBuf, ForgeError> {
    let settings = provider.settings();
    if let Some(home) = &settings.home {
        return Ok(home.clone());
    }
    if !settings.isolate_home {
        return user_home(req);
    }
    let rt = pipeline.agent.runtime();
    let mut record = RunRecord {
        run_id: rt.ids.run_id(),
        provider: provider.id(),
        workdir: worktree.to_path_buf(),
        home: None,
        started_at_ms: rt.clock.now_ms(),
        finished_at_ms: None,
        session_id: Some(session.clone()),
        status: None,
        pid: None,
    };
    let mut request = req.run_template.clone();
    request.workdir = worktree.to_path_buf();
    request.prompt = format!("(session {session} imported for a follow-up)");
    // A finished run of the work tree in the session, its home the import's.
    let bundle = rt.artifacts.create_run(&record, &request).await?;
    let home = bundle.dir().join("home");
    record.home = Some(home.clone());
    record.finished_at_ms = Some(rt.clock.now_ms());
    let mut bundle = bundle;
    let mut result =
        forge_domain::ExecutionResult::empty(provider.id(), forge_domain::ExecutionStatus::Success);
    result.metadata.session_id = Some(session.clone());
    bundle.finish(&record, &result).await?;
    Ok(home)
}

fn user_home(req: &TaskRequest) -> Result<PathBuf, ForgeError> {
    req.env
        .get("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| ForgeError::InvalidRequest {
            reason: "HOME is not set: the CLI's own home is not known".to_owned(),
        })
}

/// Exports the task's last agent session to `req`'s `export_to`, noting it in `outcome`.
pub(super) async fn leave(
    pipeline: &TaskPipeline,
    req: &TaskRequest,
    provider: &dyn Provider,
    worktree: &Path,
    outcome: &mut TaskOutcome,
    arrived: Option<SessionTravel>,
) {
    let mut note = arrived;
    if let Some(path) = &req.session_travel.export_to {
        let note = note.get_or_insert_with(SessionTravel::default);
        match export(pipeline, req, provider, worktree, outcome, path).await {
            Ok(()) => note.exported = true,
            Err(e) => note.export_error = Some(e),
        }
    }
    outcome.session_travel = note;
}

async fn export(
    pipeline: &TaskPipeline,
    req: &TaskRequest,
    provider: &dyn Provider,
    worktree: &Path,
    outcome: &TaskOutcome,
    path: &Path,
) -> Result<(), String> {
    let session = outcome
        .cycles
        .iter()
        .rev()
        .find_map(|c| c.session_id.clone())
        .ok_or_else(|| "the task's runs reported no agent session".to_owned())?;
    let travel = provider.session_travel().ok_or_else(|| {
        format!(
            "{} cannot resume a session on another machine",
            provider.id()
        )
    })?;
    let settings = provider.settings();
    let ran_in = pipeline
        .agent
        .runtime()
        .artifacts
        .find_session(worktree, &session)
        .await
        .ok()
        .flatten()
        .and_then(|r| r.home);
    let home = match settings.home.clone().or(ran_in) {
        Some(home) => home,
        None => user_home(req).map_err(|e| e.to_string())?,
    };
    let files = pipeline.ports.files.as_ref();
    let archive = travel
        .export_session(files, &session, worktree, &home)
        .await
        .map_err(|e| format!("exporting session {session}: {e}"))?;
    archive
        .check()
        .map_err(|e| format!("session {session}: {e}"))?;
    let json = serde_json::to_vec(&archive).map_err(|e| e.to_string())?;
    files
        .write(path, &json)
        .await
        .map_err(|e| format!("writing session {session}'s archive: {e}"))
}
