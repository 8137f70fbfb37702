//! `forge poll` (issue 39, a worker without a public URL): what is asked of a forge's API
//! and what comes back. The cursor is the forge's own time (the newest `created_at` /
//! `updated_at` / `submitted_at` / `completed_at` it answered), never this machine's clock:
//! the next poll asks from it, inclusively, and an event read twice is the same event (its
//! [`ForgeEvent::key`]) and acts once.

use serde::{Deserialize, Serialize};

use super::event::ForgeEvent;

/// One of forge's open pull requests on the polled repository: its reviews and the checks
/// of its head commit are read (a forge lists those per pull request, not per repository).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolledPull {
    pub number: u64,
    /// The last commit forge pushed onto its branch; empty when the report does not say.
    pub head_sha: String,
}

/// What one poll of one repository read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PolledEvents {
    /// Oldest first, as far as the forge orders them.
    pub events: Vec<ForgeEvent>,
    /// The cursor to store once every event was acted on; `None`: nothing was read, keep
    /// the one before.
    pub cursor: Option<String>,
}

/// The later of two cursors of the same forge (ISO 8601 times in UTC, `…Z`, compare as
/// text); `None` only when both are.
pub fn later_cursor(a: Option<String>, b: Option<&str>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) if b > a.as_str() => Some(b.to_owned()),
        (Some(a), _) => Some(a),
        (None, b) => b.map(str::to_owned),
    }
}

/// Whether a time the forge answered is at or after `since` (every time when there is no
/// cursor yet; a missing time counts as new: reading it again is harmless, missing it is
/// not).
pub fn at_or_after(time: Option<&str>, since: Option<&str>) -> bool {
    match (time, since) {
        (Some(time), Some(since)) => time >= since,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(a: Option<&str>, b: Option<&str>, expected: Option<&str>) {
        assert_eq!(
            later_cursor(a.map(str::to_owned), b).as_deref(),
            expected,
            "later of {a:?} and {b:?}"
        );
    }

    #[test]
    fn the_later_cursor_wins() {
        let t1 = "2026-11-28T05:00:00Z";
        let t2 = "2026-11-28T05:00:01Z";
        check(None, None, None);
        check(Some(t1), None, Some(t1));
        check(None, Some(t1), Some(t1));
        check(Some(t1), Some(t2), Some(t2));
        check(Some(t2), Some(t1), Some(t2));
        check(Some(t1), Some(t1), Some(t1));
    }

    #[test]
    fn since_is_inclusive() {
        let since = Some("2026-11-28T05:00:00Z");
        for (time, expected) in [
            (Some("2026-11-28T05:00:00Z"), true),
            (Some("2026-11-28T05:00:01Z"), true),
            (Some("2026-11-28T04:59:59Z"), false),
            // Look-alike: a different day that sorts earlier.
            (Some("2026-11-27T23:59:59Z"), false),
            (None, true),
        ] {
            assert_eq!(at_or_after(time, since), expected, "{time:?}");
        }
        assert!(at_or_after(Some("2020-01-01T00:00:00Z"), None));
    }
}
