//! Shared helpers: requests, transcripts, decoding a whole stdout like the runtime does.

use std::path::PathBuf;

use forge_adapter_claude::{ClaudeProvider, UserPaths};
use forge_domain::{
    AgentEvent, ExecutionMetadata, ExecutionRequest, ExecutionStatus, ForgeError, ProviderId,
    StatusInputs, ToolCall, derive_status,
};
use forge_ports::{ProcessExit, Provider, ProviderSettings, ResultPieces};
use forge_testkit::fixtures::Transcript;
use serde::Serialize;

pub fn provider() -> ClaudeProvider {
    ClaudeProvider::with_user_paths(
        ProviderSettings::default(),
        UserPaths::resolve(Some("/home/user".as_ref()), None),
    )
}

/// The recordings use `<WORKDIR>` for the workspace.
pub fn request(prompt: &str) -> ExecutionRequest {
    ExecutionRequest::new(ProviderId::new("claude").unwrap(), prompt, "<WORKDIR>")
}

/// Every transcript: the shared fixtures plus this crate's extra recordings (same layout).
pub fn all_transcripts() -> Vec<Transcript> {
    let mut all = forge_testkit::fixtures::transcripts("claude");
    assert!(!all.is_empty(), "shared claude fixtures are missing");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts");
    let mut versions: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    versions.sort();
    for dir in versions {
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for file in files {
            let name = file.file_name().unwrap().to_str().unwrap().to_owned();
            let Some(scenario) = name.strip_suffix(".jsonl") else {
                continue;
            };
            let read = |suffix: &str| {
                std::fs::read_to_string(dir.join(format!("{scenario}{suffix}"))).unwrap()
            };
            all.push(Transcript {
                cli: "claude".into(),
                version: dir.file_name().unwrap().to_str().unwrap().to_owned(),
                scenario: scenario.to_owned(),
                stdout: read(".jsonl"),
                stderr: read(".stderr.txt"),
                meta: serde_json::from_str(&read(".meta.json")).unwrap(),
            });
        }
    }
    all
}

pub fn exit_of(t: &Transcript) -> ProcessExit {
    ProcessExit {
        code: t.exit_code(),
        signal: None,
        stderr_tail: t.stderr.clone(),
        stderr_bytes: t.stderr.len() as u64,
    }
}

/// What one decoding produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub events: Vec<AgentEvent>,
    pub parse_errors: Vec<ForgeError>,
    pub pieces: ResultPieces,
}

/// Line by line, as the runtime does for a live run.
pub fn decode_lines(
    request: &ExecutionRequest,
    stdout: &str,
    exit: Option<&ProcessExit>,
) -> Decoded {
    let mut decoder = provider().decoder(request);
    let mut events = Vec::new();
    let mut parse_errors = Vec::new();
    for (i, line) in stdout.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Err(e) = decoder.decode_line(i as u64 + 1, line, &mut events) {
            parse_errors.push(e);
        }
    }
    let pieces = decoder.finish(exit);
    Decoded {
        events,
        parse_errors,
        pieces,
    }
}

/// As a whole document, as `forge-code-agent events --file` does.
pub fn decode_document(
    request: &ExecutionRequest,
    stdout: &str,
    exit: Option<&ProcessExit>,
) -> Decoded {
    let mut decoder = provider().decoder(request);
    let mut events = Vec::new();
    let parse_errors = decoder.decode_document(stdout, &mut events);
    let pieces = decoder.finish(exit);
    Decoded {
        events,
        parse_errors,
        pieces,
    }
}

/// A serialisable view of a decoding, with the status the runtime would derive.
#[derive(Serialize)]
pub struct View<'a> {
    pub status: ExecutionStatus,
    pub reported_success: Option<bool>,
    pub content: &'a str,
    pub errors: &'a [ForgeError],
    pub metadata: &'a ExecutionMetadata,
    pub tool_calls: &'a [ToolCall],
    pub parse_errors: &'a [ForgeError],
    pub events: &'a [AgentEvent],
}

impl Decoded {
    pub fn status(&self) -> ExecutionStatus {
        derive_status(StatusInputs {
            reported_success: self.pieces.reported_success,
            exit_code: self.pieces.metadata.exit_code,
            saw_output: !self.events.is_empty(),
            cancelled: false,
            timed_out: false,
        })
    }

    pub fn view(&self) -> View<'_> {
        View {
            status: self.status(),
            reported_success: self.pieces.reported_success,
            content: &self.pieces.content,
            errors: &self.pieces.errors,
            metadata: &self.pieces.metadata,
            tool_calls: &self.pieces.tool_calls,
            parse_errors: &self.parse_errors,
            events: &self.events,
        }
    }

    pub fn kinds(&self) -> Vec<&'static str> {
        self.events.iter().map(AgentEvent::kind).collect()
    }
}
