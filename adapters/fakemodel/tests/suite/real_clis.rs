//! The real pinned CLIs (claude, codex, gemini) against the fake model server.
//!
//! Skipped, with a note on stderr, when the binaries are not installed
//! (`FORGE_E2E_CLIS_DIR`, default `<repo>/target/e2e/clis`; `cargo xtask e2e` installs them).
//! All three CLIs of a scenario run at the same time against ONE server: this also proves
//! that per-conversation turn counters keep parallel runs apart.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use forge_adapter_fakemodel::{
    FakeModelOptions, FakeModelServer, LoggedRequest, RunningServer, Scenario,
};

use super::cli_harness::{Cli, CliRun, RunOptions, clis_dir, run_cli, scratch, session_id};

/// Start a server for a builtin scenario, logging requests under `target/fakemodel-tmp`.
async fn server_for(name: &str, scratch_root: &Path) -> RunningServer {
    let options = FakeModelOptions {
        port: None,
        request_log_path: Some(scratch_root.join("requests.jsonl")),
    };
    FakeModelServer::start(Scenario::builtin(name).expect("builtin"), options)
        .await
        .expect("start server")
}

/// The runs of one scenario. Bind `_scratch` to a name (not `..`): it keeps the workspaces.
struct Outcome {
    runs: Vec<CliRun>,
    log: Vec<LoggedRequest>,
    _scratch: Option<tempfile::TempDir>,
}

/// Run every CLI in parallel on `name`'s first prompt; `None` when the CLIs are absent.
async fn run_all(name: &str, options: RunOptions) -> Option<Outcome> {
    let Some(clis) = clis_dir() else {
        eprintln!(
            "note: real CLIs not installed (set FORGE_E2E_CLIS_DIR or run `cargo xtask e2e`); skipping {name}"
        );
        return None;
    };
    let scratch_root = scratch();
    let server = server_for(name, scratch_root.path()).await;
    let prompt = Scenario::builtin(name).expect("builtin").prompts[0].clone();
    let base_url = server.base_url();
    let options = Arc::new(options);
    let mut handles = Vec::new();
    for cli in Cli::ALL {
        let root: PathBuf = scratch_root.path().join(cli.name());
        let (clis, base_url, prompt, options) = (
            clis.clone(),
            base_url.clone(),
            prompt.clone(),
            Arc::clone(&options),
        );
        handles.push(tokio::task::spawn_blocking(move || {
            run_cli(&clis, cli, &base_url, &prompt, &root, &options)
        }));
    }
    let mut runs = Vec::new();
    for handle in handles {
        runs.push(handle.await.expect("cli thread"));
    }
    let log = server.request_log();
    server.shutdown().await.expect("shutdown");
    let scratch = if std::env::var_os("FAKEMODEL_KEEP").is_some() {
        eprintln!("kept {}", scratch_root.keep().display());
        None
    } else {
        Some(scratch_root)
    };
    Some(Outcome {
        runs,
        log,
        _scratch: scratch,
    })
}

fn assert_success(run: &CliRun, final_text: &str) {
    assert!(!run.timed_out, "timed out: {}", run.describe());
    assert_eq!(run.exit_code, Some(0), "{}", run.describe());
    let text = format!("{}\n{}", run.stdout, gemini_assistant_text(&run.stdout));
    assert!(
        text.contains(final_text),
        "missing {final_text:?}: {}",
        run.describe()
    );
}

/// Gemini streams assistant text as many `message` lines with `delta: true`: join them.
fn gemini_assistant_text(stdout: &str) -> String {
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|v| v["type"] == "message" && v["role"] == "assistant")
        .filter_map(|v| v["content"].as_str().map(str::to_owned))
        .collect()
}

