//! The sandbox group (issue 31): a steered agent — the fake model scripts one shell call —
//! tries the escapes with each real CLI: read a key in the user's home, write outside the
//! work tree, into the home, into the work tree's `.git/hooks` and the shared `/tmp`, and
//! read a secret of forge's environment through `/proc/*/environ`. With the sandbox on
//! (the default) each is refused and the work tree still takes the agent's file; with
//! `--sandbox off` the same escapes succeed (the test sees what it claims to).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::Context;
use forge_cli::offline::{self, CodexHome};

use super::case_run::{isolate_env, run_with_watchdog};
use super::server::ServerProcess;
use super::summary::Verdict;
use super::{Ctx, say};

const TIMEOUT: Duration = Duration::from_secs(240);
const SECRET: &str = "forge-e2e-sandbox-secret-value";
const ESCAPES: [&str; 6] = [
    "read-key",
    "wrote-outside",
    "wrote-home",
    "wrote-hook",
    "wrote-tmp",
    "saw-secret",
];

/// A verdict per provider and mode.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    let mut verdicts = Vec::new();
    for &provider in &ctx.providers {
        for mode in ["on", "off"] {
            let case = if mode == "on" {
                "sandbox_escapes_refused"
            } else {
                "sandbox_off_escapes_succeed"
            };
            let started = Instant::now();
            let mut verdict = Verdict::new(case, provider);
            if let Err(e) = one(ctx, provider, mode, &mut verdict) {
                verdict.failures.push(format!("{e:#}"));
            }
            verdict.seconds = started.elapsed().as_secs_f64();
            say(&format!(
                "{case:<28} {provider:<7} {} {}",
                if verdict.passed() { "ok" } else { "FAILED" },
                verdict.note
            ));
            verdicts.push(verdict);
        }
    }
    Ok(verdicts)
}

fn one(ctx: &Ctx, provider: &str, mode: &str, verdict: &mut Verdict) -> anyhow::Result<()> {
    let suite = &ctx.suite;
    let root = suite.work.join(provider).join(mode);
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
    let scenario = root.join("scenario.toml");
    std::fs::write(&scenario, scenario_toml(&home, &outside, &shared_tmp))?;
    let server = ServerProcess::start(
        &suite.forge,
        &scenario.to_string_lossy(),
        &root.join("requests.jsonl"),
    )?;
    let template = CodexHome::Template(root.join("codex-template"));
    let offline = offline::configure(provider, &suite.clis, &server.base_url, &template)?;
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
            "wrote-tmp" => Path::new(&shared_tmp).exists(),
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
    let _ = std::fs::remove_file(&shared_tmp);
    verdict.note = format!("sandbox {sandbox}; escapes that worked: {succeeded:?}");
    Ok(())
}

/// One shell call that tries every escape and writes what worked into `escapes.txt`.
fn scenario_toml(home: &Path, outside: &Path, shared_tmp: &str) -> String {
    let script = format!(
        "R=escapes.txt; : > $R; \
         cat '{home}/.ssh/id_rsa' >/dev/null 2>&1 && echo read-key >> $R; \
         (echo x > '{outside}/planted') 2>/dev/null && echo wrote-outside >> $R; \
         (echo x > '{home}/planted') 2>/dev/null && echo wrote-home >> $R; \
         (echo x > .git/hooks/pre-commit) 2>/dev/null && echo wrote-hook >> $R; \
         (echo x > '{shared_tmp}') 2>/dev/null && echo wrote-tmp >> $R; \
         cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -q '^AWS_SECRET_ACCESS_KEY=' && echo saw-secret >> $R; \
         echo done >> $R",
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

fn tail(text: &str) -> &str {
    let mut start = text.len().saturating_sub(2000);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}
