//! The planner's answer: a JSON object `{next_task, done, reason}` (plus an optional
//! `research` query), found in the run's final text and checked.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannerAnswer {
    pub next_task: String,
    pub done: bool,
    pub reason: String,
    /// A question to research before executing, when the planner wants one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub research: Option<String>,
}

/// Why an answer was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlannerAnswerError {
    #[error("the planner's answer holds no JSON object")]
    NoJson,
    #[error("the planner's answer is not valid JSON: {0}")]
    BadJson(String),
    #[error("the planner's answer lacks `{0}`")]
    Missing(&'static str),
    #[error("the planner's answer has `{key}` of the wrong type (expected {expected})")]
    WrongType {
        key: &'static str,
        expected: &'static str,
    },
    #[error("the planner's answer has an empty `next_task` while not done")]
    EmptyTask,
}

/// Reads the answer from `text`: the whole text, else the inside of a fenced code block,
/// else the span from the first `{` to the last `}`.
///
/// # Errors
/// A [`PlannerAnswerError`] saying what is missing or wrong.
pub fn parse_planner_answer(text: &str) -> Result<PlannerAnswer, PlannerAnswerError> {
    let value = find_object(text)?;
    let Value::Object(map) = value else {
        return Err(PlannerAnswerError::NoJson);
    };
    let string = |key: &'static str| -> Result<String, PlannerAnswerError> {
        match map.get(key) {
            None | Some(Value::Null) => Err(PlannerAnswerError::Missing(key)),
            Some(Value::String(s)) => Ok(s.trim().to_owned()),
            Some(_) => Err(PlannerAnswerError::WrongType {
                key,
                expected: "a string",
            }),
        }
    };
    let done = match map.get("done") {
        None | Some(Value::Null) => return Err(PlannerAnswerError::Missing("done")),
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(PlannerAnswerError::WrongType {
                key: "done",
                expected: "true or false",
            });
        }
    };
    let next_task = match string("next_task") {
        Err(PlannerAnswerError::Missing(_)) if done => String::new(),
        other => other?,
    };
    if !done && next_task.is_empty() {
        return Err(PlannerAnswerError::EmptyTask);
    }
    let reason = string("reason")?;
    let research = match map.get("research") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => Some(s.trim().to_owned()),
        Some(_) => {
            return Err(PlannerAnswerError::WrongType {
                key: "research",
                expected: "a string",
            });
        }
    };
    Ok(PlannerAnswer {
        next_task,
        done,
        reason,
        research,
    })
}

fn find_object(text: &str) -> Result<Value, PlannerAnswerError> {
    let trimmed = text.trim();
    if let Ok(v @ Value::Object(_)) = serde_json::from_str(trimmed) {
        return Ok(v);
    }
    if let Some(inside) = fenced(trimmed) {
        if let Ok(v @ Value::Object(_)) = serde_json::from_str(inside.trim()) {
            return Ok(v);
        }
    }
    let (Some(start), Some(end)) = (trimmed.find('{'), trimmed.rfind('}')) else {
        return Err(PlannerAnswerError::NoJson);
    };
    if end < start {
        return Err(PlannerAnswerError::NoJson);
    }
    serde_json::from_str(&trimmed[start..=end])
        .map_err(|e| PlannerAnswerError::BadJson(e.to_string()))
}

/// The body of the first ``` fenced block (its info string, e.g. `json`, skipped).
fn fenced(text: &str) -> Option<&str> {
    let start = text.find("```")?;
    let after = &text[start + 3..];
    let body_start = after.find('\n')? + 1;
    let body = &after[body_start..];
    let end = body.find("```")?;
    Some(&body[..end])
}
