use pretty_assertions::assert_eq;

use crate::autoloop::research::{ResearchCache, normalise_query};

#[test]
fn query_normalisation() {
    let check = |q: &str, want: &str| assert_eq!(normalise_query(q), want, "{q:?}");
    check("Which serde version?", "which serde version");
    check("  which   SERDE\tversion  ", "which serde version");
    check("which serde version ?!", "which serde version");
    check("which serde version.", "which serde version");
    // Look-alikes that stay different.
    check("which serde versions", "which serde versions");
    check("which serde-version", "which serde-version");
    check("what is 1.5", "what is 1.5");
}

#[test]
fn cache_hits_until_the_entry_expires() {
    const MIN: u64 = 60_000;
    let mut cache = ResearchCache::default();
    let t0 = 5_000_000;
    cache.insert("Which serde version?", "1.54".into(), t0);
    // The fake clock moves on; ttl 10 minutes.
    let cases = [
        ("which serde version", t0, Some("1.54")),
        ("WHICH SERDE VERSION", t0 + 9 * MIN, Some("1.54")),
        ("which serde version", t0 + 10 * MIN - 1, Some("1.54")),
        ("which serde version", t0 + 10 * MIN, None),
        ("which serde versions", t0, None),
        // A clock that went backwards does not expire anything.
        ("which serde version", t0 - MIN, Some("1.54")),
    ];
    for (q, now, want) in cases {
        assert_eq!(
            cache.lookup(q, now, 10),
            want,
            "{q} at +{}",
            now.saturating_sub(t0)
        );
    }
    cache.insert("other", "x".into(), t0 + 5 * MIN);
    cache.purge_expired(t0 + 10 * MIN, 10);
    assert_eq!(cache.entries.keys().collect::<Vec<_>>(), vec!["other"]);
}
