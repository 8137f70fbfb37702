//! Reading a version out of `--version` output and checking it against a semver range.

use semver::{Version, VersionReq};

/// The first whitespace-separated token of `text` that is an `x.y.z` version, a leading `v`
/// allowed (`0.61.0`, `v0.61.0`, `codex-cli 0.169.0`, `gemini 0.62.0-preview.1`).
pub fn parse_version(text: &str) -> Option<Version> {
    text.split_whitespace()
        .map(|t| t.trim_start_matches('v'))
        .find_map(|t| Version::parse(t).ok())
}

/// The version only when it is the first token of `text` (`2.1.330 (Claude Code)`).
pub fn parse_leading_version(text: &str) -> Option<Version> {
    let first = text.split_whitespace().next()?;
    Version::parse(first.trim_start_matches('v')).ok()
}

/// Whether `version` matches `range` by semver's rules (a pre-release matches only a range
/// that names a pre-release of the same `x.y.z`). An unparsable range matches nothing.
pub fn version_in_range(version: &Version, range: &str) -> bool {
    VersionReq::parse(range).is_ok_and(|req| req.matches(version))
}

/// Whether `version` matches `range` with its pre-release tag ignored, so
/// `0.62.0-preview.1` counts as `0.62.0`: CLIs ship previews the adapter reads as well.
pub fn release_in_range(version: &Version, range: &str) -> bool {
    let release = Version::new(version.major, version.minor, version.patch);
    version_in_range(&release, range)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_found_and_ranged() {
        // (text, any token, leading token, strictly in range, release in range)
        let check = |text: &str, any: Option<&str>, leading: Option<&str>, strict, release| {
            let show = |v: Option<Version>| v.map(|v| v.to_string());
            assert_eq!(show(parse_version(text)).as_deref(), any, "{text}");
            assert_eq!(
                show(parse_leading_version(text)).as_deref(),
                leading,
                "{text}"
            );
            let v = parse_version(text);
            let range = ">=0.50.0, <1.0.0";
            assert_eq!(
                v.as_ref().map(|v| version_in_range(v, range)),
                strict,
                "{text}"
            );
            assert_eq!(
                v.as_ref().map(|v| release_in_range(v, range)),
                release,
                "{text}"
            );
        };
        check(
            "0.61.0\n",
            Some("0.61.0"),
            Some("0.61.0"),
            Some(true),
            Some(true),
        );
        check(
            "v0.62.0-preview.1",
            Some("0.62.0-preview.1"),
            Some("0.62.0-preview.1"),
            Some(false),
            Some(true),
        );
        check(
            "codex-cli 0.169.0",
            Some("0.169.0"),
            None,
            Some(true),
            Some(true),
        );
        check(
            "0.49.9 (x)",
            Some("0.49.9"),
            Some("0.49.9"),
            Some(false),
            Some(false),
        );
        check(
            "1.0.0",
            Some("1.0.0"),
            Some("1.0.0"),
            Some(false),
            Some(false),
        );
        check("garbage", None, None, None, None);
        check("", None, None, None, None);
        assert!(!version_in_range(&Version::new(1, 0, 0), "not a range"));
    }
}
