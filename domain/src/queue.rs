//! The task queue's rows and rules: a task submitted for any worker to run, its state, the
//! lease a worker holds while running it, and what a heartbeat learns.
//!
//! A queued task carries everything a worker needs (repository URL, prompt and the options
//! of `task run`), so it runs the same on whichever machine claims it.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::ForgeError;
use crate::task::TaskId;

/// Where a queued task stands. `Succeeded`, `Failed`, `Cancelled` and `Dead` are final.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueState {
    /// Waiting for a worker (new, or handed back).
    Queued,
    /// A worker holds its lease.
    Running,
    Succeeded,
    Failed,
    Cancelled,
    /// Its workers were lost `max_attempts` times; `last_error` says the last way.
    Dead,
}

impl QueueState {
    pub const ALL: [QueueState; 6] = [
        QueueState::Queued,
        QueueState::Running,
        QueueState::Succeeded,
        QueueState::Failed,
        QueueState::Cancelled,
        QueueState::Dead,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            QueueState::Queued => "queued",
            QueueState::Running => "running",
            QueueState::Succeeded => "succeeded",
            QueueState::Failed => "failed",
            QueueState::Cancelled => "cancelled",
            QueueState::Dead => "dead",
        }
    }

    /// The state a stored name stands for; `None` for anything else.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// Nothing happens to the task any more.
    pub fn is_final(self) -> bool {
        !matches!(self, QueueState::Queued | QueueState::Running)
    }
}

impl fmt::Display for QueueState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How often a task is started before it is declared dead, unless submitted otherwise.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// A task handed to the queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueSubmission {
    pub task_id: TaskId,
    /// The repository URL every worker clones or fetches.
    pub repo: String,
    pub prompt: String,
    /// The options of `task run` the task travels with (provider, base, push, goal …), as
    /// the submitting command recorded them.
    pub options: serde_json::Value,
    pub max_attempts: u32,
}

/// A task as the queue holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueuedTask {
    pub task_id: TaskId,
    pub state: QueueState,
    pub repo: String,
    pub prompt: String,
    pub options: serde_json::Value,
    /// How many times a worker has started it (a lost lease counts as an attempt).
    pub attempts: u32,
    pub max_attempts: u32,
    /// The worker that holds (or last held) it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    /// While running: the lease runs out at this time (Unix ms, the queue's clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_until_ms: Option<u64>,
    /// `task cancel` asked the running worker to stop it.
    pub cancel_requested: bool,
    pub submitted_at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at_ms: Option<u64>,
    /// The exit code of the worker's `task run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// The task report (`task run --json`'s object) once it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<serde_json::Value>,
}

/// What a worker's heartbeat learned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heartbeat {
    /// The lease is renewed.
    Held,
    /// The lease is renewed and `task cancel` asked to stop the task.
    CancelRequested,
    /// The worker no longer holds the task (its lease ran out and another took it, or it
    /// is final): stop running it at once.
    Lost,
}

/// How a worker ends its task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finish {
    /// A final state (`succeeded`, `failed` or `cancelled`).
    pub state: QueueState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<serde_json::Value>,
}

/// One stored event of a task (stage progress, worker changes), in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueEvent {
    /// The task's own count (1, 2, 3 …); a reader resumes after the last one it saw.
    pub seq: u64,
    pub task_id: TaskId,
    pub at_ms: u64,
    pub kind: String,
    pub data: serde_json::Value,
}

/// A queued task's delivery: the branch and commit a worker pushed. The queue keeps one
/// per task (a unique key): whichever worker records first stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueDelivery {
    pub task_id: TaskId,
    pub branch: String,
    pub commit: String,
    pub worker: String,
    /// When it was recorded (Unix ms, the queue's clock); ignored when recording.
    #[serde(default)]
    pub at_ms: u64,
}

/// The delivery a task report (`task run --json`'s object) says was pushed: its branch and
/// commit, when `delivery.pushed` is true.
pub fn pushed_delivery(report: &serde_json::Value) -> Option<(String, String)> {
    let delivery = report.get("delivery")?;
    if delivery.get("pushed")?.as_bool() != Some(true) {
        return None;
    }
    let branch = delivery.get("branch")?.as_str()?.to_owned();
    let commit = delivery.get("commit")?.as_str()?.to_owned();
    Some((branch, commit))
}

