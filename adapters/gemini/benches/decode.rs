//! Decode throughput on a ~40 MB real-format gemini transcript built from the recorded
//! fixtures (ids and text varied), against `serde_json::Value` and a syntax-only pass on the
//! same lines: see [`forge_testkit::bench`].

use forge_adapter_gemini::GeminiProvider;
use forge_domain::{ExecutionRequest, ProviderId};
use forge_ports::ProviderSettings;
use forge_testkit::bench;

fn main() {
    let base = bench::fixture_lines("gemini");
    let lines = bench::repeat(&base, bench::TARGET_BYTES, |line, round| {
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
