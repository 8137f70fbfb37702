//! Composing the delivery use case for a repository: the SQLite store (`[store] url`, else
//! `<repo>/.forgecode/forge.db`), git, the notifiers `[delivery]` configures (tokens from the
//! environment), and reconciliation on start.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use forge_adapter_fs::FsFiles;
use forge_adapter_git::GitCli;
use forge_adapter_notify::{RetryPolicy, TelegramNotifier, WebhookNotifier};
use forge_adapter_store::{SqliteStore, resolve_location};
use forge_adapter_telemetry::SystemClock;
use forge_app::config::{DeliveryConfig, PROJECT_FILE, parse_delivery_config, parse_task_config};
use forge_app::delivery::{
    DEFAULT_RECONCILE_GRACE_MS, Delivery, DeliveryError, DeliveryPorts, DeliverySettings,
    DeliveryStep, StepHook,
};
use forge_domain::forges::FeedbackWords;
use forge_ports::{CommitAuthor, Notifier, Vcs};

use crate::cmd::task::url_repo::{self, RepoFile};
use crate::compose;
use crate::exit::Failure;

/// Bearer token of the webhook.
pub const WEBHOOK_TOKEN_ENV: &str = "FORGE_WEBHOOK_TOKEN";
/// Telegram bot token.
pub const TELEGRAM_TOKEN_ENV: &str = "TELEGRAM_BOT_TOKEN";

/// The repository `path` names, absolute and canonical.
pub fn repo_root(path: &Path) -> Result<PathBuf, Failure> {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    std::fs::canonicalize(&absolute)
        .map_err(|e| Failure::Usage(format!("--repo {}: {e}", absolute.display())))
}

