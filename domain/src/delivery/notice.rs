//! What a notifier sends when a change waits for approval, and what came back.

use serde::{Deserialize, Serialize};

use crate::task::TaskId;

use super::ApprovalId;

/// The approval request as every channel shows it. The webhook posts it as JSON; Telegram
/// sends [`ApprovalNotice::text`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalNotice {
    pub task_id: TaskId,
    pub approval_id: ApprovalId,
    pub title: String,
    pub risk_score: u8,
    pub risk_level: String,
    pub reasons: Vec<String>,
    pub files: Vec<String>,
    pub branch: String,
    pub approve_command: String,
    pub reject_command: String,
}

/// Most files listed in a chat message; the rest are counted.
const MAX_FILES_IN_TEXT: usize = 20;

impl ApprovalNotice {
    /// Builds the notice with the commands a person runs to decide.
    pub fn new(
        task_id: TaskId,
        approval_id: ApprovalId,
        title: impl Into<String>,
        risk: (u8, String, Vec<String>),
        files: Vec<String>,
        branch: impl Into<String>,
    ) -> Self {
        let approve_command = format!("forge-code-agent approvals approve {approval_id}");
        let reject_command = format!("forge-code-agent approvals reject {approval_id}");
        Self {
            task_id,
            approval_id,
            title: title.into(),
            risk_score: risk.0,
            risk_level: risk.1,
            reasons: risk.2,
            files,
            branch: branch.into(),
            approve_command,
            reject_command,
        }
    }

    /// Plain text for a chat message.
    pub fn text(&self) -> String {
        let mut text = format!(
            "forge: approval needed for task {}\n{}\nrisk {}/10 ({})\n",
            self.task_id, self.title, self.risk_score, self.risk_level
        );
        for reason in &self.reasons {
            text.push_str("- ");
            text.push_str(reason);
            text.push('\n');
        }
        text.push_str(&format!(
            "branch {}, {} file(s):\n",
            self.branch,
            self.files.len()
        ));
        for file in self.files.iter().take(MAX_FILES_IN_TEXT) {
            text.push_str("  ");
            text.push_str(file);
            text.push('\n');
        }
        if self.files.len() > MAX_FILES_IN_TEXT {
            text.push_str(&format!(
                "  … and {} more\n",
                self.files.len() - MAX_FILES_IN_TEXT
            ));
        }
        text.push_str(&format!(
            "approve: {}\nreject: {}\n",
            self.approve_command, self.reject_command
        ));
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_names_task_risk_files_and_commands() {
        let task = TaskId::new("t1").unwrap();
        let notice = ApprovalNotice::new(
            task.clone(),
            ApprovalId::for_task(&task),
            "Add login",
            (7, "high".into(), vec!["secret in src/a.rs:3".into()]),
            vec![".env".into(), "src/a.rs".into()],
            "forge/t1",
        );
        insta::assert_snapshot!(notice.text(), @r"
        forge: approval needed for task t1
        Add login
        risk 7/10 (high)
        - secret in src/a.rs:3
        branch forge/t1, 2 file(s):
          .env
          src/a.rs
        approve: forge-code-agent approvals approve ap-t1
        reject: forge-code-agent approvals reject ap-t1
        ");
    }

    #[test]
    fn many_files_are_counted_not_listed() {
        let task = TaskId::new("t1").unwrap();
        let files: Vec<String> = (0..25).map(|i| format!("f{i}")).collect();
        let notice = ApprovalNotice::new(
            task.clone(),
            ApprovalId::for_task(&task),
            "x",
            (3, "medium".into(), vec![]),
            files,
            "forge/t1",
        );
        let text = notice.text();
        assert!(text.contains("f19\n"));
        assert!(!text.contains("f20\n"));
        assert!(text.contains("… and 5 more"));
    }
}
