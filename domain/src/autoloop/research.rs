//! The research cache: a researcher's answer kept by normalised query for `cache_minutes`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResearchCache {
    pub entries: BTreeMap<String, CachedAnswer>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedAnswer {
    pub answer: String,
    pub stored_at_ms: u64,
}

/// The cache key of a query: lower case, inner whitespace collapsed, surrounding
/// whitespace and trailing `?`, `.`, `!` dropped. Different wording stays different.
pub fn normalise_query(query: &str) -> String {
    let collapsed = query
        .split_whitespace()
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ");
    collapsed
        .trim_end_matches(['?', '.', '!'])
        .trim_end()
        .to_owned()
}

impl ResearchCache {
    /// The answer to `query` if it was stored less than `ttl_minutes` before `now_ms`.
    pub fn lookup(&self, query: &str, now_ms: u64, ttl_minutes: u64) -> Option<&str> {
        let entry = self.entries.get(&normalise_query(query))?;
        let age = now_ms.saturating_sub(entry.stored_at_ms);
        (age < ttl_minutes.saturating_mul(60_000)).then_some(entry.answer.as_str())
    }

    pub fn insert(&mut self, query: &str, answer: String, now_ms: u64) {
        self.entries.insert(
            normalise_query(query),
            CachedAnswer {
                answer,
                stored_at_ms: now_ms,
            },
        );
    }

    /// Drops expired entries so the saved state does not grow without bound.
    pub fn purge_expired(&mut self, now_ms: u64, ttl_minutes: u64) {
        let ttl = ttl_minutes.saturating_mul(60_000);
        self.entries
            .retain(|_, e| now_ms.saturating_sub(e.stored_at_ms) < ttl);
    }
}
