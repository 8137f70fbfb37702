//! The fake GitHub's repository-wide lists, which `forge poll` reads: issue comments and
//! review comments `since` a time (`sort=updated&direction=asc`), issue events (labels put
//! on), a pull request's reviews, a commit's check runs. Times are the fake's clock
//! ([`stamp`]): an object's time follows from its id.

use serde_json::{Value, json};

use super::fake::{paged, query_value};
use super::state::{
    GithubState, check_run_json, comment_json, review_comment_json, review_json, stamp,
};

/// The answer to `GET /repos/{owner}/{repo}/<rest>` when it is one of the lists; `None`
/// for any other path.
pub(super) fn list(state: &GithubState, repo: &str, rest: &[&str], query: &str) -> Option<Value> {
    let since = query_value(query, "since");
    let new = |id: u64| since.as_deref().is_none_or(|s| stamp(id).as_str() >= s);
    let api = format!("https://api.github.com/repos/{repo}");
    Some(match rest {
        ["issues", "comments"] => {
            let items = state
                .comments
                .iter()
                .filter(|c| c.repo == repo && new(c.id))
                .map(|c| {
                    let kind = if state
                        .pulls
                        .iter()
                        .any(|p| p.repo == repo && p.number == c.number)
                    {
                        "pull"
                    } else {
                        "issues"
                    };
                    let mut json = comment_json(c);
                    extend(
                        &mut json,
                        &[
                            ("issue_url", json!(format!("{api}/issues/{}", c.number))),
                            (
                                "html_url",
                                json!(format!(
                                    "https://github.com/{repo}/{kind}/{}#issuecomment-{}",
                                    c.number, c.id
                                )),
                            ),
                            ("created_at", json!(stamp(c.id))),
                            ("updated_at", json!(stamp(c.id))),
                        ],
                    );
                    json
                })
                .collect();
            paged(items, query)
        }
        ["pulls", "comments"] => {
            let items = state
                .review_comments
                .iter()
                .filter(|c| c.repo == repo && new(c.id))
                .map(|c| {
                    let mut json = review_comment_json(c);
                    extend(
                        &mut json,
                        &[
                            (
                                "pull_request_url",
                                json!(format!("{api}/pulls/{}", c.number)),
                            ),
                            ("created_at", json!(stamp(c.id))),
                            ("updated_at", json!(stamp(c.id))),
                        ],
                    );
                    json
                })
                .collect();
            paged(items, query)
        }
        ["issues", "events"] => {
            // Newest first, as GitHub lists them.
            let items = state
                .labels
                .iter()
                .rev()
                .filter(|l| l.repo == repo)
                .map(|l| {
                    json!({
                        "id": l.id,
                        "event": "labeled",
                        "actor": {"login": l.actor},
                        "label": {"name": l.label, "color": "ededed"},
                        "created_at": stamp(l.id),
                        "issue": {"number": l.issue, "title": l.title, "body": l.body,
                                  "state": "open"},
                    })
                })
                .collect();
            paged(items, query)
        }
        ["pulls", n, "reviews"] => {
            let n = n.parse::<u64>().unwrap_or(0);
            let items = state
                .reviews
                .iter()
                .filter(|r| r.repo == repo && r.number == n)
                .map(|r| {
                    let mut json = review_json(r);
                    extend(&mut json, &[("submitted_at", json!(stamp(r.id)))]);
                    json
                })
                .collect();
            paged(items, query)
        }
        ["commits", sha, "check-runs"] => {
            let runs: Vec<Value> = state
                .check_runs
                .iter()
                .filter(|c| c.repo == repo && c.head_sha == *sha)
                .map(|c| {
                    let mut json = check_run_json(c);
                    extend(&mut json, &[("completed_at", json!(stamp(c.id)))]);
                    json
                })
                .collect();
            json!({"total_count": runs.len(), "check_runs": runs})
        }
        _ => return None,
    })
}

fn extend(json: &mut Value, fields: &[(&str, Value)]) {
    if let Some(map) = json.as_object_mut() {
        for (k, v) in fields {
            map.insert((*k).to_owned(), v.clone());
        }
    }
}
