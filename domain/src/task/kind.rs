//! The four kinds of task; each has its own decision protocol and prompt template.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskType {
    Implement,
    Fix,
    Create,
    Refactor,
}

impl TaskType {
    pub const ALL: [TaskType; 4] = [
        TaskType::Implement,
        TaskType::Fix,
        TaskType::Create,
        TaskType::Refactor,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TaskType::Implement => "implement",
            TaskType::Fix => "fix",
            TaskType::Create => "create",
            TaskType::Refactor => "refactor",
        }
    }

    /// The seed's upper-case label (`IMPLEMENT`, `FIX`, …) used in prompts.
    pub fn label(self) -> &'static str {
        match self {
            TaskType::Implement => "IMPLEMENT",
            TaskType::Fix => "FIX",
            TaskType::Create => "CREATE",
            TaskType::Refactor => "REFACTOR",
        }
    }
}

impl std::fmt::Display for TaskType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for TaskType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.to_ascii_lowercase();
        TaskType::ALL
            .into_iter()
            .find(|t| t.as_str() == lower)
            .ok_or_else(|| {
                format!("unknown task type {s:?}: expected implement, fix, create or refactor")
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_its_own_names_and_the_seed_labels() {
        for t in TaskType::ALL {
            assert_eq!(t.as_str().parse::<TaskType>(), Ok(t));
            assert_eq!(t.label().parse::<TaskType>(), Ok(t));
            assert_eq!(serde_json::to_value(t).unwrap(), t.as_str());
        }
        assert!("bugfix".parse::<TaskType>().is_err());
    }
}
