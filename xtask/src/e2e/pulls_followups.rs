//! `pulls` group: feedback into the same agent session. A task opens its pull request;
//! then a reviewer's `@forge` comment (`pulls_comment`) or a failed check run on forge's
//! head commit (`pulls_check`) — each naming `forge-e2e-notes`, which the fake model's
//! `pulls_followup` scenario answers by writing notes.txt — comes back as a follow-up task:
//! it resumes the parent's agent session (the fake model's request for it carries the
//! parent's conversation), commits on the same branch as a fast-forward, and answers where
//! it was asked with the commit and the validation.

use std::path::Path;

use forge_testkit::github::{FakeCheckRun, FakeReviewComment};
use serde_json::Value;

use super::case_run::Suite;
use super::pulls::{Checks, opened, text};
use super::pulls_env::{Hub, OWNER_REPO, READER, SECRET, WRITER};
use super::pulls_hooks::{check_run, review_comment};
use super::queue::git_out;

const PROMPT: &str = "Write the answer to answer.txt.";
/// What the follow-ups ask; the scenario's route answers it.
const MARKER: &str = "forge-e2e-notes";
/// The parent's first answer in the scenario: in the follow-up's request only when the
/// session was resumed.
const PARENT_SAID: &str = "Writing the answer.";
pub(super) const ASK: &str =
    "@forge please also write notes.txt saying what the answer is (forge-e2e-notes).";

pub(super) fn comment(suite: &Suite, root: &Path, provider: &'static str) -> anyhow::Result<()> {
    let hub = Hub::start(
        suite,
        root,
        ("pulls_comment", provider, "pulls_followup"),
        true,
    )?;
    let mut c = Checks::default();
    let (parent, status) = opened(&hub, &mut c, provider, (PROMPT, false))?;
    let head = format!("forge/{parent}");
    // The comments exist on GitHub before their webhooks arrive.
    for (id, author) in [(7001, READER), (7002, WRITER)] {
        hub.github()?
            .state()
            .review_comments
            .push(FakeReviewComment {
                id,
                repo: OWNER_REPO.into(),
                number: 1,
                review_id: Some(id + 1),
                path: "answer.txt".into(),
                line: Some(1),
                body: ASK.into(),
                in_reply_to: None,
                author: author.into(),
            });
    }
    let hook = |delivery: &str, id: u64, who: &str| {
        hub.hook(
            "pull_request_review_comment",
            delivery,
            &review_comment(1, &head, (id, who, "answer.txt", 1), ASK),
            SECRET,
        )
    };
    let (code, answer) = hook("d-comment-reader", 7001, READER)?;
    c.check(
        "a reader's @forge comment: not allowed",
        code == 202 && answer["outcomes"][0]["outcome"] == "not_allowed",
        &(code, &answer),
    );
    c.check(
        "no follow-up for the reader",
        hub.tasks()?.len() == 1,
        &hub.tasks()?,
    );
    let (code, answer) = hook("d-comment-writer", 7002, WRITER)?;
    let Some(child) = queued(&mut c, (code, &answer), &parent) else {
        return c.finish();
    };
    let followup = followed_up(&hub, &mut c, (&parent, &status), &child)?;
    let state = hub.github()?.state();
    let reply = state
        .review_comments
        .iter()
        .find(|r| r.in_reply_to == Some(7002));
    c.check(
        "a reply in the writer's thread naming the commit and the validation",
        reply.is_some_and(|r| {
            r.author == "forge-bot"
                && r.body.contains(&followup)
                && r.body.contains("Validation passed")
        }),
        &(reply, &state.comments),
    );
    c.check(
        "still one pull request",
        state.pulls.len() == 1,
        &state.pulls,
    );
    drop(state);
    c.done(&hub)
}

