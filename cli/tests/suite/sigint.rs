//! Ctrl-C (SIGINT to forge) cancels through the kill ladder: exit 130, no process of the
//! run left, and a complete artifact bundle.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;

use super::harness::{Sandbox, alive, fake, wait_for};

/// Starts a run whose fake CLI announces itself, spawns a sleeping grandchild and hangs;
/// once the grandchild's announcement reaches the bundle's events.jsonl (appended live;
/// stdout.log is buffered), sends SIGINT to forge.
/// Returns forge's exit code and the run directory.
pub fn interrupt_hanging_run(sandbox: &Sandbox, extra: &[&str]) -> (i32, PathBuf) {
    let before = sandbox.run_dirs();
    let mut forge = Command::new(assert_cmd::cargo::cargo_bin("forge-code-agent"));
    forge
        .current_dir(sandbox.work())
        .env("XDG_CONFIG_HOME", sandbox.xdg())
        .env("NO_COLOR", "1")
        .args(["run", "--provider", "claude", "--binary"])
        .arg(fake())
        .args([
            "--env",
            "FAKE_ANNOUNCE=1",
            "--env",
            "FAKE_GRANDCHILD=detached",
            "--env",
            "FAKE_HANG=1",
        ])
        .args(extra)
        .arg("hi")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = forge.spawn().unwrap();
    let mut run_dir = None;
    let announced = wait_for(Duration::from_secs(20), || {
        let new: Vec<PathBuf> = sandbox
            .run_dirs()
            .into_iter()
            .filter(|d| !before.contains(d))
            .collect();
        run_dir = new.first().cloned();
        run_dir.as_ref().is_some_and(|d| {
            std::fs::read_to_string(d.join("events.jsonl"))
                .is_ok_and(|log| log.contains("\"grandchild\""))
        })
    });
    assert!(announced, "the fake never announced its grandchild");
    kill(
        Pid::from_raw(i32::try_from(child.id()).unwrap()),
        Signal::SIGINT,
    )
    .unwrap();
    let mut status = None;
    assert!(
        wait_for(Duration::from_secs(20), || {
            status = child.try_wait().unwrap();
            status.is_some()
        }),
        "forge did not exit after SIGINT"
    );
    (status.unwrap().code().unwrap(), run_dir.unwrap())
}

fn announced_pids(stdout_log: &str) -> Vec<i32> {
    stdout_log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "started" || v["type"] == "grandchild")
        .map(|v| i32::try_from(v["pid"].as_i64().unwrap()).unwrap())
        .collect()
}

#[test]
fn sigint_cancels_kills_the_tree_and_keeps_the_bundle() {
    let sandbox = Sandbox::new();
    let (code, run_dir) = interrupt_hanging_run(&sandbox, &["--json"]);
    assert_eq!(code, 130);

    let log = std::fs::read_to_string(run_dir.join("stdout.log")).unwrap();
    let pids = announced_pids(&log);
    assert_eq!(pids.len(), 2, "child and grandchild announced: {log}");
    assert!(
        wait_for(Duration::from_secs(5), || pids.iter().all(|p| !alive(*p))),
        "a process of the run survived: {pids:?}"
    );

    let mut files: Vec<String> = std::fs::read_dir(&run_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with('.'))
        .collect();
    files.sort();
    for want in [
        "events.jsonl",
        "request.json",
        "result.json",
        "run.json",
        "stderr.log",
        "stdout.log",
    ] {
        assert!(
            files.iter().any(|f| f == want),
            "{want} missing from {files:?}"
        );
    }
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("result.json")).unwrap())
            .unwrap();
    assert_eq!(result["status"], "partial");
    assert!(
        result["errors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "cancelled"),
        "{result}"
    );
}
