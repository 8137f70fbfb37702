//! What `gemini`'s exit codes mean (0.61, `packages/core/src/utils/errors.ts` and
//! `packages/cli/src/utils/errors.ts`), each with a hint a person can act on.
//!
//! Besides its own `Fatal*Error` codes, the CLI exits with an API error's HTTP status taken
//! modulo 256 (`process.exit(401)` → 145, 429 → 173, 500 → 244): `handleError` passes the
//! GenAI error's `status` straight to `process.exit`.

/// The meaning of a non-zero exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitMeaning {
    pub summary: String,
    pub hint: Option<String>,
}

pub const AUTH_HINT: &str = "set GEMINI_API_KEY (or Vertex AI variables) or select an auth type in \
                             ~/.gemini/settings.json (security.auth.selectedType)";
pub const TURN_LIMIT_HINT: &str =
    "raise max turns (the run's model.maxSessionTurns setting) or split the task";
pub const TRUST_HINT: &str = "set GEMINI_CLI_TRUST_WORKSPACE=true (forge sets it unless the \
                              environment overrides it) or trust the folder in gemini";

/// The meaning of `code`, `None` for 0.
pub fn meaning(code: i32) -> Option<ExitMeaning> {
    let (summary, hint): (&str, Option<&str>) = match code {
        0 => return None,
        1 => ("gemini failed", None),
        41 => ("gemini could not authenticate", Some(AUTH_HINT)),
        42 => (
            "gemini refused its input",
            Some("check the prompt and the --resume id (gemini --list-sessions)"),
        ),
        44 => (
            "gemini's sandbox failed",
            Some("check the sandbox setup (--sandbox, GEMINI_SANDBOX)"),
        ),
        52 => (
            "gemini's configuration is invalid",
            Some("fix ~/.gemini/settings.json or the arguments passed to gemini"),
        ),
        53 => (
            "gemini reached its session turn limit",
            Some(TURN_LIMIT_HINT),
        ),
        54 => ("a gemini tool failed fatally", None),
        55 => ("gemini refused an untrusted folder", Some(TRUST_HINT)),
        130 => ("gemini was cancelled", None),
        _ => return http_status(code).map(api_error),
    };
    Some(ExitMeaning {
        summary: summary.to_owned(),
        hint: hint.map(str::to_owned),
    })
}

/// The HTTP status an exit code stands for, when it is one (`status & 0xff`).
pub fn http_status(code: i32) -> Option<u16> {
    let status = code.checked_add(256)?;
    (400..600).contains(&status).then_some(status as u16)
}

/// Meaning and hint of an API error with HTTP `status`.
pub fn api_error(status: u16) -> ExitMeaning {
    let hint = match status {
        401 | 403 => Some("check GEMINI_API_KEY / the selected auth type and its permissions"),
        404 => Some("check the model name (-m or the provider's model setting)"),
        429 => Some("rate limited or out of quota: wait, lower parallelism or use another model"),
        400 => Some("the API refused the request: check the model and the prompt"),
        500..=599 => Some("the Gemini API failed: retry later"),
        _ => None,
    };
    ExitMeaning {
        summary: format!("gemini API error (HTTP {status})"),
        hint: hint.map(str::to_owned),
    }
}

/// The hint for an error the CLI named by type (`result.error.type`).
pub fn hint_for_error_type(kind: &str) -> Option<&'static str> {
    match kind {
        "FatalTurnLimitedError" => Some(TURN_LIMIT_HINT),
        "FatalAuthenticationError" => Some(AUTH_HINT),
        "FatalUntrustedWorkspaceError" => Some(TRUST_HINT),
        _ => None,
    }
}

/// An HTTP status inside an API error message (`[API Error: {"error":{"code":401,…`).
pub fn http_status_in_message(message: &str) -> Option<u16> {
    let at = message.find("\"code\":")? + "\"code\":".len();
    let digits: String = message[at..]
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let status: u16 = digits.parse().ok()?;
    (400..600).contains(&status).then_some(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_map_to_meanings() {
        let check = |code: i32, summary: &str, has_hint: bool| {
            let m = meaning(code).unwrap();
            assert_eq!(m.summary, summary, "{code}");
            assert_eq!(m.hint.is_some(), has_hint, "{code}");
        };
        check(41, "gemini could not authenticate", true);
        check(53, "gemini reached its session turn limit", true);
        check(55, "gemini refused an untrusted folder", true);
        check(145, "gemini API error (HTTP 401)", true);
        check(173, "gemini API error (HTTP 429)", true);
        check(244, "gemini API error (HTTP 500)", true);
        check(1, "gemini failed", false);
        assert_eq!(meaning(0), None);
        assert_eq!(meaning(7), None);
    }

    #[test]
    fn http_status_is_found_in_api_error_messages() {
        let msg = r#"[API Error: {"error":{"code":401,"message":"boom"}}]"#;
        assert_eq!(http_status_in_message(msg), Some(401));
        assert_eq!(http_status_in_message("no code"), None);
        assert_eq!(http_status_in_message(r#""code": 7"#), None);
    }
}
