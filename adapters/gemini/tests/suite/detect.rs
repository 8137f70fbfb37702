//! `detect` against a hand-written fake runner.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use forge_adapter_gemini::GeminiProvider;
use forge_domain::ForgeError;
use forge_ports::{
    CapturedOutput, Detection, EnvSnapshot, Invocation, ProcessRunner, Provider, ProviderSettings,
    RunningProcess, SpawnOptions,
};

/// Finds the binary where told, answers `--version` with a canned output, records argv.
struct FakeRunner {
    located: Option<PathBuf>,
    version: Result<CapturedOutput, ForgeError>,
    calls: Mutex<Vec<Vec<String>>>,
}

impl FakeRunner {
    fn new(located: Option<&str>, version: Result<CapturedOutput, ForgeError>) -> Self {
        Self {
            located: located.map(PathBuf::from),
            version,
            calls: Mutex::new(Vec::new()),
        }
    }
}

#[async_trait]
impl ProcessRunner for FakeRunner {
    async fn spawn(
        &self,
        _invocation: Invocation,
        _options: SpawnOptions,
    ) -> Result<Box<dyn RunningProcess>, ForgeError> {
        Err(ForgeError::io("spawn", "not in this fake"))
    }

    async fn output(
        &self,
        invocation: Invocation,
        _timeout: Duration,
    ) -> Result<CapturedOutput, ForgeError> {
        self.calls.lock().unwrap().push(invocation.args.clone());
        self.version.clone()
    }

    fn locate(&self, _program: &Path) -> Option<PathBuf> {
        self.located.clone()
    }
}

fn version(stdout: &str) -> Result<CapturedOutput, ForgeError> {
    Ok(CapturedOutput {
        code: Some(0),
        stdout: stdout.to_owned(),
        stderr: String::new(),
    })
}

fn env(pairs: &[(&str, &str)]) -> EnvSnapshot {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn detect(settings: ProviderSettings, runner: &FakeRunner, env: &EnvSnapshot) -> Detection {
    futures::executor::block_on(GeminiProvider::new(settings).detect(runner, env))
}

#[test]
fn installed_supported_and_keyed() {
    let runner = FakeRunner::new(Some("/usr/bin/gemini"), version("0.61.0\n"));
    let det = detect(
        ProviderSettings::default(),
        &runner,
        &env(&[("GEMINI_API_KEY", "k")]),
    );
    assert_eq!(
        det,
        Detection {
            provider: "gemini".into(),
            binary: "gemini".into(),
            path: Some("/usr/bin/gemini".into()),
            version: Some("0.61.0".into()),
            supported_range: ">=0.50.0, <1.0.0".into(),
            version_supported: Some(true),
            authenticated: Some(true),
            auth_detail: Some("GEMINI_API_KEY is set".into()),
            hints: vec![],
        }
    );
    assert!(det.usable());
    assert_eq!(
        *runner.calls.lock().unwrap(),
        vec![vec!["--version".to_owned()]]
    );
}

#[test]
fn missing_binary_hints_at_npm() {
    let runner = FakeRunner::new(None, version("0.61.0"));
    let det = detect(ProviderSettings::default(), &runner, &env(&[]));
    assert_eq!(det.path, None);
    assert!(!det.usable());
    assert_eq!(
        det.hints,
        vec!["gemini CLI not found: install it with `npm i -g @google/gemini-cli`"]
    );
    // Found by `locate` but gone when run.
    let runner = FakeRunner::new(
        Some("/x/gemini"),
        Err(ForgeError::ExecutableNotFound {
            program: "gemini".into(),
            hint: String::new(),
        }),
    );
    let det = detect(ProviderSettings::default(), &runner, &env(&[]));
    assert_eq!(det.path, None);
    assert!(det.hints[0].contains("npm i -g @google/gemini-cli"));
}

#[test]
fn old_versions_and_garbage_are_flagged() {
    let runner = FakeRunner::new(Some("/g"), version("0.41.2"));
    let det = detect(
        ProviderSettings::default(),
        &runner,
        &env(&[("GEMINI_API_KEY", "k")]),
    );
    assert_eq!(det.version_supported, Some(false));
    assert!(!det.usable());
    assert!(det.hints[0].contains("outside the supported range"));
    let runner = FakeRunner::new(Some("/g"), version("no idea"));
    let det = detect(
        ProviderSettings::default(),
        &runner,
        &env(&[("GEMINI_API_KEY", "k")]),
    );
    assert_eq!(det.version, None);
    assert!(det.hints[0].contains("printed no version"));
}

#[test]
fn auth_comes_from_env_vertex_or_user_settings() {
    let home = std::env::temp_dir().join(format!("forge-gemini-detect-{}", std::process::id()));
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    let home_str = home.to_string_lossy().into_owned();
    let runner = FakeRunner::new(Some("/g"), version("0.61.0"));
    let auth = |settings: ProviderSettings, pairs: &[(&str, &str)]| {
        let det = detect(settings, &runner, &env(pairs));
        (det.authenticated, det.hints.len())
    };
    let plain = ProviderSettings::default;

    assert_eq!(auth(plain(), &[("GOOGLE_API_KEY", "k")]), (Some(true), 0));
    assert_eq!(
        auth(
            plain(),
            &[
                ("GOOGLE_GENAI_USE_VERTEXAI", "true"),
                ("GOOGLE_CLOUD_PROJECT", "p")
            ]
        ),
        (Some(true), 0)
    );
    // Nothing selected, no key.
    assert_eq!(auth(plain(), &[("HOME", &home_str)]), (Some(false), 1));
    // A key in the provider's own env counts.
    let keyed = ProviderSettings {
        env: [("GEMINI_API_KEY".to_owned(), "k".to_owned())].into(),
        ..ProviderSettings::default()
    };
    assert_eq!(auth(keyed, &[]), (Some(true), 0));
    // A private home without copied auth needs a key.
    let isolated = ProviderSettings {
        isolate_home: true,
        ..ProviderSettings::default()
    };
    assert_eq!(auth(isolated, &[("HOME", &home_str)]), (Some(false), 1));
    // OAuth selected: needs its credentials file.
    std::fs::write(
        home.join(".gemini/settings.json"),
        r#"{"security":{"auth":{"selectedType":"oauth-personal"}}}"#,
    )
    .unwrap();
    assert_eq!(auth(plain(), &[("HOME", &home_str)]), (Some(false), 1));
    std::fs::write(home.join(".gemini/oauth_creds.json"), "{}").unwrap();
    assert_eq!(auth(plain(), &[("HOME", &home_str)]), (Some(true), 0));
    // API key selected but not visible: cannot tell (a .env file may hold it).
    std::fs::write(
        home.join(".gemini/settings.json"),
        r#"{"security":{"auth":{"selectedType":"gemini-api-key"}}}"#,
    )
    .unwrap();
    assert_eq!(auth(plain(), &[("HOME", &home_str)]), (None, 1));
    std::fs::remove_dir_all(&home).unwrap();
}
