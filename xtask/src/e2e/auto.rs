//! The `auto` group of `cargo xtask e2e`: the autonomous loop through the real CLIs.
//!
//! Each case writes a scenario whose *routes* script the planner's JSON answers by iteration
//! (`Iteration: N of` is in every planning prompt) and the executor's turns by task (`Task:
//! <task>` is in every executor prompt): the planner and executor runs are separate
//! conversations of the fake model. Then `forge-code-agent auto --json` runs in a workspace
//! whose `forge.toml` points the provider at the server, and the saved state, the report, the
//! workspace and the run bundles are checked.
//!
//! Cases: three iterations then done (`completed`); the emergency-stop file created while
//! iteration 2's executor streams (stopped within 1 s of the file appearing); malformed
//! planner answers (`too_many_errors`); `max_iterations`; and a kill -9 of forge during
//! iteration 2's execution followed by `auto --resume` (same iteration count, every finished
//! run's cost counted once).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use serde_json::Value;

use super::case_run::{CaseDir, Suite, isolate_env, prepare};
use super::cases::{Ending, Expect};
use super::server::ServerProcess;
use super::summary::Verdict;
use super::{Ctx, pool};

/// The loop cases, by name (`cargo xtask e2e -s auto` runs them all, `-s auto_kill_resume` one).
pub const CASES: [&str; 5] = [
    "auto_complete",
    "auto_emergency",
    "auto_malformed",
    "auto_max_iterations",
    "auto_kill_resume",
];

/// The longest a loop case may take before forge is killed.
const CASE_LIMIT: Duration = Duration::from_secs(300);
/// The emergency stop must end the loop within this long of the file appearing.
const STOP_WITHIN_MS: u64 = 1000;

/// The loop cases (for `-s`).
pub fn names() -> Vec<&'static str> {
    CASES.to_vec()
}

/// Runs the selected loop cases × providers, `--jobs` at a time.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    let (suite, cases) = (&ctx.suite, &ctx.scenarios);
    let mut servers = Vec::new();
    for case in cases {
        let file = suite.work.join(format!("{case}.toml"));
        std::fs::write(&file, scenario(case))?;
        let log = suite.work.join(format!("{case}.requests.jsonl"));
        let server = ServerProcess::start(&suite.forge, &file.to_string_lossy(), &log)?;
        servers.push((*case, server));
    }
    let mut queue = Vec::new();
    for case in cases {
        for &provider in &ctx.providers {
            queue.push((*case, provider));
        }
    }
    // Longest first: the kill-and-resume and emergency cases, gemini's above all.
    queue.sort_by_key(|(c, p)| {
        (
            *p != "gemini",
            !c.contains("kill"),
            !c.contains("emergency"),
        )
    });
    let verdicts = pool::run_all("auto", queue, ctx.jobs, |(case, provider)| {
        let Some((_, server)) = servers.iter().find(|(c, _)| *c == case) else {
            return Verdict::of(
                case,
                provider,
                Err(anyhow::anyhow!("no fake model for the case")),
            );
        };
        Verdict::run(case, provider, |verdict| {
            let (failures, note) = run_case(suite, case, provider, server)?;
            (verdict.failures, verdict.note) = (failures, note);
            Ok(())
        })
    });
    Ok(verdicts)
}

