//! Stage 4: the context, gathered in parallel (one `join`): the repository index summary
//! (not for FIX), the baseline validation on the untouched work tree, the goal and the
//! research notes. Each part is timed for the plan.

use serde::Serialize;

/// The index summary's size cap (characters).
pub const INDEX_CAP: usize = 3000;
/// Entries read from the walk at most (the summary shows far fewer).
pub const INDEX_LIMIT: usize = 20_000;

/// How long one context part took and how big it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextPart {
    pub name: &'static str,
    pub duration_ms: u64,
    pub chars: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}
