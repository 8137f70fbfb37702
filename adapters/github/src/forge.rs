//! [`Forge`] on GitHub's REST API (and GraphQL for draft ↔ ready).

use std::time::Duration;

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::forges::{
    CheckRunOutput, ForgeKind, Permission, PolledEvents, PolledPull, PullRequestBody,
    PullRequestInfo, RepoRef, Review, ReviewState, ThreadComment,
};
use forge_ports::Forge;
use octocrab::Octocrab;
use octocrab::service::middleware::retry::{NoOpRateLimitMetrics, RetryConfig};
use serde_json::{Value, json};

use crate::api::{Api, Method};
use crate::decode;

/// How often a rate-limited or failed (5xx, transport) request is tried again.
const RETRIES: usize = 3;
/// A 403/429 without a reset time waits this long.
const MIN_WAIT_SECONDS: u64 = 1;

/// GitHub at `api_url` with `token` (a personal or installation token; the worker's).
#[derive(Clone)]
pub struct GithubForge {
    api: Api,
}

impl GithubForge {
    /// A client for the API at `api_url` (`https://api.github.com`, or
    /// `https://HOST/api/v3`) authenticated with `token`.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when `api_url` is not a URL; [`ForgeError::Io`] when
    /// the HTTP client cannot be built (no TLS roots).
    pub fn new(api_url: &str, token: String) -> Result<Self, ForgeError> {
        let builder = Octocrab::builder()
            .base_uri(api_url)
            .map_err(|e| ForgeError::InvalidRequest {
                reason: format!("github api_url {api_url:?}: {e}"),
            })?
            .personal_token(token)
            .set_connect_timeout(Some(Duration::from_secs(10)))
            .set_read_timeout(Some(Duration::from_secs(60)))
            .add_retry_config(RetryConfig::HandleRateLimits {
                metrics: std::sync::Arc::new(NoOpRateLimitMetrics),
                max_retries: RETRIES,
                min_wait_seconds: MIN_WAIT_SECONDS,
                retry_on_forbidden: false,
            });
        let client = builder.build().map_err(|e| ForgeError::Io {
            context: "github: building the client".into(),
            message: e.to_string(),
        })?;
        Ok(Self {
            api: Api::new(client, api_url),
        })
    }

    pub(crate) async fn get(&self, path: &str) -> Result<Value, ForgeError> {
        Ok(self
            .api
            .call(Method::Get, path, None, false)
            .await?
            .unwrap_or_default())
    }

    async fn send(&self, method: Method, path: &str, body: &Value) -> Result<Value, ForgeError> {
        Ok(self
            .api
            .call(method, path, Some(body), false)
            .await?
            .unwrap_or_default())
    }

    /// Every page of a list (GitHub pages at 100 at most).
    pub(crate) async fn list(&self, path: &str) -> Result<Vec<Value>, ForgeError> {
        let mut all = Vec::new();
        for page in 1..=MAX_PAGES {
            let sep = if path.contains('?') { '&' } else { '?' };
            let items = self
                .get(&format!("{path}{sep}per_page=100&page={page}"))
                .await?;
            let items = items.as_array().cloned().unwrap_or_default();
            let full = items.len() == 100;
            all.extend(items);
            if !full {
                break;
            }
        }
        Ok(all)
    }
}

/// A thread or a review longer than 1,000 comments is read to its first 1,000.
const MAX_PAGES: u32 = 10;

pub(crate) fn repo_path(repo: &RepoRef) -> String {
    format!("/repos/{}", repo.path)
}

