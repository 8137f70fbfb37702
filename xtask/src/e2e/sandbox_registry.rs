//! The sandbox group's registry cases (issue 42), tried as a new user would, with forge's
//! defaults: a guarded task on a Rust crate with a dependency (cargo fetches `itoa` from
//! crates.io) and on a Python package with one (pip installs `six` from PyPI), each with
//! each real CLI against the fake model — the baseline builds, the agent's first change
//! fails its test, the failure goes back into the same session, the corrected change is
//! validated and committed, all under the default sandbox: the registries are reached
//! through forge's proxy and nothing is refused. With `[sandbox] registries = false` the
//! same Rust task cannot build: the report says beside the step what the sandbox refused and
//! that the baseline could not run, and the change is not let through.
//!
//! | case | shows |
//! |---|---|
//! | `sandbox_registry_rust` | cargo build/test with a crates.io dependency: committed after one correction in the same session, nothing refused |
//! | `sandbox_registry_python` | pip install (`--target`) of a PyPI dependency, unittest: the same |
//! | `sandbox_registry_shut` | `registries = false`: "build could not reach index.crates.io: the sandbox refused it — add it to [sandbox] allow_hosts", the baseline an environment failure, nothing committed |

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::Context;
use forge_cli::offline::{self, CodexHome};
use serde_json::Value;

use super::Ctx;
use super::case_run::{isolate_env, run_with_watchdog};
use super::server::ServerProcess;
use super::summary::Verdict;

const TIMEOUT: Duration = Duration::from_secs(420);

/// The language of a case's repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Rust,
    Python,
}

/// `sandbox_registry_rust`, `sandbox_registry_python`, or the Rust task with the registries
/// shut (`shut`).
pub fn verdict(ctx: &Ctx, provider: &'static str, lang: Lang, shut: bool) -> Verdict {
    let case = match (lang, shut) {
        (_, true) => "sandbox_registry_shut",
        (Lang::Rust, false) => "sandbox_registry_rust",
        (Lang::Python, false) => "sandbox_registry_python",
    };
    Verdict::timed(case, provider, |v| one(ctx, provider, lang, shut, v))
}

const CARGO_TOML: &str = "[workspace]\n\n[package]\nname = \"halves\"\nversion = \"0.1.0\"\n\
                          edition = \"2021\"\n\n[dependencies]\nitoa = \"1\"\n";
const LIB_RS: &str = "/// The answer, as text.\npub fn answer() -> String {\n    \
                      itoa::Buffer::new().format(42u32).to_owned()\n}\n\n#[cfg(test)]\nmod tests {\n    \
                      #[test]\n    fn answers() {\n        assert_eq!(super::answer(), \"42\");\n    }\n}\n";
const APP_PY: &str = "import six\n\n\ndef answer():\n    return six.text_type(42)\n";
const TEST_APP_PY: &str = "import unittest\n\nimport app\n\n\nclass AppTest(unittest.TestCase):\n    \
                           def test_answer(self):\n        self.assertEqual(app.answer(), \"42\")\n";

