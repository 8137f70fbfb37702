//! [`CappedOutput`]: a command's output, keeping the newest bytes under a limit.

/// The output of one command: stdout and stderr as they arrive, the oldest bytes dropped
/// once it is over its limit (cut at a character boundary, so the text stays valid, even if
/// that keeps a few bytes less), and whether anything was dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CappedOutput {
    text: String,
    truncated: bool,
    limit: usize,
}

impl CappedOutput {
    pub fn new(limit: usize) -> Self {
        Self {
            text: String::new(),
            truncated: false,
            limit,
        }
    }

    /// Appends `more`, then drops the oldest bytes over the limit.
    pub fn push(&mut self, more: &str) {
        self.text.push_str(more);
        let Some(mut cut) = self.text.len().checked_sub(self.limit).filter(|&c| c > 0) else {
            return;
        };
        while !self.text.is_char_boundary(cut) {
            cut += 1;
        }
        self.text.drain(..cut);
        self.truncated = true;
    }

    /// Marks the output as cut (a line over the reader's own bound kept only its start).
    pub fn mark_truncated(&mut self) {
        self.truncated = true;
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn truncated(&self) -> bool {
        self.truncated
    }
}

#[cfg(test)]
mod tests {
    use super::CappedOutput;

    /// (limit, pushes, kept text, truncated)
    const CASES: &[(usize, &[&str], &str, bool)] = &[
        (10, &["hello\n"], "hello\n", false),
        // Exactly at the limit: nothing dropped.
        (6, &["hello\n"], "hello\n", false),
        (6, &["hello\n", "world\n"], "world\n", true),
        (8, &["abc\n", "defgh\n"], "c\ndefgh\n", true),
        // "é" is two bytes: a cut inside it moves past it.
        (3, &["xéab"], "ab", true),
        (4, &["xéab"], "éab", true),
        (0, &["a"], "", true),
        (0, &[""], "", false),
    ];

    #[test]
    fn the_newest_bytes_are_kept_at_a_character_boundary() {
        for (limit, pushes, kept, truncated) in CASES {
            let mut out = CappedOutput::new(*limit);
            for push in *pushes {
                out.push(push);
            }
            let case = format!("limit {limit}, pushes {pushes:?}");
            assert_eq!(out.text(), *kept, "{case}");
            assert_eq!(out.truncated(), *truncated, "{case}");
        }
    }
}
