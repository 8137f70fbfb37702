//! `review`: a pull request's change reviewed by the deterministic rules and an agent of
//! any provider, written as Markdown, JSON, SARIF and a GitHub review payload. Runs with no
//! terminal (CI); Ctrl-C / SIGTERM stop the agent and the work tree is still removed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;
use forge_app::config::{DEFAULT_REVIEW_OUT_DIR, ReviewConfig, parse_review_config};
use forge_app::from_config::apply_request_defaults;
use forge_app::review::{DEFAULT_PROMPT_BUDGET, ReviewPorts, ReviewRequest, Reviewer};
use forge_domain::review::{FailOn, ReviewOutcome, exit_code, github, markdown, sarif};
use forge_domain::task::review::ReviewLimits;
use forge_domain::{ForgeError, ProviderId, Redactor};

use crate::args::ConfigFlags;
use crate::compose;
use crate::config_load::{load_config, user_config_file};
use crate::exit::Failure;
use crate::output::write_json_pretty;
use crate::signals;

pub(crate) const REVIEW_EXIT_CODES: &str = "\
Exit codes:
  0  no finding at or above --fail-on; also a review skipped on a rate or usage limit
     (unless --strict)
  1  findings at or above --fail-on; the agent failed; skipped under --strict
  2  usage or configuration error (not a repository, unknown revision, CLI missing)
  3  partial: the agent's answer could not be read (after one follow-up), or it was
     stopped by --max-cost-usd or Ctrl-C; the rule findings are written

Writes under --out: review.md, findings.json, review.sarif, github-review.json.";

/// The four files, in the order they are written.
pub const FILES: [&str; 4] = [
    "review.md",
    "findings.json",
    "review.sarif",
    "github-review.json",
];

#[derive(Debug, Args)]
pub struct ReviewArgs {
    #[command(flatten)]
    pub config: ConfigFlags,
    /// The base revision (e.g. origin/main): the change is base...head, from their merge base
    #[arg(long, value_name = "REV")]
    pub base: String,
    /// The head revision
    #[arg(long, value_name = "REV", default_value = "HEAD")]
    pub head: String,
    /// The repository [default: --workdir, else .]
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
    /// Where the four files go [default: `[review] out_dir`, else project/reviews/ in the
    /// repository]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The lowest severity that fails the review: critical, high, medium, low, info or none
    #[arg(long, value_name = "LEVEL", default_value = "high", value_parser = parse_fail_on)]
    pub fail_on: FailOn,
    /// Stop the agent once its runs cost this much (the review is then partial)
    #[arg(long, value_name = "USD")]
    pub max_cost_usd: Option<f64>,
    /// A review skipped on a rate or usage limit fails (exit 1) instead of passing
    #[arg(long)]
    pub strict: bool,
    /// Print the report as JSON
    #[arg(long)]
    pub json: bool,
    /// Characters of diff per prompt; a larger change is reviewed in parts of whole files
    #[arg(long, value_name = "CHARS", default_value_t = DEFAULT_PROMPT_BUDGET)]
    pub prompt_budget: usize,
}

fn parse_fail_on(text: &str) -> Result<FailOn, String> {
    text.parse()
}

