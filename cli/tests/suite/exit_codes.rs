//! Every exit code, driven by the fake CLI's knobs; the table of outcomes is a snapshot.

use std::fmt::Write;

use super::harness::{Sandbox, fake, fixture, scrub_text};
use super::sigint::interrupt_hanging_run;

/// (case, extra forge args, fake knobs)
const CASES: &[(&str, &[&str], &[&str])] = &[
    ("success", &[], &["FAKE_REPLAY=<hello>"]),
    (
        "cli exits 1 with nothing on stdout",
        &[],
        &["FAKE_EXIT=1", "FAKE_STDERR=boom"],
    ),
    (
        "cli crashes after two lines",
        &[],
        &["FAKE_REPLAY=<hello>", "FAKE_CRASH_AFTER=2"],
    ),
    (
        "cli hangs past --timeout 1",
        &["--timeout", "1"],
        &["FAKE_HANG=1"],
    ),
    ("unknown provider", &["--provider", "nope"], &[]),
];

#[test]
fn exit_codes_follow_the_result() {
    let sandbox = Sandbox::new();
    let hello = fixture("claude", "hello").display().to_string();
    let mut table = String::new();
    for (case, args, knobs) in CASES {
        let mut cmd = sandbox.forge();
        cmd.arg("run");
        if !args.contains(&"--provider") {
            cmd.args(["--provider", "claude"]);
        }
        cmd.args(*args).arg("--binary").arg(fake());
        for knob in *knobs {
            cmd.arg("--env").arg(knob.replace("<hello>", &hello));
        }
        let out = cmd.arg("hi").output().unwrap();
        let code = out.status.code().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        writeln!(table, "## {case}: exit {code}").unwrap();
        table.push_str(&scrub_text(&stdout, sandbox.dir.path()));
        table.push_str(&scrub_text(&stderr, sandbox.dir.path()));
    }
    let (code, _) = interrupt_hanging_run(&sandbox, &[]);
    writeln!(table, "## SIGINT during a hanging run: exit {code}").unwrap();
    let usage = sandbox
        .forge()
        .args(["run", "--no-such-flag"])
        .output()
        .unwrap();
    writeln!(
        table,
        "## unknown flag: exit {}",
        usage.status.code().unwrap()
    )
    .unwrap();
    insta::assert_snapshot!("exit_codes", table);
}
