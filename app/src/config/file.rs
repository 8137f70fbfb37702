//! Reading a TOML configuration file's text into a [`Layer`], key by key, so every error
//! names the file, the dotted key and the reason, and an unknown key is refused by name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use forge_domain::{ModelPrice, ProviderId};
use toml::{Table, Value};

use super::error::ConfigError;
use super::layer::{Layer, PartialConfig, PartialProvider};
use super::source::Source;

const GLOBAL_KEYS: &[&str] = &[
    "default_provider",
    "timeout_ms",
    "kill_grace_ms",
    "on_rate_limit",
    "providers",
    // Read by `task_file::parse_task_config` (the task pipeline's sections).
    "validation",
    "task",
    "cache",
    // Read by `delivery_file::parse_delivery_config`.
    "delivery",
    "store",
    // Read by `serve` itself (its roots); a run's configuration has no use for it.
    "server",
    // Read by the queue commands (`--queue`'s default, the worker's defaults).
    "queue",
    "tools",
    // Read by `review_file::parse_review_config`.
    "review",
    // Read by `sandbox_file::parse_sandbox_config` (the user config only).
    "sandbox",
    // Read by `forges_file::parse_forges_config` (the user config only).
    "forges",
    // Read by `permissions_file::parse_permissions_config`.
    "permissions",
];
const PROVIDER_KEYS: &[&str] = &[
    "binary",
    "args",
    "env",
    "home",
    "isolate_home",
    "copy_user_auth",
    "model",
    "fix_model",
    "timeout_ms",
    "max_turns",
    "max_budget_usd",
    "max_total_cost_usd",
    "pricing",
    // A provider configured by protocol rather than registered by name.
    "kind",
    "command",
    "modes",
    "auth_method",
];
const PRICE_KEYS: &[&str] = &["input_per_mtok", "cached_input_per_mtok", "output_per_mtok"];

/// Parses the configuration file at `path` (used for messages, sources, and to resolve
/// relative paths: `binary = "./bin/claude"` is relative to the file's directory; a bare
/// name like `claude` is left for a PATH lookup).
///
/// # Errors
/// [`ConfigError`] naming the file, key and reason for bad TOML, an unknown key, or a value
/// of the wrong type or range.
pub fn parse_file(text: &str, path: &Path) -> Result<Layer, ConfigError> {
    let reader = Reader {
        origin: format!("file {}", path.display()),
        base: path.parent().map(Path::to_path_buf),
    };
    let table: Table = text
        .parse()
        .map_err(|e: toml::de::Error| ConfigError::whole(&reader.origin, one_line(&e)))?;
    let config = reader.global(&table)?;
    Ok(Layer::new(Source::File(path.to_path_buf()), config))
}

fn one_line(e: &toml::de::Error) -> String {
    e.to_string()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('|'))
        .collect::<Vec<_>>()
        .join("; ")
}

struct Reader {
    origin: String,
    base: Option<PathBuf>,
}

impl Reader {
    fn err(&self, key: &str, reason: impl Into<String>) -> ConfigError {
        ConfigError::new(&self.origin, key, reason)
    }

    fn check_keys(&self, table: &Table, prefix: &str, allowed: &[&str]) -> Result<(), ConfigError> {
        for key in table.keys() {
            if !allowed.contains(&key.as_str()) {
                return Err(self.err(
                    &join(prefix, key),
                    format!("unknown key (expected one of: {})", allowed.join(", ")),
                ));
            }
        }
        Ok(())
    }

    fn global(&self, table: &Table) -> Result<PartialConfig, ConfigError> {
        self.check_keys(table, "", GLOBAL_KEYS)?;
        let mut config = PartialConfig {
            default_provider: self.string(table, "", "default_provider")?,
            timeout_ms: self.u64(table, "", "timeout_ms")?,
            kill_grace_ms: self.u64(table, "", "kill_grace_ms")?,
            on_rate_limit: self
                .string(table, "", "on_rate_limit")?
                .map(|text| {
                    text.parse()
                        .map_err(|reason: String| self.err("on_rate_limit", reason))
                })
                .transpose()?,
            providers: BTreeMap::new(),
            tools: BTreeMap::new(),
        };
        if let Some(tools) = self.table(table, "", "tools")? {
            config
                .tools
                .extend(super::tools::parse_tools(tools, &self.origin)?);
        }
        if let Some(name) = &config.default_provider {
            self.provider_name("default_provider", name)?;
        }
        if let Some(providers) = self.table(table, "", "providers")? {
            for (id, section) in providers {
                let key = join("providers", id);
                self.provider_name(&key, id)?;
                let Value::Table(section) = section else {
                    return Err(self.err(
                        &key,
                        format!("expected a table, found {}", section.type_str()),
                    ));
                };
                config
                    .providers
                    .insert(id.clone(), self.provider(section, &key)?);
            }
        }
        Ok(config)
    }

