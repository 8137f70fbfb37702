//! A permission request and its decision as a person reads them in the terminal.

use forge_domain::permission::{DecidedBy, PermissionRequest, Verdict};

use super::style::Style;

/// Lines of an edit's diff shown under its request.
const DIFF_LINES: usize = 20;

/// `? permission  Bash: cargo test  [perm-…]`, an edit's diff under it.
pub fn asked(style: Style, request: &PermissionRequest) -> String {
    let mut text = format!(
        "{} {}  {}",
        style.yellow("? permission"),
        request.tool.summary(),
        style.dim(format!("[{}]", request.id))
    );
    if let Some(diff) = &request.tool.diff {
        for line in diff.lines().take(DIFF_LINES) {
            text.push_str("\n    ");
            text.push_str(line);
        }
    }
    text
}

/// `✓ allowed Bash: cargo test (by ana)`, `✗ denied … (timeout)`.
pub fn decided(style: Style, request: &PermissionRequest) -> Option<String> {
    let decision = request.decision.as_ref()?;
    let word = match (decision.decision, &decision.by) {
        (_, DecidedBy::Timeout) => style.red("✗ timeout, denied"),
        (Verdict::Deny, _) => style.red("✗ denied"),
        (Verdict::AllowSession, _) => style.green("✓ allowed for the session"),
        (Verdict::Allow, _) => style.green("✓ allowed"),
    };
    let by = match &decision.by {
        DecidedBy::Person { name } => format!(" (by {name})"),
        DecidedBy::Rule { rule } => format!(" (rule {rule})"),
        DecidedBy::Timeout | DecidedBy::Cancelled => String::new(),
    };
    let message = match (&decision.message, decision.decision) {
        (Some(m), Verdict::Deny) if decision.by != DecidedBy::Timeout => format!(": {m}"),
        _ => String::new(),
    };
    Some(format!("{word} {}{by}{message}", request.tool.summary()))
}
