//! The sandbox group (issue 31): a steered agent — the fake model scripts one shell call —
//! tries the escapes with each real CLI: read a key in the user's home, write outside the
//! work tree, into the home, into the work tree's `.git/hooks` and the shared `/tmp`, and
//! read a secret of forge's environment through `/proc/*/environ`, and reach a service on a
//! loopback port that is not the model. With the sandbox on (the default) each is refused,
//! the refused connection is a `sandbox_denied` event of the run (its result and its events
//! file), the fake model receives the real API key while no process in the sandbox holds
//! more than a placeholder; with `--sandbox off` the same escapes succeed (the test sees
//! what it claims to).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::Context;
use forge_cli::offline::{self, CodexHome};

use super::Ctx;
use super::case_run::{isolate_env, run_with_watchdog};
use super::server::ServerProcess;
use super::summary::Verdict;

const TIMEOUT: Duration = Duration::from_secs(240);
const SECRET: &str = "forge-e2e-sandbox-secret-value";
const ESCAPES: [&str; 8] = [
    "read-key",
    "wrote-outside",
    "wrote-home",
    "wrote-hook",
    "planted-editor-task",
    "wrote-tmp",
    "saw-secret",
    "reached-port",
];
/// The provider's API key as forge is configured with it: the model must receive it, the
/// sandbox must never hold it.
const REAL_KEY: &str = "sk-e2e-real-key-5d2c9a";
/// The variables the steered agent looks for keys in.
const KEY_VARS: [&str; 4] = [
    "ANTHROPIC_API_KEY",
    "MOCK_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
];

/// What `-s` picks in the group.
pub fn names() -> Vec<&'static str> {
    vec![
        "escapes",
        "steered_task",
        "registry_rust",
        "registry_python",
        "registry_shut",
        "acp_cli_under_tmp",
    ]
}

/// A verdict per provider and mode.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    use super::sandbox_registry::Lang;
    let picked = |name: &str| ctx.scenarios.contains(&name);
    let mut verdicts = Vec::new();
    for &provider in &ctx.providers {
        if picked("registry_rust") {
            verdicts.push(super::sandbox_registry::verdict(
                ctx,
                provider,
                Lang::Rust,
                false,
            ));
        }
        if picked("registry_python") {
            verdicts.push(super::sandbox_registry::verdict(
                ctx,
                provider,
                Lang::Python,
                false,
            ));
        }
        // One CLI shows the report's words; the rule is the CLI's business nowhere.
        if picked("registry_shut") && Some(&provider) == ctx.providers.first() {
            verdicts.push(super::sandbox_registry::verdict(
                ctx,
                provider,
                Lang::Rust,
                true,
            ));
        }
        if picked("acp_cli_under_tmp") && provider == "claude" {
            verdicts.push(super::sandbox_acp::verdict(ctx));
        }
        if picked("steered_task") {
            verdicts.push(super::sandbox_task::verdict(ctx, provider));
        }
        if !picked("escapes") {
            continue;
        }
        for mode in ["on", "off"] {
            let case = if mode == "on" {
                "sandbox_escapes_refused"
            } else {
                "sandbox_off_escapes_succeed"
            };
            verdicts.push(case_verdict(ctx, case, provider, mode, Codex::Mock));
        }
        if provider == "codex" {
            verdicts.push(case_verdict(
                ctx,
                "sandbox_codex_built_in_key_outside",
                provider,
                "on",
                Codex::BuiltIn,
            ));
        }
    }
    Ok(verdicts)
}

/// How codex reaches the fake model.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Codex {
    /// A provider of its config (`model_provider = "mock"`, its key in `MOCK_API_KEY`).
    Mock,
    /// Its built-in `openai` provider (`openai_base_url`), its key in `OPENAI_API_KEY`: what
    /// a user with an API key has. forge gives it a provider of its own at the route.
    BuiltIn,
}

fn case_verdict(
    ctx: &Ctx,
    case: &'static str,
    provider: &'static str,
    mode: &str,
    codex: Codex,
) -> Verdict {
    Verdict::timed(case, provider, |v| one(ctx, provider, mode, codex, v))
}

