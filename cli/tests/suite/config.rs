//! Configuration precedence, flags > environment > project forge.toml > user file >
//! defaults, read back through `config show --json`; bad configuration exits 2 naming the
//! file, the key and the reason.

use serde_json::Value;

use super::harness::Sandbox;

/// Where each level puts a value, and what `config show` must report.
struct Case {
    name: &'static str,
    user: &'static str,
    project: &'static str,
    env: &'static [(&'static str, &'static str)],
    flags: &'static [&'static str],
    /// JSON pointer into `config show --json`.
    key: &'static str,
    value: Value,
    /// `<user>` / `<project>` stand for the files' paths.
    source: &'static str,
}

fn check(case: &Case) {
    let sandbox = Sandbox::new();
    let user = sandbox.xdg().join("forge-code-agent/config.toml");
    let project = sandbox.work().join("forge.toml");
    if !case.user.is_empty() {
        std::fs::create_dir_all(user.parent().unwrap()).unwrap();
        std::fs::write(&user, case.user).unwrap();
    }
    if !case.project.is_empty() {
        std::fs::write(&project, case.project).unwrap();
    }
    let mut cmd = sandbox.forge();
    cmd.args(["config", "show", "--json"]).args(case.flags);
    for (k, v) in case.env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}: {}",
        case.name,
        String::from_utf8_lossy(&out.stderr)
    );
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    let got = shown
        .pointer(case.key)
        .unwrap_or_else(|| panic!("{}: no {} in {shown:#}", case.name, case.key));
    let source = case
        .source
        .replace("<user>", &user.display().to_string())
        .replace("<project>", &project.display().to_string());
    assert_eq!(got["value"], case.value, "{}", case.name);
    assert_eq!(got["source"], Value::String(source), "{}", case.name);
}

const USER_MODEL: &str = "[providers.claude]\nmodel = \"from-user\"\n";
const PROJECT_MODEL: &str = "[providers.claude]\nmodel = \"from-project\"\n";

