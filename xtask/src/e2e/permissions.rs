//! The permissions group (issue 41): `--permission-mode ask` with claude (its stdio
//! permission prompt) and the ACP agents claude-agent-acp, codex-acp and `gemini --acp`,
//! each against the fake model asking to run `touch made.txt`:
//!
//! | case | shows |
//! |---|---|
//! | `perm_allow` | `permissions allow` from another process: the command runs (the file exists); a second decision exits 4 naming the first |
//! | `perm_deny` | `permissions deny --message`: the file is not made and the run still ends |
//! | `perm_session` | `permissions allow --always`: the same command again in the session is not asked |
//! | `perm_timeout` | nobody answers (`timeout_ms = 3000`): denied with `timeout` in the events, asked once |
//! | `perm_rule` | `[permissions] allow = ["Bash(touch made.txt)"]` decides without asking |
//! | `perm_terminal` | `run` under a pseudo-terminal: the prompt is answered `y` ([`super::permissions_surfaces`]) |
//! | `perm_serve` | `serve`: the request at `GET /v1/permissions`, allowed by `POST`, a second `POST` 409, both events on the run's SSE stream |
//! | `perm_board` | (claude) the board in Chromium: the request in "Waiting for you" on two pages, Allow on one, a later Deny on the other told the allow stands |
//! | `perm_queue` | (claude) a queued task (`task submit --queue --permission-mode ask`): its request answered from another process with `permissions list/allow --queue`, the command run and delivered; a second decision exits 4 ([`super::permissions_queue`]) |
//! | `perm_refused` | codex and gemini as their own CLIs cannot ask: refused (exit 2) naming the ACP agent to use |

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use forge_cli::offline::{self, CodexHome};
use serde_json::Value;

use super::case_run::{Suite, isolate_env, run_with_watchdog};
use super::summary::Verdict;
use super::{Ctx, ServerProcess, say};

pub(super) const TIMEOUT: Duration = Duration::from_secs(120);

/// The cases, in the order each agent runs them.
const CASES: [&str; 9] = [
    "perm_allow",
    "perm_deny",
    "perm_session",
    "perm_timeout",
    "perm_rule",
    "perm_terminal",
    "perm_serve",
    "perm_board",
    "perm_queue",
];

/// codex's and gemini's own CLIs: `ask` refused, naming their ACP agents.
const REFUSED: &str = "perm_refused";

pub fn names() -> Vec<&'static str> {
    let mut names = CASES.to_vec();
    names.push(REFUSED);
    names
}

/// The model asks once to make the marker file, then ends. (`escalate`: codex runs the
/// command outside its own read-only sandbox only once its client approves — as a model
/// asks for a command that writes; the other CLIs ignore it.)
pub(super) const ASK_ONCE: &str = r#"name = "ask_once"
description = "asks to run a shell command that makes a file"
prompts = ["Make the marker file."]

[[turns]]
tool_calls = [{ action = "shell", command = "touch made.txt", description = "Make the marker file", escalate = true }]

[[turns]]
text = "Finished."
"#;

/// The same command twice in one session.
const ASK_TWICE: &str = r#"name = "ask_twice"
description = "asks to run the same shell command twice"
prompts = ["Make the marker file twice."]

[[turns]]
tool_calls = [{ action = "shell", command = "touch made.txt", description = "Make the marker file", escalate = true }]

[[turns]]
tool_calls = [{ action = "shell", command = "touch made.txt", description = "Make the marker file", escalate = true }]

[[turns]]
text = "Finished."
"#;

pub(super) const PROMPT: &str = "Make the marker file.";

/// An agent as the group drives it: claude's own CLI, or a CLI's ACP agent.
#[derive(Debug, Clone, Copy)]
pub(super) struct Agent {
    /// The table's column.
    pub label: &'static str,
    /// The pinned CLI it comes from.
    pub cli: &'static str,
    pub acp: bool,
}

