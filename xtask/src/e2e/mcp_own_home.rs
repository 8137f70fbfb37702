//! The `mcp_own_home` case: forge's tools in the user's own home (no private home; issues 27
//! and 34), for any user in any directory. Each provider runs twice in a workspace under
//! /tmp (world-writable, where gemini refuses a system settings file): as the user the suite
//! runs as, and — when that is root — as a non-root user (`FORGE_E2E_USER`, else
//! `forgetest`) through `runuser`, with a home it owns.
//!
//! The user's config files (gemini's `settings.json` with an MCP server of their own, claude's
//! `settings.json`, codex's `config.toml`) must be byte-identical afterwards. For gemini the
//! run's view of the user's home must hold forge's server beside the user's, link the user's
//! other entries, and gemini must start the user's server (it writes a marker file).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde_json::{Value, json};

use super::Suite;
use super::case_run::{CaseDir, forge_command, prepare, run_command, run_dirs};
use super::cases::Expect;

/// Who runs forge.
enum Who {
    /// The user the suite runs as.
    Current,
    /// A non-root user, through `runuser` (the suite runs as root).
    User(String),
}

impl Who {
    fn label(&self) -> String {
        match self {
            Self::Current if is_root() => "as root".to_owned(),
            Self::Current => "as the current user".to_owned(),
            Self::User(name) => format!("as {name}"),
        }
    }
}

/// The case's runs for `provider`: their problems, each prefixed with who ran it. `toml_tail`
/// is appended to the workspace's `forge.toml` (the command tool); `check` judges a result.
pub fn run(
    suite: &Suite,
    expect: &Expect,
    provider: &str,
    base_url: &str,
    prompt: &str,
    toml_tail: &str,
    check: &dyn Fn(&Value, &Path) -> Vec<String>,
) -> anyhow::Result<Vec<String>> {
    let mut whos = vec![Who::Current];
    if is_root() {
        whos.push(Who::User(
            std::env::var("FORGE_E2E_USER").unwrap_or_else(|_| "forgetest".to_owned()),
        ));
    }
    let mut problems = Vec::new();
    for who in whos {
        let label = who.label();
        let found = run_one(
            suite, expect, provider, base_url, prompt, toml_tail, check, &who,
        )
        .unwrap_or_else(|e| vec![format!("{e:#}")]);
        problems.extend(found.into_iter().map(|p| format!("{label} in /tmp: {p}")));
    }
    Ok(problems)
}

#[expect(
    clippy::too_many_arguments,
    reason = "one call site, each argument distinct"
)]
fn run_one(
    suite: &Suite,
    expect: &Expect,
    provider: &str,
    base_url: &str,
    prompt: &str,
    toml_tail: &str,
    check: &dyn Fn(&Value, &Path) -> Vec<String>,
    who: &Who,
) -> anyhow::Result<Vec<String>> {
    let tag = match who {
        Who::Current => "self",
        Who::User(_) => "user",
    };
    let root = PathBuf::from(format!("/tmp/forge-e2e-own-home-{provider}-{tag}"));
    if root.exists() {
        std::fs::remove_dir_all(&root).with_context(|| format!("clearing {}", root.display()))?;
    }
    let local = Suite {
        work: root.clone(),
        home: root.join("forge-home"),
        ..suite.clone()
    };
    std::fs::create_dir_all(&local.home)?;
    let dir = prepare(&local, expect, provider, base_url)?;
    let user_home = dir.root.join("user-home");
    // In the user's gemini home: gemini starts the user's server inside the sandbox, where
    // that is among the few places it may write.
    let marker = user_home.join(".gemini/user-server-started");
    let own = own_config(provider, &dir, &user_home, &marker)?;
    let toml = dir.workspace.join("forge.toml");
    let mut text = std::fs::read_to_string(&toml)?;
    text = text.replace("isolate_home = true", "isolate_home = false");
    if provider != "codex" {
        // The CLI's env names the user's own home (it ends the file's env table); codex's
        // home is CODEX_HOME of forge's environment.
        text.push_str(&format!("HOME = {:?}\n", user_home.display().to_string()));
    }
    text.push_str(toml_tail);
    std::fs::write(&toml, text)?;

    let mut command = forge_command(&local, &dir, prompt, None, expect.timeout);
    if let Who::User(name) = who {
        hand_over(&root, name, &[&suite.forge, &dir.offline.binary])?;
        command = as_user(&command, name);
    }
    let run = run_command(command, expect.timeout)?;
    let Some(result) = run.result else {
        bail!(
            "no JSON result (exit {:?}): {}",
            run.exit,
            tail(&run.stderr)
        );
    };
    let mut problems = check(&result, &dir.workspace);
    let (path, before) = &own;
    if std::fs::read(path).ok().as_ref() != Some(before) {
        problems.push(format!("the user's {} was changed", path.display()));
    }
    if provider == "gemini" {
        problems.extend(check_gemini_view(&user_home, &dir.workspace, &marker));
    }
    Ok(problems)
}

