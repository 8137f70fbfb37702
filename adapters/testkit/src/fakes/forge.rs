//! An in-memory [`Forge`]: pull requests by head, comments, replies and draft flips recorded;
//! a failure can be scripted for the next call (a 422, a forge down).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::forges::{
    CheckRunOutput, ForgeEvent, ForgeKind, Permission, PolledEvents, PolledPull, PullRequestBody,
    PullRequestInfo, PullRequestState, RepoRef, Review, ThreadComment, at_or_after, later_cursor,
};
use forge_ports::Forge;

/// One recorded call, in words: `open forge/t-1 → main draft`, `ready #1`, `comment #1 …`.
pub type Call = String;

#[derive(Debug, Default)]
struct Inner {
    /// Head → (number, body, info).
    pulls: BTreeMap<String, (PullRequestBody, PullRequestInfo)>,
    calls: Vec<Call>,
    failures: VecDeque<ForgeError>,
    permissions: BTreeMap<String, Permission>,
    reviews: BTreeMap<u64, Review>,
    threads: BTreeMap<u64, Vec<ThreadComment>>,
    checks: BTreeMap<u64, CheckRunOutput>,
    next_comment: u64,
    /// What `events_since` reads: each event with the forge's time for it.
    events: Vec<(String, ForgeEvent)>,
}

/// See the module.
#[derive(Debug, Default)]
pub struct MemoryForge {
    inner: Mutex<Inner>,
}

impl MemoryForge {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The next call fails with `error` (before doing anything).
    pub fn fail_next(&self, error: ForgeError) {
        self.lock().failures.push_back(error);
    }

    pub fn calls(&self) -> Vec<Call> {
        self.lock().calls.clone()
    }

    /// The pull request of `head`, with the body it was last given.
    pub fn pull(&self, head: &str) -> Option<(PullRequestBody, PullRequestInfo)> {
        self.lock().pulls.get(head).cloned()
    }

    pub fn set_permission(&self, user: &str, permission: Permission) {
        self.lock().permissions.insert(user.to_owned(), permission);
    }

    pub fn add_review(&self, review: Review) {
        self.lock().reviews.insert(review.id, review);
    }

    pub fn add_thread(&self, comment_id: u64, thread: Vec<ThreadComment>) {
        self.lock().threads.insert(comment_id, thread);
    }

    pub fn add_check(&self, check: CheckRunOutput) {
        self.lock().checks.insert(check.id, check);
    }

    /// An event `events_since` reads from now on, stamped `time` (the forge's clock).
    pub fn add_event(&self, time: &str, event: ForgeEvent) {
        self.lock().events.push((time.to_owned(), event));
    }

    /// Closes the pull request of `head` (a person closed it).
    pub fn close(&self, head: &str) {
        if let Some((_, info)) = self.lock().pulls.get_mut(head) {
            info.state = PullRequestState::Closed;
        }
    }

    fn begin(&self, call: String) -> Result<std::sync::MutexGuard<'_, Inner>, ForgeError> {
        let mut inner = self.lock();
        inner.calls.push(call);
        match inner.failures.pop_front() {
            Some(e) => Err(e),
            None => Ok(inner),
        }
    }
}

fn missing(what: String) -> ForgeError {
    ForgeError::InvalidRequest { reason: what }
}

