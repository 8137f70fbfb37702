//! `cargo xtask e2e` task group: `forge-code-agent task run` with the real claude, codex
//! and gemini against the fake model, on a tiny repository whose validation is a shell
//! script (`[validation] test = "sh test.sh"`), so no toolchain is needed — but the
//! `mask_*` cases, which run real `python3 -m unittest` and `cargo test`.
//!
//! | case | scenario | shows |
//! |---|---|---|
//! | `fix_cycle` | the first change leaves the test failing | correction resumes the same session, 2 cycles, validated, cost summed |
//! | `secret` | the agent writes a cloud key | CRITICAL review finding → review-fix run removes it |
//! | `cost_ceiling` | as `fix_cycle`, ceiling below two cycles | stopped / `cost_ceiling` after one cycle |
//! | `text_only` | text, no tool calls | failed / `no_changes` |
//! | `baseline` | lint failing before the task | baseline recorded, lint not blamed, validated |
//! | `mask_unittest` | `test_legacy` fails before the task; the agent breaks `test_data` (unittest) | failed, `test_data` newly failing, `test_legacy` already failing, nothing committed; the instruction file names `test_legacy` and carries the repository map with the report's first-ranked file |
//! | `mask_cargo` | the same with `cargo test` | the same |
//! | `mask_safe` | the same repository; the change breaks nothing | validated and committed beside the failing `test_legacy` |
//! | `ctrl_c` | a slow model, SIGINT to forge | stopped / `cancelled`, instruction file byte-identical |
//! | `sigkill` | a slow model, SIGKILL to forge | `task gc --keep-worktrees` restores the file byte for byte, `task gc` removes the tree |
//!
//! Each repository has a pre-existing instruction file (`CLAUDE.md` / `AGENTS.md` /
//! `GEMINI.md`, odd bytes: no final newline, CRLF, non-ASCII) that must be byte-identical
//! in the task's work tree afterwards.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use forge_cli::offline::{self, CodexHome};
use serde_json::Value;

use super::case_run::{Suite, isolate_env};
use super::server::ServerProcess;
use super::summary::Verdict;
use super::{Ctx, pool};

/// Per task run: the fake model answers at once, so this is mostly the CLIs' start-up.
const TASK_TIMEOUT_SECS: u64 = 150;

/// The pre-existing instruction file's bytes.
const ORIGINAL_INSTRUCTIONS: &[u8] =
    b"# House rules\r\nUse tabs.\r\nCaf\xc3\xa9 \xe2\x9c\x93 no final newline";

const TEST_SH: &str = "# The answer, once written, must be 42.\n[ ! -f answer.txt ] || grep -qx 42 answer.txt || { echo \"FAIL: answer.txt holds $(cat answer.txt), expected 42\"; exit 1; }\necho PASS\n";
const LINT_SH: &str = "echo 'lint: style.txt has trailing spaces (pre-existing)'\nexit 1\n";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kill {
    None,
    Interrupt,
    Hard,
}

#[derive(Debug, Clone, Copy)]
struct TaskCase {
    name: &'static str,
    scenario: &'static str,
    /// Appended to `forge.toml`.
    toml: &'static str,
    lint: bool,
    kill: Kill,
    repo: Repo,
}

/// The repository a case runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Repo {
    /// `test.sh` wants 42 in `answer.txt`.
    Answer,
    /// Python: `test_legacy` already fails, `test_data` reads `data.txt`.
    MaskUnittest,
    /// The same as a Rust crate under `cargo test`.
    MaskCargo,
}

