//! No process of a run's tree survives: ladder, kill_now, drop, forge's own death, and a
//! normal exit that leaves a grandchild behind.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use forge_ports::{KillLadder, RunningProcess};

use super::support::{
    fake, fake_cli, group_members, pid_of, quick_options, start, survivors_after, until_type,
};
use forge_adapter_process::TokioRunningProcess;

const MODES: [&str; 2] = ["detached", "inherit"];
const GONE_WITHIN: Duration = Duration::from_secs(5);

fn ladder() -> KillLadder {
    KillLadder {
        interrupt_grace: Duration::from_millis(200),
        terminate_grace: Duration::from_millis(200),
    }
}

/// A hanging fake CLI with a grandchild; returns it with its pid and the grandchild's.
async fn tree(mode: &str, extra: &[(&str, &str)]) -> (TokioRunningProcess, u32, u32) {
    let mut knobs = vec![
        ("FAKE_ANNOUNCE", "1"),
        ("FAKE_GRANDCHILD", mode),
        ("FAKE_HANG", "1"),
    ];
    knobs.extend_from_slice(extra);
    let mut child = start(fake(&knobs), quick_options()).await;
    let cli = pid_of(&until_type(&mut child, "started").await);
    let grandchild = pid_of(&until_type(&mut child, "grandchild").await);
    assert_eq!(child.pid(), Some(cli));
    assert_eq!(
        group_members(cli).len(),
        3,
        "cli, grandchild and the lifeline watchdog"
    );
    (child, cli, grandchild)
}

async fn assert_tree_gone(cli: u32, grandchild: u32, what: &str) {
    let survivors = survivors_after(&[cli, grandchild], GONE_WITHIN).await;
    assert!(survivors.is_empty(), "{what}: survivors {survivors:?}");
    let deadline = Instant::now() + GONE_WITHIN;
    while !group_members(cli).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        group_members(cli),
        Vec::<u32>::new(),
        "{what}: group members left"
    );
}

#[tokio::test]
async fn the_ladder_leaves_no_process_behind() {
    for mode in MODES {
        // Both polite signals ignored (the grandchild inherits that): only SIGKILL works.
        let ignore = [("FAKE_IGNORE_SIGINT", "1"), ("FAKE_IGNORE_SIGTERM", "1")];
        let (mut child, cli, grandchild) = tree(mode, &ignore).await;
        child.killer().shutdown(ladder()).await.unwrap();
        let exit = child.wait().await.unwrap();
        assert_eq!(exit.signal, Some(libc::SIGKILL), "{mode}");
        assert_tree_gone(cli, grandchild, &format!("ladder/{mode}")).await;
    }
}

#[tokio::test]
async fn kill_now_leaves_no_process_behind() {
    for mode in MODES {
        let (child, cli, grandchild) = tree(mode, &[]).await;
        child.killer().kill_now();
        assert_tree_gone(cli, grandchild, &format!("kill_now/{mode}")).await;
        drop(child);
    }
}

#[tokio::test]
async fn dropping_the_process_leaves_no_process_behind() {
    for mode in MODES {
        let (child, cli, grandchild) = tree(mode, &[]).await;
        drop(child);
        assert_tree_gone(cli, grandchild, &format!("drop/{mode}")).await;
    }
}

#[tokio::test]
async fn a_grandchild_left_after_a_normal_exit_is_killed_by_wait() {
    let mut child = start(
        fake(&[("FAKE_ANNOUNCE", "1"), ("FAKE_GRANDCHILD", "detached")]),
        quick_options(),
    )
    .await;
    let cli = pid_of(&until_type(&mut child, "started").await);
    let grandchild = pid_of(&until_type(&mut child, "grandchild").await);
    while child.next_stdout().await.unwrap().is_some() {}
    let exit = child.wait().await.unwrap();
    assert_eq!(exit.code, Some(0));
    assert_tree_gone(cli, grandchild, "normal exit").await;
}

#[tokio::test]
async fn a_grandchild_holding_stdout_does_not_make_the_stream_hang() {
    let mut child = start(
        fake(&[("FAKE_ANNOUNCE", "1"), ("FAKE_GRANDCHILD", "inherit")]),
        quick_options(),
    )
    .await;
    let cli = pid_of(&until_type(&mut child, "started").await);
    let grandchild = pid_of(&until_type(&mut child, "grandchild").await);
    let started = Instant::now();
    let end = tokio::time::timeout(Duration::from_secs(5), async {
        while child.next_stdout().await.unwrap().is_some() {}
    })
    .await;
    assert!(end.is_ok(), "next_stdout hung");
    // The drain window (200 ms) after the exit, not the grandchild's 1000 s.
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let exit = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    assert_eq!(exit.unwrap().unwrap().code, Some(0));
    assert_tree_gone(cli, grandchild, "stdout held").await;
}

/// forge itself dies by SIGKILL: the probe (a forge stand-in) spawned the fake CLI and its
/// grandchild through the runner; both must follow it.
#[tokio::test]
async fn the_death_of_forge_takes_the_tree_with_it() {
    for mode in MODES {
        let mut probe = Command::new(env!("CARGO_BIN_EXE_forge-spawn-probe"))
            .args([fake_cli().to_str().unwrap(), mode])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(probe.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let pids: serde_json::Value = serde_json::from_str(&line).unwrap();
        let cli = u32::try_from(pids["cli"].as_u64().unwrap()).unwrap();
        let grandchild = u32::try_from(pids["grandchild"].as_u64().unwrap()).unwrap();
        assert!(super::support::is_alive(cli) && super::support::is_alive(grandchild));

        probe.kill().unwrap(); // SIGKILL: no destructor, no clean-up code runs
        probe.wait().unwrap();
        assert_tree_gone(cli, grandchild, &format!("parent death/{mode}")).await;
    }
}
