//! The contract every [`SessionArchives`] implementation keeps (the SQLite and the
//! PostgreSQL adapter): an archive stored by one machine reads back on another, the last
//! stored of a session wins (a follow-up's, holding the whole conversation), a task's later
//! attempt replaces its archive, and an archive that fails its check is refused.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed step should fail the test"
)]

use forge_domain::ForgeError;
use forge_domain::session_archive::{MAX_ARCHIVE_BYTES, SessionArchive, SessionFile};
use forge_domain::task::TaskId;
use forge_ports::SessionArchives;

fn archive(session: &str, text: &str) -> SessionArchive {
    SessionArchive {
        provider: "claude".into(),
        session_id: session.into(),
        workdir: "/w/t1".into(),
        files: vec![SessionFile {
            path: format!(".claude/projects/-w-t1/{session}.jsonl"),
            text: text.into(),
        }],
    }
}

/// Runs every check on `store` (an empty store); `other` is a second handle on it (another
/// machine).
pub async fn check(store: &dyn SessionArchives, other: &dyn SessionArchives) {
    let id = |s: &str| TaskId::new(s).unwrap();
    assert_eq!(store.session_archive("claude", "s-1").await.unwrap(), None);
    store
        .put_session_archive(&id("t1"), &archive("s-1", "first"))
        .await
        .unwrap();
    assert_eq!(
        other.session_archive("claude", "s-1").await.unwrap(),
        Some(archive("s-1", "first"))
    );
    // Another provider's session of the same id is another session.
    assert_eq!(other.session_archive("codex", "s-1").await.unwrap(), None);
    // A follow-up resumed the session: its archive is the one read back.
    other
        .put_session_archive(&id("t2"), &archive("s-1", "first, then more"))
        .await
        .unwrap();
    assert_eq!(
        store.session_archive("claude", "s-1").await.unwrap(),
        Some(archive("s-1", "first, then more"))
    );
    // The first task taken over and run again: its new archive replaces its old one.
    store
        .put_session_archive(&id("t1"), &archive("s-1", "again"))
        .await
        .unwrap();
    assert_eq!(
        other.session_archive("claude", "s-1").await.unwrap(),
        Some(archive("s-1", "again"))
    );
    // Refused: a path outside the home, an archive over the size limit.
    let mut escaping = archive("s-2", "x");
    escaping.files[0].path = "../../.ssh/authorized_keys".into();
    let too_big = archive("s-3", &"x".repeat(MAX_ARCHIVE_BYTES + 1));
    for bad in [escaping, too_big] {
        let refused = store.put_session_archive(&id("t3"), &bad).await;
        assert!(
            matches!(refused, Err(ForgeError::InvalidRequest { .. })),
            "{refused:?}"
        );
        let stored = other.session_archive("claude", &bad.session_id).await;
        assert_eq!(stored.unwrap(), None);
    }
}