const CASES: &[TaskCase] = &[
    TaskCase {
        name: "fix_cycle",
        scenario: "task_fix_cycle",
        toml: "",
        lint: false,
        kill: Kill::None,
        repo: Repo::Answer,
    },
    TaskCase {
        name: "secret",
        scenario: "task_secret",
        toml: "",
        lint: false,
        kill: Kill::None,
        repo: Repo::Answer,
    },
    TaskCase {
        name: "cost_ceiling",
        scenario: "task_fix_cycle",
        toml: "max_total_cost_usd = 0.0000001\n",
        lint: false,
        kill: Kill::None,
        repo: Repo::Answer,
    },
    TaskCase {
        name: "text_only",
        scenario: "task_text_only",
        toml: "",
        lint: false,
        kill: Kill::None,
        repo: Repo::Answer,
    },
    TaskCase {
        name: "baseline",
        scenario: "task_baseline",
        toml: "",
        lint: true,
        kill: Kill::None,
        repo: Repo::Answer,
    },
    TaskCase {
        name: "ctrl_c",
        scenario: "task_slow",
        toml: "",
        lint: false,
        kill: Kill::Interrupt,
        repo: Repo::Answer,
    },
    TaskCase {
        name: "sigkill",
        scenario: "task_slow",
        toml: "",
        lint: false,
        kill: Kill::Hard,
        repo: Repo::Answer,
    },
    TaskCase {
        name: "mask_unittest",
        scenario: "task_mask_break",
        toml: "max_cycles = 1\n",
        lint: false,
        kill: Kill::None,
        repo: Repo::MaskUnittest,
    },
    TaskCase {
        name: "mask_cargo",
        scenario: "task_mask_break",
        toml: "max_cycles = 1\n",
        lint: false,
        kill: Kill::None,
        repo: Repo::MaskCargo,
    },
    TaskCase {
        name: "mask_safe",
        scenario: "task_mask_safe",
        toml: "",
        lint: false,
        kill: Kill::None,
        repo: Repo::MaskUnittest,
    },
];

const MASK_PY: &str = "import unittest\n\n\nclass AppTest(unittest.TestCase):\n    def test_legacy(self):\n        self.assertEqual(1, 2, 'legacy is broken')\n\n    def test_data(self):\n        with open('data.txt') as f:\n            self.assertEqual(f.read(), 'ok\\n')\n";
const MASK_CARGO_TOML: &str =
    "[package]\nname = \"mask\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n";
const MASK_LIB_RS: &str = "pub fn data() -> &'static str {\n    include_str!(\"../data.txt\")\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn test_legacy() {\n        assert_eq!(1, 2, \"legacy is broken\");\n    }\n\n    #[test]\n    fn test_data() {\n        assert_eq!(super::data(), \"ok\\n\");\n    }\n}\n";

/// The test command of a masking repository, with the toolchain's homes spelled out (the
/// case runs forge with a private `HOME`).
fn mask_test_command(repo: Repo) -> String {
    match repo {
        Repo::MaskCargo => {
            let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
            let cargo_home =
                std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{home}/.cargo"));
            let rustup_home =
                std::env::var("RUSTUP_HOME").unwrap_or_else(|_| format!("{home}/.rustup"));
            // The build stays in the work tree (`target/`, ignored): the sandbox lets the
            // validation write nowhere else.
            format!("env CARGO_HOME={cargo_home} RUSTUP_HOME={rustup_home} cargo test --offline")
        }
        _ => "python3 -m unittest".to_owned(),
    }
}

/// Names of the task cases (for `-s`).
pub fn names() -> Vec<&'static str> {
    CASES.iter().map(|c| c.name).collect()
}

/// What `fake-model serve --scenario` takes: a built-in name (`task_fix_cycle` ships in the
/// binary, for `demo`), else this group's own file.
fn scenario_file(root: &Path, name: &str) -> PathBuf {
    if forge_adapter_fakemodel::Scenario::builtin_names().contains(&name) {
        return PathBuf::from(name);
    }
    root.join("xtask/src/e2e/task_scenarios")
        .join(format!("{name}.toml"))
}

/// Runs the selected cases × providers, at most 3 at a time.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    let mut cases = Vec::new();
    for case in CASES.iter().filter(|c| ctx.scenarios.contains(&c.name)) {
        for &provider in &ctx.providers {
            cases.push((*case, provider));
        }
    }
    Ok(pool::run_all(
        "task",
        cases,
        ctx.jobs.min(3),
        |(case, provider)| {
            Verdict::run(case.name, provider, |verdict| {
                verdict.status = "-".into();
                run_case(&ctx.suite, &ctx.root, case, provider, verdict)
            })
        },
    ))
}