#[async_trait]
impl Forge for MemoryForge {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Github
    }

    async fn find_pull_request(
        &self,
        _repo: &RepoRef,
        head: &str,
    ) -> Result<Option<PullRequestInfo>, ForgeError> {
        let inner = self.begin(format!("find {head}"))?;
        Ok(inner
            .pulls
            .get(head)
            .map(|(_, info)| info.clone())
            .filter(|info| info.state == PullRequestState::Open))
    }

    async fn open_pull_request(
        &self,
        repo: &RepoRef,
        head: &str,
        base: &str,
        body: &PullRequestBody,
    ) -> Result<PullRequestInfo, ForgeError> {
        let draft = if body.draft { " draft" } else { "" };
        let mut inner = self.begin(format!("open {head} → {base}{draft}"))?;
        if inner.pulls.contains_key(head) {
            return Err(missing(format!("a pull request already exists for {head}")));
        }
        let number = inner.pulls.len() as u64 + 1;
        let info = PullRequestInfo {
            url: format!("https://{}/{}/pull/{number}", repo.host, repo.path),
            number,
            state: PullRequestState::Open,
            draft: body.draft,
        };
        inner
            .pulls
            .insert(head.to_owned(), (body.clone(), info.clone()));
        Ok(info)
    }

    async fn update_pull_request(
        &self,
        _repo: &RepoRef,
        number: u64,
        body: &PullRequestBody,
    ) -> Result<PullRequestInfo, ForgeError> {
        let mut inner = self.begin(format!("update #{number}"))?;
        let (stored, info) = inner
            .pulls
            .values_mut()
            .find(|(_, info)| info.number == number)
            .ok_or_else(|| missing(format!("no pull request #{number}")))?;
        stored.title.clone_from(&body.title);
        stored.body.clone_from(&body.body);
        Ok(info.clone())
    }

    async fn set_draft(&self, _repo: &RepoRef, number: u64, draft: bool) -> Result<(), ForgeError> {
        let word = if draft { "draft" } else { "ready" };
        let mut inner = self.begin(format!("{word} #{number}"))?;
        let (stored, info) = inner
            .pulls
            .values_mut()
            .find(|(_, info)| info.number == number)
            .ok_or_else(|| missing(format!("no pull request #{number}")))?;
        stored.draft = draft;
        info.draft = draft;
        Ok(())
    }

    async fn comment(&self, _repo: &RepoRef, number: u64, body: &str) -> Result<u64, ForgeError> {
        let mut inner = self.begin(format!("comment #{number} {body}"))?;
        inner.next_comment += 1;
        Ok(inner.next_comment)
    }

    async fn reply_in_thread(
        &self,
        _repo: &RepoRef,
        number: u64,
        comment_id: u64,
        _thread: Option<&str>,
        body: &str,
    ) -> Result<u64, ForgeError> {
        let mut inner = self.begin(format!("reply #{number}/{comment_id} {body}"))?;
        inner.next_comment += 1;
        Ok(inner.next_comment)
    }

    async fn read_review(
        &self,
        _repo: &RepoRef,
        number: u64,
        review_id: u64,
    ) -> Result<Review, ForgeError> {
        let inner = self.begin(format!("read review #{number}/{review_id}"))?;
        inner
            .reviews
            .get(&review_id)
            .cloned()
            .ok_or_else(|| missing(format!("no review {review_id}")))
    }

    async fn read_thread(
        &self,
        _repo: &RepoRef,
        number: u64,
        comment_id: u64,
    ) -> Result<Vec<ThreadComment>, ForgeError> {
        let inner = self.begin(format!("read thread #{number}/{comment_id}"))?;
        Ok(inner.threads.get(&comment_id).cloned().unwrap_or_default())
    }

    async fn read_check_run(
        &self,
        _repo: &RepoRef,
        check_id: u64,
    ) -> Result<CheckRunOutput, ForgeError> {
        let inner = self.begin(format!("read check {check_id}"))?;
        inner
            .checks
            .get(&check_id)
            .cloned()
            .ok_or_else(|| missing(format!("no check run {check_id}")))
    }

    async fn permission(&self, _repo: &RepoRef, user: &str) -> Result<Permission, ForgeError> {
        let inner = self.begin(format!("permission {user}"))?;
        Ok(inner
            .permissions
            .get(user)
            .copied()
            .unwrap_or(Permission::None))
    }

    async fn events_since(
        &self,
        _repo: &RepoRef,
        pulls: &[PolledPull],
        cursor: Option<&str>,
    ) -> Result<PolledEvents, ForgeError> {
        let numbers: Vec<String> = pulls.iter().map(|p| format!("#{}", p.number)).collect();
        let inner = self.begin(format!(
            "events since {} for {}",
            cursor.unwrap_or("the start"),
            numbers.join(",")
        ))?;
        let mut read = PolledEvents::default();
        for (time, event) in &inner.events {
            if at_or_after(Some(time), cursor) {
                read.cursor = later_cursor(read.cursor.take(), Some(time));
                read.events.push(event.clone());
            }
        }
        Ok(read)
    }
}
