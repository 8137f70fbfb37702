//! `cargo xtask e2e` delivery group: `task run` → the delivery step, with the real claude,
//! codex and gemini against the fake model, on a tiny repository (test: `sh test.sh`).
//!
//! | case | scenario | shows |
//! |---|---|---|
//! | `delivery_commit` | a clean change, low risk | committed on `forge/<id>` without forge's files, pushed to a local bare remote, work tree removed; merged, then `task rollback` reverts it |
//! | `delivery_approve` | the change writes `.env` and a cloud key | `pending_approval` (exit 10); a local webhook gets the bearer token, a fake Telegram gets `sendMessage`; `approvals approve` commits |
//! | `delivery_reject` | the same | `approvals reject` leaves no branch and no work tree |
//! | `delivery_crash` | the same | `approvals approve` SIGKILLed between its commit and the store write; the next start finds the commit by its trailer and the rows agree with git |

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use anyhow::{Context, bail};
use forge_cli::offline::{self, CodexHome};
use serde_json::Value;

use super::case_run::{Suite, isolate_env};
use super::server::ServerProcess;
use super::summary::Verdict;
use super::{Ctx, pool};

const TASK_TIMEOUT_SECS: &str = "150";
const WEBHOOK_TOKEN: &str = "e2e-webhook-token-5b1f0c";
const BOT_TOKEN: &str = "424242:e2e-telegram-bot-token";
const CHAT_ID: &str = "-100777";
const TEST_SH: &str = "[ ! -f answer.txt ] || grep -qx 42 answer.txt || { echo \"FAIL: answer.txt\"; exit 1; }\necho PASS\n";
/// Exit code of `task run` when the change waits for approval.
const HELD: i32 = 10;

#[derive(Debug, Clone, Copy)]
struct Case {
    name: &'static str,
    scenario: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "delivery_commit",
        scenario: "delivery_low_risk",
    },
    Case {
        name: "delivery_approve",
        scenario: "delivery_env",
    },
    Case {
        name: "delivery_reject",
        scenario: "delivery_env",
    },
    Case {
        name: "delivery_crash",
        scenario: "delivery_env",
    },
];

pub fn names() -> Vec<&'static str> {
    CASES.iter().map(|c| c.name).collect()
}

/// One HTTP request the local listener received.
#[derive(Debug, Clone)]
struct Received {
    path: String,
    authorization: Option<String>,
    body: Value,
}

/// A local HTTP endpoint standing in for the webhook receiver and Telegram's Bot API:
/// records each request, answers 200 `{"ok":true}`.
struct Listener {
    base: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Listener {
    fn start() -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let base = format!("http://{}", listener.local_addr()?);
        let received = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&received);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                if let Some(request) = read_request(&stream) {
                    if let Ok(mut all) = sink.lock() {
                        all.push(request);
                    }
                }
                let mut stream = stream;
                let body = "{\"ok\":true}";
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Ok(Self { base, received })
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

fn read_request(stream: &std::net::TcpStream) -> Option<Received> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_owned();
    let mut length = 0usize;
    let mut authorization = None;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().ok()?,
            "authorization" => authorization = Some(value.trim().to_owned()),
            _ => {}
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Received {
        path,
        authorization,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

pub(super) fn git_out(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=e2e",
            "-c",
            "user.email=e2e@example.invalid",
        ])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .stderr(Stdio::piped())
        .output()
        .with_context(|| format!("git {}", args.join(" ")))?;
    anyhow::ensure!(
        out.status.success(),
        "git {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

pub(super) fn instruction_file(provider: &str) -> &'static str {
    match provider {
        "codex" => "AGENTS.md",
        "gemini" => "GEMINI.md",
        _ => "CLAUDE.md",
    }
}

/// What a case works with.
struct Env {
    suite: Suite,
    repo: PathBuf,
    bare: PathBuf,
    listener: Listener,
    process_env: Vec<(String, String)>,
}

impl Env {
    /// `forge-code-agent <args>` in the repository, with the notifier tokens and the
    /// provider's offline environment.
    fn forge(
        &self,
        args: &[&str],
        extra: &[(&str, &str)],
    ) -> anyhow::Result<(Option<i32>, String, String)> {
        let mut command = Command::new(&self.suite.forge);
        command.args(args).current_dir(&self.repo);
        isolate_env(&mut command, &self.suite);
        command
            .envs(
                self.process_env
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str())),
            )
            .env("FORGE_WEBHOOK_TOKEN", WEBHOOK_TOKEN)
            .env("TELEGRAM_BOT_TOKEN", BOT_TOKEN)
            .env("USER", "e2e-approver");
        for (k, v) in extra {
            command.env(k, v);
        }
        let out = command
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("running forge {}", args.join(" ")))?;
        Ok((
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ))
    }

    fn json(&self, args: &[&str]) -> anyhow::Result<Value> {
        let (code, stdout, stderr) = self.forge(args, &[])?;
        anyhow::ensure!(code == Some(0), "forge {args:?} exited {code:?}: {stderr}");
        serde_json::from_str(&stdout).with_context(|| format!("forge {args:?}: {stdout}"))
    }

    fn worktrees(&self) -> anyhow::Result<usize> {
        Ok(git_out(&self.repo, &["worktree", "list", "--porcelain"])?
            .lines()
            .filter(|l| l.starts_with("worktree "))
            .count())
    }

    fn branches(&self) -> anyhow::Result<Vec<String>> {
        Ok(
            git_out(&self.repo, &["branch", "--format=%(refname:short)"])?
                .lines()
                .map(str::to_owned)
                .collect(),
        )
    }
}

