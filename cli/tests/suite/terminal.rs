//! What a person sees: `stream` in a pseudo-terminal, rendered by a terminal emulator
//! (vt100). Text, tool lines and the spinner never share a line, at any moment.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};

use nix::pty::{Winsize, openpty};

use super::harness::{Sandbox, fake, fixture};

const ROWS: u16 = 40;
const COLS: u16 = 100;

/// Runs forge with `args` on a pseudo-terminal (stdout and stderr); returns every screen
/// state it went through (one per read) and the last one.
fn screens(sandbox: &Sandbox, args: &[String]) -> Vec<String> {
    let size = Winsize {
        ws_row: ROWS,
        ws_col: COLS,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let pty = openpty(Some(&size), None).unwrap();
    let slave: OwnedFd = pty.slave;
    let mut forge = Command::new(assert_cmd::cargo::cargo_bin("forge-code-agent"));
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("FORGE_") {
            forge.env_remove(&key);
        }
    }
    let mut child = forge
        .args(args)
        .current_dir(sandbox.work())
        .env("XDG_CONFIG_HOME", sandbox.xdg())
        .env("NO_COLOR", "1")
        .env("TERM", "xterm-256color")
        .env("COLUMNS", COLS.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave))
        .spawn()
        .unwrap();
    // The command owns the parent's copies of the slave: drop them.
    drop(forge);
    // The child holds the only slave ends now: reading the master ends (EIO) when it exits.
    let mut master = std::fs::File::from(pty.master);
    let mut parser = vt100::Parser::new(ROWS, COLS, 0);
    let mut states = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match master.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                parser.process(&chunk[..n]);
                states.push(parser.screen().contents());
            }
        }
    }
    assert!(child.wait().unwrap().success());
    states
}

/// A spinner frame (indicatif's default: braille).
fn is_spinner(c: char) -> bool {
    ('\u{2800}'..='\u{28FF}').contains(&c)
}

#[test]
fn text_tool_lines_and_the_spinner_never_share_a_line() {
    let sandbox = Sandbox::new();
    let args: Vec<String> = [
        "stream",
        "--provider",
        "gemini",
        "--binary",
        &fake().display().to_string(),
        "--env",
        &format!(
            "FAKE_REPLAY={}",
            fixture("gemini", "write_read_shell").display()
        ),
        // Slow enough for the spinner to be drawn between events.
        "--env",
        "FAKE_DELAY_MS=250",
        "hi",
    ]
    .map(String::from)
    .to_vec();
    let states = screens(&sandbox, &args);

    let mut spinner_seen = false;
    for state in &states {
        for row in state.lines() {
            if let Some(at) = row.find(is_spinner) {
                spinner_seen = true;
                assert_eq!(at, 0, "the spinner shares a line: {row:?}\n{state}");
            }
        }
    }
    assert!(spinner_seen, "the spinner was drawn at some point");

    let last = states.last().cloned().unwrap_or_default();
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"\d+(\.\d+)?\s?(ms|s)\b", "[TIME]");
    settings.add_filter(r"run [0-9a-f-]{36}", "run [RUN]");
    // The price table is configuration, not rendering.
    settings.add_filter(r"\$\d+\.\d+", "[COST]");
    settings.bind(|| insta::assert_snapshot!("stream_write_read_shell_terminal", last.trim_end()));
}
