//! Decode throughput on a ~40 MB real-format gemini transcript of one run built from the
//! recorded fixtures (`init` and the prompt's echo once, the run's messages and tool lines
//! repeated with ids and text varied, one `result`), against `serde_json::Value` and a
//! syntax-only pass on the same lines: see [`forge_testkit::bench`].

use forge_adapter_gemini::GeminiProvider;
use forge_domain::{ExecutionRequest, ProviderId};
use forge_ports::ProviderSettings;
use forge_testkit::bench::{self, Part};

fn main() {
    let base = bench::fixture_lines("gemini");
    let lines = bench::one_run(&base, part, bench::TARGET_BYTES, |line, round| {
        line.replace("_0\"", &format!("_{round}\""))
            .replace("fake model", &format!("fake model {round}"))
    });
    let provider = GeminiProvider::new(ProviderSettings::default());
    let Ok(id) = ProviderId::new("gemini") else {
        return;
    };
    let request = ExecutionRequest::new(id, "p", "<WORKDIR>");
    bench::run("gemini", &lines, || provider.gemini_decoder(&request));
}

fn part(line: &str) -> Part {
    if line.starts_with(r#"{"type":"init""#) || line.contains(r#""role":"user""#) {
        Part::Opening
    } else if line.starts_with(r#"{"type":"result""#) {
        Part::Closing
    } else {
        Part::Body
    }
}
