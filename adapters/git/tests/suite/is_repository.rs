//! `GitCli::is_repository` against canned `git` answers from a fake process runner.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use forge_adapter_git::GitCli;
use forge_domain::ForgeError;
use forge_ports::{CapturedOutput, Invocation, ProcessRunner, RunningProcess, SpawnOptions, Vcs};

/// Answers every `output` call with one canned result and remembers what it was asked.
struct FakeRunner {
    answer: Result<CapturedOutput, ForgeError>,
    calls: Mutex<Vec<(Invocation, Duration)>>,
}

impl FakeRunner {
    fn new(answer: Result<CapturedOutput, ForgeError>) -> Arc<Self> {
        Arc::new(Self {
            answer,
            calls: Mutex::new(Vec::new()),
        })
    }
}

#[async_trait]
impl ProcessRunner for FakeRunner {
    async fn spawn(
        &self,
        _invocation: Invocation,
        _options: SpawnOptions,
    ) -> Result<Box<dyn RunningProcess>, ForgeError> {
        panic!("GitCli must use output(), not spawn()")
    }

    async fn output(
        &self,
        invocation: Invocation,
        timeout: Duration,
    ) -> Result<CapturedOutput, ForgeError> {
        self.calls.lock().unwrap().push((invocation, timeout));
        self.answer.clone()
    }

    fn locate(&self, _program: &Path) -> Option<PathBuf> {
        None
    }
}

fn exited(code: i32, stdout: &str, stderr: &str) -> Result<CapturedOutput, ForgeError> {
    Ok(CapturedOutput {
        code: Some(code),
        stdout: stdout.into(),
        stderr: stderr.into(),
    })
}

/// Asks about `/work/repo` with `answer` canned; returns the verdict and checks the call.
async fn check(answer: Result<CapturedOutput, ForgeError>) -> Result<bool, ForgeError> {
    let runner = FakeRunner::new(answer);
    let git = GitCli::new(runner.clone());
    let got = git.is_repository(Path::new("/work/repo")).await;

    let calls = runner.calls.lock().unwrap();
    assert_eq!(calls.len(), 1);
    let (invocation, timeout) = &calls[0];
    assert_eq!(invocation.program, PathBuf::from("git"));
    assert_eq!(invocation.args, ["rev-parse", "--is-inside-work-tree"]);
    assert_eq!(invocation.cwd, PathBuf::from("/work/repo"));
    assert_eq!(invocation.stdin, None);
    assert!(invocation.env.inherit);
    assert_eq!(
        invocation
            .env
            .set
            .get("GIT_TERMINAL_PROMPT")
            .map(String::as_str),
        Some("0")
    );
    assert!(
        invocation
            .install_hint
            .as_deref()
            .unwrap()
            .contains("apt-get install git")
    );
    assert_eq!(*timeout, Duration::from_secs(10));
    got
}

#[tokio::test]
async fn answers_from_git_exit_code_and_output() {
    assert_eq!(check(exited(0, "true\n", "")).await, Ok(true));
    // Inside `.git/`: a repository, not a work tree.
    assert_eq!(check(exited(0, "false\n", "")).await, Ok(false));
    assert_eq!(
        check(exited(
            128,
            "",
            "fatal: not a git repository (or any of the parent directories): .git\n"
        ))
        .await,
        Ok(false)
    );
    assert_eq!(
        check(exited(
            128,
            "",
            "fatal: detected dubious ownership in repository"
        ))
        .await,
        Ok(false)
    );
}

#[tokio::test]
async fn missing_git_is_executable_not_found_with_a_hint() {
    let got = check(Err(ForgeError::ExecutableNotFound {
        program: "git".into(),
        hint: String::new(),
    }))
    .await;
    match got {
        Err(ForgeError::ExecutableNotFound { program, hint }) => {
            assert_eq!(program, "git");
            assert!(hint.contains("apt-get install git"), "{hint}");
        }
        other => panic!("expected ExecutableNotFound, got {other:?}"),
    }
    // A hint the runner already filled in is kept.
    let got = check(Err(ForgeError::ExecutableNotFound {
        program: "git".into(),
        hint: "runner's hint".into(),
    }))
    .await;
    assert!(
        matches!(got, Err(ForgeError::ExecutableNotFound { hint, .. }) if hint == "runner's hint")
    );
}

#[tokio::test]
async fn failures_to_run_are_io_errors() {
    let timed_out = check(Err(ForgeError::ProviderTimeout { after_ms: 10_000 })).await;
    assert!(
        matches!(timed_out, Err(ForgeError::Io { .. })),
        "{timed_out:?}"
    );
    let killed = check(Ok(CapturedOutput {
        code: None,
        stdout: String::new(),
        stderr: String::new(),
    }))
    .await;
    assert!(matches!(killed, Err(ForgeError::Io { .. })), "{killed:?}");
    let io = check(Err(ForgeError::io("spawning git", "permission denied"))).await;
    assert_eq!(io, Err(ForgeError::io("spawning git", "permission denied")));
}

#[tokio::test]
async fn program_and_timeout_are_configurable() {
    let runner = FakeRunner::new(exited(0, "true\n", ""));
    let git = GitCli::new(runner.clone())
        .with_program("/opt/git/bin/git")
        .with_timeout(Duration::from_secs(2));
    assert_eq!(git.is_repository(Path::new("/w")).await, Ok(true));
    let calls = runner.calls.lock().unwrap();
    assert_eq!(calls[0].0.program, PathBuf::from("/opt/git/bin/git"));
    assert_eq!(calls[0].1, Duration::from_secs(2));
}