/// codex's config for its built-in provider at the fake model.
fn built_in_codex_config(base_url: &str) -> String {
    let mut out = format!("openai_base_url = \"{base_url}/v1\"\n");
    for line in offline::codex_config(base_url).lines() {
        if line.starts_with("[model_providers.") {
            break;
        }
        if !line.starts_with("model_provider") {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn one(
    ctx: &Ctx,
    provider: &str,
    mode: &str,
    codex: Codex,
    verdict: &mut Verdict,
) -> anyhow::Result<()> {
    let suite = &ctx.suite;
    let root = suite.work.join(provider).join(match codex {
        Codex::Mock => mode.to_owned(),
        Codex::BuiltIn => format!("{mode}-built-in"),
    });
    if root.exists() {
        std::fs::remove_dir_all(&root)?;
    }
    let (home, outside, ws) = (root.join("home"), root.join("outside"), root.join("ws"));
    for dir in [&home.join(".ssh"), &outside, &ws] {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(home.join(".ssh/id_rsa"), "FAKE PRIVATE KEY")?;
    let status = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&ws)
        .status()
        .context("git init")?;
    anyhow::ensure!(status.success(), "git init failed");
    let shared_tmp = format!(
        "/tmp/forge-e2e-sandbox-{provider}-{mode}-{}",
        std::process::id()
    );
    let other = OtherService::start()?;
    let scenario = root.join("scenario.toml");
    std::fs::write(
        &scenario,
        scenario_toml(&home, &outside, &shared_tmp, other.port),
    )?;
    let server = ServerProcess::start(
        &suite.forge,
        &scenario.to_string_lossy(),
        &root.join("requests.jsonl"),
    )?;
    let template = CodexHome::Template(root.join("codex-template"));
    let mut offline = offline::configure(provider, &suite.clis, &server.base_url, &template)?;
    if codex == Codex::BuiltIn {
        std::fs::write(
            root.join("codex-template/config.toml"),
            built_in_codex_config(&server.base_url),
        )?;
        offline.env.remove(forge_adapter_codex::MOCK_API_KEY_ENV);
        offline
            .env
            .insert("OPENAI_API_KEY".to_owned(), REAL_KEY.to_owned());
    }
    for var in KEY_VARS {
        if let Some(value) = offline.env.get_mut(var) {
            *value = REAL_KEY.to_owned();
        }
    }
    std::fs::write(ws.join("forge.toml"), offline.project_toml())?;

    let mut command = Command::new(&suite.forge);
    command
        .arg("run")
        .args(["--provider", offline.provider, "--sandbox", mode])
        .arg("--workdir")
        .arg(&ws)
        .args(["--json", "--permission-mode", "bypass"])
        .args(["--timeout", &TIMEOUT.as_secs().to_string()])
        .arg("Check what you can reach.");
    isolate_env(&mut command, suite);
    command.envs(&offline.process_env);
    // The CLIs keep their state in this home; its key is what the agent must not read.
    command
        .env("HOME", &home)
        .env("AWS_SECRET_ACCESS_KEY", SECRET);
    let output = run_with_watchdog(command, TIMEOUT + Duration::from_secs(30))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let result: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_default();
    if output.status.code() != Some(0) {
        verdict.failures.push(format!(
            "exit {:?}: {}\n{}",
            output.status.code(),
            result["errors"],
            tail(&stderr)
        ));
    }
    let report = std::fs::read_to_string(ws.join("escapes.txt")).unwrap_or_default();
    // What the agent saw, checked against the world outside where it can be.
    let seen = |escape: &str| -> bool {
        let said = report.lines().any(|l| l == escape);
        let real = match escape {
            "wrote-outside" => outside.join("planted").exists(),
            "wrote-home" => home.join("planted").exists(),
            "wrote-hook" => ws.join(".git/hooks/pre-commit").exists(),
            // A protected path the tree did not have: written inside, gone when the run
            // ended (bubblewrap binds only over what exists).
            "planted-editor-task" => ws.join(".vscode/tasks.json").exists(),
            "wrote-tmp" => Path::new(&shared_tmp).exists(),
            "reached-port" => other.reached(),
            _ => said,
        };
        said && real
    };
    if !report.lines().any(|l| l == "done") {
        verdict.failures.push(format!(
            "the agent's probe did not run to its end: {report:?}"
        ));
    }
    let succeeded: Vec<&str> = ESCAPES.iter().copied().filter(|e| seen(e)).collect();
    let sandbox = result["metadata"]["sandbox"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    if mode == "on" {
        if !succeeded.is_empty() {
            verdict.failures.push(format!(
                "escapes succeeded with the sandbox on: {succeeded:?}"
            ));
        }
        if !sandbox.starts_with("on") {
            verdict
                .failures
                .push(format!("metadata.sandbox {sandbox:?}, want on"));
        }
    } else {
        let missed: Vec<&str> = ESCAPES.iter().copied().filter(|e| !seen(e)).collect();
        if !missed.is_empty() {
            verdict.failures.push(format!(
                "with --sandbox off these escapes did not succeed (the probe is blind?): {missed:?}; report {report:?}"
            ));
        }
        if sandbox != "off" {
            verdict
                .failures
                .push(format!("metadata.sandbox {sandbox:?}, want off"));
        }
    }
    check_network(mode, &ws, &root, &result, other.port, verdict);
    check_planted(mode, &ws, &result, verdict);
    let _ = std::fs::remove_file(&shared_tmp);
    verdict.note = format!("sandbox {sandbox}; escapes that worked: {succeeded:?}");
    Ok(())
}

/// One shell call that tries every escape and writes what worked into `escapes.txt`.
fn scenario_toml(home: &Path, outside: &Path, shared_tmp: &str, port: u16) -> String {
    let script = format!(
        "R=escapes.txt; : > $R; \
         cat '{home}/.ssh/id_rsa' >/dev/null 2>&1 && echo read-key >> $R; \
         (echo x > '{outside}/planted') 2>/dev/null && echo wrote-outside >> $R; \
         (echo x > '{home}/planted') 2>/dev/null && echo wrote-home >> $R; \
         (echo x > .git/hooks/pre-commit) 2>/dev/null && echo wrote-hook >> $R; \
         (mkdir -p .vscode && echo x > .vscode/tasks.json) 2>/dev/null && echo planted-editor-task >> $R; \
         (echo x > '{shared_tmp}') 2>/dev/null && echo wrote-tmp >> $R; \
         cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -q '^AWS_SECRET_ACCESS_KEY=' && echo saw-secret >> $R; \
         curl -s -m 10 -o /dev/null -w '%{{http_code}}' http://127.0.0.1:{port}/probe 2>/dev/null | grep -q 200 && echo reached-port >> $R; \
         cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -E '^({keys})=' | sort -u > keys.txt; \
         echo done >> $R",
        keys = KEY_VARS.join("|"),
        home = home.display(),
        outside = outside.display(),
    );
    let command = serde_json::to_string(&script).unwrap_or_default();
    format!(
        "name = \"sandbox_escapes\"\n\
         description = \"A steered agent tries to read keys and secrets and to write outside its work tree.\"\n\
         prompts = [\"Check what you can reach.\"]\n\n\
         [[turns]]\n\
         tool_calls = [{{ action = \"shell\", command = {command}, description = \"Probe\" }}]\n\n\
         [[turns]]\n\
         text = \"Probed.\"\n"
    )
}

/// The network half: the refused connection reported (result and events file) with the
/// sandbox on, the footer's word on the network, and the keys — the model got the real one,
/// the sandbox held only placeholders (with the sandbox off, the real key is in the CLI's
/// environment, as the test sees).
fn check_network(
    mode: &str,
    ws: &Path,
    root: &Path,
    result: &serde_json::Value,
    port: u16,
    verdict: &mut Verdict,
) {
    let target = format!("127.0.0.1:{port}");
    let denied_in_result = result["metadata"]["sandbox_denied"]
        .as_array()
        .is_some_and(|d| d.iter().any(|d| d["target"] == target.as_str()));
    let run_id = result["metadata"]["run_id"].as_str().unwrap_or_default();
    let events =
        std::fs::read_to_string(ws.join(".forgecode/runs").join(run_id).join("events.jsonl"))
            .unwrap_or_default();
    let denied_in_events = events.lines().any(|l| {
        serde_json::from_str::<serde_json::Value>(l).is_ok_and(|e| {
            e["type"] == "sandbox_denied"
                && e["kind"] == "network"
                && e["target"] == target.as_str()
        })
    });
    let sandbox = result["metadata"]["sandbox"].as_str().unwrap_or_default();
    let keys = std::fs::read_to_string(ws.join("keys.txt")).unwrap_or_default();
    let real_inside = keys.lines().any(|l| l.ends_with(&format!("={REAL_KEY}")));
    let placeholder_inside = keys
        .lines()
        .any(|l| l.contains("=forge-sandbox-placeholder-"));
    let want = forge_adapter_fakemodel::credential_digest(REAL_KEY);
    let requests = std::fs::read_to_string(root.join("requests.jsonl")).unwrap_or_default();
    let model_keys: Vec<String> = requests
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|r| !r["vendor"].is_null())
        .map(|r| r["credential"].as_str().unwrap_or("none").to_owned())
        .collect();
    if model_keys.is_empty() || model_keys.iter().any(|k| *k != want) {
        verdict.failures.push(format!(
            "the model did not get the real key on every request: {model_keys:?}, want {want}"
        ));
    }
    if mode == "on" {
        if !denied_in_result || !denied_in_events {
            verdict.failures.push(format!(
                "the refused connection to {target} is not reported (result: {denied_in_result}, events file: {denied_in_events}): {}",
                result["metadata"]["sandbox_denied"]
            ));
        }
        if !sandbox.contains("network through forge's egress") {
            verdict.failures.push(format!(
                "metadata.sandbox {sandbox:?} does not say the network is confined"
            ));
        }
        if real_inside || !placeholder_inside {
            verdict.failures.push(format!(
                "inside the sandbox the key variables were {keys:?}: want only placeholders"
            ));
        }
    } else {
        if denied_in_result || denied_in_events {
            verdict
                .failures
                .push("a connection was reported refused with the sandbox off".to_owned());
        }
        if !real_inside {
            verdict.failures.push(format!(
                "with the sandbox off the probe did not see the real key: {keys:?} (is it blind?)"
            ));
        }
    }
}

/// The editor task the agent planted: with the sandbox on, an `fs` refusal of the run (the
/// path removed when it ended), none with it off.
fn check_planted(mode: &str, ws: &Path, result: &serde_json::Value, verdict: &mut Verdict) {
    let target = ws.join(".vscode");
    let target = std::fs::canonicalize(ws)
        .map(|w| w.join(".vscode"))
        .unwrap_or(target);
    let reported = result["metadata"]["sandbox_denied"]
        .as_array()
        .is_some_and(|d| {
            d.iter()
                .any(|d| d["kind"] == "fs" && d["target"] == target.to_string_lossy().as_ref())
        });
    if mode == "on" && !reported {
        verdict.failures.push(format!(
            "the planted {} is not reported: {}",
            target.display(),
            result["metadata"]["sandbox_denied"]
        ));
    }
    if mode == "off" && reported {
        verdict
            .failures
            .push("a file was reported refused with the sandbox off".to_owned());
    }
}

/// A service on a loopback port that is not the model: an agent that reaches it gets `200`.
pub(super) struct OtherService {
    pub(super) port: u16,
    hits: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl OtherService {
    pub(super) fn start() -> anyhow::Result<Self> {
        use std::io::{Read as _, Write as _};
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (h, s) = (std::sync::Arc::clone(&hits), std::sync::Arc::clone(&stop));
        std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((mut stream, _)) => {
                        h.fetch_add(1, Ordering::Relaxed);
                        let _ = stream.set_nonblocking(false);
                        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
                        let mut buf = [0u8; 4096];
                        let _ = stream.read(&mut buf);
                        let _ = stream.write_all(
                            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                        );
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        Ok(Self { port, hits, stop })
    }

    pub(super) fn reached(&self) -> bool {
        self.hits.load(std::sync::atomic::Ordering::Relaxed) > 0
    }
}

impl Drop for OtherService {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

fn tail(text: &str) -> &str {
    let mut start = text.len().saturating_sub(2000);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}
