//! Helpers: the fake CLI, invocations built from knobs, and process liveness checks.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use forge_adapter_process::{TokioProcessRunner, TokioRunningProcess};
use forge_ports::{Invocation, RunningProcess, SpawnOptions, StdoutItem};

pub fn fake_cli() -> PathBuf {
    forge_testkit::fake_cli::path()
}

/// An invocation of the fake CLI with `knobs` set, in the temp dir.
pub fn fake(knobs: &[(&str, &str)]) -> Invocation {
    let mut invocation = Invocation::new(fake_cli(), Vec::new(), std::env::temp_dir());
    for (name, value) in knobs {
        invocation.env.set.insert((*name).into(), (*value).into());
    }
    invocation
}

/// Options for tests: a short drain so nothing waits long.
pub fn quick_options() -> SpawnOptions {
    SpawnOptions {
        drain_after_exit: Duration::from_millis(200),
        ..SpawnOptions::default()
    }
}

pub async fn start(invocation: Invocation, options: SpawnOptions) -> TokioRunningProcess {
    TokioProcessRunner::new()
        .start(invocation, options)
        .await
        .unwrap()
}

/// Every stdout item until the end of the stream.
pub async fn all_items(child: &mut TokioRunningProcess) -> Vec<StdoutItem> {
    let mut items = Vec::new();
    while let Some(item) = child.next_stdout().await.unwrap() {
        items.push(item);
    }
    items
}

/// The text of each line item.
pub fn texts(items: &[StdoutItem]) -> Vec<String> {
    items
        .iter()
        .filter_map(|item| match item {
            StdoutItem::Line { text, .. } => Some(text.clone()),
            StdoutItem::Oversize { .. } => None,
        })
        .collect()
}

/// Reads lines until one of JSON `type` `kind`; returns it parsed.
pub async fn until_type(child: &mut TokioRunningProcess, kind: &str) -> serde_json::Value {
    loop {
        let item = child
            .next_stdout()
            .await
            .unwrap()
            .expect("stream ended early");
        if let StdoutItem::Line { text, .. } = item {
            let value: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
            if value["type"] == kind {
                return value;
            }
        }
    }
}

/// The `pid` field of a JSON value.
pub fn pid_of(value: &serde_json::Value) -> u32 {
    u32::try_from(value["pid"].as_u64().expect("a pid")).unwrap()
}

pub use forge_testkit::procs::is_alive;

/// Waits up to `within` for every pid to be gone; returns the survivors.
pub async fn survivors_after(pids: &[u32], within: Duration) -> Vec<u32> {
    let deadline = Instant::now() + within;
    loop {
        let alive: Vec<u32> = pids.iter().copied().filter(|pid| is_alive(*pid)).collect();
        if alive.is_empty() || Instant::now() >= deadline {
            return alive;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Pids of the processes in group `pgid` (read from /proc), zombies excluded.
pub fn group_members(pgid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            let fields: Vec<&str> = stat
                .rsplit_once(')')
                .map(|(_, rest)| rest.split_whitespace().collect())
                .unwrap_or_default();
            // After the name: state, ppid, pgrp.
            fields.first().is_some_and(|s| *s != "Z" && *s != "X")
                && fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid)
        })
        .collect()
}