/// The `last_error` of a task declared dead, with `%s` where the attempts and the last
/// worker go: the one wording that [`dead_error`] fills in Rust and a SQL `format()` fills in
/// a statement that ends lost tasks itself.
pub const DEAD_ERROR_FORMAT: &str = "lease lost %s time(s), last held by %s; max_attempts reached";

/// The `last_error` of a task claimed after its worker's lease ran out, with `%s` where that
/// worker goes (see [`taken_over_error`]).
pub const TAKEN_OVER_FORMAT: &str = "lease of %s ran out";

/// Who held a dead task that names no worker.
pub const NO_WORKER: &str = "no worker";

/// The message a task declared dead carries.
pub fn dead_error(attempts: u32, worker: Option<&str>) -> String {
    fill(
        DEAD_ERROR_FORMAT,
        &[&attempts.to_string(), worker.unwrap_or(NO_WORKER)],
    )
}

/// The message a task carries once another worker took it over from `worker`, whose lease
/// ran out.
pub fn taken_over_error(worker: Option<&str>) -> String {
    fill(TAKEN_OVER_FORMAT, &[worker.unwrap_or_default()])
}

/// `format` with each `%s` replaced by the next of `values` (as SQL's `format()` does).
fn fill(format: &str, values: &[&str]) -> String {
    let mut out =
        String::with_capacity(format.len() + values.iter().map(|v| v.len()).sum::<usize>());
    let mut values = values.iter();
    let mut rest = format;
    while let Some(at) = rest.find("%s") {
        out.push_str(&rest[..at]);
        out.push_str(values.next().copied().unwrap_or_default());
        rest = &rest[at + 2..];
    }
    out.push_str(rest);
    out
}

/// How a running task whose lease ran out for the last time (or after a cancel) ends: its
/// final state and the `last_error` it gets (`None`: it keeps the one it has).
pub fn lost_task_end(
    attempts: u32,
    worker: Option<&str>,
    cancel_requested: bool,
) -> (QueueState, Option<String>) {
    if cancel_requested {
        (QueueState::Cancelled, None)
    } else {
        (QueueState::Dead, Some(dead_error(attempts, worker)))
    }
}

impl Heartbeat {
    /// What a heartbeat learned from renewing the lease: `None` when the worker no longer
    /// held it, else whether a cancel was asked for.
    pub fn of_renewal(cancel_requested: Option<bool>) -> Self {
        match cancel_requested {
            None => Heartbeat::Lost,
            Some(true) => Heartbeat::CancelRequested,
            Some(false) => Heartbeat::Held,
        }
    }
}

impl Finish {
    /// A worker finishes a task only in a final state.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] for `queued` or `running`.
    pub fn check(&self) -> Result<(), ForgeError> {
        if self.state.is_final() {
            Ok(())
        } else {
            Err(ForgeError::InvalidRequest {
                reason: format!("a task cannot finish as {}", self.state),
            })
        }
    }
}

/// The queue's refusals, worded once for every adapter.
pub mod refusal {
    use std::fmt::Display;

    use crate::ForgeError;

    /// A submission whose task id the queue already holds.
    pub fn already_queued(id: impl Display) -> ForgeError {
        ForgeError::InvalidRequest {
            reason: format!("task {id} is already in the queue"),
        }
    }

    /// An event for a task the queue does not hold.
    pub fn no_task_for_event(id: impl Display) -> ForgeError {
        ForgeError::InvalidRequest {
            reason: format!("no task {id} in the queue to store an event for"),
        }
    }

    /// A record (a delivery, an approval) for a task the queue does not hold.
    pub fn no_such_task(id: impl Display) -> ForgeError {
        ForgeError::InvalidRequest {
            reason: format!("no task with id {id} in the queue"),
        }
    }
}

