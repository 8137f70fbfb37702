//! The task pipeline's sections of `forge.toml`, read from the same text as the rest:
//!
//! ```toml
//! [validation]                 # each step optional; any set → detection is off
//! install = "npm ci"
//! lint = "npm run lint"
//! build = "npm run build"
//! test = "npm test"
//! timeout_ms = 600000          # per step (default 10 minutes)
//!
//! [task]
//! max_cycles = 5               # validation cycles (main run included)
//! max_review_cycles = 2        # correction runs for CRITICAL review findings
//! max_total_cost_usd = 10.0    # across every run of a task
//! timeout_ms = 300000          # the whole task
//! risk_threshold = 3           # below it a change may be committed without a person
//! require_validation = true    # no validation step → the task fails before its agent runs
//!                              # (default: true for queue tasks, false for `task run`)
//! instructions = "Prefer small functions."   # extra rules for the instruction file
//! worktree_root = ".forgecode/worktrees"     # relative to the repository
//! context_chars = 3000         # the repository map's size in the instruction file
//! max_followups = 3            # follow-ups one pull request may cause (issue 39)
//! permission_mode = "ask"      # the agent runs' mode (default bypass; ask: docs/permissions.md)
//!
//! [cache]                      # build caches shared by the repository's tasks
//! enabled = true               # false: every task's validation builds cold
//! dir = "/big/disk/forge"      # default $XDG_CACHE_HOME/forge-code-agent/build
//! max_size_mb = 20480          # `task gc` trims the least recently used above it
//! ```

use std::path::{Path, PathBuf};

use forge_domain::task::TaskLimits;
use toml::{Table, Value};

use super::error::ConfigError;

const VALIDATION_KEYS: &[&str] = &["install", "lint", "build", "test", "timeout_ms"];
const TASK_KEYS: &[&str] = &[
    "max_cycles",
    "max_review_cycles",
    "max_total_cost_usd",
    "timeout_ms",
    "risk_threshold",
    "require_validation",
    "instructions",
    "worktree_root",
    "context_chars",
    "max_followups",
    "permission_mode",
];

const CACHE_KEYS: &[&str] = &["enabled", "dir", "max_size_mb"];

/// Default size limit of the build caches (`task gc` trims above it): 20 GiB.
pub const DEFAULT_CACHE_MAX_MB: u64 = 20 * 1024;

/// `[cache]`: the build caches of task validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheConfig {
    pub enabled: bool,
    /// Where the caches live; `None`: the user's cache directory.
    pub dir: Option<PathBuf>,
    pub max_size_mb: u64,
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            dir: None,
            max_size_mb: DEFAULT_CACHE_MAX_MB,
        }
    }
}

/// Default deadline of one validation step.
pub const DEFAULT_STEP_TIMEOUT_MS: u64 = 600_000;

/// `[validation]`: the commands of each step; `None` where not configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationConfig {
    pub install: Option<String>,
    pub lint: Option<String>,
    pub build: Option<String>,
    pub test: Option<String>,
    pub step_timeout_ms: u64,
}

impl Default for ValidationConfig {
    fn default() -> Self {
        Self {
            install: None,
            lint: None,
            build: None,
            test: None,
            step_timeout_ms: DEFAULT_STEP_TIMEOUT_MS,
        }
    }
}

impl ValidationConfig {
    /// Whether any step is configured (then nothing is detected).
    pub fn any_set(&self) -> bool {
        self.install.is_some() || self.lint.is_some() || self.build.is_some() || self.test.is_some()
    }
}

/// `[validation]` and `[task]` together.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TaskConfig {
    pub validation: ValidationConfig,
    pub limits: TaskLimits,
    pub instructions: Option<String>,
    pub worktree_root: Option<PathBuf>,
    pub cache: CacheConfig,
    /// `[task] require_validation`; `None` when the file does not say (the caller's
    /// default applies: true for a queue task, false for `task run`).
    pub require_validation: Option<bool>,
    /// `[task] context_chars`: the repository map's size (`None`: the default).
    pub context_chars: Option<usize>,
    /// `[task] max_followups`: follow-ups a pull request may cause (`None`: the default, 3).
    pub max_followups: Option<u32>,
    /// `[task] permission_mode`: the agent runs' mode when no flag says (`None`: bypass).
    pub permission_mode: Option<forge_domain::PermissionMode>,
}

