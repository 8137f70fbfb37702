//! `cargo test` (libtest's text: `test x ... FAILED`, the `failures:` list, `test result:`)
//! and `cargo nextest run` (`FAIL [ 0.1s] binary test`, `Summary [ … ] N tests run: …`).

use super::{Found, number_before};

#[derive(Debug, Default)]
pub(super) struct CargoTest {
    found: Found,
    /// Test binaries that printed `running N tests` and no `test result:` yet.
    running: u32,
    /// Inside the closing `failures:` list (names indented by four spaces).
    in_list: bool,
}

impl CargoTest {
    pub fn line(&mut self, line: &str) {
        if self.in_list {
            match line.strip_prefix("    ") {
                Some(name) if !name.trim().is_empty() && !name.starts_with(' ') => {
                    // The list repeats the `... FAILED` lines: a name, not a new entry.
                    if self.found.names.insert(name.trim().to_owned()) {
                        self.found.entries += 1;
                    }
                    return;
                }
                _ => self.in_list = false,
            }
        }
        // libtest prints at column 0; nextest shows the same text indented, so it is not
        // read twice.
        if line == "failures:" {
            self.in_list = true;
        } else if let Some(rest) = line.strip_prefix("running ") {
            if rest.ends_with(" test") || rest.ends_with(" tests") {
                self.running += 1;
            }
        } else if let Some(rest) = line.strip_prefix("test result: ") {
            self.running = self.running.saturating_sub(1);
            self.found
                .report(number_before(rest, " failed;").unwrap_or(0));
        } else if let Some(rest) = line.strip_prefix("test ") {
            if let Some(name) = rest.strip_suffix(" ... FAILED") {
                if self.found.names.insert(name.to_owned()) {
                    self.found.entries += 1;
                }
            }
        }
    }

    pub fn finish(mut self) -> Found {
        self.found.open = self.running > 0;
        self.found
    }
}

/// Status words of a nextest line for a test that did not pass.
const NEXTEST_FAILS: [&str; 5] = ["FAIL [", "SIGSEGV [", "SIGABRT [", "TIMEOUT [", "ABORT ["];

#[derive(Debug, Default)]
pub(super) struct Nextest {
    found: Found,
    started: bool,
}

impl Nextest {
    pub fn line(&mut self, line: &str) {
        let t = line.trim_start();
        if t.starts_with("Starting ") && t.contains(" tests across ") {
            self.started = true;
        } else if let Some(rest) = t.strip_prefix("Summary [") {
            self.started = false;
            self.found
                .report(number_before(rest, " failed").unwrap_or(0));
        } else if NEXTEST_FAILS.iter().any(|p| t.starts_with(p)) {
            // `FAIL [   0.5s] (3/5) crate::bin tests::name`: the status and the time, an
            // optional counter, then the binary and the test.
            let Some((_, after)) = t.split_once("] ") else {
                return;
            };
            let after = match after.strip_prefix('(') {
                Some(c) => c.split_once(") ").map_or("", |(_, a)| a),
                None => after,
            };
            let name = after.trim();
            if !name.is_empty() && name.contains(' ') {
                // Listed again at the end: a name counts once.
                if self.found.names.insert(name.to_owned()) {
                    self.found.entries += 1;
                }
            }
        }
    }

    pub fn finish(mut self) -> Found {
        self.found.open = self.started;
        self.found
    }
}
