//! Descendants that left the run's process group: found by the run marker every child
//! carries in its environment, and ended with their own ladder once the run is over.
//!
//! A grandchild that calls `setsid` (a daemonising MCP server) escapes `killpg` and the
//! lifeline watchdog. Environment variables are inherited across `fork` and `exec` unless a
//! program clears them on purpose, so `/proc/<pid>/environ` still names the run. Linux only:
//! where `/proc` cannot be read nothing is found.

use std::path::Path;
use std::time::Duration;

use forge_domain::EndedOrphan;
use forge_ports::KillLadder;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The run id every child of a run carries.
pub(crate) const RUN_MARKER: &str = "FORGE_RUN_ID";
/// `<pid>:<start time>` of the forge that started the run: the run is over once that
/// process is gone, even when it died without clean-up.
pub(crate) const OWNER_MARKER: &str = "FORGE_RUN_OWNER";

/// How often the ladder looks whether the orphans are gone.
const POLL: Duration = Duration::from_millis(20);

/// The ladder for orphans: they are not the CLI and owe forge no result, so the graces are
/// short.
pub(crate) const ORPHAN_LADDER: KillLadder = KillLadder {
    interrupt_grace: Duration::from_millis(500),
    terminate_grace: Duration::from_millis(500),
};

/// A live process carrying a run marker.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Marked {
    pid: u32,
    /// Start time in clock ticks: with the pid, names the process even if the pid is reused.
    started: u64,
    run_id: String,
    owner: Option<String>,
}

/// This process's owner token, `<pid>:<start time>`.
pub(crate) fn own_token() -> String {
    let pid = std::process::id();
    format!("{pid}:{}", start_time(pid).unwrap_or(0))
}

/// Ends the live processes marked with `run_id` (other than this one).
pub(crate) async fn end_orphans_of_run(run_id: &str) -> Vec<EndedOrphan> {
    let marked = marked_processes()
        .into_iter()
        .filter(|m| m.run_id == run_id)
        .collect();
    end(marked, ORPHAN_LADDER).await
}

/// Ends the live processes marked by a run whose forge is gone. Runs of this process, and
/// of any other live forge, are left alone.
pub async fn end_orphans_of_finished_runs() -> Vec<EndedOrphan> {
    let marked = marked_processes()
        .into_iter()
        .filter(|m| m.owner.as_deref().is_some_and(owner_is_gone))
        .collect();
    end(marked, ORPHAN_LADDER).await
}

/// True when `token` (`<pid>:<start time>`) names no live process.
fn owner_is_gone(token: &str) -> bool {
    let Some((pid, started)) = token.split_once(':') else {
        return false;
    };
    let (Ok(pid), Ok(started)) = (pid.parse::<u32>(), started.parse::<u64>()) else {
        return false;
    };
    start_time(pid) != Some(started)
}

/// Every live process (zombies excluded) whose environment holds a run marker, this process
/// excluded.
fn marked_processes() -> Vec<Marked> {
    let own = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != own)
        .filter_map(marked)
        .collect()
}

/// The markers of `pid`, when it is alive and carries them. Processes of other users are
/// unreadable and skipped.
fn marked(pid: u32) -> Option<Marked> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let (run_id, owner) = markers_in(&environ);
    let run_id = run_id?;
    let started = start_time(pid)?;
    Some(Marked {
        pid,
        started,
        run_id,
        owner,
    })
}

/// The run and owner markers in a NUL-separated environment block.
fn markers_in(environ: &[u8]) -> (Option<String>, Option<String>) {
    let value = |entry: &[u8], name: &str| {
        entry
            .strip_prefix(name.as_bytes())
            .and_then(|rest| rest.strip_prefix(b"="))
            .map(|v| String::from_utf8_lossy(v).into_owned())
    };
    let mut run_id = None;
    let mut owner = None;
    for entry in environ.split(|b| *b == 0) {
        run_id = run_id.or_else(|| value(entry, RUN_MARKER));
        owner = owner.or_else(|| value(entry, OWNER_MARKER));
    }
    (run_id, owner)
}

/// Start time (field 22 of `/proc/<pid>/stat`) of a live, non-zombie process.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the parenthesised name (which may hold spaces): state is field 3, start 22.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    if matches!(fields.first(), Some(&"Z" | &"X")) {
        return None;
    }
    fields.get(19)?.parse().ok()
}

/// Still the same live process as when it was found.
fn still_there(process: &Marked) -> bool {
    start_time(process.pid) == Some(process.started)
}

/// SIGINT → grace → SIGTERM → grace → SIGKILL to each process still there, checking its
/// identity before every signal so a reused pid is never hit.
async fn end(processes: Vec<Marked>, ladder: KillLadder) -> Vec<EndedOrphan> {
    let mut ended: Vec<EndedOrphan> = processes
        .iter()
        .map(|p| EndedOrphan {
            pid: p.pid,
            command: command_of(p.pid),
            run_id: p.run_id.clone(),
            ended_by: None,
        })
        .collect();
    let rungs = [
        (Signal::SIGINT, Some(ladder.interrupt_grace)),
        (Signal::SIGTERM, Some(ladder.terminate_grace)),
        (Signal::SIGKILL, None),
    ];
    for (signal, grace) in rungs {
        let mut sent = false;
        for (process, record) in processes.iter().zip(ended.iter_mut()) {
            if still_there(process) && signal_one(process.pid, signal) {
                record.ended_by = Some(signal.as_str().to_owned());
                sent = true;
            }
        }
        if !sent {
            break;
        }
        let grace = grace.unwrap_or(Duration::from_secs(1));
        let waited_until = tokio::time::Instant::now() + grace;
        while processes.iter().any(still_there) && tokio::time::Instant::now() < waited_until {
            tokio::time::sleep(POLL).await;
        }
    }
    ended
}

/// Sends `signal`; false when the process was gone already.
fn signal_one(pid: u32, signal: Signal) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    kill(Pid::from_raw(raw), signal).is_ok()
}

/// `/proc/<pid>/comm`, trimmed; empty when unreadable.
fn command_of(pid: u32) -> String {
    std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("comm"))
        .map(|c| c.trim_end().to_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_read_from_an_environment_block() {
        let check = |block: &[u8], expected: (Option<&str>, Option<&str>)| {
            let (run, owner) = markers_in(block);
            assert_eq!(
                (run.as_deref(), owner.as_deref()),
                expected,
                "{}",
                String::from_utf8_lossy(block)
            );
        };
        check(
            b"PATH=/bin\0FORGE_RUN_ID=r1\0FORGE_RUN_OWNER=12:34\0",
            (Some("r1"), Some("12:34")),
        );
        check(b"FORGE_RUN_ID=r2", (Some("r2"), None));
        // Look-alikes that must not count.
        check(b"FORGE_RUN_IDX=r3\0XFORGE_RUN_ID=r4\0", (None, None));
        check(b"FORGE_RUN_ID\0PATH=/bin\0", (None, None));
        check(b"", (None, None));
    }

    #[test]
    fn an_owner_is_gone_only_when_its_token_names_no_live_process() {
        let check = |token: &str, expected: bool| {
            assert_eq!(owner_is_gone(token), expected, "{token}");
        };
        check(&own_token(), false);
        let pid = std::process::id();
        check(&format!("{pid}:1"), true);
        check(&format!("{}:0", u32::MAX), true);
        // Unreadable tokens are not taken as "gone": nothing is killed on a guess.
        check("", false);
        check("abc:1", false);
        check("12", false);
    }
}
