//! Who may steer, asked of the forge and remembered briefly: a review with ten comments, or
//! a burst of webhooks from one reviewer, asks the API once a minute, not once each. A
//! permission taken away is honoured within [`PERMISSION_TTL`].

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use forge_domain::ForgeError;
use forge_domain::forges::{Permission, RepoRef};
use forge_ports::Forge;

/// How long an answer is trusted.
pub const PERMISSION_TTL: Duration = Duration::from_secs(60);

type Key = (String, String, String);

/// Answers of [`Forge::permission`], per forge, repository and user.
#[derive(Default)]
pub struct PermissionCache {
    answers: Mutex<HashMap<Key, (Permission, Instant)>>,
}

impl PermissionCache {
    /// `user`'s permission on `repo` of the forge named `forge_name`: remembered when asked
    /// within the last minute, else asked of `forge`.
    ///
    /// # Errors
    /// As [`Forge::permission`]; an error is not remembered.
    pub async fn permission(
        &self,
        forge_name: &str,
        forge: &dyn Forge,
        repo: &RepoRef,
        user: &str,
    ) -> Result<Permission, ForgeError> {
        let key = (
            forge_name.to_owned(),
            repo.path.clone(),
            user.to_ascii_lowercase(),
        );
        let now = Instant::now();
        if let Some((p, at)) = self.lock().get(&key) {
            if now.duration_since(*at) < PERMISSION_TTL {
                return Ok(*p);
            }
        }
        let answer = forge.permission(repo, user).await?;
        let mut answers = self.lock();
        answers.retain(|_, (_, at)| now.duration_since(*at) < PERMISSION_TTL);
        answers.insert(key, (answer, now));
        Ok(answer)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, (Permission, Instant)>> {
        self.answers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
