//! The part of GitLab's documented v4 API the fake plays, as data: each route's method,
//! path and parameters (required, optional, the values an enumerated one takes), from
//! docs.gitlab.com/api (merge_requests, notes, discussions, merge_request_approvals,
//! users, members, pipelines, jobs). A request is held to it as GitLab holds it: no such
//! route → 404 `{"error":"404 Not Found"}`; a required parameter missing → 400
//! `{"error":"title is missing"}`; a value outside its set → 400 `{"error":"state does not
//! have a valid value"}`. GitLab silently ignores a parameter it does not know — so would
//! forge's intent be lost — so the fake answers as GitLab does but records it as a
//! violation, and a test fails on it.

/// One documented route.
#[derive(Debug)]
pub struct Route {
    pub method: &'static str,
    /// Below `/api/v4`, segments starting with `:` are variables.
    pub path: &'static str,
    pub required: &'static [&'static str],
    pub optional: &'static [&'static str],
    /// At least one of `optional` must be given (GitLab's `at_least_one_of`).
    pub at_least_one: bool,
    /// `(parameter, allowed values)`.
    pub values: &'static [(&'static str, &'static [&'static str])],
    /// A list: `page` and `per_page` too.
    pub paged: bool,
}

const MR_STATES: &[&str] = &["opened", "closed", "locked", "merged", "all"];
const JOB_SCOPES: &[&str] = &[
    "created",
    "pending",
    "running",
    "failed",
    "success",
    "canceled",
    "skipped",
    "waiting_for_resource",
    "manual",
];

const fn route(method: &'static str, path: &'static str) -> Route {
    Route {
        method,
        path,
        required: &[],
        optional: &[],
        at_least_one: false,
        values: &[],
        paged: false,
    }
}

/// Every route the fake plays.
pub const ROUTES: &[Route] = &[
    Route {
        optional: &[
            "state",
            "source_branch",
            "target_branch",
            "order_by",
            "sort",
            "scope",
            "view",
            "labels",
            "with_labels_details",
            "with_merge_status_recheck",
            "created_after",
            "created_before",
            "updated_after",
            "updated_before",
            "author_id",
            "author_username",
            "assignee_id",
            "reviewer_id",
            "reviewer_username",
            "search",
            "in",
            "wip",
            "draft",
            "iids",
            "not",
            "milestone",
            "my_reaction_emoji",
            "environment",
            "approved",
            "merge_user_id",
            "merge_user_username",
            "source_project_id",
        ],
        values: &[
            ("state", MR_STATES),
            ("sort", &["asc", "desc"]),
            ("wip", &["yes", "no"]),
        ],
        paged: true,
        ..route("GET", "projects/:id/merge_requests")
    },
    Route {
        required: &["source_branch", "target_branch", "title"],
        optional: &[
            "allow_collaboration",
            "allow_maintainer_to_push",
            "approvals_before_merge",
            "assignee_id",
            "assignee_ids",
            "description",
            "labels",
            "merge_after",
            "milestone_id",
            "remove_source_branch",
            "reviewer_ids",
            "squash",
            "target_project_id",
        ],
        ..route("POST", "projects/:id/merge_requests")
    },
    Route {
        optional: &[
            "render_html",
            "include_diverged_commits_count",
            "include_rebase_in_progress",
        ],
        ..route("GET", "projects/:id/merge_requests/:merge_request_iid")
    },
    Route {
        optional: &[
            "add_labels",
            "allow_collaboration",
            "allow_maintainer_to_push",
            "assignee_id",
            "assignee_ids",
            "description",
            "discussion_locked",
            "labels",
            "merge_after",
            "milestone_id",
            "remove_labels",
            "remove_source_branch",
            "reviewer_ids",
            "squash",
            "state_event",
            "target_branch",
            "title",
        ],
        at_least_one: true,
        values: &[("state_event", &["close", "reopen"])],
        ..route("PUT", "projects/:id/merge_requests/:merge_request_iid")
    },
    Route {
        optional: &["sort", "order_by"],
        values: &[
            ("sort", &["asc", "desc"]),
            ("order_by", &["created_at", "updated_at"]),
        ],
        paged: true,
        ..route(
            "GET",
            "projects/:id/merge_requests/:merge_request_iid/notes",
        )
    },
    Route {
        required: &["body"],
        optional: &["created_at", "internal", "merge_request_diff_head_sha"],
        ..route(
            "POST",
            "projects/:id/merge_requests/:merge_request_iid/notes",
        )
    },
    Route {
        paged: true,
        ..route(
            "GET",
            "projects/:id/merge_requests/:merge_request_iid/discussions",
        )
    },
    route(
        "GET",
        "projects/:id/merge_requests/:merge_request_iid/discussions/:discussion_id",
    ),
    Route {
        required: &["body"],
        optional: &["created_at"],
        ..route(
            "POST",
            "projects/:id/merge_requests/:merge_request_iid/discussions/:discussion_id/notes",
        )
    },
    route(
        "GET",
        "projects/:id/merge_requests/:merge_request_iid/approvals",
    ),
    Route {
        optional: &[
            "username",
            "search",
            "active",
            "blocked",
            "external",
            "exclude_external",
            "exclude_internal",
            "created_after",
            "created_before",
            "order_by",
            "sort",
            "two_factor",
            "without_projects",
            "admins",
            "humans",
            "extern_uid",
            "provider",
        ],
        paged: true,
        ..route("GET", "users")
    },
    route("GET", "projects/:id/members/all/:user_id"),
    route("GET", "projects/:id/pipelines/:pipeline_id"),
    Route {
        optional: &["scope", "include_retried"],
        values: &[("scope", JOB_SCOPES)],
        paged: true,
        ..route("GET", "projects/:id/pipelines/:pipeline_id/jobs")
    },
    route("GET", "projects/:id/jobs/:job_id/trace"),
];

