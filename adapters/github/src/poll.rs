//! `forge poll` on GitHub: the events a webhook would have carried, read back through
//! documented REST list operations — the repository's issue comments and pull request
//! review comments `since` the cursor, its issue events (labels put on), and per open pull
//! request of forge's its reviews and the check runs of its head commit (GitHub lists those
//! per pull request and per commit only). Everything is read before anything is returned: a
//! failure part-way leaves the caller's cursor where it was.

use forge_domain::ForgeError;
use forge_domain::forges::{
    CheckConclusion, ForgeEvent, PolledEvents, PolledPull, RepoRef, ReviewState, at_or_after,
    later_cursor,
};
use serde_json::Value;

use crate::decode;
use crate::forge::{GithubForge, repo_path};

/// The newest time among `fields` of `v`.
fn time<'v>(v: &'v Value, fields: &[&str]) -> Option<&'v str> {
    fields
        .iter()
        .filter_map(|f| v.get(*f).and_then(Value::as_str))
        .max()
}

/// The number at the end of an API URL (`…/issues/7`, `…/pulls/7`).
fn trailing_number(v: &Value, field: &str) -> Option<u64> {
    v.get(field)
        .and_then(Value::as_str)
        .and_then(|url| url.rsplit('/').next())
        .and_then(|n| n.parse().ok())
}

/// Events read so far and the newest time among them.
#[derive(Default)]
struct Read {
    events: Vec<ForgeEvent>,
    newest: Option<String>,
}

impl Read {
    fn saw(&mut self, time: Option<&str>) {
        self.newest = later_cursor(self.newest.take(), time);
    }
}

impl GithubForge {
    pub(crate) async fn poll(
        &self,
        repo: &RepoRef,
        pulls: &[PolledPull],
        cursor: Option<&str>,
    ) -> Result<PolledEvents, ForgeError> {
        let base = repo_path(repo);
        let since = cursor.map_or(String::new(), |c| format!("&since={c}"));
        let mut read = Read::default();
        let comments = self
            .list(&format!(
                "{base}/issues/comments?sort=updated&direction=asc{since}"
            ))
            .await?;
        for c in &comments {
            read.saw(time(c, &["created_at", "updated_at"]));
            if let Some(event) = conversation_comment(repo, c)? {
                read.events.push(event);
            }
        }
        let inline = self
            .list(&format!(
                "{base}/pulls/comments?sort=updated&direction=asc{since}"
            ))
            .await?;
        for c in &inline {
            read.saw(time(c, &["created_at", "updated_at"]));
            let Some(number) = trailing_number(c, "pull_request_url") else {
                continue;
            };
            read.events.push(ForgeEvent::ReviewComment {
                repo: repo.clone(),
                number,
                author: decode::login(c),
                comment: decode::review_comment(c)?,
            });
        }
        self.labels(repo, cursor, &mut read).await?;
        for pull in pulls {
            self.reviews(repo, pull.number, cursor, &mut read).await?;
            self.checks(repo, pull, cursor, &mut read).await?;
        }
        self.closed(repo, pulls, &mut read).await?;
        Ok(PolledEvents {
            events: read.events,
            cursor: read.newest,
        })
    }

