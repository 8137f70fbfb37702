//! [`Forge`] on GitLab's v4 API: a pull request is a merge request (its number the `iid`),
//! a draft is a `Draft:` title, a comment is a note, a review thread is a discussion, a
//! check is a pipeline (its failed jobs' logs), and a permission is a member's access
//! level.

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::forges::{
    CheckRunOutput, ForgeKind, Permission, PolledEvents, PolledPull, PullRequestBody,
    PullRequestInfo, RepoRef, Review, ReviewState, ThreadComment,
};
use forge_ports::Forge;
use gitlab::api::common::NameOrId;
use gitlab::api::endpoint_prelude::Endpoint;
use gitlab::api::projects::merge_requests::approvals::MergeRequestApprovals;
use gitlab::api::projects::merge_requests::discussions::MergeRequestDiscussions;
use gitlab::api::projects::merge_requests::notes::CreateMergeRequestNote;
use gitlab::api::projects::merge_requests::{
    CreateMergeRequest, EditMergeRequest, MergeRequest, MergeRequestState, MergeRequests,
};
use gitlab::api::{AsyncQuery, Pageable, Pagination};
use serde_json::Value;

use crate::client::Client;
use crate::endpoints::{CreateMergeRequestDiscussionNote, MergeRequestDiscussion};
use crate::title::with_draft;
use crate::{checks, decode, error};

/// A thread, a conversation or a list longer than this many entries is read to here.
pub(crate) const MAX_ITEMS: usize = 1_000;

/// GitLab at `api_url` with a personal, project or group access token (the worker's).
#[derive(Clone)]
pub struct GitlabForge {
    pub(crate) client: Client,
}

impl GitlabForge {
    /// A client for the API at `api_url` (`https://HOST/api/v4`) sending `token` as
    /// `PRIVATE-TOKEN`. Nothing is asked of GitLab until the first call.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when `api_url` is not an http(s) URL or the token
    /// cannot be a header; [`ForgeError::Io`] when the HTTP client cannot be built.
    pub fn new(api_url: &str, token: &str) -> Result<Self, ForgeError> {
        let client = Client::new(api_url, token).map_err(|reason| ForgeError::InvalidRequest {
            reason: reason.replace(token, "[REDACTED]"),
        })?;
        Ok(Self { client })
    }

    /// One call's JSON answer.
    pub(crate) async fn query<E: Endpoint + Sync>(
        &self,
        what: &str,
        endpoint: E,
    ) -> Result<Value, ForgeError> {
        endpoint
            .query_async(&self.client)
            .await
            .map_err(|e| self.error(what, &e))
    }

    /// Every page of a list, up to [`MAX_ITEMS`].
    pub(crate) async fn list<E: Endpoint + Pageable + Sync>(
        &self,
        what: &str,
        endpoint: E,
    ) -> Result<Vec<Value>, ForgeError> {
        gitlab::api::paged(endpoint, Pagination::Limit(MAX_ITEMS))
            .query_async(&self.client)
            .await
            .map_err(|e| self.error(what, &e))
    }

    /// One call's answer as text (a job's log).
    pub(crate) async fn raw<E: Endpoint + Sync>(
        &self,
        what: &str,
        endpoint: E,
    ) -> Result<String, ForgeError> {
        gitlab::api::raw(endpoint)
            .query_async(&self.client)
            .await
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .map_err(|e| self.error(what, &e))
    }

    pub(crate) fn error(
        &self,
        what: &str,
        e: &gitlab::api::ApiError<crate::client::TransportError>,
    ) -> ForgeError {
        error::forge_error(what, e, |t| self.client.redact(t))
    }

    async fn merge_request(&self, repo: &RepoRef, iid: u64) -> Result<Value, ForgeError> {
        let endpoint = MergeRequest::builder()
            .project(project(repo))
            .merge_request(iid)
            .build()
            .map_err(built)?;
        self.query(&format!("reading merge request !{iid}"), endpoint)
            .await
    }

    pub(crate) async fn discussions(
        &self,
        repo: &RepoRef,
        iid: u64,
    ) -> Result<Vec<Value>, ForgeError> {
        let endpoint = MergeRequestDiscussions::builder()
            .project(project(repo))
            .merge_request(iid)
            .build()
            .map_err(built)?;
        self.list(
            &format!("reading the discussions of merge request !{iid}"),
            endpoint,
        )
        .await
    }
}

