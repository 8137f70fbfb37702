//! Running the real binary in a clean environment, against the fake CLI.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::Value;
use tempfile::TempDir;

/// A scratch workspace with its own (empty) user configuration directory.
pub struct Sandbox {
    pub dir: TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        std::fs::create_dir_all(dir.path().join("xdg/forge-code-agent")).unwrap();
        // These tests are about forge's CLI, with fake agents whose pids they read and
        // signal from outside: unconfined. The sandbox has its own tests (adapters/sandbox,
        // the e2e group `sandbox`).
        std::fs::write(
            dir.path().join("xdg/forge-code-agent/config.toml"),
            "[sandbox]\nmode = \"off\"\n",
        )
        .unwrap();
        Self { dir }
    }

    pub fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    pub fn xdg(&self) -> PathBuf {
        self.dir.path().join("xdg")
    }

    /// `forge-code-agent` with no inherited forge configuration, no color, run in `work/`.
    pub fn forge(&self) -> Command {
        let mut cmd = Command::cargo_bin("forge-code-agent").unwrap();
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy();
            if key.starts_with("FORGE_")
                || key.starts_with("CLAUDE_CLI_")
                || key.starts_with("FAKE_")
            {
                cmd.env_remove(key.as_ref());
            }
        }
        cmd.env("XDG_CONFIG_HOME", self.xdg())
            .env("NO_COLOR", "1")
            .env("COLUMNS", "100")
            .current_dir(self.work())
            .timeout(Duration::from_secs(60));
        cmd
    }

    /// The run directories under `work/.forgecode/runs/`.
    pub fn run_dirs(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(self.work().join(".forgecode/runs")) else {
            return Vec::new();
        };
        let mut dirs: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        dirs.sort();
        dirs
    }
}

pub fn fake() -> PathBuf {
    forge_testkit::fake_cli::path()
}

pub fn fixtures() -> PathBuf {
    forge_testkit::fixtures::fixtures_dir()
}

/// `<cli>/<version>/<scenario>.jsonl` of the first recorded version.
pub fn fixture(cli: &str, scenario: &str) -> PathBuf {
    let t = forge_testkit::fixtures::transcripts(cli)
        .into_iter()
        .find(|t| t.scenario == scenario)
        .unwrap();
    fixtures()
        .join(cli)
        .join(&t.version)
        .join(format!("{scenario}.jsonl"))
}

/// Replaces what changes from run to run in a result: run id, forge's duration, workdir.
pub fn scrub_result(result: &mut Value) {
    let meta = result.get_mut("metadata").unwrap();
    for key in ["run_id", "duration_ms", "workdir"] {
        if meta.get(key).is_some_and(|v| !v.is_null()) {
            meta[key] = Value::String(format!("[{key}]"));
        }
    }
}

/// Text with run ids (uuid v7), durations and the sandbox path replaced.
pub fn scrub_text(text: &str, sandbox: &Path) -> String {
    let text = text.replace(&sandbox.display().to_string(), "[sandbox]");
    let mut out = String::new();
    for line in text.lines() {
        // Durations only on footer lines (`… · 41ms · run <id>`).
        let footer = line.contains(" · run ");
        let words: Vec<String> = line
            .split(' ')
            .map(|w| {
                if looks_like_uuid(w) {
                    "[run_id]".into()
                } else if footer && is_duration(w) {
                    "[duration]".into()
                } else {
                    w.to_owned()
                }
            })
            .collect();
        out.push_str(&words.join(" "));
        out.push('\n');
    }
    out
}

fn looks_like_uuid(w: &str) -> bool {
    w.len() == 36
        && w.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
        && w.matches('-').count() == 4
}

fn is_duration(w: &str) -> bool {
    let digits = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == 'm')
    };
    w.strip_suffix("ms").is_some_and(digits) || w.strip_suffix('s').is_some_and(digits)
}

/// Polls until `cond` holds or `timeout` passes.
pub fn wait_for(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    cond()
}

/// Alive and not a zombie.
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X')),
        Err(_) => false,
    }
}
