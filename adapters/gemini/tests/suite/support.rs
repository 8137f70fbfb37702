//! Shared helpers: a provider with a pricing table, decoding helpers, a serialisable view
//! of `ResultPieces`.

use forge_adapter_gemini::GeminiProvider;
use forge_domain::{
    AgentEvent, ExecutionRequest, ForgeError, ModelPrice, PricingTable, ProviderId,
};
use forge_ports::{ProcessExit, Provider, ProviderSettings, ResultPieces};
use serde_json::{Value, json};

pub fn settings() -> ProviderSettings {
    let mut pricing = PricingTable::default();
    for (model, input, output) in [
        ("gemini-3.8-flash", 0.30, 2.50),
        ("gemini-3.5-flash-lite", 0.10, 0.40),
    ] {
        pricing.models.insert(
            model.to_owned(),
            ModelPrice {
                input_per_mtok: input,
                cached_input_per_mtok: None,
                output_per_mtok: output,
            },
        );
    }
    ProviderSettings {
        pricing,
        ..ProviderSettings::default()
    }
}

pub fn provider() -> GeminiProvider {
    GeminiProvider::new(settings()).with_user_home(None)
}

pub fn request(prompt: &str, workdir: &str) -> ExecutionRequest {
    ExecutionRequest::new(ProviderId::new("gemini").unwrap(), prompt, workdir)
}

/// Everything a decode produced.
pub struct Decoded {
    pub events: Vec<AgentEvent>,
    pub errors: Vec<ForgeError>,
    pub pieces: ResultPieces,
}

/// Decodes `stdout` line by line as the runtime does, then finishes with `exit`.
pub fn decode_lines(stdout: &str, exit: Option<&ProcessExit>) -> Decoded {
    let mut dec = provider().decoder(&request("p", "<WORKDIR>"));
    let mut events = Vec::new();
    let mut errors = Vec::new();
    for (i, line) in stdout.split('\n').enumerate() {
        if let Err(e) = dec.decode_line(i as u64 + 1, line, &mut events) {
            errors.push(e);
        }
    }
    let pieces = dec.finish(exit);
    Decoded {
        events,
        errors,
        pieces,
    }
}

/// Decodes a whole recorded document (`events --file`), then finishes with `exit`.
pub fn decode_document(text: &str, exit: Option<&ProcessExit>) -> Decoded {
    let mut dec = provider().decoder(&request("p", "<WORKDIR>"));
    let mut events = Vec::new();
    let errors = dec.decode_document(text, &mut events);
    let pieces = dec.finish(exit);
    Decoded {
        events,
        errors,
        pieces,
    }
}

pub fn exit(code: i32, stderr: &str) -> ProcessExit {
    ProcessExit {
        code: Some(code),
        signal: None,
        stderr_tail: stderr.to_owned(),
        stderr_bytes: stderr.len() as u64,
    }
}

pub fn pieces_view(p: &ResultPieces) -> Value {
    json!({
        "reported_success": p.reported_success,
        "content": p.content,
        "tool_calls": p.tool_calls,
        "errors": p.errors,
        "metadata": p.metadata,
    })
}

pub fn view(d: &Decoded) -> Value {
    json!({
        "events": d.events,
        "parse_errors": d.errors,
        "result": pieces_view(&d.pieces),
    })
}

pub fn kinds(events: &[AgentEvent]) -> Vec<&'static str> {
    events.iter().map(AgentEvent::kind).collect()
}
