//! Reading the agent's answer: one ` ```json ` block `{"findings": [...]}` (or, failing a
//! fence, the first such object in the text). A block that cannot be read is an
//! [`AnswerError`] (the caller asks once more); entries that cannot be used (a bad path, a
//! line below 1, an unknown severity) are [`Rejected`] with the reason, never dropped
//! silently.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::finding::{FindingSource, ReviewFinding, ReviewSeverity};

/// At most this many findings are taken from one answer; the rest are rejected.
pub const MAX_FINDINGS: usize = 200;
/// Longer titles, bodies and suggestions are cut (with a note) to keep outputs readable.
pub const MAX_TITLE_CHARS: usize = 200;
pub const MAX_BODY_CHARS: usize = 4_000;
pub const MAX_SUGGESTION_CHARS: usize = 8_000;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AnswerError {
    #[error("the answer has no findings block")]
    Missing,
    #[error("the findings block is not valid JSON: {reason}")]
    Unreadable { reason: String },
    #[error("the findings block ends before its JSON does (truncated)")]
    Truncated,
    #[error("the findings block has no \"findings\" list: {reason}")]
    WrongShape { reason: String },
}

/// An entry of the answer that is not a usable finding, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejected {
    /// 0-based position in the answer's list.
    pub index: usize,
    pub reason: String,
    /// The entry as the agent wrote it (cut to a few hundred characters).
    pub entry: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ParsedAnswer {
    pub findings: Vec<ReviewFinding>,
    pub rejected: Vec<Rejected>,
}

/// The findings of `answer`.
///
/// # Errors
/// [`AnswerError`] when no block is found or it cannot be read as `{"findings": [...]}`.
pub fn parse_answer(answer: &str) -> Result<ParsedAnswer, AnswerError> {
    let value = find_block(answer)?;
    let list = match value.get("findings") {
        Some(Value::Array(list)) => list,
        Some(other) => {
            return Err(AnswerError::WrongShape {
                reason: format!("\"findings\" is {}", kind_of(other)),
            });
        }
        None => {
            return Err(AnswerError::WrongShape {
                reason: "no \"findings\" key".to_owned(),
            });
        }
    };
    let mut parsed = ParsedAnswer::default();
    for (index, entry) in list.iter().enumerate() {
        let reject = |reason: String| Rejected {
            index,
            reason,
            entry: cut(&entry.to_string(), 300),
        };
        if parsed.findings.len() >= MAX_FINDINGS {
            parsed
                .rejected
                .push(reject(format!("more than {MAX_FINDINGS} findings")));
            continue;
        }
        match finding_of(entry) {
            Ok(finding) => parsed.findings.push(finding),
            Err(reason) => parsed.rejected.push(reject(reason)),
        }
    }
    Ok(parsed)
}

