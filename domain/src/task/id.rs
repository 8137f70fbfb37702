//! The task identifier. It names a directory (`.forgecode/tasks/<task_id>/`) and a git branch
//! (`forge/<task_id>`), so it is stricter than a run id: no dots, which keeps it clear of `..`,
//! `.lock` suffixes and hidden names in both places.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::ids::{IdError, check};

const ALLOWED: &str = "A-Za-z0-9_-";
const MAX: usize = 128;

fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

/// One guarded task; the pipeline's and the delivery store's key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct TaskId(String);

impl TaskId {
    /// Checks and wraps `value`.
    ///
    /// # Errors
    /// [`IdError`] when the value is empty, longer than 128 characters or has a character
    /// outside `A-Za-z0-9_-`.
    pub fn new(value: impl Into<String>) -> Result<Self, IdError> {
        let value = value.into();
        check("task id", &value, MAX, ALLOWED, allowed)?;
        Ok(Self(value))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The git branch the task's change lives on.
    pub fn branch(&self) -> String {
        format!("forge/{}", self.0)
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for TaskId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for TaskId {
    type Err = IdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}

impl<'de> Deserialize<'de> for TaskId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::new(s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_id(input: &str, ok: bool) {
        assert_eq!(TaskId::new(input).is_ok(), ok, "{input:?}");
    }

    #[test]
    fn task_ids_are_safe_path_components_and_branch_names() {
        for (input, ok) in [
            ("0193f2a1-7c3e", true),
            ("task_42", true),
            ("", false),
            ("..", false),
            ("a.lock", false),
            ("a/b", false),
            ("a b", false),
            ("ü", false),
        ] {
            check_id(input, ok);
        }
        check_id(&"a".repeat(128), true);
        check_id(&"a".repeat(129), false);
        assert_eq!(TaskId::new("t1").unwrap().branch(), "forge/t1");
        let bad: Result<TaskId, _> = serde_json::from_str("\"../x\"");
        assert!(bad.is_err());
    }
}
