//! Turning gemini's stderr (colour codes, start-up chatter, stack traces) into a one-line
//! summary for error messages.

use forge_domain::error::excerpt;

/// Lines gemini prints on every run; they never explain a failure.
const NOISE: &[&str] = &[
    "Warning: 256-color support not detected",
    "YOLO mode is enabled",
    "Ripgrep is not available",
    "[STARTUP]",
    "Loaded cached credentials",
    "Warning: --allowed-tools",
];

/// The first few telling lines of `stderr`, ANSI codes removed, joined with `; `.
pub fn summarize(stderr: &str) -> String {
    let mut kept: Vec<String> = Vec::new();
    for line in stderr.lines() {
        let line = strip_ansi(line);
        let line = line.trim();
        if line.is_empty()
            || NOISE.iter().any(|n| line.starts_with(n))
            || is_stack_frame(line)
            || kept.iter().any(|k| k == line)
        {
            continue;
        }
        kept.push(line.to_owned());
        if kept.len() == 3 {
            break;
        }
    }
    excerpt(&kept.join("; "), 500)
}

/// `at f (file:1:2)` frames and the `{ status: 401 }` tail node prints after an error.
fn is_stack_frame(line: &str) -> bool {
    line.starts_with("at ") || matches!(line, "{" | "}") || line.starts_with("status: ")
}

/// `text` without ANSI CSI sequences (`ESC [ … letter`).
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_telling_lines() {
        let stderr = "Warning: 256-color support not detected.\n\u{1b}[31mGemini CLI is not running in a trusted directory.\u{1b}[0m\n    at x (y.js:1:2)\n{\n  status: 401\n}\n";
        assert_eq!(
            summarize(stderr),
            "Gemini CLI is not running in a trusted directory."
        );
        assert_eq!(summarize("YOLO mode is enabled.\n"), "");
    }
}
