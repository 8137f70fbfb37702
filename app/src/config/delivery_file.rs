//! The delivery step's sections of `forge.toml`:
//!
//! ```toml
//! [delivery]
//! risk_threshold = 3             # below it: commit; at or above: hold for approval
//! push = false                   # push the task branch after committing (`--push`)
//! remote = "origin"
//! author = "Forge Bot <forge@example.com>"   # default: git's configured identity
//! message = "{type}: {title}\n\n{summary}"   # the Forge-Task trailer is always added
//! webhook_url = "https://hooks.example.com/forge"     # + FORGE_WEBHOOK_TOKEN (bearer)
//! telegram_chat_id = "-1001234"                       # + TELEGRAM_BOT_TOKEN
//! telegram_api_base = "https://api.telegram.org"
//! cleanup = true                 # remove the work tree once delivered (branch kept)
//! reconcile_grace_ms = 60000     # on start, repair tasks untouched for this long
//! pull_request = false           # push and open a pull request (`--pull-request`; issue 39)
//! mention = "forge"              # the handle a comment mentions (`@forge`) to steer forge
//! issue_label = "forge"          # the label that turns an issue into a task
//!
//! [store]
//! url = "sqlite://.forgecode/forge.db"   # relative to the repository; the default
//! ```

use std::path::Path;

use forge_domain::forges::DEFAULT_HANDLE;
use toml::{Table, Value};

use super::error::ConfigError;

const DELIVERY_KEYS: &[&str] = &[
    "risk_threshold",
    "push",
    "remote",
    "author",
    "message",
    "webhook_url",
    "telegram_chat_id",
    "telegram_api_base",
    "cleanup",
    "reconcile_grace_ms",
    "pull_request",
    "mention",
    "issue_label",
];
const STORE_KEYS: &[&str] = &["url"];

/// Telegram's own Bot API.
pub const DEFAULT_TELEGRAM_API_BASE: &str = "https://api.telegram.org";
pub const DEFAULT_REMOTE: &str = "origin";

/// `[delivery]` and `[store]` together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryConfig {
    /// `None`: the `[task] risk_threshold` (default 3).
    pub risk_threshold: Option<u8>,
    pub push: bool,
    pub remote: String,
    /// `(name, email)`.
    pub author: Option<(String, String)>,
    pub message: Option<String>,
    pub webhook_url: Option<String>,
    pub telegram_chat_id: Option<String>,
    pub telegram_api_base: String,
    pub cleanup: bool,
    pub store_url: Option<String>,
    /// `None`: the use case's default (a minute).
    pub reconcile_grace_ms: Option<u64>,
    /// Deliver as a pull request on the repository's forge (the branch is pushed).
    pub pull_request: bool,
    /// The handle (without `@`) a comment mentions to steer forge.
    pub mention: String,
    /// The label that turns an issue into a task.
    pub issue_label: String,
}

impl Default for DeliveryConfig {
    fn default() -> Self {
        Self {
            risk_threshold: None,
            push: false,
            remote: DEFAULT_REMOTE.to_owned(),
            author: None,
            message: None,
            webhook_url: None,
            telegram_chat_id: None,
            telegram_api_base: DEFAULT_TELEGRAM_API_BASE.to_owned(),
            cleanup: true,
            store_url: None,
            reconcile_grace_ms: None,
            pull_request: false,
            mention: DEFAULT_HANDLE.to_owned(),
            issue_label: DEFAULT_HANDLE.to_owned(),
        }
    }
}

