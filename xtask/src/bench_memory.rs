//! `cargo xtask bench --memory`: peak resident memory of `forge-code-agent run` against the
//! line length, on the fake CLI replaying a transcript (Claude's, then Codex's and Gemini's)
//! whose answer text is one huge line. Not a timed test: it prints the peak, the ratio (peak − baseline) / line, and
//! the marginal ratio between successive lengths (Δpeak / Δline, the constant cancelled);
//! the target is at most 2 (one copy of the line in the result's raw events, one in the
//! decoded text) plus a constant.
//!
//! Peak RSS comes from `wait4`'s rusage. Its `ru_maxrss` is the largest of the process and
//! the descendants it waited for, so the fake CLI (which reads the transcript whole) is
//! measured alone too and printed beside it.
#![expect(
    unsafe_code,
    reason = "wait4 is the one call that gives a child's peak resident set"
)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

use crate::e2e::say;

/// Line lengths measured, MiB (0: the baseline, a plain short answer); under the 64 MiB line
/// cap, past which a line is skipped, not kept.
const LINE_MIB: [usize; 4] = [0, 12, 25, 50];
const MIB: usize = 1024 * 1024;

/// A recorded transcript and where its answer text is: the line that starts with `line`, at
/// the JSON pointer `text`.
struct Format {
    provider: &'static str,
    fixture: &'static str,
    line: &'static str,
    text: &'static str,
}

/// Claude first: the held-out check is a Claude-format line.
const FORMATS: [Format; 3] = [
    Format {
        provider: "claude",
        fixture: "adapters/testkit/fixtures/claude/2.1.330/hello.jsonl",
        line: r#"{"type":"assistant""#,
        text: "/message/content/0/text",
    },
    Format {
        provider: "codex",
        fixture: "adapters/testkit/fixtures/codex/0.169.0/hello.jsonl",
        line: r#"{"type":"item.completed""#,
        text: "/item/text",
    },
    Format {
        provider: "gemini",
        fixture: "adapters/testkit/fixtures/gemini/0.61.0/hello.jsonl",
        line: r#"{"type":"message","timestamp":"2026-11-21T23:41:30.698Z","role":"assistant""#,
        text: "/content",
    },
];

pub fn run(root: &Path) -> anyhow::Result<()> {
    say("cargo build -p forge-cli -p forge-testkit --bins");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "-p", "forge-cli", "-p", "forge-testkit", "--bins"])
        .current_dir(root)
        .status()
        .context("building the binaries")?;
    if !status.success() {
        bail!("cargo build failed ({status})");
    }
    let bin = root.join("target/debug");
    let (forge, fake) = (bin.join("forge-code-agent"), bin.join("fake-agent-cli"));
    let work = root.join("target/bench-memory");
    std::fs::create_dir_all(work.join("ws"))?;
    std::fs::write(work.join("none.toml"), "")?;

    let mut out = String::new();
    for format in &FORMATS {
        let fixture = std::fs::read_to_string(root.join(format.fixture))
            .with_context(|| format!("the {} fixture", format.provider))?;
        let mut rows = Vec::new();
        for mib in LINE_MIB {
            let transcript = work.join(format!("huge-{}-{mib}.jsonl", format.provider));
            let line_bytes = write_transcript(&fixture, format, mib * MIB, &transcript)?;
            let replay = format!("FAKE_REPLAY={}", transcript.display());
            let mut forge_run = Command::new(&forge);
            forge_run
                .args(["run", "--provider", format.provider, "--json", "--binary"])
                .arg(&fake)
                .args(["--env", &replay, "--workdir"])
                .arg(work.join("ws"))
                .arg("say hello")
                .env("FORGE_CONFIG", work.join("none.toml"))
                .env("NO_COLOR", "1");
            let forge_kib = peak_kib(forge_run)?;
            let mut fake_run = Command::new(&fake);
            fake_run.env("FAKE_REPLAY", &transcript);
            let fake_kib = peak_kib(fake_run)?;
            rows.push((line_bytes, forge_kib, fake_kib));
        }
        out.push_str(&table(format.provider, &rows));
    }
    out.push_str("target: at most 2 x the line plus a constant (Δpeak/Δline <= 2)\n");
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    Ok(())
}

