//! Turn accounting: which scripted turn answers a conversation's next request.
//!
//! Counters are kept per conversation so several CLIs running the same scenario against one
//! server each get the whole script. A turn is consumed only when it is served in full: an
//! injected HTTP error or a cut stream leaves it in place for the CLI's retry.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::scenario::{Scenario, Turn};

/// Key used when a request carries nothing that identifies its conversation.
pub const GLOBAL_CONVERSATION: &str = "global";

/// What to do with a turn request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Answer with HTTP `status`, or a failed stream when `in_stream` (turn `index` stays
    /// pending).
    Fail {
        index: usize,
        status: u16,
        message: Option<String>,
        in_stream: bool,
        /// Gemini's `RetryInfo.retryDelay`; `None`: no such detail.
        retry_delay: Option<String>,
    },
    /// Stream turn `index` but drop the connection after `after` events (turn stays pending).
    Cut { index: usize, after: usize },
    /// Stream turn `index` in full; the next request gets the next turn.
    Serve { index: usize },
    /// The script is exhausted: a short closing answer.
    Finished,
}

#[derive(Debug, Default)]
struct Progress {
    next: usize,
    failures: u32,
    cut_done: bool,
}

/// The shared per-conversation counters of one server.
#[derive(Debug)]
pub struct TurnBook {
    scenario: Arc<Scenario>,
    progress: Mutex<HashMap<String, Progress>>,
}

impl TurnBook {
    pub fn new(scenario: Arc<Scenario>) -> Self {
        TurnBook {
            scenario,
            progress: Mutex::new(HashMap::new()),
        }
    }

    /// The scripted turn at `index`.
    pub fn turn(&self, index: usize) -> Option<&Turn> {
        self.scenario.turns.get(index)
    }

    /// The route whose marker the request's JSON text contains (the first listed wins).
    pub fn route_for(&self, body: &serde_json::Value) -> Option<usize> {
        if self.scenario.routes.is_empty() {
            return None;
        }
        let text = body.to_string();
        self.scenario
            .routes
            .iter()
            .position(|r| text.contains(&r.prompt_contains))
    }

    /// The turn at `index` of `route`'s script (the main script for `None`).
    pub fn turn_in(&self, route: Option<usize>, index: usize) -> Option<&Turn> {
        self.turns_of(route).get(index)
    }

    fn turns_of(&self, route: Option<usize>) -> &[Turn] {
        match route.and_then(|r| self.scenario.routes.get(r)) {
            Some(r) => &r.turns,
            None => &self.scenario.turns,
        }
    }

    /// Decide the answer to the next turn request of `conversation`, updating its counters.
    /// The turn a conversation's next request would get, without consuming it.
    pub fn peek(&self, conversation: &str) -> Option<&Turn> {
        let all = self
            .progress
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let next = all.get(conversation).map_or(0, |p| p.next);
        self.scenario.turns.get(next)
    }

    pub fn decide(&self, conversation: &str) -> Decision {
        self.decide_in(None, conversation)
    }

    /// [`TurnBook::decide`] within `route`'s script (counted apart from the main script).
    pub fn decide_in(&self, route: Option<usize>, conversation: &str) -> Decision {
        // A poisoned lock only means another handler panicked mid-update; counters are
        // still usable, so keep serving rather than failing every later request.
        let mut all = self
            .progress
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = match route {
            Some(r) => format!("route{r}/{conversation}"),
            None => conversation.to_owned(),
        };
        let progress = all.entry(key).or_default();
        let index = progress.next;
        let Some(turn) = self.turns_of(route).get(index) else {
            return Decision::Finished;
        };
        if let Some(fail) = &turn.fail {
            if fail.times.covers(progress.failures) {
                progress.failures += 1;
                return Decision::Fail {
                    index,
                    status: fail.status,
                    message: fail.message.clone(),
                    in_stream: fail.in_stream,
                    retry_delay: fail.retry_info_delay(),
                };
            }
        }
        if let Some(after) = turn.cut_after_events {
            if !progress.cut_done {
                progress.cut_done = true;
                return Decision::Cut { index, after };
            }
        }
        *progress = Progress {
            next: index + 1,
            ..Progress::default()
        };
        Decision::Serve { index }
    }
}
