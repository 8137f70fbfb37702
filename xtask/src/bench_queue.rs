//! `cargo xtask bench --queue`: the task queue on PostgreSQL (a fresh database on
//! `FORGE_TEST_POSTGRES_URL`, else the machine's server), measured in one run:
//!
//! 1. throughput: `--tasks` tasks (default 200) whose agent — the fake CLI — takes 1 s,
//!    drained by 1 worker and then by 4; the ratio (target ≥ 3.5×);
//! 2. with 4 idle workers, tasks submitted one at a time: wake-up (submit → claimed, on the
//!    database's clock; target p50 ≤ 100 ms) and queue overhead (submit → completed less the
//!    task's own work, the agent process's run as the worker measured it; target p50 ≤ 10 ms).
//!
//! The workers are forge's own [`Worker`]s, each with its own connections and `LISTEN` (as
//! on separate machines), in this process; each task's run is the fake CLI in a process of
//! its own, so what is measured is the queue — claims, leases, heartbeats, events, results —
//! not the guarded pipeline around the agent (the `queue` e2e group runs that).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use async_trait::async_trait;
use forge_adapter_postgres::PgQueue;
use forge_app::queue::{QueuedTaskRunner, RunEnd, TaskEvent, Worker, WorkerConfig, WorkerEvent};
use forge_domain::queue::{QueueSubmission, QueuedTask};
use forge_domain::task::TaskId;
use forge_ports::TaskQueue;
use forge_testkit::postgres::FreshDb;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::bench_queue_phases::{Breakdown, PHASES, TimedQueue, Timeline};
use crate::e2e::say;

/// The agent's work: 10 events 100 ms apart.
const AGENT_EVENTS: &str = "10";
const AGENT_INTERVAL_US: &str = "100000";

/// Runs the fake CLI as a task's agent and reports how long its process took.
struct FakeAgent {
    fake: std::path::PathBuf,
    timeline: Timeline,
}

#[async_trait]
impl QueuedTaskRunner for FakeAgent {
    async fn run(
        &self,
        task: &QueuedTask,
        stop: CancellationToken,
        _events: mpsc::UnboundedSender<TaskEvent>,
    ) -> RunEnd {
        let started = Instant::now();
        self.timeline
            .mark(&task.task_id, |m| m.run_started = Some(started));
        let child = tokio::process::Command::new(&self.fake)
            .env("FAKE_EVENTS", AGENT_EVENTS)
            .env("FAKE_EVENTS_INTERVAL_US", AGENT_INTERVAL_US)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) => {
                return RunEnd {
                    error: Some(format!("starting the fake CLI: {e}")),
                    ..RunEnd::default()
                };
            }
        };
        let code = tokio::select! {
            status = child.wait() => status.ok().and_then(|s| s.code()),
            () = stop.cancelled() => None,
        };
        let ended = Instant::now();
        self.timeline
            .mark(&task.task_id, |m| m.run_ended = Some(ended));
        let work_us = u64::try_from(ended.duration_since(started).as_micros()).unwrap_or(u64::MAX);
        RunEnd {
            exit_code: code,
            report: Some(serde_json::json!({"work_us": work_us})),
            error: None,
        }
    }
}

struct Pool {
    stop: CancellationToken,
    timeline: Timeline,
    workers: Vec<tokio::task::JoinHandle<()>>,
    finished: mpsc::UnboundedReceiver<TaskId>,
}

