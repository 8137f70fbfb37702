//! Offline decode = live run: `events` over every recorded transcript gives the same
//! ExecutionResult (minus run id, duration, workdir) as `run` with the fake CLI replaying
//! that transcript, its stderr and its exit code.

use serde_json::Value;

use super::harness::{Sandbox, fake, fixtures, scrub_result};

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout {} stderr {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn events_and_run_agree_on_every_fixture() {
    let sandbox = Sandbox::new();
    let mut checked = 0;
    for cli in ["claude", "codex", "gemini"] {
        for t in forge_testkit::fixtures::transcripts(cli) {
            let dir = fixtures().join(cli).join(&t.version);
            let file = dir.join(format!("{}.jsonl", t.scenario));
            let stderr = dir.join(format!("{}.stderr.txt", t.scenario));
            let code = t.exit_code().unwrap_or(0);

            let offline = sandbox
                .forge()
                .args(["events", "--provider", cli, "--json", "--file"])
                .arg(&file)
                .output()
                .unwrap();
            let live = sandbox
                .forge()
                .args(["run", "--json", "--provider", cli, "--binary"])
                .arg(fake())
                .arg("--env")
                .arg(format!("FAKE_REPLAY={}", file.display()))
                .arg("--env")
                .arg(format!("FAKE_REPLAY_STDERR={}", stderr.display()))
                .arg("--env")
                .arg(format!("FAKE_EXIT={code}"))
                .arg("hi")
                .output()
                .unwrap();
            let (mut offline, mut live) = (json(&offline), json(&live));
            scrub_result(&mut offline);
            scrub_result(&mut live);
            // The live run knows forge's own duration and workdir; offline has none.
            for key in ["duration_ms", "workdir", "run_id"] {
                offline["metadata"][key] = Value::Null;
                live["metadata"][key] = Value::Null;
            }
            // Only a live run has a sandbox around it (here: off, as the harness says).
            assert_eq!(live["metadata"]["sandbox"], "off");
            if let Some(m) = live["metadata"].as_object_mut() {
                m.remove("sandbox");
            }
            assert_eq!(offline, live, "{cli}/{}/{}", t.version, t.scenario);
            checked += 1;
        }
    }
    assert!(checked >= 9, "only {checked} fixtures found");
}