fn read_config(repo: &Path) -> Result<(DeliveryConfig, u8), Failure> {
    let path = repo.join(PROJECT_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            // The worker's forges and their tokens are the user config's to name.
            forge_app::config::refuse_project_forges(&text, &path)?;
            let delivery = parse_delivery_config(&text, &path)?;
            let task = parse_task_config(&text, &path)?;
            Ok((delivery, task.limits.risk_threshold))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((
            DeliveryConfig::default(),
            forge_domain::delivery::DEFAULT_RISK_THRESHOLD,
        )),
        Err(e) => Err(Failure::Usage(format!("{}: {e}", path.display()))),
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn notifiers(config: &DeliveryConfig) -> Result<Vec<Arc<dyn Notifier>>, Failure> {
    let policy = RetryPolicy::default();
    let mut out: Vec<Arc<dyn Notifier>> = Vec::new();
    if let Some(url) = &config.webhook_url {
        let hook = WebhookNotifier::new(url, env(WEBHOOK_TOKEN_ENV), policy)
            .map_err(|e| Failure::Usage(e.to_string()))?;
        out.push(Arc::new(hook));
    }
    if let Some(chat) = &config.telegram_chat_id {
        match env(TELEGRAM_TOKEN_ENV) {
            Some(token) => {
                let bot =
                    TelegramNotifier::new(&config.telegram_api_base, token, chat.clone(), policy)
                        .map_err(|e| Failure::Usage(e.to_string()))?;
                out.push(Arc::new(bot));
            }
            None => {
                let _ = writeln!(
                    std::io::stderr(),
                    "warning: [delivery] telegram_chat_id is set but {TELEGRAM_TOKEN_ENV} is not; telegram is skipped"
                );
            }
        }
    }
    Ok(out)
}

/// Fault injection for the crash tests (`cargo xtask e2e`): names a [`DeliveryStep`]
/// (`stored`, `committed`, `decided`) at which forge SIGKILLs itself.
pub const KILL_AT_ENV: &str = "FORGE_DELIVERY_KILL_AT";

fn kill_hook() -> Option<StepHook> {
    let at = DeliveryStep::parse(&env(KILL_AT_ENV)?)?;
    Some(Arc::new(move |step| {
        if step == at {
            let _ =
                nix::sys::signal::kill(nix::unistd::Pid::this(), nix::sys::signal::Signal::SIGKILL);
        }
    }))
}

/// Delivery for the repository at `repo` (canonical). `push` overrides `[delivery] push`.
/// forge's cache of a URL (where a URL task's change waits for approval) delivers as the
/// task did: to the URL.
pub async fn open(repo: &Path, push: Option<bool>) -> Result<Delivery, Failure> {
    if let Some(url) = mirror_origin(repo) {
        // A decision on a held change: the repository's file as its default branch has it.
        let file = head_file(repo, &url).await?;
        return open_for_url(repo, &url, push, file.as_ref());
    }
    let (config, task_threshold) = read_config(repo)?;
    compose(repo, config, task_threshold, push)
}

/// The remote `repo`'s branches are pushed to: a mirror's repository URL, else
/// `[delivery] remote`.
///
/// # Errors
/// As reading the repository's configuration.
pub fn remote_of(repo: &Path) -> Result<String, Failure> {
    if let Some(url) = mirror_origin(repo) {
        return Ok(url);
    }
    Ok(read_config(repo)?.0.remote)
}

/// Delivery for a task on the repository `url`, run in forge's cache of it at `cache`:
/// the worker's `[delivery]` (its identity, store and notifications, from the user
/// configuration) with the repository's gate, push and message from `file` (its
/// `forge.toml` at the task's commit), the branch pushed to `url` itself (the cache is a
/// mirror, whose `origin` git refuses to push a single branch to).
pub fn open_for_url(
    cache: &Path,
    url: &str,
    push: Option<bool>,
    file: Option<&RepoFile>,
) -> Result<Delivery, Failure> {
    let (worker, worker_threshold) = match crate::config_load::user_config_file() {
        Some(path) if path.is_file() => {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| Failure::Usage(format!("{}: {e}", path.display())))?;
            let delivery = parse_delivery_config(&text, &path)?;
            let task = parse_task_config(&text, &path)?;
            (delivery, task.limits.risk_threshold)
        }
        _ => (
            DeliveryConfig::default(),
            forge_domain::delivery::DEFAULT_RISK_THRESHOLD,
        ),
    };
    let task_threshold = match file {
        Some(f) => parse_task_config(&f.text, &f.origin)?.limits.risk_threshold,
        None => worker_threshold,
    };
    let mut config = url_repo::delivery_config(file, worker)?;
    url.clone_into(&mut config.remote);
    compose(cache, config, task_threshold, push)
}

/// `forge.toml` of the repository in forge's cache at its default branch's head.
async fn head_file(cache: &Path, url: &str) -> Result<Option<RepoFile>, Failure> {
    let vcs = compose::git();
    let head = vcs
        .resolve_commit(cache, "HEAD")
        .await
        .map_err(|e| Failure::Other(anyhow::anyhow!(e)))?;
    match head {
        Some(commit) => url_repo::read_file(&vcs, cache, url, &commit).await,
        None => Ok(None),
    }
}

/// The URL of a mirror clone (forge's cache of a URL): `remote.origin.url` when
/// `remote.origin.mirror` is true in its `config`; `None` for any other repository.
fn mirror_origin(repo: &Path) -> Option<String> {
    let text = std::fs::read_to_string(repo.join("config")).ok()?;
    origin_of_mirror_config(&text)
}

fn origin_of_mirror_config(text: &str) -> Option<String> {
    let (mut in_origin, mut mirror, mut url) = (false, false, None);
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_origin = line == "[remote \"origin\"]";
            continue;
        }
        let Some((key, value)) = line.split_once('=').filter(|_| in_origin) else {
            continue;
        };
        match key.trim() {
            "url" => url = Some(value.trim().to_owned()),
            "mirror" => mirror = value.trim() == "true",
            _ => {}
        }
    }
    url.filter(|_| mirror)
}

fn compose(
    repo: &Path,
    config: DeliveryConfig,
    task_threshold: u8,
    push: Option<bool>,
) -> Result<Delivery, Failure> {
    let location = resolve_location(config.store_url.as_deref(), repo)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let store = SqliteStore::open(&location).map_err(|e| Failure::Other(anyhow::anyhow!(e)))?;
    let runtime = compose::runtime();
    let ports = DeliveryPorts {
        store: Arc::new(store),
        vcs: Arc::new(GitCli::new(Arc::clone(&runtime.runner))),
        files: Arc::new(FsFiles::new()),
        notifiers: notifiers(&config)?,
        clock: Arc::new(SystemClock::new()),
        on_step: kill_hook(),
    };
    let settings = DeliverySettings {
        risk_threshold: config.risk_threshold.unwrap_or(task_threshold),
        push: push.unwrap_or(config.push),
        remote: config.remote.clone(),
        author: config
            .author
            .clone()
            .map(|(name, email)| CommitAuthor { name, email }),
        message: config.message.clone(),
        cleanup: config.cleanup,
        actor: env("USER").unwrap_or_else(|| "forge".to_owned()),
        reconcile_grace_ms: config
            .reconcile_grace_ms
            .unwrap_or(DEFAULT_RECONCILE_GRACE_MS),
    };
    let delivery = Delivery::new(ports, settings, repo).with_feedback_words(FeedbackWords {
        mention: config.mention.clone(),
        issue_label: config.issue_label.clone(),
    });
    if config.pull_request {
        return crate::cmd::pull_request::attach(delivery, repo, &config.remote);
    }
    Ok(delivery)
}

