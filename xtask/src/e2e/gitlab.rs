//! `cargo xtask e2e` gitlab group: `task run --pull-request` on a repository whose remote
//! is on a GitLab host, with the real claude, codex and gemini against the fake model and
//! the GitLab contract fake (`forge-testkit::gitlab`) as the forge. The push goes to a
//! local bare repository (git's `pushInsteadOf`), the merge request to the fake.
//!
//! | case | scenario | shows |
//! |---|---|---|
//! | `gitlab_merge_request` | a clean change, low risk | committed and pushed; one merge request from `forge/<id>` onto `main`, its description the report, not a draft |
//! | `gitlab_draft` | the change writes a cloud key | held (exit 10); a `Draft:` merge request saying why, the key masked; `approvals approve` marks it ready |
//!
//! | `gitlab_feedback` | a reporter's, then a developer's `@forge` note on the merge request (`gitlab_feedback.rs`) | nothing for the reporter; for the developer a commit of the same session on the branch and a reply in the discussion |
//!
//! Every request forge made is a documented route with `PRIVATE-TOKEN`, and the token is in
//! no output.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context;
use forge_cli::offline::{self, CodexHome};
use forge_testkit::gitlab::GitlabFake;
use serde_json::Value;

use super::case_run::{Suite, isolate_env};
use super::delivery::{git_out, instruction_file, tail};
use super::server::ServerProcess;
use super::summary::Verdict;
use super::{Ctx, pool};

const HOST: &str = "gitlab.e2e.test";
const PROJECT: &str = "e2e/app";
const TOKEN: &str = "glpat-e2e-0123456789abcdefghij";
const TASK_TIMEOUT_SECS: &str = "150";
const TEST_SH: &str = "[ ! -f answer.txt ] || grep -qx 42 answer.txt || { echo \"FAIL: answer.txt\"; exit 1; }\necho PASS\n";
/// Exit code of `task run` when the change waits for approval.
const HELD: i32 = 10;

#[derive(Debug, Clone, Copy)]
struct Case {
    name: &'static str,
    scenario: &'static str,
    prompt: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "gitlab_merge_request",
        scenario: "delivery_low_risk",
        prompt: "Write the answer to answer.txt.",
    },
    Case {
        name: "gitlab_draft",
        scenario: "delivery_env",
        prompt: "Write the answer to answer.txt and configure the uploader.",
    },
];

pub fn names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = CASES.iter().map(|c| c.name).collect();
    names.push(super::gitlab_feedback::CASE);
    names
}

/// What a case works with; the fake GitLab lives as long as its runtime.
struct Env {
    suite: Suite,
    repo: PathBuf,
    bare: PathBuf,
    config: PathBuf,
    process_env: Vec<(String, String)>,
    gitlab: GitlabFake,
    _runtime: tokio::runtime::Runtime,
}

impl Env {
    /// `forge-code-agent <args>` in the repository, with the user config naming the fake
    /// GitLab, its token, and the provider's offline environment.
    fn forge(&self, args: &[&str]) -> anyhow::Result<(Option<i32>, String, String)> {
        let mut command = Command::new(&self.suite.forge);
        command.args(args).current_dir(&self.repo);
        isolate_env(&mut command, &self.suite);
        let out = command
            .envs(
                self.process_env
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str())),
            )
            .env("FORGE_CONFIG", &self.config)
            .env("GITLAB_TOKEN", TOKEN)
            .env("USER", "e2e-approver")
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("running forge {}", args.join(" ")))?;
        Ok((
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ))
    }
}

fn prepare(
    suite: &Suite,
    root: &Path,
    case: Case,
    provider: &'static str,
) -> anyhow::Result<(Env, ServerProcess)> {
    let dir = suite.work.join("gitlab").join(case.name).join(provider);
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let scenario = root
        .join("xtask/src/e2e/delivery_scenarios")
        .join(format!("{}.toml", case.scenario));
    let server = ServerProcess::start(
        &suite.forge,
        &scenario.to_string_lossy(),
        &dir.join("requests.jsonl"),
    )?;
    let offline = offline::configure(
        provider,
        &suite.clis,
        &server.base_url,
        &CodexHome::Template(dir.join("codex-template")),
    )?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let gitlab = runtime.block_on(GitlabFake::start(HOST, TOKEN))?;
    gitlab.state().add_project(PROJECT);
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[forges.gitlab]\nkind = \"gitlab\"\nhost = \"{HOST}\"\napi_url = \"{}\"\n\
             token_env = \"GITLAB_TOKEN\"\n",
            gitlab.api_url()
        ),
    )?;
    let repo = dir.join("repo");
    let bare = dir.join("remote.git");
    std::fs::create_dir_all(&repo)?;
    let mut toml = offline.project_toml();
    toml.push_str("\n[validation]\ntest = \"sh test.sh\"\ntimeout_ms = 60000\n\n[task]\ntimeout_ms = 240000\nmax_review_cycles = 1\n");
    // Only `--pull-request`, not `[delivery] pull_request`: the approval still marks the
    // merge request the task opened ready.
    toml.push_str(
        "\n[delivery]\npush = true\nremote = \"origin\"\n\
         author = \"Forge E2E <forge-e2e@example.invalid>\"\nreconcile_grace_ms = 0\n",
    );
    std::fs::write(repo.join("forge.toml"), toml)?;
    std::fs::write(repo.join("test.sh"), TEST_SH)?;
    std::fs::write(repo.join(".gitignore"), ".forgecode/\n")?;
    std::fs::write(
        repo.join(instruction_file(provider)),
        "# House rules\nBe brief.\n",
    )?;
    git_out(&repo, &["init", "-q", "-b", "main"])?;
    git_out(&repo, &["add", "-A"])?;
    git_out(&repo, &["commit", "-q", "-m", "initial"])?;
    git_out(&dir, &["init", "-q", "--bare", "remote.git"])?;
    // The remote is on the GitLab host (which forge reads); pushes go to the bare one.
    let url = format!("https://{HOST}/{PROJECT}.git");
    git_out(&repo, &["remote", "add", "origin", &url])?;
    git_out(
        &repo,
        &[
            "config",
            &format!("url.{}.pushInsteadOf", bare.display()),
            &url,
        ],
    )?;
    let env = Env {
        suite: suite.clone(),
        repo,
        bare,
        config,
        process_env: offline.process_env.into_iter().collect(),
        gitlab,
        _runtime: runtime,
    };
    Ok((env, server))
}

