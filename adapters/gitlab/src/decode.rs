//! GitLab's answers read into forge's values: only the fields forge uses, each one's absence
//! an error that names it.

use forge_domain::ForgeError;
use forge_domain::forges::{PullRequestInfo, PullRequestState, ThreadComment};
use serde_json::Value;

fn missing(what: &str, field: &str) -> ForgeError {
    ForgeError::Io {
        context: format!("gitlab: reading {what}"),
        message: format!("the answer has no {field}"),
    }
}

pub(crate) fn u64_field(v: &Value, what: &str, field: &str) -> Result<u64, ForgeError> {
    v.get(field)
        .and_then(Value::as_u64)
        .ok_or_else(|| missing(what, field))
}

pub(crate) fn str_field<'v>(v: &'v Value, what: &str, field: &str) -> Result<&'v str, ForgeError> {
    v.get(field)
        .and_then(Value::as_str)
        .ok_or_else(|| missing(what, field))
}

/// A merge request: its `iid` is the number, `draft` (GitLab < 14: `work_in_progress`) the
/// draft flag; `locked` (closing in progress) counts as closed.
pub(crate) fn merge_request(v: &Value) -> Result<PullRequestInfo, ForgeError> {
    let what = "a merge request";
    let state = match str_field(v, what, "state")? {
        "opened" => PullRequestState::Open,
        "merged" => PullRequestState::Merged,
        _ => PullRequestState::Closed,
    };
    let flag = |key: &str| v.get(key).and_then(Value::as_bool);
    Ok(PullRequestInfo {
        url: str_field(v, what, "web_url")?.to_owned(),
        number: u64_field(v, what, "iid")?,
        state,
        draft: flag("draft").or_else(|| flag("work_in_progress")) == Some(true),
    })
}

/// A note as one entry of a thread.
pub(crate) fn note(v: &Value) -> Result<ThreadComment, ForgeError> {
    Ok(ThreadComment {
        id: u64_field(v, "a note", "id")?,
        author: v
            .pointer("/author/username")
            .and_then(Value::as_str)
            .unwrap_or("ghost")
            .to_owned(),
        body: v
            .get("body")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
    })
}

/// A note that a person wrote (GitLab's own "changed the title" notes are `system`).
pub(crate) fn is_person_note(v: &Value) -> bool {
    v.get("system").and_then(Value::as_bool) != Some(true)
}

/// A discussion's notes.
pub(crate) fn notes(discussion: &Value) -> &[Value] {
    discussion
        .get("notes")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Whether `discussion` holds note `id`.
pub(crate) fn holds_note(discussion: &Value, id: u64) -> bool {
    notes(discussion)
        .iter()
        .any(|n| n.get("id").and_then(Value::as_u64) == Some(id))
}

/// The thread of note `id` among a merge request's discussions: a started thread's notes,
/// or — for a note on its own (`individual_note`, the merge request's conversation) —
/// every such note, as GitHub's conversation is a pull request comment's thread. Notes a
/// person wrote only, oldest first; `None` when no discussion holds `id`.
pub(crate) fn thread_of(discussions: &[Value], id: u64) -> Option<Vec<&Value>> {
    let found = discussions.iter().find(|d| holds_note(d, id))?;
    let individual = |d: &Value| d.get("individual_note").and_then(Value::as_bool) == Some(true);
    let mut thread: Vec<&Value> = if individual(found) {
        discussions
            .iter()
            .filter(|d| individual(d))
            .flat_map(notes)
            .collect()
    } else {
        notes(found).iter().collect()
    };
    thread.retain(|n| is_person_note(n));
    thread.sort_by_key(|n| n.get("id").and_then(Value::as_u64));
    Some(thread)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn merge_requests_in_every_state() {
        let mr = |state: &str, draft: Value| {
            json!({"iid": 7, "web_url": "https://gl/x/-/merge_requests/7", "state": state,
                   "draft": draft})
        };
        let info = merge_request(&mr("opened", json!(true))).unwrap();
        assert_eq!(
            (info.number, info.state, info.draft),
            (7, PullRequestState::Open, true)
        );
        assert_eq!(
            merge_request(&mr("merged", json!(false))).unwrap().state,
            PullRequestState::Merged
        );
        for closed in ["closed", "locked"] {
            assert_eq!(
                merge_request(&mr(closed, json!(false))).unwrap().state,
                PullRequestState::Closed
            );
        }
        // An older GitLab: `work_in_progress` only.
        let old = json!({"iid": 1, "web_url": "u", "state": "opened", "work_in_progress": true});
        assert!(merge_request(&old).unwrap().draft);
        let err = merge_request(&json!({"iid": 1, "state": "opened"})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "gitlab: reading a merge request: the answer has no web_url"
        );
    }

    #[test]
    fn a_thread_or_the_conversation() {
        let n = |id: u64, who: &str, system: bool| json!({"id": id, "body": format!("n{id}"), "author": {"username": who}, "system": system});
        let discussions = vec![
            json!({"id": "a", "individual_note": true, "notes": [n(1, "ann", false)]}),
            json!({"id": "b", "individual_note": false, "notes": [n(2, "bob", false), n(5, "forge", false)]}),
            json!({"id": "c", "individual_note": true, "notes": [n(3, "gitlab", true)]}),
            json!({"id": "d", "individual_note": true, "notes": [n(4, "cy", false)]}),
        ];
        let ids = |id| {
            thread_of(&discussions, id)
                .map(|t| t.iter().map(|v| note(v).unwrap().id).collect::<Vec<_>>())
        };
        assert_eq!(ids(5), Some(vec![2, 5]));
        assert_eq!(ids(2), Some(vec![2, 5]));
        // The conversation, without GitLab's system notes.
        assert_eq!(ids(4), Some(vec![1, 4]));
        assert_eq!(ids(9), None);
        assert_eq!(
            note(&n(1, "ann", false)).unwrap(),
            ThreadComment {
                id: 1,
                author: "ann".into(),
                body: "n1".into()
            }
        );
    }
}
