//! The e2e groups' one worker pool: cases run `jobs` at a time, each verdict timed and
//! printed as it ends.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Instant;

use super::say;
use super::summary::Verdict;

/// Runs `run` on every item, `jobs` at a time, the first items first. Each verdict is
/// timed (unless the group timed it) and printed (`group case provider status
/// ok|FAILED (seconds) note`) as it ends; all are returned, in the order they ended.
pub fn run_all<T: Send>(
    group: &str,
    items: Vec<T>,
    jobs: usize,
    run: impl Fn(T) -> Verdict + Sync,
) -> Vec<Verdict> {
    say(&format!(
        "{group}: {} cases, {} at a time",
        items.len(),
        jobs.max(1)
    ));
    let queue = Mutex::new(VecDeque::from(items));
    let verdicts = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| {
                loop {
                    let next = queue.lock().ok().and_then(|mut q| q.pop_front());
                    let Some(item) = next else { return };
                    let started = Instant::now();
                    let mut verdict = run(item);
                    if verdict.seconds == 0.0 {
                        verdict.seconds = started.elapsed().as_secs_f64();
                    }
                    let line = format!(
                        "{group} {:<24} {:<7} {} {} ({:.1}s) {}",
                        verdict.case,
                        verdict.provider,
                        verdict.status,
                        if verdict.passed() { "ok" } else { "FAILED" },
                        verdict.seconds,
                        verdict.note,
                    );
                    say(line.trim_end());
                    if let Ok(mut all) = verdicts.lock() {
                        all.push(verdict);
                    }
                }
            });
        }
    });
    verdicts.into_inner().unwrap_or_default()
}
