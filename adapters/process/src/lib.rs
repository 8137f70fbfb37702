//! forge-adapter-process: the only crate that spawns processes.
//!
//! [`TokioProcessRunner`] implements [`forge_ports::ProcessRunner`]. Every child it starts:
//!
//! - leads its own **process group** (pgid = child pid), and every signal forge sends goes to
//!   the whole group, so the CLI's own children (MCP servers, shells, `sleep`s) go with it;
//! - has **stdin** on `/dev/null`, or a pipe that receives the invocation's payload and is
//!   then closed (codex waits forever on an open stdin);
//! - gets an **explicit environment**: inherited or cleared, then `remove`, then `set`;
//! - dies with forge, twice over:
//!   - `PR_SET_PDEATHSIG = SIGKILL` on the child (Linux). Beware: it fires when the *thread*
//!     that spawned the child exits, not the process. tokio's worker threads live as long as
//!     the runtime, so spawn from async code, never from a `spawn_blocking` thread that may be
//!     retired while the child runs;
//!   - a **lifeline watchdog** (`lifeline.rs`) for the grandchildren, which the death signal
//!     does not reach: a tiny process (`forge-lifeline` in `ps`) forked between `fork` and
//!     `exec`, inside the group, that keeps only the read end of a close-on-exec pipe whose
//!     write end forge alone holds, and ignores SIGINT/SIGTERM/SIGHUP. When forge dies (even
//!     by SIGKILL) or the run is over (`wait` done, or drop), the read returns end-of-file
//!     and the watchdog SIGKILLs the whole group, itself included. It never holds the
//!     stdout/stderr pipes. It is orphaned when the CLI exits, so its zombie is reaped by
//!     init (a container whose PID 1 does not reap keeps `Z` entries, which are harmless);
//! - starts with **default dispositions and an empty signal mask** for the signals forge
//!   uses (`child_signals.rs`), whatever forge inherited: a forge started as a background
//!   job has SIGINT ignored, and the ladder's SIGINT must still reach the CLI;
//! - is **killed on drop** of its [`TokioRunningProcess`] (SIGKILL to the group).
//!
//! Stdout is read as **bounded lines** ([`lines::BoundedLines`]): `\n` ends a line, a
//! trailing `\r` is stripped, invalid UTF-8 is replaced, **blank lines are skipped** (they
//! still count in line numbers, which start at 1 and match the stdout log), and a line over
//! `max_line_bytes` becomes [`forge_ports::StdoutItem::Oversize`] while the rest of it is
//! skipped without being buffered. Stderr is read concurrently: a redacted copy goes to the
//! log, its redacted tail to [`forge_ports::ProcessExit::stderr_tail`].
//!
//! The logs are per-line redacted copies (invalid UTF-8 replaced there too). An oversize line
//! is logged as its prefix plus a `[forge: line N of S bytes cut]` marker, so the artifacts
//! are bounded like memory. The stdout log is complete once the stream has ended (or the
//! process was dropped); the stderr log once `wait` returned. The consumer gets the raw
//! (unredacted) lines: decoders need them, and the result is redacted downstream.
//!
//! Stopping: [`forge_ports::ProcessKiller::shutdown`] walks SIGINT → grace → SIGTERM →
//! grace → SIGKILL on the group. After the child exits, a grandchild still holding stdout
//! gets `drain_after_exit` to finish, then the group is killed; the stream never hangs.
//!
//! A descendant that leaves the group on purpose (`setsid`, `setpgid`) escapes group signals
//! and the watchdog. With [`forge_ports::SpawnOptions::run_marker`] set, every child carries
//! `FORGE_RUN_ID=<run>` and `FORGE_RUN_OWNER=<forge pid>:<start time>` in its environment
//! (`orphans.rs`): once `wait` has killed the group, live processes with the run's marker are
//! ended with a short ladder of their own and reported
//! ([`forge_ports::RunningProcess::ended_orphans`]);
//! [`forge_ports::ProcessRunner::end_orphans_of_finished_runs`] does the same, at start-up,
//! for runs whose forge died. Only a program that clears its environment escapes both.

pub mod lines;

mod child_signals;
mod files;
mod group;
mod lifeline;
mod locate;
mod log_sink;
mod orphans;
mod output;
mod runner;
mod running;
mod stderr;
mod stdin;
mod stdout;

pub use runner::TokioProcessRunner;
pub use running::TokioRunningProcess;