/// The project a repository is: its path (`group/sub/project`), which the crate escapes.
pub(crate) fn project(repo: &RepoRef) -> NameOrId<'_> {
    NameOrId::from(repo.path.as_str())
}

/// A builder that refused its fields: forge's own mistake, said as one.
pub(crate) fn built(e: impl std::fmt::Display) -> ForgeError {
    ForgeError::InvalidRequest {
        reason: format!("gitlab: building the request: {e}"),
    }
}

/// A discussion id from a webhook: GitLab's are 40 hex digits.
fn discussion_id(thread: &str) -> Result<&str, ForgeError> {
    if !thread.is_empty() && thread.len() <= 64 && thread.bytes().all(|b| b.is_ascii_alphanumeric())
    {
        Ok(thread)
    } else {
        Err(ForgeError::InvalidRequest {
            reason: format!("gitlab: {thread:?} is not a discussion id"),
        })
    }
}

#[async_trait]
impl Forge for GitlabForge {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Gitlab
    }

    async fn find_pull_request(
        &self,
        repo: &RepoRef,
        head: &str,
    ) -> Result<Option<PullRequestInfo>, ForgeError> {
        let endpoint = MergeRequests::builder()
            .project(project(repo))
            .source_branch(head)
            .state(MergeRequestState::Opened)
            .build()
            .map_err(built)?;
        let found = self
            .query(&format!("finding the merge request of {head}"), endpoint)
            .await?;
        found
            .as_array()
            .and_then(|mrs| mrs.first())
            .map(decode::merge_request)
            .transpose()
    }

    async fn open_pull_request(
        &self,
        repo: &RepoRef,
        head: &str,
        base: &str,
        body: &PullRequestBody,
    ) -> Result<PullRequestInfo, ForgeError> {
        let title = with_draft(&body.title, body.draft);
        let endpoint = CreateMergeRequest::builder()
            .project(project(repo))
            .source_branch(head)
            .target_branch(base)
            .title(title.as_str())
            .description(body.body.as_str())
            .build()
            .map_err(built)?;
        let mr = self
            .query(
                &format!("opening a merge request from {head} onto {base}"),
                endpoint,
            )
            .await?;
        decode::merge_request(&mr)
    }

    async fn update_pull_request(
        &self,
        repo: &RepoRef,
        number: u64,
        body: &PullRequestBody,
    ) -> Result<PullRequestInfo, ForgeError> {
        // A new title without the prefix would mark a draft ready: the title keeps the
        // draft state it has (changing it is `set_draft`'s).
        let current = decode::merge_request(&self.merge_request(repo, number).await?)?;
        let title = with_draft(&body.title, current.draft);
        let endpoint = EditMergeRequest::builder()
            .project(project(repo))
            .merge_request(number)
            .title(title.as_str())
            .description(body.body.as_str())
            .build()
            .map_err(built)?;
        let mr = self
            .query(&format!("updating merge request !{number}"), endpoint)
            .await?;
        decode::merge_request(&mr)
    }

    async fn set_draft(&self, repo: &RepoRef, number: u64, draft: bool) -> Result<(), ForgeError> {
        let mr = self.merge_request(repo, number).await?;
        let info = decode::merge_request(&mr)?;
        if info.draft == draft {
            return Ok(());
        }
        if info.state != forge_domain::forges::PullRequestState::Open {
            return Err(ForgeError::InvalidRequest {
                reason: format!(
                    "gitlab: merge request !{number} is {}, so it stays as it is",
                    info.state.as_str()
                ),
            });
        }
        let title = with_draft(decode::str_field(&mr, "a merge request", "title")?, draft);
        let endpoint = EditMergeRequest::builder()
            .project(project(repo))
            .merge_request(number)
            .title(title.as_str())
            .build()
            .map_err(built)?;
        let what = if draft {
            format!("marking merge request !{number} a draft")
        } else {
            format!("marking merge request !{number} ready")
        };
        self.query(&what, endpoint).await?;
        Ok(())
    }

    async fn comment(&self, repo: &RepoRef, number: u64, body: &str) -> Result<u64, ForgeError> {
        let endpoint = CreateMergeRequestNote::builder()
            .project(project(repo))
            .merge_request(number)
            .body(body)
            .build()
            .map_err(built)?;
        let note = self
            .query(&format!("commenting on merge request !{number}"), endpoint)
            .await?;
        decode::u64_field(&note, "a note", "id")
    }

    async fn reply_in_thread(
        &self,
        repo: &RepoRef,
        number: u64,
        comment_id: u64,
        thread: Option<&str>,
        body: &str,
    ) -> Result<u64, ForgeError> {
        let discussion = match thread {
            Some(thread) => discussion_id(thread)?.to_owned(),
            // A note without its discussion (a comment found by id): look it up.
            None => {
                let discussions = self.discussions(repo, number).await?;
                let found = discussions
                    .iter()
                    .find(|d| decode::holds_note(d, comment_id))
                    .ok_or_else(|| ForgeError::InvalidRequest {
                        reason: format!("gitlab: merge request !{number} has no note {comment_id}"),
                    })?;
                decode::str_field(found, "a discussion", "id")?.to_owned()
            }
        };
        let endpoint = CreateMergeRequestDiscussionNote {
            project: project(repo),
            merge_request: number,
            discussion: &discussion,
            body,
        };
        let note = self
            .query(
                &format!("replying in a thread of merge request !{number}"),
                endpoint,
            )
            .await?;
        decode::u64_field(&note, "a note", "id")
    }

    async fn read_review(
        &self,
        repo: &RepoRef,
        number: u64,
        review_id: u64,
    ) -> Result<Review, ForgeError> {
        // GitLab has no review object: what a Merge Request Hook calls an approval is read
        // back from the merge request's approvals (the latest approver is its author).
        let endpoint = MergeRequestApprovals::builder()
            .project(project(repo))
            .merge_request(number)
            .build()
            .map_err(built)?;
        let approvals = self
            .query(
                &format!("reading the approvals of merge request !{number}"),
                endpoint,
            )
            .await?;
        let approver = approvals
            .get("approved_by")
            .and_then(Value::as_array)
            .and_then(|by| by.last())
            .and_then(|a| a.pointer("/user/username"))
            .and_then(Value::as_str);
        Ok(Review {
            id: review_id,
            author: approver.unwrap_or_default().to_owned(),
            state: if approver.is_some() {
                ReviewState::Approved
            } else {
                ReviewState::Commented
            },
            body: String::new(),
            comments: Vec::new(),
        })
    }

    async fn read_thread(
        &self,
        repo: &RepoRef,
        number: u64,
        comment_id: u64,
    ) -> Result<Vec<ThreadComment>, ForgeError> {
        let discussions = self.discussions(repo, number).await?;
        let thread = decode::thread_of(&discussions, comment_id).ok_or_else(|| {
            ForgeError::InvalidRequest {
                reason: format!("gitlab: merge request !{number} has no note {comment_id}"),
            }
        })?;
        thread.into_iter().map(decode::note).collect()
    }

    async fn read_check_run(
        &self,
        repo: &RepoRef,
        check_id: u64,
    ) -> Result<CheckRunOutput, ForgeError> {
        checks::pipeline_output(self, repo, check_id).await
    }

    async fn permission(&self, repo: &RepoRef, user: &str) -> Result<Permission, ForgeError> {
        crate::members::access(self, repo, user).await
    }

    async fn events_since(
        &self,
        repo: &RepoRef,
        pulls: &[PolledPull],
        cursor: Option<&str>,
    ) -> Result<PolledEvents, ForgeError> {
        self.poll(repo, pulls, cursor).await
    }
}

impl GitlabForge {
    /// Discussion `id` of merge request `iid` (a thread by its id, as a webhook names it).
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when there is no such discussion; [`ForgeError::Io`]
    /// when GitLab cannot be reached.
    pub async fn discussion(
        &self,
        repo: &RepoRef,
        iid: u64,
        id: &str,
    ) -> Result<Vec<ThreadComment>, ForgeError> {
        let endpoint = MergeRequestDiscussion {
            project: project(repo),
            merge_request: iid,
            discussion: discussion_id(id)?,
        };
        let discussion = self
            .query(
                &format!("reading a thread of merge request !{iid}"),
                endpoint,
            )
            .await?;
        decode::notes(&discussion)
            .iter()
            .filter(|n| decode::is_person_note(n))
            .map(decode::note)
            .collect()
    }
}
