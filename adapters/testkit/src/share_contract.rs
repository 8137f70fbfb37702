//! The contract every [`ShareLinks`] implementation keeps (the SQLite and the PostgreSQL
//! adapter): a link reads back as stored (its secret's digest, never more), an id is used
//! once, a task lists its links, and a revocation is written once.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed step should fail the test"
)]

use forge_domain::ForgeError;
use forge_domain::share::ShareLink;
use forge_domain::task::TaskId;
use forge_ports::ShareLinks;

fn link(id: &str, task: &str) -> ShareLink {
    ShareLink {
        share_id: id.to_owned(),
        task_id: TaskId::new(task).unwrap(),
        secret_digest: format!("digest-of-{id}"),
        created_by: "serve".to_owned(),
        created_at_ms: 0,
        revoked_at_ms: None,
    }
}

/// Runs every check on `links` (an empty store); `other` is a second handle on it (another
/// machine).
pub async fn check(links: &dyn ShareLinks, other: &dyn ShareLinks) {
    let made = links.create_share(&link("sh-1", "q-1")).await.unwrap();
    assert!(made.created_at_ms > 0, "{made:?}");
    assert!(made.is_active());
    assert_eq!(made.secret_digest, "digest-of-sh-1");
    // Read from the other machine, as stored.
    assert_eq!(other.share("sh-1").await.unwrap(), Some(made.clone()));
    assert_eq!(other.share("sh-2").await.unwrap(), None);
    // An id is used once.
    let again = other.create_share(&link("sh-1", "q-2")).await;
    assert!(
        matches!(again, Err(ForgeError::InvalidRequest { .. })),
        "{again:?}"
    );
    // A task's links, and only its own (a local task's id too: no foreign key).
    links.create_share(&link("sh-2", "q-1")).await.unwrap();
    links.create_share(&link("sh-3", "t-local")).await.unwrap();
    let ids = |v: Vec<ShareLink>| v.into_iter().map(|l| l.share_id).collect::<Vec<_>>();
    let q1 = TaskId::new("q-1").unwrap();
    assert_eq!(ids(other.shares(&q1).await.unwrap()), ["sh-1", "sh-2"]);
    // Revoked once: the first time stands; an unknown id is `None`.
    let revoked = other.revoke_share("sh-1").await.unwrap().unwrap();
    let at = revoked.revoked_at_ms.unwrap();
    assert!(!revoked.is_active());
    let twice = links.revoke_share("sh-1").await.unwrap().unwrap();
    assert_eq!(twice.revoked_at_ms, Some(at));
    assert_eq!(links.revoke_share("sh-9").await.unwrap(), None);
    // The other links stay active.
    assert!(links.share("sh-2").await.unwrap().unwrap().is_active());
}
