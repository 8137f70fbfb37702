//! `cargo xtask e2e` poll group: a worker the forge cannot reach (no `serve`, no webhook)
//! takes a reviewer's comment by polling, with the real claude, codex and gemini against
//! the fake model and the GitHub contract fake (`forge-testkit::github`) as the forge.
//!
//! | case | shows |
//! |---|---|
//! | `poll_review_comment` | `worker --poll-forge` on a SQLite queue: a submitted `--pull-request` task opens pull request #1; a writer's `@forge` review comment put into the fake's state (as GitHub holds it) is polled, queued as a follow-up resuming the task's session, pushed as a second commit on the same branch (a fast-forward) and answered in the thread; later polls and a `forge poll` pass act on nothing more |
//!
//! Every request forge made is an operation of GitHub's OpenAPI description, and the token
//! is in no output.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use forge_testkit::github::{FakeReviewComment, GithubFake, OpenApi, ensure_installed};
use serde_json::Value;

use super::case_run::Suite;
use super::queue::{Worker, forge, git_out, prepare_case_of};
use super::summary::Verdict;
use super::{Ctx, pool};

const CASE: &str = "poll_review_comment";
const SCENARIO: &str = "poll_followup";
const OWNER_REPO: &str = "e2e/app";
const TOKEN: &str = "ghp_e2ePollToken0123456789abcdefghij";
/// The comment's marker routes the fake model's follow-up script.
const COMMENT: &str = "@forge please also add greeting.txt (poll-marker-greeting)";
const LIMIT: Duration = Duration::from_secs(300);

pub fn names() -> Vec<&'static str> {
    vec![CASE]
}

/// The fake GitHub and the runtime it is served on.
struct Github {
    fake: GithubFake,
    _runtime: tokio::runtime::Runtime,
}