/// The state a worker's `task run` exit code stands for (see `TASK_EXIT_CODES`): 0 and 10
/// (held for approval) ran to a report; 130 was a cancel; anything else failed.
pub fn state_of_exit(code: Option<i32>, cancel_requested: bool) -> QueueState {
    match code {
        _ if cancel_requested => QueueState::Cancelled,
        Some(0 | 10) => QueueState::Succeeded,
        Some(130) => QueueState::Cancelled,
        _ => QueueState::Failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_through_their_names() {
        for state in QueueState::ALL {
            assert_eq!(QueueState::parse(state.as_str()), Some(state));
            let json = serde_json::to_string(&state).unwrap_or_default();
            assert_eq!(json, format!("\"{state}\""));
        }
        for look_alike in ["Queued", "queue", "", "done", "running "] {
            assert_eq!(QueueState::parse(look_alike), None, "{look_alike:?}");
        }
    }

    #[test]
    fn only_queued_and_running_are_open() {
        let open: Vec<_> = QueueState::ALL
            .into_iter()
            .filter(|s| !s.is_final())
            .collect();
        assert_eq!(open, [QueueState::Queued, QueueState::Running]);
    }

    #[test]
    fn pushed_deliveries_are_read_from_reports() {
        let check = |report: serde_json::Value, expected: Option<(&str, &str)>| {
            let expected = expected.map(|(b, c)| (b.to_owned(), c.to_owned()));
            assert_eq!(pushed_delivery(&report), expected, "{report}");
        };
        let pushed = serde_json::json!({"delivery": {"branch": "forge/q-1", "commit": "abc", "pushed": true}});
        check(pushed, Some(("forge/q-1", "abc")));
        // Look-alikes: committed but not pushed, no commit, no delivery, pushed as text.
        check(
            serde_json::json!({"delivery": {"branch": "forge/q-1", "commit": "abc", "pushed": false}}),
            None,
        );
        check(
            serde_json::json!({"delivery": {"branch": "forge/q-1", "commit": null, "pushed": true}}),
            None,
        );
        check(serde_json::json!({"delivery": null}), None);
        check(
            serde_json::json!({"delivery": {"branch": "b", "commit": "c", "pushed": "true"}}),
            None,
        );
    }

    #[test]
    fn lost_leases_are_worded_once() {
        assert_eq!(
            dead_error(2, Some("w2")),
            "lease lost 2 time(s), last held by w2; max_attempts reached"
        );
        assert_eq!(
            dead_error(1, None),
            "lease lost 1 time(s), last held by no worker; max_attempts reached"
        );
        assert_eq!(taken_over_error(Some("w1")), "lease of w1 ran out");
        assert_eq!(taken_over_error(None), "lease of  ran out");
        // Look-alikes: a value holding `%s` is not filled again; missing values are empty.
        assert_eq!(fill("a %s b %s", &["%s"]), "a %s b ");
        assert_eq!(fill("no placeholder", &["x"]), "no placeholder");
    }

    #[test]
    fn lost_tasks_end_dead_unless_cancelled() {
        let check = |cancel: bool, expected: (QueueState, Option<String>)| {
            assert_eq!(lost_task_end(3, Some("w"), cancel), expected, "{cancel}");
        };
        check(true, (QueueState::Cancelled, None));
        check(false, (QueueState::Dead, Some(dead_error(3, Some("w")))));
    }

    #[test]
    fn renewals_say_what_the_heartbeat_learned() {
        let check = |renewed: Option<bool>, expected: Heartbeat| {
            assert_eq!(Heartbeat::of_renewal(renewed), expected, "{renewed:?}");
        };
        check(None, Heartbeat::Lost);
        check(Some(true), Heartbeat::CancelRequested);
        check(Some(false), Heartbeat::Held);
    }

    #[test]
    fn only_final_states_finish_a_task() {
        for state in QueueState::ALL {
            let finish = Finish {
                state,
                exit_code: None,
                error: None,
                report: None,
            };
            assert_eq!(finish.check().is_ok(), state.is_final(), "{state}");
        }
    }

    #[test]
    fn exit_codes_map_to_states() {
        let check = |code: Option<i32>, cancel: bool, expected: QueueState| {
            assert_eq!(state_of_exit(code, cancel), expected, "{code:?} {cancel}");
        };
        check(Some(0), false, QueueState::Succeeded);
        check(Some(10), false, QueueState::Succeeded);
        check(Some(130), false, QueueState::Cancelled);
        check(Some(0), true, QueueState::Cancelled);
        check(None, true, QueueState::Cancelled);
        check(Some(1), false, QueueState::Failed);
        check(Some(2), false, QueueState::Failed);
        check(Some(5), false, QueueState::Failed);
        check(Some(124), false, QueueState::Failed);
        check(None, false, QueueState::Failed);
    }
}
