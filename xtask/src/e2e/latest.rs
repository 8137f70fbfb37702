//! `cargo xtask e2e --latest`: the drift job. The suite (or the chosen groups) against the
//! newest published release of every pinned CLI and ACP agent instead of the pins, so a new
//! release is known to work or known to break within a day.
//!
//! The newest versions are asked of npm (`npm view <package> version`) and installed into
//! `target/e2e/clis-latest` (kept: a later run with the same versions installs nothing).
//! Before the run the versions are printed beside the pins; after it, the event kinds each
//! CLI version produced that its decoder does not know (`unknown` events in the run
//! bundles, minus the kinds a decoder keeps raw on purpose): drift to adapt to.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use forge_cli::offline::{PINNED_ACP_AGENTS, PINNED_CLIS, PinnedCli};
use serde_json::Value;

use super::say;

/// A pinned package and the newest release npm knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Latest {
    pub pin: PinnedCli,
    pub version: String,
}

/// Every pinned CLI and agent with its newest version, asked of npm.
///
/// # Errors
/// npm missing, failing, or answering something that is not a version.
pub fn newest() -> anyhow::Result<Vec<Latest>> {
    PINNED_CLIS
        .into_iter()
        .chain(PINNED_ACP_AGENTS)
        .map(|pin| {
            let out = Command::new("npm")
                .args(["view", pin.package, "version"])
                .stdin(Stdio::null())
                .output()
                .context("running npm view (install Node.js, it ships npm)")?;
            let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            if !out.status.success() || !looks_like_version(&version) {
                bail!(
                    "npm view {} version: {} {}",
                    pin.package,
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
            Ok(Latest { pin, version })
        })
        .collect()
}

fn looks_like_version(text: &str) -> bool {
    let core = text.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Installs the versions of `latest` missing in `dir` (one `npm install`).
///
/// # Errors
/// npm failing, or a package still at another version after it.
pub fn install(dir: &Path, latest: &[Latest]) -> anyhow::Result<()> {
    let missing: Vec<String> = latest
        .iter()
        .filter(|l| l.pin.installed_version(dir).as_deref() != Some(l.version.as_str()))
        .map(|l| format!("{}@{}", l.pin.package, l.version))
        .collect();
    if missing.is_empty() {
        say(&format!("newest releases present in {}", dir.display()));
        return Ok(());
    }
    say(&format!(
        "installing {} into {}",
        missing.join(" "),
        dir.display()
    ));
    std::fs::create_dir_all(dir)?;
    let out = Command::new("npm")
        .arg("install")
        .arg("--prefix")
        .arg(dir)
        .args([
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--no-progress",
        ])
        .args(&missing)
        .stdin(Stdio::null())
        .output()
        .context("running npm install")?;
    if !out.status.success() {
        bail!(
            "npm install failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for l in latest {
        let installed = l.pin.installed_version(dir);
        if installed.as_deref() != Some(l.version.as_str()) {
            bail!(
                "{} is at {installed:?} after npm install, not {}",
                l.pin.package,
                l.version
            );
        }
    }
    Ok(())
}

/// `package  pinned  newest` lines, the changed ones marked.
pub fn versions_table(latest: &[Latest]) -> String {
    let mut out = format!("{:<34} {:>10} {:>10}\n", "package", "pinned", "newest");
    for l in latest {
        let mark = if l.pin.version == l.version {
            ""
        } else {
            "  (new)"
        };
        out.push_str(&format!(
            "{:<34} {:>10} {:>10}{mark}\n",
            l.pin.package, l.pin.version, l.version
        ));
    }
    out
}

/// The event kinds forge's decoders keep raw on purpose, per provider (as named in a run's
/// result: `claude`, `gemini-acp`, …).
fn passthrough(provider: &str) -> &'static [&'static str] {
    match provider {
        "claude" => forge_adapter_claude::PASSTHROUGH_KINDS,
        "codex" => forge_adapter_codex::PASSTHROUGH_KINDS,
        "gemini" => forge_adapter_gemini::PASSTHROUGH_KINDS,
        p if p.ends_with("-acp") => forge_adapter_acp::PASSTHROUGH_KINDS,
        _ => &[],
    }
}

/// The version each pinned CLI in `clis_dir` reports (`codex --version` → `0.170.0`), by
/// provider: what a run's result names when the CLI's stream does not (codex and gemini
/// report no version in their events).
pub fn reported_versions(clis_dir: &Path) -> BTreeMap<String, String> {
    PINNED_CLIS
        .into_iter()
        .filter_map(|pin| {
            let out = Command::new(pin.binary(clis_dir))
                .arg("--version")
                .stdin(Stdio::null())
                .output()
                .ok()?;
            let version = version_in(&String::from_utf8_lossy(&out.stdout))?;
            Some((pin.provider.to_owned(), version))
        })
        .collect()
}

/// The first word of `text` that is a version (`codex-cli 0.170.0` → `0.170.0`, a leading
/// `v` dropped).
fn version_in(text: &str) -> Option<String> {
    text.split_whitespace()
        .map(|w| w.trim_start_matches('v'))
        .find(|w| looks_like_version(w))
        .map(str::to_owned)
}

/// Unknown event kinds per `provider cli_version`, with counts, from every run bundle
/// (`.forgecode/runs/<id>/`) under `work`. A result that names no CLI version takes the
/// one its CLI reports (`reported`, by provider; an ACP provider `x-acp` by `x`).
pub fn unknown_kinds(
    work: &Path,
    reported: &BTreeMap<String, String>,
) -> BTreeMap<String, BTreeMap<String, u64>> {
    let mut out: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for entry in walkdir::WalkDir::new(work)
        .into_iter()
        .filter_map(Result::ok)
    {
        if entry.file_name() != "events.jsonl" {
            continue;
        }
        let dir = entry.path().parent().unwrap_or(work);
        let result: Value = std::fs::read_to_string(dir.join("result.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Value::Null);
        let provider = result["provider"].as_str().unwrap_or("?").to_owned();
        let version = result
            .pointer("/metadata/cli_version")
            .and_then(Value::as_str)
            .or_else(|| {
                let cli = provider.strip_suffix("-acp").unwrap_or(&provider);
                reported.get(cli).map(String::as_str)
            })
            .unwrap_or("?");
        let label = format!("{provider} {version}");
        let kinds = out.entry(label).or_default();
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        for line in text.lines() {
            let Ok(event) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if event["type"] != "unknown" {
                continue;
            }
            let kind = event["kind"].as_str().unwrap_or("?");
            if !passthrough(&provider).contains(&kind) {
                *kinds.entry(kind.to_owned()).or_default() += 1;
            }
        }
    }
    out
}

/// The drift report: one line per CLI version, its unknown kinds or `none`.
pub fn drift_table(kinds: &BTreeMap<String, BTreeMap<String, u64>>) -> String {
    let mut out = String::from("unknown event kinds per CLI version (drift):\n");
    for (label, counts) in kinds {
        let shown = if counts.is_empty() {
            "none".to_owned()
        } else {
            counts
                .iter()
                .map(|(k, n)| format!("{k} ×{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(&format!("  {label:<28} {shown}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_checked() {
        let check = |text: &str, ok: bool| assert_eq!(looks_like_version(text), ok, "{text:?}");
        check("0.61.0", true);
        check("2.1.330", true);
        check("1.0.0-beta.1", true);
        check("", false);
        check("npm ERR! 404", false);
        check("1.2", false);
        check("v1.2.3", false);
    }

    #[test]
    fn the_version_a_cli_reports() {
        let check = |text: &str, want: Option<&str>| {
            assert_eq!(version_in(text).as_deref(), want, "{text:?}");
        };
        check("codex-cli 0.170.0\n", Some("0.170.0"));
        check("0.62.1\n", Some("0.62.1"));
        check("2.1.331 (Claude Code)\n", Some("2.1.331"));
        check("v1.2.3", Some("1.2.3"));
        // Look-alikes that name no version.
        check("codex-cli\n", None);
        check("error: 1.2\n", None);
        check("", None);
    }

    #[test]
    fn drift_is_counted_per_version_without_passthrough_kinds() {
        let dir = std::env::temp_dir().join(format!("forge-drift-{}", std::process::id()));
        let bundle = |name: &str, provider: &str, version: &str, events: &[&str]| {
            let d = dir.join(name).join(".forgecode/runs/r1");
            std::fs::create_dir_all(&d).unwrap();
            let result =
                serde_json::json!({"provider": provider, "metadata": {"cli_version": version}});
            std::fs::write(d.join("result.json"), result.to_string()).unwrap();
            std::fs::write(d.join("events.jsonl"), events.join("\n")).unwrap();
        };
        bundle(
            "a",
            "claude",
            "2.2.0",
            &[
                r#"{"type":"text","text":"hi","delta":false}"#,
                r#"{"type":"unknown","kind":"system/new_thing","raw":{}}"#,
                r#"{"type":"unknown","kind":"system/new_thing","raw":{}}"#,
                r#"{"type":"unknown","kind":"system/status","raw":{}}"#,
            ],
        );
        bundle(
            "b",
            "gemini-acp",
            "0.62.0",
            &[r#"{"type":"unknown","kind":"available_commands_update","raw":{}}"#],
        );
        // codex names no version in its stream: the one it reports is shown.
        let d = dir.join("c/.forgecode/runs/r1");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("result.json"),
            r#"{"provider":"codex","metadata":{}}"#,
        )
        .unwrap();
        std::fs::write(d.join("events.jsonl"), "").unwrap();
        let reported: BTreeMap<String, String> = [("codex".to_owned(), "0.170.0".to_owned())]
            .into_iter()
            .collect();
        let table = drift_table(&unknown_kinds(&dir, &reported));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            table,
            "unknown event kinds per CLI version (drift):\n  claude 2.2.0                 \
             system/new_thing ×2\n  codex 0.170.0                none\n  \
             gemini-acp 0.62.0            none\n"
        );
    }
}
