//! A thread's running token total before a resumed run, from its rollout.
//!
//! `codex exec resume` reports usage as the thread's running total (earlier runs included).
//! Codex records every model request in the thread's rollout,
//! `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<timestamp>-<thread_id>.jsonl`, as an
//! `event_msg` whose payload is `{"type":"token_count","info":{"total_token_usage":{…}}}`.
//! The last one before the run is the total the run's own figures are measured from, whether
//! the earlier turns ran through forge or through the CLI itself.
//!
//! Read once, before the run is spawned (the rollout grows during the run).

use std::io::BufRead;
use std::path::{Path, PathBuf};

use forge_domain::Usage;
use serde::Deserialize;

use crate::wire::WireUsage;

/// The thread's last recorded running total: `None` when no rollout of the thread is found
/// under `codex_home`; zero when one is found without a token count (nothing consumed yet).
pub fn thread_total(codex_home: &Path, thread_id: &str) -> Option<Usage> {
    let file = find(&codex_home.join("sessions"), thread_id)?;
    let reader = std::io::BufReader::new(std::fs::File::open(file).ok()?);
    let mut total = Usage::default();
    for line in reader.lines() {
        let Ok(line) = line else { break };
        // Most lines are messages and tool output: only token counts are parsed.
        if !line.contains("\"token_count\"") {
            continue;
        }
        if let Some(usage) = token_count(&line) {
            total = usage;
        }
    }
    Some(total)
}

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    payload: Option<Payload>,
}

#[derive(Deserialize)]
struct Payload {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    info: Option<Info>,
}

#[derive(Deserialize)]
struct Info {
    #[serde(default)]
    total_token_usage: Option<WireUsage>,
}

/// The running total of one `token_count` line.
fn token_count(line: &str) -> Option<Usage> {
    let payload = serde_json::from_str::<Line>(line).ok()?.payload?;
    if payload.kind.as_deref() != Some("token_count") {
        return None;
    }
    payload.info?.total_token_usage.map(WireUsage::to_usage)
}

/// The thread's rollout: the newest date directory first, as resumed threads are mostly
/// recent. A few levels deep only (year, month, day).
fn find(dir: &Path, thread_id: &str) -> Option<PathBuf> {
    let suffix = format!("-{thread_id}.jsonl");
    find_in(dir, &suffix, 0)
}

fn find_in(dir: &Path, suffix: &str, depth: u8) -> Option<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort_unstable_by(|a, b| b.cmp(a));
    for path in entries {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name.starts_with("rollout-") && name.ends_with(suffix) && path.is_file() {
            return Some(path);
        }
        if depth < 3 && path.is_dir() {
            if let Some(found) = find_in(&path, suffix, depth + 1) {
                return Some(found);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const THREAD: &str = "01a211f1-ec23-7e80-9234-4cdb23a87ca5";

    fn count(input: u64, output: u64) -> String {
        format!(
            r#"{{"timestamp":"t","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{input},"cached_input_tokens":2,"output_tokens":{output},"reasoning_output_tokens":0,"total_tokens":0}},"last_token_usage":{{"input_tokens":1}}}}}}}}"#
        )
    }

    fn home_with(lines: &[String], day: &str) -> tempfile::TempDir {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("sessions/2026/11").join(day);
        std::fs::create_dir_all(&dir).unwrap();
        let name = format!("rollout-2026-11-{day}T09-03-17-{THREAD}.jsonl");
        std::fs::write(dir.join(name), lines.join("\n")).unwrap();
        home
    }

    #[test]
    fn the_last_token_count_is_the_total_before_the_run() {
        let lines = [
            r#"{"type":"session_meta","payload":{"id":"x"}}"#.to_owned(),
            count(9569, 3),
            r#"{"type":"event_msg","payload":{"type":"agent_message","message":"token_count"}}"#
                .to_owned(),
            count(19226, 13),
            r#"{"type":"event_msg","payload":{"type":"token_count","info":null}}"#.to_owned(),
            "not json \"token_count\"".to_owned(),
        ];
        let home = home_with(&lines, "25");
        let total = thread_total(home.path(), THREAD).unwrap();
        assert_eq!(
            (
                total.input_tokens,
                total.output_tokens,
                total.cache_read_tokens
            ),
            (19226, 13, 2)
        );
    }

    #[test]
    fn a_rollout_without_counts_is_zero_and_another_thread_is_none() {
        let home = home_with(&[r#"{"type":"session_meta"}"#.to_owned()], "24");
        assert_eq!(thread_total(home.path(), THREAD), Some(Usage::default()));
        assert_eq!(thread_total(home.path(), "01a211f1-0000"), None);
        assert_eq!(thread_total(Path::new("/nonexistent/codex"), THREAD), None);
    }
}
