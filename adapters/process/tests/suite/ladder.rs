//! The kill ladder: SIGINT, then SIGTERM, then SIGKILL, each after its grace.

use std::time::{Duration, Instant};

use forge_ports::{KillLadder, RunningProcess};

use super::support::{fake, quick_options, start, until_type};

const INTERRUPT: Duration = Duration::from_millis(200);
const TERMINATE: Duration = Duration::from_millis(300);
/// Upper bounds only catch a hang: the exit signal says which rung ended the child, and
/// lower bounds say each grace was waited in full.
const LOOSE: Duration = Duration::from_secs(5);

/// Runs the ladder on a hanging fake CLI with `ignored` knobs; returns the signal that
/// ended it and how long the ladder took.
async fn ladder_on(ignored: &[(&str, &str)]) -> (Option<i32>, Duration) {
    let mut knobs = vec![("FAKE_ANNOUNCE", "1"), ("FAKE_HANG", "1")];
    knobs.extend_from_slice(ignored);
    let mut child = start(fake(&knobs), quick_options()).await;
    until_type(&mut child, "started").await; // signals are set up by now
    let started = Instant::now();
    let ladder = KillLadder {
        interrupt_grace: INTERRUPT,
        terminate_grace: TERMINATE,
    };
    child.killer().shutdown(ladder).await.unwrap();
    let took = started.elapsed();
    (child.wait().await.unwrap().signal, took)
}

#[tokio::test]
async fn each_rung_is_reached_only_when_the_previous_one_was_ignored() {
    let (signal, took) = ladder_on(&[]).await;
    assert_eq!(signal, Some(libc::SIGINT));
    assert!(took < LOOSE, "{took:?}");

    let (signal, took) = ladder_on(&[("FAKE_IGNORE_SIGINT", "1")]).await;
    assert_eq!(signal, Some(libc::SIGTERM));
    assert!(
        took >= INTERRUPT && took < INTERRUPT + TERMINATE,
        "{took:?}"
    );

    let ignore_both = [("FAKE_IGNORE_SIGINT", "1"), ("FAKE_IGNORE_SIGTERM", "1")];
    let (signal, took) = ladder_on(&ignore_both).await;
    assert_eq!(signal, Some(libc::SIGKILL));
    assert!(
        took >= INTERRUPT + TERMINATE && took < LOOSE,
        "SIGKILL after both: {took:?}"
    );
}

#[tokio::test]
async fn shutdown_after_exit_returns_at_once_and_is_idempotent() {
    let mut child = start(fake(&[("FAKE_EXIT", "4")]), quick_options()).await;
    while child.next_stdout().await.unwrap().is_some() {}
    assert_eq!(child.wait().await.unwrap().code, Some(4));
    let killer = child.killer();
    let started = Instant::now();
    let slow = KillLadder {
        interrupt_grace: Duration::from_secs(10),
        terminate_grace: Duration::from_secs(10),
    };
    killer.shutdown(slow).await.unwrap();
    killer.shutdown(slow).await.unwrap();
    killer.kill_now();
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(
        child.wait().await.unwrap().code,
        Some(4),
        "wait is idempotent too"
    );
}

#[tokio::test]
async fn concurrent_shutdowns_both_return_once_the_child_is_gone() {
    let mut child = start(
        fake(&[
            ("FAKE_ANNOUNCE", "1"),
            ("FAKE_HANG", "1"),
            ("FAKE_IGNORE_SIGINT", "1"),
        ]),
        quick_options(),
    )
    .await;
    until_type(&mut child, "started").await;
    let ladder = KillLadder {
        interrupt_grace: INTERRUPT,
        terminate_grace: TERMINATE,
    };
    let (a, b) = (child.killer(), child.killer());
    let (ra, rb) = tokio::join!(a.shutdown(ladder), b.shutdown(ladder));
    ra.unwrap();
    rb.unwrap();
    assert_eq!(child.wait().await.unwrap().signal, Some(libc::SIGTERM));
}
