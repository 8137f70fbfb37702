//! Request → invocation: argv, env, stdin and prepared files for representative requests.

use std::collections::BTreeMap;
use std::path::PathBuf;

use forge_adapter_codex::{CodexProvider, features::parse_version, home};
use forge_domain::{ForgeError, PermissionMode, RunId, SessionId};
use forge_ports::{
    FileSource, Invocation, InvocationContext, PreparedFile, Provider, ProviderSettings,
};
use proptest::prelude::*;
use serde::Serialize;

use super::common::{request, settings};

fn ctx() -> InvocationContext {
    InvocationContext {
        run_id: RunId::new("run-1").unwrap(),
        run_dir: "<WORKDIR>/.forgecode/runs/run-1".into(),
        home: None,
        in_repository: Some(false),
        resumed_usage: None,
        mcp: None,
    }
}

#[derive(Serialize)]
struct View {
    program: String,
    args: Vec<String>,
    cwd: String,
    inherit_env: bool,
    env: BTreeMap<String, String>,
    stdin: Option<String>,
    files: Vec<(String, String)>,
    install_hint: Option<String>,
}

fn view(inv: &Invocation) -> View {
    View {
        program: inv.program.display().to_string(),
        args: inv.args.clone(),
        cwd: inv.cwd.display().to_string(),
        inherit_env: inv.env.inherit,
        env: inv.env.set.clone(),
        stdin: inv
            .stdin
            .as_ref()
            .map(|b| String::from_utf8_lossy(b).into_owned()),
        files: inv
            .files
            .iter()
            .map(|f| {
                let source = match &f.source {
                    FileSource::Contents(b) => format!("contents: {}", String::from_utf8_lossy(b)),
                    FileSource::CopyOf(p) => format!(
                        "copy of <USER_CODEX_HOME>/{}",
                        p.file_name().unwrap().to_string_lossy()
                    ),
                    FileSource::SymlinkTo(p) => format!("link to {}", p.display()),
                };
                (f.path.display().to_string(), source)
            })
            .collect(),
        install_hint: inv.install_hint.clone(),
    }
}

fn check(
    name: &str,
    provider: &CodexProvider,
    req: &forge_domain::ExecutionRequest,
    ctx: &InvocationContext,
) {
    let inv = provider.invocation(req, ctx).unwrap();
    // The prompt always travels on stdin behind a `-`, never in argv.
    assert_eq!(inv.stdin.as_deref(), Some(req.prompt.as_bytes()));
    assert_eq!(inv.args.last().map(String::as_str), Some("-"));
    insta::assert_yaml_snapshot!(format!("invocation__{name}"), view(&inv));
}

#[test]
fn new_thread_outside_a_repository_with_defaults() {
    let provider = CodexProvider::new(ProviderSettings::default());
    check("default", &provider, &request("Say hello."), &ctx());
}

#[test]
fn bypass_in_a_repository_with_settings() {
    let mut s = settings();
    s.binary = Some("/opt/codex/bin/codex".into());
    s.args = vec!["-c".into(), "model_reasoning_effort=\"high\"".into()];
    s.env = BTreeMap::from([
        ("A".into(), "settings".into()),
        ("B".into(), "settings".into()),
    ]);
    let provider = CodexProvider::new(s);
    let mut req = request("Fix the bug.");
    req.permission_mode = Some(PermissionMode::Bypass);
    req.env = BTreeMap::from([("B".into(), "request".into())]);
    req.model = Some("gpt-5.5-mini".into());
    let mut c = ctx();
    c.in_repository = Some(true);
    check("bypass_in_repo", &provider, &req, &c);
}

#[test]
fn accept_edits_with_every_knob() {
    let provider = CodexProvider::new(settings());
    let mut req = request("Refactor.");
    req.permission_mode = Some(PermissionMode::AcceptEdits);
    req.add_dirs = vec![PathBuf::from("/data/shared"), PathBuf::from("/data/other")];
    req.output_schema = Some(PathBuf::from("<WORKDIR>/schema.json"));
    req.append_system_prompt = Some("Answer in \"French\".\nBe brief.".into());
    req.extra_args = vec!["--ephemeral".into()];
    check("accept_edits_every_knob", &provider, &req, &ctx());
}

#[test]
fn plan_mode_resume_puts_flags_before_the_subcommand() {
    let provider = CodexProvider::new(settings());
    let mut req = request("Continue.");
    req.permission_mode = Some(PermissionMode::Plan);
    req.resume_session_id = Some(SessionId::new("01a2007c-6a5f-7d01-9c41-8ff9a69f7ca4").unwrap());
    check("plan_resume", &provider, &req, &ctx());
}

#[test]
fn a_private_home_gets_codex_home_and_the_users_auth() {
    let mut s = settings();
    s.copy_user_auth = true;
    let provider = CodexProvider::new(s);
    let mut c = ctx();
    c.home = Some("<WORKDIR>/.forgecode/runs/run-1/home".into());
    let inv = provider.invocation(&request("hi"), &c).unwrap();
    assert_eq!(
        inv.env.set.get("CODEX_HOME").map(String::as_str),
        Some("<WORKDIR>/.forgecode/runs/run-1/home/.codex")
    );
    if let Some(user) = home::user_codex_home() {
        assert_eq!(
            inv.files
                .iter()
                .map(|f| (f.path.clone(), f.source.clone()))
                .collect::<Vec<_>>(),
            vec![
                (
                    PathBuf::from("<WORKDIR>/.forgecode/runs/run-1/home/.codex/auth.json"),
                    FileSource::CopyOf(user.join("auth.json"))
                ),
                (
                    PathBuf::from("<WORKDIR>/.forgecode/runs/run-1/home/.codex/config.toml"),
                    FileSource::CopyOf(user.join("config.toml"))
                ),
            ]
        );
    }
    check("private_home_copy_auth", &provider, &request("hi"), &c);

    // A configured home (pre-created, e.g. by the e2e harness) is used as is: nothing copied.
    let mut s = settings();
    s.copy_user_auth = true;
    s.home = Some("/srv/e2e-home".into());
    let provider = CodexProvider::new(s);
    c.home = Some("/srv/e2e-home".into());
    let inv = provider.invocation(&request("hi"), &c).unwrap();
    assert!(inv.files.is_empty());
    assert_eq!(inv.env.set["CODEX_HOME"], "/srv/e2e-home/.codex");
}