/// The repository's files and its `[validation]`.
fn repository(lang: Lang) -> (Vec<(&'static str, Vec<u8>)>, &'static str) {
    match lang {
        Lang::Rust => (
            vec![
                ("Cargo.toml", CARGO_TOML.as_bytes().to_vec()),
                ("src/lib.rs", LIB_RS.as_bytes().to_vec()),
                (
                    ".gitignore",
                    b".forgecode/\n/target/\nCargo.lock\n".to_vec(),
                ),
            ],
            "build = \"cargo build --all-targets\"\ntest = \"cargo test\"\n",
        ),
        Lang::Python => (
            vec![
                ("requirements.txt", b"six==1.16.0\n".to_vec()),
                ("app.py", APP_PY.as_bytes().to_vec()),
                ("test_app.py", TEST_APP_PY.as_bytes().to_vec()),
                (
                    ".gitignore",
                    b".forgecode/\n.deps/\n__pycache__/\n".to_vec(),
                ),
            ],
            "install = \"python3 -m pip install --quiet --no-cache-dir --disable-pip-version-check \
             --target .deps -r requirements.txt\"\ntest = \"env PYTHONPATH=.deps python3 -m unittest\"\n",
        ),
    }
}

/// A home as a user who built before has it: the package caches a validation step writes
/// exist (the sandbox binds only what exists), the toolchains themselves stay where they are.
fn user_home(home: &Path) -> anyhow::Result<BTreeMap<String, String>> {
    let cargo = home.join(".cargo");
    for dir in [cargo.join("registry"), cargo.join("git"), home.join(".npm")] {
        std::fs::create_dir_all(dir)?;
    }
    for file in [".package-cache", ".package-cache-mutate", ".global-cache"] {
        std::fs::write(cargo.join(file), "")?;
    }
    let mut env = super::warm::toolchain_env();
    env.insert("CARGO_HOME".into(), cargo.display().to_string());
    env.insert(
        "npm_config_cache".into(),
        home.join(".npm").display().to_string(),
    );
    Ok(env)
}

fn one(
    ctx: &Ctx,
    provider: &str,
    lang: Lang,
    shut: bool,
    verdict: &mut Verdict,
) -> anyhow::Result<()> {
    let suite = &ctx.suite;
    let name = match (lang, shut) {
        (_, true) => "shut",
        (Lang::Rust, false) => "rust",
        (Lang::Python, false) => "python",
    };
    let root = suite.work.join("registry").join(name).join(provider);
    if root.exists() {
        std::fs::remove_dir_all(&root)?;
    }
    let (home, repo) = (root.join("home"), root.join("repo"));
    let toolchain = user_home(&home)?;
    let scenario = ctx.root.join(match lang {
        Lang::Rust => "xtask/src/e2e/task_scenarios/registry_rust.toml",
        Lang::Python => "xtask/src/e2e/task_scenarios/registry_python.toml",
    });
    let server = ServerProcess::start(
        &suite.forge,
        &scenario.to_string_lossy(),
        &root.join("requests.jsonl"),
    )?;
    let configured = offline::configure(
        provider,
        &suite.clis,
        &server.base_url,
        &CodexHome::Template(root.join("codex-template")),
    )?;
    let (mut files, validation) = repository(lang);
    let mut toml = configured.project_toml();
    toml.push_str(&format!(
        "\n[validation]\n{validation}timeout_ms = 240000\n\n[task]\ntimeout_ms = 400000\n{}\n\
         [delivery]\nauthor = \"Forge E2E <forge-e2e@example.invalid>\"\nreconcile_grace_ms = 0\n",
        if shut { "max_cycles = 1\n" } else { "" }
    ));
    files.push(("forge.toml", toml.into_bytes()));
    super::task::make_repo(&repo, &files)?;
    let user_config = root.join("user-config.toml");
    std::fs::write(
        &user_config,
        if shut {
            "[sandbox]\nregistries = false\n"
        } else {
            ""
        },
    )?;

    let mut command = Command::new(&suite.forge);
    command.args(["task", "run", "--provider", configured.provider]);
    if !shut {
        command.arg("--json");
    }
    command
        .arg("--repo")
        .arg(&repo)
        .args(["--timeout", &TIMEOUT.as_secs().to_string()])
        .arg("Add half(), which returns 21 as text, with a test.");
    isolate_env(&mut command, suite);
    command.envs(&configured.process_env);
    command.envs(&toolchain);
    command.env("HOME", &home).env("FORGE_CONFIG", &user_config);
    let output = run_with_watchdog(command, TIMEOUT + Duration::from_secs(30))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if shut {
        check_shut(&stdout, &String::from_utf8_lossy(&output.stderr), verdict);
        return Ok(());
    }
    let report: Value = serde_json::from_str(&stdout).with_context(|| {
        format!(
            "no JSON report (exit {:?}): {}",
            output.status.code(),
            String::from_utf8_lossy(&output.stderr)
        )
    })?;
    check_committed(&report, &repo, lang, verdict)
}

/// Validated and committed after one correction in the same session; nothing refused.
fn check_committed(
    report: &Value,
    repo: &Path,
    lang: Lang,
    verdict: &mut Verdict,
) -> anyhow::Result<()> {
    let s = |p: &str| report.pointer(p).and_then(Value::as_str).unwrap_or("");
    let f = &mut verdict.failures;
    verdict.status = s("/stop_reason").to_owned();
    let brief = || {
        format!(
            "status {:?}, stop {:?}, baseline {}, cycles {}, error {:?}",
            s("/status"),
            s("/stop_reason"),
            report["baseline"],
            report["cycles"],
            s("/error")
        )
    };
    if s("/status") != "committed" {
        f.push(format!("not committed: {}", brief()));
    }
    if report.pointer("/baseline/passed") != Some(&Value::Bool(true)) {
        f.push(format!(
            "the baseline did not pass (the dependency not fetched?): {}",
            brief()
        ));
    }
    let cycles = report["cycles"].as_array().cloned().unwrap_or_default();
    let first = s("/cycles/0/session_id");
    let fed_back = cycles.len() == 2
        && s("/cycles/1/kind") == "validation_fix"
        && report.pointer("/cycles/0/validation/passed") == Some(&Value::Bool(false))
        && report.pointer("/cycles/1/validation/passed") == Some(&Value::Bool(true))
        && !first.is_empty()
        && s("/cycles/1/session_id") == first;
    if !fed_back {
        f.push(format!(
            "want a failed first validation fed back into the same session, then a pass: {}",
            brief()
        ));
    }
    if !s("/sandbox").starts_with("on") {
        f.push(format!("report.sandbox {:?}, want on", s("/sandbox")));
    }
    // Nothing refused to the build, the install or the tests (a CLI's own background
    // traffic — codex asks github.com and chatgpt.com — is its run's, not theirs), and no
    // registry refused to anyone.
    let steps: Vec<&Value> = report
        .pointer("/baseline/steps")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .chain(cycles.iter().flat_map(|c| {
            c.pointer("/validation/steps")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        }))
        .collect();
    let step_refusals: Vec<&Value> = steps
        .iter()
        .filter_map(|s| s["sandbox_denied"].as_array())
        .flatten()
        .collect();
    if !step_refusals.is_empty() {
        f.push(format!("the sandbox refused a step: {step_refusals:?}"));
    }
    let registries = forge_domain::sandbox::registry_hosts();
    let refused: Vec<&str> = report["sandbox_denied"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["target"].as_str())
        .collect();
    let registry_refused: Vec<&&str> = refused
        .iter()
        .filter(|t| {
            let (host, port) = t.rsplit_once(':').unwrap_or((t, "443"));
            let port = port.parse().unwrap_or(443);
            registries.iter().any(|p| p.matches(host, port))
        })
        .collect();
    if !registry_refused.is_empty() {
        f.push(format!("a registry was refused: {registry_refused:?}"));
    }
    let (file, want) = match lang {
        Lang::Rust => ("src/lib.rs", "format(21u32)"),
        Lang::Python => ("app.py", "six.text_type(21)"),
    };
    let commit = s("/delivery/commit");
    let shown = Command::new("git")
        .args(["show", &format!("{commit}:{file}")])
        .current_dir(repo)
        .output()
        .context("git show")?;
    if !String::from_utf8_lossy(&shown.stdout).contains(want) {
        f.push(format!("commit {commit:?}: {file} does not hold {want}"));
    }
    verdict.note = format!(
        "{} cycles, {} steps, the CLI's own refusals {}",
        cycles.len(),
        steps.len(),
        refused.len()
    );
    Ok(())
}

/// With the registries shut: the refusal beside the step, the baseline not an excuse,
/// nothing committed.
fn check_shut(stdout: &str, stderr: &str, verdict: &mut Verdict) {
    let f = &mut verdict.failures;
    for want in [
        "build could not reach index.crates.io: the sandbox refused it — add it to [sandbox] \
         allow_hosts",
        "baseline build could not run",
    ] {
        if !stdout.contains(want) {
            f.push(format!(
                "the report does not say {want:?}:\n{stdout}\n{stderr}"
            ));
        }
    }
    if stdout.contains("baseline already failing: build") {
        f.push(format!(
            "the baseline's build is called already failing:\n{stdout}"
        ));
    }
    if stdout.contains(": committed") || stdout.contains(": validated") {
        f.push(format!("the change was let through:\n{stdout}"));
    }
    verdict.note = "refusal reported beside the step".to_owned();
}
