//! Asking the remote whether a task was delivered already: a queued task taken over from a
//! worker that died after its push must not be run, committed or pushed again; and an
//! attempt that lost its lease and pushes after the attempt that took over must not fail.

use forge_domain::ForgeError;
use forge_domain::delivery::task_id_from_message;
use forge_domain::task::TaskId;

use super::{Delivery, DeliveryError};

/// What a refused push of a task's branch means, from what the remote's branch holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum RefusedPush {
    /// The remote holds this attempt's own commit (the push went through after all).
    OwnCommitThere,
    /// Another attempt of the same task pushed first: its commit, which carries this
    /// task's `Forge-Task` trailer.
    DeliveredByAnotherAttempt(String),
    /// Anything else: the error, saying why.
    Failed(String),
}

impl Delivery {
    /// The commit the task's branch holds on the push remote when that commit carries the
    /// task's `Forge-Task` trailer (an earlier attempt, on any machine, pushed it); `None`
    /// when the remote has no such branch, or one forge did not deliver for this task.
    ///
    /// # Errors
    /// [`DeliveryError::Forge`] when the remote cannot be reached.
    pub async fn pushed_commit(&self, id: &TaskId) -> Result<Option<String>, DeliveryError> {
        let found = self
            .ports
            .vcs
            .remote_branch(&self.repo, &self.settings.remote, &id.branch())
            .await?;
        Ok(found
            .filter(|c| task_id_from_message(&c.message).as_ref() == Some(id))
            .map(|c| c.commit))
    }

    /// Why the remote refused the push of `own` (task `id`'s commit) to `branch`: read
    /// from the remote's branch. Only a commit with this task's trailer is another
    /// attempt's delivery; any other refusal stays an error, which names what the branch
    /// holds when that is the reason.
    pub(super) async fn refused_push(
        &self,
        id: &TaskId,
        branch: &str,
        own: &str,
        error: &ForgeError,
    ) -> RefusedPush {
        let remote = &self.settings.remote;
        let found = self
            .ports
            .vcs
            .remote_branch(&self.repo, remote, branch)
            .await;
        match found {
            Ok(Some(there)) if there.commit == own => RefusedPush::OwnCommitThere,
            Ok(Some(there)) => match task_id_from_message(&there.message) {
                Some(task) if &task == id => RefusedPush::DeliveredByAnotherAttempt(there.commit),
                Some(task) => RefusedPush::Failed(format!(
                    "{error} ({branch} on {remote} holds {}, a delivery of another task, {task})",
                    there.commit
                )),
                None => RefusedPush::Failed(format!(
                    "{error} ({branch} on {remote} holds {}, which is not a delivery of task \
                     {id}: no Forge-Task trailer)",
                    there.commit
                )),
            },
            Ok(None) => RefusedPush::Failed(error.to_string()),
            Err(read) => RefusedPush::Failed(format!(
                "{error} (and {branch} on {remote} could not be read to tell why: {read})"
            )),
        }
    }
}