/// The fake model's script for `case`.
fn scenario(case: &str) -> String {
    let plan = |n: u32, task: &str| {
        format!(
            "[[routes]]\nprompt_contains = \"Iteration: {n} of\"\n[[routes.turns]]\n\
             text = '{{\"next_task\": \"{task}\", \"done\": false, \"reason\": \"step {n}\"}}'\n"
        )
    };
    // A plan that asks a research question first (the same one twice: a miss, then a hit).
    let plan_researched = |n: u32, task: &str| {
        format!(
            "[[routes]]\nprompt_contains = \"Iteration: {n} of\"\n[[routes.turns]]\n\
             text = '{{\"next_task\": \"{task}\", \"done\": false, \"reason\": \"step {n}\", \
             \"research\": \"How should a step file end?\"}}'\n"
        )
    };
    let done = |n: u32| {
        format!(
            "[[routes]]\nprompt_contains = \"Iteration: {n} of\"\n[[routes.turns]]\n\
             text = '{{\"next_task\": \"\", \"done\": true, \"reason\": \"all steps written\"}}'\n"
        )
    };
    // The executor's last answer in `slow_chunks` pieces 500 ms apart (0: at once).
    let write = |file: &str, content: &str, slow_chunks: u32| {
        let last = if slow_chunks > 0 {
            format!(
                "text = \"Wrote {file}, now checking it slowly.\"\nchunks = {slow_chunks}\nchunk_delay_ms = 500\n"
            )
        } else {
            format!("text = \"Wrote {file}.\"\n")
        };
        format!(
            "[[routes]]\nprompt_contains = \"Task: write {file}\"\n[[routes.turns]]\n\
             tool_calls = [{{ action = \"write_file\", path = \"{file}\", content = \"{content}\\n\" }}]\n\
             [[routes.turns]]\n{last}"
        )
    };
    let mut s = format!("name = \"{case}\"\n[[turns]]\ntext = \"(no route matched)\"\n");
    match case {
        "auto_malformed" => s.push_str(
            "[[routes]]\nprompt_contains = \"Iteration: \"\n[[routes.turns]]\n\
             text = \"I think the next step is to write more tests.\"\n",
        ),
        "auto_max_iterations" => {
            s.push_str(&plan(1, "write note.txt"));
            s.push_str(&plan(2, "write note.txt"));
            s.push_str(&write("note.txt", "noted", 0));
        }
        _ => {
            // The emergency stop must cut a run that would go on for 30 s; the killed run
            // only needs to be in progress (its re-run plays the same script again).
            let slow = match case {
                "auto_emergency" => 60,
                "auto_kill_resume" => 8,
                _ => 0,
            };
            s.push_str(&plan(1, "write step1.txt"));
            s.push_str(&plan_researched(2, "write step2.txt"));
            s.push_str(&plan_researched(3, "write step3.txt"));
            s.push_str(
                "[[routes]]\nprompt_contains = \"You are a researcher\"\n[[routes.turns]]\n\
                 text = \"End every step file with a newline.\"\n",
            );
            s.push_str(&done(4));
            s.push_str(&write("step1.txt", "one", 0));
            s.push_str(&write("step2.txt", "two", slow));
            s.push_str(&write("step3.txt", "three", 0));
        }
    }
    s
}

fn auto_yaml(case: &str, provider: &str) -> String {
    let (iterations, errors) = match case {
        "auto_max_iterations" => (2, 3),
        _ => (5, 2),
    };
    format!(
        "task:\n  goal: Write the step files (forge e2e {case})\n\
         provider:\n  name: {provider}\n  timeout_seconds: 120\n\
         safety:\n  max_iterations: {iterations}\n  max_duration_hours: 1\n  \
         iteration_timeout_seconds: 120\n  max_consecutive_errors: {errors}\n  \
         emergency_stop_file: STOP\n  max_total_cost_usd: 100\n\
         persona:\n  default_persona: engineer\n  personas:\n    \
         - name: engineer\n      keywords: [implement]\n      instructions: You write code.\n    \
         - name: checker\n      keywords: [step2]\n      instructions: You write carefully.\n\
         research:\n  enabled: true\n  cache_minutes: 30\n\
         executor: run\n"
    )
}

/// A started `forge-code-agent auto`, its output going to files.
struct Forge {
    child: Child,
    stdout: PathBuf,
    stderr: PathBuf,
}