/// Reads the `[validation]` and `[task]` tables of the file at `path` (only for messages);
/// absent tables give the defaults.
///
/// # Errors
/// [`ConfigError`] naming the file, the dotted key and the reason for bad TOML, an unknown
/// key, or a value of the wrong type or range.
pub fn parse_task_config(text: &str, path: &Path) -> Result<TaskConfig, ConfigError> {
    let origin = format!("file {}", path.display());
    let table: Table = text
        .parse()
        .map_err(|e: toml::de::Error| ConfigError::whole(&origin, e.message().to_owned()))?;
    let r = Reader { origin: &origin };
    let mut config = TaskConfig::default();
    if let Some(v) = r.section(&table, "validation", VALIDATION_KEYS)? {
        config.validation = ValidationConfig {
            install: r.command(v, "validation", "install")?,
            lint: r.command(v, "validation", "lint")?,
            build: r.command(v, "validation", "build")?,
            test: r.command(v, "validation", "test")?,
            step_timeout_ms: r
                .positive(v, "validation", "timeout_ms")?
                .unwrap_or(DEFAULT_STEP_TIMEOUT_MS),
        };
    }
    if let Some(t) = r.section(&table, "task", TASK_KEYS)? {
        let d = TaskLimits::default();
        let limits = &mut config.limits;
        limits.max_cycles = r.count(t, "max_cycles")?.unwrap_or(d.max_cycles);
        limits.max_review_cycles = match t.get("max_review_cycles") {
            None => d.max_review_cycles,
            Some(_) => r
                .integer(t, "task", "max_review_cycles", 0, 100)?
                .and_then(|i| u32::try_from(i).ok())
                .unwrap_or(0),
        };
        limits.max_total_cost_usd = match t.get("max_total_cost_usd") {
            None => d.max_total_cost_usd,
            Some(Value::Float(f)) if f.is_finite() && *f >= 0.0 => *f,
            Some(Value::Integer(i)) if (0..=1_000_000).contains(i) => {
                f64::from(u32::try_from(*i).unwrap_or(0))
            }
            Some(v) => {
                return Err(r.wrong("task", "max_total_cost_usd", "a non-negative number", v));
            }
        };
        limits.timeout_ms = r.positive(t, "task", "timeout_ms")?.unwrap_or(d.timeout_ms);
        limits.risk_threshold = match r.integer(t, "task", "risk_threshold", 0, 10)? {
            Some(n) => u8::try_from(n).unwrap_or(d.risk_threshold),
            None => d.risk_threshold,
        };
        config.require_validation = match t.get("require_validation") {
            None => None,
            Some(Value::Boolean(b)) => Some(*b),
            Some(v) => return Err(r.wrong("task", "require_validation", "a boolean", v)),
        };
        config.instructions = r.string(t, "task", "instructions")?;
        config.worktree_root = r.string(t, "task", "worktree_root")?.map(PathBuf::from);
        config.context_chars = r
            .integer(t, "task", "context_chars", 200, 200_000)?
            .and_then(|n| usize::try_from(n).ok());
        config.max_followups = r
            .integer(t, "task", "max_followups", 0, 100)?
            .and_then(|n| u32::try_from(n).ok());
        config.permission_mode = r
            .string(t, "task", "permission_mode")?
            .map(|m| {
                m.parse()
                    .map_err(|e: String| r.err("task.permission_mode".into(), e))
            })
            .transpose()?;
    }
    if let Some(c) = r.section(&table, "cache", CACHE_KEYS)? {
        let d = CacheConfig::default();
        config.cache = CacheConfig {
            enabled: match c.get("enabled") {
                None => d.enabled,
                Some(Value::Boolean(b)) => *b,
                Some(v) => return Err(r.wrong("cache", "enabled", "a boolean", v)),
            },
            dir: r.string(c, "cache", "dir")?.map(PathBuf::from),
            max_size_mb: r
                .positive(c, "cache", "max_size_mb")?
                .unwrap_or(d.max_size_mb),
        };
    }
    Ok(config)
}

struct Reader<'a> {
    origin: &'a str,
}

