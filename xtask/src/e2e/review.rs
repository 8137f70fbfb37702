//! `cargo xtask e2e` review group: `forge-code-agent review --base HEAD~1` with the real
//! claude, codex and gemini against the fake model, on a repository whose last commit adds
//! a cloud key (`app/config.py`) and builds SQL by concatenation (`app/db.py:6`).
//!
//! | case | scenario | shows |
//! |---|---|---|
//! | `findings` | `review/review_findings.toml` | the four files; the key a critical rule finding that no output prints; the SQL finding an inline comment with a suggestion; the untouched line's finding in the body; exit 1 under `--fail-on high` |
//! | `malformed` | `review/review_malformed.toml` | one follow-up in the same session, then `partial`, exit 3, the rule finding written |
//! | `rate_limit` | HTTP 429 every time | `skipped`, exit 0, the rule finding written; `--strict` not given |
//!
//! The user's checkout is checked untouched afterwards (branch, status, work trees).
//!
//! `rate_limit` with gemini: gemini 0.61 does not give up on a limit that never lifts (on a
//! plain HTTP 429 it retries, falls back from the pro to the flash model and retries there,
//! for as long as it is let run). Its stderr announces each retry (`Attempt N failed with
//! status 429…`), which forge reads as rate-limited retries: at the second one the review
//! stops the agent and is skipped. gemini runs here with its default retry settings, as a
//! user's would.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use forge_cli::offline::{self, CodexHome};
use serde_json::Value;

use super::case_run::{Suite, isolate_env};
use super::server::ServerProcess;
use super::summary::Verdict;
use super::{Ctx, pool};

const KEY: &str = "AKIAZ7Q4R2W9X3YT5PLM";
const TIMEOUT_SECS: u64 = 150;

const DB_BEFORE: &str = "import sqlite3\n\n\ndef find(cur, name):\n    # Look the user up.\n    cur.execute(\"SELECT * FROM users WHERE name = ?\", (name,))\n    return cur.fetchone()\n\n\ndef close(cur):\n    cur.close()\n    return None\n";

const CASES: &[&str] = &["findings", "malformed", "rate_limit"];

/// Names of the review cases (for `-s`).
pub fn names() -> Vec<&'static str> {
    CASES.to_vec()
}

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    let mut queue = Vec::new();
    for &case in CASES.iter().filter(|c| ctx.scenarios.contains(c)) {
        for &provider in &ctx.providers {
            queue.push((case, provider));
        }
    }
    Ok(pool::run_all(
        "review",
        queue,
        ctx.jobs.clamp(1, 3),
        |(case, provider)| {
            Verdict::run(case, provider, |verdict| {
                run_case(&ctx.suite, &ctx.root, case, provider, verdict)
            })
        },
    ))
}

fn scenario(root: &Path, dir: &Path, case: &str) -> anyhow::Result<PathBuf> {
    let fixed = root.join("adapters/fakemodel/scenarios/review");
    Ok(match case {
        "findings" => fixed.join("review_findings.toml"),
        "malformed" => fixed.join("review_malformed.toml"),
        _ => {
            // Every attempt refused: the CLI's own retries run out and it reports the limit.
            let fail = "{ status = 429, times = \"always\", message = \"rate limit reached\" }";
            let path = dir.join("rate_limit.toml");
            std::fs::write(
                &path,
                format!(
                    "name = \"review_rate_limit\"\ndescription = \"Every request refused with HTTP 429.\"\n\n[[turns]]\ntext = \"never served\"\nfail = {fail}\n"
                ),
            )?;
            path
        }
    })
}

