//! `forge poll`: the forges' events read through their APIs, for a worker they cannot
//! reach with webhooks (behind NAT, no public URL). One pass over the repositories of
//! forge's open pull requests in the queue (and `--repo`), or with `--watch` one every
//! `--interval` until SIGTERM / Ctrl-C. The worker's `--poll-forge` runs the same loop
//! beside its tasks.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Subcommand};
use forge_app::forges::{FeedbackOutcome, ForgeFeedback, PollReport};
use tokio_util::sync::CancellationToken;

use crate::cmd::queue::commands::QueueFlag;
use crate::exit::{self, Failure};

/// The pause between two passes when neither `--interval` nor the worker says.
pub const DEFAULT_INTERVAL_SECS: u64 = 60;

#[derive(Debug, Subcommand)]
pub enum ForgeCmd {
    /// Read the forges' events (review comments, reviews, failed checks, labelled issues)
    /// through their APIs from the stored cursor and act on them as their webhooks would:
    /// for a worker without a public URL
    #[command(
        after_help = "Exit codes:\n  0  every repository was polled\n  1  a forge could not be read or acted on (its cursor did not move: the next pass catches up)\n  2  usage or configuration error (no forge with a token, a --repo no forge serves)"
    )]
    Poll(PollArgs),
}

#[derive(Debug, Args)]
pub struct PollArgs {
    #[command(flatten)]
    pub queue: QueueFlag,
    /// Poll this repository too (its URL), beyond those of forge's open pull requests
    /// (repeatable; where labelled issues are looked for)
    #[arg(long = "repo", value_name = "URL")]
    pub repos: Vec<String>,
    /// Keep polling, one pass every --interval, until SIGTERM or Ctrl-C
    #[arg(long)]
    pub watch: bool,
    /// Seconds between two passes with --watch
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_INTERVAL_SECS,
          value_parser = clap::value_parser!(u64).range(1..=86_400), requires = "watch")]
    pub interval: u64,
    /// Print each repository's pass as a JSON line
    #[arg(long)]
    pub json: bool,
}

pub async fn run(command: ForgeCmd) -> Result<u8, Failure> {
    match command {
        ForgeCmd::Poll(args) => poll(args).await,
    }
}

async fn poll(args: PollArgs) -> Result<u8, Failure> {
    let url = args.queue.url()?;
    let queue = crate::cmd::queue::open(&url).await?;
    let feedback = super::feedback(&url, queue).await?.ok_or_else(no_forge)?;
    if !args.watch {
        let ok = pass(&feedback, &args.repos, args.json).await?;
        return Ok(if ok { exit::SUCCESS } else { exit::RUN_ERROR });
    }
    let stop = CancellationToken::new();
    let signals = crate::cmd::queue::worker::watch_signals(stop.clone())?;
    let result = watch(
        &feedback,
        &args.repos,
        args.json,
        Duration::from_secs(args.interval),
        &stop,
    )
    .await;
    signals.abort();
    result.map(|()| exit::SUCCESS)
}

/// The usage error when no forge has its token in the environment.
pub fn no_forge() -> Failure {
    Failure::Usage(
        "no forge to poll: set GITHUB_TOKEN (github.com), or the token_env of a \
         [forges.NAME] in the user config"
            .into(),
    )
}

/// Passes every `interval` until `stop`; a pass that fails is said and the next one tries
/// again (its cursor did not move).
///
/// # Errors
/// [`Failure::Usage`] when `repos` names a repository no forge serves.
pub async fn watch(
    feedback: &Arc<ForgeFeedback>,
    repos: &[String],
    json: bool,
    interval: Duration,
    stop: &CancellationToken,
) -> Result<(), Failure> {
    loop {
        pass(feedback, repos, json).await?;
        tokio::select! {
            () = stop.cancelled() => return Ok(()),
            () = tokio::time::sleep(interval) => {}
        }
    }
}

/// One pass, a line per repository on stderr; `false` when one could not be polled.
///
/// # Errors
/// [`Failure::Usage`] when `repos` names a repository no forge serves; [`Failure::Other`]
/// when the queue cannot be read.
pub async fn pass(feedback: &ForgeFeedback, repos: &[String], json: bool) -> Result<bool, Failure> {
    let reports = feedback.poll(repos).await.map_err(|e| match e {
        forge_domain::ForgeError::InvalidRequest { reason } => Failure::Usage(reason),
        other => Failure::Other(anyhow::anyhow!("forge poll: {other}")),
    })?;
    let mut err = std::io::stderr().lock();
    for report in &reports {
        let _ = if json {
            writeln!(err, "{}", serde_json::to_string(report).unwrap_or_default())
        } else {
            writeln!(err, "{}", line(report))
        };
    }
    Ok(reports.iter().all(|r| r.error.is_none()))
}

/// `forge poll github.com/o/r (github): 2 events — follow_up_queued q-…, replayed; cursor …`
fn line(report: &PollReport) -> String {
    let what: Vec<String> = report.outcomes.iter().map(outcome).collect();
    let events = match what.len() {
        0 => "no new events".to_owned(),
        n => format!("{n} event(s): {}", what.join(", ")),
    };
    match &report.error {
        Some(e) => format!(
            "forge poll {} ({}): {events}; stopped: {e} (cursor kept: the next pass catches up)",
            report.repo, report.forge
        ),
        None => format!(
            "forge poll {} ({}): {events}; cursor {}",
            report.repo,
            report.forge,
            report.cursor.as_deref().unwrap_or("none yet")
        ),
    }
}

fn outcome(o: &FeedbackOutcome) -> String {
    match o {
        FeedbackOutcome::FollowUpQueued { task_id, parent } => {
            format!("follow-up {task_id} of {parent}")
        }
        FeedbackOutcome::IssueTaskQueued { task_id, issue } => {
            format!("task {task_id} for issue #{issue}")
        }
        FeedbackOutcome::MarkedReady { task_id, .. } => format!("{task_id} marked ready"),
        FeedbackOutcome::NotAllowed { actor } => format!("{actor} may not steer"),
        FeedbackOutcome::Replayed => "seen before".into(),
        other => serde_json::to_value(other)
            .ok()
            .and_then(|v| v.get("outcome").and_then(|o| o.as_str()).map(str::to_owned))
            .unwrap_or_else(|| "?".into()),
    }
}
