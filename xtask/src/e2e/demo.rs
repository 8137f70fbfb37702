//! `cargo xtask e2e` demo group: the README's first command, `forge-code-agent demo`, with
//! the real claude, codex and gemini. Each provider's task (the built-in `task_fix_cycle`
//! on a scratch repository) must end committed after two cycles in one resumed session,
//! with a low risk and a cost, the closing table must say so, and the scratch directories
//! must be gone afterwards. With gemini, the demo ends with one prompt through `gemini --acp`
//! as a `kind = "acp"` provider, which must succeed and write its file (gemini's verdict).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use super::case_run::{isolate_env, run_with_watchdog};
use super::summary::Verdict;
use super::{Ctx, PROVIDERS, say};

/// Three providers one after the other, each a task of two agent runs and validations.
const LIMIT: Duration = Duration::from_secs(600);

/// Runs the demo for the selected providers (all three in one demo when none is left out);
/// a verdict per provider: its row of the table, and what the whole demo run must show.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    let (suite, providers) = (&ctx.suite, &ctx.providers);
    let all = providers.len() == PROVIDERS.len();
    let runs: Vec<Option<&'static str>> = if all {
        vec![None]
    } else {
        providers.iter().map(|p| Some(*p)).collect()
    };
    let mut verdicts = Vec::new();
    for only in runs {
        let started = Instant::now();
        let cache = suite.work.join("demo").join(only.unwrap_or("all"));
        std::fs::create_dir_all(&cache)?;
        let mut command = Command::new(&suite.forge);
        command.arg("demo");
        if let Some(p) = only {
            command.args(["--provider", p]);
        }
        isolate_env(&mut command, suite);
        // Not under /tmp: codex refuses to set up its helpers there.
        command
            .env("FORGE_CLIS_DIR", &suite.clis)
            .env("XDG_CACHE_HOME", &cache);
        let output = run_with_watchdog(command, LIMIT)?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let mut f = Vec::new();
        if output.status.code() != Some(0) {
            f.push(format!("exit {:?}", output.status.code()));
        }
        if !stderr.contains("correction") {
            f.push("no `correction` stage in the progress (stderr)".into());
        }
        check_clean(&cache, &mut f);
        let seconds = started.elapsed().as_secs_f64();
        let expected: Vec<&'static str> = only.map_or(PROVIDERS.to_vec(), |p| vec![p]);
        let mut failed = !f.is_empty();
        for provider in expected {
            let mut row = f.clone();
            check_row(&stdout, provider, &mut row);
            if provider == "gemini" && !stdout.contains(ACP_LINE) {
                row.push(format!(
                    "no `{ACP_LINE}` line: the ACP act failed or was skipped"
                ));
            }
            failed |= row.len() > f.len();
            if !row.is_empty() {
                row = vec![format!(
                    "{}\n--- stdout\n{stdout}\n--- stderr (tail)\n{}",
                    row.join("; "),
                    tail(&stderr)
                )];
            }
            verdicts.push(Verdict {
                seconds,
                failures: row,
                ..Verdict::new("demo", provider)
            });
        }
        say(&format!(
            "demo {:<7} {} ({seconds:.1}s)",
            only.unwrap_or("all"),
            if failed { "FAILED" } else { "ok" }
        ));
        for line in stdout.lines().skip_while(|l| !l.starts_with("provider")) {
            say(&format!("  {line}"));
        }
    }
    Ok(verdicts)
}

/// What the demo prints when its `gemini --acp` run succeeded.
const ACP_LINE: &str = "gemini-acp through ACP: success, wrote hello.txt";

/// `claude  committed  2  yes  1/10  $0.0123  14.2  forge/<id> @ <commit>`.
fn check_row(stdout: &str, provider: &str, f: &mut Vec<String>) {
    // The table's row, not the report's `claude implement · model …` line above it.
    let Some(row) = stdout
        .lines()
        .skip_while(|l| !l.starts_with("provider "))
        .find(|l| l.split_whitespace().next() == Some(provider))
    else {
        f.push(format!("{provider}: no row in the table"));
        return;
    };
    let cells: Vec<&str> = row.split_whitespace().collect();
    let cell = |i: usize| cells.get(i).copied().unwrap_or("");
    let mut expect = |what: &str, ok: bool| {
        if !ok {
            f.push(format!("{provider}: {what}: {row}"));
        }
    };
    expect("committed", cell(1) == "committed");
    expect("2 cycles", cell(2) == "2");
    expect("same session resumed", cell(3) == "yes");
    let risk: Option<u8> = cell(4).strip_suffix("/10").and_then(|r| r.parse().ok());
    expect("low risk", risk.is_some_and(|r| r < 3));
    let cost: f64 = cell(5)
        .strip_prefix('$')
        .and_then(|c| c.parse().ok())
        .unwrap_or(0.0);
    expect("a cost", cost > 0.0);
    expect(
        "a commit on forge/<task-id>",
        cell(7).starts_with("forge/") && cell(8) == "@" && cell(9).len() >= 7,
    );
}

/// The demo removes its scratch repositories (and their work trees) when it ends.
fn check_clean(cache: &Path, f: &mut Vec<String>) {
    let left: Vec<_> = std::fs::read_dir(cache.join("forge-code-agent/demo"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    if !left.is_empty() {
        f.push(format!("scratch directories left behind: {left:?}"));
    }
}

fn tail(text: &str) -> &str {
    let mut start = text.len().saturating_sub(3000);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}