fn run_case(
    suite: &Suite,
    root: &Path,
    case: &'static str,
    provider: &'static str,
    verdict: &mut Verdict,
) -> anyhow::Result<()> {
    let dir = suite.work.join(case).join(provider);
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let scenario = scenario(root, &dir, case)?;
    let server = ServerProcess::start(
        &suite.forge,
        &scenario.to_string_lossy(),
        &dir.join("requests.jsonl"),
    )?;
    let mut offline = offline::configure(
        provider,
        &suite.clis,
        &server.base_url,
        &CodexHome::Template(dir.join("codex-template")),
    )?;
    let repo = dir.join("repo");
    make_repo(&repo)?;
    let user_home = if provider == "gemini" {
        // The API-key sign-in, which the run's private home copies.
        let home = dir.join("user-home");
        std::fs::create_dir_all(home.join(".gemini"))?;
        let settings = serde_json::json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
        });
        std::fs::write(home.join(".gemini/settings.json"), settings.to_string())?;
        offline.copy_user_auth = true;
        Some(home)
    } else {
        None
    };
    // The configuration stays out of the commits under review.
    std::fs::write(repo.join("forge.toml"), offline.project_toml())?;
    let out = dir.join("reviews");
    let mut command = Command::new(&suite.forge);
    command
        .args([
            "review",
            "--base",
            "HEAD~1",
            "--provider",
            provider,
            "--json",
        ])
        .arg("--repo")
        .arg(&repo)
        .arg("--out")
        .arg(&out)
        .args(["--fail-on", "high", "--timeout", &TIMEOUT_SECS.to_string()])
        .stdin(Stdio::null());
    isolate_env(&mut command, suite);
    if let Some(home) = &user_home {
        command.env("HOME", home);
    }
    command.envs(&offline.process_env);
    let output = command
        .output()
        .context("running forge-code-agent review")?;
    let exit = output.status.code();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let report: Value = serde_json::from_str(&stdout)
        .with_context(|| format!("no JSON report (exit {exit:?}); stderr: {}", tail(&stderr)))?;
    let status = report["status"].as_str().unwrap_or("-").to_owned();
    verdict.status = format!("{status}/{}", exit.map_or("-".into(), |c| c.to_string()));
    let f = &mut verdict.failures;
    let mut expect = |what: &str, ok: bool| {
        if !ok {
            f.push(format!(
                "{what}; status {status}, exit {exit:?}, notices {}",
                report["notices"]
            ));
        }
    };
    // Every case: the four files, the key found by its rule and printed nowhere, the
    // checkout untouched.
    let files: Vec<String> = output_files()
        .iter()
        .map(|name| std::fs::read_to_string(out.join(name)).unwrap_or_default())
        .collect();
    expect(
        "the four files are written",
        files.iter().all(|t| !t.is_empty()),
    );
    // The agent's runs: their bundles kept under `--out`/runs (the work tree is gone).
    let bundles: Vec<PathBuf> = report["runs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|id| out.join("runs").join(id).join("events.jsonl"))
        .collect();
    expect(
        "the agent's run bundles are kept",
        !bundles.is_empty() && bundles.iter().all(|b| b.is_file()),
    );
    let events: String = bundles
        .iter()
        .map(|b| std::fs::read_to_string(b).unwrap_or_default())
        .collect();
    let everything = format!("{stdout}{stderr}{}{events}", files.concat());
    expect("the key is printed nowhere", !everything.contains(KEY));
    let findings = report["findings"].as_array().cloned().unwrap_or_default();
    let key_rule = findings.iter().any(|x| {
        x["rule"] == "secret.aws_access_key"
            && x["severity"] == "critical"
            && x["path"] == "app/config.py"
            && x["placement"] == "inline"
    });
    expect("the key is a critical rule finding, inline", key_rule);
    expect("the checkout is untouched", checkout_untouched(&repo));
    let sarif: Value = serde_json::from_str(&files[2]).unwrap_or(Value::Null);
    expect(
        "SARIF 2.1.0 with the rule's result",
        sarif["version"] == "2.1.0"
            && sarif["runs"][0]["results"].as_array().is_some_and(|r| {
                r.iter()
                    .any(|x| x["ruleId"] == "secret.aws_access_key" && x["level"] == "error")
            }),
    );
    let github: Value = serde_json::from_str(&files[3]).unwrap_or(Value::Null);
    let comments = github["comments"].as_array().cloned().unwrap_or_default();
    let body = github["body"].as_str().unwrap_or_default();
    match case {
        "findings" => {
            expect("completed", status == "completed");
            expect("exit 1 under --fail-on high", exit == Some(1));
            let sql = comments
                .iter()
                .find(|c| c["path"] == "app/db.py" && c["line"] == 6);
            expect(
                "the SQL finding is an inline comment with a suggestion",
                sql.is_some_and(|c| {
                    c["side"] == "RIGHT"
                        && c["body"].as_str().is_some_and(|b| b.contains("```suggestion\n    cur.execute(\"SELECT * FROM users WHERE name = ?\", (name,))\n```"))
                }),
            );
            expect(
                "the finding on the untouched line 12 is in the body",
                body.contains("close() returns None explicitly")
                    && body.contains("on lines this change did not touch")
                    && !comments.iter().any(|c| c["line"] == 12),
            );
            expect(
                "the hostile path is rejected, not dropped silently",
                report["rejected"].as_array().is_some_and(|r| r.len() == 1)
                    && files[0].contains("leaves the repository"),
            );
        }
        "malformed" => {
            expect("partial", status == "partial");
            expect("exit 3", exit == Some(3));
            expect(
                "two agent runs (one follow-up)",
                report["runs"].as_array().is_some_and(|r| r.len() == 2),
            );
            expect("only the rule finding", findings.len() == 1);
            expect(
                "the raw answer is in the Markdown",
                files[0].contains("The agent's answer (unreadable)")
                    && files[0].contains("Sorry, here it is"),
            );
            expect(
                "the follow-up resumed the same session",
                follow_up_in_same_session(&dir.join("requests.jsonl")),
            );
        }
        _ => {
            expect("skipped", status == "skipped");
            expect("exit 0", exit == Some(0));
            expect("only the rule finding", findings.len() == 1);
            expect(
                "a notice says why",
                report["notices"]
                    .to_string()
                    .contains("rate or usage limit"),
            );
        }
    }
    if !verdict.failures.is_empty() {
        verdict.failures.push(format!("stderr: {}", tail(&stderr)));
    }
    Ok(())
}

