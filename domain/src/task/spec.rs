//! What the user hands the pipeline: the task and its limits.

use serde::{Deserialize, Serialize};

use super::kind::TaskType;

/// The guardrails of one task. Defaults are the seed's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TaskLimits {
    /// Agent runs in the validation-correction loop, the main run included.
    pub max_cycles: u32,
    /// Correction runs triggered by a critical review finding.
    pub max_review_cycles: u32,
    /// Cost ceiling summed over every run of the task.
    pub max_total_cost_usd: f64,
    /// Wall-clock budget of the whole task, validation included.
    pub timeout_ms: u64,
    /// A risk score below this is committed; at or above it is held for approval.
    pub risk_threshold: u8,
    /// A task with no validation step (none configured, none detected) fails before its
    /// agent runs instead of delivering an unchecked change.
    pub require_validation: bool,
}

impl TaskLimits {
    pub const DEFAULT_MAX_CYCLES: u32 = 5;
    pub const DEFAULT_MAX_REVIEW_CYCLES: u32 = 2;
    pub const DEFAULT_MAX_TOTAL_COST_USD: f64 = 10.0;
    pub const DEFAULT_TIMEOUT_MS: u64 = 300_000;
    pub const DEFAULT_RISK_THRESHOLD: u8 = 3;
}

impl Default for TaskLimits {
    fn default() -> Self {
        Self {
            max_cycles: Self::DEFAULT_MAX_CYCLES,
            max_review_cycles: Self::DEFAULT_MAX_REVIEW_CYCLES,
            max_total_cost_usd: Self::DEFAULT_MAX_TOTAL_COST_USD,
            timeout_ms: Self::DEFAULT_TIMEOUT_MS,
            risk_threshold: Self::DEFAULT_RISK_THRESHOLD,
            require_validation: false,
        }
    }
}

/// A research note handed to the agent (`--context-file`): its display name and text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextFile {
    pub name: String,
    pub text: String,
}

/// The goal the task belongs to (`--goal-title`, `--goal-description`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Goal {
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
}

impl Goal {
    pub fn is_empty(&self) -> bool {
        self.title.as_deref().is_none_or(str::is_empty)
            && self.description.as_deref().is_none_or(str::is_empty)
    }
}

/// One task as the user gave it. File contents are read by the caller and handed in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSpec {
    /// "Implement user authentication with JWT tokens".
    pub task: String,
    /// What the user expects back (`--expected`).
    #[serde(default)]
    pub expected: Option<String>,
    /// `--type`; when absent the task text is classified.
    #[serde(default)]
    pub task_type: Option<TaskType>,
    #[serde(default)]
    pub goal: Goal,
    #[serde(default)]
    pub context_files: Vec<ContextFile>,
    /// `--base`; when absent the repository's current HEAD.
    #[serde(default)]
    pub base: Option<String>,
    #[serde(default)]
    pub limits: TaskLimits,
    /// Extra rules for the instruction file (`[task] instructions`).
    #[serde(default)]
    pub instructions: Option<String>,
    /// The repository map's size in characters (`[task] context_chars`); `None`: the
    /// default, [`crate::task::repomap::DEFAULT_CONTEXT_CHARS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_chars: Option<usize>,
}

impl TaskSpec {
    pub fn new(task: impl Into<String>) -> Self {
        Self {
            task: task.into(),
            expected: None,
            task_type: None,
            goal: Goal::default(),
            context_files: Vec::new(),
            base: None,
            limits: TaskLimits::default(),
            instructions: None,
            context_chars: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_default_to_the_seed_values_and_fill_missing_keys() {
        let l: TaskLimits = serde_json::from_str(r#"{"max_cycles": 2}"#).unwrap();
        assert_eq!(
            l,
            TaskLimits {
                max_cycles: 2,
                ..TaskLimits::default()
            }
        );
        let d = TaskLimits::default();
        assert_eq!(
            (
                d.max_cycles,
                d.max_review_cycles,
                d.timeout_ms,
                d.risk_threshold
            ),
            (5, 2, 300_000, 3)
        );
        assert!((d.max_total_cost_usd - 10.0).abs() < f64::EPSILON);
        let s: TaskSpec = serde_json::from_str(r#"{"task": "x", "task_type": "fix"}"#).unwrap();
        assert_eq!(s.task_type, Some(TaskType::Fix));
        assert!(s.goal.is_empty());
    }
}
