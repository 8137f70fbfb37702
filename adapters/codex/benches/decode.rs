//! Decode throughput on a ~40 MB `codex exec --json` transcript of one run built from the
//! recorded fixtures (thread and turn lines once, item lines repeated with ids varied),
//! against `serde_json::Value` and a syntax-only pass on the same lines: see
//! [`forge_testkit::bench`].

use forge_adapter_codex::CodexProvider;
use forge_domain::{ExecutionRequest, ProviderId};
use forge_ports::{Provider, ProviderSettings};
use forge_testkit::bench::{self, Part};

fn main() {
    let mut base = bench::fixture_lines("codex");
    // A reasoning item and a larger tool output, so the mix is not only tiny lines.
    base.push(r#"{"type":"item.completed","item":{"id":"item_9","type":"reasoning","text":"**Checking the workspace** before writing anything, then running the tests."}}"#.to_owned());
    base.push(format!(
        r#"{{"type":"item.completed","item":{{"id":"item_8","type":"command_execution","command":"/bin/bash -lc 'cargo test'","aggregated_output":"{}","exit_code":0,"status":"completed"}}}}"#,
        "test suite::ok ... ok\\n".repeat(40)
    ));
    let lines = bench::one_run(&base, part, bench::TARGET_BYTES, |line, round| {
        line.replace("\"item_", &format!("\"r{round}_item_"))
            .replace("01a2007", &format!("{round:07x}"))
    });
    let provider = CodexProvider::new(ProviderSettings::default());
    let Ok(id) = ProviderId::new("codex") else {
        return;
    };
    let request = ExecutionRequest::new(id, "bench", "<WORKDIR>");
    bench::run("codex", &lines, || provider.decoder(&request));
}

/// `codex exec` runs one turn: its thread and turn lines frame the items.
fn part(line: &str) -> Part {
    if line.starts_with(r#"{"type":"thread.started""#)
        || line.starts_with(r#"{"type":"turn.started""#)
    {
        Part::Opening
    } else if line.starts_with(r#"{"type":"turn."#) {
        Part::Closing
    } else {
        Part::Body
    }
}
