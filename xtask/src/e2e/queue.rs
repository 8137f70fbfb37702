//! `queue`: tasks across worker processes with each real CLI. Per provider: a fresh
//! PostgreSQL database (on the server `FORGE_TEST_POSTGRES_URL` names, else the machine's
//! own), a loopback fake model, two `forge-code-agent worker` processes, each with its own
//! HOME and user configuration (as two machines would be), and a task submitted with
//! `task submit --push --repo <bare repository URL>`. The workers have no git identity (an
//! empty HOME, no system configuration), as fresh machines would. The task must run once,
//! on one of the workers, through the real CLI, to a validated change of `answer.txt`,
//! committed by forge's built-in identity and pushed: one branch `forge/<id>` on
//! the bare repository, updated once, with exactly one commit carrying the task's
//! `Forge-Task` trailer.
//! (Volume, kill -9 and cancel run with the fake CLI in `cli/tests/suite/queue.rs`.)

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use forge_cli::offline::{self, CodexHome};
use forge_testkit::postgres::FreshDb;
use serde_json::Value;

use super::case_run::Suite;
use super::server::ServerProcess;
use super::summary::Verdict;
use super::{Ctx, say};

const CASE: &str = "queue_workers";
const SCENARIO: &str = "delivery_low_risk";
const LIMIT: Duration = Duration::from_secs(240);

pub fn names() -> Vec<&'static str> {
    vec![
        CASE,
        super::queue_approvals::CASE,
        super::queue_repo::FIX_CASE,
        super::queue_repo::HOLD_CASE,
    ]
}

