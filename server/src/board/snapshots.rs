//! What a page's `GET /v1/board?snapshot=1` drew, kept a short while so the page's live
//! stream (`GET /v1/board/events?from=ID`) starts from it: the stream then sends only what
//! changed since, instead of all the cards the page has just received (a thousand parsed,
//! compared and skipped by the page, and read once more from the queue by the server).
//!
//! A stream takes its snapshot once; the oldest are dropped past [`KEPT`] (a page that
//! never opened its stream), and a stream whose snapshot is gone starts from nothing, as
//! before.

use std::collections::{HashMap, VecDeque};

use super::card::Card;
use crate::routes::board::StageCache;

/// How many snapshots wait for their stream at most.
pub const KEPT: usize = 32;

/// A board as a page received it.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The queue's change counter read before the cards were: a change after it wakes the
    /// stream at once.
    pub counter: u64,
    /// The cards, by task id, as a stream compares them (no elapsed time: the page counts
    /// it on by itself).
    pub cards: HashMap<String, Card>,
    /// What the read knew of the running tasks' events.
    pub stages: StageCache,
}

/// The snapshots waiting for their stream, oldest first.
#[derive(Debug, Default)]
pub struct Snapshots {
    next: u64,
    kept: VecDeque<(String, Snapshot)>,
}

impl Snapshots {
    /// Keeps `snapshot`; returns its id (unique for this server's life).
    pub fn keep(&mut self, snapshot: Snapshot) -> String {
        self.next += 1;
        let id = format!("s{}", self.next);
        if self.kept.len() >= KEPT {
            self.kept.pop_front();
        }
        self.kept.push_back((id.clone(), snapshot));
        id
    }

    /// The snapshot `id`, taken away (a stream starts from it once).
    pub fn take(&mut self, id: &str) -> Option<Snapshot> {
        let at = self.kept.iter().position(|(kept, _)| kept == id)?;
        self.kept.remove(at).map(|(_, snapshot)| snapshot)
    }
}

/// A card as a stream compares it: its elapsed time changes every tick and is not sent
/// for that alone.
pub fn comparable(card: &Card) -> Card {
    Card {
        elapsed_ms: None,
        ..card.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_is_taken_once_and_the_oldest_go_first() {
        let mut snapshots = Snapshots::default();
        let first = snapshots.keep(Snapshot {
            counter: 7,
            ..Snapshot::default()
        });
        let second = snapshots.keep(Snapshot::default());
        assert_ne!(first, second);
        assert_eq!(snapshots.take(&first).map(|s| s.counter), Some(7));
        assert!(snapshots.take(&first).is_none(), "taken once");
        assert!(snapshots.take("s999").is_none());
        for _ in 0..KEPT {
            snapshots.keep(Snapshot::default());
        }
        assert!(snapshots.take(&second).is_none(), "dropped past KEPT");
    }
}