/// The agents of the selected CLIs: claude gives two (its CLI and claude-agent-acp); codex
/// and gemini their ACP agents (as their own CLIs they cannot ask: `ask` is refused).
fn agents(providers: &[&'static str]) -> Vec<Agent> {
    let all = [
        Agent {
            label: "claude",
            cli: "claude",
            acp: false,
        },
        Agent {
            label: "claude-acp",
            cli: "claude",
            acp: true,
        },
        Agent {
            label: "codex-acp",
            cli: "codex",
            acp: true,
        },
        Agent {
            label: "gemini-acp",
            cli: "gemini",
            acp: true,
        },
    ];
    all.into_iter()
        .filter(|a| providers.contains(&a.cli))
        .collect()
}

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    let threads: Vec<_> = agents(&ctx.providers)
        .into_iter()
        .map(|agent| {
            let suite = ctx.suite.clone();
            let cases: Vec<&'static str> = CASES
                .into_iter()
                .filter(|c| ctx.scenarios.contains(c))
                // One browser flow is enough: the board shows every agent's requests alike.
                .filter(|c| *c != "perm_board" || agent.label == "claude")
                // One queued task too: the queue carries every agent's requests alike.
                .filter(|c| *c != "perm_queue" || agent.label == "claude")
                .collect();
            std::thread::spawn(move || {
                cases
                    .into_iter()
                    .map(|case| {
                        let started = Instant::now();
                        let outcome = run_case(&suite, agent, case);
                        say(&format!(
                            "permissions {case:<14} {:<10} {}",
                            agent.label,
                            match &outcome {
                                Ok(()) => "ok".to_owned(),
                                Err(e) => format!("FAILED: {e:#}"),
                            }
                        ));
                        Verdict {
                            seconds: started.elapsed().as_secs_f64(),
                            ..Verdict::of(case, agent.label, outcome)
                        }
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut verdicts: Vec<Verdict> = ["codex", "gemini"]
        .into_iter()
        .filter(|cli| ctx.providers.contains(cli) && ctx.scenarios.contains(&REFUSED))
        .map(|cli| {
            let started = Instant::now();
            let outcome = super::permissions_surfaces::refused(&ctx.suite, cli);
            Verdict {
                seconds: started.elapsed().as_secs_f64(),
                ..Verdict::of(REFUSED, cli, outcome)
            }
        })
        .collect();
    verdicts.extend(threads.into_iter().filter_map(|t| t.join().ok()).flatten());
    Ok(verdicts)
}

/// A case's workspace, its agent configured against a fake model of its own.
pub(super) struct Case {
    pub root: PathBuf,
    pub workspace: PathBuf,
    pub provider: String,
    /// What forge itself must run with (claude's CLI: none beyond its `forge.toml`).
    pub env: Vec<(String, String)>,
    /// The user config the case runs with (empty but for a rule case's `[permissions]`).
    pub user_config: PathBuf,
    _model: ServerProcess,
}

pub(super) fn prepare(
    suite: &Suite,
    agent: Agent,
    case: &str,
    scenario: &str,
) -> anyhow::Result<Case> {
    let root = suite.work.join(case).join(agent.label);
    if root.exists() {
        std::fs::remove_dir_all(&root)?;
    }
    let workspace = root.join("ws");
    std::fs::create_dir_all(&workspace)?;
    let status = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&workspace)
        .status()
        .context("git init")?;
    ensure!(status.success(), "git init failed");
    let scenario_file = root.join("scenario.toml");
    std::fs::write(&scenario_file, scenario)?;
    let model = ServerProcess::start(
        &suite.forge,
        &scenario_file.to_string_lossy(),
        &root.join("requests.jsonl"),
    )?;
    let (provider, toml, env) = if agent.acp {
        let configured = offline::configure_acp(agent.cli, &suite.clis, &model.base_url, &root)?;
        (configured.provider, configured.project_toml, Vec::new())
    } else {
        let template = CodexHome::Template(root.join("codex-template"));
        let configured = offline::configure(agent.cli, &suite.clis, &model.base_url, &template)?;
        let env = configured.process_env.clone().into_iter().collect();
        (
            configured.provider.to_owned(),
            configured.project_toml(),
            env,
        )
    };
    std::fs::write(workspace.join("forge.toml"), toml)?;
    let user_config = root.join("user-config.toml");
    std::fs::write(&user_config, "")?;
    Ok(Case {
        workspace: workspace.canonicalize()?,
        root,
        provider,
        env,
        user_config,
        _model: model,
    })
}

impl Case {
    /// Adds `text` to the workspace's `forge.toml`.
    fn add_project(&self, text: &str) -> anyhow::Result<()> {
        let path = self.workspace.join("forge.toml");
        let mut toml = std::fs::read_to_string(&path)?;
        toml.push('\n');
        toml.push_str(text);
        std::fs::write(path, toml)?;
        Ok(())
    }

    pub(super) fn made(&self) -> bool {
        self.workspace.join("made.txt").exists()
    }

    /// A forge command with the case's environment and user config.
    pub(super) fn forge(&self, suite: &Suite) -> Command {
        let mut command = Command::new(&suite.forge);
        isolate_env(&mut command, suite);
        command.env("FORGE_CONFIG", &self.user_config);
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        command
    }

    /// `run --permission-mode ask` of `PROMPT` in the workspace (`--jsonl`, or the human
    /// output when `jsonl` is false).
    pub(super) fn run_command(&self, suite: &Suite, jsonl: bool) -> Command {
        let mut command = self.forge(suite);
        command
            .arg("run")
            .args(["--provider", &self.provider, "--workdir"])
            .arg(&self.workspace)
            .args(["--permission-mode", "ask"])
            .args(["--timeout", &TIMEOUT.as_secs().to_string()]);
        if jsonl {
            command.arg("--jsonl");
        }
        command.arg(PROMPT);
        command
    }

    /// `permissions ARGS… --workdir WS` in another process: its exit code and stderr.
    fn permissions(&self, suite: &Suite, args: &[&str]) -> anyhow::Result<(i32, String)> {
        let mut command = self.forge(suite);
        command
            .arg("permissions")
            .args(args)
            .arg("--workdir")
            .arg(&self.workspace);
        let output = run_with_watchdog(command, Duration::from_secs(30))?;
        Ok((
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        ))
    }
}

/// What an asking run came to: its events and its result.
pub(super) struct Asked {
    pub events: Vec<Value>,
    pub result: Value,
}

impl Asked {
    pub(super) fn of_kind(&self, kind: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == kind).collect()
    }

    /// The decisions of the run's requests (`permission_decided`'s `decision`).
    pub(super) fn decisions(&self) -> Vec<&Value> {
        self.of_kind("permission_decided")
            .into_iter()
            .map(|e| &e["request"]["decision"])
            .collect()
    }
}

/// Runs `run --jsonl --permission-mode ask` and calls `answer` with each pending request
/// as its event comes (the run goes on meanwhile, waiting for the answer).
fn asked_run(
    suite: &Suite,
    case: &Case,
    mut answer: impl FnMut(&Value) -> anyhow::Result<()>,
) -> anyhow::Result<Asked> {
    // stderr to a file: a pipe nobody reads while the events are read could fill and stop
    // forge.
    let stderr_log = case.root.join("run.stderr.log");
    let mut child = case
        .run_command(suite, true)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&stderr_log)?)
        .spawn()
        .context("starting forge-code-agent run")?;
    let stdout = child.stdout.take().context("no stdout")?;
    let pid = child.id();
    // The harness's own watchdog: forge's --timeout should always come first.
    let watchdog = std::thread::spawn(move || {
        let deadline = Instant::now() + TIMEOUT + Duration::from_secs(30);
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(200));
            if !Path::new(&format!("/proc/{pid}")).exists() {
                return;
            }
        }
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    });
    let mut events = Vec::new();
    let mut result = Value::Null;
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        let Ok(value) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if value.get("type").is_none() && value.get("status").is_some() {
            result = value;
            continue;
        }
        if value["type"] == "permission_requested" && value["request"]["decision"].is_null() {
            answer(&value["request"])?;
        }
        events.push(value);
    }
    let status = child.wait()?;
    let _ = watchdog.join();
    ensure!(
        !result.is_null(),
        "no result (exit {:?}): {}",
        status.code(),
        std::fs::read_to_string(&stderr_log).unwrap_or_default()
    );
    Ok(Asked { events, result })
}

