//! `node --test`: the TAP reporter (Node's default when output is no terminal:
//! `# Subtest: name`, `not ok N - name`, `# fail N`) and the spec reporter
//! (`✖ failing tests:` then `test at file:line:col` / `✖ name (1ms)`, `ℹ fail N`).

use super::Found;

#[derive(Debug, Default)]
pub(super) struct Tap {
    found: Found,
    /// `# Subtest:` names by depth (four spaces a level).
    path: Vec<String>,
    /// Failing tests with their suites' path.
    failed: Vec<Vec<String>>,
    /// `TAP version 13` was seen: without it a `not ok` line is anyone's output.
    active: bool,
}

impl Tap {
    pub fn line(&mut self, line: &str) {
        if line.starts_with("TAP version ") {
            self.active = true;
        }
        if !self.active {
            return;
        }
        let t = line.trim_start();
        let depth = (line.len() - t.len()) / 4;
        if let Some(name) = t.strip_prefix("# Subtest: ") {
            self.path.truncate(depth);
            self.path.push(name.to_owned());
        } else if let Some(rest) = t.strip_prefix("not ok ") {
            let Some((number, name)) = rest.split_once(" - ") else {
                return;
            };
            if !number.chars().all(|c| c.is_ascii_digit())
                || name.contains(" # SKIP")
                || name.contains(" # TODO")
            {
                return;
            }
            let mut path: Vec<String> = self.path.iter().take(depth).cloned().collect();
            path.push(name.to_owned());
            self.failed.push(path);
        } else if depth == 0 {
            if let Some(n) = t.strip_prefix("# fail ") {
                if let Ok(n) = n.trim().parse() {
                    self.found.report(n);
                }
            }
        }
    }

    pub fn finish(mut self) -> Found {
        // A suite fails because a test in it failed: only the tests are named.
        let failed = std::mem::take(&mut self.failed);
        for path in &failed {
            let parent = failed
                .iter()
                .any(|other| other.len() > path.len() && other.starts_with(path));
            if !parent {
                self.found.fail(&path.join(" > "));
            }
        }
        self.found
    }
}

#[derive(Debug, Default)]
pub(super) struct Spec {
    found: Found,
    in_list: bool,
    after_location: bool,
}

impl Spec {
    pub fn line(&mut self, line: &str) {
        let after_location = std::mem::replace(&mut self.after_location, false);
        if line == "✖ failing tests:" {
            self.in_list = true;
        } else if let Some(n) = line.strip_prefix("ℹ fail ") {
            if let Ok(n) = n.trim().parse() {
                self.found.report(n);
            }
        } else if self.in_list && line.starts_with("test at ") {
            self.after_location = true;
        } else if self.in_list && after_location {
            if let Some(rest) = line.strip_prefix("✖ ") {
                // `name (0.24ms)`: the time goes.
                let name = match rest.rsplit_once(" (") {
                    Some((name, time)) if time.ends_with("ms)") => name,
                    _ => rest,
                };
                self.found.fail(name);
            }
        }
    }

    pub fn finish(self) -> Found {
        self.found
    }
}