/// The route `method path` is, with its variables' values (still escaped), or `None`.
pub fn find<'p>(method: &str, path: &'p str) -> Option<(&'static Route, Vec<&'p str>)> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    ROUTES.iter().find_map(|r| {
        if r.method != method {
            return None;
        }
        let pattern: Vec<&str> = r.path.split('/').collect();
        if pattern.len() != segments.len() {
            return None;
        }
        let mut vars = Vec::new();
        for (p, s) in pattern.iter().zip(&segments) {
            if p.starts_with(':') {
                if s.is_empty() {
                    return None;
                }
                vars.push(*s);
            } else if p != s {
                return None;
            }
        }
        Some((r, vars))
    })
}

/// How a request breaks `route`'s contract: the status GitLab answers, its body's
/// message, and a violation for each undocumented parameter (answered as GitLab does —
/// ignored — but a mistake of forge's).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Checked {
    pub refusal: Option<String>,
    pub unknown: Vec<String>,
}

/// Holds `params` (query and body together, `key[]` as `key`) to `route`.
pub fn check(route: &Route, params: &[(String, String)]) -> Checked {
    let has = |name: &str| params.iter().any(|(k, _)| k == name);
    let mut checked = Checked::default();
    let missing: Vec<String> = route
        .required
        .iter()
        .filter(|r| !has(r))
        .map(|r| format!("{r} is missing"))
        .collect();
    if !missing.is_empty() {
        checked.refusal = Some(missing.join(", "));
    } else if route.at_least_one && !route.optional.iter().any(|o| has(o)) {
        checked.refusal = Some(format!(
            "{} are missing, at least one parameter must be provided",
            route.optional.join(", ")
        ));
    } else if let Some((name, _)) = route.values.iter().find(|(name, allowed)| {
        params
            .iter()
            .any(|(k, v)| k == name && !allowed.contains(&v.as_str()))
    }) {
        checked.refusal = Some(format!("{name} does not have a valid value"));
    }
    for (k, _) in params {
        let known = route.required.contains(&k.as_str())
            || route.optional.contains(&k.as_str())
            || (route.paged && matches!(k.as_str(), "page" | "per_page"));
        if !known && !checked.unknown.contains(k) {
            checked.unknown.push(k.clone());
        }
    }
    checked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn routes_are_found_by_method_and_shape() {
        let (r, vars) = find("GET", "projects/g%2Fp/merge_requests/3/discussions/abc").unwrap();
        assert_eq!(
            r.path,
            "projects/:id/merge_requests/:merge_request_iid/discussions/:discussion_id"
        );
        assert_eq!(vars, ["g%2Fp", "3", "abc"]);
        assert!(find("DELETE", "projects/1/merge_requests/3").is_none());
        assert!(find("GET", "projects/1/merge_requests/3/draft").is_none());
        assert!(find("GET", "projects/g/p/merge_requests").is_none());
        assert!(
            find(
                "POST",
                "projects/1/merge_requests/3/discussions/abc/replies"
            )
            .is_none()
        );
    }

    #[test]
    fn required_enumerated_and_unknown_parameters() {
        let create = find("POST", "projects/1/merge_requests").unwrap().0;
        let got = check(
            create,
            &params(&[("source_branch", "a"), ("description", "d")]),
        );
        assert_eq!(
            got.refusal.as_deref(),
            Some("target_branch is missing, title is missing")
        );
        let got = check(
            create,
            &params(&[
                ("source_branch", "a"),
                ("target_branch", "b"),
                ("title", "t"),
                ("draft", "true"),
            ]),
        );
        assert_eq!(
            got,
            Checked {
                refusal: None,
                unknown: vec!["draft".into()]
            }
        );
        let update = find("PUT", "projects/1/merge_requests/1").unwrap().0;
        assert!(
            check(update, &[])
                .refusal
                .unwrap()
                .ends_with("at least one parameter must be provided")
        );
        let list = find("GET", "projects/1/merge_requests").unwrap().0;
        assert_eq!(
            check(list, &params(&[("state", "open"), ("page", "2")]))
                .refusal
                .as_deref(),
            Some("state does not have a valid value")
        );
        assert_eq!(
            check(list, &params(&[("state", "opened"), ("per_page", "100")])),
            Checked::default()
        );
        let jobs = find("GET", "projects/1/pipelines/2/jobs").unwrap().0;
        assert_eq!(
            check(jobs, &params(&[("scope", "failed")])),
            Checked::default()
        );
        assert!(
            check(jobs, &params(&[("scope", "failure")]))
                .refusal
                .is_some()
        );
    }
}