#[test]
fn precedence_table() {
    let model = "/providers/claude/model";
    let cases = [
        Case {
            name: "default provider",
            user: "",
            project: "",
            env: &[],
            flags: &[],
            key: "/default_provider",
            value: "claude".into(),
            source: "default",
        },
        Case {
            name: "user file",
            user: USER_MODEL,
            project: "",
            env: &[],
            flags: &[],
            key: model,
            value: "from-user".into(),
            source: "file:<user>",
        },
        Case {
            name: "project over user",
            user: USER_MODEL,
            project: PROJECT_MODEL,
            env: &[],
            flags: &[],
            key: model,
            value: "from-project".into(),
            source: "file:<project>",
        },
        Case {
            name: "seed env over files",
            user: USER_MODEL,
            project: PROJECT_MODEL,
            env: &[("CLAUDE_CLI_MODEL", "from-seed-env")],
            flags: &[],
            key: model,
            value: "from-seed-env".into(),
            source: "env:CLAUDE_CLI_MODEL",
        },
        Case {
            name: "FORGE_ env over seed env",
            user: "",
            project: PROJECT_MODEL,
            env: &[
                ("CLAUDE_CLI_MODEL", "seed"),
                ("FORGE_CLAUDE_MODEL", "forge"),
            ],
            flags: &[],
            key: model,
            value: "forge".into(),
            source: "env:FORGE_CLAUDE_MODEL",
        },
        Case {
            name: "flag over everything",
            user: USER_MODEL,
            project: PROJECT_MODEL,
            env: &[("FORGE_CLAUDE_MODEL", "forge")],
            flags: &["--model", "from-flag"],
            key: model,
            value: "from-flag".into(),
            source: "flag",
        },
        Case {
            name: "global timeout default",
            user: "",
            project: "",
            env: &[],
            flags: &[],
            key: "/timeout_ms",
            value: 1_800_000.into(),
            source: "default",
        },
        Case {
            name: "global timeout from user file",
            user: "timeout_ms = 5000\n",
            project: "",
            env: &[],
            flags: &[],
            key: "/timeout_ms",
            value: 5000.into(),
            source: "file:<user>",
        },
        Case {
            name: "global timeout from env",
            user: "timeout_ms = 5000\n",
            project: "",
            env: &[("FORGE_TIMEOUT_MS", "7000")],
            flags: &[],
            key: "/timeout_ms",
            value: 7000.into(),
            source: "env:FORGE_TIMEOUT_MS",
        },
        Case {
            name: "provider from env",
            user: "default_provider = \"gemini\"\n",
            project: "",
            env: &[("FORGE_PROVIDER", "codex")],
            flags: &[],
            key: "/default_provider",
            value: "codex".into(),
            source: "env:FORGE_PROVIDER",
        },
        Case {
            name: "provider from flag",
            user: "",
            project: "",
            env: &[("FORGE_PROVIDER", "codex")],
            flags: &["--provider", "gemini"],
            key: "/default_provider",
            value: "gemini".into(),
            source: "flag",
        },
        Case {
            name: "flag --timeout goes to the chosen provider",
            user: "",
            project: "",
            env: &[("FORGE_PROVIDER", "codex")],
            flags: &["--timeout", "2.5"],
            key: "/providers/codex/timeout_ms",
            value: 2500.into(),
            source: "flag",
        },
        Case {
            name: "seed budget cap across runs",
            user: "",
            project: "",
            env: &[("CLAUDE_CLI_MAX_TOTAL_COST_USD", "25")],
            flags: &[],
            key: "/providers/claude/max_total_cost_usd",
            value: 25.0.into(),
            source: "env:CLAUDE_CLI_MAX_TOTAL_COST_USD",
        },
        Case {
            name: "default pricing (estimates)",
            user: "",
            project: "",
            env: &[],
            flags: &[],
            key: "/providers/codex/pricing/gpt-5.5",
            value: serde_json::json!({"input_per_mtok": 1.25, "cached_input_per_mtok": 0.125, "output_per_mtok": 10.0}),
            source: "default",
        },
        Case {
            name: "pricing overridden per model",
            user: "",
            project: "[providers.codex.pricing.\"gpt-5.5\"]\ninput_per_mtok = 2\noutput_per_mtok = 20\n",
            env: &[],
            flags: &[],
            key: "/providers/codex/pricing/gpt-5.5",
            value: serde_json::json!({"input_per_mtok": 2.0, "cached_input_per_mtok": null, "output_per_mtok": 20.0}),
            source: "file:<project>",
        },
    ];
    for case in &cases {
        check(case);
    }
}

#[test]
fn bad_configuration_exits_2_naming_file_key_and_reason() {
    let sandbox = Sandbox::new();
    let project = sandbox.work().join("forge.toml");
    let check = |text: &str, key: &str, reason: &str| {
        std::fs::write(&project, text).unwrap();
        for args in [&["config", "show"][..], &["run", "hi"][..]] {
            let out = sandbox.forge().args(args).output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{text} {args:?}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            let file = format!("file {}", project.display());
            for want in [file.as_str(), key, reason] {
                assert!(stderr.contains(want), "{want:?} not in {stderr}");
            }
        }
    };
    check("timout_ms = 5\n", "key `timout_ms`", "unknown key");
    check(
        "[providers.claude]\nmax_turns = \"ten\"\n",
        "key `providers.claude.max_turns`",
        "expected an integer, found string",
    );
    check(
        "[providers.aider]\nmodel = \"x\"\n",
        "key `providers.aider`",
        "not registered",
    );

    std::fs::remove_file(&project).unwrap();
    let out = sandbox
        .forge()
        .args(["config", "show"])
        .env("FORGE_TIMEOUT_MS", "soon")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("environment variable FORGE_TIMEOUT_MS"));
}

#[test]
fn config_show_text_lists_values_with_sources() {
    let sandbox = Sandbox::new();
    let out = sandbox
        .forge()
        .args(["config", "show", "--model", "m1"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.lines()
            .any(|l| l.starts_with("default_provider = \"claude\"") && l.ends_with("# default")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("providers.claude.model = \"m1\"") && l.ends_with("# flag")),
        "{text}"
    );
}