    fn provider_name(&self, key: &str, name: &str) -> Result<(), ConfigError> {
        ProviderId::new(name)
            .map(drop)
            .map_err(|e| self.err(key, e.to_string()))
    }

    fn provider(&self, t: &Table, p: &str) -> Result<PartialProvider, ConfigError> {
        self.check_keys(t, p, PROVIDER_KEYS)?;
        let mut pricing = BTreeMap::new();
        if let Some(models) = self.table(t, p, "pricing")? {
            let prefix = join(p, "pricing");
            for (model, price) in models {
                let key = join(&prefix, model);
                let Value::Table(price) = price else {
                    return Err(self.err(
                        &key,
                        format!("expected a table, found {}", price.type_str()),
                    ));
                };
                pricing.insert(model.clone(), self.price(price, &key)?);
            }
        }
        Ok(PartialProvider {
            binary: self.path(t, p, "binary")?,
            args: self.strings(t, p, "args")?,
            env: self.string_map(t, p, "env")?,
            home: self.path(t, p, "home")?,
            isolate_home: self.bool(t, p, "isolate_home")?,
            copy_user_auth: self.bool(t, p, "copy_user_auth")?,
            model: self.string(t, p, "model")?,
            fix_model: self.string(t, p, "fix_model")?,
            timeout_ms: self.u64(t, p, "timeout_ms")?,
            max_turns: self.u32(t, p, "max_turns")?,
            max_budget_usd: self.money(t, p, "max_budget_usd")?,
            max_total_cost_usd: self.money(t, p, "max_total_cost_usd")?,
            pricing,
            kind: self.string(t, p, "kind")?,
            command: self.strings(t, p, "command")?,
            modes: self.modes(t, p)?,
            auth_method: self.string(t, p, "auth_method")?,
        })
        .and_then(|section| self.kind_keys(section, p))
    }

    /// `command` and `modes` belong to a provider configured by `kind`, which needs a
    /// non-empty `command`.
    fn kind_keys(&self, section: PartialProvider, p: &str) -> Result<PartialProvider, ConfigError> {
        match (&section.kind, &section.command) {
            (Some(_), None) => Err(self.err(&join(p, "command"), "missing (required with `kind`)")),
            (Some(_), Some(argv)) if argv.first().is_none_or(|w| w.trim().is_empty()) => Err(self
                .err(
                    &join(p, "command"),
                    "empty (expected the agent's argv, e.g. [\"gemini\", \"--acp\"])",
                )),
            (None, Some(_)) => Err(self.err(
                &join(p, "command"),
                "only with `kind` (e.g. kind = \"acp\")",
            )),
            (None, None) if !section.modes.is_empty() => {
                Err(self.err(&join(p, "modes"), "only with `kind` (e.g. kind = \"acp\")"))
            }
            (None, None) if section.auth_method.is_some() => Err(self.err(
                &join(p, "auth_method"),
                "only with `kind` (e.g. kind = \"acp\")",
            )),
            _ => Ok(section),
        }
    }

    /// `modes = { bypass = "yolo", … }`: forge's permission modes → the agent's mode ids.
    fn modes(&self, t: &Table, p: &str) -> Result<BTreeMap<String, String>, ConfigError> {
        let modes = self.string_map(t, p, "modes")?;
        for mode in modes.keys() {
            if mode.parse::<forge_domain::PermissionMode>().is_err() {
                return Err(self.err(
                    &join(&join(p, "modes"), mode),
                    "unknown permission mode (expected one of: default, accept-edits, bypass, plan)",
                ));
            }
        }
        Ok(modes)
    }

    fn price(&self, t: &Table, p: &str) -> Result<ModelPrice, ConfigError> {
        self.check_keys(t, p, PRICE_KEYS)?;
        let required = |key: &str| {
            self.money(t, p, key)?
                .ok_or_else(|| self.err(&join(p, key), "missing (required in a price)"))
        };
        Ok(ModelPrice {
            input_per_mtok: required("input_per_mtok")?,
            cached_input_per_mtok: self.money(t, p, "cached_input_per_mtok")?,
            output_per_mtok: required("output_per_mtok")?,
        })
    }

