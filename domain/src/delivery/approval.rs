//! An approval: a person's yes or no on a change the gate held back.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::IdError;
use crate::task::TaskId;

/// An approval's id. Typed on a command line (`approvals approve <id>`), so it is kept to
/// characters that need no quoting.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct ApprovalId(String);

impl ApprovalId {
    const MAX: usize = 128;

    /// Checks and wraps `value`.
    ///
    /// # Errors
    /// [`IdError`] when empty, longer than 128 characters, or with a character outside
    /// `A-Za-z0-9_.-`.
    pub fn new(value: impl Into<String>) -> Result<Self, IdError> {
        let value = value.into();
        let what = "approval id";
        if value.is_empty() {
            return Err(IdError::Empty { what });
        }
        if value.len() > Self::MAX {
            return Err(IdError::TooLong {
                what,
                max: Self::MAX,
            });
        }
        let ok = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.');
        if !value.bytes().all(ok) || value == "." || value == ".." {
            return Err(IdError::BadCharacter {
                what,
                value,
                allowed: "A-Za-z0-9_.-",
            });
        }
        Ok(Self(value))
    }

    /// The approval id forge derives from a task id: one approval per task.
    pub fn for_task(task: &TaskId) -> Self {
        // A task id is already path- and argv-safe; the prefix only tells the two apart.
        Self(format!("ap-{}", task.as_str()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ApprovalId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for ApprovalId {
    type Err = IdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}

impl<'de> Deserialize<'de> for ApprovalId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::new(s).map_err(serde::de::Error::custom)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalState {
    Pending,
    Approved,
    Rejected,
}

impl ApprovalState {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalState::Pending => "pending",
            ApprovalState::Approved => "approved",
            ApprovalState::Rejected => "rejected",
        }
    }

    /// The state stored as `text`; `None` for anything else (a row written by a newer forge).
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "pending" => Some(ApprovalState::Pending),
            "approved" => Some(ApprovalState::Approved),
            "rejected" => Some(ApprovalState::Rejected),
            _ => None,
        }
    }
}

/// A person's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Approve,
    Reject,
}

impl Decision {
    /// The state an approval moves to.
    pub fn state(self) -> ApprovalState {
        match self {
            Decision::Approve => ApprovalState::Approved,
            Decision::Reject => ApprovalState::Rejected,
        }
    }
}

/// One approval row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approval {
    pub id: ApprovalId,
    pub task_id: TaskId,
    pub state: ApprovalState,
    pub risk_score: u8,
    pub reasons: Vec<String>,
    pub files: Vec<String>,
    pub requested_at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, ok: bool) {
        assert_eq!(ApprovalId::new(input).is_ok(), ok, "{input:?}");
    }

    #[test]
    fn approval_ids() {
        for (input, ok) in [
            ("ap-0193abc", true),
            ("A_b.c-9", true),
            ("", false),
            ("..", false),
            ("a b", false),
            ("a/b", false),
            ("a;rm", false),
            ("ä", false),
        ] {
            check(input, ok);
        }
        check(&"x".repeat(129), false);
        check(&"x".repeat(128), true);
    }

    #[test]
    fn states_round_trip_through_text() {
        for state in [
            ApprovalState::Pending,
            ApprovalState::Approved,
            ApprovalState::Rejected,
        ] {
            assert_eq!(ApprovalState::parse(state.as_str()), Some(state));
        }
        assert_eq!(ApprovalState::parse("Pending"), None);
        assert_eq!(Decision::Approve.state(), ApprovalState::Approved);
        assert_eq!(Decision::Reject.state(), ApprovalState::Rejected);
    }
}
