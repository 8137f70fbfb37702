//! A failed job's log as the agent is told it: GitLab's trace is the runner's terminal
//! output — colour codes, collapsible-section markers, progress lines rewritten with `\r` —
//! of which the end, where the failure is, is kept.

/// The most of one job's log a follow-up carries (its end).
const TAIL_LINES: usize = 60;
const TAIL_CHARS: usize = 4_000;

/// `raw` without terminal escapes and section markers, each line as it last stood on the
/// screen, cut to its last lines.
pub(crate) fn clean_tail(raw: &str) -> String {
    let lines: Vec<String> = raw
        .split('\n')
        .map(|line| {
            let line = strip_escapes(line);
            // A `\r` rewrites the line: what was written last is what the reader saw.
            let shown = line
                .split('\r')
                .map(strip_section_marker)
                .rfind(|part| !part.is_empty())
                .unwrap_or_default();
            shown.trim_end().to_owned()
        })
        .collect();
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(0, |i| i + 1);
    let start = end.saturating_sub(TAIL_LINES);
    let text = lines[start..end].join("\n");
    let count = text.chars().count();
    if count <= TAIL_CHARS {
        return text;
    }
    let cut: String = text.chars().skip(count - TAIL_CHARS).collect();
    format!("…{cut}")
}

/// Removes ANSI escape sequences (`ESC [ … letter`, and lone `ESC x`).
fn strip_escapes(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'[') {
            chars.next();
            // Parameters and intermediates up to the final byte (@ to ~).
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        } else {
            chars.next();
        }
    }
    out
}

/// `section_start:1700000000:step_script[collapsed=true]` and `section_end:…:name` are
/// the runner's markers for the page's collapsible parts, not output.
fn strip_section_marker(part: &str) -> &str {
    for marker in ["section_start:", "section_end:"] {
        if let Some(rest) = part.strip_prefix(marker) {
            let mut fields = rest.splitn(2, ':');
            let time_ok = fields
                .next()
                .is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()));
            let name_ok = fields.next().is_some_and(|n| {
                n.split('[').next().is_some_and(|name| {
                    !name.is_empty()
                        && name
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
                })
            });
            if time_ok && name_ok {
                return "";
            }
        }
    }
    part
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(raw: &str, want: &str) {
        assert_eq!(clean_tail(raw), want, "{raw:?}");
    }

    #[test]
    fn a_runner_log_as_a_reader_sees_it() {
        check(
            "\u{1b}[0KRunning with gitlab-runner 17.5.0\n\
             section_start:1732700000:step_script\r\u{1b}[0K\u{1b}[0K\u{1b}[36;1m$ sh test.sh\u{1b}[0;m\n\
             FAIL: answer.txt\n\
             section_end:1732700001:step_script\r\u{1b}[0K\u{1b}[31;1mERROR: Job failed: exit code 1\u{1b}[0;m\n\n",
            "Running with gitlab-runner 17.5.0\n$ sh test.sh\nFAIL: answer.txt\nERROR: Job failed: exit code 1",
        );
        // Progress rewritten in place: the last state only.
        check("Downloading 10%\r20%\r100%\ndone\r\n", "100%\ndone");
        // A collapsed section's options are part of its marker.
        check(
            "section_start:1:prepare_script[collapsed=true]\r\u{1b}[0Kprepared\n",
            "prepared",
        );
        // Look-alikes are output.
        check(
            "section_start: not a marker\nsection_end:x:y\n",
            "section_start: not a marker\nsection_end:x:y",
        );
        check("", "");
    }

    #[test]
    fn only_the_end_of_a_long_log() {
        let raw: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let got = clean_tail(&raw);
        assert!(got.starts_with("line 41\n"), "{got}");
        assert!(got.ends_with("line 100"), "{got}");
        let long = "x".repeat(10_000);
        let got = clean_tail(&long);
        assert_eq!(got.chars().count(), TAIL_CHARS + 1);
        assert!(got.starts_with('…'));
    }
}