pub(super) fn git(dir: &Path, args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=e2e",
            "-c",
            "user.email=e2e@example.invalid",
        ])
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .with_context(|| format!("git {}", args.join(" ")))?;
    anyhow::ensure!(
        out.status.success(),
        "git {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}

/// `git show <object>` in `dir`: a file's text at a revision.
pub(super) fn git_show(dir: &Path, object: &str) -> anyhow::Result<String> {
    git_out(dir, &["show", object])
}

/// `git <args>` in `dir`, its stdout.
pub(super) fn git_out(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git").args(args).current_dir(dir).output()?;
    anyhow::ensure!(
        out.status.success(),
        "git {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The bare repository has one task branch, `forge/<id>`, updated once, whose one commit
/// on top of `main` is the only commit anywhere with the trailer `Forge-Task: <id>`.
pub(super) fn delivered_once(bare: &Path, id: &str) -> anyhow::Result<()> {
    let needle = format!("Forge-Task: {id}");
    let log = git_out(bare, &["log", "--all", "--format=%H%n%B%x1e"])?;
    let with_trailer: Vec<&str> = log
        .split('\u{1e}')
        .filter_map(|record| {
            let mut lines = record.trim_start().lines();
            let sha = lines.next()?;
            lines.any(|l| l.trim_end() == needle).then_some(sha)
        })
        .collect();
    anyhow::ensure!(
        with_trailer.len() == 1,
        "commits with {needle}: {with_trailer:?}"
    );
    let branches = git_out(
        bare,
        &[
            "for-each-ref",
            "--format=%(refname:short)",
            "refs/heads/forge/",
        ],
    )?;
    let branch = format!("forge/{id}");
    anyhow::ensure!(branches.trim() == branch, "task branches: {branches:?}");
    let tip = git_out(bare, &["rev-parse", &branch])?;
    anyhow::ensure!(tip.trim() == with_trailer[0], "{branch} is at {tip}");
    let ahead = git_out(bare, &["rev-list", "--count", &format!("main..{branch}")])?;
    anyhow::ensure!(ahead.trim() == "1", "{branch}: {ahead} commits on main");
    let updates = git_out(bare, &["reflog", "show", &format!("refs/heads/{branch}")])?;
    anyhow::ensure!(
        updates.lines().count() == 1,
        "{branch} updated more than once: {updates}"
    );
    Ok(())
}

/// A worker process, killed if the case ends early.
pub(super) struct Worker(pub(super) Child);

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub(super) fn forge(suite: &Suite, home: &Path, env: &[(String, String)]) -> Command {
    let mut command = Command::new(&suite.forge);
    for (key, _) in std::env::vars_os() {
        let name = key.to_string_lossy();
        if name.starts_with("FORGE_") || name.starts_with("CLAUDE_CLI_") || name.starts_with("GIT_")
        {
            command.env_remove(&key);
        }
    }
    command
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("XDG_CACHE_HOME")
        .env("FORGE_CONFIG", home.join("forge-config.toml"))
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .current_dir(home)
        .stdin(Stdio::null());
    command
}

/// One queue case's setting: its directory (made afresh), the fake model, the CLI's
/// configuration and environment, and `remote.git`, the bare repository (one commit on
/// `main`) every worker clones by URL.
pub(super) struct QueueCase {
    pub dir: PathBuf,
    /// The fake model, served as long as the case lives.
    pub _model: ServerProcess,
    pub offline: offline::OfflineProvider,
    pub env: Vec<(String, String)>,
}

impl QueueCase {
    /// `forge-code-agent worker --name NAME` on the queue `db`, as the machine
    /// `machine-NAME` of this case (its own HOME with the CLI's configuration), logging to
    /// `worker-NAME.log`.
    pub(super) fn start_worker(
        &self,
        suite: &Suite,
        db: &str,
        name: &str,
    ) -> anyhow::Result<Worker> {
        let home = self.dir.join(format!("machine-{name}"));
        std::fs::create_dir_all(&home)?;
        std::fs::write(home.join("forge-config.toml"), self.offline.project_toml())?;
        let log = std::fs::File::create(self.dir.join(format!("worker-{name}.log")))?;
        let child = forge(suite, &home, &self.env)
            .args(["worker", "--queue", db, "--name", name])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .context("starting a worker")?;
        Ok(Worker(child))
    }
}

pub(super) fn prepare_case(
    suite: &Suite,
    root: &Path,
    group: &str,
    provider: &str,
) -> anyhow::Result<QueueCase> {
    prepare_case_of(suite, root, group, provider, SCENARIO)
}

/// The repository's own `forge.toml` in the queue cases: its test checks the answer (a
/// queue task with no validation step fails: `require_validation` is on for queue tasks).
/// The untouched repository passes it; 41 fails it, 42 passes.
pub(super) const REPO_FORGE_TOML: &str =
    "[validation]\ntest = \"[ ! -e answer.txt ] || grep -qx 42 answer.txt\"\n";

/// As [`prepare_case`], the fake model playing `scenario` (of `delivery_scenarios`).
pub(super) fn prepare_case_of(
    suite: &Suite,
    root: &Path,
    group: &str,
    provider: &str,
    scenario: &str,
) -> anyhow::Result<QueueCase> {
    prepare_case_with(suite, root, group, provider, (scenario, REPO_FORGE_TOML))
}

/// As [`prepare_case_of`], the repository holding `forge_toml`; a scenario that is not
/// one of `delivery_scenarios` is the fake model's built-in of that name.
pub(super) fn prepare_case_with(
    suite: &Suite,
    root: &Path,
    group: &str,
    provider: &str,
    (scenario, forge_toml): (&str, &str),
) -> anyhow::Result<QueueCase> {
    let dir = suite.work.join(group).join(scenario).join(provider);
    prepare_in(suite, root, dir, provider, (scenario, forge_toml))
}

/// As [`prepare_case_with`], in `dir` (made afresh): for a group whose cases share a
/// scenario.
pub(super) fn prepare_in(
    suite: &Suite,
    root: &Path,
    dir: PathBuf,
    provider: &str,
    (scenario, forge_toml): (&str, &str),
) -> anyhow::Result<QueueCase> {
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let file = root
        .join("xtask/src/e2e/delivery_scenarios")
        .join(format!("{scenario}.toml"));
    let scenario = if file.is_file() {
        file.to_string_lossy().into_owned()
    } else {
        scenario.to_owned()
    };
    let model = ServerProcess::start(&suite.forge, &scenario, &dir.join("requests.jsonl"))?;
    let offline = offline::configure(
        provider,
        &suite.clis,
        &model.base_url,
        &CodexHome::Template(dir.join("codex-template")),
    )?;
    let env: Vec<(String, String)> = offline.process_env.clone().into_iter().collect();
    let src = dir.join("src");
    std::fs::create_dir_all(&src)?;
    std::fs::write(src.join("README.md"), "# app\n")?;
    std::fs::write(src.join("forge.toml"), forge_toml)?;
    git(&src, &["init", "-q", "-b", "main"])?;
    git(&src, &["add", "-A"])?;
    git(&src, &["commit", "-q", "-m", "initial"])?;
    git(&dir, &["clone", "-q", "--bare", "src", "remote.git"])?;
    Ok(QueueCase {
        dir,
        _model: model,
        offline,
        env,
    })
}

fn run_case(suite: &Suite, root: &Path, provider: &'static str) -> anyhow::Result<()> {
    let case = prepare_case(suite, root, "queue", provider)?;
    let (dir, env) = (&case.dir, &case.env);
    // A reflog line per ref update: a branch pushed twice would show two.
    git(
        &dir.join("remote.git"),
        &["config", "core.logAllRefUpdates", "always"],
    )?;
    let repo = format!("file://{}", dir.join("remote.git").display());
    let db = FreshDb::create_blocking();
    let workers = [
        case.start_worker(suite, &db.url, "a")?,
        case.start_worker(suite, &db.url, "b")?,
    ];
    let submitter = dir.join("submitter");
    std::fs::create_dir_all(&submitter)?;
    std::fs::write(submitter.join("forge-config.toml"), "")?;
    let id = submit(
        suite,
        (&submitter, env),
        &db.url,
        &repo,
        provider,
        "Write the answer to answer.txt.",
    )?;
    let status = final_status(suite, &submitter, env, &db.url, &id)?;
    let check = |what: &str, ok: bool| -> anyhow::Result<()> {
        anyhow::ensure!(ok, "{what}: {status}");
        Ok(())
    };
    check("succeeded", status["state"] == "succeeded")?;
    check("one attempt", status["attempts"] == 1)?;
    check(
        "run by a worker",
        matches!(status["worker"].as_str(), Some("a" | "b")),
    )?;
    // Validated, then delivered: the report's status is the delivery's decision.
    check("committed", status["report"]["status"] == "committed")?;
    let changed = status["report"].to_string();
    check("answer.txt changed", changed.contains("answer.txt"))?;
    let report = &status["report"];
    check(
        "the queue's id is the report's",
        report["task_id"] == id.as_str(),
    )?;
    let delivery = &report["delivery"];
    check("pushed", delivery["pushed"] == true)?;
    check(
        "committed by the built-in identity",
        delivery["author"]["source"] == "built_in",
    )?;
    delivered_once(&dir.join("remote.git"), &id)?;
    drop(workers);
    drop(case);
    Ok(())
}

/// `task status --json` of task `id` once it has ended (polled from `home`).
/// `task submit --push` of `prompt` from the machine `home` (with `env`): the task's id.
pub(super) fn submit(
    suite: &Suite,
    (home, env): (&Path, &[(String, String)]),
    queue: &str,
    repo: &str,
    provider: &str,
    prompt: &str,
) -> anyhow::Result<String> {
    let out = forge(suite, home, env)
        .args(["task", "submit", "--queue", queue, "--repo", repo])
        .args(["--provider", provider, "--push", "--json", prompt])
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "task submit: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(serde_json::from_slice::<Value>(&out.stdout)?["task_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned())
}

pub(super) fn final_status(
    suite: &Suite,
    home: &Path,
    env: &[(String, String)],
    queue: &str,
    id: &str,
) -> anyhow::Result<Value> {
    let started = Instant::now();
    loop {
        let out = forge(suite, home, env)
            .args(["task", "status", "--queue", queue, "--json", id])
            .output()?;
        let status: Value = serde_json::from_slice(&out.stdout)
            .with_context(|| String::from_utf8_lossy(&out.stderr).into_owned())?;
        let state = status["state"].as_str().unwrap_or_default();
        if !matches!(state, "queued" | "running") {
            return Ok(status);
        }
        if started.elapsed() > LIMIT {
            bail!("task {id} still {state} after {} s", LIMIT.as_secs());
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    let mut verdicts = per_provider(ctx, "queue", CASE, run_case);
    let approvals = super::queue_approvals::CASE;
    verdicts.extend(per_provider(
        ctx,
        "queue",
        approvals,
        super::queue_approvals::run_case,
    ));
    for (case, run) in super::queue_repo::CASES {
        verdicts.extend(per_provider(ctx, "queue", case, run));
    }
    Ok(verdicts)
}

/// `case` of `group` once per provider (when selected), as verdicts.
pub(super) fn per_provider(
    ctx: &Ctx,
    group: &str,
    case: &'static str,
    run_case: fn(&Suite, &Path, &'static str) -> anyhow::Result<()>,
) -> Vec<Verdict> {
    let mut verdicts = Vec::new();
    if !ctx.scenarios.contains(&case) {
        return verdicts;
    }
    for &provider in &ctx.providers {
        let started = Instant::now();
        let mut failures = Vec::new();
        if let Err(e) = run_case(&ctx.suite, &ctx.root, provider) {
            failures.push(format!("{e:#}"));
        }
        let seconds = started.elapsed().as_secs_f64();
        say(&format!(
            "{group} {case} {provider:<7} {} ({seconds:.1}s)",
            if failures.is_empty() { "ok" } else { "FAILED" }
        ));
        verdicts.push(Verdict {
            seconds,
            failures,
            ..Verdict::new(case, provider)
        });
    }
    verdicts
}