/// [`open`], then reconciliation (reported on stderr).
pub async fn open_reconciled(repo: &Path, push: Option<bool>) -> Result<Delivery, Failure> {
    reconciled(open(repo, push).await?).await
}

/// Reconciliation of `delivery` (reported on stderr), then `delivery`.
pub async fn reconciled(delivery: Delivery) -> Result<Delivery, Failure> {
    let report = delivery.reconcile().await.map_err(failure)?;
    let mut err = std::io::stderr().lock();
    for line in report.fixed.iter().chain(&report.renotified) {
        let _ = writeln!(err, "reconciled: {line}");
    }
    Ok(delivery)
}

/// Exit code of a decision that lost the race: someone else decided first.
pub const ALREADY_DECIDED: u8 = 4;

/// Delivery errors as failures: bad ids and states are usage errors (exit 2), a lost race
/// is its own code, store and git failures exit 1.
pub fn failure(e: DeliveryError) -> Failure {
    match e {
        DeliveryError::Forge(inner) => Failure::Other(anyhow::anyhow!(inner)),
        other => Failure::Usage(other.to_string()),
    }
}

/// The report's `delivery` object in a few lines, for a terminal.
pub fn delivery_text(outcome: &forge_domain::task::TaskOutcome) -> String {
    let Some(d) = &outcome.delivery else {
        return format!("delivery: none ({})\n", outcome.status);
    };
    let mut text = format!("delivery: {} on {}\n", d.decision.as_str(), d.branch);
    if let Some(commit) = &d.commit {
        text.push_str(&format!("  commit {commit}\n"));
    }
    if d.pushed {
        text.push_str("  pushed\n");
    }
    if let Some(error) = &d.push_error {
        text.push_str(&format!("  push failed: {error}\n"));
    }
    if let Some(pr) = &outcome.pull_request {
        if let Some(opened) = &pr.opened {
            let draft = if opened.draft { " (draft)" } else { "" };
            text.push_str(&format!(
                "  pull request #{} {}{draft}\n",
                opened.number, opened.url
            ));
        }
        if let Some(error) = &pr.error {
            text.push_str(&format!("  pull request not opened yet: {error}\n"));
        }
    }
    if let Some(theirs) = &d.delivered_by_another_attempt {
        text.push_str(&format!(
            "  delivered by another attempt of the task (commit {theirs}); not pushed again\n"
        ));
    }
    if let Some(id) = &d.approval_id {
        text.push_str(&format!("  approval {id}\n"));
        if d.decision == forge_domain::task::DeliveryDecision::PendingApproval {
            text.push_str(&format!(
                "  approve: forge-code-agent approvals approve {id}\n  reject:  forge-code-agent approvals reject {id}\n"
            ));
        }
    }
    for n in &d.notifications {
        match &n.error {
            None => text.push_str(&format!("  notified {}\n", n.channel)),
            Some(e) => text.push_str(&format!("  {} failed: {e}\n", n.channel)),
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mirror_clone_names_its_origin() {
        let check = |text: &str, expected: Option<&str>| {
            assert_eq!(origin_of_mirror_config(text).as_deref(), expected, "{text}");
        };
        check(
            "[core]\n\tbare = true\n[remote \"origin\"]\n\turl = file:///r.git\n\tfetch = +refs/*:refs/*\n\tmirror = true\n",
            Some("file:///r.git"),
        );
        // Look-alikes: a plain clone, another remote that mirrors, no URL.
        check(
            "[remote \"origin\"]\n\turl = https://g/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
            None,
        );
        check(
            "[remote \"origin\"]\n\turl = https://g/r.git\n[remote \"backup\"]\n\turl = x\n\tmirror = true\n",
            None,
        );
        check("[remote \"origin\"]\n\tmirror = true\n", None);
        check("", None);
    }
}
