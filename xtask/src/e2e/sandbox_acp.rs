//! The sandbox group's ACP case (issue 42): `claude-agent-acp` whose claude CLI lies under
//! `/tmp` (`CLAUDE_CODE_EXECUTABLE` in the provider's `env`, as a user who installed it
//! there writes it) runs confined with forge's defaults — the path its configuration names
//! is readable inside although the sandbox's `/tmp` is private. Pointed at a claude that is
//! not there, the same agent fails during start-up and the result says more than the
//! protocol's "Query closed": the agent's stderr and the sandbox's hint.
//!
//! | case | shows |
//! |---|---|
//! | `sandbox_acp_cli_under_tmp` | the run succeeds with the sandbox on; a missing executable fails with the start-up hint |

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, ensure};
use serde_json::Value;

use super::Ctx;
use super::case_run::{isolate_env, run_with_watchdog};
use super::summary::Verdict;

const CASE: &str = "sandbox_acp_cli_under_tmp";
const TIMEOUT: Duration = Duration::from_secs(180);

pub fn verdict(ctx: &Ctx) -> Verdict {
    Verdict::timed(CASE, "claude", |v| one(ctx, v))
}

/// A claude installation under `/tmp`: `node_modules/.bin/claude` and its package, as npm
/// lays them out (the package itself a link to the pinned one, so nothing is downloaded).
struct TmpInstall {
    dir: PathBuf,
}

impl TmpInstall {
    fn new(clis: &Path) -> anyhow::Result<Self> {
        let dir = PathBuf::from(format!("/tmp/forge-e2e-acp-clis-{}", std::process::id()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        let bin = clis.join("node_modules/.bin/claude");
        let target = std::fs::read_link(&bin)
            .with_context(|| format!("{} is not npm's link", bin.display()))?;
        let package = clis.join("node_modules/@anthropic-ai/claude-code");
        let modules = dir.join("node_modules");
        std::fs::create_dir_all(modules.join(".bin"))?;
        std::fs::create_dir_all(modules.join("@anthropic-ai"))?;
        std::os::unix::fs::symlink(&package, modules.join("@anthropic-ai/claude-code"))?;
        std::os::unix::fs::symlink(&target, modules.join(".bin/claude"))?;
        Ok(Self { dir })
    }

    fn claude(&self) -> PathBuf {
        self.dir.join("node_modules/.bin/claude")
    }
}

impl Drop for TmpInstall {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn one(ctx: &Ctx, verdict: &mut Verdict) -> anyhow::Result<()> {
    let suite = &ctx.suite;
    let install = TmpInstall::new(&suite.clis)?;
    let case = super::acp::prepare(suite, "claude", CASE, "plain_answer")?;
    let toml_path = case.workspace.join("forge.toml");
    let configured = std::fs::read_to_string(&toml_path)?;
    let with_executable = |path: &Path| {
        configured.replacen(
            "env = { ",
            &format!(
                "env = {{ CLAUDE_CODE_EXECUTABLE = {:?}, ",
                path.display().to_string()
            ),
            1,
        )
    };
    ensure!(
        with_executable(&install.claude()) != configured,
        "the agent's configuration has no env table: {configured}"
    );

    std::fs::write(&toml_path, with_executable(&install.claude()))?;
    let result = run(suite, &case.workspace, &case.provider)?;
    let f = &mut verdict.failures;
    if result["status"] != "success" {
        f.push(format!(
            "with claude under /tmp: status {} (errors: {})",
            result["status"], result["errors"]
        ));
    }
    let sandbox = result
        .pointer("/metadata/sandbox")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !sandbox.starts_with("on") {
        f.push(format!("metadata.sandbox {sandbox:?}, want on"));
    }
    if !result["content"]
        .as_str()
        .is_some_and(|t| t.contains("Hello"))
    {
        f.push(format!("content {}", result["content"]));
    }

    // The same agent told of a claude that is not there: a start-up failure that says why.
    std::fs::write(
        &toml_path,
        with_executable(&install.dir.join("node_modules/.bin/missing-claude")),
    )?;
    let failed = run(suite, &case.workspace, &case.provider)?;
    let errors = failed["errors"].to_string();
    if failed["status"] == "success" {
        f.push("a missing claude still succeeded".to_owned());
    } else if !errors.contains("start-up") {
        f.push(format!(
            "the start-up failure carries no hint of the sandbox: {errors}"
        ));
    }
    verdict.note = format!("confined: {sandbox}");
    Ok(())
}

/// One `run --json` of the agent: its printed result.
fn run(suite: &super::case_run::Suite, workspace: &Path, provider: &str) -> anyhow::Result<Value> {
    let mut command = Command::new(&suite.forge);
    command
        .arg("run")
        .args(["--provider", provider])
        .arg("--workdir")
        .arg(workspace)
        .args(["--json", "--permission-mode", "bypass"])
        .args(["--timeout", &TIMEOUT.as_secs().to_string()])
        .arg("Say hello.");
    isolate_env(&mut command, suite);
    let output = run_with_watchdog(command, TIMEOUT + Duration::from_secs(30))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(&stdout).with_context(|| {
        format!(
            "no JSON result (exit {:?}); stderr: {}",
            output.status.code(),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}