#[async_trait]
impl Forge for GithubForge {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Github
    }

    async fn find_pull_request(
        &self,
        repo: &RepoRef,
        head: &str,
    ) -> Result<Option<PullRequestInfo>, ForgeError> {
        // `head` is `OWNER:BRANCH`; forge pushes to the repository itself, not a fork.
        let path = format!(
            "{}/pulls?state=open&head={}:{}",
            repo_path(repo),
            repo.owner(),
            head
        );
        let found = self.get(&path).await?;
        found
            .as_array()
            .and_then(|prs| prs.first())
            .map(decode::pull_request)
            .transpose()
    }

    async fn open_pull_request(
        &self,
        repo: &RepoRef,
        head: &str,
        base: &str,
        body: &PullRequestBody,
    ) -> Result<PullRequestInfo, ForgeError> {
        let request = json!({
            "title": body.title,
            "head": head,
            "base": base,
            "body": body.body,
            "draft": body.draft,
            "maintainer_can_modify": false,
        });
        let pr = self
            .send(
                Method::Post,
                &format!("{}/pulls", repo_path(repo)),
                &request,
            )
            .await?;
        decode::pull_request(&pr)
    }

    async fn update_pull_request(
        &self,
        repo: &RepoRef,
        number: u64,
        body: &PullRequestBody,
    ) -> Result<PullRequestInfo, ForgeError> {
        let request = json!({ "title": body.title, "body": body.body });
        let pr = self
            .send(
                Method::Patch,
                &format!("{}/pulls/{number}", repo_path(repo)),
                &request,
            )
            .await?;
        decode::pull_request(&pr)
    }

    async fn set_draft(&self, repo: &RepoRef, number: u64, draft: bool) -> Result<(), ForgeError> {
        let pr = self
            .get(&format!("{}/pulls/{number}", repo_path(repo)))
            .await?;
        if pr.get("draft").and_then(Value::as_bool) == Some(draft) {
            return Ok(());
        }
        let node_id = decode::str_field(&pr, "a pull request", "node_id")?;
        let mutation = if draft {
            "mutation($id: ID!) { convertPullRequestToDraft(input: {pullRequestId: $id}) \
             { pullRequest { isDraft } } }"
        } else {
            "mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) \
             { pullRequest { isDraft } } }"
        };
        self.api.graphql(mutation, json!({ "id": node_id })).await?;
        Ok(())
    }

    async fn comment(&self, repo: &RepoRef, number: u64, body: &str) -> Result<u64, ForgeError> {
        let c = self
            .send(
                Method::Post,
                &format!("{}/issues/{number}/comments", repo_path(repo)),
                &json!({ "body": body }),
            )
            .await?;
        decode::u64_field(&c, "a comment", "id")
    }

    async fn reply_in_thread(
        &self,
        repo: &RepoRef,
        number: u64,
        comment_id: u64,
        _thread: Option<&str>,
        body: &str,
    ) -> Result<u64, ForgeError> {
        let c = self
            .send(
                Method::Post,
                &format!(
                    "{}/pulls/{number}/comments/{comment_id}/replies",
                    repo_path(repo)
                ),
                &json!({ "body": body }),
            )
            .await?;
        decode::u64_field(&c, "a reply", "id")
    }

    async fn read_review(
        &self,
        repo: &RepoRef,
        number: u64,
        review_id: u64,
    ) -> Result<Review, ForgeError> {
        let base = format!("{}/pulls/{number}/reviews/{review_id}", repo_path(repo));
        let review = self.get(&base).await?;
        let comments = self.list(&format!("{base}/comments")).await?;
        let state = review
            .get("state")
            .and_then(Value::as_str)
            .and_then(ReviewState::parse)
            .unwrap_or(ReviewState::Commented);
        Ok(Review {
            id: decode::u64_field(&review, "a review", "id")?,
            author: review
                .pointer("/user/login")
                .and_then(Value::as_str)
                .unwrap_or("ghost")
                .to_owned(),
            state,
            body: review
                .get("body")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            comments: comments
                .iter()
                .map(decode::review_comment)
                .collect::<Result<_, _>>()?,
        })
    }

    async fn read_thread(
        &self,
        repo: &RepoRef,
        number: u64,
        comment_id: u64,
    ) -> Result<Vec<ThreadComment>, ForgeError> {
        let review_comments = self
            .list(&format!("{}/pulls/{number}/comments", repo_path(repo)))
            .await?;
        if let Some(thread) = decode::thread_of(&review_comments, comment_id) {
            return thread.into_iter().map(decode::thread_comment).collect();
        }
        // A comment in the conversation: the conversation is its thread.
        let conversation = self
            .list(&format!("{}/issues/{number}/comments", repo_path(repo)))
            .await?;
        if !conversation
            .iter()
            .any(|c| c.get("id").and_then(Value::as_u64) == Some(comment_id))
        {
            return Err(ForgeError::InvalidRequest {
                reason: format!("github: pull request #{number} has no comment {comment_id}"),
            });
        }
        conversation.iter().map(decode::thread_comment).collect()
    }

    async fn read_check_run(
        &self,
        repo: &RepoRef,
        check_id: u64,
    ) -> Result<CheckRunOutput, ForgeError> {
        let base = format!("{}/check-runs/{check_id}", repo_path(repo));
        let run = self.get(&base).await?;
        let annotations = self.list(&format!("{base}/annotations")).await?;
        decode::check_run(&run, &annotations)
    }

    async fn permission(&self, repo: &RepoRef, user: &str) -> Result<Permission, ForgeError> {
        if !user.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            // Not a GitHub login: nobody with that name can have a permission.
            return Ok(Permission::None);
        }
        let path = format!("{}/collaborators/{user}/permission", repo_path(repo));
        match self.api.call(Method::Get, &path, None, true).await? {
            None => Ok(Permission::None),
            Some(answer) => Ok(decode::permission(&answer)),
        }
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
