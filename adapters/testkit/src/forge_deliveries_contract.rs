//! The contract every [`ForgeDeliveries`] implementation keeps (the SQLite and the
//! PostgreSQL adapter): a delivery id acts once — also when two machines race on it —, ids
//! of different sources do not collide, and `forge poll`'s cursor reads back as last stored.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed step should fail the test"
)]

use forge_ports::ForgeDeliveries;

/// Runs every check on `store` (an empty store); `other` is a second handle on it (another
/// machine).
pub async fn check(store: &dyn ForgeDeliveries, other: &dyn ForgeDeliveries) {
    assert!(!store.delivery_seen("github", "d-1").await.unwrap());
    assert!(store.first_delivery("github", "d-1").await.unwrap());
    // A redelivery, here or on another machine, does nothing.
    assert!(!store.first_delivery("github", "d-1").await.unwrap());
    assert!(!other.first_delivery("github", "d-1").await.unwrap());
    assert!(other.delivery_seen("github", "d-1").await.unwrap());
    // The same id from another source is another delivery.
    assert!(other.first_delivery("gitlab", "d-1").await.unwrap());
    // Two machines racing on one new id: exactly one acts.
    let (a, b) = tokio::join!(
        store.first_delivery("github", "d-2"),
        other.first_delivery("github", "d-2")
    );
    assert!(a.unwrap() ^ b.unwrap(), "exactly one of the two acts");

    assert_eq!(store.cursor("github").await.unwrap(), None);
    store.set_cursor("github", "etag-1").await.unwrap();
    assert_eq!(
        other.cursor("github").await.unwrap().as_deref(),
        Some("etag-1")
    );
    other.set_cursor("github", "etag-2").await.unwrap();
    assert_eq!(
        store.cursor("github").await.unwrap().as_deref(),
        Some("etag-2")
    );
    assert_eq!(store.cursor("gitlab").await.unwrap(), None);
}
