//! The review use case over real git and the real process runner, with the `echo` provider
//! pointed at a shell script standing in for the agent: it answers with the reply files the
//! test wrote (the second one when asked again), and logs where it ran.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use forge_adapter_fs::{FsArtifactStore, FsWorkspace};
use forge_adapter_git::GitCli;
use forge_adapter_process::TokioProcessRunner;
use forge_app::review::{ReviewPorts, ReviewRequest, Reviewer};
use forge_app::{CodeAgent, Runtime};
use forge_domain::review::{
    FailOn, FindingSource, Placement, ReviewOutcome, ReviewSeverity, ReviewStatus, exit_code,
};
use forge_domain::task::review::ReviewLimits;
use forge_domain::{ForgeError, ProviderId, Redactor};
use forge_ports::{KillLadder, ProcessRunner, ProviderSettings};
use forge_testkit::fakes::{RecordingLogger, RecordingMetrics};

use super::harness::registry;

const AGENT: &str = r#"#!/bin/sh
prompt=$(cat)
echo "$PWD" >> "$LOG"
printf '%s\n---\n' "$prompt" >> "$LOG.prompts"
echo '{"type":"session","id":"s-1"}'
case "$prompt" in
  *"could not be read"*) cat "$REPLIES/second.jsonl" ;;
  *) cat "$REPLIES/first.jsonl" ;;
esac
if [ -f "$REPLIES/hang" ]; then exec sleep 60; fi
if [ -f "$REPLIES/stderr.txt" ]; then cat "$REPLIES/stderr.txt" >&2; exit 1; fi
"#;

const DB_BEFORE: &str = "import sqlite3\n\n\ndef find(cur, name):\n    # Look the user up.\n    cur.execute(\"SELECT * FROM users WHERE name = ?\", (name,))\n    return cur.fetchone()\n\n\ndef close(cur):\n    cur.close()\n    return None\n";

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "git {args:?}");
}

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    repo: PathBuf,
    agent: PathBuf,
    replies: PathBuf,
}

/// A repository whose last commit adds an AWS key and builds SQL by concatenation.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let repo = root.join("repo");
    std::fs::create_dir_all(repo.join("app")).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("app/db.py"), DB_BEFORE).unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "initial"]);
    std::fs::write(
        repo.join("app/db.py"),
        DB_BEFORE.replace(
            "\"SELECT * FROM users WHERE name = ?\", (name,)",
            "\"SELECT * FROM users WHERE name = '\" + name + \"'\"",
        ),
    )
    .unwrap();
    std::fs::write(
        repo.join("app/config.py"),
        "AWS_ACCESS_KEY_ID = \"AKIAZ7Q4R2W9X3YT5PLM\"\n",
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "query by name"]);
    let agent = root.join("agent.sh");
    std::fs::write(&agent, AGENT).unwrap();
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
    let replies = root.join("replies");
    std::fs::create_dir_all(&replies).unwrap();
    Fixture {
        _dir: dir,
        root,
        repo,
        agent,
        replies,
    }
}

/// The agent's answer as the echo protocol's result line.
fn reply(text: &str) -> String {
    format!(
        "{}\n",
        serde_json::json!({"type": "result", "ok": true, "text": text, "cost_usd": 0.01})
    )
}

const GOOD: &str = r#"Reviewed.

```json
{"findings": [
 {"path": "app/db.py", "line": 6, "end_line": 6, "severity": "high", "title": "SQL built by concatenation", "body": "Injection via name; the key AKIAZ7Q4R2W9X3YT5PLM must go too.", "suggestion": "    cur.execute(\"SELECT * FROM users WHERE name = ?\", (name,))"},
 {"path": "app/db.py", "line": 12, "severity": "low", "title": "close returns None explicitly", "body": "", "suggestion": null},
 {"path": "app/other.py", "line": 3, "severity": "medium", "title": "not in the change", "body": ""},
 {"path": "../outside", "line": 1, "severity": "high", "title": "hostile", "body": ""}
]}
```"#;