fn start_github() -> anyhow::Result<Github> {
    let path = ensure_installed().map_err(|e| anyhow::anyhow!(e))?;
    let contract = Arc::new(OpenApi::load(&path).map_err(|e| anyhow::anyhow!(e))?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let fake = runtime.block_on(GithubFake::start(contract, TOKEN))?;
    fake.state()
        .permissions
        .insert((OWNER_REPO.into(), "alice".into()), "write".into());
    Ok(Github {
        fake,
        _runtime: runtime,
    })
}

/// A machine's HOME: the provider's configuration, the forge of github.com on the fake,
/// and git told that the repository's GitHub URL is the local bare one.
fn machine(dir: &Path, name: &str, project_toml: &str, api_url: &str) -> anyhow::Result<PathBuf> {
    let home = dir.join(format!("machine-{name}"));
    std::fs::create_dir_all(&home)?;
    let project_toml = if project_toml.is_empty() {
        String::new()
    } else {
        super::pulls_env::fixed_cli_home(dir, project_toml.to_owned(), &home)?
    };
    std::fs::write(
        home.join("forge-config.toml"),
        format!(
            "{project_toml}\n[forges.github]\nkind = \"github\"\nhost = \"github.com\"\n\
             api_url = \"{api_url}\"\ntoken_env = \"GITHUB_TOKEN\"\n"
        ),
    )?;
    std::fs::write(
        home.join(".gitconfig"),
        format!(
            "[url \"file://{}\"]\n\tinsteadOf = https://github.com/{OWNER_REPO}.git\n",
            dir.join("remote.git").display()
        ),
    )?;
    Ok(home)
}

fn forge_at(suite: &Suite, home: &Path, env: &[(String, String)]) -> Command {
    let mut command = forge(suite, home, env);
    command
        .env("GITHUB_TOKEN", TOKEN)
        .env("FORGE_BOT_LOGIN", "forge-bot");
    command
}

/// Every task of the queue (`task list --queue --json`).
fn tasks(
    suite: &Suite,
    home: &Path,
    env: &[(String, String)],
    db: &str,
) -> anyhow::Result<Vec<Value>> {
    let out = forge_at(suite, home, env)
        .args(["task", "list", "--queue", db, "--json"])
        .output()?;
    let list: Value = serde_json::from_slice(&out.stdout)
        .with_context(|| String::from_utf8_lossy(&out.stderr).into_owned())?;
    Ok(list.as_array().cloned().unwrap_or_default())
}

/// Waits until `done` holds of the queue's tasks; they then.
fn wait_tasks(
    suite: &Suite,
    (home, env): (&Path, &[(String, String)]),
    db: &str,
    what: &str,
    done: impl Fn(&[Value]) -> bool,
) -> anyhow::Result<Vec<Value>> {
    let started = Instant::now();
    loop {
        let all = tasks(suite, home, env, db)?;
        if done(&all) {
            return Ok(all);
        }
        if started.elapsed() > LIMIT {
            bail!("{what}: not after {} s: {all:#?}", LIMIT.as_secs());
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn ended(task: &Value) -> bool {
    !matches!(task["state"].as_str(), Some("queued" | "running"))
}

fn run_case(suite: &Suite, root: &Path, provider: &'static str) -> anyhow::Result<()> {
    let case = prepare_case_of(suite, root, "poll", provider, SCENARIO)?;
    let (dir, env) = (&case.dir, case.env.as_slice());
    let github = start_github()?;
    let project = case.offline.project_toml();
    let worker_home = machine(dir, "worker", &project, &github.fake.api_url())?;
    let submitter = machine(dir, "submitter", "", &github.fake.api_url())?;
    let db = format!("sqlite://{}", dir.join("queue.db").display());
    let log = std::fs::File::create(dir.join("worker.log"))?;
    let worker = Worker(
        forge_at(suite, &worker_home, env)
            .args(["worker", "--queue", &db, "--name", "nat"])
            .args(["--poll-forge", "--poll-interval", "1"])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .context("starting the worker")?,
    );
    let url = format!("https://github.com/{OWNER_REPO}.git");
    let out = forge_at(suite, &submitter, env)
        .args(["task", "submit", "--queue", &db, "--repo", &url])
        .args(["--provider", provider, "--push", "--pull-request", "--json"])
        .arg("Write the answer to answer.txt.")
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "task submit: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = serde_json::from_slice::<Value>(&out.stdout)?["task_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let at = (submitter.as_path(), env);
    let first = wait_tasks(suite, at, &db, "the task ended", |all| {
        all.iter().any(|t| t["task_id"] == id.as_str() && ended(t))
    })?;
    let parent = first
        .iter()
        .find(|t| t["task_id"] == id.as_str())
        .cloned()
        .unwrap_or_default();
    check_parent(&github, &parent, &id)?;
    let branch = format!("forge/{id}");
    let bare = dir.join("remote.git");
    let first_tip = git_out(&bare, &["rev-parse", &branch])?.trim().to_owned();
    // A writer's review comment, as GitHub holds it once posted.
    let comment_id = {
        let mut state = github.fake.state();
        let comment_id = state.id();
        state.review_comments.push(FakeReviewComment {
            id: comment_id,
            repo: OWNER_REPO.into(),
            number: 1,
            review_id: None,
            path: "answer.txt".into(),
            line: Some(1),
            body: COMMENT.into(),
            in_reply_to: None,
            author: "alice".into(),
        });
        comment_id
    };
    let all = wait_tasks(suite, at, &db, "a follow-up ran", |all| {
        all.len() == 2 && all.iter().all(ended)
    })?;
    let followup = all
        .iter()
        .find(|t| t["task_id"] != id.as_str())
        .cloned()
        .unwrap_or_default();
    check_followup(&github, &bare, (&branch, &first_tip), &followup, comment_id)?;
    check_session(&parent, &followup)?;
    // Later polls (the worker's, every second, and one `forge poll` pass) act no more.
    std::thread::sleep(Duration::from_secs(3));
    let pass = forge_at(suite, &submitter, env)
        .args(["forge", "poll", "--queue", &db])
        .output()?;
    let said = String::from_utf8_lossy(&pass.stderr).into_owned();
    anyhow::ensure!(pass.status.success(), "forge poll: {said}");
    anyhow::ensure!(
        said.contains("github.com/e2e/app") && !said.contains("follow-up q-"),
        "forge poll's pass: {said}"
    );
    std::thread::sleep(Duration::from_secs(2));
    let after = tasks(suite, &submitter, env, &db)?;
    anyhow::ensure!(after.len() == 2, "tasks after more polls: {after:#?}");
    let replies = replies_to(&github, comment_id);
    anyhow::ensure!(replies.len() == 1, "replies after more polls: {replies:?}");
    drop(worker);
    let log = std::fs::read_to_string(dir.join("worker.log")).unwrap_or_default();
    let state = github.fake.state();
    anyhow::ensure!(
        state.violations.is_empty(),
        "requests outside GitHub's description: {:?}",
        state.violations
    );
    anyhow::ensure!(
        !log.contains(TOKEN) && !said.contains(TOKEN),
        "the token is in the output"
    );
    Ok(())
}

/// The task succeeded and opened pull request #1 from its branch.
fn check_parent(github: &Github, parent: &Value, id: &str) -> anyhow::Result<()> {
    let report = &parent["report"];
    anyhow::ensure!(
        parent["state"] == "succeeded" && report["status"] == "committed",
        "the task: {parent:#}"
    );
    anyhow::ensure!(
        report["pull_request"]["number"] == 1,
        "the report's pull request: {}",
        report["pull_request"]
    );
    let state = github.fake.state();
    anyhow::ensure!(
        state.pulls.len() == 1 && state.pulls[0].head == format!("forge/{id}"),
        "pull requests: {:?}",
        state.pulls
    );
    Ok(())
}

fn replies_to(github: &Github, comment_id: u64) -> Vec<String> {
    github
        .fake
        .state()
        .review_comments
        .iter()
        .filter(|c| c.in_reply_to == Some(comment_id))
        .map(|c| format!("{}: {}", c.author, c.body))
        .collect()
}

/// The follow-up committed greeting.txt on the same branch, one commit on top of the
/// first (a fast-forward), and replied in the comment's thread naming its commit.
fn check_followup(
    github: &Github,
    bare: &Path,
    (branch, first_tip): (&str, &str),
    followup: &Value,
    comment_id: u64,
) -> anyhow::Result<()> {
    anyhow::ensure!(
        followup["state"] == "succeeded" && followup["report"]["status"] == "committed",
        "the follow-up: {followup:#}"
    );
    let tip = git_out(bare, &["rev-parse", branch])?.trim().to_owned();
    let parent_of_tip = git_out(bare, &["rev-parse", &format!("{branch}~1")])?;
    anyhow::ensure!(
        tip != first_tip && parent_of_tip.trim() == first_tip,
        "{branch}: {first_tip} then {tip} (its parent {parent_of_tip})"
    );
    let greeting = git_out(bare, &["show", &format!("{branch}:greeting.txt")])?;
    anyhow::ensure!(greeting.trim() == "hello", "greeting.txt: {greeting:?}");
    let replies = replies_to(github, comment_id);
    anyhow::ensure!(
        replies.len() == 1
            && replies[0].starts_with("forge-bot: ")
            && replies[0].contains(&tip[..7]),
        "replies in the thread (tip {tip}): {replies:?}"
    );
    Ok(())
}

/// The follow-up resumed the task's agent session (or its report says why it could not).
fn check_session(parent: &Value, followup: &Value) -> anyhow::Result<()> {
    let session = |t: &Value| {
        t["report"]["cycles"]
            .as_array()
            .and_then(|c| c.iter().rev().find_map(|c| c["session_id"].as_str()))
            .map(str::to_owned)
    };
    let (first, second) = (session(parent), session(followup));
    anyhow::ensure!(
        first.is_some() && first == second,
        "sessions: the task's {first:?}, the follow-up's {second:?}"
    );
    Ok(())
}

/// Each provider in turn (one worker each; the fake model per case).
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    let (suite, root) = (&ctx.suite, &ctx.root);
    let mut queue = Vec::new();
    if ctx.scenarios.contains(&CASE) {
        for &provider in &ctx.providers {
            queue.push(provider);
        }
    }
    Ok(pool::run_all("poll", queue, ctx.jobs.min(3), |provider| {
        Verdict::run(CASE, provider, |_| run_case(suite, root, provider))
    }))
}
