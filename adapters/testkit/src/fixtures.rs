//! Loading the recorded CLI transcripts under `adapters/testkit/fixtures/`.

use std::path::PathBuf;

/// The fixtures directory of this repository.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// A recorded transcript: `<cli>/<version>/<scenario>.jsonl` and its siblings.
#[derive(Debug, Clone)]
pub struct Transcript {
    pub cli: String,
    pub version: String,
    pub scenario: String,
    pub stdout: String,
    pub stderr: String,
    pub meta: serde_json::Value,
}

impl Transcript {
    /// The exit code recorded in the meta file.
    pub fn exit_code(&self) -> Option<i32> {
        self.meta
            .get("exit_code")
            .and_then(serde_json::Value::as_i64)
            .map(|c| c as i32)
    }

    /// The session the recorded run resumed, read off its argv (`--resume=<id>`,
    /// `--resume <id>`, codex's `resume <id>`); `None` for a run that started a session.
    pub fn resumed_session(&self) -> Option<String> {
        let argv: Vec<&str> = self
            .meta
            .get("argv")?
            .as_array()?
            .iter()
            .filter_map(serde_json::Value::as_str)
            .collect();
        argv.iter().enumerate().find_map(|(i, arg)| {
            if let Some(id) = arg.strip_prefix("--resume=") {
                return Some(id.to_owned());
            }
            let next = argv.get(i + 1).filter(|n| !n.starts_with('-'));
            matches!(*arg, "--resume" | "-r" | "resume")
                .then(|| next.map(|n| (*n).to_owned()))
                .flatten()
        })
    }
}

/// Every transcript of `cli` (all versions), sorted by version then scenario.
pub fn transcripts(cli: &str) -> Vec<Transcript> {
    let mut out = Vec::new();
    let root = fixtures_dir().join(cli);
    let Ok(versions) = std::fs::read_dir(&root) else {
        return out;
    };
    let mut versions: Vec<PathBuf> = versions.filter_map(|e| e.ok().map(|e| e.path())).collect();
    versions.sort();
    for vdir in versions {
        let Ok(entries) = std::fs::read_dir(&vdir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for f in files {
            let Some(name) = f.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let Some(scenario) = name.strip_suffix(".jsonl") else {
                continue;
            };
            let read = |suffix: &str| {
                std::fs::read_to_string(vdir.join(format!("{scenario}{suffix}")))
                    .unwrap_or_default()
            };
            out.push(Transcript {
                cli: cli.to_owned(),
                version: vdir
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or_default()
                    .to_owned(),
                scenario: scenario.to_owned(),
                stdout: read(".jsonl"),
                stderr: read(".stderr.txt"),
                meta: serde_json::from_str(&read(".meta.json")).unwrap_or(serde_json::Value::Null),
            });
        }
    }
    out
}
