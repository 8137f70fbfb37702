//! Share link tokens: `<share_id>.<secret>`, the secret 32 random bytes in hex. The store
//! keeps the SHA-256 of the secret; a presented token is checked by digesting its secret
//! and comparing the digests in constant time.

use forge_domain::share::{ShareLink, split_token};
use forge_domain::task::TaskId;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Hex SHA-256 of a secret.
pub fn digest(secret: &str) -> String {
    hex(&Sha256::digest(secret.as_bytes()))
}

/// A new link for `task` and the token that opens it (shown once, never stored).
///
/// # Errors
/// When the operating system's random source fails.
pub fn mint(task: &TaskId, by: &str) -> Result<(ShareLink, String), getrandom::Error> {
    let mut id = [0u8; 8];
    let mut secret = [0u8; 32];
    getrandom::fill(&mut id)?;
    getrandom::fill(&mut secret)?;
    let (share_id, secret) = (format!("sh-{}", hex(&id)), hex(&secret));
    let link = ShareLink {
        share_id: share_id.clone(),
        task_id: task.clone(),
        secret_digest: digest(&secret),
        created_by: by.to_owned(),
        created_at_ms: 0,
        revoked_at_ms: None,
    };
    Ok((link, format!("{share_id}.{secret}")))
}

/// Whether `secret` opens `link`: active, and the digests equal (constant time).
pub fn opens(link: &ShareLink, secret: &str) -> bool {
    let given = digest(secret);
    let same: bool = given.as_bytes().ct_eq(link.secret_digest.as_bytes()).into();
    same && link.is_active()
}

/// The share id of a token, and its secret.
pub fn parse(token: &str) -> Option<(&str, &str)> {
    split_token(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_minted_secret_of_an_active_link_opens_it() {
        let task = TaskId::new("q-1").unwrap_or_else(|e| panic!("{e}"));
        let (link, token) = mint(&task, "serve").unwrap_or_else(|e| panic!("{e}"));
        let (id, secret) = parse(&token).unwrap_or_else(|| panic!("{token}"));
        assert_eq!(id, link.share_id);
        assert_eq!(secret.len(), 64);
        assert!(opens(&link, secret));
        // Look-alikes: one character off, cut short, empty, the digest itself.
        let mut off = secret.to_owned();
        off.replace_range(0..1, if secret.starts_with('0') { "1" } else { "0" });
        for wrong in [off.as_str(), &secret[..63], "", &link.secret_digest] {
            assert!(!opens(&link, wrong), "{wrong:?}");
        }
        let revoked = ShareLink {
            revoked_at_ms: Some(1),
            ..link.clone()
        };
        assert!(!opens(&revoked, secret));
        // Two mints never share an id or a secret.
        let (other, other_token) = mint(&task, "serve").unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(other.share_id, link.share_id);
        assert_ne!(other_token, token);
    }
}
