//! Python's `unittest` (`FAIL: name (module.Class.name)` / `ERROR:` under a line of `=`,
//! `FAILED (failures=N, errors=M)`) and `pytest` (`FAILED path::name - msg`, `ERROR path`,
//! `SUBFAILED(..) path::name`, `N failed, M passed in 0.3s`).

use super::Found;

const RULE: &str = "======================================================================";

#[derive(Debug, Default)]
pub(super) struct Unittest {
    found: Found,
    /// The previous line was unittest's rule: a header may follow.
    after_rule: bool,
}

impl Unittest {
    pub fn line(&mut self, line: &str) {
        let after_rule = std::mem::replace(&mut self.after_rule, line == RULE);
        if after_rule {
            let header = line
                .strip_prefix("FAIL: ")
                .or_else(|| line.strip_prefix("ERROR: "));
            if let Some(header) = header {
                self.found.fail(&unittest_name(header));
            }
        } else if let Some(rest) = line.strip_prefix("FAILED (") {
            let rest = rest.trim_end_matches(')');
            let mut n = 0;
            for part in rest.split(", ") {
                if let Some((key, value)) = part.split_once('=') {
                    if key == "failures" || key == "errors" {
                        n += value.parse::<u64>().unwrap_or(0);
                    } else if key == "unexpected successes" {
                        // Not a failure line of its own: an entry the names cannot match.
                        n += value.parse::<u64>().unwrap_or(0);
                    }
                }
            }
            self.found.report(n);
        }
    }

    pub fn finish(self) -> Found {
        self.found
    }
}

/// `test_x (mod.Class.test_x) (i=1)` → `mod.Class.test_x`; Python before 3.11 prints
/// `test_x (mod.Class)`, made the same.
fn unittest_name(header: &str) -> String {
    let (method, rest) = header.split_once(" (").unwrap_or((header, ""));
    let id = rest.split_once(')').map_or("", |(id, _)| id);
    if id.is_empty() {
        method.to_owned()
    } else if id.ends_with(&format!(".{method}")) || id == method {
        id.to_owned()
    } else {
        format!("{id}.{method}")
    }
}

#[derive(Debug, Default)]
pub(super) struct Pytest {
    found: Found,
}

impl Pytest {
    pub fn line(&mut self, line: &str) {
        let entry = line
            .strip_prefix("FAILED ")
            .or_else(|| line.strip_prefix("ERROR "))
            .or_else(|| {
                line.strip_prefix("SUBFAILED")
                    .and_then(|r| r.split_once(") "))
                    .map(|(_, r)| r)
            });
        if let Some(entry) = entry {
            let name = entry.split_once(" - ").map_or(entry, |(n, _)| n).trim();
            // unittest's `FAILED (failures=1)` is no test path.
            if !name.is_empty() && !name.starts_with('(') && !name.contains(' ') {
                self.found.fail(name);
            }
            return;
        }
        if let Some(n) = summary_failures(line) {
            self.found.report(n);
        }
    }

    pub fn finish(self) -> Found {
        self.found
    }
}

/// `==== 3 failed, 3 passed in 0.32s ====` or `-q`'s bare `3 failed, 1 passed in 0.4s`:
/// the failed and errored tests it counts. Every part before ` in ` is `N word`.
fn summary_failures(line: &str) -> Option<u64> {
    let body = line.trim().trim_matches('=').trim();
    let (counts, time) = body.rsplit_once(" in ")?;
    if !time.ends_with('s') || !time.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let mut n = 0;
    for part in counts.split(", ") {
        let (count, word) = part.split_once(' ')?;
        let count: u64 = count.parse().ok()?;
        if word == "failed" || word == "error" || word == "errors" {
            n += count;
        }
    }
    Some(n)
}