fn reviewer(f: &Fixture) -> Reviewer {
    let runner: Arc<dyn ProcessRunner> = Arc::new(TokioProcessRunner::new());
    let runtime = Runtime {
        runner: Arc::clone(&runner),
        workspace: Arc::new(FsWorkspace::new()),
        artifacts: Arc::new(FsArtifactStore::new(Redactor::new())),
        vcs: None,
        logger: Arc::new(RecordingLogger::default()),
        metrics: Arc::new(RecordingMetrics::default()),
        clock: Arc::new(forge_adapter_telemetry::SystemClock::new()),
        ids: Arc::new(forge_adapter_telemetry::UuidV7Ids::new()),
    };
    let settings = ProviderSettings {
        binary: Some(f.agent.clone()),
        env: [
            (
                "LOG".to_owned(),
                f.root.join("agent.log").display().to_string(),
            ),
            ("REPLIES".to_owned(), f.replies.display().to_string()),
        ]
        .into_iter()
        .collect(),
        ..ProviderSettings::default()
    };
    let agent = CodeAgent::builder(runtime, registry())
        .provider("echo")
        .provider_settings("echo", settings)
        .kill_ladder(KillLadder {
            interrupt_grace: std::time::Duration::from_millis(100),
            terminate_grace: std::time::Duration::from_millis(100),
        })
        .build()
        .unwrap();
    Reviewer::new(
        agent,
        ReviewPorts {
            vcs: Arc::new(GitCli::new(runner)),
            redactor: Redactor::new(),
        },
    )
}

fn request(f: &Fixture, base: &str) -> ReviewRequest {
    let provider = ProviderId::new("echo").unwrap();
    ReviewRequest {
        repo: f.repo.clone(),
        base: base.to_owned(),
        head: "HEAD".to_owned(),
        template: forge_domain::ExecutionRequest::new(provider, "", &f.repo),
        tree: f.root.join("review-tree"),
        runs_dir: Some(f.root.join("reviews/runs")),
        max_cost_usd: None,
        prompt_budget_chars: 60_000,
        limits: ReviewLimits::default(),
    }
}

async fn review(f: &Fixture, base: &str) -> Result<ReviewOutcome, ForgeError> {
    reviewer(f)
        .run(request(f, base), &Reviewer::canceller())
        .await
}

fn write(f: &Fixture, name: &str, text: &str) {
    std::fs::write(f.replies.join(name), text).unwrap();
}

