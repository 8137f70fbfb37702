//! How many follow-ups a pull request may cause (`[task] max_followups`, default 3): each
//! one runs the agent again and costs money, and a check that keeps failing must not loop
//! forever. Past the budget forge says so in a comment, once.

use serde::{Deserialize, Serialize};

pub const DEFAULT_MAX_FOLLOWUPS: u32 = 3;

/// What a new trigger on a pull request that already had `done` follow-ups leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FollowupBudget {
    /// Run it; `left` more after it.
    Run { left: u32 },
    /// The budget was just spent: comment that forge stops (once).
    ExhaustedSayOnce,
    /// Already said; nothing more.
    Exhausted,
}

/// The budget rule: `done` follow-ups so far, `max` allowed; `said` whether the comment that
/// forge stops was already posted.
pub fn followup_budget(done: u32, max: u32, said: bool) -> FollowupBudget {
    if done < max {
        FollowupBudget::Run {
            left: max - done - 1,
        }
    } else if said {
        FollowupBudget::Exhausted
    } else {
        FollowupBudget::ExhaustedSayOnce
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_runs_out_and_says_so_once() {
        for (done, max, said, want) in [
            (0, 3, false, FollowupBudget::Run { left: 2 }),
            (2, 3, false, FollowupBudget::Run { left: 0 }),
            (3, 3, false, FollowupBudget::ExhaustedSayOnce),
            (3, 3, true, FollowupBudget::Exhausted),
            (7, 3, false, FollowupBudget::ExhaustedSayOnce),
            (0, 0, false, FollowupBudget::ExhaustedSayOnce),
            (0, 0, true, FollowupBudget::Exhausted),
        ] {
            assert_eq!(
                followup_budget(done, max, said),
                want,
                "{done}/{max} {said}"
            );
        }
        assert_eq!(DEFAULT_MAX_FOLLOWUPS, 3);
    }
}
