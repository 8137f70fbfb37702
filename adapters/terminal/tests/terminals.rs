//! Commands run for an agent through the REAL process runner and workspace: output and exit
//! code, the workspace rule for the directory, the output limit, kill, release and the end
//! of the run (nothing left running).

#![expect(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a failing test"
)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use forge_adapter_fs::FsWorkspace;
use forge_adapter_process::TokioProcessRunner;
use forge_adapter_terminal::{Command, Exit, Terminals};
use forge_domain::ForgeError;
use forge_ports::{KillLadder, SessionServices};

fn terminals(root: &Path) -> Terminals {
    Terminals::new(&SessionServices {
        workspace: Arc::new(FsWorkspace::new()),
        runner: Arc::new(TokioProcessRunner::new()),
        workdir: root.canonicalize().unwrap(),
        ladder: KillLadder {
            interrupt_grace: Duration::from_millis(200),
            terminate_grace: Duration::from_millis(200),
        },
        permissions: None,
    })
}

fn sh(script: &str) -> Command {
    Command {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        ..Command::default()
    }
}

const SIGINT: i32 = 2;

#[tokio::test]
async fn a_command_runs_in_the_workspace_with_its_env_and_its_output_and_exit_code_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let mut terminals = terminals(dir.path());
    let command = Command {
        env: vec![("GREETING".into(), "hi".into())],
        cwd: Some("sub".into()),
        ..sh("echo $GREETING from $(basename $PWD); echo oops >&2; exit 3")
    };
    let id = terminals.create(command).await.unwrap();
    let exit = terminals.exited(&id).unwrap().await;
    assert_eq!(
        exit,
        Exit {
            code: Some(3),
            signal: None
        }
    );
    let snapshot = terminals.output(&id).unwrap();
    let mut lines: Vec<&str> = snapshot.output.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["hi from sub", "oops"]);
    assert!(!snapshot.truncated);
    assert_eq!(snapshot.exit, Some(exit));
}

#[tokio::test]
async fn a_directory_outside_the_workspace_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut terminals = terminals(dir.path());
    for cwd in ["/", "..", "sub/../.."] {
        let command = Command {
            cwd: Some(cwd.into()),
            ..sh("true")
        };
        let refused = terminals.create(command).await;
        assert!(
            matches!(refused, Err(ForgeError::WorkspaceSecurity { .. })),
            "{cwd}: {refused:?}"
        );
    }
    // Its look-alike inside the workspace runs.
    let inside = Command {
        cwd: Some(dir.path().canonicalize().unwrap()),
        ..sh("true")
    };
    let id = terminals.create(inside).await.unwrap();
    assert_eq!(terminals.exited(&id).unwrap().await.code, Some(0));
}

#[tokio::test]
async fn the_output_keeps_the_newest_bytes_under_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let mut terminals = terminals(dir.path());
    let command = Command {
        output_limit: Some(8),
        ..sh("echo first; echo second; echo third")
    };
    let id = terminals.create(command).await.unwrap();
    terminals.exited(&id).unwrap().await;
    let snapshot = terminals.output(&id).unwrap();
    assert_eq!(snapshot.output, "d\nthird\n");
    assert!(snapshot.truncated);
}

#[tokio::test]
async fn kill_ends_the_command_and_its_terminal_stays_readable() {
    let dir = tempfile::tempdir().unwrap();
    let mut terminals = terminals(dir.path());
    let id = terminals.create(sh("exec sleep 30")).await.unwrap();
    terminals.kill(&id).unwrap();
    let exit = terminals.exited(&id).unwrap().await;
    assert_eq!(
        exit,
        Exit {
            code: None,
            signal: Some(SIGINT)
        }
    );
    assert_eq!(terminals.output(&id).unwrap().exit, Some(exit));
}

#[tokio::test]
async fn release_ends_the_command_and_forgets_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let mut terminals = terminals(dir.path());
    let id = terminals.create(sh("exec sleep 30")).await.unwrap();
    let (command, last) = terminals.release(&id).unwrap().await;
    assert_eq!(command.line(), "sh -c exec sleep 30");
    assert_eq!(last.exit.and_then(|e| e.signal), Some(SIGINT));
    for refused in [
        terminals.output(&id).map(|_| ()),
        terminals.kill(&id),
        terminals.exited(&id).map(|_| ()),
    ] {
        assert!(matches!(refused, Err(ForgeError::InvalidRequest { .. })));
    }
}

#[tokio::test]
async fn the_end_of_the_run_ends_every_command_even_one_that_ignores_sigint() {
    let dir = tempfile::tempdir().unwrap();
    let mut terminals = terminals(dir.path());
    let stubborn = terminals
        .create(sh("trap '' INT; sleep 30 & wait"))
        .await
        .unwrap();
    let plain = terminals.create(sh("exec sleep 30")).await.unwrap();
    let ends = [
        terminals.exited(&stubborn).unwrap(),
        terminals.exited(&plain).unwrap(),
    ];
    terminals.end().await.unwrap();
    let [stubborn, plain] = ends;
    assert!(stubborn.await.signal.is_some());
    assert_eq!(plain.await.signal, Some(SIGINT));
}
