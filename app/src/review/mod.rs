//! Pull-request review (`forge-code-agent review`): the change `base...head` of a
//! repository, the task pipeline's deterministic rules over it, and the agent's findings —
//! the agent working read-only (`plan` permission mode) in a detached work tree at the head,
//! so the user's checkout is never touched; the tree is removed afterwards whatever
//! happened. The pure rules (answer parsing, placement, rendering, exit code) are in
//! [`forge_domain::review`].

mod ask;
mod redact;

use std::path::PathBuf;
use std::sync::Arc;

use forge_domain::review::outcome::PlacedFinding;
use forge_domain::review::{
    ReviewFinding, ReviewOutcome, ReviewStatus, dedupe, diff::changed_files, parse_patch, place,
};
use forge_domain::task::review::secrets::secret_values;
use forge_domain::task::review::{ReviewLimits, review as rule_review};
use forge_domain::{ExecutionRequest, ForgeError, Redactor, Usage};
use forge_ports::Vcs;

use crate::agent::CodeAgent;
use crate::handle::RunCanceller;

/// Characters of diff one prompt carries by default; a larger change is reviewed in parts.
pub const DEFAULT_PROMPT_BUDGET: usize = 60_000;

/// The ports the review needs besides those of its [`CodeAgent`].
#[derive(Clone)]
pub struct ReviewPorts {
    pub vcs: Arc<dyn Vcs>,
    /// Masks secrets in every text of the outcome (findings, notices, the raw answer).
    pub redactor: Redactor,
}

/// One review.
#[derive(Debug, Clone)]
pub struct ReviewRequest {
    pub repo: PathBuf,
    pub base: String,
    pub head: String,
    /// The agent's request as configured (provider, model, env, timeout, binary …); the
    /// review sets its prompt, work directory and permission mode.
    pub template: ExecutionRequest,
    /// Where the head's work tree is made (outside the user's checkout); removed after.
    pub tree: PathBuf,
    /// Where the agent's run bundles are kept (`<runs_dir>/<run_id>`), moved out of the
    /// work tree before it is removed; `None`: they go with it.
    pub runs_dir: Option<PathBuf>,
    /// The agent runs stop when their cost reaches this.
    pub max_cost_usd: Option<f64>,
    pub prompt_budget_chars: usize,
    pub limits: ReviewLimits,
}

/// Runs reviews; built from a [`CodeAgent`] (its providers and runtime) and [`ReviewPorts`].
#[derive(Clone)]
pub struct Reviewer {
    agent: CodeAgent,
    ports: ReviewPorts,
}

impl Reviewer {
    pub fn new(agent: CodeAgent, ports: ReviewPorts) -> Self {
        Self { agent, ports }
    }

    /// A canceller for [`Reviewer::run`]: cancel stops the agent through the kill ladder;
    /// the review ends `partial` after its work tree is removed.
    pub fn canceller() -> RunCanceller {
        RunCanceller::new()
    }

    /// Reviews `req`'s change.
    ///
    /// # Errors
    /// Only before the agent starts: [`ForgeError::InvalidRequest`] when `repo` is not a
    /// repository, a revision names no commit or the two share no history;
    /// [`ForgeError::Io`] when git fails or the work tree cannot be made;
    /// [`ForgeError::ExecutableNotFound`] when the provider's CLI is missing. Everything
    /// the agent does is in the outcome's status and notices.
    pub async fn run(
        &self,
        req: ReviewRequest,
        cancel: &RunCanceller,
    ) -> Result<ReviewOutcome, ForgeError> {
        let vcs = &self.ports.vcs;
        if !vcs.is_repository(&req.repo).await? {
            return Err(invalid(format!(
                "{} is not inside a git work tree",
                req.repo.display()
            )));
        }
        let base = self.commit(&req, &req.base, "--base").await?;
        let head = self.commit(&req, &req.head, "--head").await?;
        let merge_base = vcs
            .merge_base(&req.repo, &base, &head)
            .await?
            .ok_or_else(|| {
                invalid(format!(
                    "{} and {} share no history: nothing to diff from",
                    req.base, req.head
                ))
            })?;
        let patch = vcs.diff(&req.repo, &merge_base, &head).await?;
        let files = parse_patch(&patch);
        let rules = rule_review(&changed_files(&files), &req.limits);
        let mut outcome = ReviewOutcome {
            status: ReviewStatus::Completed,
            provider: req.template.provider.as_str().to_owned(),
            model: req.template.model.clone(),
            base: req.base.clone(),
            head: req.head.clone(),
            merge_base,
            head_commit: head.clone(),
            files: files.iter().map(|f| f.path.clone()).collect(),
            findings: Vec::new(),
            rejected: Vec::new(),
            notices: Vec::new(),
            raw_answer: None,
            cost_usd: 0.0,
            usage: Usage::default(),
            runs: Vec::new(),
            chunks: 0,
        };
        // The values the secret rules found are masked wherever they show up again (the
        // agent quoting the line), not only the token shapes the redactor knows.
        let redactor = self.ports.redactor.clone().with_secrets(
            files
                .iter()
                .flat_map(|f| &f.added_lines)
                .flat_map(|l| secret_values(&l.text))
                .map(str::to_owned)
                .collect::<Vec<_>>(),
        );
        let mut found: Vec<ReviewFinding> = rules.findings.iter().map(Into::into).collect();
        if files.is_empty() {
            outcome
                .notices
                .push("the change is empty: nothing for the agent to review".to_owned());
        } else {
            vcs.add_detached_worktree(&req.repo, &req.tree, &head)
                .await?;
            let asked = ask::ask(&self.agent, &redactor, &req, &files, cancel).await;
            if let (Some(dest), Ok(asked)) = (&req.runs_dir, &asked) {
                let artifacts = &self.agent.runtime().artifacts;
                if let Err(e) = artifacts.keep_runs(&req.tree, &asked.run_ids(), dest).await {
                    outcome.notices.push(format!(
                        "the agent's run bundles could not be kept in {}: {e}",
                        dest.display()
                    ));
                }
            }
            // The tree goes whatever the agent did (answer, error, cancel).
            if let Err(e) = vcs.remove_worktree(&req.repo, &req.tree).await {
                outcome
                    .notices
                    .push(format!("the review's work tree could not be removed: {e}"));
            }
            found.extend(asked?.apply(&mut outcome));
        }
        outcome.findings = dedupe(found)
            .into_iter()
            .map(|finding| {
                let placement = place(&files, &finding.path, finding.line, finding.end_line);
                PlacedFinding { finding, placement }
            })
            .collect();
        Ok(redact::outcome(&redactor, outcome))
    }

    async fn commit(
        &self,
        req: &ReviewRequest,
        rev: &str,
        flag: &str,
    ) -> Result<String, ForgeError> {
        self.ports
            .vcs
            .resolve_commit(&req.repo, rev)
            .await?
            .ok_or_else(|| {
                invalid(format!(
                    "{flag} {rev} names no commit in {} (in CI, fetch enough history: \
                     actions/checkout with fetch-depth: 0)",
                    req.repo.display()
                ))
            })
    }
}

fn invalid(reason: String) -> ForgeError {
    ForgeError::InvalidRequest { reason }
}
