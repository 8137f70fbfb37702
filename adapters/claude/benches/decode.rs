//! Decode throughput on a ~40 MB real-format Claude transcript of one run built from the
//! recorded fixtures and extra transcripts (the `system/init` line once, the messages
//! repeated with ids varied, one `result`), against `serde_json::Value` and a syntax-only pass
//! on the same lines: see [`forge_testkit::bench`].

use forge_adapter_claude::{ClaudeProvider, UserPaths};
use forge_domain::{ExecutionRequest, ProviderId};
use forge_ports::{Provider, ProviderSettings};
use forge_testkit::bench::{self, Part};

/// The fixtures' lines and those of a few extra transcripts (partial messages, unicode, the
/// file tools, a rate limit).
fn fixture_lines() -> Vec<String> {
    let mut lines = bench::fixture_lines("claude");
    let extra = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/transcripts/2.1.330");
    for name in [
        "partial_messages_unicode",
        "edit_read_write_glob",
        "rate_limit_then_success",
    ] {
        if let Ok(text) = std::fs::read_to_string(format!("{extra}/{name}.jsonl")) {
            lines.extend(
                text.lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(str::to_owned),
            );
        }
    }
    lines
}

fn main() {
    let lines = bench::one_run(
        &fixture_lines(),
        part,
        bench::TARGET_BYTES,
        |line, round| {
            line.replace("toolu_fake", &format!("toolu_r{round}_"))
                .replace("\"msg_fake", &format!("\"msg_r{round}_"))
        },
    );
    let provider =
        ClaudeProvider::with_user_paths(ProviderSettings::default(), UserPaths::default());
    let Ok(id) = ProviderId::new("claude") else {
        return;
    };
    let request = ExecutionRequest::new(id, "bench", "<WORKDIR>");
    bench::run("claude", &lines, || provider.decoder(&request));
}

/// By the line's `type` (printed late in `result` lines, so read, not matched as a prefix).
fn part(line: &str) -> Part {
    let kind = serde_json::from_str::<serde_json::Value>(line)
        .ok()
        .and_then(|v| {
            Some((
                v.get("type")?.as_str()?.to_owned(),
                v.get("subtype")?.as_str().map(str::to_owned),
            ))
        });
    match kind {
        Some((kind, Some(subtype))) if kind == "system" && subtype == "init" => Part::Opening,
        Some((kind, _)) if kind == "result" => Part::Closing,
        _ => Part::Body,
    }
}
