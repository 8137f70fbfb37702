//! `detect` against a scripted process runner: version parsing, range, auth, hints.

use std::collections::BTreeMap;

use forge_adapter_codex::{CodexProvider, SUPPORTED_RANGE, mock_provider_config};
use forge_ports::{Detection, EnvSnapshot, Provider, ProviderSettings};
use forge_testkit::fakes::process::{ScriptedProcessRunner, ScriptedRun};

fn run_detect(
    settings: ProviderSettings,
    runner: &ScriptedProcessRunner,
    env: &[(&str, &str)],
) -> Detection {
    let env: EnvSnapshot = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let provider = CodexProvider::new(settings);
    futures::executor::block_on(provider.detect(runner, &env))
}

fn out(stdout: &str, code: i32) -> ScriptedRun {
    ScriptedRun::lines([stdout], code)
}

fn not_logged_in() -> ScriptedRun {
    let mut run = ScriptedRun::lines(Vec::<String>::new(), 1);
    run.stderr = "Not logged in\n".into();
    run
}

#[test]
fn installed_supported_and_logged_in() {
    let runner = ScriptedProcessRunner::new([
        out("codex-cli 0.169.0", 0),
        out("Logged in using ChatGPT", 0),
    ]);
    let det = run_detect(ProviderSettings::default(), &runner, &[]);
    assert_eq!(
        det,
        Detection {
            provider: "codex".into(),
            binary: "codex".into(),
            path: Some("codex".into()),
            version: Some("0.169.0".into()),
            supported_range: SUPPORTED_RANGE.into(),
            version_supported: Some(true),
            authenticated: Some(true),
            auth_detail: Some("Logged in using ChatGPT".into()),
            hints: vec![],
        }
    );
    assert!(det.usable());
    let args: Vec<Vec<String>> = runner
        .invocations()
        .iter()
        .map(|i| i.args.clone())
        .collect();
    assert_eq!(
        args,
        vec![
            vec!["--version".to_owned()],
            vec!["login".into(), "status".into()]
        ]
    );
}

#[test]
fn not_logged_in_says_what_to_do() {
    let runner = ScriptedProcessRunner::new([out("codex-cli 0.169.0", 0), not_logged_in()]);
    let det = run_detect(
        ProviderSettings::default(),
        &runner,
        &[("HOME", "/nonexistent-home")],
    );
    assert_eq!(det.authenticated, Some(false));
    assert_eq!(det.auth_detail.as_deref(), Some("Not logged in"));
    assert!(
        det.hints.iter().any(|h| h.contains("codex login")),
        "{:?}",
        det.hints
    );
    assert!(!det.usable());
}

#[test]
fn an_api_key_in_the_environment_is_enough() {
    let runner = ScriptedProcessRunner::new([out("codex-cli 0.169.0", 0), not_logged_in()]);
    let det = run_detect(
        ProviderSettings::default(),
        &runner,
        &[("CODEX_API_KEY", "sk-x")],
    );
    assert_eq!(det.authenticated, Some(true));
    assert!(det.auth_detail.unwrap().contains("CODEX_API_KEY"));
    assert_eq!(runner.invocations().len(), 1, "no login probe needed");
}

#[test]
fn a_configured_model_provider_needs_its_key() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".codex")).unwrap();
    std::fs::write(
        home.path().join(".codex/config.toml"),
        mock_provider_config("http://127.0.0.1:9/v1", "gpt-5.5"),
    )
    .unwrap();
    let settings = ProviderSettings {
        home: Some(home.path().to_path_buf()),
        ..ProviderSettings::default()
    };
    let runner = ScriptedProcessRunner::new([out("codex-cli 0.169.0", 0), not_logged_in()]);
    let det = run_detect(settings.clone(), &runner, &[]);
    assert_eq!(det.authenticated, Some(false));
    assert!(
        det.hints.iter().any(|h| h.contains("MOCK_API_KEY")),
        "{:?}",
        det.hints
    );
    // The probes ran against that home.
    let inv = &runner.invocations()[0];
    assert_eq!(
        inv.env.set.get("CODEX_HOME").map(String::as_str),
        Some(home.path().join(".codex").to_str().unwrap())
    );

    let mut with_key = settings;
    with_key.env = BTreeMap::from([("MOCK_API_KEY".into(), "x".into())]);
    let det = run_detect(
        with_key,
        &ScriptedProcessRunner::new([out("codex-cli 0.169.0", 0)]),
        &[],
    );
    assert_eq!(det.authenticated, Some(true));
    assert!(det.usable());
}

