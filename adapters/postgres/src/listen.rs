//! The connection idle workers wait on: `LISTEN forge_queue`, notifications forwarded to a
//! channel by the connection's driver task.

use forge_domain::ForgeError;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tokio_postgres::{Client, Config, Notification};

use crate::connect::{connect, db_error};

/// The channel a submit or a hand-back notifies.
pub(crate) const WORK_CHANNEL: &str = "forge_queue";

pub(crate) struct Listener {
    // Held so the connection stays open; dropping it closes the connection.
    _client: Client,
    notifications: UnboundedReceiver<Notification>,
}

impl Listener {
    pub(crate) async fn open(config: &Config, url: &str) -> Result<Self, ForgeError> {
        let (tx, notifications) = unbounded_channel();
        let client = connect(config, url, Some(tx)).await?;
        client
            .batch_execute(&format!("LISTEN {WORK_CHANNEL}"))
            .await
            .map_err(|e| db_error(url, "listening for work", &e))?;
        Ok(Self {
            _client: client,
            notifications,
        })
    }

    /// Waits for a notification or the timeout; drains what else arrived meanwhile, as one
    /// claim pass serves them all. `false` when the connection is gone.
    pub(crate) async fn wait(&mut self, timeout_ms: u64) -> bool {
        let timeout = std::time::Duration::from_millis(timeout_ms);
        match tokio::time::timeout(timeout, self.notifications.recv()).await {
            Ok(None) => false,
            Ok(Some(_)) => {
                while self.notifications.try_recv().is_ok() {}
                true
            }
            Err(_elapsed) => true,
        }
    }
}