/// `n` workers, each with its own connections to `url`.
async fn start_workers(url: &str, n: usize, fake: &std::path::Path) -> anyhow::Result<Pool> {
    let stop = CancellationToken::new();
    let timeline = Timeline::default();
    let (tx, finished) = mpsc::unbounded_channel();
    let mut workers = Vec::new();
    for i in 0..n {
        let queue: Arc<dyn TaskQueue> = Arc::new(TimedQueue::new(
            Arc::new(PgQueue::connect(url).await?),
            timeline.clone(),
        ));
        let runner = Arc::new(FakeAgent {
            fake: fake.to_path_buf(),
            timeline: timeline.clone(),
        });
        let mut config = WorkerConfig::new(format!("w{i}"));
        // Not a divisor of the agent's ~1 s run: with 250 ms a renewal (a durable commit)
        // would start just before every run ends and the result would wait behind it,
        // which a task of any other length meets about once in 60 (commit / period).
        config.heartbeat_ms = 300;
        let (events_tx, mut events) = mpsc::unbounded_channel();
        let (tx, timeline) = (tx.clone(), timeline.clone());
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                match event {
                    WorkerEvent::Finished { task, .. } => {
                        let now = Instant::now();
                        timeline.mark(&task, |m| m.told = Some(now));
                        let _ = tx.send(task);
                    }
                    WorkerEvent::QueueError { doing, error } => {
                        say(&format!("queue error while {doing}: {error}"));
                    }
                    _ => {}
                }
            }
        });
        let worker = Worker::new(queue, runner, config).events(events_tx);
        let stop = stop.clone();
        workers.push(tokio::spawn(async move {
            worker.run(stop).await;
        }));
    }
    Ok(Pool {
        stop,
        timeline,
        workers,
        finished,
    })
}

impl Pool {
    async fn wait_finished(&mut self, n: usize) -> anyhow::Result<()> {
        for _ in 0..n {
            tokio::time::timeout(Duration::from_secs(600), self.finished.recv())
                .await
                .context("no task finished for 10 minutes")?
                .context("the workers are gone")?;
        }
        Ok(())
    }

    async fn stop(self) {
        self.stop.cancel();
        for worker in self.workers {
            let _ = worker.await;
        }
    }
}

fn submission(n: usize) -> anyhow::Result<QueueSubmission> {
    Ok(QueueSubmission {
        task_id: TaskId::new(format!("bench-{n}"))?,
        repo: "file:///bench".to_owned(),
        prompt: format!("task {n}"),
        options: serde_json::json!({}),
        max_attempts: 1,
    })
}

/// Seconds for `workers` to drain `tasks` tasks submitted before they start.
async fn drain(tasks: usize, workers: usize, fake: &std::path::Path) -> anyhow::Result<f64> {
    let db = FreshDb::create().await;
    let queue = PgQueue::connect(&db.url).await?;
    for n in 0..tasks {
        queue.submit(&submission(n)?).await?;
    }
    let started = Instant::now();
    let mut pool = start_workers(&db.url, workers, fake).await?;
    pool.wait_finished(tasks).await?;
    let took = started.elapsed().as_secs_f64();
    pool.stop().await;
    say(&format!(
        "{tasks} tasks drained by {workers} worker(s) in {took:.1} s"
    ));
    Ok(took)
}

