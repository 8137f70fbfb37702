//! The connections that wait for notifications: `LISTEN forge_queue` for idle workers,
//! `LISTEN forge_events` for readers of a task's events and both for the board's live
//! stream, forwarded to a channel by the connection's driver task.

use forge_domain::ForgeError;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tokio::sync::watch;
use tokio_postgres::{Client, Notification};

use crate::connect::{Target, connect, db_error};

/// The channel a submit or a hand-back notifies.
pub(crate) const WORK_CHANNEL: &str = "forge_queue";

/// The channel an appended event notifies (payload: `TASK_ID SEQ`).
pub(crate) const EVENTS_CHANNEL: &str = "forge_events";

pub(crate) struct Listener {
    // Held so the connection stays open; dropping it closes the connection.
    _client: Client,
    notifications: UnboundedReceiver<Notification>,
}

impl Listener {
    pub(crate) async fn open(config: &Target, url: &str) -> Result<Self, ForgeError> {
        Self::on(config, url, &[WORK_CHANNEL]).await
    }

    async fn on(config: &Target, url: &str, channels: &[&str]) -> Result<Self, ForgeError> {
        let (tx, notifications) = unbounded_channel();
        let client = connect(config, url, Some(tx)).await?;
        let listen: String = channels.iter().map(|c| format!("LISTEN {c};")).collect();
        client
            .batch_execute(&listen)
            .await
            .map_err(|e| db_error(url, &format!("listening on {}", channels.join(", ")), &e))?;
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

/// One `LISTEN forge_events` connection shared by every reader in the process: a driver
/// task bumps a counter per notification, each reader waits for it to change. When the
/// connection goes, the counter's sender is dropped and readers wake; the next reader
/// starts a new feed.
pub(crate) struct EventFeed {
    rx: watch::Receiver<u64>,
    task: tokio::task::JoinHandle<()>,
}

impl EventFeed {
    pub(crate) async fn start(config: &Target, url: &str) -> Result<Self, ForgeError> {
        Self::on(config, url, &[EVENTS_CHANNEL], 0).await
    }

    /// The feed of every change to the queue's tasks (both channels: submits and hand-backs,
    /// events and results), its counter starting at `from` (a new feed goes on from the
    /// last one's count, so a reader's counter never comes back by chance).
    pub(crate) async fn changes(config: &Target, url: &str, from: u64) -> Result<Self, ForgeError> {
        Self::on(config, url, &[WORK_CHANNEL, EVENTS_CHANNEL], from).await
    }

    async fn on(
        config: &Target,
        url: &str,
        channels: &[&str],
        from: u64,
    ) -> Result<Self, ForgeError> {
        let listener = Listener::on(config, url, channels).await?;
        let (tx, rx) = watch::channel(from);
        let task = tokio::spawn(async move {
            // The whole listener moves in: naming only its receiver would capture only that
            // field (precise capture), and its client — the connection — would be dropped
            // here, ending the feed at once (every wait then connected again).
            let mut listener = listener;
            while listener.notifications.recv().await.is_some() {
                tx.send_modify(|n| *n = n.wrapping_add(1));
            }
        });
        Ok(Self { rx, task })
    }

    pub(crate) fn is_open(&self) -> bool {
        !self.task.is_finished()
    }

    /// The number of notifications so far (from the feed's start value).
    pub(crate) fn count(&self) -> u64 {
        *self.rx.borrow()
    }

    /// A receiver that sees the next change (not the ones before).
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        let mut rx = self.rx.clone();
        rx.mark_unchanged();
        rx
    }
}

impl Drop for EventFeed {
    fn drop(&mut self) {
        self.task.abort();
    }
}