fn prepare(
    suite: &Suite,
    root: &Path,
    case: Case,
    provider: &'static str,
) -> anyhow::Result<(Env, ServerProcess)> {
    let dir = suite.work.join("delivery").join(case.name).join(provider);
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
    let listener = Listener::start()?;
    let repo = dir.join("repo");
    let bare = dir.join("remote.git");
    std::fs::create_dir_all(&repo)?;
    let mut toml = offline.project_toml();
    toml.push_str("\n[validation]\ntest = \"sh test.sh\"\ntimeout_ms = 60000\n\n[task]\ntimeout_ms = 240000\nmax_review_cycles = 1\n");
    toml.push_str(&format!(
        "\n[delivery]\npush = true\nremote = \"origin\"\nauthor = \"Forge E2E <forge-e2e@example.invalid>\"\n\
         webhook_url = \"{base}/hook\"\ntelegram_chat_id = \"{CHAT_ID}\"\ntelegram_api_base = \"{base}\"\n\
         reconcile_grace_ms = 0\n",
        base = listener.base
    ));
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
    git_out(
        &repo,
        &["remote", "add", "origin", &bare.display().to_string()],
    )?;
    let env = Env {
        suite: suite.clone(),
        repo,
        bare,
        listener,
        process_env: offline.process_env.into_iter().collect(),
    };
    Ok((env, server))
}

/// `task run` to its end; returns the exit code and the report.
fn task_run(env: &Env, provider: &str, prompt: &str) -> anyhow::Result<(Option<i32>, Value)> {
    let repo = env.repo.display().to_string();
    let (code, stdout, stderr) = env.forge(
        &[
            "task",
            "run",
            "--provider",
            provider,
            "--json",
            "--repo",
            &repo,
            "--timeout",
            TASK_TIMEOUT_SECS,
            prompt,
        ],
        &[],
    )?;
    let report: Value = serde_json::from_str(&stdout)
        .with_context(|| format!("no JSON report (exit {code:?}); stderr: {}", tail(&stderr)))?;
    Ok((code, report))
}