/// Outcomes the server logged for `vendor`'s turn requests, in order.
fn outcomes(log: &[LoggedRequest], vendor: &str) -> Vec<String> {
    log.iter()
        .filter(|r| r.vendor.as_deref() == Some(vendor) && r.side_call.is_none())
        .map(|r| {
            format!(
                "{}:{}",
                r.turn.map_or("-".into(), |t| t.to_string()),
                r.outcome
            )
        })
        .collect()
}

fn vendor_of(cli: Cli) -> &'static str {
    match cli {
        Cli::Claude => "anthropic",
        Cli::Codex => "open_ai",
        Cli::Gemini => "gemini",
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_answer_with_every_cli() {
    let Some(Outcome {
        runs,
        log,
        _scratch: _keep,
    }) = run_all("plain_answer", RunOptions::default()).await
    else {
        return;
    };
    for run in &runs {
        assert_success(run, "Hello from the fake model.");
        assert_eq!(
            outcomes(&log, vendor_of(run.cli)),
            ["0:served"],
            "{}",
            run.cli.name()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_file_with_every_cli() {
    let Some(Outcome {
        runs,
        log,
        _scratch: _keep,
    }) = run_all("write_file", RunOptions::default()).await
    else {
        return;
    };
    for run in &runs {
        assert_success(run, "Created hello.txt");
        assert_eq!(
            run.file("hello.txt").as_deref(),
            Some("hi\n"),
            "{}",
            run.describe()
        );
        assert_eq!(
            outcomes(&log, vendor_of(run.cli)),
            ["0:served", "1:served"],
            "{}",
            run.cli.name()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_read_shell_with_every_cli() {
    let Some(Outcome {
        runs,
        log,
        _scratch: _keep,
    }) = run_all("write_read_shell", RunOptions::default()).await
    else {
        return;
    };
    for run in &runs {
        assert_success(run, "notes.txt has 2 lines");
        assert_eq!(
            run.file("notes.txt").as_deref(),
            Some("alpha\nbeta\n"),
            "{}",
            run.describe()
        );
        // `wc -l notes.txt` really ran: its output is echoed in the tool result.
        assert!(run.stdout.contains("2 notes.txt"), "{}", run.describe());
        let expected = ["0:served", "1:served", "2:served", "3:served"];
        assert_eq!(
            outcomes(&log, vendor_of(run.cli)),
            expected,
            "{}",
            run.cli.name()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_fail_with_every_cli() {
    let Some(Outcome {
        runs,
        _scratch: _keep,
        ..
    }) = run_all("shell_fail", RunOptions::default()).await
    else {
        return;
    };
    for run in &runs {
        assert_success(run, "The command failed with exit code 3");
        assert!(run.stdout.contains("boom"), "{}", run.describe());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limit_then_success_with_every_cli() {
    let Some(Outcome {
        runs,
        log,
        _scratch: _keep,
    }) = run_all("rate_limit_then_success", RunOptions::default()).await
    else {
        return;
    };
    for run in &runs {
        assert_success(run, "Hello after a rate limit.");
        let seen = outcomes(&log, vendor_of(run.cli));
        assert_eq!(seen, ["0:failed 429", "0:served"], "{}", run.cli.name());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_cut_with_every_cli() {
    let Some(Outcome {
        runs,
        log,
        _scratch: _keep,
    }) = run_all("stream_cut", RunOptions::default()).await
    else {
        return;
    };
    for run in &runs {
        assert_success(run, "after a cut stream.");
        assert_eq!(
            outcomes(&log, vendor_of(run.cli)),
            ["0:cut", "0:served"],
            "{}",
            run.cli.name()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_continues_the_conversation_with_every_cli() {
    let Some(clis) = clis_dir() else {
        eprintln!("note: real CLIs not installed; skipping resume");
        return;
    };
    let scratch_root = scratch();
    let server = server_for("resume", scratch_root.path()).await;
    let prompts = Scenario::builtin("resume").expect("builtin").prompts;
    let mut handles = Vec::new();
    for cli in Cli::ALL {
        let root = scratch_root.path().join(cli.name());
        let (clis, base_url, prompts) = (clis.clone(), server.base_url(), prompts.clone());
        handles.push(tokio::task::spawn_blocking(move || {
            let first = run_cli(
                &clis,
                cli,
                &base_url,
                &prompts[0],
                &root,
                &RunOptions::default(),
            );
            let resume = RunOptions {
                resume: session_id(&first.stdout),
                ..RunOptions::default()
            };
            let second = run_cli(&clis, cli, &base_url, &prompts[1], &root, &resume);
            (first, second)
        }));
    }
    for handle in handles {
        let (first, second) = handle.await.expect("cli thread");
        assert_success(&first, "Noted: kiwi.");
        assert_success(&second, "Resumed the session: the word was kiwi.");
        assert_eq!(
            session_id(&first.stdout),
            session_id(&second.stdout),
            "{}",
            second.describe()
        );
    }
    let log = server.request_log();
    for cli in Cli::ALL {
        assert_eq!(
            outcomes(&log, vendor_of(cli)),
            ["0:served", "1:served"],
            "{}",
            cli.name()
        );
    }
    server.shutdown().await.expect("shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_error_always_ends_in_an_error() {
    // Gemini is left out: it retries 5xx for minutes with no switch to shorten it.
    let Some(clis) = clis_dir() else {
        eprintln!("note: real CLIs not installed; skipping server_error_always");
        return;
    };
    let scratch_root = scratch();
    let server = server_for("server_error_always", scratch_root.path()).await;
    let base_url = server.base_url();
    let claude_opts = RunOptions {
        extra_env: vec![("CLAUDE_CODE_MAX_RETRIES".into(), "1".into())],
        ..RunOptions::default()
    };
    let (claude_root, codex_root) = (
        scratch_root.path().join("claude"),
        scratch_root.path().join("codex"),
    );
    let (clis2, base2) = (clis.clone(), base_url.clone());
    let claude = tokio::task::spawn_blocking(move || {
        run_cli(
            &clis2,
            Cli::Claude,
            &base2,
            "Say hello.",
            &claude_root,
            &claude_opts,
        )
    });
    let codex = tokio::task::spawn_blocking(move || {
        run_cli(
            &clis,
            Cli::Codex,
            &base_url,
            "Say hello.",
            &codex_root,
            &RunOptions::default(),
        )
    });
    let claude = claude.await.expect("claude thread");
    let codex = codex.await.expect("codex thread");
    assert!(
        !claude.timed_out && claude.exit_code == Some(1),
        "{}",
        claude.describe()
    );
    assert!(
        claude.stdout.contains("\"is_error\":true"),
        "{}",
        claude.describe()
    );
    assert!(
        claude.stdout.contains("fake model: internal error"),
        "{}",
        claude.describe()
    );
    assert!(
        !codex.timed_out && codex.exit_code == Some(1),
        "{}",
        codex.describe()
    );
    assert!(codex.stdout.contains("turn.failed"), "{}", codex.describe());
    eprintln!(
        "server_error_always: claude gave up after {:.1}s, codex after {:.1}s",
        claude.elapsed.as_secs_f64(),
        codex.elapsed.as_secs_f64()
    );
    server.shutdown().await.expect("shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_tool_rounds_with_every_cli() {
    let Some(Outcome {
        runs,
        log,
        _scratch: _keep,
    }) = run_all("five_tool_rounds", RunOptions::default()).await
    else {
        return;
    };
    for run in &runs {
        assert_success(run, "All five steps are done.");
        assert_eq!(
            run.file("step4.txt").as_deref(),
            Some("four\n"),
            "{}",
            run.describe()
        );
        assert_eq!(
            run.file("step2.txt").as_deref(),
            Some("two\n"),
            "{}",
            run.describe()
        );
        assert_eq!(
            outcomes(&log, vendor_of(run.cli)).len(),
            6,
            "{}",
            run.cli.name()
        );
    }
}
