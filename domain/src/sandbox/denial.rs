//! A refusal of the sandbox, as a run reports it: a `sandbox_denied` event in its stream, a
//! line of its result and of the task report.

use serde::{Deserialize, Serialize};

use crate::event::{AgentEvent, DenialKind};

/// Why forge's egress refused a connection: the one set of reasons from the proxy's rule to
/// the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "snake_case")]
pub enum DenyReason {
    #[error("the host is not in [sandbox] allow_hosts")]
    NotAllowed,
    #[error("the cloud metadata address is never reachable")]
    MetadataAddress,
    #[error("loopback is reachable only at the run's routes")]
    Loopback,
    #[error("private and link-local networks are never reachable through the proxy")]
    PrivateAddress,
    #[error("the host name does not resolve")]
    Unresolvable,
    #[error("the proxy request names no host")]
    BadRequest,
}

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

    /// A connection refused for `reason`.
    pub fn refused(target: impl Into<String>, reason: DenyReason) -> Self {
        Self::network(target, reason.to_string())
    }

    /// A refused connection to a host the allowlist could open (`[sandbox] allow_hosts`).
    pub fn is_not_allowed(&self) -> bool {
        self.kind == DenialKind::Network
            && self.reason.as_deref() == Some(DenyReason::NotAllowed.to_string().as_str())
    }

    /// The host of a refused connection (`index.crates.io` of `index.crates.io:443`).
    pub fn host(&self) -> &str {
        match self.target.rsplit_once(':') {
            Some((host, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => {
                host.trim_start_matches('[').trim_end_matches(']')
            }
            _ => &self.target,
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

/// What a failed step could not reach, one line each, for the report beside the step:
/// `build could not reach index.crates.io: the sandbox refused it — add it to [sandbox]
/// allow_hosts`; a refusal no allowlist lifts (loopback, a private or metadata address) with
/// its reason. Empty when the sandbox refused the step nothing on the network.
pub fn unreachable_lines(step: &str, denials: &[SandboxDenial]) -> Vec<String> {
    let mut allowable: Vec<&str> = Vec::new();
    let mut lines = Vec::new();
    for denial in denials.iter().filter(|d| d.kind == DenialKind::Network) {
        if denial.is_not_allowed() {
            if !allowable.contains(&denial.host()) {
                allowable.push(denial.host());
            }
            continue;
        }
        let line = match &denial.reason {
            Some(reason) => format!(
                "{step} could not reach {}: the sandbox refused it ({reason})",
                denial.target
            ),
            None => format!(
                "{step} could not reach {}: the sandbox refused it",
                denial.target
            ),
        };
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    if !allowable.is_empty() {
        let (it, hosts) = if allowable.len() == 1 {
            ("it", allowable[0].to_owned())
        } else {
            ("them", allowable.join(", "))
        };
        lines.insert(
            0,
            format!(
                "{step} could not reach {hosts}: the sandbox refused {it} — add {it} to \
                 [sandbox] allow_hosts"
            ),
        );
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_step_could_not_reach() {
        let not_allowed = |t: &str| SandboxDenial::refused(t, DenyReason::NotAllowed);
        let check = |denials: &[SandboxDenial], want: &[&str]| {
            assert_eq!(unreachable_lines("build", denials), want, "{denials:?}");
        };
        check(
            &[not_allowed("index.crates.io:443")],
            &[
                "build could not reach index.crates.io: the sandbox refused it — add it to \
                 [sandbox] allow_hosts",
            ],
        );
        // One line for a host asked for many times; several hosts together.
        check(
            &[
                not_allowed("index.crates.io:443"),
                not_allowed("index.crates.io:443"),
                not_allowed("git.internal.example:443"),
            ],
            &[
                "build could not reach index.crates.io, git.internal.example: the sandbox \
                 refused them — add them to [sandbox] allow_hosts",
            ],
        );
        // Refusals the allowlist cannot lift say why instead.
        check(
            &[SandboxDenial::refused(
                "127.0.0.1:5432",
                DenyReason::Loopback,
            )],
            &[
                "build could not reach 127.0.0.1:5432: the sandbox refused it (loopback is \
                 reachable only at the run's routes)",
            ],
        );
        // Look-alikes that are no unreachable host: a refused file, nothing refused.
        check(&[SandboxDenial::fs("/w/.vscode", "protected")], &[]);
        check(&[], &[]);
        // A reason in other words than the allowlist's is not the allowlist's.
        check(
            &[SandboxDenial::network(
                "a.example:443",
                "the host is not allowed",
            )],
            &[
                "build could not reach a.example:443: the sandbox refused it (the host is not allowed)",
            ],
        );
    }

    #[test]
    fn the_host_of_a_target() {
        let check = |target: &str, host: &str| {
            assert_eq!(SandboxDenial::network(target, "x").host(), host, "{target}");
        };
        check("index.crates.io:443", "index.crates.io");
        check("[::1]:22", "::1");
        check("pypi.org", "pypi.org");
        check("host:https", "host:https");
    }

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
