//! Which tests a validation step's output says failed, read line by line as the step runs
//! (the whole output, not the bounded tail). One recognizer per runner, each keyed on its
//! runner's own format, all fed every line: `cargo test`, `cargo nextest`, Python's
//! `unittest` and `pytest`, `go test`, Jest, Vitest and `node --test` (TAP and spec
//! reporters).
//!
//! A list counts as *itemized* only when the runner's own summary counts exactly as many
//! failures as were named and every run that started printed its summary; anything else
//! (a build error, a crash, an unknown runner) is not, and the comparison with the
//! baseline then blames the change whenever the step fails more (see
//! [`super::validation::compare`]).

mod cargo;
mod go;
mod jest;
mod node;
mod python;
mod vitest;

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// The tests one step's output named as failing.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FailedTests {
    /// Sorted, without duplicates.
    pub names: Vec<String>,
    /// The failures the runners' summaries count (`None`: no summary seen).
    #[serde(default)]
    pub count: Option<u64>,
    /// The names are the whole list (see the module doc).
    pub itemized: bool,
}

/// What one recognizer found.
#[derive(Debug, Default)]
struct Found {
    names: BTreeSet<String>,
    /// Failure entries (a test's sub-tests may fail more than once).
    entries: u64,
    /// Failures the summary counts.
    reported: Option<u64>,
    /// A run started whose summary never came (a crash, a kill).
    open: bool,
}

impl Found {
    fn fail(&mut self, name: &str) {
        self.entries += 1;
        self.names.insert(name.to_owned());
    }

    fn report(&mut self, n: u64) {
        self.reported = Some(self.reported.unwrap_or(0) + n);
    }

    fn seen(&self) -> bool {
        self.entries > 0 || self.reported.is_some() || self.open
    }
}

/// Feeds on a step's output lines; [`FailureScanner::finish`] gives the list.
#[derive(Debug, Default)]
pub struct FailureScanner {
    cargo: cargo::CargoTest,
    nextest: cargo::Nextest,
    unittest: python::Unittest,
    pytest: python::Pytest,
    go: go::GoTest,
    jest: jest::Jest,
    vitest: vitest::Vitest,
    tap: node::Tap,
    spec: node::Spec,
}

impl FailureScanner {
    pub fn new() -> Self {
        Self::default()
    }

    /// One line of output, without its newline.
    pub fn line(&mut self, line: &str) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        self.cargo.line(line);
        self.nextest.line(line);
        self.unittest.line(line);
        self.pytest.line(line);
        self.go.line(line);
        self.jest.line(line);
        self.vitest.line(line);
        self.tap.line(line);
        self.spec.line(line);
    }

    pub fn finish(self) -> FailedTests {
        let found = [
            self.cargo.finish(),
            self.nextest.finish(),
            self.unittest.finish(),
            self.pytest.finish(),
            self.go.finish(),
            self.jest.finish(),
            self.vitest.finish(),
            self.tap.finish(),
            self.spec.finish(),
        ];
        let mut names = BTreeSet::new();
        let mut entries = 0;
        let mut count: Option<u64> = None;
        let mut whole = true;
        let mut any = false;
        for f in found.into_iter().filter(Found::seen) {
            any = true;
            entries += f.entries;
            names.extend(f.names);
            match f.reported {
                Some(n) => count = Some(count.unwrap_or(0) + n),
                None => whole = false,
            }
            whole &= !f.open;
        }
        let itemized = any && whole && entries > 0 && count == Some(entries);
        FailedTests {
            names: names.into_iter().collect(),
            count,
            itemized,
        }
    }
}

/// Scans a whole output at once.
pub fn scan(output: &str) -> FailedTests {
    let mut scanner = FailureScanner::new();
    for line in output.lines() {
        scanner.line(line);
    }
    scanner.finish()
}

/// The number right before `word` in `text` (`"3 failed"` → 3).
fn number_before(text: &str, word: &str) -> Option<u64> {
    let at = text.find(word)?;
    let head = text[..at].trim_end();
    let digits: String = head
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests;
