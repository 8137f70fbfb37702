//! `permissions list | allow ID | deny ID [--message]`: a person's answer to an agent's
//! permission request (issue 41), from any terminal — the requests of runs in this
//! workdir (its `.forgecode/forge.db`), or with `--queue` those of a queue's tasks, from any
//! machine. The first decision stands; a later one is refused naming it (exit 4).

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, Subcommand};
use forge_domain::permission::{PermissionDecision, PermissionId, Verdict};
use forge_ports::PermissionRequests;

use crate::cmd::queue::{failure, queue_url};
use crate::exit::Failure;
use crate::output::write_json_pretty;

/// Exit code of a decision that came second.
const ALREADY_DECIDED: u8 = 4;

const EXIT_CODES: &str = "\
Exit codes:
  0  decided
  1  the store failed (the message names it)
  2  usage error: unknown request id, a message with allow
  4  already decided: another person, a rule or the timeout decided first (nothing was changed)";

#[derive(Debug, Subcommand)]
pub enum PermissionsCmd {
    /// List the pending requests, oldest first
    List(WhereArgs),
    /// Allow a request (once; --always: for the rest of the agent's session)
    #[command(after_help = EXIT_CODES)]
    Allow(AllowArgs),
    /// Deny a request, with a message for the agent
    #[command(after_help = EXIT_CODES)]
    Deny(DenyArgs),
}

#[derive(Debug, Args)]
pub struct WhereArgs {
    /// The workdir whose runs' requests to answer
    #[arg(long, value_name = "PATH", default_value = ".")]
    pub workdir: PathBuf,
    /// The requests of a queue's tasks instead; URL: postgres://… or sqlite://PATH
    /// [without URL: FORGE_QUEUE_URL, else `[queue] url` of the user config]
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "")]
    pub queue: Option<String>,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct AllowArgs {
    #[command(flatten)]
    pub at: WhereArgs,
    /// For the rest of the agent's session (ACP allow_always; claude's suggested rules)
    #[arg(long)]
    pub always: bool,
    /// The request's id (`permissions list` shows them)
    pub id: String,
}

#[derive(Debug, Args)]
pub struct DenyArgs {
    #[command(flatten)]
    pub at: WhereArgs,
    /// What the agent is told
    #[arg(long, value_name = "TEXT")]
    pub message: Option<String>,
    /// The request's id (`permissions list` shows them)
    pub id: String,
}

pub async fn run(cmd: PermissionsCmd) -> Result<u8, Failure> {
    match cmd {
        PermissionsCmd::List(at) => list(&at).await,
        PermissionsCmd::Allow(a) => {
            let verdict = if a.always {
                Verdict::AllowSession
            } else {
                Verdict::Allow
            };
            decide(&a.at, &a.id, verdict, None).await
        }
        PermissionsCmd::Deny(d) => decide(&d.at, &d.id, Verdict::Deny, d.message).await,
    }
}

async fn store(at: &WhereArgs) -> Result<Arc<dyn PermissionRequests>, Failure> {
    let Some(flag) = &at.queue else {
        return Ok(crate::permissions::local_store(&at.workdir)? as Arc<dyn PermissionRequests>);
    };
    let Some(url) = queue_url(Some(flag))? else {
        return Err(Failure::Usage(
            "--queue: no URL (pass one, set FORGE_QUEUE_URL or [queue] url)".to_owned(),
        ));
    };
    crate::permissions::queue_store(&url).await
}

async fn list(at: &WhereArgs) -> Result<u8, Failure> {
    let store = store(at).await?;
    // Overdue ones are denied first: what is listed can still be answered.
    store.expire_permissions().await.map_err(failure)?;
    let pending = store.pending_permissions(None).await.map_err(failure)?;
    let mut out = std::io::stdout().lock();
    if at.json {
        write_json_pretty(&mut out, &pending)?;
        return Ok(0);
    }
    if pending.is_empty() {
        writeln!(out, "no pending permission requests")?;
    }
    for r in &pending {
        writeln!(
            out,
            "{}  {} {}  {}  ({} {})",
            r.id,
            r.provider,
            r.owner.kind(),
            r.tool.summary(),
            r.owner.kind(),
            r.owner.id()
        )?;
    }
    Ok(0)
}

async fn decide(
    at: &WhereArgs,
    id: &str,
    verdict: Verdict,
    message: Option<String>,
) -> Result<u8, Failure> {
    let id = PermissionId::new(id).map_err(|e| Failure::Usage(e.to_string()))?;
    let name = std::env::var("USER").unwrap_or_else(|_| "cli".to_owned());
    let decision = PermissionDecision::person(verdict, message, name).map_err(Failure::Usage)?;
    let store = store(at).await?;
    let Some(decided) = store
        .decide_permission(&id, &decision)
        .await
        .map_err(failure)?
    else {
        return Err(Failure::Usage(format!(
            "no permission request {id} (see `forge-code-agent permissions list`)"
        )));
    };
    let mut out = std::io::stdout().lock();
    if at.json {
        write_json_pretty(&mut out, decided.request())?;
    }
    if let Some(refusal) = decided.refusal() {
        let _ = writeln!(std::io::stderr(), "{refusal}");
        return Ok(ALREADY_DECIDED);
    }
    if !at.json {
        let request = decided.request();
        if let Some(d) = &request.decision {
            writeln!(out, "{}: {d}", request.tool.summary())?;
        }
    }
    Ok(0)
}
