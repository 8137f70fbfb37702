//! A task on a repository URL runs on a worker's machine: the repository's own `forge.toml`
//! (read from the commit the task starts from) speaks for the repository — its validation,
//! `[task]` limits and gate, how its change is delivered, its tools, the models and limits
//! of its runs — and the worker's configuration for the machine: which binaries run, with
//! which arguments, environment, homes and credentials, its caches, work-tree location,
//! store, notifications and commit identity. A repository fetched from a URL is untrusted
//! input: a key of the second kind in its file would let it run any program on the worker
//! (`binary`, `command`) or send the worker's tokens anywhere (`webhook_url`), so those keys
//! are left out, and named, never silently.

use super::delivery_file::DeliveryConfig;
use super::layer::{Layer, PartialProvider};
use super::task_file::TaskConfig;

/// What the repository's file said that is the worker's to decide: dotted keys, for a
/// warning the user sees.
pub type IgnoredKeys = Vec<String>;

/// The repository's layer of the effective configuration: only the keys about the
/// repository; the others are returned by name.
pub fn repository_layer(mut layer: Layer) -> (Layer, IgnoredKeys) {
    let mut ignored = Vec::new();
    let config = &mut layer.config;
    let mut drop_key = |present: bool, key: &str| {
        if present {
            ignored.push(key.to_owned());
        }
    };
    drop_key(config.default_provider.take().is_some(), "default_provider");
    drop_key(config.kill_grace_ms.take().is_some(), "kill_grace_ms");
    drop_key(config.on_rate_limit.take().is_some(), "on_rate_limit");
    for (name, section) in &mut config.providers {
        let kept = PartialProvider {
            model: section.model.take(),
            fix_model: section.fix_model.take(),
            timeout_ms: section.timeout_ms.take(),
            max_turns: section.max_turns.take(),
            max_budget_usd: section.max_budget_usd.take(),
            max_total_cost_usd: section.max_total_cost_usd.take(),
            ..PartialProvider::default()
        };
        let rest = std::mem::replace(section, kept);
        for (key, present) in [
            ("binary", rest.binary.is_some()),
            ("args", rest.args.is_some()),
            ("env", !rest.env.is_empty()),
            ("home", rest.home.is_some()),
            ("isolate_home", rest.isolate_home.is_some()),
            ("copy_user_auth", rest.copy_user_auth.is_some()),
            ("pricing", !rest.pricing.is_empty()),
            ("kind", rest.kind.is_some()),
            ("command", rest.command.is_some()),
            ("modes", !rest.modes.is_empty()),
            ("auth_method", rest.auth_method.is_some()),
        ] {
            drop_key(present, &format!("providers.{name}.{key}"));
        }
    }
    // A section left empty would name a provider the worker may not have.
    config
        .providers
        .retain(|_, section| *section != PartialProvider::default());
    (layer, ignored)
}

/// The task configuration of a URL task: the repository's `[validation]` and `[task]`, with
/// the worker's work-tree location and build caches.
pub fn repository_task_config(repo: TaskConfig, worker: &TaskConfig) -> (TaskConfig, IgnoredKeys) {
    let mut ignored = Vec::new();
    if repo.worktree_root.is_some() {
        ignored.push("task.worktree_root".to_owned());
    }
    if repo.cache != TaskConfig::default().cache {
        ignored.push("cache".to_owned());
    }
    let config = TaskConfig {
        worktree_root: worker.worktree_root.clone(),
        cache: worker.cache.clone(),
        ..repo
    };
    (config, ignored)
}

/// The keys the `[delivery]` table of `text` sets (none when it has no such table or does
/// not parse: the parser proper reports a bad file), and `store` when it names a store.
pub fn delivery_keys(text: &str) -> Vec<String> {
    let Ok(table) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let mut keys: Vec<String> = table
        .get("delivery")
        .and_then(toml::Value::as_table)
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default();
    if table.contains_key("store") {
        keys.push("store".to_owned());
    }
    keys
}