/// Writes the user's own config file of `provider`; returns its path and bytes.
fn own_config(
    provider: &str,
    dir: &CaseDir,
    user_home: &Path,
    marker: &Path,
) -> anyhow::Result<(PathBuf, Vec<u8>)> {
    let (path, bytes) = match provider {
        "gemini" => {
            let gemini = user_home.join(".gemini");
            std::fs::create_dir_all(gemini.join("tmp"))?;
            std::fs::write(gemini.join("installation_id"), "e2e-installation\n")?;
            let settings = json!({
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "privacy": {"usageStatisticsEnabled": false},
                "mcpServers": {"mine": {
                    "command": "sh",
                    "args": ["-c", format!("echo started >> '{}'", marker.display())],
                    "trust": false
                }}
            });
            let mut bytes = serde_json::to_vec_pretty(&settings)?;
            bytes.push(b'\n');
            (gemini.join("settings.json"), bytes)
        }
        "claude" => (
            user_home.join(".claude/settings.json"),
            b"{\"cleanupPeriodDays\": 30}\n".to_vec(),
        ),
        _ => {
            // The offline setup wrote codex's config.toml into the home CODEX_HOME names.
            let home = dir
                .offline
                .process_env
                .get("CODEX_HOME")
                .map(PathBuf::from)
                .context("codex's offline setup names no CODEX_HOME")?;
            let path = home.join("config.toml");
            let bytes = std::fs::read(&path)?;
            return Ok((path, bytes));
        }
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&path, &bytes)?;
    Ok((path, bytes))
}

/// Gemini's view of the user's home in the run's bundle: forge's server beside the user's,
/// the user's other entries linked; the user's server started; no private home, no system
/// settings file.
fn check_gemini_view(user_home: &Path, workspace: &Path, marker: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(run) = run_dirs(workspace).pop() else {
        return vec!["no run bundle".into()];
    };
    let view = run.join("gemini-home/.gemini");
    match std::fs::read_to_string(view.join("settings.json")) {
        Ok(text) if text.contains("\"forge\"") && text.contains("\"mine\"") => {}
        Ok(text) => problems.push(format!("the view's settings lack forge's or mine: {text}")),
        Err(e) => problems.push(format!(
            "no settings.json in the run's gemini home view: {e}"
        )),
    }
    let linked = std::fs::read_link(view.join("installation_id")).ok();
    if linked.as_deref() != Some(&user_home.join(".gemini/installation_id")) {
        problems.push(format!(
            "installation_id is not linked to the user's: {linked:?}"
        ));
    }
    if !marker.exists() {
        problems.push("gemini did not start the user's own MCP server".into());
    }
    for made in ["home", "gemini-system-settings.json"] {
        if run.join(made).exists() {
            problems.push(format!("the run made {made}"));
        }
    }
    problems
}

/// Gives `root` to `user` and checks the user can run `programs`.
fn hand_over(root: &Path, user: &str, programs: &[&Path]) -> anyhow::Result<()> {
    let status = Command::new("chown")
        .args(["-R", &format!("{user}:")])
        .arg(root)
        .status()
        .context("running chown")?;
    if !status.success() {
        bail!(
            "chown -R {user}: {} failed (does the user exist?)",
            root.display()
        );
    }
    for program in programs {
        let readable = Command::new("runuser")
            .args(["-u", user, "--", "test", "-x"])
            .arg(program)
            .status()
            .context("running runuser")?;
        if !readable.success() {
            bail!(
                "{user} cannot run {}: make the target directory readable by others",
                program.display()
            );
        }
    }
    Ok(())
}

/// `command` run by `user` with the same environment (`runuser -p`).
fn as_user(command: &Command, user: &str) -> Command {
    let mut wrapped = Command::new("runuser");
    wrapped
        .args(["-u", user, "-p", "--"])
        .arg(command.get_program())
        .args(command.get_args());
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    wrapped
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| out.stdout.trim_ascii() == b"0")
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}