fn run_case(
    suite: &Suite,
    root: &Path,
    case: TaskCase,
    provider: &'static str,
    verdict: &mut Verdict,
) -> anyhow::Result<()> {
    let dir = suite.work.join("task").join(case.name).join(provider);
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let log = dir.join("requests.jsonl");
    let scenario = scenario_file(root, case.scenario);
    let server = ServerProcess::start(&suite.forge, &scenario.to_string_lossy(), &log)?;
    let repo = dir.join("repo");
    let offline = offline::configure(
        provider,
        &suite.clis,
        &server.base_url,
        &CodexHome::Template(dir.join("codex-template")),
    )?;
    let instruction = instruction_file(provider);
    let mut toml = offline.project_toml();
    toml.push_str(&pricing(provider));
    if case.repo == Repo::Answer {
        toml.push_str("\n[validation]\ntest = \"sh test.sh\"\n");
    } else {
        toml.push_str(&format!(
            "\n[validation]\ntest = \"{}\"\n",
            mask_test_command(case.repo)
        ));
    }
    if case.lint {
        toml.push_str("lint = \"sh lint.sh\"\n");
    }
    toml.push_str("timeout_ms = 60000\n\n[task]\ntimeout_ms = 240000\n");
    toml.push_str(case.toml);
    let deliver = case.name == "mask_safe" || case.repo != Repo::Answer;
    if deliver {
        toml.push_str(
            "\n[delivery]\nauthor = \"Forge E2E <forge-e2e@example.invalid>\"\nreconcile_grace_ms = 0\n",
        );
    }
    let mut files: Vec<(&str, Vec<u8>)> = vec![
        ("forge.toml", toml.into_bytes()),
        ("test.sh", TEST_SH.as_bytes().to_vec()),
        (instruction, ORIGINAL_INSTRUCTIONS.to_vec()),
        (
            ".gitignore",
            b".forgecode/\n__pycache__/\nCargo.lock\n/target/\n".to_vec(),
        ),
    ];
    if case.lint {
        files.push(("lint.sh", LINT_SH.as_bytes().to_vec()));
    }
    match case.repo {
        Repo::Answer => {}
        Repo::MaskUnittest => {
            files.push(("test_app.py", MASK_PY.as_bytes().to_vec()));
            files.push(("data.txt", b"ok\n".to_vec()));
        }
        Repo::MaskCargo => {
            files.push(("Cargo.toml", MASK_CARGO_TOML.as_bytes().to_vec()));
            files.push(("src/lib.rs", MASK_LIB_RS.as_bytes().to_vec()));
            files.push(("data.txt", b"ok\n".to_vec()));
        }
    }
    make_repo(&repo, &files)?;

    let prompt = "Write the answer to answer.txt.";
    let mut command = Command::new(&suite.forge);
    command
        .args(["task", "run"])
        .args(if deliver {
            &[][..]
        } else {
            &["--no-deliver"][..]
        })
        .args(["--provider", provider, "--json"])
        .arg("--repo")
        .arg(&repo)
        .args(["--timeout", &TASK_TIMEOUT_SECS.to_string()])
        .arg(prompt);
    isolate_env(&mut command, suite);
    command.envs(&offline.process_env);
    let run = match case.kill {
        Kill::None => run_to_end(command)?,
        Kill::Interrupt | Kill::Hard => run_and_kill(command, &repo, case.kill)?,
    };
    let report: Option<Value> = serde_json::from_str(&run.stdout).ok();
    let f = &mut verdict.failures;
    verdict.status = report
        .as_ref()
        .and_then(|r| r.get("stop_reason"))
        .and_then(Value::as_str)
        .unwrap_or("no report")
        .to_owned();
    let worktree = report
        .as_ref()
        .and_then(|r| r.get("worktree"))
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .or_else(|| only_worktree(&repo));
    if case.kill == Kill::Hard {
        return check_sigkill(suite, &repo, worktree.as_deref(), instruction, f);
    }
    let Some(report) = report else {
        bail!(
            "no JSON report (exit {:?}); stderr: {}",
            run.exit,
            tail(&run.stderr)
        );
    };
    let committed = report.pointer("/status").and_then(Value::as_str) == Some("committed");
    if committed {
        // Delivery removed the work tree; the delivery group checks what was committed.
    } else if let Some(tree) = &worktree {
        check_instruction_file(tree, instruction, f);
    } else {
        f.push("no work tree in the report".into());
    }
    let s = |p: &str| report.pointer(p).and_then(Value::as_str).unwrap_or("");
    let cycles = report
        .get("cycles")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut expect = |what: &str, ok: bool| {
        if !ok {
            f.push(format!("{what}; report: {}", brief(&report)));
        }
    };
    match case.name {
        "fix_cycle" => {
            expect(
                "status validated",
                s("/status") == "validated" && s("/stop_reason") == "validated",
            );
            expect("exit 0", run.exit == Some(0));
            expect("2 cycles", cycles.len() == 2);
            expect(
                "second cycle is a validation fix",
                s("/cycles/1/kind") == "validation_fix",
            );
            expect(
                "first validation failed, second passed",
                report.pointer("/cycles/0/validation/passed") == Some(&Value::Bool(false))
                    && report.pointer("/cycles/1/validation/passed") == Some(&Value::Bool(true)),
            );
            let first = s("/cycles/0/session_id").to_owned();
            expect("a session id", !first.is_empty());
            expect("same session resumed", s("/cycles/1/session_id") == first);
            expect(
                "not a fresh session",
                report.pointer("/cycles/1/fresh_session") != Some(&Value::Bool(true)),
            );
            let sum: f64 = cycles
                .iter()
                .filter_map(|c| c.get("cost_usd").and_then(Value::as_f64))
                .sum();
            let total = report
                .get("cost_usd")
                .and_then(Value::as_f64)
                .unwrap_or(-1.0);
            expect("cost summed over cycles", (sum - total).abs() < 1e-9);
            expect(
                "the resumed request carries the earlier history",
                resumed_with_history(&log, prompt),
            );
            let paths: Vec<&str> = report
                .get("files")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.get("path").and_then(Value::as_str))
                        .collect()
                })
                .unwrap_or_default();
            expect("the change is answer.txt alone", paths == ["answer.txt"]);
            expect(
                "answer.txt holds 42",
                worktree
                    .as_ref()
                    .and_then(|t| std::fs::read_to_string(t.join("answer.txt")).ok())
                    .as_deref()
                    == Some("42\n"),
            );
        }
        "secret" => {
            expect("status validated", s("/status") == "validated");
            expect("a review-fix cycle", s("/cycles/1/kind") == "review_fix");
            let text = worktree
                .as_ref()
                .and_then(|t| std::fs::read_to_string(t.join("uploader.py")).ok())
                .unwrap_or_default();
            expect(
                "the key is gone",
                !text.contains("AKIA") && text.contains("os.environ"),
            );
            let findings = report
                .pointer("/review/findings")
                .and_then(Value::as_array)
                .map_or(0, |a| {
                    a.iter()
                        .filter(|x| x.get("severity").and_then(Value::as_str) == Some("critical"))
                        .count()
                });
            expect("no critical finding left", findings == 0);
        }
        "cost_ceiling" => {
            expect(
                "stopped / cost_ceiling",
                s("/status") == "stopped" && s("/stop_reason") == "cost_ceiling",
            );
            expect("one cycle", cycles.len() == 1);
            expect("exit 5", run.exit == Some(5));
            expect(
                "a cost was counted",
                report
                    .get("cost_usd")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0)
                    > 0.0,
            );
        }
        "text_only" => {
            expect(
                "failed / no_changes",
                s("/status") == "failed" && s("/stop_reason") == "no_changes",
            );
            expect("exit 1", run.exit == Some(1));
            expect(
                "no files",
                report
                    .get("files")
                    .and_then(Value::as_array)
                    .is_some_and(Vec::is_empty),
            );
        }
        "baseline" => {
            expect(
                "validated",
                s("/status") == "validated" && s("/stop_reason") == "validated",
            );
            expect("one cycle", cycles.len() == 1);
            expect(
                "baseline recorded as failing",
                report.pointer("/baseline/passed") == Some(&Value::Bool(false)),
            );
            let lint_failed_before = report
                .pointer("/baseline/steps")
                .and_then(Value::as_array)
                .is_some_and(|st| {
                    st.iter().any(|x| {
                        x.get("name").and_then(Value::as_str) == Some("lint")
                            && x.get("exit_code") == Some(&Value::from(1))
                    })
                });
            expect("lint failed in the baseline", lint_failed_before);
        }
        "mask_unittest" | "mask_cargo" => {
            expect(
                "failed / max_cycles",
                s("/status") == "failed" && s("/stop_reason") == "max_cycles",
            );
            let names = |field: &str| -> Vec<String> {
                report
                    .pointer(&format!("/tests/0/{field}"))
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let newly = names("newly_failing");
            let already = names("already_failing");
            expect(
                "test_data newly failing, alone",
                newly.len() == 1 && newly[0].ends_with("test_data"),
            );
            expect(
                "test_legacy already failing",
                already.len() == 1 && already[0].ends_with("test_legacy"),
            );
            expect(
                "blamed on the change",
                report.pointer("/tests/0/regression") == Some(&Value::Bool(true)),
            );
            expect(
                "nothing delivered",
                report
                    .pointer("/delivery/commit")
                    .is_none_or(Value::is_null),
            );
            let branch = s("/branch");
            expect(
                "no commit on the task branch",
                commits_on(&repo, branch) == Some(0),
            );
            expect(
                "the instruction file named test_legacy",
                written_instructions(&repo, s("/task_id"), instruction).contains("test_legacy"),
            );
            // The repository map replaced the tree listing: the file the report says it
            // ranked first is in the instruction file's map.
            let written = written_instructions(&repo, s("/task_id"), instruction);
            let first = report
                .pointer("/context_files/0")
                .and_then(Value::as_str)
                .unwrap_or("(none ranked)");
            expect(
                "the instruction file carries the repository map with the first-ranked file",
                written.contains("## Repository map")
                    && written.contains(&format!("\n{first}\n"))
                    && !written.contains("## Repository index"),
            );
        }
        "mask_safe" => {
            expect("committed", s("/status") == "committed");
            expect(
                "not blamed, test_legacy already failing",
                report.pointer("/tests/0/regression") == Some(&Value::Bool(false))
                    && report
                        .pointer("/tests/0/already_failing/0")
                        .and_then(Value::as_str)
                        .is_some_and(|n| n.ends_with("test_legacy")),
            );
            let branch = s("/branch");
            expect(
                "one commit on the task branch",
                commits_on(&repo, branch) == Some(1),
            );
        }
        "ctrl_c" => {
            expect("stopped / cancelled", s("/stop_reason") == "cancelled");
            expect("exit 130", run.exit == Some(130));
        }
        _ => {}
    }
    drop(server);
    Ok(())
}

