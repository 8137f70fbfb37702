//! `cargo xtask e2e` pulls group (issue 39): pull requests as the delivery, end to end, as a
//! team would run it — `serve --queue` taking GitHub's webhooks and one worker, on a fresh
//! PostgreSQL queue, the real claude, codex and gemini against the fake model, the GitHub
//! contract fake (every request held to `@octokit/openapi`) as the forge, and the
//! repository `https://github.com/octo-e2e/app.git` reached as a local bare one
//! (`pulls_env`).
//!
//! | case | what happens | shows |
//! |---|---|---|
//! | `pulls_open` | `task submit --pull-request` | one pull request, head `forge/<id>`, base `main`, its body the report; the API's `pull_request` |
//! | `pulls_draft` | a held change; a reader's, then a writer's approving review | a draft saying why; the reader changes nothing; the writer's marks it ready (GraphQL `markPullRequestReadyForReview`) and the approval is carried out |
//! | `pulls_comment` | a reader's, then a writer's `@forge` review comment | the reader's queues nothing; the writer's a follow-up resuming the same agent session, a fast-forward commit on the branch, a reply in the thread naming it and the validation |
//! | `pulls_check` | a failed check run on forge's head commit | a follow-up commit on the branch, a comment naming it |
//! | `pulls_issue` | an issue labelled `forge` by a writer | a comment on the issue naming the task; the task's pull request says `Closes #N` |
//! | `pulls_refused` (first provider) | a forged signature, one delivery twice, a reader's label and `@forge` comment | 401; acted on once; nothing queued for the reader; no more calls to GitHub than the one answer |
//!
//! Every case ends with no contract violation and the token in no pull request or comment.

use std::path::Path;

use serde_json::Value;

use super::case_run::Suite;
use super::pulls_env::{Hub, READER, REPO_URL, SECRET, TOKEN, WRITER};
use super::pulls_hooks::{issue_comment, labelled, review};
use super::queue::per_provider;
use super::summary::Verdict;
use super::{Ctx, pulls_followups};

const PROMPT: &str = "Write the answer to answer.txt.";
const HELD_PROMPT: &str = "Write the answer to answer.txt and configure the uploader.";
/// The repository's pull requests' URLs.
const PULLS: &str = "https://github.com/octo-e2e/app/pull";

type RunCase = fn(&Suite, &Path, &'static str) -> anyhow::Result<()>;

const CASES: [(&str, RunCase); 5] = [
    ("pulls_open", open),
    ("pulls_draft", draft),
    ("pulls_comment", pulls_followups::comment),
    ("pulls_check", pulls_followups::check),
    ("pulls_issue", issue),
];
/// Runs no agent: once, with the first provider selected.
const REFUSED: &str = "pulls_refused";

pub fn names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = CASES.iter().map(|(n, _)| *n).collect();
    names.push(REFUSED);
    names
}

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    let mut verdicts = Vec::new();
    for (case, run) in CASES {
        verdicts.extend(per_provider(ctx, "pulls", case, run));
    }
    if let Some(first) = ctx.providers.first() {
        let one = Ctx {
            suite: ctx.suite.clone(),
            root: ctx.root.clone(),
            providers: vec![first],
            scenarios: ctx.scenarios.clone(),
            jobs: ctx.jobs,
            record: ctx.record,
        };
        verdicts.extend(per_provider(&one, "pulls", REFUSED, refused));
    }
    Ok(verdicts)
}

/// What a case found wrong; it fails with all of them.
#[derive(Default)]
pub(super) struct Checks(Vec<String>);

impl Checks {
    pub(super) fn check(&mut self, what: &str, ok: bool, detail: &dyn std::fmt::Debug) {
        if !ok {
            self.0.push(format!("{what}: {detail:?}"));
        }
    }

    /// The case's end: the fake GitHub saw no request outside the contract, and the token
    /// is in nothing forge wrote there.
    pub(super) fn done(mut self, hub: &Hub) -> anyhow::Result<()> {
        let state = hub.github()?.state();
        self.check(
            "every request an operation of GitHub's description",
            state.violations.is_empty(),
            &state.violations,
        );
        let written: Vec<&str> = state
            .pulls
            .iter()
            .map(|p| p.body.as_str())
            .chain(state.comments.iter().map(|c| c.body.as_str()))
            .chain(state.review_comments.iter().map(|c| c.body.as_str()))
            .collect();
        self.check(
            "the token in nothing forge wrote",
            written.iter().all(|w| !w.contains(TOKEN)),
            &"leaked",
        );
        drop(state);
        self.finish()
    }

    /// Fails with every check that failed.
    pub(super) fn finish(self) -> anyhow::Result<()> {
        anyhow::ensure!(self.0.is_empty(), "{}", self.0.join("\n"));
        Ok(())
    }
}

