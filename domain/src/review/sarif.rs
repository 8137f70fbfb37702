//! SARIF 2.1.0 for code-scanning uploads: one result per finding, the rule ids in the
//! driver, levels error (critical, high) / warning (medium) / note (low, info), URIs
//! relative to the repository root (`%SRCROOT%`), regions from the finding's lines.

use serde_json::{Value, json};

use super::finding::{FindingSource, ReviewFinding, ReviewSeverity};
use super::outcome::ReviewOutcome;

/// The rule id of the agent's findings (they carry none of their own).
pub const AGENT_RULE: &str = "agent.review";

pub fn level(severity: ReviewSeverity) -> &'static str {
    match severity {
        ReviewSeverity::Critical | ReviewSeverity::High => "error",
        ReviewSeverity::Medium => "warning",
        ReviewSeverity::Low | ReviewSeverity::Info => "note",
    }
}

fn rule_id(finding: &ReviewFinding) -> &str {
    match (&finding.source, &finding.rule) {
        (FindingSource::Rule, Some(rule)) => rule,
        _ => AGENT_RULE,
    }
}

/// The SARIF log of `outcome`, made by `tool_version` of forge.
pub fn render(outcome: &ReviewOutcome, tool_version: &str) -> Value {
    let mut rules: Vec<(String, ReviewSeverity)> = Vec::new();
    for placed in &outcome.findings {
        let id = rule_id(&placed.finding);
        match rules.iter_mut().find(|(r, _)| r == id) {
            Some((_, worst)) => *worst = (*worst).max(placed.finding.severity),
            None => rules.push((id.to_owned(), placed.finding.severity)),
        }
    }
    let rule_values: Vec<Value> = rules
        .iter()
        .map(|(id, severity)| {
            let description = if id == AGENT_RULE {
                "A finding of the reviewing agent".to_owned()
            } else {
                format!("forge review rule {id}")
            };
            json!({
                "id": id,
                "shortDescription": {"text": description},
                "defaultConfiguration": {"level": level(*severity)},
            })
        })
        .collect();
    let results: Vec<Value> = outcome
        .findings
        .iter()
        .map(|placed| {
            let f = &placed.finding;
            let id = rule_id(f);
            let index = rules.iter().position(|(r, _)| r == id).unwrap_or(0);
            let mut text = f.title.clone();
            if !f.body.is_empty() {
                text.push_str("\n\n");
                text.push_str(&f.body);
            }
            let mut result = json!({
                "ruleId": id,
                "ruleIndex": index,
                "level": level(f.severity),
                "message": {"text": text},
                "properties": {
                    "severity": f.severity.as_str(),
                    "source": match f.source { FindingSource::Rule => "rule", FindingSource::Agent => "agent" },
                },
            });
            if !f.path.is_empty() {
                let mut location = json!({
                    "physicalLocation": {
                        "artifactLocation": {"uri": uri_of(&f.path), "uriBaseId": "%SRCROOT%"},
                    }
                });
                if let Some(line) = f.line {
                    location["physicalLocation"]["region"] = json!({
                        "startLine": line,
                        "endLine": f.last_line().unwrap_or(line),
                    });
                }
                result["locations"] = json!([location]);
            }
            if let (Some(suggestion), Some(line)) = (&f.suggestion, f.line) {
                result["fixes"] = json!([{
                    "description": {"text": "Suggested replacement"},
                    "artifactChanges": [{
                        "artifactLocation": {"uri": uri_of(&f.path), "uriBaseId": "%SRCROOT%"},
                        "replacements": [{
                            "deletedRegion": {"startLine": line, "endLine": f.last_line().unwrap_or(line)},
                            "insertedContent": {"text": format!("{suggestion}\n")},
                        }],
                    }],
                }]);
            }
            result
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "forge-code-agent",
                "version": tool_version,
                "rules": rule_values,
            }},
            "automationDetails": {"id": format!("forge-review/{}/", outcome.provider)},
            "results": results,
            "properties": {"status": outcome.status.as_str(), "provider": outcome.provider},
        }],
    })
}

/// A relative URI reference: bytes outside the unreserved set and `/` percent-encoded.
fn uri_of(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::outcome::tests::sample;

    const SCHEMA: &str = include_str!("../../tests/fixtures/sarif-schema-2.1.0.json");

    #[test]
    fn the_log_is_valid_sarif_2_1_0() {
        let schema: Value = serde_json::from_str(SCHEMA).unwrap();
        let validator = jsonschema::draft4::new(&schema).unwrap();
        for outcome in [sample(), {
            let mut empty = sample();
            empty.findings.clear();
            empty
        }] {
            let log = render(&outcome, "0.1.0");
            let errors: Vec<String> = validator
                .iter_errors(&log)
                .map(|e| format!("{} at {}", e, e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{errors:#?}");
        }
    }

    #[test]
    fn a_log_that_breaks_the_schema_is_caught() {
        // The check is real: a wrong level and a missing message fail it.
        let schema: Value = serde_json::from_str(SCHEMA).unwrap();
        let validator = jsonschema::draft4::new(&schema).unwrap();
        let mut log = render(&sample(), "0.1.0");
        log["runs"][0]["results"][0]["level"] = json!("critical");
        assert!(!validator.is_valid(&log));
        let mut log = render(&sample(), "0.1.0");
        log["runs"][0]["results"][0]
            .as_object_mut()
            .unwrap()
            .remove("message");
        assert!(!validator.is_valid(&log));
    }

    #[test]
    fn results_levels_rules_and_regions() {
        let log = render(&sample(), "0.1.0");
        insta::assert_json_snapshot!("review_sarif", log);
        assert_eq!(uri_of("docs/a b%.md"), "docs/a%20b%25.md");
        assert_eq!(uri_of("src/é.rs"), "src/%C3%A9.rs");
    }
}