pub(super) fn check(suite: &Suite, root: &Path, provider: &'static str) -> anyhow::Result<()> {
    let hub = Hub::start(
        suite,
        root,
        ("pulls_check", provider, "pulls_followup"),
        true,
    )?;
    let mut c = Checks::default();
    let (parent, status) = opened(&hub, &mut c, provider, (PROMPT, false))?;
    let sha = hub.branch_head(&parent)?;
    hub.github()?.state().check_runs.push(FakeCheckRun {
        id: 8001,
        repo: OWNER_REPO.into(),
        name: "docs".into(),
        head_sha: sha.clone(),
        conclusion: "failure".into(),
        title: Some("notes.txt is missing".into()),
        summary: Some(format!(
            "The docs check wants notes.txt saying what the answer is ({MARKER})."
        )),
        text: None,
        annotations: vec![(
            "notes.txt".into(),
            1,
            1,
            "failure".into(),
            "notes.txt does not exist".into(),
        )],
    });
    let (code, answer) = hub.hook(
        "check_run",
        "d-check",
        &check_run((8001, "docs", "failure"), &sha, 1),
        SECRET,
    )?;
    let Some(child) = queued(&mut c, (code, &answer), &parent) else {
        return c.finish();
    };
    let followup = followed_up(&hub, &mut c, (&parent, &status), &child)?;
    let state = hub.github()?.state();
    let said = state
        .comments
        .iter()
        .find(|cm| cm.number == 1 && cm.body.contains(&followup));
    c.check(
        "a comment on the pull request naming the commit and the validation",
        said.is_some_and(|cm| cm.body.contains("Validation passed")),
        &state.comments,
    );
    drop(state);
    c.done(&hub)
}

/// The follow-up's id from the webhook's answer (`follow_up_queued` of `parent`); `None`
/// (a failed check) when none was queued.
pub(super) fn queued(
    c: &mut Checks,
    (code, answer): (u16, &Value),
    parent: &str,
) -> Option<String> {
    let outcome = &answer["outcomes"][0];
    let id = text(outcome, "/task_id").to_owned();
    let ok = code == 202 && outcome["outcome"] == "follow_up_queued" && outcome["parent"] == parent;
    c.check("a follow-up queued", ok && !id.is_empty(), &(code, answer));
    (!id.is_empty()).then_some(id)
}

/// Waits for follow-up `child` of `parent` and checks it: validated, committed on the
/// parent's branch as a fast-forward with notes.txt, by the parent's agent session. Its
/// commit.
pub(super) fn followed_up(
    hub: &Hub,
    c: &mut Checks,
    (parent, parent_status): (&str, &Value),
    child: &str,
) -> anyhow::Result<String> {
    let status = hub.finished(child)?;
    let report = &status["report"];
    c.check(
        "the follow-up succeeded, committed and pushed",
        status["state"] == "succeeded"
            && report["status"] == "committed"
            && report["delivery"]["pushed"] == true,
        &status,
    );
    let old = text(parent_status, "/report/delivery/commit").to_owned();
    let new = text(report, "/delivery/commit").to_owned();
    let tip = hub.branch_head(parent)?;
    c.check(
        "a new commit at the head of the parent's branch",
        !new.is_empty() && new != old && tip == new,
        &(&old, &new, &tip),
    );
    let bare = hub.bare();
    let ancestor = git_out(&bare, &["merge-base", "--is-ancestor", &old, &new]);
    c.check(
        "a fast-forward: the old head is an ancestor",
        ancestor.is_ok(),
        &ancestor,
    );
    let notes = git_out(&bare, &["show", &format!("{new}:notes.txt")]);
    c.check(
        "the commit has what was asked",
        notes.as_deref().is_ok_and(|n| n.contains("42")),
        &notes,
    );
    let parent_session = last_session(&parent_status["report"]);
    let resumed = hub.model_requests()?.iter().any(|r| {
        let body = r["body"].to_string();
        r["side_call"].is_null() && body.contains(MARKER) && body.contains(PARENT_SAID)
    });
    c.check(
        "the same session: the follow-up's request carries the parent's conversation",
        resumed,
        &(parent_session, last_session(report)),
    );
    let task = hub.api(&format!("/v1/tasks/{child}"))?;
    c.check(
        "the API links the follow-up to its parent",
        task["parent"] == parent,
        &task.get("parent"),
    );
    Ok(new)
}

/// The agent session of the report's last cycle.
fn last_session(report: &Value) -> Option<String> {
    report["cycles"]
        .as_array()?
        .iter()
        .rev()
        .find_map(|c| c["session_id"].as_str())
        .map(str::to_owned)
}
