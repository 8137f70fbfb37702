//! Sending the approval notice through every channel and recording each answer.

use forge_domain::delivery::{Approval, ApprovalNotice, AuditAction, NotificationResult};
use forge_domain::task::TaskOutcome;

use super::{Delivery, DeliveryError};

impl Delivery {
    pub(super) fn notice(&self, outcome: &TaskOutcome, approval: &Approval) -> ApprovalNotice {
        ApprovalNotice::new(
            outcome.task_id.clone(),
            approval.id.clone(),
            outcome.task.clone(),
            (
                outcome.risk.score,
                risk_level(outcome),
                outcome.risk.reasons.clone(),
            ),
            approval.files.clone(),
            outcome.branch.clone(),
        )
    }

    /// Sends through the channels `only` names (all when `None`); a channel that fails is
    /// recorded (and retried on the next start), never fatal.
    pub(super) async fn send_notice(
        &self,
        outcome: &TaskOutcome,
        approval: &Approval,
        only: Option<&[String]>,
    ) -> Result<Vec<NotificationResult>, DeliveryError> {
        let notice = self.notice(outcome, approval);
        let mut results = Vec::new();
        for notifier in &self.ports.notifiers {
            let channel = notifier.channel().to_owned();
            if only.is_some_and(|names| !names.contains(&channel)) {
                continue;
            }
            let result = match notifier.notify(&notice).await {
                Ok(()) => NotificationResult {
                    channel: channel.clone(),
                    ok: true,
                    error: None,
                },
                Err(e) => NotificationResult {
                    channel: channel.clone(),
                    ok: false,
                    error: Some(e.to_string()),
                },
            };
            let (action, detail) = match &result.error {
                None => (AuditAction::Notified, channel.clone()),
                Some(error) => (AuditAction::NotifyFailed, format!("{channel}: {error}")),
            };
            let entry = self.entry(&outcome.task_id, action, detail);
            self.ports
                .store
                .record_notification(&approval.id, &result, self.now(), &[entry])
                .await?;
            results.push(result);
        }
        Ok(results)
    }
}

fn risk_level(outcome: &TaskOutcome) -> String {
    serde_json::to_value(outcome.risk.level)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}
