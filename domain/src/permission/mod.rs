//! The approval bridge's pure half (issue 41): an agent's permission request as forge keeps
//! it (which provider, which tool with what input, for which run or task, until when), the
//! decisions a person — or a rule, or the clock — gives it, the rule that the first decision
//! stands, and the permission rules in Claude Code's syntax that decide before anyone is
//! asked.
//!
//! The stores keep the requests (`forge_ports::PermissionRequests`); the agents' adapters
//! turn a decision into their protocol's answer.

mod decision;
mod glob;
mod request;
mod rules;
mod shell;

pub use decision::{
    AlreadyDecided, DecidedBy, PermissionDecided, PermissionDecision, TIMEOUT_MESSAGE, Verdict,
};
pub use request::{PermissionId, PermissionOwner, PermissionRequest, ToolRequest, edit_diff};
pub use rules::{Rule, RuleError, RuleSet, RuleVerdict, Rules};

/// How long a request waits for a person when `[permissions] timeout_ms` says nothing.
pub const DEFAULT_TIMEOUT_MS: u64 = 10 * 60 * 1000;

/// Why a provider cannot take `--permission-mode ask`, and what to use instead: codex and
/// gemini as their own CLIs have no permission prompt forge can answer headless; their ACP
/// servers do. `None` for any other provider (the provider's capabilities decide).
pub fn ask_refusal(provider: &str) -> Option<String> {
    let (cli, instead) = match provider {
        "codex" => (
            "codex exec",
            "the ACP provider codex-acp ([providers.codex-acp] kind = \"acp\", \
             command = [\"codex-acp\"])",
        ),
        "gemini" => (
            "gemini -p",
            "gemini over ACP ([providers.gemini-acp] kind = \"acp\", \
             command = [\"gemini\", \"--acp\"])",
        ),
        _ => return None,
    };
    Some(format!(
        "--permission-mode ask: {cli} cannot hand a permission request to forge (headless it \
         only allows or refuses by its own policy); use {instead}, which asks through forge"
    ))
}

#[cfg(test)]
mod tests;
