//! fake-agent-cli: a stand-in for `claude` / `codex` / `gemini`, driven by environment knobs,
//! for tests of process supervision, decoding and artifacts. Synchronous, std-only.
//!
//! Steps, in this order (each only when its knob is set):
//!
//! | knob | effect |
//! |---|---|
//! | `FAKE_IGNORE_SIGINT=1`, `FAKE_IGNORE_SIGTERM=1` | ignore that signal (kill-ladder tests) |
//! | `FAKE_ANNOUNCE=1` | print `{"type":"started","pid":N,"pgid":G}` |
//! | `FAKE_READ_STDIN=1` | read stdin to end-of-file, print `{"type":"stdin","bytes":N,"text":T}` |
//! | `FAKE_GRANDCHILD=detached\|inherit\|setsid` | start `sleep 1000` (stdio null, or inheriting stdout/stderr, or stdio null in a session of its own, out of the run's process group), print `{"type":"grandchild","pid":N}` |
//! | `FAKE_PRINT_ARGS=1` | print `{"type":"args","args":[...]}` |
//! | `FAKE_PRINT_ENV=A,B` | print `{"type":"env","vars":{"A":value-or-null,...}}` |
//! | `FAKE_PRINT_CWD=1` | print `{"type":"cwd","cwd":PATH}` |
//! | `FAKE_STDERR=text` | write `text` and a newline to stderr |
//! | `FAKE_SECRET=value` | print `value` in a stdout JSON line and on stderr |
//! | `FAKE_CRLF=1` | print `{"type":"crlf"}` ended by CRLF, then a blank CRLF line |
//! | `FAKE_INVALID_UTF8=1` | print a JSON line with the bytes `FF FE` inside a string |
//! | `FAKE_TRUNCATED=1` | print `{"type":"text","text":"cut` (a JSON line cut in half) |
//! | `FAKE_HUGE_LINE_MB=n` | print one JSON line of n MiB, then `{"type":"after_huge"}` |
//! | `FAKE_WRITE=path=text` | write `text` and a newline to `path` (from the working directory): an agent's change |
//! | `FAKE_REPLAY=path` | replay the file's lines to stdout, `FAKE_DELAY_MS=n` apart |
//! | `FAKE_EVENTS=n` | print n lines `{"type":"text","i":I}` as fast as possible |
//! | `FAKE_EVENTS_INTERVAL_US=n` | with `FAKE_EVENTS`: pause n µs before each event |
//! | `FAKE_EVENTS_TIMED=1` | with `FAKE_EVENTS`: one flushed line per event, `text` = CLOCK_MONOTONIC ns |
//! | `FAKE_REPLAY_STDERR=path` | copy the file to stderr |
//! | `FAKE_HANG=1` | sleep forever |
//! | `FAKE_EXIT=n` | exit with code n (default 0) |
//!
//! `FAKE_CRASH_AFTER=n` kills the process with SIGKILL right after its n-th stdout line.
//! `--help` prints this list; `--version` prints `FAKE_VERSION` (default `0.0.0-fake`).
//! Every other argument is ignored (and shown by `FAKE_PRINT_ARGS`).
#![expect(
    unsafe_code,
    reason = "ignoring signals, killing itself and a setsid grandchild need libc calls"
)]

use std::io::{BufWriter, Read, Write};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use serde_json::json;