impl Forge {
    fn start(
        suite: &Suite,
        case: &CaseDir,
        config: &Path,
        resume: bool,
        tag: &str,
    ) -> anyhow::Result<Self> {
        let stdout = case.root.join(format!("{tag}.stdout"));
        let stderr = case.root.join(format!("{tag}.stderr"));
        let mut command = Command::new(&suite.forge);
        command
            .arg("auto")
            .arg("--config")
            .arg(config)
            .arg("--workdir")
            .arg(&case.workspace)
            .args(["--json", "--permission-mode", "bypass"]);
        if resume {
            command.arg("--resume");
        }
        isolate_env(&mut command, suite);
        command.envs(&case.offline.process_env);
        command
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout)?)
            .stderr(std::fs::File::create(&stderr)?);
        let child = command.spawn().context("spawning forge-code-agent auto")?;
        Ok(Self {
            child,
            stdout,
            stderr,
        })
    }

    /// Waits for the exit (killing forge past `limit`); the exit code and the JSON report.
    fn finish(mut self, limit: Duration) -> anyhow::Result<(Option<i32>, Option<Value>, String)> {
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait()? {
                break status;
            }
            if started.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                bail!("forge-code-agent auto did not end within {limit:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let out = std::fs::read_to_string(&self.stdout).unwrap_or_default();
        let err = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        Ok((status.code(), serde_json::from_str(&out).ok(), err))
    }

    fn kill9(mut self) -> anyhow::Result<()> {
        // Our own child, by its pid: SIGKILL, no chance to save anything.
        self.child.kill()?;
        self.child.wait()?;
        Ok(())
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or_default()
}

fn state(case: &CaseDir) -> Option<Value> {
    let text =
        std::fs::read_to_string(case.workspace.join(".forgecode/auto/workflow_state.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Waits until the saved state shows iteration 2's executor run started.
fn wait_for_second_execution(case: &CaseDir, limit: Duration) -> anyhow::Result<()> {
    let started = Instant::now();
    loop {
        if let Some(s) = state(case) {
            let step = &s["step"];
            if step["iteration"] == 2
                && step["phase"]["phase"] == "execute"
                && step["run_id"].is_string()
            {
                return Ok(());
            }
        }
        if started.elapsed() > limit {
            bail!("iteration 2's execution never started");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn run_case(
    suite: &Suite,
    case_name: &'static str,
    provider: &'static str,
    server: &ServerProcess,
) -> anyhow::Result<(Vec<String>, String)> {
    let expect = Expect {
        scenario: case_name,
        ending: Ending::Success,
        text: None,
        tools: &[],
        files: &[],
        shell_fails: false,
        resume_text: None,
        timeout: CASE_LIMIT,
    };
    let case = prepare(suite, &expect, provider, &server.base_url)?;
    let config = case.root.join("auto.yaml");
    std::fs::write(&config, auto_yaml(case_name, provider))?;
    let mut failures = Vec::new();
    let mut note = String::new();
    let (code, report, stderr) = match case_name {
        "auto_emergency" => {
            let forge = Forge::start(suite, &case, &config, false, "auto")?;
            wait_for_second_execution(&case, CASE_LIMIT)?;
            // Let the CLI get into its slow answer, then pull the brake.
            std::thread::sleep(Duration::from_millis(1500));
            let created = now_ms();
            std::fs::write(case.workspace.join("STOP"), "")?;
            let result = forge.finish(CASE_LIMIT)?;
            let exited = now_ms().saturating_sub(created);
            let stopped_at = state(&case)
                .and_then(|s| s["stopped"]["at_ms"].as_u64())
                .unwrap_or_default();
            let after = stopped_at.saturating_sub(created);
            note = format!(
                "stopped {after} ms after the file appeared, forge exited after {exited} ms"
            );
            if after > STOP_WITHIN_MS {
                failures.push(format!("stopped {after} ms after the stop file appeared"));
            }
            result
        }
        "auto_kill_resume" => {
            let forge = Forge::start(suite, &case, &config, false, "auto")?;
            wait_for_second_execution(&case, CASE_LIMIT)?;
            std::thread::sleep(Duration::from_millis(1500));
            forge.kill9()?;
            let killed_run = state(&case)
                .and_then(|s| s["step"]["run_id"].as_str().map(str::to_owned))
                .unwrap_or_default();
            let result = Forge::start(suite, &case, &config, true, "resume")?.finish(CASE_LIMIT)?;
            failures.extend(check_costs(&case, &killed_run));
            result
        }
        _ => Forge::start(suite, &case, &config, false, "auto")?.finish(CASE_LIMIT)?,
    };
    let (want_code, want_reason, want_iterations) = match case_name {
        "auto_emergency" => (3, "emergency_stop", 2),
        "auto_malformed" => (1, "too_many_errors", 2),
        "auto_max_iterations" => (3, "max_iterations", 2),
        _ => (0, "completed", 4),
    };
    if code != Some(want_code) {
        failures.push(format!(
            "exit {code:?}, expected {want_code}; stderr: {}",
            stderr.lines().rev().take(5).collect::<Vec<_>>().join(" | ")
        ));
    }
    let Some(report) = report else {
        failures.push("no JSON report on stdout".into());
        return Ok((failures, note));
    };
    if report["stop_reason"] != want_reason {
        failures.push(format!(
            "stop_reason {}, expected {want_reason}",
            report["stop_reason"]
        ));
    }
    if report["totals"]["iterations"] != want_iterations {
        failures.push(format!(
            "{} iterations, expected {want_iterations}",
            report["totals"]["iterations"]
        ));
    }
    let md = case.workspace.join(".forgecode/auto/report.md");
    if !std::fs::read_to_string(&md)
        .is_ok_and(|t| t.contains(&format!("Stop reason: {want_reason}")))
    {
        failures.push(format!("{} does not give the stop reason", md.display()));
    }
    match case_name {
        "auto_complete" | "auto_kill_resume" => {
            for (file, content) in [
                ("step1.txt", "one\n"),
                ("step2.txt", "two\n"),
                ("step3.txt", "three\n"),
            ] {
                let got = std::fs::read_to_string(case.workspace.join(file)).unwrap_or_default();
                if got != content {
                    failures.push(format!("{file}: {got:?}, expected {content:?}"));
                }
            }
            let research = (&report["research"]["hits"], &report["research"]["misses"]);
            if research != (&Value::from(1), &Value::from(1)) {
                failures.push(format!("research hits/misses {research:?}, expected 1/1"));
            }
            let switches = report["persona_switches"].as_array().map_or(0, Vec::len);
            if switches != 2 {
                failures.push(format!(
                    "{switches} persona switches, expected 2 (to checker and back)"
                ));
            }
            if case_name == "auto_complete" {
                failures.extend(check_costs(&case, ""));
            }
        }
        "auto_emergency" if report["stopped_during"] != "iteration 2, execute" => {
            failures.push(format!("stopped during {}", report["stopped_during"]));
        }
        "auto_malformed" => {
            let details: Vec<&str> = report["iterations"]
                .as_array()
                .map(|a| a.iter().filter_map(|i| i["detail"].as_str()).collect())
                .unwrap_or_default();
            if details.len() != 2 || !details.iter().all(|d| d.contains("no JSON object")) {
                failures.push(format!("planner errors {details:?}"));
            }
        }
        _ => {}
    }
    Ok((failures, note))
}

/// Every finished run's own cost counted once: the loop's total equals the sum of the
/// bundles' `result.json` costs, each recorded run appears once, and the run killed with
/// forge (no `result.json`) is not counted.
fn check_costs(case: &CaseDir, killed_run: &str) -> Vec<String> {
    let mut failures = Vec::new();
    let Some(state) = state(case) else {
        return vec!["no saved state".into()];
    };
    let recorded: Vec<String> = state["history"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|i| i["runs"].as_array().into_iter().flatten())
        .filter_map(|r| r["run_id"].as_str().map(str::to_owned))
        .collect();
    let mut unique = recorded.clone();
    unique.sort();
    unique.dedup();
    if unique.len() != recorded.len() {
        failures.push(format!("a run is recorded twice: {recorded:?}"));
    }
    if !killed_run.is_empty() && recorded.iter().any(|r| r == killed_run) {
        failures.push(format!("the killed run {killed_run} was counted"));
    }
    let mut sum = 0.0;
    let mut with_result = 0;
    for dir in super::case_run::run_dirs(&case.workspace) {
        let Ok(text) = std::fs::read_to_string(dir.join("result.json")) else {
            continue;
        };
        with_result += 1;
        let result: Value = serde_json::from_str(&text).unwrap_or_default();
        sum += result["metadata"]["cost_usd"].as_f64().unwrap_or(0.0);
    }
    if with_result != recorded.len() {
        failures.push(format!(
            "{with_result} finished run bundles, {} runs recorded",
            recorded.len()
        ));
    }
    let total = state["total_cost_usd"].as_f64().unwrap_or(-1.0);
    if (total - sum).abs() > 1e-6 {
        failures.push(format!("total cost {total}, the finished runs cost {sum}"));
    }
    if sum <= 0.0 {
        failures.push("the runs reported no cost".into());
    }
    failures
}
