//! The loop's configuration (`auto.yaml`), in the seed's shape.
//!
//! [`RawAutoConfig`] is what the file says (unknown keys refused by serde); [`AutoConfig`] is
//! the checked value with defaults filled in. Every refusal names the file, the key and the
//! reason ([`AutoConfigError`]).

use serde::{Deserialize, Serialize};

/// The file as written. The seed's `claude:` section is accepted in place of `provider:`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAutoConfig {
    pub task: Option<TaskConfig>,
    #[serde(default)]
    pub safety: SafetyConfig,
    pub provider: Option<ProviderSection>,
    /// The seed's name for the provider section (its provider is claude unless it says).
    pub claude: Option<ProviderSection>,
    #[serde(default)]
    pub persona: PersonaConfig,
    #[serde(default)]
    pub research: ResearchConfig,
    #[serde(default)]
    pub executor: ExecutorKind,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskConfig {
    pub goal: String,
    /// Used as iteration 1's task instead of asking the planner.
    #[serde(default)]
    pub initial_prompt: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SafetyConfig {
    pub max_iterations: u32,
    pub max_duration_hours: f64,
    pub iteration_timeout_seconds: u64,
    pub max_consecutive_errors: u32,
    /// Relative paths are taken from the workdir.
    pub emergency_stop_file: String,
    pub max_total_cost_usd: Option<f64>,
}

impl Default for SafetyConfig {
    fn default() -> Self {
        Self {
            max_iterations: 10,
            max_duration_hours: 8.0,
            iteration_timeout_seconds: 1800,
            max_consecutive_errors: 3,
            emergency_stop_file: "EMERGENCY_STOP".into(),
            max_total_cost_usd: None,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSection {
    /// claude, codex, gemini (default claude under `claude:`).
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    /// Timeout of planner and researcher runs (the executor has the iteration timeout).
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PersonaConfig {
    pub default_persona: String,
    pub personas: Vec<PersonaSpec>,
}

impl Default for PersonaConfig {
    fn default() -> Self {
        Self {
            default_persona: "default".into(),
            personas: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PersonaSpec {
    pub name: String,
    #[serde(default)]
    pub keywords: Vec<String>,
    #[serde(default)]
    pub instructions: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ResearchConfig {
    pub enabled: bool,
    /// The researcher's provider (default: the loop's provider).
    pub provider: Option<String>,
    pub cache_minutes: u64,
    /// A task containing one of these words gets a research run first.
    pub keywords: Vec<String>,
}

impl Default for ResearchConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            provider: None,
            cache_minutes: 60,
            keywords: vec!["research".into(), "investigate".into()],
        }
    }
}

/// What carries out a task: a plain provider run, or the guarded task pipeline.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutorKind {
    #[default]
    Run,
    Task,
}

/// The checked configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AutoConfig {
    pub task: TaskConfig,
    pub safety: SafetyConfig,
    pub provider: String,
    pub model: Option<String>,
    pub provider_timeout_seconds: Option<u64>,
    pub persona: PersonaConfig,
    pub research: ResearchConfig,
    pub executor: ExecutorKind,
}

/// A refused configuration: which file, which key, why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {key}: {reason}")]
pub struct AutoConfigError {
    pub file: String,
    pub key: String,
    pub reason: String,
}

impl AutoConfig {
    /// Checks `raw` (read from `file`) against the providers forge knows (`known`).
    ///
    /// # Errors
    /// The first problem found, as an [`AutoConfigError`] naming `file` and the key.
    pub fn from_raw(
        raw: RawAutoConfig,
        file: &str,
        known: &[&str],
    ) -> Result<AutoConfig, AutoConfigError> {
        let fail = |key: &str, reason: String| AutoConfigError {
            file: file.to_owned(),
            key: key.to_owned(),
            reason,
        };
        let task = raw.task.ok_or_else(|| {
            fail(
                "task",
                "missing (task.goal says what the loop is for)".into(),
            )
        })?;
        if task.goal.trim().is_empty() {
            return Err(fail("task.goal", "must not be empty".into()));
        }
        if task
            .initial_prompt
            .as_deref()
            .is_some_and(|p| p.trim().is_empty())
        {
            return Err(fail(
                "task.initial_prompt",
                "must not be empty when given".into(),
            ));
        }
        let (section, key, implied) = match (raw.provider, raw.claude) {
            (Some(_), Some(_)) => {
                return Err(fail(
                    "claude",
                    "give either provider: or its alias claude:, not both".into(),
                ));
            }
            (Some(p), None) => (p, "provider", None),
            (None, Some(c)) => (c, "claude", Some("claude")),
            (None, None) => return Err(fail("provider", "missing (provider.name)".into())),
        };
        let name = match (section.name.as_deref(), implied) {
            (Some(n), _) => n.to_owned(),
            (None, Some(n)) => n.to_owned(),
            (None, None) => return Err(fail("provider.name", "missing".into())),
        };
        let name_key = format!("{key}.name");
        check_provider(&name, known).map_err(|r| fail(&name_key, r))?;
        if section.timeout_seconds == Some(0) {
            return Err(fail(
                &format!("{key}.timeout_seconds"),
                "must be at least 1".into(),
            ));
        }
        check_safety(&raw.safety).map_err(|(k, r)| fail(&format!("safety.{k}"), r))?;
        check_personas(&raw.persona).map_err(|(k, r)| fail(&format!("persona.{k}"), r))?;
        if let Some(p) = raw.research.provider.as_deref() {
            check_provider(p, known).map_err(|r| fail("research.provider", r))?;
        }
        if raw.research.cache_minutes == 0 {
            return Err(fail("research.cache_minutes", "must be at least 1".into()));
        }
        if raw.executor == ExecutorKind::Task {
            return Err(fail(
                "executor",
                "`task` needs the guarded task pipeline, which this build does not have; use `run`"
                    .into(),
            ));
        }
        Ok(AutoConfig {
            task,
            safety: raw.safety,
            provider: name,
            model: section.model,
            provider_timeout_seconds: section.timeout_seconds,
            persona: raw.persona,
            research: raw.research,
            executor: raw.executor,
        })
    }

    /// The researcher's provider.
    pub fn research_provider(&self) -> &str {
        self.research.provider.as_deref().unwrap_or(&self.provider)
    }

    /// `max_duration_hours` in milliseconds.
    pub fn max_duration_ms(&self) -> u64 {
        hours_to_ms(self.safety.max_duration_hours)
    }
}

fn hours_to_ms(hours: f64) -> u64 {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "validated finite and positive; saturates far beyond any real duration"
    )]
    let ms = (hours * 3_600_000.0).round() as u64;
    ms
}

fn check_provider(name: &str, known: &[&str]) -> Result<(), String> {
    if known.contains(&name) {
        Ok(())
    } else {
        Err(format!(
            "unknown provider {name:?}: expected {}",
            known.join(", ")
        ))
    }
}

fn check_safety(s: &SafetyConfig) -> Result<(), (&'static str, String)> {
    if s.max_iterations == 0 {
        return Err(("max_iterations", "must be at least 1".into()));
    }
    if !s.max_duration_hours.is_finite() || s.max_duration_hours <= 0.0 {
        return Err((
            "max_duration_hours",
            "must be a positive number of hours".into(),
        ));
    }
    if s.iteration_timeout_seconds == 0 {
        return Err(("iteration_timeout_seconds", "must be at least 1".into()));
    }
    if s.max_consecutive_errors == 0 {
        return Err(("max_consecutive_errors", "must be at least 1".into()));
    }
    if s.emergency_stop_file.trim().is_empty() {
        return Err(("emergency_stop_file", "must not be empty".into()));
    }
    if let Some(c) = s.max_total_cost_usd {
        if !c.is_finite() || c < 0.0 {
            return Err(("max_total_cost_usd", "must be a non-negative amount".into()));
        }
    }
    Ok(())
}

fn check_personas(p: &PersonaConfig) -> Result<(), (String, String)> {
    let mut seen: Vec<&str> = Vec::new();
    for (i, persona) in p.personas.iter().enumerate() {
        if persona.name.trim().is_empty() {
            return Err((format!("personas[{i}].name"), "must not be empty".into()));
        }
        if seen.contains(&persona.name.as_str()) {
            return Err((
                format!("personas[{i}].name"),
                format!("{:?} is listed twice", persona.name),
            ));
        }
        seen.push(&persona.name);
        if let Some(k) = persona.keywords.iter().position(|k| k.trim().is_empty()) {
            return Err((
                format!("personas[{i}].keywords[{k}]"),
                "must not be empty".into(),
            ));
        }
    }
    if !p.personas.is_empty() && !seen.contains(&p.default_persona.as_str()) {
        return Err((
            "default_persona".into(),
            format!(
                "{:?} is not one of the personas ({})",
                p.default_persona,
                seen.join(", ")
            ),
        ));
    }
    Ok(())
}
