//! A forge (GitHub, GitLab): where the task's pull request is opened, kept current, marked
//! ready, and where reviews, threads and checks are read back from (issue 39).
//!
//! The adapter holds the API URL and token (the worker's, never an agent's), retries a rate
//! limit itself (after `Retry-After` / `x-ratelimit-reset`), and never puts the token in an
//! error message. Numbers are the forge's: a pull request's `number` (GitLab: the merge
//! request's `iid`), a comment's or review's id.

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::forges::{
    CheckRunOutput, ForgeKind, Permission, PolledEvents, PolledPull, PullRequestBody,
    PullRequestInfo, RepoRef, Review, ThreadComment,
};

#[async_trait]
pub trait Forge: Send + Sync {
    /// Which API this forge speaks.
    fn kind(&self) -> ForgeKind;

    /// The open pull request whose head is `head` (the task branch), if there is one: a
    /// delivery that opened one and lost the answer finds it here instead of opening a
    /// second.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the forge cannot be reached or answers with an error status
    /// (the message names the status and the forge's reason, never the token).
    async fn find_pull_request(
        &self,
        repo: &RepoRef,
        head: &str,
    ) -> Result<Option<PullRequestInfo>, ForgeError>;

    /// Opens a pull request from `head` onto `base` with the title, body and draft flag of
    /// `body`.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when the forge refuses it as invalid (GitHub's 422: a
    /// pull request for `head` exists, no commits between the branches, an unknown base);
    /// [`ForgeError::Io`] when the forge cannot be reached or answers with another error
    /// status.
    async fn open_pull_request(
        &self,
        repo: &RepoRef,
        head: &str,
        base: &str,
        body: &PullRequestBody,
    ) -> Result<PullRequestInfo, ForgeError>;

    /// Replaces the title and body of pull request `number` (its draft flag is
    /// [`Forge::set_draft`]'s).
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when the forge refuses the update (a 422, a pull
    /// request that does not exist); [`ForgeError::Io`] when it cannot be reached.
    async fn update_pull_request(
        &self,
        repo: &RepoRef,
        number: u64,
        body: &PullRequestBody,
    ) -> Result<PullRequestInfo, ForgeError>;

    /// Marks pull request `number` a draft (`true`) or ready for review (`false`). GitHub
    /// does this only through GraphQL (`convertPullRequestToDraft`,
    /// `markPullRequestReadyForReview`); GitLab through the `Draft:` title prefix.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when the forge refuses it (a closed pull request);
    /// [`ForgeError::Io`] when it cannot be reached.
    async fn set_draft(&self, repo: &RepoRef, number: u64, draft: bool) -> Result<(), ForgeError>;

    /// Posts `body` in the conversation of issue or pull request `number`; the new
    /// comment's id.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when the forge refuses it (a locked conversation, an
    /// unknown number); [`ForgeError::Io`] when it cannot be reached.
    async fn comment(&self, repo: &RepoRef, number: u64, body: &str) -> Result<u64, ForgeError>;

    /// Replies `body` in the review thread of comment `comment_id` (GitLab: the
    /// discussion `thread`) on pull request `number`; the reply's id.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when the forge refuses it (the comment is gone or is
    /// itself a reply it cannot answer); [`ForgeError::Io`] when it cannot be reached.
    async fn reply_in_thread(
        &self,
        repo: &RepoRef,
        number: u64,
        comment_id: u64,
        thread: Option<&str>,
        body: &str,
    ) -> Result<u64, ForgeError>;

    /// Review `review_id` of pull request `number` with every comment it holds.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when there is no such review; [`ForgeError::Io`] when
    /// the forge cannot be reached.
    async fn read_review(
        &self,
        repo: &RepoRef,
        number: u64,
        review_id: u64,
    ) -> Result<Review, ForgeError>;

    /// The thread comment `comment_id` belongs to, oldest first (the whole thread, not only
    /// the triggering comment).
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when there is no such comment; [`ForgeError::Io`] when
    /// the forge cannot be reached.
    async fn read_thread(
        &self,
        repo: &RepoRef,
        number: u64,
        comment_id: u64,
    ) -> Result<Vec<ThreadComment>, ForgeError>;

    /// The output and annotations of check run `check_id` (GitLab: the failed pipeline's
    /// failed jobs' trace ends).
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when there is no such check; [`ForgeError::Io`] when
    /// the forge cannot be reached.
    async fn read_check_run(
        &self,
        repo: &RepoRef,
        check_id: u64,
    ) -> Result<CheckRunOutput, ForgeError>;

    /// `user`'s permission on the repository (GitHub: the collaborator permission; GitLab:
    /// the member's access level, inherited ones included). A user who is no collaborator
    /// is [`Permission::None`], not an error. Callers cache the answer briefly.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the forge cannot be reached or refuses to say (the token
    /// lacks the scope).
    async fn permission(&self, repo: &RepoRef, user: &str) -> Result<Permission, ForgeError>;

    /// The events on `repo` at or after `cursor` (`forge poll`, for a worker the forge
    /// cannot reach): comments in conversations, inline review comments, labels put on
    /// issues, and — per pull request of `pulls`, forge's open ones — submitted reviews
    /// and the completed checks of its head commit; with the cursor to ask from next time.
    /// `None`: from the beginning. Events come in the shape a webhook decodes to, so they
    /// take the same path and the same once-only rule ([`ForgeEvent::key`]).
    ///
    /// The default refuses: a forge whose adapter cannot list events says so rather than
    /// answering nothing.
    ///
    /// [`ForgeEvent::key`]: forge_domain::forges::ForgeEvent::key
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when the forge cannot be polled or refuses a list (a
    /// repository it does not have); [`ForgeError::Io`] when it cannot be reached (the
    /// caller keeps its cursor: the next poll reads the same events again).
    async fn events_since(
        &self,
        repo: &RepoRef,
        pulls: &[PolledPull],
        cursor: Option<&str>,
    ) -> Result<PolledEvents, ForgeError> {
        let _ = (repo, pulls, cursor);
        Err(ForgeError::InvalidRequest {
            reason: format!(
                "{} forges cannot be polled by this adapter: give the worker a public URL \
                 and use webhooks",
                self.kind().as_str()
            ),
        })
    }
}
