//! Which environment variables a confined run gets.
//!
//! A name holding one of [`SECRET_WORDS`] is dropped (a false positive costs one variable, a
//! false negative leaks a secret), as are a few known carriers of credentials without such a
//! word, and always forge's own (`FORGE_*`: a queue URL carries its database password) —
//! except the run markers `FORGE_RUN_ID` / `FORGE_RUN_OWNER`: forge's orphan tracking (a run
//! id and a pid, no secret) that must reach every process of the run, and the id a command
//! tool is told. The process adapter sets them after the invocation's variables anyway.

/// Case-insensitive parts of a variable name that mark it as a secret.
pub const SECRET_WORDS: &[&str] = &["KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL"];

/// forge's run markers: a run id and a pid (orphan tracking, a command tool's run), kept;
/// and the bearer token of this run's own MCP server, which codex reads from the variable
/// its configuration names (`bearer_token_env_var`): made for the run, it opens nothing but
/// the server the sandbox lets the agent reach.
pub const RUN_MARKERS: &[&str] = &["FORGE_RUN_ID", "FORGE_RUN_OWNER", "FORGE_MCP_BEARER_TOKEN"];

/// Whole names that carry credentials or reach them without such a word.
pub const SECRET_NAMES: &[&str] = &[
    "DATABASE_URL",
    "PGPASSFILE",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "DBUS_SESSION_BUS_ADDRESS",
];

/// The variables through which a shipped CLI authenticates with an API key, by the
/// provider's name or the program's (`gemini-acp`, `claude-code-acp` are theirs).
pub fn provider_credentials(name: &str) -> &'static [&'static str] {
    if name.contains("claude") {
        &[
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
        ]
    } else if name.contains("codex") {
        // MOCK_API_KEY: the `env_key` of forge's offline model provider (`demo`, tests).
        &["OPENAI_API_KEY", "CODEX_API_KEY", "MOCK_API_KEY"]
    } else if name.contains("gemini") {
        &["GEMINI_API_KEY", "GOOGLE_API_KEY"]
    } else {
        &[]
    }
}

/// What happens to one variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvVerdict {
    Keep,
    /// A provider credential: kept (a placeholder once the egress adds the real value).
    Credential,
    /// forge's own.
    DropForge,
    /// Looks like a secret and `env_pass` does not name it.
    DropSecret,
}

/// The verdict for `name`, given the provider's credential names and `[sandbox] env_pass`.
pub fn env_verdict(name: &str, credentials: &[String], env_pass: &[String]) -> EnvVerdict {
    if RUN_MARKERS.contains(&name) {
        return EnvVerdict::Keep;
    }
    if name.starts_with("FORGE_") {
        return EnvVerdict::DropForge;
    }
    if credentials.iter().any(|c| c == name) {
        return EnvVerdict::Credential;
    }
    if env_pass.iter().any(|p| p == name) {
        return EnvVerdict::Keep;
    }
    let upper = name.to_ascii_uppercase();
    if SECRET_NAMES.contains(&upper.as_str()) || SECRET_WORDS.iter().any(|w| upper.contains(w)) {
        return EnvVerdict::DropSecret;
    }
    EnvVerdict::Keep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        let credentials = vec!["ANTHROPIC_API_KEY".to_owned()];
        let pass = vec!["NPM_TOKEN".to_owned(), "FORGE_QUEUE_URL".to_owned()];
        let check = |name: &str, want: EnvVerdict| {
            assert_eq!(env_verdict(name, &credentials, &pass), want, "{name}");
        };
        use EnvVerdict::*;
        // Secrets by word, any case.
        check("AWS_SECRET_ACCESS_KEY", DropSecret);
        check("AWS_ACCESS_KEY_ID", DropSecret);
        check("GITHUB_TOKEN", DropSecret);
        check("gh_token", DropSecret);
        check("PGPASSWORD", DropSecret);
        check("MYSQL_PWD_PASSWD", DropSecret);
        check("GOOGLE_APPLICATION_CREDENTIALS", DropSecret);
        check("OPENAI_API_KEY", DropSecret);
        check("APIKEY", DropSecret);
        // Secrets by name.
        check("DATABASE_URL", DropSecret);
        check("SSH_AUTH_SOCK", DropSecret);
        check("PGPASSFILE", DropSecret);
        // forge's own, even when env_pass names them.
        check("FORGE_QUEUE_URL", DropForge);
        check("FORGE_EVENT_SINK_TOKEN", DropForge);
        check("FORGE_RUN_ID", Keep);
        check("FORGE_RUN_OWNER", Keep);
        check("FORGE_RUN_IDX", DropForge);
        // The run's own MCP token (codex reads it from a variable); not other tokens of forge.
        check("FORGE_MCP_BEARER_TOKEN", Keep);
        check("FORGE_SERVER_TOKEN", DropForge);
        // The provider's credential and what env_pass names.
        check("ANTHROPIC_API_KEY", Credential);
        check("NPM_TOKEN", Keep);
        // Look-alikes that must not fire.
        check("PATH", Keep);
        check("HOME", Keep);
        check("LANG", Keep);
        check("TERM", Keep);
        check("CARGO_TARGET_DIR", Keep);
        check("IS_SANDBOX", Keep);
        check("MY_FORGE_DIR", Keep);
        check("FORGEDIR", Keep);
        check("DATABASE_URL_FILE_HINT", Keep);
        check("SSH_AUTH_SOCKET_DIR", Keep);
        check("XDG_SESSION_ID", Keep);
    }

    #[test]
    fn each_shipped_provider_names_its_key() {
        assert!(provider_credentials("claude").contains(&"ANTHROPIC_API_KEY"));
        assert!(provider_credentials("codex").contains(&"OPENAI_API_KEY"));
        assert!(provider_credentials("gemini").contains(&"GEMINI_API_KEY"));
        assert!(provider_credentials("gemini-acp").contains(&"GEMINI_API_KEY"));
        assert!(provider_credentials("my-acp-agent").is_empty());
        assert!(provider_credentials("sh").is_empty());
    }
}
