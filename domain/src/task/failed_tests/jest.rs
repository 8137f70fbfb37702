//! Jest: `FAIL path/to/file.test.js`, then a `  ● describe › test` header per failing test
//! (`  ● Test suite failed to run` when the file itself could not run), and the summary
//! `Tests:       3 failed, 2 passed, 5 total`.

use super::{Found, number_before};

#[derive(Debug, Default)]
pub(super) struct Jest {
    found: Found,
    /// The file of the last `FAIL` line: its failures follow it.
    file: Option<String>,
}

impl Jest {
    pub fn line(&mut self, line: &str) {
        if let Some(rest) = line.strip_prefix("FAIL ") {
            // `FAIL src/a.test.js (5.1 s)` when the file was slow.
            let file = rest.split_once(" (").map_or(rest, |(file, _)| file);
            self.file = Some(file.trim().to_owned());
        } else if line.starts_with("PASS ") {
            self.file = None;
        } else if let Some(title) = line.strip_prefix("  ● ") {
            let Some(file) = &self.file else {
                return;
            };
            if title == "Test suite failed to run" {
                self.found.open = true;
            } else {
                let name = format!("{file} › {title}");
                self.found.fail(&name);
            }
        } else if let Some(rest) = line.strip_prefix("Tests:") {
            self.file = None;
            self.found
                .report(number_before(rest, " failed").unwrap_or(0));
        }
    }

    pub fn finish(self) -> Found {
        self.found
    }
}