/// One provider's rows: (line bytes, forge's peak KiB, the fake CLI's peak KiB).
fn table(provider: &str, rows: &[(usize, usize, usize)]) -> String {
    let base = rows.first().map_or(0, |r| r.1);
    let mut out = format!(
        "\npeak resident memory of `run --json` on one huge answer line ({provider} format, fake CLI)\n"
    );
    out.push_str(&format!(
        "{:>10} {:>12} {:>16} {:>16} {:>14}\n",
        "line MiB", "peak MiB", "(peak-base)/line", "Δpeak/Δline", "fake CLI MiB"
    ));
    let mut previous: Option<(usize, usize)> = None;
    for (line, forge_kib, fake_kib) in rows {
        let marginal = match previous {
            Some((prev_line, prev_kib)) if *line > prev_line => format!(
                "{:.2}",
                (forge_kib.saturating_sub(prev_kib) * 1024) as f64 / (*line - prev_line) as f64
            ),
            _ => "-".to_owned(),
        };
        previous = Some((*line, *forge_kib));
        let ratio = if *line > 1024 {
            format!(
                "{:.2}",
                (forge_kib.saturating_sub(base) * 1024) as f64 / *line as f64
            )
        } else {
            "baseline".to_owned()
        };
        out.push_str(&format!(
            "{:>10.1} {:>12.1} {:>16} {:>16} {:>14.1}\n",
            *line as f64 / MIB as f64,
            *forge_kib as f64 / 1024.0,
            ratio,
            marginal,
            *fake_kib as f64 / 1024.0,
        ));
    }
    out
}

/// Writes the fixture with its answer text replaced by `text_bytes` of text; returns the
/// length of that line. Streamed in pieces: this process must stay small, because a child
/// starts with its parent's peak resident set as its own (`vfork`, then `exec`).
fn write_transcript(
    fixture: &str,
    format: &Format,
    text_bytes: usize,
    path: &PathBuf,
) -> anyhow::Result<usize> {
    const PLACEHOLDER: &str = "@@HUGE@@";
    // Varied text with escapes, as a model writes: JSON-escaped on the line.
    const UNIT: &str = "a long answer line with \"quotes\" and\ttabs\n";
    let escaped_unit = serde_json::to_string(UNIT)?;
    let escaped_unit = &escaped_unit[1..escaped_unit.len() - 1];
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut line_bytes = 0;
    for line in fixture.lines() {
        if text_bytes > 0 && line_bytes == 0 && line.starts_with(format.line) {
            let mut value: serde_json::Value = serde_json::from_str(line)?;
            *value
                .pointer_mut(format.text)
                .context("the answer text is where the format says")? =
                serde_json::Value::String(PLACEHOLDER.into());
            let template = value.to_string();
            let (before, after) = template
                .split_once(PLACEHOLDER)
                .context("the placeholder is in the line")?;
            out.write_all(before.as_bytes())?;
            let units = text_bytes / UNIT.len() + 1;
            for _ in 0..units {
                out.write_all(escaped_unit.as_bytes())?;
            }
            out.write_all(after.as_bytes())?;
            line_bytes = before.len() + units * escaped_unit.len() + after.len();
        } else {
            out.write_all(line.as_bytes())?;
        }
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(line_bytes)
}

/// Runs `command` to its end (output discarded) and returns its peak RSS in KiB.
fn peak_kib(mut command: Command) -> anyhow::Result<usize> {
    let shown = format!("{command:?}");
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("spawning the measured process")?;
    let pid = libc::pid_t::try_from(child.id())?;
    let mut status = 0;
    // SAFETY: zeroed rusage is a valid value; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, writing into the two locals.
    let rc = unsafe { libc::wait4(pid, &raw mut status, 0, &raw mut usage) };
    if rc != pid {
        bail!("wait4 failed: {}", std::io::Error::last_os_error());
    }
    if status != 0 {
        bail!("{shown} failed (wait status {status})");
    }
    Ok(usize::try_from(usage.ru_maxrss).unwrap_or(0))
}
