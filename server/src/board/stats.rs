//! The board's small charts: cost per day and per provider, tasks by outcome, and the
//! median duration — over the cards shown (the queue's and the local ones).

use std::collections::BTreeMap;

use serde::Serialize;

use super::card::{Card, Column};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// `YYYY-MM-DD` (UTC, the day it was submitted) → dollars, oldest first.
    pub cost_per_day: Vec<(String, f64)>,
    pub cost_per_provider: Vec<(String, f64)>,
    /// Column → tasks.
    pub by_outcome: Vec<(Column, u64)>,
    /// Of the tasks that ended; `None` when none did.
    pub median_duration_ms: Option<u64>,
    pub total_cost_usd: f64,
}

/// The UTC day of a Unix time in ms.
pub fn day(ms: u64) -> String {
    let secs = i64::try_from(ms / 1000).unwrap_or(i64::MAX);
    time::OffsetDateTime::from_unix_timestamp(secs)
        .map(|t| {
            let d = t.date();
            format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
        })
        .unwrap_or_default()
}

pub fn stats(cards: &[Card]) -> Stats {
    let mut per_day: BTreeMap<String, f64> = BTreeMap::new();
    let mut per_provider: BTreeMap<String, f64> = BTreeMap::new();
    let mut by_outcome: BTreeMap<u8, (Column, u64)> = BTreeMap::new();
    let mut durations: Vec<u64> = Vec::new();
    let mut total = 0.0;
    for card in cards {
        let cost = card.cost_usd.unwrap_or(0.0);
        total += cost;
        *per_day.entry(day(card.submitted_at_ms)).or_default() += cost;
        let provider = card
            .provider
            .clone()
            .unwrap_or_else(|| "default".to_owned());
        *per_provider.entry(provider).or_default() += cost;
        by_outcome
            .entry(card.column as u8)
            .or_insert((card.column, 0))
            .1 += 1;
        if card.finished_at_ms.is_some() {
            durations.extend(card.elapsed_ms);
        }
    }
    durations.sort_unstable();
    let median_duration_ms = match durations.len() {
        0 => None,
        n if n % 2 == 1 => durations.get(n / 2).copied(),
        n => Some((durations[n / 2 - 1] + durations[n / 2]) / 2),
    };
    Stats {
        cost_per_day: per_day.into_iter().collect(),
        cost_per_provider: per_provider.into_iter().collect(),
        by_outcome: by_outcome.into_values().collect(),
        median_duration_ms,
        total_cost_usd: total,
    }
}
