//! The bridge on its own: exit codes, signals, and nothing left behind.

use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use super::support::{bridge_exe, within};

fn bridge(spec: &str, argv: &[&str]) -> Command {
    let mut command = Command::new(bridge_exe());
    command
        .args(["--spec", spec, "--"])
        .args(argv)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

const NO_LISTENERS: &str = r#"{"listen":[]}"#;

#[tokio::test]
async fn the_bridge_exits_as_its_command_does() {
    let cases: [(&[&str], i32); 5] = [
        (&["sh", "-c", "exit 0"], 0),
        (&["sh", "-c", "exit 42"], 42),
        // Killed by a signal: 128 + N, as bubblewrap and shells say it.
        (&["sh", "-c", "kill -TERM $$"], 143),
        (&["/nonexistent/cli"], 127),
        (&["/"], 126),
    ];
    for (argv, expected) in cases {
        let output = within("bridge", bridge(NO_LISTENERS, argv).output())
            .await
            .unwrap();
        assert_eq!(output.status.code(), Some(expected), "{argv:?}");
    }
}

#[tokio::test]
async fn a_bad_spec_or_a_taken_address_is_an_error_before_the_command_runs() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let spec = format!(
        r#"{{"listen":[{{"addr":"{}","socket":"/nonexistent.sock"}}]}}"#,
        taken.local_addr().unwrap()
    );
    for spec in [spec.as_str(), "{not json", r#"{"listen":[],"extra":1}"#] {
        let output = within("bridge", bridge(spec, &["sh", "-c", "echo ran"]).output())
            .await
            .unwrap();
        assert_eq!(output.status.code(), Some(125), "{spec}");
        assert!(output.stdout.is_empty(), "the command never ran: {spec}");
    }
}

#[tokio::test]
async fn what_the_command_leaves_in_its_group_dies_when_it_exits() {
    let mut child = bridge(NO_LISTENERS, &["sh", "-c", "sleep 1000 & echo $!; exit 5"])
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    within("pid", stdout.read_line(&mut line)).await.unwrap();
    let sleeper = nix::unistd::Pid::from_raw(line.trim().parse().unwrap());
    let status = within("exit", child.wait()).await.unwrap();
    assert_eq!(status.code(), Some(5));
    // The bridge SIGKILLed the group before it exited: the sleeper is dead (a zombie
    // until its new parent reaps it) or gone.
    within("sleeper gone", async {
        loop {
            let state =
                std::fs::read_to_string(format!("/proc/{sleeper}/stat")).unwrap_or_default();
            let dead = state.is_empty()
                || state
                    .split(") ")
                    .nth(1)
                    .is_some_and(|s| s.starts_with('Z') || s.starts_with('X'));
            if dead {
                break;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
}