fn agent_dirs(f: &Fixture) -> Vec<String> {
    std::fs::read_to_string(f.root.join("agent.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn rule_and_agent_findings_placed_in_the_diff_and_the_key_never_shown() {
    let f = fixture();
    write(&f, "first.jsonl", &reply(GOOD));
    let outcome = review(&f, "HEAD~1").await.unwrap();
    assert_eq!(outcome.status, ReviewStatus::Completed);
    let got: Vec<(&str, Option<u32>, ReviewSeverity, FindingSource, Placement)> = outcome
        .findings
        .iter()
        .map(|p| {
            (
                p.finding.path.as_str(),
                p.finding.line,
                p.finding.severity,
                p.finding.source,
                p.placement,
            )
        })
        .collect();
    use FindingSource::*;
    use Placement::*;
    use ReviewSeverity::*;
    assert_eq!(
        got,
        vec![
            ("app/config.py", Some(1), Critical, Rule, Inline),
            ("app/db.py", Some(6), High, Agent, Inline),
            ("app/db.py", Some(12), Low, Agent, OutsideHunks),
            ("app/other.py", Some(3), Medium, Agent, NotInChange),
        ]
    );
    assert_eq!(outcome.rejected.len(), 1, "{:?}", outcome.rejected);
    assert_eq!(exit_code(&outcome, FailOn::default(), false), 1);
    let text = serde_json::to_string(&outcome).unwrap();
    assert!(!text.contains("AKIAZ7Q4R2W9X3YT5PLM"), "{text}");
    // The agent ran once, in the review's own tree (gone now), never in the checkout.
    let dirs = agent_dirs(&f);
    assert_eq!(dirs, vec![f.root.join("review-tree").display().to_string()]);
    assert!(!f.root.join("review-tree").exists());
    // Its run's bundle was kept out of the tree, under the run's id.
    assert_eq!(outcome.runs.len(), 1);
    let bundle = f.root.join("reviews/runs").join(&outcome.runs[0]);
    assert!(
        bundle.join("events.jsonl").is_file(),
        "{}",
        bundle.display()
    );
    // ... and was not shown the key either.
    let prompts = std::fs::read_to_string(f.root.join("agent.log.prompts")).unwrap();
    assert!(prompts.contains("SELECT * FROM users WHERE name = '"));
    assert!(!prompts.contains("AKIAZ7Q4R2W9X3YT5PLM"));
    assert!((outcome.cost_usd - 0.01).abs() < 1e-9);
}

#[tokio::test]
async fn an_unreadable_answer_is_asked_again_once_then_partial() {
    let f = fixture();
    write(&f, "first.jsonl", &reply("Looks fine to me."));
    write(
        &f,
        "second.jsonl",
        &reply("Still no block, sorry: {\"findings\": [tru"),
    );
    let outcome = review(&f, "HEAD~1").await.unwrap();
    assert_eq!(outcome.status, ReviewStatus::Partial);
    assert_eq!(agent_dirs(&f).len(), 2, "one follow-up");
    assert_eq!(outcome.findings.len(), 1, "the rule finding stays");
    assert_eq!(outcome.findings[0].finding.source, FindingSource::Rule);
    assert!(
        outcome
            .raw_answer
            .as_deref()
            .unwrap()
            .contains("Still no block")
    );
    assert_eq!(exit_code(&outcome, FailOn::default(), false), 3);
    assert!(
        outcome.notices.iter().any(|n| n.contains("truncated")),
        "{:?}",
        outcome.notices
    );
}

#[tokio::test]
async fn a_follow_up_that_answers_completes_the_review() {
    let f = fixture();
    write(&f, "first.jsonl", &reply("I found one problem in db.py."));
    write(&f, "second.jsonl", &reply(GOOD));
    let outcome = review(&f, "HEAD~1").await.unwrap();
    assert_eq!(outcome.status, ReviewStatus::Completed);
    assert_eq!(agent_dirs(&f).len(), 2);
    assert_eq!(outcome.runs.len(), 2);
    assert!((outcome.cost_usd - 0.02).abs() < 1e-9);
}

#[tokio::test]
async fn a_rate_limit_skips_the_agent_and_keeps_the_rule_findings() {
    let f = fixture();
    write(
        &f,
        "first.jsonl",
        "{\"type\":\"result\",\"ok\":false,\"text\":\"API Error: 429 rate_limit_error\"}\n",
    );
    write(
        &f,
        "stderr.txt",
        "API Error: 429 {\"type\":\"rate_limit_error\"}\n",
    );
    let outcome = review(&f, "HEAD~1").await.unwrap();
    assert_eq!(
        outcome.status,
        ReviewStatus::Skipped,
        "{:?}",
        outcome.notices
    );
    assert_eq!(outcome.findings.len(), 1);
    assert_eq!(exit_code(&outcome, FailOn::default(), false), 0);
    assert_eq!(exit_code(&outcome, FailOn::default(), true), 1);
    assert!(!f.root.join("review-tree").exists());
}

/// A secret of no known token shape, found by the assigned-value rule: neither the agent's
/// prompt nor the outcome (where the agent quotes it) shows it.
#[tokio::test]
async fn a_secret_the_rules_found_is_masked_where_the_agent_repeats_it() {
    let f = fixture();
    let secret = "h7Gk2Lq9Xz4Vb1Nm";
    std::fs::write(
        f.repo.join("app/settings.py"),
        format!("DB_PASSWORD = \"{secret}\"\n"),
    )
    .unwrap();
    git(&f.repo, &["add", "-A"]);
    git(&f.repo, &["commit", "-q", "-m", "settings"]);
    let answer = format!(
        "```json\n{}\n```",
        serde_json::json!({"findings": [{"path": "app/settings.py", "line": 1,
            "severity": "high", "title": format!("hard-coded password {secret}"),
            "body": format!("`DB_PASSWORD = \"{secret}\"` must come from the environment"),
            "suggestion": "DB_PASSWORD = os.environ[\"DB_PASSWORD\"]"}]})
    );
    write(&f, "first.jsonl", &reply(&answer));
    let outcome = review(&f, "HEAD~1").await.unwrap();
    assert_eq!(
        outcome.status,
        ReviewStatus::Completed,
        "{:?}",
        outcome.notices
    );
    assert!(
        outcome
            .findings
            .iter()
            .any(|p| p.finding.rule.as_deref() == Some("secret.assigned_value")),
        "{:?}",
        outcome.findings
    );
    let text = serde_json::to_string(&outcome).unwrap();
    assert!(!text.contains(secret), "{text}");
    assert!(text.contains("[REDACTED]"), "{text}");
    let prompts = std::fs::read_to_string(f.root.join("agent.log.prompts")).unwrap();
    assert!(!prompts.contains(secret));
}

/// A CLI that retries a rate limit without end (gemini 0.61) is stopped at its second
/// rate-limited retry and the review skipped, not left to run until its timeout.
#[tokio::test]
async fn a_cli_retrying_a_rate_limit_is_stopped_and_the_review_skipped() {
    let f = fixture();
    let retry =
        r#"{"type":"retry","rate_limited":true,"message":"Attempt 1 failed with status 429"}"#;
    let blip =
        r#"{"type":"retry","rate_limited":false,"message":"Attempt 1 failed with 5xx error"}"#;
    write(&f, "first.jsonl", &format!("{blip}\n{retry}\n{retry}\n"));
    write(&f, "hang", "");
    let outcome = review(&f, "HEAD~1").await.unwrap();
    assert_eq!(
        outcome.status,
        ReviewStatus::Skipped,
        "{:?}",
        outcome.notices
    );
    assert!(
        outcome
            .notices
            .iter()
            .any(|n| n.contains("forge stopped it") && n.contains("429")),
        "{:?}",
        outcome.notices
    );
    assert_eq!(outcome.findings.len(), 1, "the rule finding is kept");
    assert_eq!(exit_code(&outcome, FailOn::default(), false), 0);
}

/// One rate-limited retry is a blip the CLI may ride out: the review goes on.
#[tokio::test]
async fn one_rate_limited_retry_does_not_skip_the_review() {
    let f = fixture();
    let retry =
        r#"{"type":"retry","rate_limited":true,"message":"Attempt 1 failed with status 429"}"#;
    write(&f, "first.jsonl", &format!("{retry}\n{}", reply(GOOD)));
    let outcome = review(&f, "HEAD~1").await.unwrap();
    assert_eq!(
        outcome.status,
        ReviewStatus::Completed,
        "{:?}",
        outcome.notices
    );
}

#[tokio::test]
async fn bad_revisions_and_an_empty_change() {
    let f = fixture();
    let err = review(&f, "no-such-branch").await.unwrap_err();
    assert!(
        matches!(&err, ForgeError::InvalidRequest { reason } if reason.contains("--base no-such-branch names no commit")),
        "{err}"
    );
    let outcome = review(&f, "HEAD").await.unwrap();
    assert_eq!(outcome.status, ReviewStatus::Completed);
    assert!(outcome.findings.is_empty());
    assert!(agent_dirs(&f).is_empty(), "no agent for an empty change");
}

#[tokio::test]
async fn a_large_change_is_reviewed_in_parts() {
    let f = fixture();
    write(
        &f,
        "first.jsonl",
        &reply("```json\n{\"findings\": []}\n```"),
    );
    let mut req = request(&f, "HEAD~1");
    req.prompt_budget_chars = 200;
    let outcome = reviewer(&f).run(req, &Reviewer::canceller()).await.unwrap();
    assert_eq!(outcome.chunks, 2);
    assert_eq!(agent_dirs(&f).len(), 2);
    assert_eq!(outcome.status, ReviewStatus::Completed);
}

#[tokio::test]
async fn the_cost_ceiling_stops_before_the_next_part() {
    let f = fixture();
    write(
        &f,
        "first.jsonl",
        &reply("```json\n{\"findings\": []}\n```"),
    );
    let mut req = request(&f, "HEAD~1");
    req.prompt_budget_chars = 200;
    req.max_cost_usd = Some(0.005);
    let outcome = reviewer(&f).run(req, &Reviewer::canceller()).await.unwrap();
    assert_eq!(agent_dirs(&f).len(), 1);
    assert_eq!(outcome.status, ReviewStatus::Partial);
    assert!(
        outcome.notices.iter().any(|n| n.contains("--max-cost-usd")),
        "{:?}",
        outcome.notices
    );
}
