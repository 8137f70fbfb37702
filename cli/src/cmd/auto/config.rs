//! Reading `auto.yaml`: serde refuses unknown keys and bad types, the domain checks values;
//! either way the message names the file, the key and the reason.

use std::path::Path;

use forge_domain::autoloop::{AutoConfig, AutoConfigError, RawAutoConfig};

/// The checked configuration in `path`, against the providers forge knows.
///
/// # Errors
/// [`AutoConfigError`] naming the file, the key (where the reader knows it) and the reason.
pub fn load(path: &Path, known: &[&str]) -> Result<AutoConfig, AutoConfigError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| AutoConfigError {
        file: file.clone(),
        key: "(file)".into(),
        reason: format!("cannot be read: {e}"),
    })?;
    parse(&text, &file, known)
}

/// [`load`] of a text already read.
///
/// # Errors
/// As [`load`].
pub fn parse(text: &str, file: &str, known: &[&str]) -> Result<AutoConfig, AutoConfigError> {
    let raw: RawAutoConfig = serde_norway::from_str(text).map_err(|e| {
        let (key, reason) = split_key(&e.to_string());
        AutoConfigError {
            file: file.to_owned(),
            key,
            reason,
        }
    })?;
    AutoConfig::from_raw(raw, file, known)
}

/// The YAML reader says `task.goal: invalid type: …` when it knows where; otherwise the
/// key is the top level.
fn split_key(message: &str) -> (String, String) {
    match message.split_once(": ") {
        Some((key, reason))
            if !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '[' | ']')) =>
        {
            (key.to_owned(), reason.to_owned())
        }
        _ => ("(top level)".to_owned(), message.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: [&str; 3] = ["claude", "codex", "gemini"];

    fn check(yaml: &str, expected: Result<&str, (&str, &str)>) {
        match (parse(yaml, "auto.yaml", &KNOWN), expected) {
            (Ok(c), Ok(provider)) => assert_eq!(c.provider, provider, "{yaml}"),
            (Err(e), Err((key, reason_part))) => {
                assert_eq!(e.file, "auto.yaml");
                assert_eq!(e.key, key, "{yaml}: {e}");
                assert!(e.reason.contains(reason_part), "{yaml}: {e}");
            }
            (got, want) => panic!("{yaml}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn yaml_configs() {
        let seed = "\
task:
  goal: Build a CLI todo app
  initial_prompt: Create the project skeleton
safety:
  max_iterations: 20
  max_duration_hours: 2.5
  iteration_timeout_seconds: 600
  max_consecutive_errors: 3
  emergency_stop_file: STOP
  max_total_cost_usd: 5
claude:
  model: sonnet
  timeout_seconds: 300
persona:
  default_persona: engineer
  personas:
    - name: engineer
      keywords: [implement, fix]
      instructions: Write clean code.
    - name: tester
      keywords: [test]
      instructions: Write tests first.
research:
  enabled: true
  cache_minutes: 30
executor: run
";
        check(seed, Ok("claude"));
        check("task: {goal: g}\nprovider: {name: codex}\n", Ok("codex"));
        check(
            "task: {goal: g, extra: 1}\nprovider: {name: codex}\n",
            Err(("task", "unknown field `extra`")),
        );
        check(
            "task: {goal: g}\nprovider: {name: codex}\nsafety: {max_iterations: many}\n",
            Err(("safety.max_iterations", "invalid type")),
        );
        check(
            "task: {goal: g}\nprovider: {name: codex}\nsafety: {max_iterations: 0}\n",
            Err(("safety.max_iterations", "at least 1")),
        );
        check(
            "task: {goal: g}\nprovider: {name: codex}\nbogus: 1\n",
            Err(("(top level)", "unknown field `bogus`")),
        );
        check(
            "task: {goal: g}\nprovider: {name: codex}\nexecutor: pipeline\n",
            Err(("executor", "unknown variant `pipeline`")),
        );
        check("task: [\n", Err(("task", "invalid type")));
        check("{\n", Err(("(top level)", "")));
    }
}