/// Reads `[delivery]` and `[store]` of the file at `path` (only for messages); absent
/// tables give the defaults.
///
/// # Errors
/// [`ConfigError`] naming the file, the dotted key and the reason for bad TOML, an unknown
/// key, or a value of the wrong type or range.
pub fn parse_delivery_config(text: &str, path: &Path) -> Result<DeliveryConfig, ConfigError> {
    let origin = format!("file {}", path.display());
    let table: Table = text
        .parse()
        .map_err(|e: toml::de::Error| ConfigError::whole(&origin, e.message().to_owned()))?;
    let err = |key: &str, reason: String| ConfigError::new(&origin, key, reason);
    let mut config = DeliveryConfig::default();
    if let Some(d) = section(&table, "delivery", DELIVERY_KEYS, &err)? {
        let text = |key: &str| -> Result<Option<String>, ConfigError> {
            match d.get(key) {
                None => Ok(None),
                Some(Value::String(s)) if s.trim().is_empty() => {
                    Err(err(&format!("delivery.{key}"), "must not be empty".into()))
                }
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(v) => Err(err(
                    &format!("delivery.{key}"),
                    format!("expected a string, found {}", v.type_str()),
                )),
            }
        };
        let flag = |key: &str, default: bool| -> Result<bool, ConfigError> {
            match d.get(key) {
                None => Ok(default),
                Some(Value::Boolean(b)) => Ok(*b),
                Some(v) => Err(err(
                    &format!("delivery.{key}"),
                    format!("expected a boolean, found {}", v.type_str()),
                )),
            }
        };
        config.risk_threshold = match d.get("risk_threshold") {
            None => None,
            Some(Value::Integer(i)) if (0..=11).contains(i) => u8::try_from(*i).ok(),
            Some(Value::Integer(i)) => {
                return Err(err(
                    "delivery.risk_threshold",
                    format!("{i} is out of range (0..=11)"),
                ));
            }
            Some(v) => {
                return Err(err(
                    "delivery.risk_threshold",
                    format!("expected an integer, found {}", v.type_str()),
                ));
            }
        };
        config.push = flag("push", false)?;
        config.pull_request = flag("pull_request", false)?;
        for (key, slot) in [
            ("mention", &mut config.mention),
            ("issue_label", &mut config.issue_label),
        ] {
            if let Some(word) = text(key)? {
                let word = word.strip_prefix('@').unwrap_or(&word).to_owned();
                if word.contains(char::is_whitespace) || word.is_empty() {
                    return Err(err(
                        &format!("delivery.{key}"),
                        format!("{word:?} must be one word"),
                    ));
                }
                *slot = word;
            }
        }
        config.cleanup = flag("cleanup", true)?;
        if let Some(remote) = text("remote")? {
            config.remote = remote;
        }
        config.author = match text("author")? {
            None => None,
            Some(a) => Some(parse_author(&a).ok_or_else(|| {
                err(
                    "delivery.author",
                    format!("{a:?} is not of the form \"Name <email>\""),
                )
            })?),
        };
        config.message = text("message")?;
        config.reconcile_grace_ms = match d.get("reconcile_grace_ms") {
            None => None,
            Some(Value::Integer(i)) if *i >= 0 => u64::try_from(*i).ok(),
            Some(v) => {
                return Err(err(
                    "delivery.reconcile_grace_ms",
                    format!("expected a non-negative integer, found {v}"),
                ));
            }
        };
        config.webhook_url = text("webhook_url")?;
        config.telegram_chat_id = match d.get("telegram_chat_id") {
            // Chat ids are numbers; accept them written as one.
            Some(Value::Integer(i)) => Some(i.to_string()),
            _ => text("telegram_chat_id")?,
        };
        if let Some(base) = text("telegram_api_base")? {
            config.telegram_api_base = base;
        }
    }
    if let Some(s) = section(&table, "store", STORE_KEYS, &err)? {
        config.store_url = match s.get("url") {
            None => None,
            Some(Value::String(u)) if !u.trim().is_empty() => Some(u.clone()),
            Some(v) => {
                return Err(err(
                    "store.url",
                    format!("expected a non-empty string, found {}", v.type_str()),
                ));
            }
        };
    }
    Ok(config)
}

