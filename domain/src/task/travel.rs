//! What a task's report says of its agent session's travel (issue 39): whether a follow-up
//! resumed its parent's session here (imported from the queue's store), or why it could not
//! and started a new session given the conversation; and whether this task's own session was
//! kept for its follow-ups.

use serde::{Deserialize, Serialize};

/// The report's `session_travel` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionTravel {
    /// A follow-up: the parent's session it was to resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_session: Option<String>,
    /// `true`: the parent's session was imported and resumed here; `false`: see
    /// `not_resumed`.
    #[serde(default)]
    pub resumed: bool,
    /// Why the parent's session could not be resumed here: the new session was given the
    /// conversation (the parent's task and this follow-up) instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_resumed: Option<String>,
    /// This task's session was exported for its follow-ups (`false` with `export_error`).
    #[serde(default)]
    pub exported: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub export_error: Option<String>,
}

/// The prompt of a new session standing in for a session that cannot be resumed: the
/// parent's task, then the follow-up's.
pub fn conversation_prompt(parent_task: &str, followup: &str) -> String {
    format!(
        "This continues earlier work on this branch whose agent session could not be resumed \
         here. The earlier task was:\n\n{parent_task}\n\nThe work on it is committed on this \
         branch. Now:\n\n{followup}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_session_is_given_the_parent_task_then_the_follow_up() {
        let prompt = conversation_prompt("Write 41 in answer.txt", "@forge make it 42");
        let parent = prompt.find("Write 41").unwrap_or(usize::MAX);
        let followup = prompt.find("@forge make it 42").unwrap_or(0);
        assert!(parent < followup, "{prompt}");
    }

    #[test]
    fn the_section_reads_back() {
        let travel = SessionTravel {
            resumed_session: Some("s-1".into()),
            resumed: false,
            not_resumed: Some("acp cannot resume elsewhere".into()),
            exported: true,
            export_error: None,
        };
        let json = serde_json::to_value(&travel).unwrap_or_default();
        assert_eq!(
            json,
            serde_json::json!({"resumed_session": "s-1", "resumed": false,
                "not_resumed": "acp cannot resume elsewhere", "exported": true})
        );
        let back: SessionTravel = serde_json::from_value(json).unwrap_or_default();
        assert_eq!(back, travel);
    }
}