pub async fn run(args: ReviewArgs) -> Result<u8, Failure> {
    if let Some(max) = args.max_cost_usd
        && !(max.is_finite() && max > 0.0)
    {
        return Err(Failure::Usage(format!(
            "--max-cost-usd {max} must be a positive amount"
        )));
    }
    if args.prompt_budget < 1_000 {
        return Err(Failure::Usage(format!(
            "--prompt-budget {} is too small to hold a file's diff (at least 1000)",
            args.prompt_budget
        )));
    }
    // `--workdir` (shared with `run`) names the repository too when `--repo` is not given.
    let repo_arg = if args.repo == Path::new(".") && args.config.workdir != Path::new(".") {
        args.config.workdir.clone()
    } else {
        args.repo.clone()
    };
    let repo = std::fs::canonicalize(&repo_arg)
        .map_err(|e| Failure::Usage(format!("--repo {}: {e}", repo_arg.display())))?;
    let mut flags = args.config.clone();
    flags.workdir.clone_from(&repo);
    let config = load_config(&flags)?;
    let out_dir = match &args.out {
        Some(out) => std::path::absolute(out)?,
        None => repo.join(
            review_config(&repo)?
                .out_dir
                .unwrap_or_else(|| PathBuf::from(DEFAULT_REVIEW_OUT_DIR)),
        ),
    };
    let agent = compose::configured_agent(&config, &flags)
        .await?
        .build()
        .map_err(|e| Failure::Usage(e.to_string()))?;
    agent.end_orphans_of_finished_runs().await;
    let provider = ProviderId::new(config.default_provider.value.clone())
        .map_err(|e| Failure::Usage(format!("--provider: {e}")))?;
    let mut template = agent.request("");
    template.provider = provider;
    apply_request_defaults(&config, &mut template);
    let redactor = compose::environment_redactor();
    let reviewer = Reviewer::new(
        agent,
        ReviewPorts {
            vcs: Arc::new(crate::compose::git()),
            redactor: redactor.clone(),
        },
    );
    let request = ReviewRequest {
        repo,
        base: args.base.clone(),
        head: args.head.clone(),
        template,
        tree: scratch_tree(),
        runs_dir: Some(out_dir.join("runs")),
        max_cost_usd: args.max_cost_usd,
        prompt_budget_chars: args.prompt_budget,
        limits: ReviewLimits::default(),
    };
    let canceller = Reviewer::canceller();
    let watcher = signals::watch(canceller.clone(), args.json)?;
    let result = reviewer.run(request, &canceller).await;
    watcher.abort();
    let outcome = result.map_err(|e| match e {
        ForgeError::InvalidRequest { .. }
        | ForgeError::ExecutableNotFound { .. }
        | ForgeError::ProviderNotSupported { .. } => Failure::Usage(e.to_string()),
        other => Failure::Other(anyhow::Error::new(other)),
    })?;
    let written = write_outputs(&out_dir, &outcome, &redactor)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        let value = serde_json::to_value(&outcome).map_err(anyhow::Error::new)?;
        let text = redactor.redact(&value.to_string()).into_owned();
        let value: serde_json::Value = serde_json::from_str(&text).map_err(anyhow::Error::new)?;
        let _ = write_json_pretty(&mut out, &value);
    } else {
        let _ = out.write_all(redactor.redact(&human(&outcome, &written)).as_bytes());
    }
    Ok(exit_code(&outcome, args.fail_on, args.strict))
}

/// `[review]` of the user config, overridden by the repository's `forge.toml`.
fn review_config(repo: &Path) -> Result<ReviewConfig, Failure> {
    let mut config = ReviewConfig::default();
    let files = [
        user_config_file(),
        Some(repo.join(forge_app::config::PROJECT_FILE)),
    ];
    for path in files.into_iter().flatten() {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let found = parse_review_config(&text, &path)?;
        if found.out_dir.is_some() {
            config = found;
        }
    }
    Ok(config)
}

/// A fresh directory name in the temporary directory for the head's work tree.
fn scratch_tree() -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    std::env::temp_dir().join(format!("forge-review-{}-{nanos}", std::process::id()))
}

/// Writes the four files (each redacted once more) and returns their paths.
fn write_outputs(
    dir: &Path,
    outcome: &ReviewOutcome,
    redactor: &Redactor,
) -> Result<Vec<PathBuf>, Failure> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::Other(anyhow::anyhow!("creating {}: {e}", dir.display())))?;
    let texts = [
        markdown::render(outcome),
        pretty(outcome)?,
        pretty(&sarif::render(outcome, env!("CARGO_PKG_VERSION")))?,
        pretty(&github::review(outcome))?,
    ];
    let mut written = Vec::new();
    for (name, text) in FILES.iter().zip(texts) {
        let path = dir.join(name);
        let tmp = dir.join(format!(".{name}.tmp"));
        std::fs::write(&tmp, redactor.redact(&text).as_bytes())
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| Failure::Other(anyhow::anyhow!("writing {}: {e}", path.display())))?;
        written.push(path);
    }
    Ok(written)
}

fn pretty(value: &impl serde::Serialize) -> Result<String, Failure> {
    let text = serde_json::to_string_pretty(value).map_err(anyhow::Error::new)?;
    Ok(text + "\n")
}

/// What a person reads on stdout.
fn human(outcome: &ReviewOutcome, written: &[PathBuf]) -> String {
    let mut text = format!(
        "review {}...{} with {}: {}\n",
        outcome.base,
        outcome.head,
        outcome.provider,
        markdown::summary_line(outcome).replace("**", "")
    );
    for notice in &outcome.notices {
        text.push_str(&format!("note: {notice}\n"));
    }
    for placed in &outcome.findings {
        let f = &placed.finding;
        text.push_str(&format!(
            "  {:<8} {}  {}{}\n",
            f.severity.as_str().to_uppercase(),
            f.place(),
            f.title,
            f.rule
                .as_deref()
                .map(|r| format!(" [{r}]"))
                .unwrap_or_default()
        ));
    }
    for path in written {
        text.push_str(&format!("wrote {}\n", path.display()));
    }
    text
}