fn section<'t>(
    table: &'t Table,
    name: &str,
    allowed: &[&str],
    err: &impl Fn(&str, String) -> ConfigError,
) -> Result<Option<&'t Table>, ConfigError> {
    match table.get(name) {
        None => Ok(None),
        Some(Value::Table(t)) => {
            if let Some(key) = t.keys().find(|k| !allowed.contains(&k.as_str())) {
                return Err(err(
                    &format!("{name}.{key}"),
                    format!("unknown key (expected one of: {})", allowed.join(", ")),
                ));
            }
            Ok(Some(t))
        }
        Some(v) => Err(err(
            name,
            format!("expected a table, found {}", v.type_str()),
        )),
    }
}

/// `Name <email>` → `(Name, email)`.
pub fn parse_author(text: &str) -> Option<(String, String)> {
    let (name, rest) = text.trim().split_once('<')?;
    let email = rest.strip_suffix('>')?.trim();
    let name = name.trim();
    if name.is_empty() || email.is_empty() || email.contains(['<', '>']) {
        return None;
    }
    Some((name.to_owned(), email.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<DeliveryConfig, String> {
        parse_delivery_config(text, Path::new("/w/forge.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_and_every_key() {
        assert_eq!(parse("").unwrap(), DeliveryConfig::default());
        let c = parse(
            "[delivery]\nrisk_threshold = 5\npush = true\nremote = \"up\"\n\
             author = \"Forge Bot <forge@x.invalid>\"\nmessage = \"{type}: {title}\"\n\
             webhook_url = \"http://127.0.0.1:9/h\"\ntelegram_chat_id = -100123\n\
             telegram_api_base = \"http://127.0.0.1:8\"\ncleanup = false\nreconcile_grace_ms = 0\n\
             pull_request = true\nmention = \"@helper\"\nissue_label = \"agent\"\n\
             [store]\nurl = \"sqlite:///tmp/f.db\"\n",
        )
        .unwrap();
        assert_eq!(
            c,
            DeliveryConfig {
                risk_threshold: Some(5),
                push: true,
                remote: "up".into(),
                author: Some(("Forge Bot".into(), "forge@x.invalid".into())),
                message: Some("{type}: {title}".into()),
                webhook_url: Some("http://127.0.0.1:9/h".into()),
                telegram_chat_id: Some("-100123".into()),
                telegram_api_base: "http://127.0.0.1:8".into(),
                cleanup: false,
                store_url: Some("sqlite:///tmp/f.db".into()),
                reconcile_grace_ms: Some(0),
                pull_request: true,
                mention: "helper".into(),
                issue_label: "agent".into(),
            }
        );
    }

    #[test]
    fn bad_values_are_named() {
        for (text, needle) in [
            ("[delivery]\npushh = true\n", "delivery.pushh"),
            ("[delivery]\npush = \"yes\"\n", "delivery.push"),
            (
                "[delivery]\nrisk_threshold = 12\n",
                "delivery.risk_threshold",
            ),
            ("[delivery]\nauthor = \"nobody\"\n", "delivery.author"),
            ("[delivery]\nremote = \"\"\n", "delivery.remote"),
            ("[store]\nurl = 3\n", "store.url"),
            ("[store]\npath = \"x\"\n", "store.path"),
            ("delivery = 1\n", "delivery"),
            ("[delivery]\npull_request = 1\n", "delivery.pull_request"),
            ("[delivery]\nmention = \"two words\"\n", "delivery.mention"),
            ("[delivery]\nissue_label = \"@\"\n", "delivery.issue_label"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }

    #[test]
    fn authors() {
        for (text, expected) in [
            ("A B <a@b>", Some(("A B", "a@b"))),
            ("  A <a@b>  ", Some(("A", "a@b"))),
            ("<a@b>", None),
            ("A a@b", None),
            ("A <>", None),
            ("A <a<b>", None),
        ] {
            let got = parse_author(text);
            let got = got.as_ref().map(|(n, e)| (n.as_str(), e.as_str()));
            assert_eq!(got, expected, "{text}");
        }
    }
}
