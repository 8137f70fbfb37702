//! Composing delivery as a pull request (issue 39): the forge that serves the repository's
//! URL (`[forges.NAME]` of the user config; github.com without one), its token from the
//! worker's environment, the base branch. Asked for and impossible — no forge serves the
//! URL, no token, a GitLab (whose adapter is not built yet) — is an error saying why, never
//! a silent branch-only delivery.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use forge_adapter_github::GithubForge;
use forge_app::config::{ForgesConfig, parse_forges_config};
use forge_app::delivery::{Delivery, PullRequestTarget};
use forge_domain::Redactor;
use forge_domain::forges::ForgeKind;

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
/// [`Failure::Usage`] when no forge serves the URL, the forge is a GitLab, or its token
/// variable is not set.
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
    if forge.kind == ForgeKind::Gitlab {
        return Err(Failure::Usage(format!(
            "a merge request was asked for on {} (forges.{}), but GitLab delivery is not \
             built yet; only GitHub is",
            forge.host, forge.name
        )));
    }
    let token = std::env::var(&forge.token_env)
        .ok()
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| {
            Failure::Usage(format!(
                "a pull request was asked for on {}, but {} (forges.{}.token_env) is not set",
                forge.host, forge.token_env, forge.name
            ))
        })?;
    let base = git(repo, &["symbolic-ref", "--short", "HEAD"]).ok_or_else(|| {
        Failure::Usage(
            "a pull request was asked for, but the repository's HEAD is no branch to merge \
             into"
                .to_owned(),
        )
    })?;
    let client = GithubForge::new(&forge.api_url, token.clone())
        .map_err(|e| Failure::Usage(e.to_string()))?;
    Ok(delivery.with_pull_request(PullRequestTarget {
        forge: Arc::new(client),
        repo: on,
        base,
        redactor: Redactor::new().with_secrets([token]),
        closes: None,
        reply: None,
    }))
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
