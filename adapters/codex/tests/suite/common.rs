//! Helpers shared by the suites: a provider with a pricing table, a decode-everything helper
//! and a serialisable view of the result pieces for snapshots.

use forge_adapter_codex::CodexProvider;
use forge_domain::{
    AgentEvent, ExecutionMetadata, ExecutionRequest, ForgeError, ModelPrice, PricingTable,
    ProviderId, ToolCall, ToolCallStatus, ToolKind,
};
use forge_ports::{Decoder, ProcessExit, ProviderSettings, ResultPieces};
use serde::Serialize;

pub const WORKDIR: &str = "<WORKDIR>";

pub fn settings() -> ProviderSettings {
    let mut pricing = PricingTable::default();
    pricing.models.insert(
        "gpt-5.5".into(),
        ModelPrice {
            input_per_mtok: 1.25,
            cached_input_per_mtok: Some(0.125),
            output_per_mtok: 10.0,
        },
    );
    ProviderSettings {
        model: Some("gpt-5.5".into()),
        pricing,
        ..ProviderSettings::default()
    }
}

pub fn request(prompt: &str) -> ExecutionRequest {
    ExecutionRequest::new(ProviderId::new("codex").unwrap(), prompt, WORKDIR)
}

/// Everything one decode produced.
#[derive(Debug, Serialize)]
pub struct Decoded {
    #[serde(serialize_with = "events_view")]
    pub events: Vec<AgentEvent>,
    pub parse_errors: Vec<ForgeError>,
    pub pieces: PiecesView,
}

/// Events as snapshots show them: raw JSON (`Unknown.raw`, tool inputs: a serde_json
/// RawValue, which only JSON serialisers understand) as a parsed value.
#[derive(Serialize)]
#[serde(untagged)]
enum EventView<'a> {
    Unknown {
        r#type: &'static str,
        kind: &'a str,
        raw: serde_json::Value,
    },
    ToolCallStarted {
        r#type: &'static str,
        call_id: &'a str,
        kind: ToolKind,
        name: &'a str,
        input: serde_json::Value,
    },
    Other(&'a AgentEvent),
}

fn events_view<S: serde::Serializer>(events: &[AgentEvent], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(events.iter().map(|e| match e {
        AgentEvent::Unknown { kind, raw } => EventView::Unknown {
            r#type: "unknown",
            kind,
            raw: raw.to_value(),
        },
        AgentEvent::ToolCallStarted {
            call_id,
            kind,
            name,
            input,
        } => EventView::ToolCallStarted {
            r#type: "tool_call_started",
            call_id,
            kind: *kind,
            name,
            input: input.to_value(),
        },
        other => EventView::Other(other),
    }))
}

/// A tool call as snapshots show it: the raw input as a parsed value.
#[derive(Serialize)]
struct ToolCallView<'a> {
    id: &'a str,
    kind: ToolKind,
    name: &'a str,
    input: serde_json::Value,
    output: Option<&'a str>,
    is_error: bool,
    exit_code: Option<i32>,
    status: ToolCallStatus,
}

fn tool_calls_view<S: serde::Serializer>(calls: &[ToolCall], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(calls.iter().map(|c| ToolCallView {
        id: &c.id,
        kind: c.kind,
        name: &c.name,
        input: c.input.to_value(),
        output: c.output.as_deref(),
        is_error: c.is_error,
        exit_code: c.exit_code,
        status: c.status,
    }))
}

/// `ResultPieces` is not `Serialize`; this view is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PiecesView {
    pub reported_success: Option<bool>,
    pub content: String,
    #[serde(serialize_with = "tool_calls_view")]
    pub tool_calls: Vec<ToolCall>,
    pub errors: Vec<ForgeError>,
    pub metadata: ExecutionMetadata,
}

impl From<ResultPieces> for PiecesView {
    fn from(p: ResultPieces) -> Self {
        Self {
            reported_success: p.reported_success,
            content: p.content,
            tool_calls: p.tool_calls,
            errors: p.errors,
            metadata: p.metadata,
        }
    }
}

/// Decodes `stdout` line by line (as the runtime does live) and finishes with `exit`.
pub fn decode_with(
    mut decoder: Box<dyn Decoder>,
    stdout: &str,
    exit: Option<&ProcessExit>,
) -> Decoded {
    let mut events = Vec::new();
    let mut parse_errors = Vec::new();
    for (i, line) in stdout.split('\n').enumerate() {
        if let Err(e) = decoder.decode_line(i as u64 + 1, line, &mut events) {
            parse_errors.push(e);
        }
    }
    let pieces = decoder.finish(exit).into();
    Decoded {
        events,
        parse_errors,
        pieces,
    }
}

/// Decodes with a fresh decoder for a plain request.
pub fn decode(stdout: &str, exit_code: Option<i32>, stderr: &str) -> Decoded {
    let provider = CodexProvider::new(settings());
    let exit = exit_code.map(|code| ProcessExit {
        code: Some(code),
        stderr_tail: stderr.to_owned(),
        stderr_bytes: stderr.len() as u64,
        ..ProcessExit::default()
    });
    decode_with(
        forge_ports::Provider::decoder(&provider, &request("p")),
        stdout,
        exit.as_ref(),
    )
}