fn id_of(request: &Value) -> anyhow::Result<String> {
    request["id"]
        .as_str()
        .map(str::to_owned)
        .context("a request without an id")
}

/// Every request was for the marker command (the agent's own words for it).
fn ensure_asked_for_the_command(asked: &Asked) -> anyhow::Result<()> {
    let requested = asked.of_kind("permission_requested");
    ensure!(
        !requested.is_empty(),
        "the agent never asked (events: {})",
        kinds(asked)
    );
    for r in requested {
        let tool = &r["request"]["tool"];
        ensure!(
            tool.to_string().contains("made.txt"),
            "a request that does not name the command: {tool}"
        );
    }
    Ok(())
}

pub(super) fn kinds(asked: &Asked) -> String {
    let kinds: Vec<&str> = asked
        .events
        .iter()
        .filter_map(|e| e["type"].as_str())
        .collect();
    kinds.join(",")
}

fn run_case(suite: &Suite, agent: Agent, case: &str) -> anyhow::Result<()> {
    match case {
        "perm_allow" => allow(suite, agent),
        "perm_deny" => deny(suite, agent),
        "perm_session" => session(suite, agent),
        "perm_timeout" => timeout(suite, agent),
        "perm_rule" => rule(suite, agent),
        "perm_terminal" => super::permissions_surfaces::terminal(suite, agent),
        "perm_serve" => super::permissions_surfaces::serve(suite, agent),
        "perm_board" => super::permissions_board::board(suite, agent),
        "perm_queue" => super::permissions_queue::queued(suite, agent),
        other => bail!("unknown case {other}"),
    }
}