/// Commits on `branch` that `main` lacks (`None`: git could not say).
pub(super) fn commits_on(repo: &Path, branch: &str) -> Option<u32> {
    let out = Command::new("git")
        .args(["rev-list", "--count", &format!("main..{branch}")])
        .current_dir(repo)
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// The instruction file as forge wrote it, from the task's artifacts.
fn written_instructions(repo: &Path, task_id: &str, name: &str) -> String {
    std::fs::read_to_string(repo.join(".forgecode/tasks").join(task_id).join(name))
        .unwrap_or_default()
}

fn instruction_file(provider: &str) -> &'static str {
    match provider {
        "codex" => "AGENTS.md",
        "gemini" => "GEMINI.md",
        _ => "CLAUDE.md",
    }
}

/// Prices for the models the offline CLIs ask for, so every provider reports a cost.
pub(crate) fn pricing(provider: &str) -> String {
    let models: &[&str] = match provider {
        "codex" => &[offline::CODEX_MODEL],
        "gemini" => &[
            "gemini-2.5-pro",
            "gemini-2.5-flash",
            "gemini-3-pro-preview",
            "gemini-2.5-flash-lite",
        ],
        _ => &[],
    };
    models
        .iter()
        .map(|m| {
            format!(
                "\n[providers.{provider}.pricing.\"{m}\"]\ninput_per_mtok = 1.0\noutput_per_mtok = 5.0\n"
            )
        })
        .collect()
}

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<()> {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=e2e",
            "-c",
            "user.email=e2e@example.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .status()
        .with_context(|| format!("git {}", args.join(" ")))?;
    anyhow::ensure!(status.success(), "git {} failed", args.join(" "));
    Ok(())
}