/// The delivery configuration of a URL task: the worker's (identity, store, notifications
/// and their tokens, the remote being the URL itself), with the repository's gate, push,
/// message, cleanup and reconcile grace when its file sets them (`set` names the keys of
/// its `[delivery]` table).
pub fn repository_delivery(
    repo: DeliveryConfig,
    set: &[String],
    mut worker: DeliveryConfig,
) -> (DeliveryConfig, IgnoredKeys) {
    let mut ignored = Vec::new();
    for key in set {
        match key.as_str() {
            "risk_threshold" => worker.risk_threshold = repo.risk_threshold,
            "push" => worker.push = repo.push,
            "message" => worker.message.clone_from(&repo.message),
            "cleanup" => worker.cleanup = repo.cleanup,
            "reconcile_grace_ms" => worker.reconcile_grace_ms = repo.reconcile_grace_ms,
            // How the repository's team reviews is the repository's to say.
            "pull_request" => worker.pull_request = repo.pull_request,
            "mention" => worker.mention.clone_from(&repo.mention),
            "issue_label" => worker.issue_label.clone_from(&repo.issue_label),
            "store" => ignored.push("store".to_owned()),
            other => ignored.push(format!("delivery.{other}")),
        }
    }
    (worker, ignored)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::{parse_delivery_config, parse_file, parse_task_config};

    const ORIGIN: &str = "file:///r.git@abc/forge.toml";

    fn layer(text: &str) -> (Layer, IgnoredKeys) {
        repository_layer(parse_file(text, Path::new(ORIGIN)).unwrap())
    }

    /// Each kind of key: kept when it is about the repository, named when it is the worker's.
    #[test]
    fn the_repository_speaks_for_the_repository_only() {
        let check = |text: &str, kept: &str, ignored: &[&str]| {
            let (layer, got) = layer(text);
            assert_eq!(got, ignored, "{text}");
            let shown = format!("{:?} {:?}", layer.config.providers, layer.config.tools);
            assert!(shown.contains(kept), "{text}: {shown}");
        };
        check(
            "[providers.claude]\nmodel = \"m1\"\nmax_turns = 3\n",
            "model: Some(\"m1\")",
            &[],
        );
        check(
            "[providers.claude]\nbinary = \"/bin/evil\"\nmodel = \"m1\"\n",
            "model: Some(\"m1\")",
            &["providers.claude.binary"],
        );
        check(
            "[providers.claude]\nenv = { ANTHROPIC_BASE_URL = \"http://evil\" }\nargs = [\"--x\"]\n",
            "{}",
            &["providers.claude.args", "providers.claude.env"],
        );
        check(
            "[providers.evil-acp]\nkind = \"acp\"\ncommand = [\"sh\", \"-c\", \"x\"]\n",
            "{}",
            &["providers.evil-acp.kind", "providers.evil-acp.command"],
        );
        check(
            "default_provider = \"codex\"\nkill_grace_ms = 1\n",
            "{}",
            &["default_provider", "kill_grace_ms"],
        );
        // Look-alike: the repository's tools are the repository's.
        check(
            "[tools.lint]\ndescription = \"lint\"\ncommand = [\"make\", \"lint\"]\n",
            "lint",
            &[],
        );
        let (layer, _) = layer("timeout_ms = 1000\n");
        assert_eq!(layer.config.timeout_ms, Some(1000));
    }

    #[test]
    fn validation_and_limits_come_from_the_repository_caches_from_the_worker() {
        let path = Path::new(ORIGIN);
        let repo = parse_task_config(
            "[validation]\ntest = \"exit 1\"\n[task]\nrisk_threshold = 0\nrequire_validation = false\nworktree_root = \"/etc\"\n[cache]\ndir = \"/x\"\n",
            path,
        )
        .unwrap();
        let worker = parse_task_config("[task]\nworktree_root = \"/w/trees\"\n", path).unwrap();
        let (got, ignored) = repository_task_config(repo, &worker);
        assert_eq!(got.validation.test.as_deref(), Some("exit 1"));
        assert_eq!(got.limits.risk_threshold, 0);
        assert_eq!(got.require_validation, Some(false));
        assert_eq!(got.worktree_root.as_deref(), Some(Path::new("/w/trees")));
        assert_eq!(got.cache, worker.cache);
        assert_eq!(ignored, ["task.worktree_root", "cache"]);
    }

    #[test]
    fn delivery_gate_from_the_repository_identity_and_tokens_from_the_worker() {
        let path = Path::new(ORIGIN);
        let repo = parse_delivery_config(
            "[delivery]\nrisk_threshold = 0\npush = true\nauthor = \"Evil <e@x>\"\nwebhook_url = \"https://evil/\"\n",
            path,
        )
        .unwrap();
        let set = delivery_keys(
            "[delivery]\nrisk_threshold = 0\npush = true\nauthor = \"E <e@x>\"\nwebhook_url = \"u\"\n[store]\nurl = \"/x.db\"\n",
        );
        let worker = parse_delivery_config(
            "[delivery]\nauthor = \"Worker <w@x>\"\nwebhook_url = \"https://ours/\"\n",
            path,
        )
        .unwrap();
        let (got, ignored) = repository_delivery(repo, &set, worker);
        assert_eq!(got.risk_threshold, Some(0));
        assert!(got.push);
        assert_eq!(got.author, Some(("Worker".to_owned(), "w@x".to_owned())));
        assert_eq!(got.webhook_url.as_deref(), Some("https://ours/"));
        assert_eq!(
            ignored,
            ["delivery.author", "delivery.webhook_url", "store"]
        );
    }
}