fn run_case(
    suite: &Suite,
    root: &Path,
    case: Case,
    provider: &'static str,
    f: &mut Vec<String>,
) -> anyhow::Result<()> {
    let (env, server) = prepare(suite, root, case, provider)?;
    let mut expect = |what: &str, ok: bool, detail: &dyn std::fmt::Debug| {
        if !ok {
            f.push(format!("{what}: {detail:?}"));
        }
    };
    let repo = env.repo.display().to_string();
    let (code, stdout, stderr) = env.forge(&[
        "task",
        "run",
        "--provider",
        provider,
        "--json",
        "--repo",
        &repo,
        "--timeout",
        TASK_TIMEOUT_SECS,
        "--pull-request",
        case.prompt,
    ])?;
    let report: Value = serde_json::from_str(&stdout)
        .with_context(|| format!("no JSON report (exit {code:?}); stderr: {}", tail(&stderr)))?;
    let s = |v: &Value, p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let id = s(&report, "/task_id");
    let branch = format!("forge/{id}");
    let held = case.name == "gitlab_draft";
    let want_code = if held { HELD } else { 0 };
    expect("exit code", code == Some(want_code), &(code, tail(&stderr)));
    expect(
        "the report's merge request",
        s(&report, "/pull_request/url") == format!("https://{HOST}/{PROJECT}/-/merge_requests/1")
            && report.pointer("/pull_request/draft") == Some(&Value::Bool(held)),
        &report.get("pull_request"),
    );
    let pushed = git_out(&env.bare, &["rev-parse", &format!("refs/heads/{branch}")]);
    expect("the branch is pushed", pushed.is_ok(), &pushed);
    {
        let state = env.gitlab.state();
        let mrs = &state.merge_requests;
        expect("one merge request", mrs.len() == 1, &mrs.len());
        if let Some(mr) = mrs.first() {
            expect(
                "from the task branch onto main",
                mr.source_branch == branch && mr.target_branch == "main",
                &(&mr.source_branch, &mr.target_branch),
            );
            expect(
                "Draft: exactly when held",
                mr.title.starts_with("Draft: ") == held && mr.draft() == held,
                &mr.title,
            );
            let d = &mr.description;
            expect(
                "the description is the report",
                d.contains(&format!("<!-- forge-task: {id} -->"))
                    && d.contains("## Validation")
                    && d.contains("## Risk")
                    && d.contains(provider),
                &d,
            );
            if held {
                expect(
                    "says why it is held, the key masked",
                    d.contains("Held for approval") && !d.contains("AKIAZ7QWERTYUIOPASDF"),
                    &d,
                );
            }
        }
    }
    if held {
        let approval = format!("ap-{id}");
        let (code, out, err) = env.forge(&["approvals", "approve", &approval, "--json"])?;
        expect("approve: exit 0", code == Some(0), &(code, tail(&err)));
        let done: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
        expect(
            "approved: committed, the merge request ready",
            s(&done, "/status") == "committed"
                && done.pointer("/pull_request/draft") == Some(&Value::Bool(false)),
            &(done.get("status"), done.get("pull_request")),
        );
        let state = env.gitlab.state();
        let mr = state.merge_requests.first();
        expect(
            "the title lost its Draft: prefix",
            mr.is_some_and(|m| !m.draft() && !m.title.starts_with("Draft")),
            &mr.map(|m| &m.title),
        );
        expect(
            "still one merge request",
            state.merge_requests.len() == 1,
            &state.merge_requests.len(),
        );
        expect(
            "no token in approve's output",
            !out.contains(TOKEN) && !err.contains(TOKEN),
            &"leaked",
        );
    }
    expect(
        "no token in the output",
        !stdout.contains(TOKEN) && !stderr.contains(TOKEN),
        &"leaked",
    );
    let state = env.gitlab.state();
    expect(
        "every request a documented route",
        state.violations.is_empty(),
        &state.violations,
    );
    expect(
        "every request with PRIVATE-TOKEN",
        !state.auth.is_empty() && state.auth.iter().all(|a| *a == "private-token"),
        &state.auth,
    );
    drop(state);
    drop(server);
    Ok(())
}

/// The selected cases × providers, at most 3 at a time.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    let (suite, root, jobs) = (&ctx.suite, &ctx.root, ctx.jobs.min(3));
    let mut queue = Vec::new();
    for case in CASES.iter().filter(|c| ctx.scenarios.contains(&c.name)) {
        for &provider in &ctx.providers {
            queue.push((*case, provider));
        }
    }
    let mut verdicts = pool::run_all("gitlab", queue, jobs, |(case, provider)| {
        Verdict::run(case.name, provider, |verdict| {
            run_case(suite, root, case, provider, &mut verdict.failures)
        })
    });
    // Its serve, worker and queue run one provider at a time.
    verdicts.extend(super::queue::per_provider(
        ctx,
        "gitlab",
        super::gitlab_feedback::CASE,
        super::gitlab_feedback::run_case,
    ));
    Ok(verdicts)
}
