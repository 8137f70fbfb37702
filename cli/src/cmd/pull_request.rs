//! Composing delivery as a pull request (issue 39): the forge that serves the repository's
//! URL (`[forges.NAME]` of the user config; github.com without one) — GitHub or GitLab,
//! chosen in one place, [`forge_client`] — its token from the worker's environment, the
//! base branch. Asked for and impossible — no forge serves the URL, no token — is an error
//! saying why, never a silent branch-only delivery.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use forge_adapter_github::GithubForge;
use forge_adapter_gitlab::GitlabForge;
use forge_app::config::{ForgesConfig, parse_forges_config};
use forge_app::delivery::{Delivery, PullRequestTarget};
use forge_domain::Redactor;
use forge_domain::forges::{ForgeKind, ForgeSettings};
use forge_ports::Forge;

use crate::exit::Failure;

/// The worker's forges: `[forges]` of the user config (none when it has no such file).
///
/// # Errors
/// [`Failure::Usage`] naming the key when the table is malformed.
pub fn worker_forges() -> Result<ForgesConfig, Failure> {
    match crate::config_load::user_config_file() {
        Some(path) if path.is_file() => {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| Failure::Usage(format!("{}: {e}", path.display())))?;
            Ok(parse_forges_config(&text, &path)?)
        }
        _ => Ok(ForgesConfig::default()),
    }
}

/// `delivery` delivering as pull requests on the forge that serves `remote` (a URL, or the
/// name of a remote of the repository at `repo`). Unchanged when it already does.
///
/// # Errors
/// [`Failure::Usage`] when no forge serves the URL or its token variable is not set.
pub fn attach(delivery: Delivery, repo: &Path, remote: &str) -> Result<Delivery, Failure> {
    if delivery.delivers_pull_requests() {
        return Ok(delivery);
    }
    let url = if forge_domain::task::is_repository_url(remote) {
        remote.to_owned()
    } else {
        git(repo, &["remote", "get-url", remote]).ok_or_else(|| {
            Failure::Usage(format!(
                "a pull request was asked for, but the repository has no remote {remote:?} to \
                 open it on"
            ))
        })?
    };
    let forges = worker_forges()?;
    let (forge, on) = forges.serving(&url).ok_or_else(|| {
        Failure::Usage(format!(
            "a pull request was asked for, but no forge serves {url}: name its host in \
             [forges.NAME] of the user config"
        ))
    })?;
    let token = forge_token(&forge)?;
    let base = git(repo, &["symbolic-ref", "--short", "HEAD"]).ok_or_else(|| {
        Failure::Usage(
            "a pull request was asked for, but the repository's HEAD is no branch to merge \
             into"
                .to_owned(),
        )
    })?;
    Ok(delivery.with_pull_request(PullRequestTarget {
        forge: forge_client(&forge)?,
        repo: on,
        base,
        redactor: Redactor::new().with_secrets([token]),
        closes: None,
        reply: None,
    }))
}

/// The token of `forge` from the worker's environment (its `token_env`).
///
/// # Errors
/// [`Failure::Usage`] naming the variable when it is not set.
pub fn forge_token(forge: &ForgeSettings) -> Result<String, Failure> {
    std::env::var(&forge.token_env)
        .ok()
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| {
            Failure::Usage(format!(
                "a {} was asked for on {}, but {} (forges.{}.token_env) is not set",
                forge.kind.noun(),
                forge.host,
                forge.token_env,
                forge.name
            ))
        })
}

/// The API client of `forge` — the one place a `[forges.NAME]` table's `kind` picks an
/// adapter — authenticated with its token.
///
/// # Errors
/// [`Failure::Usage`] when the token is not set or the API URL cannot be used.
pub fn forge_client(forge: &ForgeSettings) -> Result<Arc<dyn Forge>, Failure> {
    let token = forge_token(forge)?;
    let client: Result<Arc<dyn Forge>, _> = match forge.kind {
        ForgeKind::Github => {
            GithubForge::new(&forge.api_url, token).map(|c| Arc::new(c) as Arc<dyn Forge>)
        }
        ForgeKind::Gitlab => {
            GitlabForge::new(&forge.api_url, &token).map(|c| Arc::new(c) as Arc<dyn Forge>)
        }
    };
    client.map_err(|e| Failure::Usage(e.to_string()))
}

/// `git -C repo ARGS`' trimmed output when it succeeds.
fn git(repo: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !text.is_empty()).then_some(text)
}