pub(super) fn make_repo(repo: &Path, files: &[(&str, Vec<u8>)]) -> anyhow::Result<()> {
    std::fs::create_dir_all(repo)?;
    git(repo, &["init", "-q", "-b", "main"])?;
    for (name, bytes) in files {
        if let Some(parent) = repo.join(name).parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(repo.join(name), bytes)?;
    }
    git(repo, &["add", "-A"])?;
    git(repo, &["commit", "-q", "-m", "initial"])?;
    Ok(())
}

struct Finished {
    exit: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run_to_end(mut command: Command) -> anyhow::Result<Finished> {
    let output = command
        .stdin(Stdio::null())
        .output()
        .context("running forge-code-agent task run")?;
    Ok(Finished {
        exit: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

/// Starts forge, waits until the agent runs (the instruction-file marker exists and a run
/// bundle appeared), then sends SIGINT or SIGKILL to forge.
fn run_and_kill(mut command: Command, repo: &Path, kill: Kill) -> anyhow::Result<Finished> {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("spawning forge-code-agent task run")?;
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let running = only_worktree(repo).is_some_and(|t| t.join(".forgecode/runs").is_dir())
            && marker_exists(repo);
        if running {
            // Let the CLI get into its (slow) model turn.
            std::thread::sleep(Duration::from_secs(3));
            break;
        }
        if Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let signal = if kill == Kill::Hard { "-KILL" } else { "-INT" };
    let _ = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status();
    let output = child.wait_with_output()?;
    Ok(Finished {
        exit: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

fn marker_exists(repo: &Path) -> bool {
    std::fs::read_dir(repo.join(".forgecode/tasks"))
        .map(|dirs| {
            dirs.filter_map(Result::ok)
                .any(|d| d.path().join("guard.json").is_file())
        })
        .unwrap_or(false)
}

fn only_worktree(repo: &Path) -> Option<PathBuf> {
    std::fs::read_dir(repo.join(".forgecode/worktrees"))
        .ok()?
        .filter_map(Result::ok)
        .map(|d| d.path())
        .next()
}

fn check_instruction_file(tree: &Path, name: &str, failures: &mut Vec<String>) {
    match std::fs::read(tree.join(name)) {
        Ok(bytes) if bytes == ORIGINAL_INSTRUCTIONS => {}
        Ok(bytes) => failures.push(format!(
            "{name} differs from the original after the task ({} bytes, expected {})",
            bytes.len(),
            ORIGINAL_INSTRUCTIONS.len()
        )),
        Err(e) => failures.push(format!("{name} missing after the task: {e}")),
    }
}

fn check_sigkill(
    suite: &Suite,
    repo: &Path,
    worktree: Option<&Path>,
    instruction: &str,
    f: &mut Vec<String>,
) -> anyhow::Result<()> {
    let Some(tree) = worktree else {
        bail!("no work tree was created before the kill");
    };
    let during = std::fs::read(tree.join(instruction)).unwrap_or_default();
    if during == ORIGINAL_INSTRUCTIONS {
        f.push("the instruction file was not written before the kill (test did not bite)".into());
    }
    if !marker_exists(repo) {
        f.push("no crash marker after SIGKILL".into());
    }
    let gc = |extra: &[&str]| -> anyhow::Result<Finished> {
        let mut c = Command::new(&suite.forge);
        c.args(["task", "gc", "--json"])
            .arg("--repo")
            .arg(repo)
            .args(extra);
        isolate_env(&mut c, suite);
        run_to_end(c)
    };
    let first = gc(&["--keep-worktrees"])?;
    if first.exit != Some(0) {
        f.push(format!(
            "task gc --keep-worktrees exit {:?}: {}",
            first.exit,
            tail(&first.stderr)
        ));
    }
    check_instruction_file(tree, instruction, f);
    if marker_exists(repo) {
        f.push("the marker is still there after gc".into());
    }
    let second = gc(&[])?;
    if second.exit != Some(0) || tree.exists() {
        f.push(format!(
            "task gc did not remove the work tree (exit {:?})",
            second.exit
        ));
    }
    Ok(())
}

/// Some logged model request holds both the correction prompt and the first prompt: the
/// resumed conversation was sent with its history.
fn resumed_with_history(log: &Path, first_prompt: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(log) else {
        return false;
    };
    text.lines()
        .any(|l| l.contains("FIX VALIDATION ERRORS") && l.contains(first_prompt))
}

fn brief(report: &Value) -> String {
    let pick = |k: &str| report.get(k).cloned().unwrap_or(Value::Null);
    serde_json::json!({
        "status": pick("status"),
        "stop_reason": pick("stop_reason"),
        "error": pick("error"),
        "cycles": report.get("cycles").and_then(Value::as_array).map(|c| c.iter().map(|x| serde_json::json!({
            "kind": x.get("kind"), "session_id": x.get("session_id"), "cost_usd": x.get("cost_usd"),
            "validation": x.pointer("/validation/passed"),
        })).collect::<Vec<_>>()),
        "findings": report.pointer("/review/findings"),
        "files": pick("files"),
    })
    .to_string()
}

fn tail(text: &str) -> String {
    let start = text.len().saturating_sub(1500);
    let mut start = start;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].to_owned()
}
