//! `go test`: `--- FAIL: Name (0.00s)` per failing test (indented for sub-tests), then one
//! line per package: `ok  \tpkg\t0.1s`, `FAIL\tpkg\t0.1s`, or `FAIL\tpkg [build failed]`.
//!
//! `go test` prints no failure count, so the package lines stand in for it: the names are
//! the whole list when every failed package named at least one failing test and none
//! failed to build or panicked (a panic ends the package's run: the tests after it never
//! ran).

use super::Found;

#[derive(Debug, Default)]
pub(super) struct GoTest {
    found: Found,
    /// Failing tests, sub-tests as `Parent/child`.
    failed: Vec<String>,
    /// `--- FAIL` lines since the last package line.
    since_package: usize,
    /// A package failed without naming a test, failed to build, or panicked.
    incomplete: bool,
    /// A package line was seen: without one, `--- FAIL:` is anyone's output.
    packages: bool,
}

impl GoTest {
    pub fn line(&mut self, line: &str) {
        if let Some(rest) = line.trim_start().strip_prefix("--- FAIL: ") {
            if let Some((name, _)) = rest.split_once(" (") {
                self.failed.push(name.to_owned());
                self.since_package += 1;
            }
        } else if let Some(rest) = line.strip_prefix("FAIL\t") {
            self.packages = true;
            let named = std::mem::take(&mut self.since_package) > 0;
            self.incomplete |=
                !named || rest.ends_with(" [build failed]") || rest.ends_with(" [setup failed]");
        } else if line.starts_with("ok  \t") {
            self.packages = true;
            self.since_package = 0;
        } else if line.starts_with("panic: ") {
            self.incomplete = true;
        }
    }

    pub fn finish(mut self) -> Found {
        if !self.packages {
            return Found::default();
        }
        // A test fails when one of its sub-tests does: only the sub-tests are named.
        let failed = std::mem::take(&mut self.failed);
        for name in &failed {
            let parent = failed
                .iter()
                .any(|other| other.len() > name.len() && other.starts_with(&format!("{name}/")));
            if !parent {
                self.found.fail(name);
            }
        }
        if !self.incomplete {
            self.found.report(self.found.entries);
        }
        self.found.open |= self.incomplete;
        self.found
    }
}
