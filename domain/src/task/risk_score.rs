//! The risk score's value type; the rule that computes it is in [`super::risk`].

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RiskLevel {
    Low,
    Medium,
    High,
}

impl RiskLevel {
    /// low < 3 ≤ medium < 6 ≤ high.
    pub fn of(score: u8) -> RiskLevel {
        match score {
            0..=2 => RiskLevel::Low,
            3..=5 => RiskLevel::Medium,
            _ => RiskLevel::High,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RiskLevel::Low => "low",
            RiskLevel::Medium => "medium",
            RiskLevel::High => "high",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RiskScore {
    /// 0..=10.
    pub score: u8,
    pub level: RiskLevel,
    /// One line per contribution, e.g. `+4 critical finding secret.aws_access_key in a.rs:3`.
    pub reasons: Vec<String>,
}

impl RiskScore {
    /// Risk below the threshold is committed; at or above it is held for approval.
    pub fn allows_commit(&self, threshold: u8) -> bool {
        self.score < threshold
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_threshold() {
        for (score, level) in [
            (0, RiskLevel::Low),
            (2, RiskLevel::Low),
            (3, RiskLevel::Medium),
            (5, RiskLevel::Medium),
            (6, RiskLevel::High),
            (10, RiskLevel::High),
        ] {
            assert_eq!(RiskLevel::of(score), level, "{score}");
        }
        let r = RiskScore {
            score: 3,
            level: RiskLevel::Medium,
            reasons: vec![],
        };
        assert!(!r.allows_commit(3));
        assert!(r.allows_commit(4));
    }
}
