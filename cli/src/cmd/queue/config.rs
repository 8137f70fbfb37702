//! `[queue]` of the user configuration file: the queue URL and the worker's defaults, so
//! `--queue` (and `worker`'s flags) can be left out on a machine that always uses one queue.
//!
//! ```toml
//! [queue]
//! url = "postgres://forge@db/forge"
//! concurrency = 2
//! lease_ms = 30000
//! drain_secs = 60
//! max_attempts = 3
//! ```
//!
//! A flag (or `FORGE_QUEUE_URL`) wins over the file; an unknown key or a value out of range
//! is a usage error naming the file and key.

use crate::config_load::user_config_file;
use crate::exit::Failure;

/// The `[queue]` table as read; every key optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueConfig {
    pub url: Option<String>,
    pub concurrency: Option<u16>,
    pub lease_ms: Option<u64>,
    pub drain_secs: Option<u64>,
    pub max_attempts: Option<u32>,
}

const KEYS: &[&str] = &[
    "url",
    "concurrency",
    "lease_ms",
    "drain_secs",
    "max_attempts",
];

/// The `[queue]` table of the user configuration file; empty when there is no file.
///
/// # Errors
/// A usage error naming the file and key for bad TOML, an unknown key or a bad value.
pub fn load() -> Result<QueueConfig, Failure> {
    let Some(path) = user_config_file() else {
        return Ok(QueueConfig::default());
    };
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(QueueConfig::default());
    };
    parse(&text).map_err(|reason| Failure::Usage(format!("file {}: {reason}", path.display())))
}

fn number<T: TryFrom<i64>>(
    table: &toml::Table,
    key: &str,
    range: std::ops::RangeInclusive<i64>,
) -> Result<Option<T>, String> {
    let Some(value) = table.get(key) else {
        return Ok(None);
    };
    let n = value
        .as_integer()
        .ok_or_else(|| format!("queue.{key}: expected a number"))?;
    if !range.contains(&n) {
        return Err(format!(
            "queue.{key}: {n} is not in {}..={}",
            range.start(),
            range.end()
        ));
    }
    T::try_from(n)
        .map(Some)
        .map_err(|_| format!("queue.{key}: {n} is out of range"))
}

/// The `[queue]` table of a configuration file's text.
pub fn parse(text: &str) -> Result<QueueConfig, String> {
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| e.message().to_owned())?;
    let Some(queue) = table.get("queue") else {
        return Ok(QueueConfig::default());
    };
    let queue = queue
        .as_table()
        .ok_or_else(|| "queue: expected a table".to_owned())?;
    if let Some(key) = queue.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!(
            "queue.{key}: unknown key (expected one of: {})",
            KEYS.join(", ")
        ));
    }
    let url = match queue.get("url") {
        None => None,
        Some(v) => Some(
            v.as_str()
                .filter(|s| !s.trim().is_empty())
                .ok_or_else(|| "queue.url: expected a non-empty string".to_owned())?
                .to_owned(),
        ),
    };
    Ok(QueueConfig {
        url,
        concurrency: number(queue, "concurrency", 1..=64)?,
        lease_ms: number(queue, "lease_ms", 1_000..=3_600_000)?,
        drain_secs: number(queue, "drain_secs", 0..=86_400)?,
        max_attempts: number(queue, "max_attempts", 1..=100)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_table_is_read_key_by_key() {
        let check = |text: &str, expected: Result<QueueConfig, &str>| {
            let got = parse(text);
            match (&got, &expected) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
                (Err(reason), Err(says)) => assert!(reason.contains(says), "{text}: {reason}"),
                _ => panic!("{text}: {got:?}"),
            }
        };
        check("", Ok(QueueConfig::default()));
        check("[server]\nroots = []\n", Ok(QueueConfig::default()));
        check(
            "[queue]\nurl = \"postgres://forge@db/forge\"\nconcurrency = 4\nlease_ms = 5000\n\
             drain_secs = 0\nmax_attempts = 2\n",
            Ok(QueueConfig {
                url: Some("postgres://forge@db/forge".into()),
                concurrency: Some(4),
                lease_ms: Some(5_000),
                drain_secs: Some(0),
                max_attempts: Some(2),
            }),
        );
        // Look-alikes refused with the key named.
        check("[queue]\nurl = \"\"\n", Err("queue.url"));
        check("[queue]\nurl = 5\n", Err("queue.url"));
        check(
            "[queue]\nconcurrency = 0\n",
            Err("queue.concurrency: 0 is not in 1..=64"),
        );
        check(
            "[queue]\nconcurrency = \"2\"\n",
            Err("queue.concurrency: expected a number"),
        );
        check("[queue]\nlease_ms = 10\n", Err("queue.lease_ms"));
        check("[queue]\nmax_attempts = 101\n", Err("queue.max_attempts"));
        check("[queue]\nulr = \"x\"\n", Err("queue.ulr: unknown key"));
        check(
            "queue = \"sqlite://q.db\"\n",
            Err("queue: expected a table"),
        );
        check("[queue\n", Err(""));
    }
}
