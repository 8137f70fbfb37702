//! Asking the remote whether a task was delivered already: a queued task taken over from a
//! worker that died after its push must not be run, committed or pushed again.

use forge_domain::delivery::task_id_from_message;
use forge_domain::task::TaskId;

use super::{Delivery, DeliveryError};

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
}