/// The provider's home and key set only in forge.toml (`[providers.codex] env = {…}`), none
/// in the shell: detection sees what a run would (the run gets the same environment).
#[test]
fn a_home_and_key_set_only_in_the_provider_env_are_used_like_a_run_uses_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.toml"),
        mock_provider_config("http://127.0.0.1:9/v1", "gpt-5.5"),
    )
    .unwrap();
    let codex_home = dir.path().to_str().unwrap().to_owned();
    let settings = ProviderSettings {
        env: BTreeMap::from([
            ("CODEX_HOME".into(), codex_home.clone()),
            ("MOCK_API_KEY".into(), "x".into()),
        ]),
        ..ProviderSettings::default()
    };
    // The shell's own CODEX_HOME (a user home without that provider) loses, as in a run.
    let elsewhere = tempfile::tempdir().unwrap();
    let shell = [("CODEX_HOME", elsewhere.path().to_str().unwrap())];
    let runner = ScriptedProcessRunner::new([out("codex-cli 0.169.0", 0), not_logged_in()]);
    let det = run_detect(settings, &runner, &shell);
    assert_eq!(det.authenticated, Some(true), "{det:?}");
    assert!(det.usable());
    assert_eq!(
        runner.invocations()[0].env.set.get("CODEX_HOME"),
        Some(&codex_home)
    );
}

#[test]
fn versions_outside_the_range_are_flagged() {
    let runner = ScriptedProcessRunner::new([
        out("codex-cli 0.150.2", 0),
        out("Logged in using ChatGPT", 0),
    ]);
    let det = run_detect(ProviderSettings::default(), &runner, &[]);
    assert_eq!(det.version.as_deref(), Some("0.150.2"));
    assert_eq!(det.version_supported, Some(false));
    assert!(
        det.hints
            .iter()
            .any(|h| h.contains("@openai/codex@0.169.0"))
    );
    assert!(!det.usable());

    let runner = ScriptedProcessRunner::new([out("something odd", 0), out("Logged in", 0)]);
    let det = run_detect(ProviderSettings::default(), &runner, &[]);
    assert_eq!(det.version, None);
    assert_eq!(det.version_supported, None);
    assert!(det.hints.iter().any(|h| h.contains("version")));
}

#[test]
fn a_missing_binary_gets_the_install_hint() {
    let settings = ProviderSettings {
        binary: Some("/opt/none/codex".into()),
        ..ProviderSettings::default()
    };
    let runner = ScriptedProcessRunner::new([]).with_missing("/opt/none/codex");
    let det = run_detect(settings, &runner, &[]);
    assert_eq!(det.path, None);
    assert_eq!(det.binary, "/opt/none/codex");
    assert!(
        det.hints
            .iter()
            .any(|h| h.contains("npm i -g @openai/codex"))
    );
    assert!(!det.usable());
    assert!(runner.invocations().is_empty());
}

#[test]
fn detecting_an_old_release_switches_the_flag_table() {
    let runner = ScriptedProcessRunner::new([out("codex-cli 0.100.0", 0), out("Logged in", 0)]);
    let provider = CodexProvider::new(ProviderSettings::default());
    assert!(provider.capabilities().append_system_prompt);
    futures::executor::block_on(provider.detect(&runner, &EnvSnapshot::new()));
    assert!(!provider.capabilities().append_system_prompt);
}