fn output_files() -> [&'static str; 4] {
    [
        "review.md",
        "findings.json",
        "review.sarif",
        "github-review.json",
    ]
}

/// The follow-up's request carries the first answer (the same conversation, resumed).
fn follow_up_in_same_session(log: &Path) -> bool {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .any(|line| line.contains("could not be read") && line.contains("looks reasonable to me"))
}

fn checkout_untouched(repo: &Path) -> bool {
    let out = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(repo)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    };
    out(&["rev-parse", "--abbrev-ref", "HEAD"]) == "main"
        && out(&["status", "--porcelain", "--untracked-files=no"]).is_empty()
        && out(&["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count()
            == 1
}

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<()> {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=e2e",
            "-c",
            "user.email=e2e@example.invalid",
        ])
        .args(args)
        .current_dir(dir)
        .status()?;
    if !status.success() {
        bail!("git {args:?} failed in {}", dir.display());
    }
    Ok(())
}

/// `app/db.py`, then a commit that concatenates SQL on line 6 and adds a key.
fn make_repo(repo: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(repo.join("app"))?;
    git(repo, &["init", "-q", "-b", "main"])?;
    std::fs::write(repo.join("app/db.py"), DB_BEFORE)?;
    std::fs::write(repo.join(".gitignore"), ".forgecode/\nforge.toml\n")?;
    git(repo, &["add", "-A"])?;
    git(repo, &["commit", "-q", "-m", "initial"])?;
    std::fs::write(
        repo.join("app/db.py"),
        DB_BEFORE.replace(
            "\"SELECT * FROM users WHERE name = ?\", (name,)",
            "\"SELECT * FROM users WHERE name = '\" + name + \"'\"",
        ),
    )?;
    std::fs::write(
        repo.join("app/config.py"),
        format!("AWS_ACCESS_KEY_ID = \"{KEY}\"\nBUCKET = \"users\"\n"),
    )?;
    git(repo, &["add", "-A"])?;
    git(repo, &["commit", "-q", "-m", "query users by name"])?;
    Ok(())
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}
