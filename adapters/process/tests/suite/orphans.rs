//! Descendants that leave the run's process group (`setsid`) are found by the run marker in
//! their environment and ended once the run is over; and, at start-up, those of runs whose
//! forge is gone.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use forge_adapter_process::TokioProcessRunner;
use forge_ports::{ProcessRunner, RunningProcess, SpawnOptions};

use super::support::{
    all_items, fake, is_alive, pid_of, quick_options, start, survivors_after, until_type,
};

const GONE_WITHIN: Duration = Duration::from_secs(5);

fn marked_options(run_id: &str) -> SpawnOptions {
    SpawnOptions {
        run_marker: Some(run_id.into()),
        ..quick_options()
    }
}

/// A unique run id per test and process.
fn run_id(name: &str) -> String {
    format!("test-{name}-{}", std::process::id())
}

/// `sleep 1000` outside forge's runner with `env` set, as a stand-in for a leftover.
fn sleeper(env: &[(&str, String)]) -> Child {
    let mut command = Command::new("sleep");
    command
        .arg("1000")
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    command.spawn().unwrap()
}

/// The process group the fake CLI read for the process it announced (reading /proc later
/// would race the runner, which ends the grandchild as soon as the CLI exits).
fn pgid_in(line: &serde_json::Value) -> i64 {
    line["pgid"].as_i64().unwrap()
}

fn reap(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test]
async fn a_grandchild_that_left_the_group_is_ended_after_the_run_and_reported() {
    let id = run_id("setsid");
    // Look-alike: another run's marked process is not this run's business.
    let other = sleeper(&[("FORGE_RUN_ID", format!("{id}-other"))]);

    let knobs = [("FAKE_ANNOUNCE", "1"), ("FAKE_GRANDCHILD", "setsid")];
    let mut child = start(fake(&knobs), marked_options(&id)).await;
    let cli = until_type(&mut child, "started").await;
    let announced = until_type(&mut child, "grandchild").await;
    let grandchild = pid_of(&announced);
    assert_ne!(
        pgid_in(&announced),
        pgid_in(&cli),
        "the grandchild left the group"
    );
    let _ = all_items(&mut child).await;
    child.wait().await.unwrap();

    let ended = child.ended_orphans();
    assert_eq!(
        ended
            .iter()
            .map(|o| (o.pid, o.command.as_str(), o.run_id.as_str()))
            .collect::<Vec<_>>(),
        [(grandchild, "sleep", id.as_str())]
    );
    assert_eq!(ended[0].ended_by.as_deref(), Some("SIGINT"));
    assert_eq!(
        survivors_after(&[grandchild], GONE_WITHIN).await,
        Vec::<u32>::new()
    );
    assert!(is_alive(other.id()), "another run's process was left alone");
    reap(other);
}

#[tokio::test]
async fn without_a_marker_nothing_is_looked_for() {
    let knobs = [("FAKE_GRANDCHILD", "setsid")];
    let mut child = start(fake(&knobs), quick_options()).await;
    let grandchild = pid_of(&until_type(&mut child, "grandchild").await);
    let _ = all_items(&mut child).await;
    child.wait().await.unwrap();
    assert!(child.ended_orphans().is_empty());
    assert!(is_alive(grandchild), "unmarked, it escapes as the docs say");
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(grandchild).unwrap()),
        nix::sys::signal::Signal::SIGKILL,
    );
}

#[tokio::test]
async fn at_start_up_the_orphans_of_runs_whose_forge_is_gone_are_ended() {
    let id = run_id("sweep");
    let own_pid = std::process::id();
    let own_start = {
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .unwrap()
            .1
            .split_whitespace()
            .collect();
        fields[19].to_owned()
    };
    // The owner's pid with another start time: that forge is gone (its pid reused).
    let orphan = sleeper(&[
        ("FORGE_RUN_ID", format!("{id}-dead")),
        ("FORGE_RUN_OWNER", format!("{own_pid}:1")),
    ]);
    // Look-alikes: a live owner's run, and a marker without an owner.
    let running = sleeper(&[
        ("FORGE_RUN_ID", format!("{id}-live")),
        ("FORGE_RUN_OWNER", format!("{own_pid}:{own_start}")),
    ]);
    let ownerless = sleeper(&[("FORGE_RUN_ID", format!("{id}-ownerless"))]);

    let ended = TokioProcessRunner::new()
        .end_orphans_of_finished_runs()
        .await;
    let ours: Vec<u32> = ended
        .iter()
        .filter(|o| o.run_id.starts_with(&id))
        .map(|o| o.pid)
        .collect();
    assert_eq!(ours, [orphan.id()]);
    assert_eq!(
        survivors_after(&[orphan.id()], GONE_WITHIN).await,
        Vec::<u32>::new()
    );
    assert!(is_alive(running.id()) && is_alive(ownerless.id()));
    for child in [orphan, running, ownerless] {
        reap(child);
    }
}
