//! One reader of the pending permission requests for every open stream.
//!
//! The requests are rows of a store that other processes write too (a queued task's worker,
//! `permissions allow --queue` on another machine) and the store has no change feed, so
//! someone must read it every [`POLL_MS`]. Each stream reading on its own would cost the
//! database one query per open page per poll; instead the first stream to subscribe starts
//! one poller, every stream watches its last reading ([`tokio::sync::watch`]), and the
//! poller stops when the last stream has gone. A stream then diffs the reading against
//! what it has sent (`routes/permission_feed.rs`).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use forge_domain::permission::PermissionRequest;
use forge_ports::PermissionRequests;
use tokio::sync::watch;

/// How often the store is read: a request reaches the pages within this.
pub const POLL_MS: u64 = 500;

/// The store's pending requests as last read.
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    /// The poller has not read the store yet.
    NotYet,
    /// Every pending request, oldest first.
    Pending(Arc<Vec<PermissionRequest>>),
    /// The store could not be read; it is read again at the next poll.
    Unreachable(String),
}

pub struct PermissionWatch {
    store: Arc<dyn PermissionRequests>,
    /// The running poller's readings (`None`: no poller runs). Kept here so a new stream
    /// joins the running poller; the poller stops when this is the last receiver.
    readings: Mutex<Option<watch::Receiver<Reading>>>,
}

impl PermissionWatch {
    pub fn new(store: Arc<dyn PermissionRequests>) -> Arc<Self> {
        Arc::new(Self {
            store,
            readings: Mutex::new(None),
        })
    }

    /// The store itself, for what a stream asks of one request (how it was decided).
    pub fn store(&self) -> &Arc<dyn PermissionRequests> {
        &self.store
    }

    /// Whether a poller runs (some stream watches).
    pub fn is_polling(&self) -> bool {
        self.readings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// The readings of the poller, started when none runs.
    pub fn subscribe(self: &Arc<Self>) -> watch::Receiver<Reading> {
        let mut readings = self.readings.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(running) = readings.as_ref() {
            return running.clone();
        }
        let (sender, receiver) = watch::channel(Reading::NotYet);
        *readings = Some(receiver.clone());
        tokio::spawn(Arc::clone(self).poll(sender));
        receiver
    }

    async fn poll(self: Arc<Self>, sender: watch::Sender<Reading>) {
        loop {
            let reading = match self.store.pending_permissions(None).await {
                Ok(listed) => Reading::Pending(Arc::new(listed)),
                Err(e) => Reading::Unreachable(e.to_string()),
            };
            // Only a change wakes the streams (an unreachable store is said once).
            sender.send_if_modified(|last| {
                let changed = *last != reading;
                *last = reading;
                changed
            });
            tokio::time::sleep(Duration::from_millis(POLL_MS)).await;
            let mut readings = self.readings.lock().unwrap_or_else(PoisonError::into_inner);
            // Streams subscribe under this lock: with only the kept receiver left, no
            // stream watches and none can join before the poller is forgotten.
            if sender.receiver_count() <= 1 {
                *readings = None;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use async_trait::async_trait;
    use forge_adapter_store::SqliteStore;
    use forge_domain::ForgeError;
    use forge_domain::permission::{
        PermissionDecided, PermissionDecision, PermissionId, PermissionOwner,
    };

    use super::*;

    /// A real store that counts the reads of its pending requests.
    struct Counting {
        store: SqliteStore,
        reads: AtomicUsize,
    }

    #[async_trait]
    impl PermissionRequests for Counting {
        async fn ask_permission(
            &self,
            request: &PermissionRequest,
            timeout_ms: u64,
        ) -> Result<PermissionRequest, ForgeError> {
            self.store.ask_permission(request, timeout_ms).await
        }
        async fn permission(
            &self,
            id: &PermissionId,
        ) -> Result<Option<PermissionRequest>, ForgeError> {
            self.store.permission(id).await
        }
        async fn pending_permissions(
            &self,
            owner: Option<&PermissionOwner>,
        ) -> Result<Vec<PermissionRequest>, ForgeError> {
            self.reads.fetch_add(1, Ordering::SeqCst);
            self.store.pending_permissions(owner).await
        }
        async fn decide_permission(
            &self,
            id: &PermissionId,
            decision: &PermissionDecision,
        ) -> Result<Option<PermissionDecided>, ForgeError> {
            self.store.decide_permission(id, decision).await
        }
        async fn expire_permissions(&self) -> Result<Vec<PermissionRequest>, ForgeError> {
            self.store.expire_permissions().await
        }
        async fn close_permissions(
            &self,
            owner: &PermissionOwner,
            decision: &PermissionDecision,
        ) -> Result<Vec<PermissionRequest>, ForgeError> {
            self.store.close_permissions(owner, decision).await
        }
        async fn wait_for_permission(
            &self,
            id: &PermissionId,
            timeout_ms: u64,
        ) -> Result<Option<PermissionRequest>, ForgeError> {
            self.store.wait_for_permission(id, timeout_ms).await
        }
    }

    fn reads(store: &Counting) -> usize {
        store.reads.load(Ordering::SeqCst)
    }

    /// Waits (a guard of 10 s, not a measure) until `done` holds.
    async fn until(done: impl Fn() -> bool) {
        tokio::time::timeout(Duration::from_secs(10), async {
            while !done() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .unwrap();
    }

    #[tokio::test]
    async fn every_stream_shares_the_one_poller_which_stops_with_the_last_stream() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Counting {
            store: SqliteStore::open(dir.path().join("forge.db")).unwrap(),
            reads: AtomicUsize::new(0),
        });
        let watch = PermissionWatch::new(store.clone());
        let mut streams: Vec<_> = (0..50).map(|_| watch.subscribe()).collect();
        for stream in &mut streams {
            stream
                .wait_for(|r| matches!(r, Reading::Pending(p) if p.is_empty()))
                .await
                .unwrap();
        }
        // Read per stream, 50 streams would take 50 reads to see the store once.
        let seen = reads(&store);
        assert!(seen < 5, "50 streams saw the store after {seen} reads");
        assert!(watch.is_polling());

        drop(streams);
        until(|| !watch.is_polling()).await;
        let stopped = reads(&store);
        tokio::time::sleep(Duration::from_millis(POLL_MS * 3)).await;
        assert_eq!(reads(&store), stopped, "no stream, no reads");

        // A new stream starts a poller again.
        let mut again = watch.subscribe();
        again.wait_for(|r| *r != Reading::NotYet).await.unwrap();
        assert_eq!(reads(&store), stopped + 1);
    }
}
