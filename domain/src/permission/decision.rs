//! Decisions on a permission request, and the rule that the first one stands.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::request::PermissionRequest;

/// The message an agent gets when nobody answered in time. It says not to ask again: an
/// agent that only sees "denied" tries the same tool once more (vibe-kanban PR #2485).
pub const TIMEOUT_MESSAGE: &str = "nobody answered this permission request in time, so it \
     is denied; do not ask for it again — stop and report what you could not do";

/// What was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// This once.
    Allow,
    /// This and the same again for the rest of the session (ACP `allow_always`; claude's
    /// suggested permissions).
    AllowSession,
    Deny,
}

impl Verdict {
    pub const ALL: [Verdict; 3] = [Verdict::Allow, Verdict::AllowSession, Verdict::Deny];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::AllowSession => "allow_session",
            Self::Deny => "deny",
        }
    }

    pub fn allows(self) -> bool {
        self != Self::Deny
    }
}

impl std::str::FromStr for Verdict {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| format!("unknown decision {s:?}: expected allow, allow_session or deny"))
    }
}

/// Who or what decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum DecidedBy {
    /// A person, by the name they answered under (the terminal's user, the API's caller).
    Person { name: String },
    /// A `[permissions]` rule, quoted as written.
    Rule { rule: String },
    /// Nobody answered before the request expired.
    Timeout,
    /// The run was cancelled (or ended) first.
    Cancelled,
}

/// A decision as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionDecision {
    pub decision: Verdict,
    /// A deny's message for the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub by: DecidedBy,
    /// When it was decided (Unix ms, the store's clock); ignored when deciding.
    #[serde(default)]
    pub decided_at_ms: u64,
}

impl PermissionDecision {
    /// A person's answer. A message goes with a deny only (an allow has nowhere to carry
    /// it), and is refused with an allow rather than dropped.
    ///
    /// # Errors
    /// A reason when an allow carries a message.
    pub fn person(
        verdict: Verdict,
        message: Option<String>,
        name: impl Into<String>,
    ) -> Result<Self, String> {
        let message = message.filter(|m| !m.trim().is_empty());
        if verdict.allows() && message.is_some() {
            return Err(format!(
                "a message goes with deny only ({} has no way to pass it on)",
                verdict.as_str()
            ));
        }
        Ok(Self {
            decision: verdict,
            message,
            by: DecidedBy::Person { name: name.into() },
            decided_at_ms: 0,
        })
    }

    /// A rule's answer.
    pub fn rule(verdict: Verdict, rule: impl Into<String>) -> Self {
        let rule = rule.into();
        let message =
            (verdict == Verdict::Deny).then(|| format!("denied by forge's permission rule {rule}"));
        Self {
            decision: verdict,
            message,
            by: DecidedBy::Rule { rule },
            decided_at_ms: 0,
        }
    }

    /// Nobody answered in time: a deny that tells the agent to stop.
    pub fn timeout() -> Self {
        Self {
            decision: Verdict::Deny,
            message: Some(TIMEOUT_MESSAGE.to_owned()),
            by: DecidedBy::Timeout,
            decided_at_ms: 0,
        }
    }

    /// The run ended first.
    pub fn cancelled() -> Self {
        Self {
            decision: Verdict::Deny,
            message: Some("the run was cancelled".to_owned()),
            by: DecidedBy::Cancelled,
            decided_at_ms: 0,
        }
    }

    /// Whether the agent should stop its turn instead of going on without the tool
    /// (claude's `interrupt`): after a timeout or a cancel, so it does not ask again.
    pub fn interrupt(&self) -> bool {
        matches!(self.by, DecidedBy::Timeout | DecidedBy::Cancelled)
    }

    /// `timeout` for a timeout, else the verdict (the event's word).
    pub fn outcome_word(&self) -> &'static str {
        match self.by {
            DecidedBy::Timeout => "timeout",
            DecidedBy::Cancelled => "cancelled",
            _ => self.decision.as_str(),
        }
    }
}

impl fmt::Display for PermissionDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.decision.as_str())?;
        match &self.by {
            DecidedBy::Person { name } => write!(f, " by {name}")?,
            DecidedBy::Rule { rule } => write!(f, " by rule {rule}")?,
            DecidedBy::Timeout => f.write_str(" (timeout)")?,
            DecidedBy::Cancelled => f.write_str(" (run cancelled)")?,
        }
        if let Some(message) = &self.message {
            write!(f, ": {message}")?;
        }
        Ok(())
    }
}

/// A second decision, refused: the first one, which stands.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("permission request {id} was already decided: {first}")]
pub struct AlreadyDecided {
    pub id: String,
    pub first: PermissionDecision,
}

/// What a decision came to in a store.
#[derive(Debug, Clone, PartialEq)]
pub enum PermissionDecided {
    /// This decision stands; the request as it now is.
    Now(PermissionRequest),
    /// Another came first; the request as that one left it.
    Already(PermissionRequest),
}

impl PermissionDecided {
    pub fn request(&self) -> &PermissionRequest {
        match self {
            Self::Now(r) | Self::Already(r) => r,
        }
    }

    /// The refusal of a decision that came second.
    pub fn refusal(&self) -> Option<AlreadyDecided> {
        match self {
            Self::Now(_) => None,
            Self::Already(r) => r.decision.clone().map(|first| AlreadyDecided {
                id: r.id.to_string(),
                first,
            }),
        }
    }
}

impl PermissionRequest {
    /// Decides the request once: the first decision stands, a later one is refused naming
    /// it. (The stores do the same in one conditional write; this is the rule they keep.)
    ///
    /// # Errors
    /// [`AlreadyDecided`] with the first decision.
    pub fn decide(&mut self, decision: PermissionDecision) -> Result<(), AlreadyDecided> {
        match &self.decision {
            Some(first) => Err(AlreadyDecided {
                id: self.id.to_string(),
                first: first.clone(),
            }),
            None => {
                self.decision = Some(decision);
                Ok(())
            }
        }
    }
}
