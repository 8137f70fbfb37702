//! Test support for the death-of-parent guarantee.
//!
//! `forge-spawn-probe <fake-agent-cli> <detached|inherit>` spawns the fake CLI through
//! [`TokioProcessRunner`] with a grandchild, prints `{"cli":PID,"grandchild":PID}` once both
//! are up, then sleeps until killed. A test SIGKILLs this probe and checks that the CLI and
//! its grandchild die with it (the parent-death signal and the lifeline watchdog).

use std::io::Write;
use std::time::Duration;

use forge_adapter_process::TokioProcessRunner;
use forge_ports::{Invocation, RunningProcess, SpawnOptions, StdoutItem};

fn main() -> std::process::ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => return fail(&format!("runtime: {err}")),
    };
    match runtime.block_on(probe()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(message) => fail(&message),
    }
}

fn fail(message: &str) -> std::process::ExitCode {
    let _ = writeln!(std::io::stderr(), "forge-spawn-probe: {message}");
    std::process::ExitCode::FAILURE
}

async fn probe() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let (Some(cli), Some(mode)) = (args.next(), args.next()) else {
        return Err("usage: forge-spawn-probe <fake-agent-cli> <detached|inherit>".into());
    };
    let mut invocation = Invocation::new(cli, Vec::new(), std::env::temp_dir());
    for (name, value) in [
        ("FAKE_ANNOUNCE", "1"),
        ("FAKE_GRANDCHILD", &mode),
        ("FAKE_HANG", "1"),
    ] {
        invocation.env.set.insert(name.into(), value.into());
    }
    let mut child = TokioProcessRunner::new()
        .start(invocation, SpawnOptions::default())
        .await
        .map_err(|err| err.to_string())?;

    let (mut cli_pid, mut grandchild_pid) = (None, None);
    while cli_pid.is_none() || grandchild_pid.is_none() {
        let Some(StdoutItem::Line { text, .. }) =
            child.next_stdout().await.map_err(|err| err.to_string())?
        else {
            return Err("the fake CLI ended before announcing its pids".into());
        };
        if text.contains("\"started\"") {
            cli_pid = pid_in(&text);
        } else if text.contains("\"grandchild\"") {
            grandchild_pid = pid_in(&text);
        }
    }
    let mut stdout = std::io::stdout();
    let line = format!(
        "{{\"cli\":{},\"grandchild\":{}}}",
        cli_pid.unwrap_or_default(),
        grandchild_pid.unwrap_or_default()
    );
    writeln!(stdout, "{line}")
        .and_then(|()| stdout.flush())
        .map_err(|err| err.to_string())?;
    loop {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
}

/// The number after `"pid":` in a JSON line.
fn pid_in(line: &str) -> Option<u32> {
    let rest = &line[line.find("\"pid\":")? + 6..];
    let digits: String = rest
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}
