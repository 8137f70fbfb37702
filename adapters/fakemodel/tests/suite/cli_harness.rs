//! Runs the real pinned CLIs against a fake model server (test support).
//!
//! Uses `std::process::Command` directly: this is test code, not the product's process
//! adapter. Each run gets a private home and workspace under `<repo>/target/fakemodel-tmp/`
//! (not `/tmp`: codex refuses to create its helper binaries under a temporary directory).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The three CLIs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cli {
    Claude,
    Codex,
    Gemini,
}

impl Cli {
    pub const ALL: [Cli; 3] = [Cli::Claude, Cli::Codex, Cli::Gemini];

    pub fn name(self) -> &'static str {
        match self {
            Cli::Claude => "claude",
            Cli::Codex => "codex",
            Cli::Gemini => "gemini",
        }
    }
}

/// What one CLI run left behind.
#[derive(Debug)]
pub struct CliRun {
    pub cli: Cli,
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub workdir: PathBuf,
    pub elapsed: Duration,
    pub timed_out: bool,
}

impl CliRun {
    pub fn file(&self, rel: &str) -> Option<String> {
        fs::read_to_string(self.workdir.join(rel)).ok()
    }

    /// A readable summary for assertion messages.
    pub fn describe(&self) -> String {
        format!(
            "{} exit={:?} timed_out={} after {:.1}s\n--- stdout ---\n{}\n--- stderr (tail) ---\n{}",
            self.cli.name(),
            self.exit_code,
            self.timed_out,
            self.elapsed.as_secs_f64(),
            self.stdout,
            tail(&self.stderr, 3000),
        )
    }
}

fn tail(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `FORGE_E2E_CLIS_DIR` or `<repo>/target/e2e/clis`, when all three binaries are there.
pub fn clis_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("FORGE_E2E_CLIS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/e2e/clis"));
    let all_present = Cli::ALL
        .iter()
        .all(|cli| dir.join("node_modules/.bin").join(cli.name()).exists());
    all_present.then_some(dir)
}

/// A private scratch directory (home + workspace) for one run.
pub fn scratch() -> tempfile::TempDir {
    let base = repo_root().join("target/fakemodel-tmp");
    fs::create_dir_all(&base).expect("create target/fakemodel-tmp");
    tempfile::Builder::new()
        .prefix("run-")
        .tempdir_in(base)
        .expect("create scratch dir")
}

/// Extra knobs for one run.
#[derive(Debug, Default, Clone)]
pub struct RunOptions {
    /// Resume this session (claude `--resume <id>`, codex `exec resume <id>`, gemini
    /// `--resume latest`, which ignores the id).
    pub resume: Option<String>,
    pub extra_args: Vec<String>,
    pub extra_env: Vec<(String, String)>,
    pub timeout: Option<Duration>,
}

/// The session id a run printed: claude/gemini `session_id`, codex `thread_id`.
pub fn session_id(stdout: &str) -> Option<String> {
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find_map(|v| {
            v.get("session_id")
                .or_else(|| v.get("thread_id"))
                .and_then(|id| id.as_str())
                .map(str::to_owned)
        })
}

/// Run `cli` once (home and workspace under `root`, reused by a resume) with `prompt` against `base_url` (`http://127.0.0.1:<port>`), blocking.
pub fn run_cli(
    clis: &Path,
    cli: Cli,
    base_url: &str,
    prompt: &str,
    root: &Path,
    options: &RunOptions,
) -> CliRun {
    let home = root.join("home");
    let workdir = root.join("work");
    let tmp = root.join("tmp");
    for dir in [&home, &workdir, &tmp] {
        fs::create_dir_all(dir).expect("create run dirs");
    }
    let bin = clis.join("node_modules/.bin").join(cli.name());
    let mut command = Command::new(&bin);
    command
        .current_dir(&workdir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("LANG", "C.UTF-8")
        .env("LC_ALL", "C.UTF-8")
        .env("HOME", &home)
        .env("TMPDIR", &tmp)
        .stdin(Stdio::null());
    match cli {
        Cli::Claude => {
            command
                .env("ANTHROPIC_BASE_URL", base_url)
                .env("ANTHROPIC_API_KEY", "sk-fake")
                .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                .env("DISABLE_AUTOUPDATER", "1")
                .env("IS_SANDBOX", "1")
                .args(["-p", prompt, "--output-format", "stream-json", "--verbose"])
                .args(["--max-turns", "10", "--dangerously-skip-permissions"]);
            if let Some(id) = &options.resume {
                command.args(["--resume", id]);
            }
        }
        Cli::Codex => {
            let codex_home = home.join(".codex");
            fs::create_dir_all(&codex_home).expect("create codex home");
            let config = format!(
                "model = \"gpt-5.5\"\nmodel_provider = \"mock\"\ncheck_for_update_on_startup = false\n\n\
                 [analytics]\nenabled = false\n\n[model_providers.mock]\nname = \"mock\"\n\
                 base_url = \"{base_url}/v1\"\nenv_key = \"MOCK_API_KEY\"\nwire_api = \"responses\"\n"
            );
            fs::write(codex_home.join("config.toml"), config).expect("write codex config");
            command
                .env("CODEX_HOME", &codex_home)
                .env("MOCK_API_KEY", "x")
                .arg("exec");
            if options.resume.is_some() {
                command.arg("resume");
            }
            command
                .args(["--json", "--skip-git-repo-check"])
                .arg("--dangerously-bypass-approvals-and-sandbox")
                .args(&options.extra_args)
                .args(options.resume.iter())
                .arg(prompt);
        }
        Cli::Gemini => {
            let gemini_dir = home.join(".gemini");
            fs::create_dir_all(&gemini_dir).expect("create gemini dir");
            let settings = r#"{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false}}"#;
            fs::write(gemini_dir.join("settings.json"), settings).expect("write gemini settings");
            command
                .env("GEMINI_API_KEY", "fake")
                .env("GOOGLE_GEMINI_BASE_URL", base_url)
                .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
                .args(["-p", prompt, "--output-format", "stream-json", "--yolo"]);
            if options.resume.is_some() {
                command.args(["--resume", "latest"]);
            }
        }
    }
    if cli != Cli::Codex {
        command.args(&options.extra_args);
    }
    for (key, value) in &options.extra_env {
        command.env(key, value);
    }
    let stdout_path = root.join("stdout.txt");
    let stderr_path = root.join("stderr.txt");
    command
        .stdout(fs::File::create(&stdout_path).expect("stdout file"))
        .stderr(fs::File::create(&stderr_path).expect("stderr file"));

    let started = Instant::now();
    let mut child = command.spawn().expect("spawn cli");
    let limit = options.timeout.unwrap_or(Duration::from_secs(120));
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for cli") {
            break Some(status);
        }
        if started.elapsed() > limit {
            timed_out = true;
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    CliRun {
        cli,
        exit_code: status.and_then(|s| s.code()),
        stdout: fs::read_to_string(&stdout_path).unwrap_or_default(),
        stderr: fs::read_to_string(&stderr_path).unwrap_or_default(),
        workdir,
        elapsed: started.elapsed(),
        timed_out,
    }
}
