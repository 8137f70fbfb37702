//! What each `codex` release accepts on its command line.
//!
//! Codex changes flags from release to release (`--full-auto` existed, then was rejected with
//! exit 2, then came back as a hidden no-op), so argv is built from this table, never from
//! memory. Rows are keyed by version range; the newest row is the default when the installed
//! version is unknown. Facts marked [RUN] were checked against the real binary
//! (`codex exec --help`, `codex exec resume --help`); the others are from the research notes.

use semver::Version;

/// The versions this adapter is written and tested for.
pub const SUPPORTED_RANGE: &str = ">=0.160.0, <0.200.0";

/// The release the recorded fixtures and the e2e suite use.
pub const PINNED_VERSION: &str = "0.169.0";

/// What one range of releases accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CliFeatures {
    /// First release of the row (inclusive).
    pub since: (u64, u64, u64),
    /// `--json` prints the thread/turn/item stream (before ≈0.44 it printed the legacy
    /// `{"id","msg"}` protocol, which this decoder does not read).
    pub thread_item_json: bool,
    /// `exec [PROMPT]` reads the prompt from stdin when it is `-` ([RUN] 0.169).
    pub prompt_dash_reads_stdin: bool,
    /// `codex exec resume <id> [PROMPT]` exists.
    pub exec_resume: bool,
    /// `--full-auto` is accepted. 0.163 rejects it; never needed since `--sandbox` exists,
    /// kept here so nobody adds it back from memory.
    pub full_auto: bool,
    /// `-s/--sandbox read-only|workspace-write|danger-full-access` on `exec` (not on
    /// `exec resume`: [RUN] 0.169 `exec resume --help` lacks it, so it goes before `resume`).
    pub sandbox_flag: bool,
    pub skip_git_repo_check: bool,
    pub add_dir: bool,
    pub output_schema: bool,
    /// The `developer_instructions` config key (`-c developer_instructions="…"`), which
    /// appends to the built-in instructions ([RUN] present in the 0.169 binary).
    pub developer_instructions: bool,
}

/// Oldest first. The last row is the newest known behaviour.
const TABLE: &[CliFeatures] = &[
    // 0.21-era builds: legacy JSON, no resume. Listed so an old install is refused clearly.
    CliFeatures {
        since: (0, 0, 0),
        thread_item_json: false,
        prompt_dash_reads_stdin: true,
        exec_resume: false,
        full_auto: true,
        sandbox_flag: true,
        skip_git_repo_check: true,
        add_dir: false,
        output_schema: false,
        developer_instructions: false,
    },
    // ≈Oct 2025: `--json` is the thread/turn/item stream, `exec resume`, `--output-schema`.
    CliFeatures {
        since: (0, 44, 0),
        thread_item_json: true,
        prompt_dash_reads_stdin: true,
        exec_resume: true,
        full_auto: true,
        sandbox_flag: true,
        skip_git_repo_check: true,
        add_dir: true,
        output_schema: true,
        developer_instructions: false,
    },
    // 0.163 [RUN]: `--full-auto` rejected (exit 2).
    CliFeatures {
        since: (0, 163, 0),
        thread_item_json: true,
        prompt_dash_reads_stdin: true,
        exec_resume: true,
        full_auto: false,
        sandbox_flag: true,
        skip_git_repo_check: true,
        add_dir: true,
        output_schema: true,
        developer_instructions: true,
    },
];

impl CliFeatures {
    /// The row for `version` (pre-release tags ignored).
    pub fn for_version(version: &Version) -> CliFeatures {
        let key = (version.major, version.minor, version.patch);
        TABLE
            .iter()
            .rev()
            .find(|row| row.since <= key)
            .copied()
            .unwrap_or_else(CliFeatures::newest)
    }

    /// The newest known row: used when the installed version is unknown.
    pub fn newest() -> CliFeatures {
        TABLE[TABLE.len() - 1]
    }
}

impl Default for CliFeatures {
    fn default() -> Self {
        CliFeatures::newest()
    }
}

/// Parses `codex --version` output (`codex-cli 0.169.0`): the first token that is a version.
pub fn parse_version(output: &str) -> Option<Version> {
    forge_adapter_support::version::parse_version(output)
}

/// Whether `version` lies in [`SUPPORTED_RANGE`] (pre-release tags ignored, so
/// `0.170.0-alpha.2` counts as `0.170.0`).
pub fn is_supported(version: &Version) -> bool {
    forge_adapter_support::version::release_in_range(version, SUPPORTED_RANGE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_follow_the_version() {
        let v = |s: &str| Version::parse(s).unwrap();
        assert!(!CliFeatures::for_version(&v("0.21.0")).thread_item_json);
        assert!(CliFeatures::for_version(&v("0.100.0")).full_auto);
        assert!(!CliFeatures::for_version(&v("0.169.0")).full_auto);
        assert_eq!(
            CliFeatures::for_version(&v("0.169.0")),
            CliFeatures::newest()
        );
    }

    #[test]
    fn versions_parse_and_range_holds() {
        let v = parse_version("codex-cli 0.169.0\n").unwrap();
        assert_eq!(v, Version::new(0, 169, 0));
        assert!(is_supported(&v));
        assert!(is_supported(
            &parse_version("codex-cli 0.170.0-alpha.2").unwrap()
        ));
        assert!(!is_supported(&Version::new(0, 159, 9)));
        assert!(!is_supported(&Version::new(0, 200, 0)));
        assert_eq!(parse_version("codex"), None);
    }
}