/// The JSON object of the answer: the last ` ```json ` fence holding a `findings` object,
/// else the first `{` … object with a `"findings"` key in the text.
fn find_block(answer: &str) -> Result<Value, AnswerError> {
    let mut first_error = None;
    for block in fenced_blocks(answer).into_iter().rev() {
        match read_object(block) {
            Ok(value) if value.get("findings").is_some() => return Ok(value),
            Ok(_) => {}
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    // No usable fence: an unfenced object starting at a `{` before `"findings"`.
    let Some(key) = answer.find("\"findings\"") else {
        return Err(AnswerError::Missing);
    };
    let Some(start) = answer[..key].rfind('{') else {
        return Err(AnswerError::Missing);
    };
    read_object(&answer[start..])
}

/// The bodies of ` ```json ` (or bare ` ``` `) fences; an unclosed last fence runs to the
/// end of the text (a truncated answer).
fn fenced_blocks(answer: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = answer;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let info_end = after.find('\n').unwrap_or(after.len());
        let info = after[..info_end].trim();
        let body_start = (info_end + 1).min(after.len());
        let body = &after[body_start..];
        let (text, next) = match body.find("```") {
            Some(close) => (&body[..close], &body[close + 3..]),
            None => (body, ""),
        };
        if info.is_empty() || info.eq_ignore_ascii_case("json") {
            blocks.push(text);
        }
        rest = next;
    }
    blocks
}

/// The first JSON value of `text` (trailing text allowed), which must be an object.
fn read_object(text: &str) -> Result<Value, AnswerError> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    match values.next() {
        Some(Ok(value @ Value::Object(_))) => Ok(value),
        Some(Ok(other)) => Err(AnswerError::WrongShape {
            reason: format!("the block holds {}, not an object", kind_of(&other)),
        }),
        Some(Err(e)) if e.is_eof() => Err(AnswerError::Truncated),
        Some(Err(e)) => Err(AnswerError::Unreadable {
            reason: e.to_string(),
        }),
        None => Err(AnswerError::Truncated),
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn finding_of(entry: &Value) -> Result<ReviewFinding, String> {
    let Value::Object(map) = entry else {
        return Err(format!("an entry is {}, not an object", kind_of(entry)));
    };
    let text = |key: &str| -> Result<Option<String>, String> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!("{key} is {}, not a string", kind_of(other))),
        }
    };
    let line_of = |key: &str| -> Result<Option<u32>, String> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => n
                .as_u64()
                .filter(|&l| l >= 1)
                .and_then(|l| u32::try_from(l).ok())
                .map(Some)
                .ok_or_else(|| format!("{key} {n} is not a line number (1 or more)")),
            Some(other) => Err(format!("{key} is {}, not a number", kind_of(other))),
        }
    };
    let path = text("path")?.unwrap_or_default();
    let path = checked_path(&path)?;
    let line = line_of("line")?;
    let end_line = line_of("end_line")?;
    if let (Some(l), Some(e)) = (line, end_line)
        && e < l
    {
        return Err(format!("end_line {e} is before line {l}"));
    }
    if line.is_none() && end_line.is_some() {
        return Err("end_line without line".to_owned());
    }
    let severity: ReviewSeverity = text("severity")?
        .ok_or("no severity")?
        .parse()
        .map_err(|e: String| e)?;
    let title = text("title")?
        .filter(|t| !t.trim().is_empty())
        .ok_or("no title")?;
    let suggestion = text("suggestion")?;
    if suggestion.is_some() && line.is_none() {
        return Err("a suggestion without a line to replace".to_owned());
    }
    Ok(ReviewFinding {
        path,
        line,
        end_line: end_line.or(line),
        severity,
        title: cut(title.trim(), MAX_TITLE_CHARS),
        body: cut(text("body")?.unwrap_or_default().trim(), MAX_BODY_CHARS),
        suggestion: suggestion.map(|s| cut(&s, MAX_SUGGESTION_CHARS)),
        source: FindingSource::Agent,
        rule: None,
    })
}

/// A repository-relative `/` path: `./` and `\` normalised; absolute paths, `..`, NUL and
/// control characters refused (an answer must not steer outputs outside the repository).
fn checked_path(path: &str) -> Result<String, String> {
    let normalised = path.trim().replace('\\', "/");
    let normalised = normalised.trim_start_matches("./");
    if normalised.is_empty() {
        return Ok(String::new());
    }
    if normalised.starts_with('/') || normalised.chars().nth(1) == Some(':') {
        return Err(format!("path {path:?} is absolute"));
    }
    if normalised.chars().any(char::is_control) {
        return Err(format!("path {path:?} has control characters"));
    }
    let mut parts = Vec::new();
    for part in normalised.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(format!("path {path:?} leaves the repository")),
            part => parts.push(part),
        }
    }
    Ok(parts.join("/"))
}

