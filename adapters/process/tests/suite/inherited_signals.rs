//! A forge that inherited ignored and blocked SIGINT/SIGTERM (a background job, `nohup … &`)
//! still starts its children with default dispositions and an empty mask, so the ladder's
//! SIGINT is what ends them.
//!
//! The outer test re-runs this test binary under such a parent; the inner tests run there
//! (and also on their own, where they check the same things from a clean start).

use std::process::Command;

use forge_ports::{KillLadder, RunningProcess};

use super::support::{fake, quick_options, start, until_type};

/// Set for the re-run, so the inner test also checks that the set-up took.
const UNDER_HOSTILE_PARENT: &str = "FORGE_TEST_SIGNALS_IGNORED_AND_BLOCKED";

/// Bit of `signal` in a `/proc/<pid>/status` signal set.
fn bit(signal: libc::c_int) -> u64 {
    1 << (signal - 1)
}

/// The hex mask of `field` (`SigBlk`, `SigIgn`) in `/proc/<path>/status`.
fn signal_set(path: &str, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{path}/status")).unwrap();
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in /proc/{path}/status"));
    u64::from_str_radix(line.trim(), 16).unwrap()
}

#[tokio::test]
async fn children_start_with_sigint_and_sigterm_deliverable() {
    let ladder_signals = bit(libc::SIGINT) | bit(libc::SIGTERM);
    if std::env::var_os(UNDER_HOSTILE_PARENT).is_some() {
        assert_eq!(
            signal_set("thread-self", "SigBlk") & ladder_signals,
            ladder_signals,
            "the re-run inherits the blocked mask"
        );
        assert_eq!(
            signal_set("self", "SigIgn") & ladder_signals,
            ladder_signals,
            "the re-run inherits the ignored dispositions"
        );
    }
    let mut child = start(
        fake(&[("FAKE_ANNOUNCE", "1"), ("FAKE_HANG", "1")]),
        quick_options(),
    )
    .await;
    until_type(&mut child, "started").await;
    let pid = child.pid().unwrap().to_string();
    assert_eq!(signal_set(&pid, "SigBlk"), 0, "the child's mask is empty");
    assert_eq!(
        signal_set(&pid, "SigIgn") & ladder_signals,
        0,
        "the child does not ignore SIGINT or SIGTERM"
    );
    child
        .killer()
        .shutdown(KillLadder::default())
        .await
        .unwrap();
    assert_eq!(child.wait().await.unwrap().signal, Some(libc::SIGINT));
}

#[test]
fn the_ladder_holds_under_a_parent_that_ignores_and_blocks_sigint_and_sigterm() {
    let mut rerun = Command::new(std::env::current_exe().unwrap());
    rerun
        .args([
            "--exact",
            "suite::inherited_signals::children_start_with_sigint_and_sigterm_deliverable",
            "suite::ladder::each_rung_is_reached_only_when_the_previous_one_was_ignored",
        ])
        .env(UNDER_HOSTILE_PARENT, "1");
    // SAFETY: sigaction and sigprocmask between fork and exec, nothing else.
    #[expect(unsafe_code, reason = "sets up the inherited signal state before exec")]
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut rerun, || {
            let mut blocked: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&raw mut blocked);
            for signal in [libc::SIGINT, libc::SIGTERM] {
                libc::signal(signal, libc::SIG_IGN);
                libc::sigaddset(&raw mut blocked, signal);
            }
            libc::sigprocmask(libc::SIG_BLOCK, &raw const blocked, std::ptr::null_mut());
            Ok(())
        });
    }
    let output = rerun.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("2 passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