    fn string(&self, t: &Table, p: &str, key: &str) -> Result<Option<String>, ConfigError> {
        match t.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.wrong(p, key, "a string", v)),
        }
    }

    fn path(&self, t: &Table, p: &str, key: &str) -> Result<Option<PathBuf>, ConfigError> {
        let Some(s) = self.string(t, p, key)? else {
            return Ok(None);
        };
        if s.is_empty() {
            return Err(self.err(&join(p, key), "must not be empty"));
        }
        let path = PathBuf::from(&s);
        // A bare name is looked up on PATH; anything with a slash is a path.
        if path.is_relative() && s.contains('/') {
            if let Some(base) = &self.base {
                return Ok(Some(base.join(path)));
            }
        }
        Ok(Some(path))
    }

    fn bool(&self, t: &Table, p: &str, key: &str) -> Result<Option<bool>, ConfigError> {
        match t.get(key) {
            None => Ok(None),
            Some(Value::Boolean(b)) => Ok(Some(*b)),
            Some(v) => Err(self.wrong(p, key, "true or false", v)),
        }
    }

    fn u64(&self, t: &Table, p: &str, key: &str) -> Result<Option<u64>, ConfigError> {
        match t.get(key) {
            None => Ok(None),
            Some(Value::Integer(i)) => u64::try_from(*i)
                .map(Some)
                .map_err(|_| self.err(&join(p, key), format!("must not be negative, found {i}"))),
            Some(v) => Err(self.wrong(p, key, "an integer", v)),
        }
    }

    fn u32(&self, t: &Table, p: &str, key: &str) -> Result<Option<u32>, ConfigError> {
        match self.u64(t, p, key)? {
            None => Ok(None),
            Some(n) => u32::try_from(n)
                .map(Some)
                .map_err(|_| self.err(&join(p, key), format!("{n} is too large"))),
        }
    }

    /// A non-negative, finite amount (integers accepted: `max_budget_usd = 2`).
    fn money(&self, t: &Table, p: &str, key: &str) -> Result<Option<f64>, ConfigError> {
        let n = match t.get(key) {
            None => return Ok(None),
            Some(Value::Float(f)) => *f,
            #[expect(clippy::cast_precision_loss, reason = "amounts are far below 2^52")]
            Some(Value::Integer(i)) => *i as f64,
            Some(v) => return Err(self.wrong(p, key, "a number", v)),
        };
        if !n.is_finite() || n < 0.0 {
            return Err(self.err(
                &join(p, key),
                format!("must be a non-negative number, found {n}"),
            ));
        }
        Ok(Some(n))
    }

    fn strings(&self, t: &Table, p: &str, key: &str) -> Result<Option<Vec<String>>, ConfigError> {
        match t.get(key) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => Ok(s.clone()),
                    v => Err(self.wrong(p, &format!("{key}[{i}]"), "a string", v)),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(v) => Err(self.wrong(p, key, "an array of strings", v)),
        }
    }

    fn string_map(
        &self,
        t: &Table,
        p: &str,
        key: &str,
    ) -> Result<BTreeMap<String, String>, ConfigError> {
        let Some(table) = self.table(t, p, key)? else {
            return Ok(BTreeMap::new());
        };
        let prefix = join(p, key);
        table
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                v => Err(self.wrong(&prefix, k, "a string", v)),
            })
            .collect()
    }

    fn table<'t>(
        &self,
        t: &'t Table,
        p: &str,
        key: &str,
    ) -> Result<Option<&'t Table>, ConfigError> {
        match t.get(key) {
            None => Ok(None),
            Some(Value::Table(table)) => Ok(Some(table)),
            Some(v) => Err(self.wrong(p, key, "a table", v)),
        }
    }

    fn wrong(&self, p: &str, key: &str, expected: &str, found: &Value) -> ConfigError {
        self.err(
            &join(p, key),
            format!("expected {expected}, found {}", found.type_str()),
        )
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_owned()
    } else {
        format!("{prefix}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<PartialConfig, String> {
        parse_file(text, Path::new("/w/forge.toml"))
            .map(|l| l.config)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn reads_every_key() {
        let config = parse(
            r#"
            default_provider = "codex"
            timeout_ms = 5000
            kill_grace_ms = 100
            [providers.codex]
            binary = "./bin/codex"
            args = ["-c", "x=1"]
            env = { A = "1" }
            home = "/h"
            isolate_home = true
            copy_user_auth = false
            model = "gpt-5.5"
            fix_model = "gpt-5.5-mini"
            timeout_ms = 10
            max_turns = 3
            max_budget_usd = 2
            max_total_cost_usd = 10.5
            [providers.codex.pricing."gpt-5.5"]
            input_per_mtok = 1.25
            output_per_mtok = 10.0
            "#,
        )
        .unwrap();
        assert_eq!(config.default_provider.as_deref(), Some("codex"));
        let codex = &config.providers["codex"];
        assert_eq!(codex.binary.as_deref(), Some(Path::new("/w/./bin/codex")));
        assert_eq!(codex.home.as_deref(), Some(Path::new("/h")));
        assert_eq!(codex.max_budget_usd, Some(2.0));
        assert_eq!(codex.env["A"], "1");
        assert_eq!(codex.pricing["gpt-5.5"].output_per_mtok, 10.0);
        assert_eq!(codex.pricing["gpt-5.5"].cached_input_per_mtok, None);
    }

    #[test]
    fn reads_a_provider_by_kind() {
        let config = parse(
            "[providers.gemini-acp]\nkind = \"acp\"\ncommand = [\"gemini\", \"--acp\"]\nenv = { GEMINI_API_KEY = \"k\" }\nmodes = { bypass = \"yolo\" }\nauth_method = \"gemini-api-key\"",
        )
        .unwrap();
        let p = &config.providers["gemini-acp"];
        assert_eq!(p.kind.as_deref(), Some("acp"));
        assert_eq!(
            p.command.as_deref(),
            Some(&["gemini".to_owned(), "--acp".to_owned()][..])
        );
        assert_eq!(p.modes["bypass"], "yolo");
        assert_eq!(p.auth_method.as_deref(), Some("gemini-api-key"));
        assert_eq!(p.env["GEMINI_API_KEY"], "k");
    }

    #[test]
    fn errors_name_file_key_and_reason() {
        let check = |text: &str, want: &str| assert_eq!(parse(text).unwrap_err(), want, "{text}");
        check(
            "timout_ms = 1",
            "bad configuration in file /w/forge.toml: key `timout_ms`: unknown key (expected one of: default_provider, timeout_ms, kill_grace_ms, on_rate_limit, providers, validation, task, cache, delivery, store, server, queue, tools, review, sandbox, forges, permissions)",
        );
        check(
            "[providers.claude]\nmodle = \"x\"",
            "bad configuration in file /w/forge.toml: key `providers.claude.modle`: unknown key (expected one of: binary, args, env, home, isolate_home, copy_user_auth, model, fix_model, timeout_ms, max_turns, max_budget_usd, max_total_cost_usd, pricing, kind, command, modes, auth_method)",
        );
        // A provider by kind: its keys, and look-alikes that are refused.
        check(
            "[providers.x-acp]\nkind = \"acp\"",
            "bad configuration in file /w/forge.toml: key `providers.x-acp.command`: missing (required with `kind`)",
        );
        check(
            "[providers.x-acp]\nkind = \"acp\"\ncommand = []",
            "bad configuration in file /w/forge.toml: key `providers.x-acp.command`: empty (expected the agent's argv, e.g. [\"gemini\", \"--acp\"])",
        );
        check(
            "[providers.gemini]\ncommand = [\"gemini\"]",
            "bad configuration in file /w/forge.toml: key `providers.gemini.command`: only with `kind` (e.g. kind = \"acp\")",
        );
        check(
            "[providers.gemini]\nmodes = { bypass = \"yolo\" }",
            "bad configuration in file /w/forge.toml: key `providers.gemini.modes`: only with `kind` (e.g. kind = \"acp\")",
        );
        check(
            "[providers.gemini]\nauth_method = \"oauth\"",
            "bad configuration in file /w/forge.toml: key `providers.gemini.auth_method`: only with `kind` (e.g. kind = \"acp\")",
        );
        check(
            "[providers.x-acp]\nkind = \"acp\"\ncommand = [\"a\"]\nmodes = { yolo = \"yolo\" }",
            "bad configuration in file /w/forge.toml: key `providers.x-acp.modes.yolo`: unknown permission mode (expected one of: default, accept-edits, bypass, plan)",
        );
        check(
            "timeout_ms = \"10s\"",
            "bad configuration in file /w/forge.toml: key `timeout_ms`: expected an integer, found string",
        );
        check(
            "[providers.gemini]\nmax_turns = -1",
            "bad configuration in file /w/forge.toml: key `providers.gemini.max_turns`: must not be negative, found -1",
        );
        check(
            "[providers.Gemini]",
            "bad configuration in file /w/forge.toml: key `providers.Gemini`: provider id \"Gemini\" has a character outside [a-z0-9_-]",
        );
        check(
            "[providers.codex.pricing.m]\ninput_per_mtok = 1",
            "bad configuration in file /w/forge.toml: key `providers.codex.pricing.m.output_per_mtok`: missing (required in a price)",
        );
        check(
            "[providers.codex]\nargs = [\"a\", 1]",
            "bad configuration in file /w/forge.toml: key `providers.codex.args[1]`: expected a string, found integer",
        );
        assert!(
            parse("timeout_ms = ")
                .unwrap_err()
                .starts_with("bad configuration in file /w/forge.toml: TOML parse error at line 1")
        );
    }
}
