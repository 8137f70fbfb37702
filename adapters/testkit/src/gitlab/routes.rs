//! The fake's answers, route by route (a request reaching here is already one of the
//! documented routes with its required parameters): what GitLab does and says, status
//! codes included — 201 for what is created, 404 `{"message":"404 Not found"}` for what is
//! not there, 409 for a second open merge request of a branch.

use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::fake::answer;
use super::state::{FakeDiscussion, FakeMergeRequest, FakeNote, GitlabState, is_draft_title};

fn not_found(what: &str) -> Response {
    answer(404, json!({"message": format!("404 {what} Not Found")}))
}

fn param<'p>(params: &'p [(String, String)], name: &str) -> Option<&'p str> {
    params
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// One page of `items` as `page` and `per_page` ask (GitLab: 20 by default, 100 at most),
/// with GitLab's pagination headers.
fn paged(items: Vec<Value>, params: &[(String, String)]) -> Response {
    let per_page = param(params, "per_page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(20usize)
        .clamp(1, 100);
    let page = param(params, "page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1usize)
        .max(1);
    let total = items.len();
    let pages = total.div_ceil(per_page).max(1);
    let list: Vec<Value> = items
        .into_iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .collect();
    let mut response = answer(200, Value::Array(list));
    let headers = response.headers_mut();
    let next = if page < pages {
        (page + 1).to_string()
    } else {
        String::new()
    };
    for (name, value) in [
        ("x-page", page.to_string()),
        ("x-per-page", per_page.to_string()),
        ("x-total", total.to_string()),
        ("x-total-pages", pages.to_string()),
        ("x-next-page", next),
    ] {
        if let Ok(value) = axum::http::HeaderValue::try_from(value) {
            headers.insert(name, value);
        }
    }
    response
}

/// Answers `route` (its documented path) with its variables `vars` (decoded) and
/// `params`.
pub(super) fn serve(
    state: &mut GitlabState,
    method: &str,
    route: &str,
    vars: &[String],
    params: &[(String, String)],
) -> Response {
    if route == "users" {
        let wanted = param(params, "username");
        let users: Vec<Value> = state
            .users
            .iter()
            .filter(|u| wanted.is_none_or(|w| u.username.eq_ignore_ascii_case(w)))
            .map(|u| state.user_json(&u.username))
            .collect();
        return paged(users, params);
    }
    let Some(project) = vars.first().and_then(|p| state.project(p)).cloned() else {
        return not_found("Project");
    };
    let number = |i: usize| vars.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    let rest = route.strip_prefix("projects/:id/").unwrap_or_default();
    match rest {
        "merge_requests" if method == "GET" => list_merge_requests(state, project.id, params),
        "merge_requests" => create_merge_request(state, project.id, params),
        "members/all/:user_id" => {
            let user = number(1);
            match (
                state.members.get(&(project.id, user)),
                state.users.iter().find(|u| u.id == user),
            ) {
                (Some(level), Some(u)) => {
                    let mut member = state.user_json(&u.username);
                    member["access_level"] = json!(level);
                    member["created_at"] = json!(super::state::TIME);
                    member["expires_at"] = Value::Null;
                    answer(200, member)
                }
                _ => answer(404, json!({"message": "404 Not found"})),
            }
        }
        "pipelines/:pipeline_id" | "pipelines/:pipeline_id/jobs" => {
            let Some(p) = state
                .pipelines
                .iter()
                .find(|p| p.project_id == project.id && p.id == number(1))
            else {
                return answer(404, json!({"message": "404 Not found"}));
            };
            if rest == "pipelines/:pipeline_id" {
                return answer(200, state.pipeline_json(p));
            }
            let scopes: Vec<&str> = params
                .iter()
                .filter(|(k, _)| k == "scope")
                .map(|(_, v)| v.as_str())
                .collect();
            let jobs = p
                .jobs
                .iter()
                .filter(|j| scopes.is_empty() || scopes.contains(&j.status.as_str()))
                .map(|j| state.job_json(p, j))
                .collect();
            paged(jobs, params)
        }
        "jobs/:job_id/trace" => state
            .pipelines
            .iter()
            .filter(|p| p.project_id == project.id)
            .flat_map(|p| &p.jobs)
            .find(|j| j.id == number(1))
            .map_or_else(
                || answer(404, json!({"message": "404 Not found"})),
                |j| {
                    (
                        [("content-type", "text/plain; charset=utf-8")],
                        j.trace.clone(),
                    )
                        .into_response()
                },
            ),
        _ => merge_request_routes(state, project.id, (method, rest), vars, params),
    }
}

fn list_merge_requests(state: &GitlabState, project: u64, params: &[(String, String)]) -> Response {
    let wanted_state = param(params, "state").unwrap_or("all");
    let mut found: Vec<&FakeMergeRequest> = state
        .merge_requests
        .iter()
        .filter(|m| m.project_id == project)
        .filter(|m| wanted_state == "all" || m.state == wanted_state)
        .filter(|m| param(params, "source_branch").is_none_or(|b| m.source_branch == b))
        .filter(|m| param(params, "target_branch").is_none_or(|b| m.target_branch == b))
        .collect();
    // GitLab's default order: newest first.
    found.sort_by_key(|m| std::cmp::Reverse(m.id));
    let list = found.iter().map(|m| state.merge_request_json(m)).collect();
    paged(list, params)
}

fn create_merge_request(
    state: &mut GitlabState,
    project: u64,
    params: &[(String, String)],
) -> Response {
    let text = |k: &str| param(params, k).unwrap_or_default().to_owned();
    let (source, target) = (text("source_branch"), text("target_branch"));
    if source == target {
        return answer(
            422,
            json!({"message": ["You can't use same project/branch for source and target"]}),
        );
    }
    if let Some(open) = state.merge_requests.iter().find(|m| {
        m.project_id == project
            && m.source_branch == source
            && m.target_branch == target
            && m.state == "opened"
    }) {
        return answer(
            409,
            json!({"message": [format!(
                "Another open merge request already exists for this source branch: !{}",
                open.iid
            )]}),
        );
    }
    let iid = state
        .merge_requests
        .iter()
        .filter(|m| m.project_id == project)
        .map(|m| m.iid)
        .max()
        .unwrap_or(0)
        + 1;
    let mr = FakeMergeRequest {
        id: state.id(),
        iid,
        project_id: project,
        title: text("title"),
        description: text("description"),
        source_branch: source,
        target_branch: target,
        state: "opened".to_owned(),
        author: state.bot.clone(),
    };
    let json = state.merge_request_json(&mr);
    state.merge_requests.push(mr);
    answer(201, json)
}

fn merge_request_routes(
    state: &mut GitlabState,
    project: u64,
    (method, rest): (&str, &str),
    vars: &[String],
    params: &[(String, String)],
) -> Response {
    let iid = vars.get(1).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    let Some(index) = state
        .merge_requests
        .iter()
        .position(|m| m.project_id == project && m.iid == iid)
    else {
        return answer(404, json!({"message": "404 Not found"}));
    };
    let discussion = vars.get(2).cloned().unwrap_or_default();
    match (method, rest) {
        ("GET", "merge_requests/:merge_request_iid") => {
            answer(200, state.merge_request_json(&state.merge_requests[index]))
        }
        (_, "merge_requests/:merge_request_iid") => update_merge_request(state, index, params),
        (_, "merge_requests/:merge_request_iid/notes") => match (method, param(params, "body")) {
            // A note on its own is a discussion of one.
            ("POST", Some(body)) => {
                if body.trim().is_empty() {
                    return answer(
                        400,
                        json!({"message": "400 Bad request - Note {:note=>[\"can't be blank\"]}"}),
                    );
                }
                let (id, _) = state.add_discussion_by_bot(project, iid, body);
                note_answer(state, &id)
            }
            _ => {
                let notes = state
                    .discussions
                    .iter()
                    .filter(|d| d.project_id == project && d.iid == iid)
                    .flat_map(|d| d.notes.iter().map(move |n| (d, n)))
                    .map(|(d, n)| state.note_json(d, n))
                    .collect();
                paged(notes, params)
            }
        },
        (_, "merge_requests/:merge_request_iid/discussions") => {
            let list = state
                .discussions
                .iter()
                .filter(|d| d.project_id == project && d.iid == iid)
                .map(|d| state.discussion_json(d))
                .collect();
            paged(list, params)
        }
        (_, "merge_requests/:merge_request_iid/discussions/:discussion_id") => state
            .discussions
            .iter()
            .find(|d| d.project_id == project && d.iid == iid && d.id == discussion)
            .map_or_else(
                || answer(404, json!({"message": "404 Not found"})),
                |d| answer(200, state.discussion_json(d)),
            ),
        (_, "merge_requests/:merge_request_iid/discussions/:discussion_id/notes") => {
            let body = param(params, "body").unwrap_or_default().to_owned();
            let id = state.id();
            let bot = state.bot.clone();
            let Some(d) = state
                .discussions
                .iter_mut()
                .find(|d| d.project_id == project && d.iid == iid && d.id == discussion)
            else {
                return answer(404, json!({"message": "404 Not found"}));
            };
            // A reply to a note on its own turns it into a thread.
            d.individual_note = false;
            d.notes.push(FakeNote {
                id,
                author: bot,
                body,
                system: false,
                position: None,
            });
            note_answer(state, &discussion)
        }
        (_, "merge_requests/:merge_request_iid/approvals") => {
            let mr = &state.merge_requests[index];
            let by: Vec<Value> = state
                .approvals
                .get(&(project, iid))
                .into_iter()
                .flatten()
                .map(|u| json!({"user": state.user_json(u)}))
                .collect();
            answer(
                200,
                json!({
                    "id": mr.id, "iid": mr.iid, "project_id": mr.project_id,
                    "title": mr.title, "description": mr.description, "state": mr.state,
                    "created_at": super::state::TIME, "updated_at": super::state::TIME,
                    "merge_status": "can_be_merged",
                    "approved": !by.is_empty(), "approvals_required": 0, "approvals_left": 0,
                    "require_password_to_approve": false, "approved_by": by,
                    "suggested_approvers": [], "approvers": [], "approver_groups": [],
                    "user_has_approved": false, "user_can_approve": true,
                    "approval_rules_left": [], "has_approval_rules": false,
                    "merge_request_approvers_available": false,
                    "multiple_approval_rules_available": false, "invalid_approvers_rules": [],
                }),
            )
        }
        (_, other) => answer(
            500,
            json!({"message": format!("the fake does not play {other}")}),
        ),
    }
}

/// `PUT`: the title (a draft by its prefix, noted by GitLab as a system note when that
/// changes), the description, `state_event`.
fn update_merge_request(
    state: &mut GitlabState,
    index: usize,
    params: &[(String, String)],
) -> Response {
    let was_draft = state.merge_requests[index].draft();
    let mr = &mut state.merge_requests[index];
    if let Some(title) = param(params, "title") {
        if title.trim().is_empty() {
            return answer(400, json!({"message": {"title": ["can't be blank"]}}));
        }
        title.clone_into(&mut mr.title);
    }
    if let Some(description) = param(params, "description") {
        description.clone_into(&mut mr.description);
    }
    match param(params, "state_event") {
        Some("close") => "closed".clone_into(&mut mr.state),
        Some("reopen") => "opened".clone_into(&mut mr.state),
        _ => {}
    }
    let (project, iid, now_draft) = (mr.project_id, mr.iid, is_draft_title(&mr.title));
    if now_draft != was_draft {
        let word = if now_draft { "draft" } else { "ready" };
        state.add_system_note(
            project,
            iid,
            &format!("marked this merge request as **{word}**"),
        );
    }
    answer(200, state.merge_request_json(&state.merge_requests[index]))
}

/// 201 with the last note of discussion `id`.
fn note_answer(state: &GitlabState, id: &str) -> Response {
    let Some((d, n)) = state
        .discussions
        .iter()
        .find(|d| d.id == id)
        .and_then(|d| d.notes.last().map(|n| (d, n)))
    else {
        return answer(500, json!({"message": "the fake lost a note"}));
    };
    answer(201, state.note_json(d, n))
}

impl GitlabState {
    fn add_discussion_by_bot(&mut self, project: u64, iid: u64, body: &str) -> (String, u64) {
        let id = self.id();
        let discussion = format!("{:040x}", 0xd15c_0000_u64 + id);
        self.discussions.push(FakeDiscussion {
            id: discussion.clone(),
            project_id: project,
            iid,
            individual_note: true,
            notes: vec![FakeNote {
                id,
                author: self.bot.clone(),
                body: body.to_owned(),
                system: false,
                position: None,
            }],
        });
        (discussion, id)
    }

    fn add_system_note(&mut self, project: u64, iid: u64, body: &str) {
        let (discussion, _) = self.add_discussion_by_bot(project, iid, body);
        if let Some(note) = self
            .discussions
            .iter_mut()
            .find(|d| d.id == discussion)
            .and_then(|d| d.notes.last_mut())
        {
            note.system = true;
        }
    }
}