pub(super) fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
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
    let s = |v: &Value, p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    match case.name {
        "delivery_commit" => {
            let (code, report) = task_run(&env, provider, "Write the answer to answer.txt.")?;
            let id = s(&report, "/task_id");
            let branch = format!("forge/{id}");
            expect("exit 0", code == Some(0), &code);
            expect(
                "committed",
                s(&report, "/status") == "committed",
                &report.get("delivery"),
            );
            let commit = s(&report, "/delivery/commit");
            expect(
                "pushed",
                report.pointer("/delivery/pushed") == Some(&Value::Bool(true)),
                &report.get("delivery"),
            );
            let head = git_out(&env.repo, &["rev-parse", &branch])?;
            expect(
                "commit on the task branch",
                head == commit,
                &(head.clone(), commit.clone()),
            );
            let remote = git_out(&env.bare, &["rev-parse", &format!("refs/heads/{branch}")])?;
            expect("the bare remote has it", remote == commit, &remote);
            let files = git_out(&env.repo, &["show", "--name-only", "--format=", &commit])?;
            expect("only the agent's file", files == "answer.txt", &files);
            let message = git_out(&env.repo, &["log", "-1", "--format=%B", &commit])?;
            expect(
                "trailer",
                message.contains(&format!("Forge-Task: {id}")),
                &message,
            );
            expect(
                "work tree removed",
                env.worktrees()? == 1,
                &env.worktrees()?,
            );
            // Merged, then rolled back: a revert on main.
            git_out(&env.repo, &["merge", "-q", "--ff-only", &branch])?;
            let rolled = env.json(&["task", "rollback", &id, "--json"])?;
            expect(
                "rolled_back",
                s(&rolled, "/status") == "rolled_back",
                &rolled.get("status"),
            );
            expect(
                "answer.txt reverted",
                !env.repo.join("answer.txt").exists(),
                &"present",
            );
            let subject = git_out(&env.repo, &["log", "-1", "--format=%s"])?;
            expect("a revert commit", subject.starts_with("Revert "), &subject);
        }
        "delivery_approve" | "delivery_reject" | "delivery_crash" => {
            let before = env.worktrees()?;
            let (code, report) = task_run(
                &env,
                provider,
                "Write the answer to answer.txt and configure the uploader.",
            )?;
            let id = s(&report, "/task_id");
            let approval = format!("ap-{id}");
            expect("exit 10 (held)", code == Some(HELD), &code);
            expect(
                "pending_approval",
                s(&report, "/status") == "pending_approval",
                &(report.get("status"), report.get("risk")),
            );
            expect(
                "work tree kept",
                env.worktrees()? == before + 1,
                &env.worktrees()?,
            );
            let received = env.listener.received();
            let hook = received.iter().find(|r| r.path == "/hook");
            expect(
                "webhook with the bearer token",
                hook.is_some_and(|h| {
                    h.authorization.as_deref() == Some(&format!("Bearer {WEBHOOK_TOKEN}"))
                }),
                &hook,
            );
            expect(
                "webhook names the approval",
                hook.is_some_and(|h| {
                    h.body
                        .pointer("/notice/approval_id")
                        .and_then(Value::as_str)
                        == Some(&approval)
                }),
                &hook.map(|h| &h.body),
            );
            let telegram = received
                .iter()
                .find(|r| r.path == format!("/bot{BOT_TOKEN}/sendMessage"));
            expect(
                "telegram sendMessage to the chat",
                telegram.is_some_and(|t| {
                    t.body.get("chat_id").and_then(Value::as_str) == Some(CHAT_ID)
                }),
                &telegram,
            );
            let notified = report
                .pointer("/delivery/notifications")
                .and_then(Value::as_array)
                .map_or(0, |n| {
                    n.iter()
                        .filter(|x| x.get("ok") == Some(&Value::Bool(true)))
                        .count()
                });
            expect(
                "both channels ok in the report",
                notified == 2,
                &report.get("delivery"),
            );
            let listed = env.json(&["approvals", "list", "--json"])?;
            expect("listed", listed.to_string().contains(&approval), &listed);
            match case.name {
                "delivery_approve" => {
                    let done = env.json(&["approvals", "approve", &approval, "--json"])?;
                    expect(
                        "committed",
                        s(&done, "/status") == "committed",
                        &done.get("delivery"),
                    );
                    let files = git_out(
                        &env.repo,
                        &["show", "--name-only", "--format=", &format!("forge/{id}")],
                    )?;
                    expect(
                        "the held files committed",
                        files.contains("uploader.py") && files.contains("answer.txt"),
                        &files,
                    );
                    let (again, _, err) = env.forge(&["approvals", "approve", &approval], &[])?;
                    expect(
                        "second approve: exit 4, already decided",
                        again == Some(4) && err.contains("already decided"),
                        &(again, err),
                    );
                }
                "delivery_reject" => {
                    let done = env.json(&[
                        "approvals",
                        "reject",
                        &approval,
                        "--reason",
                        "no .env",
                        "--json",
                    ])?;
                    expect(
                        "rejected",
                        s(&done, "/status") == "rejected",
                        &done.get("status"),
                    );
                    expect(
                        "no work tree left",
                        env.worktrees()? == before,
                        &env.worktrees()?,
                    );
                    let branches = env.branches()?;
                    expect(
                        "no task branch left",
                        !branches.iter().any(|b| b.starts_with("forge/")),
                        &branches,
                    );
                }
                _ => {
                    // Killed between git's commit and the store's write.
                    let (killed, _, _) = env.forge(
                        &["approvals", "approve", &approval],
                        &[("FORGE_DELIVERY_KILL_AT", "committed")],
                    )?;
                    expect("forge was killed", killed.is_none(), &killed);
                    let head = git_out(&env.repo, &["rev-parse", &format!("forge/{id}")])?;
                    let base = git_out(&env.repo, &["rev-parse", "main"])?;
                    expect("git has the commit", head != base, &head);
                    // The next start reconciles: the row finds the commit by its trailer.
                    let shown = env.json(&["task", "show", &id, "--json"])?;
                    expect(
                        "reconciled to committed",
                        s(&shown, "/status") == "committed",
                        &shown.get("delivery"),
                    );
                    expect(
                        "the row names git's commit",
                        s(&shown, "/delivery/commit") == head,
                        &shown.get("delivery"),
                    );
                    let approvals = env.json(&["approvals", "list", "--all", "--json"])?;
                    let state = approvals
                        .as_array()
                        .and_then(|a| {
                            a.iter()
                                .find(|x| x.get("id").and_then(Value::as_str) == Some(&approval))
                        })
                        .and_then(|x| x.get("state").and_then(Value::as_str))
                        .unwrap_or("")
                        .to_owned();
                    expect("approval approved", state == "approved", &state);
                }
            }
        }
        other => bail!("unknown delivery case {other}"),
    }
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
    Ok(pool::run_all(
        "delivery",
        queue,
        jobs,
        |(case, provider)| {
            Verdict::run(case.name, provider, |verdict| {
                run_case(suite, root, case, provider, &mut verdict.failures)
            })
        },
    ))
}
