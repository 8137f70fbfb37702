//! Share links: a read-only capability for one task, for a person without the server's
//! token. The link carries `<share_id>.<secret>`; the store keeps the id, the task and a
//! digest of the secret (never the secret), so a leaked database row opens nothing.

use serde::{Deserialize, Serialize};

use crate::task::TaskId;

/// A share link as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShareLink {
    pub share_id: String,
    pub task_id: TaskId,
    /// Hex SHA-256 of the secret half of the token.
    #[serde(skip_serializing)]
    pub secret_digest: String,
    /// Who made it (the owner, who may revoke it).
    pub created_by: String,
    /// When it was recorded (Unix ms, the store's clock); ignored when recording.
    #[serde(default)]
    pub created_at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at_ms: Option<u64>,
}

impl ShareLink {
    /// Still opens its task.
    pub fn is_active(&self) -> bool {
        self.revoked_at_ms.is_none()
    }
}

/// The two halves of a presented token `<share_id>.<secret>`; `None` for anything else.
pub fn split_token(token: &str) -> Option<(&str, &str)> {
    let (id, secret) = token.split_once('.')?;
    let plain =
        |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    (plain(id) && plain(secret)).then_some((id, secret))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_split_into_id_and_secret() {
        let check = |token: &str, expected: Option<(&str, &str)>| {
            assert_eq!(split_token(token), expected, "{token:?}");
        };
        check("sh-1.abc", Some(("sh-1", "abc")));
        check("sh-0193.deadBEEF09", Some(("sh-0193", "deadBEEF09")));
        // Look-alikes: no secret, no id, two dots, a path, spaces.
        check("sh-1", None);
        check("sh-1.", None);
        check(".abc", None);
        check("sh-1.abc.def", None);
        check("../x.abc", None);
        check("sh 1.abc", None);
    }
}