pub(crate) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The baselines, samples in ms: one read round trip to the database (reading a task) and
/// one durable write (an event appended: a commit, flushed to disk), on task `id`. Taken
/// between the probes, as the disk's flush time on a shared machine changes from minute
/// to minute (0.3 to 4 ms here) and the probes' commits pay what it is then.
async fn round_trips(
    queue: &PgQueue,
    id: &TaskId,
    reads: &mut Vec<f64>,
    writes: &mut Vec<f64>,
) -> anyhow::Result<()> {
    for _ in 0..5 {
        let started = Instant::now();
        queue.task(id).await?;
        reads.push(started.elapsed().as_secs_f64() * 1000.0);
        let started = Instant::now();
        queue
            .append_event(id, "bench", &serde_json::json!({}))
            .await?;
        writes.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    Ok(())
}

/// What the latency probes measured: medians in ms.
struct Latency {
    wake: f64,
    overhead: f64,
    /// Per phase, in [`PHASES`] order.
    phases: Vec<f64>,
    /// The phases added up per task, its median.
    phases_total: f64,
    read: f64,
    commit: f64,
}

/// Tasks submitted one at a time to 4 idle workers: wake-up, overhead and where it goes.
async fn latency(tasks: usize, fake: &std::path::Path) -> anyhow::Result<Latency> {
    let db = FreshDb::create().await;
    let queue = PgQueue::connect(&db.url).await?;
    let mut pool = start_workers(&db.url, 4, fake).await?;
    let (mut wake, mut overhead) = (Vec::new(), Vec::new());
    let mut breakdown = Breakdown::default();
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    for n in 0..tasks {
        // Let every worker go idle (waiting on LISTEN) before the next submit.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let id = TaskId::new(format!("bench-{n}"))?;
        let submitted = Instant::now();
        queue.submit(&submission(n)?).await?;
        let returned = Instant::now();
        pool.timeline.mark(&id, |m| {
            m.submit_called = Some(submitted);
            m.submit_returned = Some(returned);
        });
        pool.wait_finished(1).await?;
        let total_us = submitted.elapsed().as_micros() as f64;
        let task = queue.task(&id).await?.context("a finished task vanished")?;
        let work_us = task
            .report
            .as_ref()
            .and_then(|r| r["work_us"].as_f64())
            .context("a task without its work time")?;
        let started = task.started_at_ms.context("a task never started")?;
        wake.push(started.saturating_sub(task.submitted_at_ms) as f64);
        overhead.push((total_us - work_us) / 1000.0);
        anyhow::ensure!(
            breakdown.add(&pool.timeline.marks(&id)),
            "task {id}: a phase of its way through the queue was not marked"
        );
        round_trips(&queue, &id, &mut reads, &mut writes).await?;
    }
    pool.stop().await;
    Ok(Latency {
        wake: median(&mut wake),
        overhead: median(&mut overhead),
        phases: breakdown.medians(),
        phases_total: breakdown.total(),
        read: median(&mut reads),
        commit: median(&mut writes),
    })
}

/// The overhead's phases, one line each, and what the commits alone cost.
fn phase_lines(latency: &Latency) -> String {
    let mut out = String::from("where the overhead goes (p50 per phase, ms):\n");
    for (name, value) in PHASES.iter().zip(&latency.phases) {
        out.push_str(&format!("  {value:>6.2}  {name}\n"));
    }
    out.push_str(&format!(
        "  {:>6.2}  the phases added up per task, p50 (the medians above need not add up; \
         the bench's own overhead p50 is {:.2})\n",
        latency.phases_total, latency.overhead
    ));
    out
}

pub fn run(quick: bool) -> anyhow::Result<()> {
    let tasks = if quick { 40 } else { 200 };
    let probes = if quick { 10 } else { 30 };
    let fake = forge_testkit::fake_cli::path();
    say(&format!(
        "PostgreSQL at {} (FORGE_TEST_POSTGRES_URL), a fresh database per measurement",
        forge_testkit::postgres::server_url()
    ));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async {
        let one = drain(tasks, 1, &fake).await?;
        let four = drain(tasks, 4, &fake).await?;
        let latency = latency(probes, &fake).await?;
        let Latency {
            wake,
            overhead,
            read,
            commit,
            ..
        } = latency;
        let ratio = one / four;
        let verdict = |ok: bool| if ok { "ok" } else { "MISSED" };
        // Submit, claim and finish must each be durable, one after the other: their
        // commits are the floor no queue on this database goes below.
        let floor = 3.0 * commit;
        let out = format!(
            "\nqueue on PostgreSQL, agent = the fake CLI taking ~1 s per task\n\
             throughput: {tasks} tasks, 1 worker {one:.1} s, 4 workers {four:.1} s: \
             {ratio:.2}x (target >= 3.5x: {})\n\
             wake-up p50 (submit -> claimed, {probes} tasks to 4 idle workers): {wake:.0} ms \
             (target <= 100 ms: {})\n\
             queue overhead p50 (submit -> completed less the agent's run): {overhead:.1} ms \
             = {:.2}x the 10 ms target ({})\n\
             {}\
             baseline (p50, taken between the probes): a read round trip {read:.2} ms, a durable commit \
             {commit:.2} ms; the 3 commits that must be durable in sequence (submit, claim, \
             finish) = {floor:.1} ms, so the overhead = {:.1} commits\n",
            verdict(ratio >= 3.5),
            verdict(wake <= 100.0),
            overhead / 10.0,
            verdict(overhead <= 10.0),
            phase_lines(&latency),
            overhead / commit,
        );
        let _ = std::io::Write::write_all(&mut std::io::stdout(), out.as_bytes());
        Ok(())
    })
}
