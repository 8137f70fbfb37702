//! Stderr: a redacted tail in the exit, a redacted full copy in the log.

use forge_domain::Redactor;
use forge_ports::{RunningProcess, SpawnOptions};

use super::support::{all_items, fake, quick_options, start};

#[tokio::test]
async fn the_tail_and_the_log_are_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("stderr.log");
    let options = SpawnOptions {
        stderr_log: Some(log.clone()),
        stderr_tail_bytes: 35,
        redactor: Redactor::new().with_secrets(["hunter2-secret"]),
        ..quick_options()
    };
    let knobs = [
        ("FAKE_STDERR", "warming up"),
        ("FAKE_SECRET", "hunter2-secret"),
        ("FAKE_EXIT", "1"),
    ];
    let mut child = start(fake(&knobs), options).await;
    all_items(&mut child).await;
    let exit = child.wait().await.unwrap();

    let raw = "warming up\nerror: leaked hunter2-secret on stderr\n";
    assert_eq!(exit.stderr_bytes, raw.len() as u64);
    assert_eq!(exit.stderr_tail, "error: leaked [REDACTED] on stderr\n");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "warming up\nerror: leaked [REDACTED] on stderr\n"
    );
    assert_eq!(exit.code, Some(1));
}
