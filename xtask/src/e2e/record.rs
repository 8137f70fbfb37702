//! `--record`: a passing case's real transcript becomes a fixture,
//! `adapters/testkit/fixtures/<cli>/<version>/<scenario>.{jsonl,stderr.txt,meta.json}`, with
//! machine-specific values replaced by `<WORKDIR>`, `<HOME>`, `<PORT>`, `<TMPDIR>` and
//! `<CLIS_DIR>` (the decoder tests snapshot every fixture).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;
use forge_cli::offline::PinnedCli;
use serde_json::{Value, json};

use super::capture::{self, Captured};
use super::case_run::{CaseDir, Run, run_dirs};
use super::cases::Expect;

/// What is known about the case being recorded.
pub struct Recording<'a> {
    pub expect: &'a Expect,
    pub provider: &'a str,
    pub prompt: &'a str,
    pub description: &'a str,
    pub case: &'a CaseDir,
    pub run: &'a Run,
    pub port: &'a str,
    pub clis: &'a Path,
}

/// The fixture directory of `provider`'s pinned version.
pub fn fixture_dir(root: &Path, cli: &PinnedCli) -> PathBuf {
    root.join("adapters/testkit/fixtures")
        .join(cli.provider)
        .join(cli.version)
}

/// Whether the adapter keeps its own recording of that name (under its
/// `tests/transcripts/<version>/`): its tests read both sets, so a shared fixture of the same
/// name would give two snapshots one name.
pub fn adapter_keeps_own(root: &Path, cli: &PinnedCli, scenario: &str) -> bool {
    root.join("adapters")
        .join(cli.provider)
        .join("tests/transcripts")
        .join(cli.version)
        .join(format!("{scenario}.jsonl"))
        .exists()
}

/// Writes the three files; returns the `.jsonl` path.
pub fn write(root: &Path, rec: &Recording<'_>) -> anyhow::Result<PathBuf> {
    let cli = PinnedCli::of(rec.provider).context("unknown provider")?;
    let run_dir = run_dirs(&rec.case.workspace)
        .pop()
        .context("the run left no bundle")?;
    let captured = capture::read(&rec.case.root).unwrap_or_default();
    let home = run_home(&run_dir);
    let placeholders = Placeholders::new(rec, &home, &captured);
    let read = |name: &str| std::fs::read_to_string(run_dir.join(name)).unwrap_or_default();
    let dir = fixture_dir(root, &cli);
    std::fs::create_dir_all(&dir)?;
    let base = dir.join(rec.expect.scenario);
    let stdout = placeholders.apply(&read("stdout.log"));
    std::fs::write(base.with_extension("jsonl"), stdout)?;
    std::fs::write(
        base.with_extension("stderr.txt"),
        placeholders.apply(&read("stderr.log")),
    )?;
    let meta = meta(rec, &cli, &home, &captured, &placeholders);
    let text = serde_json::to_string_pretty(&meta)? + "\n";
    std::fs::write(base.with_extension("meta.json"), text)?;
    Ok(base.with_extension("jsonl"))
}

/// The CLI home the run used, from its `run.json` (a resumed run uses its first run's home).
fn run_home(run_dir: &Path) -> PathBuf {
    std::fs::read_to_string(run_dir.join("run.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|run| run.get("home")?.as_str().map(PathBuf::from))
        .unwrap_or_else(|| run_dir.join("home"))
}

fn meta(
    rec: &Recording<'_>,
    cli: &PinnedCli,
    home: &Path,
    captured: &Captured,
    placeholders: &Placeholders,
) -> Value {
    let result = rec.run.result.clone().unwrap_or(Value::Null);
    let program = format!("<CLIS_DIR>/node_modules/.bin/{}", cli.provider);
    let argv: Vec<String> = std::iter::once(program)
        .chain(captured.args.iter().map(|a| placeholders.apply(a)))
        .collect();
    let env: serde_json::Map<String, Value> = capture::set_by_forge(&captured.env)
        .into_iter()
        .map(|(k, v)| (k, Value::String(placeholders.apply(&v))))
        .collect();
    let mut config_files = serde_json::Map::new();
    for (rel, is_json) in [
        (".codex/config.toml", false),
        (".gemini/settings.json", true),
    ] {
        let Ok(text) = std::fs::read_to_string(home.join(rel)) else {
            continue;
        };
        let value = if is_json {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        } else {
            Value::String(placeholders.apply(&text))
        };
        config_files.insert(format!("<HOME>/{rel}"), value);
    }
    json!({
        "cli": cli.provider,
        "cli_version": cli_version(&rec.clis.join("node_modules/.bin").join(cli.provider)),
        "scenario": rec.expect.scenario,
        "description": rec.description,
        "prompt": rec.prompt,
        "argv": argv,
        "cwd": "<WORKDIR>",
        "env": env,
        "config_files": config_files,
        "exit_code": result.pointer("/metadata/exit_code"),
        "duration_s": result.pointer("/metadata/duration_ms").and_then(Value::as_f64).map(|ms| ms / 1000.0),
        "workspace": { "files": workspace_files(&rec.case.workspace) },
        "recorded_by": "cargo xtask e2e --record (through forge-code-agent run)",
    })
}

fn cli_version(binary: &Path) -> String {
    Command::new(binary)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// The agent's files (forge's `forge.toml` and `.forgecode/` aside), with size, sha256 and
/// content.
fn workspace_files(workspace: &Path) -> Vec<Value> {
    let mut names: Vec<String> = std::fs::read_dir(workspace)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n != "forge.toml")
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let path = workspace.join(&name);
            let content = std::fs::read_to_string(&path).unwrap_or_default();
            json!({
                "path": name,
                "size": content.len(),
                "sha256": sha256(&path),
                "content": content,
            })
        })
        .collect()
}

fn sha256(path: &Path) -> String {
    Command::new("sha256sum")
        .arg(path)
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .next()
                .map(str::to_owned)
        })
        .unwrap_or_default()
}

/// Machine-specific strings and their placeholders, longest (most specific) first.
struct Placeholders(Vec<(String, &'static str)>);

impl Placeholders {
    fn new(rec: &Recording<'_>, home: &Path, captured: &Captured) -> Self {
        let mut pairs = vec![
            (home.display().to_string(), "<HOME>"),
            (rec.case.workspace.display().to_string(), "<WORKDIR>"),
            (rec.clis.display().to_string(), "<CLIS_DIR>"),
            (format!("127.0.0.1:{}", rec.port), "127.0.0.1:<PORT>"),
        ];
        if let Some(tmp) = captured.env.get("TMPDIR").filter(|t| t.len() > 1) {
            pairs.push((tmp.clone(), "<TMPDIR>"));
        }
        pairs.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
        Self(pairs)
    }

    fn apply(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for (from, to) in &self.0 {
            if !from.is_empty() {
                out = out.replace(from.as_str(), to);
            }
        }
        out
    }
}
