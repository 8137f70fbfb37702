//! The guardrail instruction file forge writes into the task's worktree for the provider's
//! CLI to read (`CLAUDE.md`, `AGENTS.md`, `GEMINI.md`), and the wrapping that keeps a
//! pre-existing file's bytes exactly.

pub mod content;
pub mod wrap;

pub use content::{InstructionInputs, render};
pub use wrap::{UnwrapError, is_wrapped, unwrap, wrap};

use crate::ids::ProviderId;

/// The file the provider's CLI reads its project instructions from: Claude Code reads
/// `CLAUDE.md`, Gemini CLI `GEMINI.md`; Codex and other agents follow the `AGENTS.md`
/// convention.
pub fn file_name(provider: &ProviderId) -> &'static str {
    match provider.as_str() {
        "claude" => "CLAUDE.md",
        "gemini" => "GEMINI.md",
        _ => "AGENTS.md",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cli_reads_its_own_file() {
        for (provider, expected) in [
            ("claude", "CLAUDE.md"),
            ("codex", "AGENTS.md"),
            ("gemini", "GEMINI.md"),
            ("my-acp", "AGENTS.md"),
        ] {
            assert_eq!(file_name(&ProviderId::new(provider).unwrap()), expected);
        }
    }
}
