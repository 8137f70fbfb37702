//! A notifier that records every notice and answers from a script.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::delivery::ApprovalNotice;
use forge_ports::Notifier;

/// Answers `Ok` unless the script says otherwise (`false` = fail), one entry per call; after
/// the script, the last answer repeats.
#[derive(Clone)]
pub struct RecordingNotifier {
    channel: String,
    script: Arc<Mutex<VecDeque<bool>>>,
    sent: Arc<Mutex<Vec<ApprovalNotice>>>,
}

impl RecordingNotifier {
    pub fn new(channel: &str, script: &[bool]) -> Self {
        Self {
            channel: channel.to_owned(),
            script: Arc::new(Mutex::new(script.iter().copied().collect())),
            sent: Arc::default(),
        }
    }

    /// Every notice it was asked to send (failed ones too).
    pub fn sent(&self) -> Vec<ApprovalNotice> {
        self.sent.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

#[async_trait]
impl Notifier for RecordingNotifier {
    fn channel(&self) -> &str {
        &self.channel
    }

    async fn notify(&self, notice: &ApprovalNotice) -> Result<(), ForgeError> {
        if let Ok(mut sent) = self.sent.lock() {
            sent.push(notice.clone());
        }
        let ok = match self.script.lock() {
            Ok(mut script) if script.len() > 1 => script.pop_front().unwrap_or(true),
            Ok(script) => script.front().copied().unwrap_or(true),
            Err(_) => true,
        };
        if ok {
            Ok(())
        } else {
            Err(ForgeError::io(
                format!("notifying through {}", self.channel),
                "scripted failure",
            ))
        }
    }
}
