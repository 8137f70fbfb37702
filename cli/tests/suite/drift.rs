//! Drift check: every recorded real transcript (refreshed by `cargo xtask e2e --record`)
//! decodes without `Unknown` events, except the kinds its adapter lists as known and kept
//! raw on purpose (`PASSTHROUGH_KINDS`). A new event kind in a new CLI release fails here,
//! naming the CLI, version, scenario and kind.

use std::path::{Path, PathBuf};

use forge_domain::{AgentEvent, ExecutionRequest, ProviderId};
use forge_ports::{Decoder, ProviderSettings};
use forge_testkit::fixtures::{Transcript, transcripts};

fn passthrough(cli: &str) -> &'static [&'static str] {
    match cli {
        "claude" => forge_adapter_claude::PASSTHROUGH_KINDS,
        "codex" => forge_adapter_codex::PASSTHROUGH_KINDS,
        "gemini" => forge_adapter_gemini::PASSTHROUGH_KINDS,
        other => panic!("no adapter for {other}"),
    }
}

/// The shared fixtures plus recordings an adapter keeps under its own `tests/transcripts/`.
fn every_transcript(cli: &str) -> Vec<Transcript> {
    let mut all = transcripts(cli);
    let own = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../adapters")
        .join(cli)
        .join("tests/transcripts");
    for version in sorted_entries(&own) {
        for file in sorted_entries(&version) {
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            let Some(scenario) = name.strip_suffix(".jsonl") else {
                continue;
            };
            all.push(Transcript {
                cli: cli.to_owned(),
                version: version.file_name().unwrap().to_string_lossy().into_owned(),
                scenario: scenario.to_owned(),
                stdout: std::fs::read_to_string(&file).unwrap(),
                stderr: String::new(),
                meta: serde_json::Value::Null,
            });
        }
    }
    all
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|e| e.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    paths.sort();
    paths
}

/// `cli version scenario: kind` for each unexpected `Unknown` kind of `t`.
fn drift(t: &Transcript) -> Vec<String> {
    let registry = forge_cli::registry();
    let id = ProviderId::new(t.cli.clone()).unwrap();
    let provider = registry.build(&id, ProviderSettings::default()).unwrap();
    let request = ExecutionRequest::new(id, "recorded prompt", "<WORKDIR>");
    let mut decoder: Box<dyn Decoder> = provider.decoder(&request);
    let mut events = Vec::new();
    let _parse_errors = decoder.decode_document(&t.stdout, &mut events);
    let allowed = passthrough(&t.cli);
    let mut kinds: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Unknown { kind, .. } if !allowed.contains(&kind.as_str()) => {
                Some(format!("{} {} {}: {kind}", t.cli, t.version, t.scenario))
            }
            _ => None,
        })
        .collect();
    kinds.dedup();
    kinds
}

#[test]
fn real_transcripts_decode_without_unknown_event_kinds() {
    let mut found = Vec::new();
    let mut count = 0;
    for cli in ["claude", "codex", "gemini"] {
        let all = every_transcript(cli);
        assert!(!all.is_empty(), "no {cli} transcripts");
        count += all.len();
        for t in &all {
            found.extend(drift(t));
        }
    }
    assert!(count >= 9, "only {count} transcripts");
    assert!(
        found.is_empty(),
        "event kinds the decoders keep only as Unknown (teach the adapter, or list the kind in \
         its PASSTHROUGH_KINDS if keeping it raw is right):\n{}",
        found.join("\n")
    );
}

/// The check itself: an invented kind in a real transcript is reported by name.
#[test]
fn an_unknown_kind_is_named_with_cli_version_and_scenario() {
    let base = transcripts("codex").into_iter().next().unwrap();
    let t = Transcript {
        stdout: format!("{}{{\"type\":\"thread.paused\"}}\n", base.stdout),
        scenario: "invented".into(),
        ..base
    };
    assert_eq!(
        drift(&t),
        [format!("codex {} invented: thread.paused", t.version)]
    );
}
