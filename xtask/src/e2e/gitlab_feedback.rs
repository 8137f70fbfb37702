//! `gitlab` group, case `gitlab_feedback`: a merge request's discussion comes back into the
//! same agent session. As `pulls_comment` on GitHub, through `serve --queue` and one worker
//! on a fresh PostgreSQL queue (`pulls_env` on [`Site::Gitlab`]): a task opens its merge
//! request; a reporter's (20) DiffNote mentioning `@forge` changes nothing; a developer's
//! (30) is a follow-up that resumes the parent's session, pushes a fast-forward commit onto
//! `forge/<id>` and answers in the discussion with the commit and the validation. Every
//! request forge made is a documented route with `PRIVATE-TOKEN`.

use std::path::Path;

use serde_json::{Value, json};

use super::case_run::Suite;
use super::pulls::{Checks, text};
use super::pulls_env::{
    GITLAB_HOST, GITLAB_PROJECT, GITLAB_TOKEN, Hub, READER, SECRET, Site, WRITER,
};
use super::pulls_followups::{ASK, followed_up, queued};

pub(super) const CASE: &str = "gitlab_feedback";
const PROMPT: &str = "Write the answer to answer.txt.";

/// A Note Hook for `login`'s DiffNote `note` in discussion `discussion` on `answer.txt:1`
/// of merge request 1, shaped as GitLab's documentation shows it.
fn note_hook(head: &str, (discussion, note): (&str, u64), login: &str) -> Value {
    let web = format!("https://{GITLAB_HOST}/{GITLAB_PROJECT}");
    json!({
        "object_kind": "note",
        "event_type": "note",
        "user": {"id": login.len() + 100, "name": login, "username": login,
                 "avatar_url": null, "email": "[REDACTED]"},
        "project_id": 1,
        "project": {"id": 1, "name": "app", "web_url": web,
                    "path_with_namespace": GITLAB_PROJECT, "default_branch": "main",
                    "git_http_url": format!("{web}.git")},
        "object_attributes": {
            "id": note, "note": ASK, "noteable_type": "MergeRequest", "type": "DiffNote",
            "discussion_id": discussion, "system": false,
            "position": {"base_sha": "0".repeat(40), "head_sha": "1".repeat(40),
                         "start_sha": "0".repeat(40), "position_type": "text",
                         "old_path": "answer.txt", "new_path": "answer.txt",
                         "old_line": null, "new_line": 1},
            "url": format!("{web}/-/merge_requests/1#note_{note}"),
        },
        "merge_request": {"id": 101, "iid": 1, "title": "feat: Write the answer to answer.txt.",
                          "source_branch": head, "target_branch": "main", "state": "opened"},
    })
}

pub(super) fn run_case(suite: &Suite, root: &Path, provider: &'static str) -> anyhow::Result<()> {
    let hub = Hub::start_on(
        Site::Gitlab,
        suite,
        root,
        (CASE, provider, "pulls_followup"),
        true,
    )?;
    let mut c = Checks::default();
    let parent = hub.submit(provider, PROMPT)?;
    let status = hub.finished(&parent)?;
    c.check(
        "succeeded, committed",
        status["state"] == "succeeded" && status["report"]["status"] == "committed",
        &status,
    );
    c.check(
        "its merge request",
        text(&status, "/report/pull_request/url")
            == format!("https://{GITLAB_HOST}/{GITLAB_PROJECT}/-/merge_requests/1"),
        &status["report"].get("pull_request"),
    );
    let head = format!("forge/{parent}");
    let gl = hub.gitlab()?;
    let reader = gl
        .state()
        .add_discussion(GITLAB_PROJECT, 1, READER, ASK, Some(("answer.txt", 1)));
    let (code, answer) = hub.gitlab_hook(
        "Note Hook",
        "uuid-reader",
        &note_hook(&head, (&reader.0, reader.1), READER),
        SECRET,
    )?;
    c.check(
        "a reporter's note: not allowed",
        code == 202 && answer["outcomes"][0]["outcome"] == "not_allowed",
        &(code, &answer),
    );
    c.check(
        "no follow-up for the reporter",
        hub.tasks()?.len() == 1,
        &hub.tasks()?,
    );
    let writer = gl
        .state()
        .add_discussion(GITLAB_PROJECT, 1, WRITER, ASK, Some(("answer.txt", 1)));
    let (code, answer) = hub.gitlab_hook(
        "Note Hook",
        "uuid-writer",
        &note_hook(&head, (&writer.0, writer.1), WRITER),
        SECRET,
    )?;
    let Some(child) = queued(&mut c, (code, &answer), &parent) else {
        return c.finish();
    };
    let commit = followed_up(&hub, &mut c, (&parent, &status), &child)?;
    let state = gl.state();
    let thread = state.discussions.iter().find(|d| d.id == writer.0);
    c.check(
        "a reply in the developer's discussion naming the commit and the validation",
        thread.is_some_and(|d| {
            d.notes.iter().any(|n| {
                n.author == "forge-bot"
                    && n.body.contains(&commit)
                    && n.body.contains("Validation passed")
            })
        }),
        &thread,
    );
    c.check(
        "one merge request",
        state.merge_requests.len() == 1,
        &state.merge_requests.len(),
    );
    c.check(
        "every request a documented route",
        state.violations.is_empty(),
        &state.violations,
    );
    c.check(
        "every request with PRIVATE-TOKEN",
        !state.auth.is_empty() && state.auth.iter().all(|a| *a == "private-token"),
        &state.auth,
    );
    let leaked = state
        .discussions
        .iter()
        .flat_map(|d| &d.notes)
        .any(|n| n.body.contains(GITLAB_TOKEN))
        || state
            .merge_requests
            .iter()
            .any(|m| m.description.contains(GITLAB_TOKEN));
    c.check("the token in nothing forge wrote", !leaked, &"leaked");
    drop(state);
    c.finish()
}