impl Reader<'_> {
    fn err(&self, key: String, reason: impl Into<String>) -> ConfigError {
        ConfigError::new(self.origin, key, reason)
    }

    fn wrong(&self, section: &str, key: &str, expected: &str, v: &Value) -> ConfigError {
        self.err(
            format!("{section}.{key}"),
            format!("expected {expected}, found {}", v.type_str()),
        )
    }

    fn section<'t>(
        &self,
        table: &'t Table,
        name: &str,
        allowed: &[&str],
    ) -> Result<Option<&'t Table>, ConfigError> {
        match table.get(name) {
            None => Ok(None),
            Some(Value::Table(t)) => {
                for key in t.keys() {
                    if !allowed.contains(&key.as_str()) {
                        return Err(self.err(
                            format!("{name}.{key}"),
                            format!("unknown key (expected one of: {})", allowed.join(", ")),
                        ));
                    }
                }
                Ok(Some(t))
            }
            Some(v) => Err(self.err(
                name.to_owned(),
                format!("expected a table, found {}", v.type_str()),
            )),
        }
    }

    fn string(&self, t: &Table, section: &str, key: &str) -> Result<Option<String>, ConfigError> {
        match t.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.wrong(section, key, "a string", v)),
        }
    }

    fn command(&self, t: &Table, section: &str, key: &str) -> Result<Option<String>, ConfigError> {
        match self.string(t, section, key)? {
            Some(s) if s.trim().is_empty() => {
                Err(self.err(format!("{section}.{key}"), "must not be empty"))
            }
            other => Ok(other),
        }
    }

    fn integer(
        &self,
        t: &Table,
        section: &str,
        key: &str,
        min: i64,
        max: i64,
    ) -> Result<Option<i64>, ConfigError> {
        match t.get(key) {
            None => Ok(None),
            Some(Value::Integer(i)) if (min..=max).contains(i) => Ok(Some(*i)),
            Some(Value::Integer(i)) => Err(self.err(
                format!("{section}.{key}"),
                format!("{i} is out of range ({min}..={max})"),
            )),
            Some(v) => Err(self.wrong(section, key, "an integer", v)),
        }
    }

    fn positive(&self, t: &Table, section: &str, key: &str) -> Result<Option<u64>, ConfigError> {
        Ok(self
            .integer(t, section, key, 1, i64::MAX)?
            .and_then(|i| u64::try_from(i).ok()))
    }

    fn count(&self, t: &Table, key: &str) -> Result<Option<u32>, ConfigError> {
        Ok(self
            .integer(t, "task", key, 1, 100)?
            .and_then(|i| u32::try_from(i).ok()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expected: Result<&str, &str>) {
        let got = parse_task_config(text, Path::new("/w/forge.toml"));
        match (got, expected) {
            (Ok(c), Ok(want)) => assert_eq!(format!("{c:?}"), want, "{text}"),
            (Err(e), Err(want)) => assert_eq!(e.to_string(), want, "{text}"),
            (got, want) => panic!("{text}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn sections_parse_and_bad_values_are_named() {
        check(
            "",
            Ok(
                "TaskConfig { validation: ValidationConfig { install: None, lint: None, build: None, test: None, step_timeout_ms: 600000 }, limits: TaskLimits { max_cycles: 5, max_review_cycles: 2, max_total_cost_usd: 10.0, timeout_ms: 300000, risk_threshold: 3, require_validation: false }, instructions: None, worktree_root: None, cache: CacheConfig { enabled: true, dir: None, max_size_mb: 20480 }, require_validation: None, context_chars: None, max_followups: None, permission_mode: None }",
            ),
        );
        check(
            "[validation]\ntest = \"sh test.sh\"\ntimeout_ms = 5000\n[task]\nmax_cycles = 2\nmax_total_cost_usd = 1\nmax_review_cycles = 0\nrequire_validation = true\ninstructions = \"be brief\"\nmax_followups = 5\npermission_mode = \"ask\"\n[cache]\nenabled = false\ndir = \"/c\"\nmax_size_mb = 10\n",
            Ok(
                "TaskConfig { validation: ValidationConfig { install: None, lint: None, build: None, test: Some(\"sh test.sh\"), step_timeout_ms: 5000 }, limits: TaskLimits { max_cycles: 2, max_review_cycles: 0, max_total_cost_usd: 1.0, timeout_ms: 300000, risk_threshold: 3, require_validation: false }, instructions: Some(\"be brief\"), worktree_root: None, cache: CacheConfig { enabled: false, dir: Some(\"/c\"), max_size_mb: 10 }, require_validation: Some(true), context_chars: None, max_followups: Some(5), permission_mode: Some(Ask) }",
            ),
        );
        let got = parse_task_config("[task]\ncontext_chars = 5000\n", Path::new("/w/forge.toml"));
        assert_eq!(got.map(|c| c.context_chars).ok(), Some(Some(5000)));
        let got = parse_task_config("[validation]\ntests = \"x\"\n", Path::new("/w/forge.toml"));
        assert!(got.is_err_and(|e| e.to_string().contains("validation.tests")));
        for (text, key) in [
            ("[validation]\ntest = \"\"\n", "validation.test"),
            ("[validation]\ntest = 3\n", "validation.test"),
            ("[task]\nmax_cycles = 0\n", "task.max_cycles"),
            ("[task]\nrisk_threshold = 11\n", "task.risk_threshold"),
            (
                "[task]\nrequire_validation = 1\n",
                "task.require_validation",
            ),
            (
                "[task]\nmax_total_cost_usd = -1.0\n",
                "task.max_total_cost_usd",
            ),
            ("task = 1\n", "task"),
            ("[cache]\nenabled = \"yes\"\n", "cache.enabled"),
            ("[cache]\nmax_size_mb = 0\n", "cache.max_size_mb"),
            ("[cache]\nsize = 1\n", "cache.size"),
            ("[task]\ncontext_chars = 10\n", "task.context_chars"),
            ("[task]\ncontext_chars = \"big\"\n", "task.context_chars"),
            (
                "[task]\npermission_mode = \"yolo\"\n",
                "task.permission_mode",
            ),
            ("[task]\npermission_mode = 1\n", "task.permission_mode"),
        ] {
            let got = parse_task_config(text, Path::new("/w/forge.toml"));
            assert!(
                got.as_ref().is_err_and(|e| e.key.as_deref() == Some(key)),
                "{text}: {got:?}"
            );
        }
    }
}
