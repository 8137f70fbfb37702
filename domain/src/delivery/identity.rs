//! Which identity a delivered commit carries: `[delivery] author` when configured, else
//! git's own, else a built-in bot identity — so a fresh machine with no git identity (a new
//! worker) still commits instead of failing with "Author identity unknown".

use crate::task::{CommitIdentity, IdentitySource};

/// The bot identity of a machine where neither `[delivery] author` nor git has one. The
/// `.invalid` domain (RFC 2606) never receives mail.
pub const BUILT_IN_NAME: &str = "forge-code-agent";
pub const BUILT_IN_EMAIL: &str = "forge-code-agent@users.noreply.invalid";

/// The identity to commit with, from the configured one and git's (each name and email).
pub fn choose_identity(
    configured: Option<(&str, &str)>,
    git: Option<(&str, &str)>,
) -> CommitIdentity {
    let (name, email, source) = match (configured, git) {
        (Some((n, e)), _) => (n, e, IdentitySource::Config),
        (None, Some((n, e))) => (n, e, IdentitySource::Git),
        (None, None) => (BUILT_IN_NAME, BUILT_IN_EMAIL, IdentitySource::BuiltIn),
    };
    CommitIdentity {
        name: name.to_owned(),
        email: email.to_owned(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configured_beats_git_beats_built_in() {
        let check = |configured, git, expected: (&str, &str, IdentitySource)| {
            let got = choose_identity(configured, git);
            assert_eq!(
                (got.name.as_str(), got.email.as_str(), got.source),
                expected,
                "{configured:?} {git:?}"
            );
        };
        let bot = Some(("Bot", "bot@example.invalid"));
        let ada = Some(("Ada", "ada@example.invalid"));
        check(
            bot,
            ada,
            ("Bot", "bot@example.invalid", IdentitySource::Config),
        );
        check(
            bot,
            None,
            ("Bot", "bot@example.invalid", IdentitySource::Config),
        );
        check(
            None,
            ada,
            ("Ada", "ada@example.invalid", IdentitySource::Git),
        );
        check(
            None,
            None,
            (BUILT_IN_NAME, BUILT_IN_EMAIL, IdentitySource::BuiltIn),
        );
    }

    #[test]
    fn sources_serialise_as_snake_case() {
        let names: Vec<String> = [
            IdentitySource::Config,
            IdentitySource::Git,
            IdentitySource::BuiltIn,
        ]
        .iter()
        .map(|s| serde_json::to_string(s).unwrap_or_default())
        .collect();
        assert_eq!(names, ["\"config\"", "\"git\"", "\"built_in\""]);
    }
}
