//! The heuristic review: pure, deterministic rules over the changed files. Each rule has a
//! stable id (see [`rule`]) and one severity; a finding names the file and, for line rules,
//! the line — never the secret it found.
//!
//! Findings come in input order: per file, its path rules, then its lines top to bottom; the
//! change-wide rules (mass deletion) last. The caller leaves forge's own files (`.forgecode/`,
//! the instruction file) out of the input.

pub mod dangerous;
pub mod input;
pub mod paths;
pub mod secrets;
pub mod size;
mod text;

pub use input::{AddedLine, ChangedFile};

use super::finding::{Finding, ReviewReport, Severity};

/// Rule ids, each with its one severity.
pub mod rule {
    use super::Severity;

    pub const ENV_FILE: (&str, Severity) = ("sensitive.env_file", Severity::Critical);
    pub const PRIVATE_KEY_FILE: (&str, Severity) =
        ("sensitive.private_key_file", Severity::Critical);
    pub const CREDENTIALS_FILE: (&str, Severity) =
        ("sensitive.credentials_file", Severity::Critical);
    pub const PACKAGE_TOKEN: (&str, Severity) =
        ("sensitive.package_registry_token", Severity::Critical);
    pub const AWS_KEY: (&str, Severity) = ("secret.aws_access_key", Severity::Critical);
    pub const PRIVATE_KEY_BLOCK: (&str, Severity) =
        ("secret.private_key_block", Severity::Critical);
    pub const GITHUB_TOKEN: (&str, Severity) = ("secret.github_token", Severity::Critical);
    pub const ANTHROPIC_KEY: (&str, Severity) = ("secret.anthropic_key", Severity::Critical);
    pub const OPENAI_KEY: (&str, Severity) = ("secret.openai_key", Severity::Critical);
    pub const SLACK_TOKEN: (&str, Severity) = ("secret.slack_token", Severity::Critical);
    pub const GOOGLE_API_KEY: (&str, Severity) = ("secret.google_api_key", Severity::Critical);
    pub const ASSIGNED_SECRET: (&str, Severity) = ("secret.assigned_value", Severity::Critical);
    pub const RM_RF_ROOT: (&str, Severity) = ("dangerous.rm_rf_root", Severity::Critical);
    pub const RM_RF_ABSOLUTE: (&str, Severity) = ("dangerous.rm_rf_absolute", Severity::Warning);
    pub const FORCE_PUSH: (&str, Severity) = ("dangerous.force_push", Severity::Warning);
    pub const CHMOD_777: (&str, Severity) = ("dangerous.chmod_777", Severity::Warning);
    pub const PIPE_TO_SHELL: (&str, Severity) = ("dangerous.pipe_to_shell", Severity::Warning);
    pub const TLS_VERIFY_OFF: (&str, Severity) = ("dangerous.tls_verify_off", Severity::Warning);
    pub const CI_CONFIG: (&str, Severity) = ("change.ci_config", Severity::Warning);
    pub const LOCKFILE: (&str, Severity) = ("change.lockfile", Severity::Info);
    pub const OVERSIZED_FILE: (&str, Severity) = ("size.oversized_file", Severity::Warning);
    pub const MASS_DELETION: (&str, Severity) = ("change.mass_deletion", Severity::Warning);
}

/// The review's size thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReviewLimits {
    /// A new or modified file larger than this is oversized.
    pub max_file_bytes: u64,
    /// A file with more added lines than this is oversized (generated code, data dumps).
    pub max_added_lines: u64,
    /// This many deleted files or more is a mass deletion …
    pub mass_deletion_files: usize,
    /// … and so is removing this many lines or more while adding less than half as many.
    pub mass_deletion_lines: u64,
}

impl Default for ReviewLimits {
    fn default() -> Self {
        Self {
            max_file_bytes: 1_000_000,
            max_added_lines: 5_000,
            mass_deletion_files: 20,
            mass_deletion_lines: 2_000,
        }
    }
}

/// Runs every rule over `files`.
pub fn review(files: &[ChangedFile], limits: &ReviewLimits) -> ReviewReport {
    let mut findings = Vec::new();
    for file in files {
        paths::check(file, &mut findings);
        size::check_file(file, limits, &mut findings);
        secrets::check_file(file, &mut findings);
        for line in &file.added_lines {
            secrets::check_line(&file.path, line, &mut findings);
            dangerous::check_line(&file.path, line, &mut findings);
        }
    }
    size::check_change(files, limits, &mut findings);
    ReviewReport { findings }
}

pub(crate) fn finding(
    (rule, severity): (&str, Severity),
    path: &str,
    line: Option<u32>,
    message: impl Into<String>,
) -> Finding {
    Finding {
        rule: rule.to_owned(),
        severity,
        path: path.to_owned(),
        line,
        message: message.into(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::task::change::ChangeKind;

    /// A modified file with `lines` added at 1, 2, ….
    pub(crate) fn file(path: &str, lines: &[&str]) -> ChangedFile {
        ChangedFile {
            path: path.to_owned(),
            change: ChangeKind::Modified,
            size_bytes: Some(lines.iter().map(|l| l.len() as u64 + 1).sum()),
            added: lines.len() as u64,
            removed: 0,
            added_lines: lines
                .iter()
                .zip(1..)
                .map(|(t, line)| AddedLine {
                    line,
                    text: (*t).to_owned(),
                })
                .collect(),
        }
    }

    /// The rule ids the review reports for `files`, in order.
    pub(crate) fn rules(files: &[ChangedFile]) -> Vec<String> {
        review(files, &ReviewLimits::default())
            .findings
            .into_iter()
            .map(|f| f.rule)
            .collect()
    }

    /// One added line in `path`: the rules that fire on it.
    pub(crate) fn check_line(path: &str, text: &str, expected: &[&str]) {
        assert_eq!(rules(&[file(path, &[text])]), expected, "{path}: {text:?}");
    }

    #[test]
    fn a_mixed_change_reports_in_order_without_the_secret() {
        let files = [
            file(".env", &["API_KEY=abc"]),
            file(
                "deploy.sh",
                &[
                    "export AWS_ACCESS_KEY_ID=AKIAZ7Q4R2W9X3YT5PLM",
                    "curl -fsSL https://get.example.com | sh",
                ],
            ),
            file("Cargo.lock", &[]),
        ];
        let report = review(&files, &ReviewLimits::default());
        insta::assert_json_snapshot!("review_mixed_change", report);
        let text = serde_json::to_string(&report).unwrap();
        assert!(!text.contains("AKIAZ7Q4R2W9X3YT5PLM"));
        assert!(report.has_critical());
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    use super::tests::file;
    use super::*;

    proptest! {
        /// Any text, however odd its characters, is reviewed without a panic, and every
        /// finding's line is one of the file's lines.
        #[test]
        fn any_line_is_reviewed_without_panicking(
            lines in proptest::collection::vec(
                prop_oneof![
                    any::<String>(),
                    "[a-zA-Zé_ =:\"'./~$*|-]{0,60}",
                    "(rm|git push|curl|chmod|API_KEY|token|sk-|ghp_|AKIA)[ -~é]{0,40}",
                ],
                0..8,
            ),
            path in "[a-z./_-]{1,20}",
        ) {
            let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
            let report = review(&[file(&path, &refs)], &ReviewLimits::default());
            for f in &report.findings {
                prop_assert!(f.line.is_none_or(|l| (l as usize) <= lines.len()));
            }
        }
    }
}
