//! Vitest: ` FAIL  file.test.ts > describe > test` per failing test (` FAIL  file.test.ts
//! [ file.test.ts ]` when the file itself could not run), and the summary
//! `      Tests  3 failed | 2 passed (5)`.

use super::{Found, number_before};

#[derive(Debug, Default)]
pub(super) struct Vitest {
    found: Found,
    /// Vitest's ` RUN  v2.1.9 /path` header was seen: without it a ` FAIL  ` line is
    /// anyone's output.
    active: bool,
}

impl Vitest {
    pub fn line(&mut self, line: &str) {
        if line.starts_with(" RUN  v") {
            self.active = true;
        }
        if !self.active {
            return;
        }
        if let Some(rest) = line.strip_prefix(" FAIL  ") {
            if rest.ends_with(" ]") && rest.contains(" [ ") {
                self.found.open = true;
            } else if rest.contains(" > ") {
                self.found.fail(rest.trim_end());
            }
        } else if let Some(rest) = line.trim_start().strip_prefix("Tests  ") {
            self.found
                .report(number_before(rest, " failed").unwrap_or(0));
        }
    }

    pub fn finish(self) -> Found {
        self.found
    }
}