pub(super) fn text<'v>(v: &'v Value, pointer: &str) -> &'v str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// Submits `prompt` with `--pull-request`, waits for it and checks its pull request is
/// open on the fake as the report says: the task's id and final status.
pub(super) fn opened(
    hub: &Hub,
    c: &mut Checks,
    provider: &str,
    (prompt, held): (&str, bool),
) -> anyhow::Result<(String, Value)> {
    let id = hub.submit(provider, prompt)?;
    let status = hub.finished(&id)?;
    c.check("succeeded", status["state"] == "succeeded", &status);
    c.check(
        "exit code",
        status["exit_code"] == if held { 10 } else { 0 },
        &status["exit_code"],
    );
    let report = &status["report"];
    c.check(
        "the report's pull request",
        text(report, "/pull_request/url") == format!("{PULLS}/1")
            && report.pointer("/pull_request/draft") == Some(&Value::Bool(held)),
        &report.get("pull_request"),
    );
    let head = hub.branch_head(&id);
    c.check("the branch is pushed", head.is_ok(), &head);
    let state = hub.github()?.state();
    c.check("one pull request", state.pulls.len() == 1, &state.pulls);
    if let Some(pull) = state.pulls.first() {
        c.check(
            "from forge/<id> onto main",
            pull.head == format!("forge/{id}") && pull.base == "main",
            &(&pull.head, &pull.base),
        );
        c.check("a draft exactly when held", pull.draft == held, &pull.draft);
        c.check(
            "the body is the report",
            pull.body.contains(&format!("<!-- forge-task: {id} -->"))
                && pull.body.contains("## Validation")
                && pull.body.contains("## Risk")
                && pull.body.contains(provider),
            &pull.body,
        );
    }
    Ok((id, status))
}

fn open(suite: &Suite, root: &Path, provider: &'static str) -> anyhow::Result<()> {
    let hub = Hub::start(
        suite,
        root,
        ("pulls_open", provider, "pulls_followup"),
        true,
    )?;
    let mut c = Checks::default();
    let (id, _) = opened(&hub, &mut c, provider, (PROMPT, false))?;
    let task = hub.api(&format!("/v1/tasks/{id}"))?;
    c.check(
        "GET /v1/tasks/{id}: pull_request {url, number, state, draft}",
        text(&task, "/pull_request/url") == format!("{PULLS}/1")
            && task["pull_request"]["number"] == 1
            && task["pull_request"]["state"] == "open"
            && task["pull_request"]["draft"] == false,
        &task.get("pull_request"),
    );
    c.done(&hub)
}

fn draft(suite: &Suite, root: &Path, provider: &'static str) -> anyhow::Result<()> {
    let hub = Hub::start(suite, root, ("pulls_draft", provider, "delivery_env"), true)?;
    let mut c = Checks::default();
    let (id, _) = opened(&hub, &mut c, provider, (HELD_PROMPT, true))?;
    {
        let state = hub.github()?.state();
        let body = state
            .pulls
            .first()
            .map(|p| p.body.clone())
            .unwrap_or_default();
        c.check(
            "says why it is held, the key masked",
            body.contains("Held for approval") && !body.contains("AKIAZ7QWERTYUIOPASDF"),
            &body,
        );
    }
    let head = format!("forge/{id}");
    let gh = hub.github()?;
    let graphql = || {
        gh.requests()
            .iter()
            .filter(|r| r.path == "/graphql" && r.body.contains("markPullRequestReadyForReview"))
            .count()
    };
    let (code, answer) = hub.hook(
        "pull_request_review",
        "d-review-reader",
        &review(1, &head, (5001, READER, "approved")),
        SECRET,
    )?;
    c.check(
        "a reader's approval: not allowed",
        code == 202 && answer["outcomes"][0]["outcome"] == "not_allowed",
        &(code, &answer),
    );
    let still_draft = hub.github()?.state().pulls.first().is_some_and(|p| p.draft);
    c.check("still a draft", still_draft && graphql() == 0, &still_draft);
    let (code, answer) = hub.hook(
        "pull_request_review",
        "d-review-writer",
        &review(1, &head, (5002, WRITER, "approved")),
        SECRET,
    )?;
    c.check(
        "a writer's approval: marked ready, the approval approved",
        code == 202
            && answer["outcomes"][0]["outcome"] == "marked_ready"
            && answer["outcomes"][0]["approved"] == true,
        &(code, &answer),
    );
    c.check(
        "markPullRequestReadyForReview",
        graphql() >= 1,
        &hub.github()?.requests(),
    );
    let approval = hub.carried_out(&id)?;
    c.check(
        "the approval carried out by the worker",
        approval["status"] == "approved, delivered"
            && approval["outcome"]["report"]["delivery"]["pushed"] == true,
        &approval,
    );
    let state = hub.github()?.state();
    c.check(
        "one pull request, ready",
        state.pulls.len() == 1 && state.pulls.iter().all(|p| !p.draft),
        &state.pulls,
    );
    drop(state);
    c.done(&hub)
}