/// `isolate_home` without `copy_user_auth`: Codex exits 1 when `CODEX_HOME` does not exist,
/// so the private home is created with a config of automation defaults (nothing copied).
#[test]
fn a_private_home_without_the_users_auth_is_created_with_default_config() {
    let provider = CodexProvider::new(settings());
    let mut c = ctx();
    c.home = Some("<WORKDIR>/.forgecode/runs/run-1/home".into());
    let inv = provider.invocation(&request("hi"), &c).unwrap();
    assert_eq!(
        inv.env.set["CODEX_HOME"],
        "<WORKDIR>/.forgecode/runs/run-1/home/.codex"
    );
    assert_eq!(
        inv.files,
        vec![PreparedFile {
            path: PathBuf::from("<WORKDIR>/.forgecode/runs/run-1/home/.codex/config.toml"),
            source: FileSource::Contents(home::PRIVATE_HOME_CONFIG.as_bytes().to_vec()),
        }]
    );
    check("private_home_defaults", &provider, &request("hi"), &c);
}

#[test]
fn the_request_env_wins_even_over_codex_home() {
    let provider = CodexProvider::new(settings());
    let mut req = request("hi");
    req.env = BTreeMap::from([("CODEX_HOME".into(), "/mine".into())]);
    let mut c = ctx();
    c.home = Some("/private".into());
    let inv = provider.invocation(&req, &c).unwrap();
    assert_eq!(inv.env.set["CODEX_HOME"], "/mine");
}

#[test]
fn requests_codex_cannot_honour_are_refused() {
    let provider = CodexProvider::new(settings());
    let refused = |edit: &dyn Fn(&mut forge_domain::ExecutionRequest)| {
        let mut req = request("hi");
        edit(&mut req);
        match provider.invocation(&req, &ctx()) {
            Err(ForgeError::InvalidRequest { reason }) => reason,
            other => panic!("{other:?}"),
        }
    };
    assert!(refused(&|r| r.max_turns = Some(3)).contains("max-turns"));
    assert!(refused(&|r| r.max_budget_usd = Some(1.0)).contains("budget"));
    assert!(refused(&|r| r.allowed_tools = vec!["Bash".into()]).contains("allow"));
    assert!(refused(&|r| r.disallowed_tools = vec!["Bash".into()]).contains("allow"));
    assert!(refused(&|r| r.mcp_config = Some("{}".into())).contains("mcp"));
}

#[test]
fn the_flag_table_follows_the_installed_version() {
    let old = CodexProvider::new(settings())
        .with_cli_version(&parse_version("codex-cli 0.100.0").unwrap());
    let mut req = request("hi");
    req.append_system_prompt = Some("x".into());
    assert!(old.invocation(&req, &ctx()).is_err());
    assert!(!old.capabilities().append_system_prompt);

    let legacy = CodexProvider::new(settings()).with_cli_version(&parse_version("0.21.0").unwrap());
    assert!(legacy.invocation(&request("hi"), &ctx()).is_err());
    assert!(!legacy.capabilities().resume);
}

#[test]
fn capabilities_are_declared_honestly() {
    let caps = CodexProvider::new(settings()).capabilities();
    assert!(!caps.streams_text_deltas);
    assert!(!caps.max_turns);
    assert!(!caps.max_budget);
    assert!(!caps.reports_cost);
    assert!(!caps.allowed_tools);
    assert!(caps.resume);
    assert!(caps.append_system_prompt);
    // Every mode but `ask`: headless, this CLI cannot ask (the ACP provider can).
    assert_eq!(
        caps.permission_modes,
        [
            PermissionMode::Default,
            PermissionMode::AcceptEdits,
            PermissionMode::Bypass,
            PermissionMode::Plan
        ]
    );
}

proptest! {
    /// Whatever the prompt (empty, huge, multi-line, starting with `-`), it is the stdin
    /// payload, the last argument is `-`, and the prompt never appears in argv.
    #[test]
    fn the_prompt_always_goes_to_stdin(prompt in ".{0,300}", resume in any::<bool>()) {
        let provider = CodexProvider::new(settings());
        let mut req = request(&prompt);
        if resume {
            req.resume_session_id = Some(SessionId::new("t-1").unwrap());
        }
        let inv = provider.invocation(&req, &ctx()).unwrap();
        prop_assert_eq!(inv.stdin.as_deref(), Some(prompt.as_bytes()));
        prop_assert_eq!(inv.args.last().map(String::as_str), Some("-"));
        if prompt.len() > 40 {
            prop_assert!(!inv.args.iter().any(|a| a == &prompt));
        }
        if resume {
            let n = inv.args.len();
            prop_assert_eq!(&inv.args[n - 3..n - 1], &["resume".to_owned(), "t-1".to_owned()]);
        }
    }
}
