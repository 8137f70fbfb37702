//! A vendor-neutral answer ready to be rendered in one wire format.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use crate::scenario::{ToolAction, Turn};
use crate::tools::{ConcreteCall, ToolCatalog, Vendor, map_action};

/// Text shown when a conversation asks for more turns than the scenario has.
pub const FINISHED_TEXT: &str = "(fake model: scenario finished)";

/// Everything a renderer needs to produce one model response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyPlan {
    /// Model name echoed back (the one the CLI asked for).
    pub model: String,
    pub thinking: Option<String>,
    pub text_chunks: Vec<String>,
    pub calls: Vec<ConcreteCall>,
    /// Rough prompt size, so usage numbers look plausible and non-zero.
    pub input_tokens: u64,
}

impl ReplyPlan {
    /// Build the plan for a scripted turn, mapping its actions onto the advertised tools.
    pub fn for_turn(
        vendor: Vendor,
        turn: &Turn,
        catalog: &ToolCatalog,
        workdir: Option<&str>,
        model: &str,
        input_tokens: u64,
    ) -> Self {
        let calls = turn
            .tool_calls
            .iter()
            .map(|action: &ToolAction| map_action(vendor, action, catalog, workdir))
            .collect();
        ReplyPlan {
            model: model.to_owned(),
            thinking: turn.thinking.clone(),
            text_chunks: turn.text_chunks(),
            calls,
            input_tokens,
        }
    }

    /// A text-only answer.
    pub fn text(model: &str, text: &str, input_tokens: u64) -> Self {
        ReplyPlan {
            model: model.to_owned(),
            thinking: None,
            text_chunks: vec![text.to_owned()],
            calls: Vec::new(),
            input_tokens,
        }
    }

    /// The whole visible text.
    pub fn full_text(&self) -> String {
        self.text_chunks.concat()
    }

    /// Whether the answer ends by asking the CLI to run tools.
    pub fn is_tool_use(&self) -> bool {
        !self.calls.is_empty()
    }

    /// A plausible output token count (about four characters a token).
    pub fn output_tokens(&self) -> u64 {
        let chars = self.full_text().chars().count()
            + self.thinking.as_deref().map_or(0, |t| t.chars().count())
            + self.calls.len() * 40;
        (chars as u64).div_ceil(4).max(1)
    }
}

/// A rough token estimate for a request body (about four bytes a token).
pub fn estimate_tokens(body: &[u8]) -> u64 {
    (body.len() as u64).div_ceil(4).max(1)
}

/// Where response ids come from: unique in production, a counter in snapshot tests.
#[derive(Debug)]
pub enum IdGen {
    Random,
    Sequential(AtomicU64),
}

impl IdGen {
    /// A counter starting at 1, for reproducible output.
    pub fn sequential() -> Self {
        IdGen::Sequential(AtomicU64::new(1))
    }

    /// A fresh id with the vendor's usual prefix, e.g. `msg_fake…`.
    pub fn next(&self, prefix: &str) -> String {
        match self {
            IdGen::Random => format!("{prefix}fake{}", uuid::Uuid::now_v7().simple()),
            IdGen::Sequential(counter) => {
                format!("{prefix}fake{}", counter.fetch_add(1, Ordering::Relaxed))
            }
        }
    }
}

/// The model name from a JSON body's `model` key, or a default.
pub fn model_of(body: &Value, default: &str) -> String {
    body.get("model")
        .and_then(Value::as_str)
        .unwrap_or(default)
        .to_owned()
}