fn issue(suite: &Suite, root: &Path, provider: &'static str) -> anyhow::Result<()> {
    let hub = Hub::start(
        suite,
        root,
        ("pulls_issue", provider, "pulls_followup"),
        true,
    )?;
    let mut c = Checks::default();
    // The issue takes number 1; the pull request comes after it.
    let number = hub.github()?.state().number(super::pulls_env::OWNER_REPO);
    let (code, answer) = hub.hook(
        "issues",
        "d-issue",
        &labelled(number, (PROMPT, "The test wants 42."), "forge", WRITER),
        SECRET,
    )?;
    let outcome = &answer["outcomes"][0];
    c.check(
        "a writer's label: a task queued",
        code == 202 && outcome["outcome"] == "issue_task_queued" && outcome["issue"] == number,
        &(code, &answer),
    );
    let id = text(outcome, "/task_id").to_owned();
    anyhow::ensure!(!id.is_empty(), "no task queued: {answer}");
    let replied = hub
        .github()?
        .state()
        .comments
        .iter()
        .any(|cm| cm.number == number && cm.body.contains(&id));
    c.check(
        "a reply on the issue naming the task",
        replied,
        &hub.github()?.state().comments,
    );
    let status = hub.finished(&id)?;
    c.check("succeeded", status["state"] == "succeeded", &status);
    c.check(
        "on the repository's URL",
        status["repo"] == REPO_URL,
        &status["repo"],
    );
    let state = hub.github()?.state();
    let pull = state.pulls.iter().find(|p| p.head == format!("forge/{id}"));
    c.check(
        "its pull request closes the issue",
        pull.is_some_and(|p| {
            p.number == number + 1 && p.body.contains(&format!("Closes #{number}"))
        }),
        &pull,
    );
    drop(state);
    c.done(&hub)
}

/// No worker: nothing queued here is run.
fn refused(suite: &Suite, root: &Path, provider: &'static str) -> anyhow::Result<()> {
    let hub = Hub::start(suite, root, (REFUSED, provider, "pulls_followup"), false)?;
    let mut c = Checks::default();
    let number = hub.github()?.state().number(super::pulls_env::OWNER_REPO);
    let label = labelled(number, (PROMPT, ""), "forge", WRITER);
    let (code, answer) = hub.hook("issues", "d-1", &label, "guessed-secret")?;
    c.check("a forged signature: 401", code == 401, &(code, &answer));
    c.check("nothing queued", hub.tasks()?.is_empty(), &hub.tasks()?);
    let (code, first) = hub.hook("issues", "d-1", &label, SECRET)?;
    let (again, second) = hub.hook("issues", "d-1", &label, SECRET)?;
    c.check(
        "the delivery acts once",
        code == 202
            && first["outcomes"][0]["outcome"] == "issue_task_queued"
            && again == 202
            && second["outcomes"][0]["outcome"] == "replayed",
        &(&first, &second),
    );
    // On another issue: an event is acted on once by its own key (issue and label), so the
    // same label on the same issue would be a replay, whoever put it.
    let reader_label = labelled(number + 1, (PROMPT, ""), "forge", READER);
    let (code, answer) = hub.hook("issues", "d-2", &reader_label, SECRET)?;
    c.check(
        "a reader's label: not allowed",
        code == 202 && answer["outcomes"][0]["outcome"] == "not_allowed",
        &(code, &answer),
    );
    let comment = issue_comment(
        number,
        (9001, READER),
        "@forge write the answer to answer.txt",
    );
    let (code, answer) = hub.hook("issue_comment", "d-3", &comment, SECRET)?;
    c.check(
        "a reader's @forge comment: not allowed",
        code == 202 && answer["outcomes"][0]["outcome"] == "not_allowed",
        &(code, &answer),
    );
    let tasks = hub.tasks()?;
    c.check("one task queued, the writer's", tasks.len() == 1, &tasks);
    let state = hub.github()?.state();
    let writes: Vec<String> = state
        .requests
        .iter()
        .filter(|r| r.method != "GET")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    c.check(
        "one write to GitHub: the answer on the issue",
        writes == [format!("POST /repos/octo-e2e/app/issues/{number}/comments")],
        &writes,
    );
    c.check("no pull request", state.pulls.is_empty(), &state.pulls);
    drop(state);
    c.done(&hub)
}