/// At most `max` characters, with a note when cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}… (cut)", &text[..at]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(path: &str, line: u32, severity: &str, title: &str) -> ReviewFinding {
        ReviewFinding {
            path: path.to_owned(),
            line: Some(line),
            end_line: Some(line),
            severity: severity.parse().unwrap(),
            title: title.to_owned(),
            body: String::new(),
            suggestion: None,
            source: FindingSource::Agent,
            rule: None,
        }
    }

    /// The places of the findings and the reasons of the rejected entries.
    type Expected<'a> = Result<(&'a [&'a str], &'a [&'a str]), AnswerError>;

    /// What an answer reads as: `Ok((paths:lines of the findings, rejected reasons))`.
    fn check(answer: &str, expected: Expected<'_>) {
        let got = parse_answer(answer).map(|p| {
            (
                p.findings
                    .iter()
                    .map(ReviewFinding::place)
                    .collect::<Vec<_>>(),
                p.rejected.into_iter().map(|r| r.reason).collect::<Vec<_>>(),
            )
        });
        let expected = expected.map(|(f, r)| {
            (
                f.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
                r.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
            )
        });
        assert_eq!(got, expected, "answer: {answer:?}");
    }

    const GOOD: &str = r#"{"findings": [{"path": "app/db.py", "line": 7, "end_line": 7, "severity": "high", "title": "SQL built by concatenation", "body": "Use parameters.", "suggestion": "    cur.execute(\"SELECT * FROM users WHERE name = %s\", (name,))"}]}"#;

    #[test]
    fn answers_well_formed_fenced_unfenced_truncated_and_hostile() {
        let fenced = format!("Here is my review.\n\n```json\n{GOOD}\n```\n\nThanks.");
        let fenced_upper = format!("```JSON\n{GOOD}\n```");
        let bare_fence = format!("```\n{GOOD}\n```");
        let unfenced = format!("My findings: {GOOD} — that is all.");
        let two_fences =
            format!("```json\n{{\"example\": true}}\n```\nand the answer:\n```json\n{GOOD}\n```");
        let truncated = format!("```json\n{}", &GOOD[..GOOD.len() / 2]);
        let truncated_unfenced = GOOD[..40].to_owned();
        let huge_line =
            r#"{"findings":[{"path":"a.py","line":99999999999,"severity":"low","title":"t"}]}"#;
        let many: String = format!(
            "{{\"findings\": [{}]}}",
            (0..MAX_FINDINGS + 2)
                .map(|i| format!(
                    "{{\"path\":\"a.py\",\"line\":{},\"severity\":\"low\",\"title\":\"t{i}\"}}",
                    i + 1
                ))
                .collect::<Vec<_>>()
                .join(",")
        );
        let many_places: Vec<String> = (1..=MAX_FINDINGS).map(|i| format!("a.py:{i}")).collect();
        let many_refs: Vec<&str> = many_places.iter().map(String::as_str).collect();
        let cases: Vec<(&str, Expected<'_>)> = vec![
            (GOOD, Ok((&["app/db.py:7"], &[]))),
            (&fenced, Ok((&["app/db.py:7"], &[]))),
            (&fenced_upper, Ok((&["app/db.py:7"], &[]))),
            (&bare_fence, Ok((&["app/db.py:7"], &[]))),
            (&unfenced, Ok((&["app/db.py:7"], &[]))),
            (&two_fences, Ok((&["app/db.py:7"], &[]))),
            ("```json\n{\"findings\": []}\n```", Ok((&[], &[]))),
            ("No problems found. {\"findings\":[]}", Ok((&[], &[]))),
            // Missing, unreadable, truncated, wrong shape.
            ("Looks good to me!", Err(AnswerError::Missing)),
            ("", Err(AnswerError::Missing)),
            (&truncated, Err(AnswerError::Truncated)),
            (&truncated_unfenced, Err(AnswerError::Truncated)),
            (
                "```json\n{\"findings\": [1, 2,, 3]}\n```",
                Err(AnswerError::Unreadable {
                    reason: "expected value at line 1 column 20".into(),
                }),
            ),
            (
                "```json\n[\"findings\"]\n```",
                Err(AnswerError::WrongShape {
                    reason: "the block holds a list, not an object".into(),
                }),
            ),
            (
                "```json\n{\"findings\": \"none\"}\n```",
                Err(AnswerError::WrongShape {
                    reason: "\"findings\" is a string".into(),
                }),
            ),
            // Hostile or sloppy entries: rejected with a reason, the rest kept.
            (
                r#"{"findings":[{"path":"../../etc/passwd","line":1,"severity":"high","title":"x"},{"path":"/etc/shadow","line":1,"severity":"high","title":"x"},{"path":"ok.py","line":2,"severity":"CRITICAL","title":"kept"}]}"#,
                Ok((
                    &["ok.py:2"],
                    &[
                        "path \"../../etc/passwd\" leaves the repository",
                        "path \"/etc/shadow\" is absolute",
                    ],
                )),
            ),
            (
                r#"{"findings":[{"path":"a.py","line":0,"severity":"low","title":"t"},{"path":"a.py","line":-3,"severity":"low","title":"t"},{"path":"a.py","line":"7","severity":"low","title":"t"},{"path":"a.py","line":5,"end_line":4,"severity":"low","title":"t"}]}"#,
                Ok((
                    &[],
                    &[
                        "line 0 is not a line number (1 or more)",
                        "line -3 is not a line number (1 or more)",
                        "line is a string, not a number",
                        "end_line 4 is before line 5",
                    ],
                )),
            ),
            (
                huge_line,
                Ok((&[], &["line 99999999999 is not a line number (1 or more)"])),
            ),
            (
                r#"{"findings":[{"path":"a.py","line":1,"severity":"severe","title":"t"},{"path":"a.py","line":1,"title":"t"},{"path":"a.py","line":1,"severity":"low"},{"path":"a.py","severity":"low","title":"t","suggestion":"x"},"text",{"path":"a\u0000b","line":1,"severity":"low","title":"t"}]}"#,
                Ok((
                    &[],
                    &[
                        "unknown severity \"severe\" (expected critical, high, medium, low or info)",
                        "no severity",
                        "no title",
                        "a suggestion without a line to replace",
                        "an entry is a string, not an object",
                        "path \"a\\0b\" has control characters",
                    ],
                )),
            ),
            (
                r#"{"findings":[{"path":".\\src\\x.rs","line":3,"severity":"info","title":"windows path"},{"severity":"medium","title":"about the whole change"}]}"#,
                Ok((&["src/x.rs:3", "(the change as a whole)"], &[])),
            ),
            (
                &many,
                Ok((
                    &many_refs,
                    &["more than 200 findings", "more than 200 findings"],
                )),
            ),
        ];
        for (answer, expected) in cases {
            check(answer, expected);
        }
    }

    #[test]
    fn a_well_formed_finding_is_read_whole() {
        let parsed = parse_answer(GOOD).unwrap();
        let mut expected = one("app/db.py", 7, "high", "SQL built by concatenation");
        expected.body = "Use parameters.".into();
        expected.suggestion =
            Some("    cur.execute(\"SELECT * FROM users WHERE name = %s\", (name,))".into());
        assert_eq!(parsed.findings, vec![expected]);
    }

    #[test]
    fn long_texts_are_cut_with_a_note() {
        let answer = format!(
            "{{\"findings\":[{{\"path\":\"a\",\"line\":1,\"severity\":\"low\",\"title\":\"{}\"}}]}}",
            "t".repeat(MAX_TITLE_CHARS + 50)
        );
        let title = &parse_answer(&answer).unwrap().findings[0].title;
        assert!(title.ends_with("… (cut)"));
        assert_eq!(
            title.chars().count(),
            MAX_TITLE_CHARS + "… (cut)".chars().count()
        );
    }
}
