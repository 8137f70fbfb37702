//! A refusal of the sandbox, as a run reports it: a `sandbox_denied` event in its stream, a
//! line of its result and of the task report.

use serde::{Deserialize, Serialize};

use crate::event::{AgentEvent, DenialKind};

/// One thing the sandbox refused (a connection forge's egress refused).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxDenial {
    pub kind: DenialKind,
    /// `host:port` for a connection, the path for a file.
    pub target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl SandboxDenial {
    /// A refused connection to `target`.
    pub fn network(target: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            kind: DenialKind::Network,
            target: target.into(),
            reason: Some(reason.into()),
        }
    }

    /// A refused write to the file `target`.
    pub fn fs(target: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            kind: DenialKind::Fs,
            target: target.into(),
            reason: Some(reason.into()),
        }
    }

    /// The event of the run's stream.
    pub fn event(&self) -> AgentEvent {
        AgentEvent::SandboxDenied {
            kind: self.kind,
            target: self.target.clone(),
            reason: self.reason.clone(),
        }
    }

    /// The refusal an event reports, if it is one.
    pub fn from_event(event: &AgentEvent) -> Option<Self> {
        match event {
            AgentEvent::SandboxDenied {
                kind,
                target,
                reason,
            } => Some(Self {
                kind: *kind,
                target: target.clone(),
                reason: reason.clone(),
            }),
            _ => None,
        }
    }

    /// `connection to 127.0.0.1:22 refused (loopback is …)`, for reports.
    pub fn describe(&self) -> String {
        let what = match self.kind {
            DenialKind::Network => "connection to",
            DenialKind::Fs => "access to",
        };
        match &self.reason {
            Some(reason) => format!("{what} {} refused: {reason}", self.target),
            None => format!("{what} {} refused", self.target),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_denial_is_its_event_and_back() {
        let denial = SandboxDenial::network("127.0.0.1:22", "loopback");
        let event = denial.event();
        assert_eq!(
            serde_json::to_string(&event).unwrap(),
            r#"{"type":"sandbox_denied","kind":"network","target":"127.0.0.1:22","reason":"loopback"}"#
        );
        assert_eq!(SandboxDenial::from_event(&event), Some(denial.clone()));
        assert_eq!(
            denial.describe(),
            "connection to 127.0.0.1:22 refused: loopback"
        );
        assert_eq!(
            SandboxDenial::from_event(&AgentEvent::Warning {
                message: "x".into()
            }),
            None
        );
    }
}
