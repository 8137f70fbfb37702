//! One actionable sentence per failure a person can fix.

use crate::result::ResultReport;

pub const INSTALL: &str = "npm i -g @anthropic-ai/claude-code";
pub const LOGIN: &str = "run \"claude auth login\" or set ANTHROPIC_API_KEY";
const AUTH_FAILED: &str = "check ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN / CLAUDE_CODE_OAUTH_TOKEN), or run \"claude auth login\"";
const ROOT: &str = "set IS_SANDBOX=1 in the environment to allow bypass permissions as root \
     (forge sets it for permission mode bypass), or run as a non-root user";

/// A hint for an error result, from its fields, the synthetic message's category and stderr.
pub fn for_report(r: &ResultReport, api_error: Option<&str>, stderr: &str) -> Option<String> {
    let text = r.text.as_deref().unwrap_or_default();
    let all_errors = r.errors.join(" ");
    let hint = match r.subtype.as_str() {
        "error_max_turns" => Some("the run hit its turn limit: raise max_turns (--max-turns)"),
        "error_max_budget_usd" => {
            Some("the run hit its budget: raise max_budget_usd (--max-budget-usd)")
        }
        _ if all_errors.contains("No conversation found") => Some(
            "the session was not found: resume from the same workdir and CLI home as the run \
             that created it",
        ),
        _ if text.contains("Not logged in") => Some(LOGIN),
        _ if r.api_error_status == Some(401)
            || api_error == Some("authentication_failed")
            || text.contains("Failed to authenticate") =>
        {
            Some(AUTH_FAILED)
        }
        _ if r.api_error_status == Some(429) || api_error == Some("rate_limit") => Some(
            "rate limited by the model API: wait, lower concurrency, or raise the retry budget \
             (CLAUDE_CODE_MAX_RETRIES)",
        ),
        _ if r.api_error.as_deref() == Some("connection_failed")
            || text.contains("Connection refused") =>
        {
            Some("the model API could not be reached: check ANTHROPIC_BASE_URL, proxy and network")
        }
        _ if r.api_error_status.is_some_and(|s| s >= 500) => Some(
            "the model API failed: retry later, or check the gateway behind ANTHROPIC_BASE_URL",
        ),
        _ => None,
    };
    hint.map(str::to_owned).or_else(|| for_stderr(stderr))
}

/// A hint from stderr alone (start-up failures print nothing on stdout).
pub fn for_stderr(stderr: &str) -> Option<String> {
    let hint = if stderr.contains("cannot be used with root") {
        ROOT
    } else if stderr.contains("No conversation found") {
        "the session was not found: resume from the same workdir and CLI home as the run that \
         created it"
    } else if stderr.contains("unknown option") || stderr.contains("is invalid. Allowed choices") {
        "the claude CLI refused an argument: check extra args and the CLI version (claude --version)"
    } else if stderr.contains("Not logged in") || stderr.contains("Invalid API key") {
        LOGIN
    } else {
        return None;
    };
    Some(hint.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(subtype: &str, text: Option<&str>, status: Option<u64>) -> ResultReport {
        ResultReport {
            subtype: subtype.into(),
            is_error: true,
            text: text.map(Into::into),
            api_error_status: status,
            ..ResultReport::default()
        }
    }

    fn check(r: &ResultReport, api_error: Option<&str>, stderr: &str, want: Option<&str>) {
        let got = for_report(r, api_error, stderr);
        match want {
            Some(w) => assert!(
                got.as_deref().is_some_and(|g| g.contains(w)),
                "{r:?}: {got:?} lacks {w:?}"
            ),
            None => assert_eq!(got, None, "{r:?}"),
        }
    }

    #[test]
    fn hints_name_the_fix() {
        check(
            &report("error_max_turns", None, None),
            None,
            "",
            Some("--max-turns"),
        );
        check(
            &report("error_max_budget_usd", None, None),
            None,
            "",
            Some("--max-budget-usd"),
        );
        check(
            &report("success", Some("Not logged in · Please run /login"), None),
            None,
            "",
            Some("claude auth login"),
        );
        check(
            &report("success", Some("API Error: 401"), Some(401)),
            None,
            "",
            Some("ANTHROPIC_API_KEY"),
        );
        check(
            &report("success", Some("x"), None),
            Some("authentication_failed"),
            "",
            Some("ANTHROPIC_API_KEY"),
        );
        check(
            &report("success", Some("x"), Some(429)),
            None,
            "",
            Some("rate limited"),
        );
        check(
            &report("success", Some("x"), Some(500)),
            None,
            "",
            Some("retry later"),
        );
        check(&report("success", Some("x"), None), None, "", None);
        check(
            &report("error_during_execution", None, None),
            None,
            "--dangerously-skip-permissions cannot be used with root/sudo privileges",
            Some("IS_SANDBOX=1"),
        );
    }
}