fn allow(suite: &Suite, agent: Agent) -> anyhow::Result<()> {
    let case = prepare(suite, agent, "perm_allow", ASK_ONCE)?;
    let mut ids = Vec::new();
    let asked = asked_run(suite, &case, |request| {
        let id = id_of(request)?;
        let (code, stderr) = case.permissions(suite, &["allow", &id])?;
        ensure!(code == 0, "permissions allow: exit {code}: {stderr}");
        ids.push(id);
        Ok(())
    })?;
    ensure_asked_for_the_command(&asked)?;
    ensure!(
        case.made(),
        "allowed, yet made.txt is not there ({})",
        kinds(&asked)
    );
    ensure!(
        asked.result["status"] == "success",
        "status {} ({})",
        asked.result["status"],
        asked.result["errors"]
    );
    let by = asked.decisions().first().map(|d| d["by"]["source"].clone());
    ensure!(by == Some(Value::from("person")), "decided by {by:?}");
    // A second decision changes nothing: exit 4, naming the first.
    let id = ids.first().context("no request answered")?;
    let (code, stderr) = case.permissions(suite, &["deny", id])?;
    ensure!(code == 4, "a second decision: exit {code} ({stderr})");
    ensure!(
        stderr.contains("already decided: allow"),
        "the refusal does not name the first decision: {stderr}"
    );
    Ok(())
}

fn deny(suite: &Suite, agent: Agent) -> anyhow::Result<()> {
    let case = prepare(suite, agent, "perm_deny", ASK_ONCE)?;
    let asked = asked_run(suite, &case, |request| {
        let id = id_of(request)?;
        let (code, stderr) =
            case.permissions(suite, &["deny", &id, "--message", "not this one"])?;
        ensure!(code == 0, "permissions deny: exit {code}: {stderr}");
        Ok(())
    })?;
    ensure_asked_for_the_command(&asked)?;
    ensure!(!case.made(), "denied, yet made.txt was made");
    // The run still ends, with a result of its own (not killed by the harness).
    ensure!(
        asked.result["status"].is_string(),
        "no status: {}",
        asked.result
    );
    let decided = asked.decisions();
    ensure!(
        decided
            .first()
            .is_some_and(|d| d["decision"] == "deny" && d["message"] == "not this one"),
        "decisions {decided:?}"
    );
    Ok(())
}

fn session(suite: &Suite, agent: Agent) -> anyhow::Result<()> {
    let case = prepare(suite, agent, "perm_session", ASK_TWICE)?;
    let asked = asked_run(suite, &case, |request| {
        let id = id_of(request)?;
        let (code, stderr) = case.permissions(suite, &["allow", "--always", &id])?;
        ensure!(
            code == 0,
            "permissions allow --always: exit {code}: {stderr}"
        );
        Ok(())
    })?;
    ensure_asked_for_the_command(&asked)?;
    ensure!(case.made(), "allowed, yet made.txt is not there");
    let asked_times = asked.of_kind("permission_requested").len();
    ensure!(
        asked_times == 1,
        "allowed for the session, yet asked {asked_times} times"
    );
    Ok(())
}

fn timeout(suite: &Suite, agent: Agent) -> anyhow::Result<()> {
    let case = prepare(suite, agent, "perm_timeout", ASK_ONCE)?;
    case.add_project("[permissions]\ntimeout_ms = 3000\n")?;
    let started = Instant::now();
    let asked = asked_run(suite, &case, |_| Ok(()))?;
    ensure_asked_for_the_command(&asked)?;
    ensure!(!case.made(), "nobody answered, yet made.txt was made");
    let decided = asked.decisions();
    ensure!(
        decided
            .first()
            .is_some_and(|d| d["by"]["source"] == "timeout" && d["decision"] == "deny"),
        "decisions {decided:?}"
    );
    // Denied with interrupt / told not to ask again: asked once, and the run ended.
    let asked_times = asked.of_kind("permission_requested").len();
    ensure!(
        asked_times == 1,
        "asked {asked_times} times after a timeout"
    );
    ensure!(
        started.elapsed() < Duration::from_secs(90),
        "the run went on for {:?} after the timeout",
        started.elapsed()
    );
    Ok(())
}

fn rule(suite: &Suite, agent: Agent) -> anyhow::Result<()> {
    let case = prepare(suite, agent, "perm_rule", ASK_ONCE)?;
    std::fs::write(
        &case.user_config,
        "[permissions]\nallow = [\"Bash(touch made.txt)\"]\n",
    )?;
    let asked = asked_run(suite, &case, |request| {
        bail!("a rule allows it, yet a person was asked: {request}")
    })?;
    ensure!(case.made(), "a rule allowed it, yet made.txt is not there");
    let decided = asked.decisions();
    ensure!(
        decided
            .first()
            .is_some_and(|d| d["by"]["source"] == "rule" && d["decision"] == "allow"),
        "decisions {decided:?} ({})",
        kinds(&asked)
    );
    Ok(())
}
