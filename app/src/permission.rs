//! The approval bridge's use case (issue 41): a run in `--permission-mode ask` gets a
//! [`RunAsker`], which stores each of the agent's permission requests where everyone who
//! may answer can see it (`PermissionRequests`: SQLite, or the queue's PostgreSQL), lets the
//! `[permissions]` rules decide first, and waits for the one decision — a person's from the
//! terminal, the API, the board or `permissions allow|deny`, or the timeout's deny.

use std::sync::Arc;

use async_trait::async_trait;
use forge_domain::permission::{
    PermissionDecision, PermissionId, PermissionOwner, PermissionRequest, ToolRequest,
};
use forge_domain::{ForgeError, ProviderId};
use forge_ports::{IdGenerator, PermissionAsker, PermissionRequests};

use crate::config::PermissionsConfig;

/// How long one wait on the store lasts before it is made again (the store's wait returns
/// when the request is decided, so this only bounds a lost notification).
const WAIT_SLICE_MS: u64 = 30_000;

/// Where a run's requests go and the rules and time they are decided under; given to the
/// agent builder (`CodeAgentBuilder::permissions`).
#[derive(Clone)]
pub struct PermissionBridge {
    pub store: Arc<dyn PermissionRequests>,
    pub config: PermissionsConfig,
    /// Whose requests these are when not each run's own: a queued task's (its worker's
    /// `task run`), so the queue shows them under the task whichever of its runs asks.
    pub owner: Option<PermissionOwner>,
}

impl PermissionBridge {
    /// The asker of one run.
    pub fn asker(
        &self,
        owner: PermissionOwner,
        provider: ProviderId,
        workspace: String,
        ids: Arc<dyn IdGenerator>,
    ) -> RunAsker {
        RunAsker {
            bridge: self.clone(),
            owner,
            provider,
            workspace,
            ids,
        }
    }
}

/// One run's [`PermissionAsker`].
pub struct RunAsker {
    bridge: PermissionBridge,
    owner: PermissionOwner,
    provider: ProviderId,
    /// The run's work tree (absolute): the rules' paths are read from it.
    workspace: String,
    ids: Arc<dyn IdGenerator>,
}

impl RunAsker {
    fn new_id(&self) -> Result<PermissionId, ForgeError> {
        let raw: String = format!("perm-{}", self.ids.run_id())
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .take(64)
            .collect();
        PermissionId::new(raw).map_err(|e| ForgeError::InvalidRequest {
            reason: format!("permission request id: {e}"),
        })
    }
}

#[async_trait]
impl PermissionAsker for RunAsker {
    async fn ask(&self, tool: ToolRequest) -> Result<PermissionRequest, ForgeError> {
        let verdict = self.bridge.config.rules.verdict(&tool, &self.workspace);
        let request = PermissionRequest {
            id: self.new_id()?,
            provider: self.provider.clone(),
            owner: self.owner.clone(),
            tool,
            requested_at_ms: 0,
            expires_at_ms: 0,
            decision: None,
        };
        let store = &self.bridge.store;
        let stored = store
            .ask_permission(&request, self.bridge.config.timeout_ms)
            .await?;
        // A rule decides at once; the request is kept all the same, so what was allowed
        // without asking is on the record too.
        match verdict.decision() {
            None => Ok(stored),
            Some(decision) => Ok(store
                .decide_permission(&stored.id, &decision)
                .await?
                .map_or(stored, |d| d.request().clone())),
        }
    }

    async fn answer(&self, id: &PermissionId) -> Result<PermissionRequest, ForgeError> {
        loop {
            match self
                .bridge
                .store
                .wait_for_permission(id, WAIT_SLICE_MS)
                .await?
            {
                None => {
                    return Err(ForgeError::Io {
                        context: "permission request".to_owned(),
                        message: format!("request {id} is gone from the store"),
                    });
                }
                Some(request) if !request.is_pending() => return Ok(request),
                Some(_) => {}
            }
        }
    }

    async fn close(&self) -> Result<Vec<PermissionRequest>, ForgeError> {
        self.bridge
            .store
            .close_permissions(&self.owner, &PermissionDecision::cancelled())
            .await
    }
}
