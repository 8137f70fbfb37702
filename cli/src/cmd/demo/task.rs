//! `demo` (the default): forge's main job with each provider's real CLI. Per provider: a
//! scratch git repository (a tiny project whose validation is one shell script), the
//! embedded fake model playing `task_fix_cycle` (the first change leaves the test failing,
//! the resumed session fixes it), then the same pipeline and delivery as `task run`:
//! agent, validation, correction, review, risk, commit on `forge/<task-id>`.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use forge_adapter_fakemodel::{FakeModelOptions, FakeModelServer};
use forge_domain::task::{StopReason, TaskSpec};
use forge_domain::{PermissionMode, ProviderId};

use super::summary::{self, Row};
use super::{Setup, note};
use crate::cmd::fake_model::load_scenario;
use crate::cmd::task::execute::{self, Deliver, Executed, ProviderChoice};
use crate::cmd::task::render;
use crate::compose;
use crate::exit::{Failure, RUN_ERROR, SUCCESS};
use crate::offline::{self, CodexHome};
use crate::output::style::Style;

/// The built-in scenario the task demo plays.
pub const SCENARIO: &str = "task_fix_cycle";

/// The task handed to each provider (the scenario's first prompt when it has one).
const DEFAULT_TASK: &str = "Write the answer to answer.txt.";

/// The scratch project: `test.sh` is its whole test suite (no toolchain needed).
const TEST_SH: &str = "# The answer, once written, must be 42.\n\
[ ! -f answer.txt ] || grep -qx 42 answer.txt || { echo \"FAIL: answer.txt holds $(cat answer.txt), expected 42\"; exit 1; }\n\
echo PASS\n";

const FORGE_TOML: &str = "# The demo's scratch project: its validation is one shell script.\n\
[validation]\ntest = \"sh test.sh\"\ntimeout_ms = 60000\n\n\
[task]\ntimeout_ms = 300000\n\n\
[delivery]\nauthor = \"Forge Demo <demo@forge.invalid>\"\n";

/// Runs the task through each provider, one after the other, and prints the table.
pub async fn run(setup: &Setup, scenario_name: &str, timeout: Duration) -> Result<u8, Failure> {
    let task_text = load_scenario(scenario_name)?
        .prompts
        .first()
        .cloned()
        .unwrap_or_else(|| DEFAULT_TASK.to_owned());
    let mut rows = Vec::new();
    for &provider in &setup.providers {
        let started = Instant::now();
        let row = match run_one(setup, provider, scenario_name, &task_text, timeout).await {
            Ok(row) => row,
            Err(e) => Row::failed(provider, e.to_string(), started.elapsed().as_secs_f64()),
        };
        // Ctrl-C cancelled this provider's task: the user wants the demo to stop.
        let cancelled = row
            .failure
            .as_deref()
            .is_some_and(|f| f.contains(&format!("({})", StopReason::Cancelled.as_str())));
        rows.push(row);
        if cancelled {
            break;
        }
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "\n{}", summary::table(&rows))?;
    out.flush()?;
    Ok(if rows.iter().all(|r| r.failure.is_none()) {
        SUCCESS
    } else {
        RUN_ERROR
    })
}

async fn run_one(
    setup: &Setup,
    provider: &'static str,
    scenario_name: &str,
    task_text: &str,
    timeout: Duration,
) -> Result<Row, Failure> {
    let dir = setup.root.join(provider);
    let repo = dir.join("repo");
    scratch_repo(&repo).await?;
    let repo = std::fs::canonicalize(&repo)?;
    // One server per provider: the scenario's turns are one task's conversation.
    let server = FakeModelServer::start(load_scenario(scenario_name)?, FakeModelOptions::default())
        .await
        .map_err(|e| Failure::Other(e.into()))?;
    let base_url = server.base_url();
    // This process cannot point its own CODEX_HOME at a template, so codex gets one
    // home, private to this provider's task (its resumed session lives there too).
    let offline = offline::configure(
        provider,
        &setup.clis_dir,
        &base_url,
        &CodexHome::Fixed(dir.join("codex-home")),
    )?;
    let agent = compose::agent_builder()
        .provider(provider)
        .provider_settings(provider, offline.settings())
        .workdir(&repo)
        .timeout(timeout)
        .build()
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let provider_id = ProviderId::new(provider).map_err(|e| Failure::Usage(e.to_string()))?;
    let mut template = agent.request("");
    template.provider = provider_id.clone();
    template.permission_mode = Some(PermissionMode::Bypass);
    let mut spec = TaskSpec::new(task_text);
    spec.expected = Some("answer.txt holds the answer test.sh checks".to_owned());
    let choice = ProviderChoice {
        provider: provider_id,
        model: offline.model.clone(),
        fix_model: None,
    };
    let task_config = execute::read_task_config(&repo)?;
    let cache = task_config.cache.clone();
    let request = execute::task_request(
        spec,
        repo.display().to_string(),
        choice,
        template,
        task_config,
    );

    let style = Style::detect(std::io::IsTerminal::is_terminal(&std::io::stdout()));
    {
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "\n{}",
            style.bold(format!("── {provider} ──  task: {task_text}"))
        )?;
        out.flush()?;
    }
    note(&format!(
        "fake model on {base_url}; repository {}",
        repo.display()
    ));
    let executed = execute::execute(
        agent,
        request,
        &cache,
        false,
        Deliver::To {
            repo: &repo,
            push: false,
        },
    )
    .await;
    let _ = server.shutdown().await;
    let Executed {
        outcome,
        undelivered,
    } = executed?;
    let mut out = std::io::stdout().lock();
    out.write_all(render::report_with_delivery(&outcome, style).as_bytes())?;
    out.flush()?;
    let mut row = Row::of(provider, &outcome);
    if let Some(failure) = undelivered {
        row.failure = Some(format!("delivery failed: {failure}"));
    }
    Ok(row)
}

/// `repo`: a git repository with one commit holding the scratch project.
async fn scratch_repo(repo: &Path) -> Result<(), Failure> {
    std::fs::create_dir_all(repo)?;
    for (name, text) in [
        ("forge.toml", FORGE_TOML),
        ("test.sh", TEST_SH),
        (".gitignore", ".forgecode/\n"),
    ] {
        std::fs::write(repo.join(name), text)?;
    }
    git(repo, &["init", "-q"]).await?;
    git(repo, &["add", "-A"]).await?;
    git(
        repo,
        &["commit", "-q", "-m", "demo project: test.sh wants 42"],
    )
    .await
}

async fn git(repo: &Path, args: &[&str]) -> Result<(), Failure> {
    // The user's identity, hooks and signing config are not the demo's business.
    let output = tokio::process::Command::new("git")
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "user.name=Forge Demo",
            "-c",
            "user.email=demo@forge.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(args)
        .current_dir(repo)
        .stdin(std::process::Stdio::null())
        .output()
        .await?;
    if output.status.success() {
        return Ok(());
    }
    Err(Failure::Other(anyhow::anyhow!(
        "git {} in {}: {}",
        args.join(" "),
        repo.display(),
        String::from_utf8_lossy(&output.stderr).trim()
    )))
}
