//! `detect` against a hand-written fake process runner.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use forge_adapter_claude::{ClaudeProvider, UserPaths};
use forge_domain::ForgeError;
use forge_ports::{
    CapturedOutput, Detection, EnvSnapshot, Invocation, ProcessRunner, Provider, ProviderSettings,
    RunningProcess, SpawnOptions,
};

type Canned = Result<CapturedOutput, ForgeError>;

/// Answers `--version` and `auth status` from canned outputs and records what was run.
struct FakeRunner {
    found: bool,
    version: Canned,
    auth: Canned,
    ran: Mutex<Vec<Vec<String>>>,
}

fn out(code: i32, stdout: &str) -> Canned {
    Ok(CapturedOutput {
        code: Some(code),
        stdout: stdout.into(),
        stderr: String::new(),
    })
}

#[async_trait]
impl ProcessRunner for FakeRunner {
    async fn spawn(
        &self,
        _: Invocation,
        _: SpawnOptions,
    ) -> Result<Box<dyn RunningProcess>, ForgeError> {
        Err(ForgeError::io("spawn", "not in detect"))
    }

    async fn output(&self, inv: Invocation, _: Duration) -> Result<CapturedOutput, ForgeError> {
        self.ran.lock().unwrap().push(inv.args.clone());
        match inv.args.first().map(String::as_str) {
            Some("--version") => self.version.clone(),
            Some("auth") => self.auth.clone(),
            other => panic!("unexpected probe {other:?}"),
        }
    }

    fn locate(&self, program: &Path) -> Option<PathBuf> {
        self.found.then(|| Path::new("/usr/bin").join(program))
    }
}

fn detect(runner: &FakeRunner, env: &[(&str, &str)]) -> Detection {
    let p = ClaudeProvider::with_user_paths(ProviderSettings::default(), UserPaths::default());
    let env: EnvSnapshot = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    futures::executor::block_on(p.detect(runner, &env))
}

fn runner(version: Canned, auth: Canned) -> FakeRunner {
    FakeRunner {
        found: true,
        version,
        auth,
        ran: Mutex::new(Vec::new()),
    }
}

#[test]
fn an_api_key_in_the_environment_authenticates_without_asking_the_cli() {
    let r = runner(out(0, "2.1.330 (Claude Code)\n"), out(1, "{}"));
    let d = detect(&r, &[("ANTHROPIC_API_KEY", "sk-x")]);
    assert!(d.usable(), "{d:?}");
    assert_eq!(d.version.as_deref(), Some("2.1.330"));
    assert_eq!(d.version_supported, Some(true));
    assert_eq!(d.supported_range, ">=2.0.0, <3.0.0");
    assert_eq!(d.authenticated, Some(true));
    assert_eq!(d.auth_detail.as_deref(), Some("ANTHROPIC_API_KEY is set"));
    assert!(d.hints.is_empty(), "{:?}", d.hints);
    assert_eq!(*r.ran.lock().unwrap(), [vec!["--version".to_owned()]]);
}

#[test]
fn auth_status_json_decides_when_no_key_is_set() {
    let logged_out = r#"{"loggedIn": false, "authMethod": "none"}"#;
    let d = detect(
        &runner(out(0, "2.1.330 (Claude Code)"), out(1, logged_out)),
        &[("ANTHROPIC_API_KEY", " ")],
    );
    assert_eq!(d.authenticated, Some(false));
    assert!(!d.usable());
    assert!(
        d.hints.iter().any(|h| h.contains("claude auth login")),
        "{:?}",
        d.hints
    );

    let logged_in = r#"{"loggedIn": true, "authMethod": "claude.ai"}"#;
    let d = detect(&runner(out(0, "2.1.330"), out(0, logged_in)), &[]);
    assert_eq!(d.authenticated, Some(true));
    assert_eq!(
        d.auth_detail.as_deref(),
        Some("claude auth status: loggedIn true, authMethod claude.ai")
    );
}

#[test]
fn auth_status_without_json_falls_back_to_the_exit_code_then_unknown() {
    let d = detect(&runner(out(0, "2.1.330"), out(0, "Logged in")), &[]);
    assert_eq!(d.authenticated, Some(true));
    let d = detect(
        &runner(out(0, "2.1.330"), out(1, "error: unknown command 'auth'")),
        &[],
    );
    assert_eq!(d.authenticated, None);
    assert!(d.usable(), "unknown auth does not make it unusable");
    assert!(d.hints.iter().any(|h| h.contains("claude auth login")));
    let d = detect(
        &runner(
            out(0, "2.1.330"),
            Err(ForgeError::ProviderTimeout { after_ms: 15_000 }),
        ),
        &[],
    );
    assert_eq!(d.authenticated, None);
}

#[test]
fn versions_outside_the_range_or_unreadable_get_hints() {
    let d = detect(
        &runner(out(0, "1.0.128 (Claude Code)"), out(0, "")),
        &[("CLAUDE_CODE_OAUTH_TOKEN", "t")],
    );
    assert_eq!(d.version_supported, Some(false));
    assert!(!d.usable());
    assert!(
        d.hints
            .iter()
            .any(|h| h.contains("outside the supported range")),
        "{:?}",
        d.hints
    );

    let d = detect(
        &runner(out(0, "weird"), out(0, "")),
        &[("ANTHROPIC_AUTH_TOKEN", "t")],
    );
    assert_eq!(d.version, None);
    assert_eq!(d.version_supported, None);
    assert!(
        d.hints
            .iter()
            .any(|h| h.contains("could not read a version")),
        "{:?}",
        d.hints
    );
}

#[test]
fn a_missing_binary_says_how_to_install() {
    let r = FakeRunner {
        found: false,
        ..runner(out(0, ""), out(0, ""))
    };
    let d = detect(&r, &[]);
    assert_eq!(d.path, None);
    assert_eq!(d.binary, "claude");
    assert!(!d.usable());
    assert!(
        d.hints
            .iter()
            .any(|h| h.contains("npm i -g @anthropic-ai/claude-code")),
        "{:?}",
        d.hints
    );
    assert!(r.ran.lock().unwrap().is_empty());

    let vanished = runner(
        Err(ForgeError::ExecutableNotFound {
            program: "claude".into(),
            hint: "x".into(),
        }),
        out(0, ""),
    );
    let d = detect(&vanished, &[]);
    assert_eq!(d.path, None);
    assert!(d.hints.iter().any(|h| h.contains("npm i -g")));
}