const HELP: &str = "\
fake-agent-cli: a fake coding-agent CLI for tests, driven by environment variables.

  FAKE_IGNORE_SIGINT=1 / FAKE_IGNORE_SIGTERM=1   ignore that signal
  FAKE_ANNOUNCE=1            print {\"type\":\"started\",\"pid\":N}
  FAKE_READ_STDIN=1          read stdin to EOF, print {\"type\":\"stdin\",\"bytes\":N,\"text\":T}
  FAKE_GRANDCHILD=MODE       start `sleep 1000` (MODE detached: stdio null; setsid: stdio
                             null, own session and group, like a daemon; inherit: shares
                             stdout/stderr), print {\"type\":\"grandchild\",\"pid\":N}
  FAKE_PRINT_ARGS=1          print {\"type\":\"args\",\"args\":[...]}
  FAKE_PRINT_ENV=A,B         print {\"type\":\"env\",\"vars\":{...}} (null when unset)
  FAKE_PRINT_CWD=1           print {\"type\":\"cwd\",\"cwd\":PATH}
  FAKE_STDERR=TEXT           write TEXT to stderr
  FAKE_SECRET=VALUE          print VALUE on stdout (in a JSON line) and on stderr
  FAKE_CRLF=1                print a CRLF-terminated line and a blank CRLF line
  FAKE_INVALID_UTF8=1        print a line with invalid UTF-8
  FAKE_TRUNCATED=1           print a JSON line cut in half
  FAKE_HUGE_LINE_MB=N        print one line of N MiB, then {\"type\":\"after_huge\"}
  FAKE_WRITE=PATH=TEXT       write TEXT and a newline to PATH (an agent's change)
  FAKE_REPLAY=PATH           replay PATH's lines to stdout
  FAKE_DELAY_MS=N            pause N ms between replayed lines
  FAKE_EVENTS=N              print N lines {\"type\":\"text\",\"i\":I}, fast
  FAKE_EVENTS_TIMED=1        with FAKE_EVENTS: flush each line, text = CLOCK_MONOTONIC ns
  FAKE_EVENTS_INTERVAL_US=N  with FAKE_EVENTS: pause N µs before each event
  FAKE_REPLAY_STDERR=PATH    copy PATH to stderr
  FAKE_CRASH_AFTER=N         SIGKILL itself after the N-th stdout line
  FAKE_HANG=1                sleep forever at the end
  FAKE_EXIT=N                exit code (default 0)
  FAKE_VERSION=V             what --version prints (default 0.0.0-fake)
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        let _ = std::io::stdout().write_all(HELP.as_bytes());
        return ExitCode::SUCCESS;
    }
    if args.iter().any(|a| a == "--version") {
        let version = var("FAKE_VERSION").unwrap_or_else(|| "0.0.0-fake".into());
        let _ = writeln!(std::io::stdout(), "{version}");
        return ExitCode::SUCCESS;
    }
    ignore_signals();
    let mut out = Out::new(number("FAKE_CRASH_AFTER"));
    preamble(&mut out, &args);
    special_lines(&mut out);
    write_change();
    main_stream(&mut out);
    if let Some(path) = var("FAKE_REPLAY_STDERR") {
        let _ = std::fs::read(&path).map(|bytes| std::io::stderr().write_all(&bytes));
    }
    out.flush();
    if flag("FAKE_HANG") {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    let code = number("FAKE_EXIT").unwrap_or(0);
    ExitCode::from(u8::try_from(code).unwrap_or(u8::MAX))
}

/// Stdout with a line counter for `FAKE_CRASH_AFTER`. Write errors (a reader gone) are
/// ignored: the fake goes on like a CLI that does not check.
struct Out {
    stdout: BufWriter<std::io::Stdout>,
    lines: u64,
    crash_after: Option<u64>,
}

impl Out {
    fn new(crash_after: Option<u64>) -> Self {
        Self {
            stdout: BufWriter::with_capacity(64 * 1024, std::io::stdout()),
            lines: 0,
            crash_after,
        }
    }

    /// One line, `\n` added; flushed unless `bulk`.
    fn line(&mut self, bytes: &[u8], bulk: bool) {
        let _ = self.stdout.write_all(bytes);
        let _ = self.stdout.write_all(b"\n");
        if !bulk {
            self.flush();
        }
        self.lines += 1;
        if self.crash_after == Some(self.lines) {
            self.flush();
            // SAFETY: sends SIGKILL to this very process; nothing runs after it.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
    }

    fn json(&mut self, value: &serde_json::Value) {
        self.line(value.to_string().as_bytes(), false);
    }

    fn flush(&mut self) {
        let _ = self.stdout.flush();
    }
}

fn preamble(out: &mut Out, args: &[String]) {
    if flag("FAKE_ANNOUNCE") {
        // SAFETY: getpgrp has no preconditions.
        let pgid = unsafe { libc::getpgrp() };
        out.json(&json!({"type": "started", "pid": std::process::id(), "pgid": pgid}));
    }
    if flag("FAKE_READ_STDIN") {
        let mut input = Vec::new();
        let _ = std::io::stdin().read_to_end(&mut input);
        let text = String::from_utf8_lossy(&input);
        out.json(&json!({"type": "stdin", "bytes": input.len(), "text": text}));
    }
    if let Some(mode) = var("FAKE_GRANDCHILD") {
        start_grandchild(out, &mode);
    }
    if flag("FAKE_PRINT_ARGS") {
        out.json(&json!({"type": "args", "args": args}));
    }
    if let Some(names) = var("FAKE_PRINT_ENV") {
        let vars: serde_json::Map<String, serde_json::Value> = names
            .split(',')
            .filter(|name| !name.is_empty())
            .map(|name| (name.to_owned(), json!(std::env::var(name).ok())))
            .collect();
        out.json(&json!({"type": "env", "vars": vars}));
    }
    if flag("FAKE_PRINT_CWD") {
        let cwd = std::env::current_dir()
            .map(|p| p.display().to_string())
            .ok();
        out.json(&json!({"type": "cwd", "cwd": cwd}));
    }
    if let Some(text) = var("FAKE_STDERR") {
        let _ = writeln!(std::io::stderr(), "{text}");
    }
    if let Some(secret) = var("FAKE_SECRET") {
        out.json(&json!({"type": "text", "text": format!("the secret is {secret}")}));
        let _ = writeln!(std::io::stderr(), "error: leaked {secret} on stderr");
    }
}

/// `sleep 1000` as a child that is never waited for. `inherit` shares our stdout and
/// stderr, so it keeps those pipes open after we exit.
fn start_grandchild(out: &mut Out, mode: &str) {
    let inherit = mode == "inherit";
    let stdio = || {
        if inherit {
            Stdio::inherit()
        } else {
            Stdio::null()
        }
    };
    out.flush();
    let mut sleep = Command::new("sleep");
    sleep
        .arg("1000")
        .stdin(Stdio::null())
        .stdout(stdio())
        .stderr(stdio());
    if mode == "setsid" {
        // SAFETY: setsid between fork and exec, nothing else.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut sleep, || {
                libc::setsid();
                Ok(())
            });
        }
    }
    match sleep.spawn() {
        Ok(child) => {
            // Read now, while the child is ours and alive: a test reading it later races
            // the runner, which may already have ended it.
            let pgid = i32::try_from(child.id())
                // SAFETY: getpgid only reads the process table.
                .map(|pid| unsafe { libc::getpgid(pid) })
                .unwrap_or(-1);
            out.json(&json!({"type": "grandchild", "pid": child.id(), "pgid": pgid, "mode": mode}));
        }
        Err(err) => out.json(&json!({"type": "error", "message": err.to_string()})),
    }
}

fn special_lines(out: &mut Out) {
    if flag("FAKE_CRLF") {
        out.line(b"{\"type\":\"crlf\"}\r", false);
        out.line(b"\r", false);
    }
    if flag("FAKE_INVALID_UTF8") {
        out.line(
            b"{\"type\":\"text\",\"text\":\"bad \xff\xfe bytes\"}",
            false,
        );
    }
    if flag("FAKE_TRUNCATED") {
        out.line(b"{\"type\":\"text\",\"text\":\"cut", false);
    }
    if let Some(mib) = number("FAKE_HUGE_LINE_MB") {
        huge_line(out, mib);
        out.json(&json!({"type": "after_huge"}));
    }
}

/// One JSON line of `mib` MiB written in chunks, never held whole in memory.
fn huge_line(out: &mut Out, mib: u64) {
    let total = usize::try_from(mib).unwrap_or(0) * 1024 * 1024;
    let head = b"{\"type\":\"huge\",\"data\":\"";
    let tail = b"\"}";
    let mut body = total.saturating_sub(head.len() + tail.len());
    let chunk = [b'x'; 64 * 1024];
    let _ = out.stdout.write_all(head);
    while body > 0 {
        let n = body.min(chunk.len());
        let _ = out.stdout.write_all(&chunk[..n]);
        body -= n;
    }
    out.line(tail, false);
}

/// `FAKE_WRITE=PATH=TEXT`: the change a real agent would make, so a task's pipeline has
/// something to validate, review and deliver.
fn write_change() {
    let Some(spec) = var("FAKE_WRITE") else {
        return;
    };
    let (path, text) = spec.split_once('=').unwrap_or((spec.as_str(), ""));
    if let Err(err) = std::fs::write(path, format!("{text}\n")) {
        let _ = writeln!(
            std::io::stderr(),
            "fake-agent-cli: cannot write {path}: {err}"
        );
    }
}

fn main_stream(out: &mut Out) {
    if let Some(path) = var("FAKE_REPLAY") {
        let delay = Duration::from_millis(number("FAKE_DELAY_MS").unwrap_or(0));
        if delay.is_zero() && out.crash_after.is_none() {
            // Nothing happens between lines: stream the file, so a huge line costs this
            // process no memory (memory benchmarks measure forge, not the fake).
            out.flush();
            if let Err(err) = stream_file(&path) {
                let _ = writeln!(
                    std::io::stderr(),
                    "fake-agent-cli: cannot replay {path}: {err}"
                );
            }
        } else {
            replay_lines(out, &path, delay);
        }
    }
    if let Some(n) = number("FAKE_EVENTS") {
        // Timed: one flushed line per event carrying CLOCK_MONOTONIC in ns (a clock every
        // process on the machine shares), so a reader can measure per-event latency.
        let timed = flag("FAKE_EVENTS_TIMED");
        let interval = number("FAKE_EVENTS_INTERVAL_US").map(Duration::from_micros);
        for i in 0..n {
            if let Some(pause) = interval {
                std::thread::sleep(pause);
            }
            if timed {
                let line = format!(
                    "{{\"type\":\"text\",\"text\":\"{}\",\"i\":{i}}}",
                    monotonic_ns()
                );
                out.line(line.as_bytes(), false);
            } else {
                out.line(format!("{{\"type\":\"text\",\"i\":{i}}}").as_bytes(), true);
            }
        }
        out.flush();
    }
}

fn ignore_signals() {
    for (knob, signal) in [
        ("FAKE_IGNORE_SIGINT", libc::SIGINT),
        ("FAKE_IGNORE_SIGTERM", libc::SIGTERM),
    ] {
        if flag(knob) {
            // SAFETY: installs SIG_IGN, no handler code; done before any other thread exists.
            unsafe { libc::signal(signal, libc::SIG_IGN) };
        }
    }
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn flag(name: &str) -> bool {
    var(name).is_some_and(|v| v != "0")
}

/// CLOCK_MONOTONIC in nanoseconds.
fn monotonic_ns() -> u128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u128 * 1_000_000_000 + ts.tv_nsec as u128
}

fn number(name: &str) -> Option<u64> {
    var(name).and_then(|v| v.trim().parse().ok())
}

/// Copies `path` to stdout in small chunks, ending it with a newline when it has none.
fn stream_file(path: &str) -> std::io::Result<()> {
    let mut file = std::fs::File::open(path)?;
    let mut stdout = std::io::stdout().lock();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut last = b'\n';
    loop {
        let n = file.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        stdout.write_all(&chunk[..n])?;
        last = chunk[n - 1];
    }
    if last != b'\n' {
        stdout.write_all(b"\n")?;
    }
    stdout.flush()
}

/// Replays `path` line by line, `delay` apart (and counted, for `FAKE_CRASH_AFTER`).
fn replay_lines(out: &mut Out, path: &str, delay: Duration) {
    match std::fs::read(path) {
        Ok(bytes) => {
            let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
            for (i, line) in body.split(|b| *b == b'\n').enumerate() {
                if i > 0 && !delay.is_zero() {
                    std::thread::sleep(delay);
                }
                out.line(line, false);
            }
        }
        Err(err) => {
            let _ = writeln!(
                std::io::stderr(),
                "fake-agent-cli: cannot replay {path}: {err}"
            );
        }
    }
}