    /// `GET /repos/{owner}/{repo}/issues/events`, newest first: the labels put on issues
    /// (not on pull requests) at or after the cursor.
    async fn labels(
        &self,
        repo: &RepoRef,
        cursor: Option<&str>,
        read: &mut Read,
    ) -> Result<(), ForgeError> {
        let events = self
            .list(&format!("{}/issues/events", repo_path(repo)))
            .await?;
        for e in events.iter().rev() {
            let at = e.get("created_at").and_then(Value::as_str);
            if !at_or_after(at, cursor) {
                continue;
            }
            read.saw(at);
            let issue = e.get("issue").cloned().unwrap_or_default();
            if e.get("event").and_then(Value::as_str) != Some("labeled")
                || issue.get("pull_request").is_some_and(|p| !p.is_null())
            {
                continue;
            }
            let Some(number) = issue.get("number").and_then(Value::as_u64) else {
                continue;
            };
            read.events.push(ForgeEvent::IssueLabelled {
                repo: repo.clone(),
                issue: number,
                label: e
                    .pointer("/label/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                author: e
                    .pointer("/actor/login")
                    .and_then(Value::as_str)
                    .unwrap_or("ghost")
                    .to_owned(),
                title: decode::text(&issue, "title"),
                body: decode::text(&issue, "body"),
            });
        }
        Ok(())
    }

    /// `GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews`: the submitted ones at or
    /// after the cursor (a pending review is its author's draft).
    async fn reviews(
        &self,
        repo: &RepoRef,
        number: u64,
        cursor: Option<&str>,
        read: &mut Read,
    ) -> Result<(), ForgeError> {
        let reviews = self
            .list(&format!("{}/pulls/{number}/reviews", repo_path(repo)))
            .await?;
        for r in &reviews {
            let at = r.get("submitted_at").and_then(Value::as_str);
            let state = r
                .get("state")
                .and_then(Value::as_str)
                .and_then(ReviewState::parse);
            let (Some(state), true) = (state, at_or_after(at, cursor)) else {
                continue;
            };
            read.saw(at);
            read.events.push(ForgeEvent::Review {
                repo: repo.clone(),
                number,
                review_id: decode::u64_field(r, "a review", "id")?,
                author: decode::login(r),
                state,
                body: decode::text(r, "body"),
            });
        }
        Ok(())
    }

    /// `GET /repos/{owner}/{repo}/commits/{ref}/check-runs` of the pull request's head:
    /// the completed ones at or after the cursor.
    async fn checks(
        &self,
        repo: &RepoRef,
        pull: &PolledPull,
        cursor: Option<&str>,
        read: &mut Read,
    ) -> Result<(), ForgeError> {
        if pull.head_sha.is_empty() {
            return Ok(());
        }
        let answer = self
            .get(&format!(
                "{}/commits/{}/check-runs?per_page=100",
                repo_path(repo),
                pull.head_sha
            ))
            .await?;
        let runs = answer
            .get("check_runs")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for run in &runs {
            let at = run.get("completed_at").and_then(Value::as_str);
            let conclusion = run
                .get("conclusion")
                .and_then(Value::as_str)
                .and_then(CheckConclusion::parse);
            let (Some(conclusion), true) = (conclusion, at_or_after(at, cursor)) else {
                continue;
            };
            read.saw(at);
            read.events.push(ForgeEvent::CheckCompleted {
                repo: repo.clone(),
                head_sha: pull.head_sha.clone(),
                check_id: decode::u64_field(run, "a check run", "id")?,
                name: decode::text(run, "name"),
                conclusion,
                pull_requests: vec![pull.number],
            });
        }
        Ok(())
    }
}

impl GithubForge {
    /// `GET /repos/{owner}/{repo}/pulls?state=closed`, the 100 updated last: those of
    /// `pulls` a person closed (or merged). Not a cursor's matter: a closed pull request
    /// stays closed, and its event's key makes it act once.
    async fn closed(
        &self,
        repo: &RepoRef,
        pulls: &[PolledPull],
        read: &mut Read,
    ) -> Result<(), ForgeError> {
        if pulls.is_empty() {
            return Ok(());
        }
        let answer = self
            .get(&format!(
                "{}/pulls?state=closed&sort=updated&direction=desc&per_page=100",
                repo_path(repo)
            ))
            .await?;
        for pr in answer.as_array().map_or(&[][..], Vec::as_slice) {
            let number = pr.get("number").and_then(Value::as_u64);
            let closed = pr.get("state").and_then(Value::as_str) == Some("closed");
            let Some(number) = number.filter(|n| closed && pulls.iter().any(|p| p.number == *n))
            else {
                continue;
            };
            read.events.push(ForgeEvent::PullRequestClosed {
                repo: repo.clone(),
                number,
                merged: pr.get("merged_at").is_some_and(|m| !m.is_null()),
            });
        }
        Ok(())
    }
}

/// An issue comment as the webhook's `issue_comment` decodes it: on a pull request (its
/// `html_url` is `…/pull/N#…`) a [`ForgeEvent::PullRequestComment`], else an
/// [`ForgeEvent::IssueComment`].
fn conversation_comment(repo: &RepoRef, c: &Value) -> Result<Option<ForgeEvent>, ForgeError> {
    let Some(number) = trailing_number(c, "issue_url") else {
        return Ok(None);
    };
    let comment_id = decode::u64_field(c, "an issue comment", "id")?;
    let author = decode::login(c);
    let body = decode::text(c, "body");
    let on_pull = c
        .get("html_url")
        .and_then(Value::as_str)
        .is_some_and(|u| u.contains("/pull/"));
    Ok(Some(if on_pull {
        ForgeEvent::PullRequestComment {
            repo: repo.clone(),
            number,
            comment_id,
            author,
            body,
        }
    } else {
        ForgeEvent::IssueComment {
            repo: repo.clone(),
            issue: number,
            comment_id,
            author,
            body,
        }
    }))
}
