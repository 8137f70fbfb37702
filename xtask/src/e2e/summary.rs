//! What every group hands back — one [`Verdict`] per case × provider — and how it is shown:
//! a table per group as it ends, one summary for the whole suite at the end.

use std::fmt::Write as _;

use super::cases::PROVIDERS;

/// One case × provider's result.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub case: &'static str,
    pub provider: &'static str,
    /// What the run ended in (`success`, a stop reason, …), shown in the table; may be empty.
    pub status: String,
    /// 0 when the group does not time its cases one by one.
    pub seconds: f64,
    pub failures: Vec<String>,
    /// Worth showing even on success (a measurement, a recorded fixture).
    pub note: String,
}

impl Verdict {
    pub fn new(case: &'static str, provider: &'static str) -> Self {
        Self {
            case,
            provider,
            status: String::new(),
            seconds: 0.0,
            failures: Vec::new(),
            note: String::new(),
        }
    }

    /// A verdict from a case that either passed or failed with one error.
    pub fn of(case: &'static str, provider: &'static str, outcome: anyhow::Result<()>) -> Self {
        let mut verdict = Self::new(case, provider);
        if let Err(e) = outcome {
            verdict.failures.push(format!("{e:#}"));
        }
        verdict
    }

    /// The verdict of `case` on `provider`: what `run` recorded in it, and its error.
    pub fn run(
        case: &'static str,
        provider: &'static str,
        run: impl FnOnce(&mut Verdict) -> anyhow::Result<()>,
    ) -> Self {
        let mut verdict = Self::new(case, provider);
        if let Err(e) = run(&mut verdict) {
            verdict.failures.push(format!("{e:#}"));
        }
        verdict
    }

    /// [`Verdict::run`], timed, and said as it ends (`case provider ok|FAILED note`).
    pub fn timed(
        case: &'static str,
        provider: &'static str,
        run: impl FnOnce(&mut Verdict) -> anyhow::Result<()>,
    ) -> Self {
        let started = std::time::Instant::now();
        let mut verdict = Self::run(case, provider, run);
        verdict.seconds = started.elapsed().as_secs_f64();
        super::say(&format!(
            "{case:<28} {provider:<7} {} {}",
            if verdict.passed() { "ok" } else { "FAILED" },
            verdict.note
        ));
        verdict
    }

    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// One group's verdicts and its wall-clock time.
#[derive(Debug)]
pub struct GroupResult {
    pub group: &'static str,
    pub verdicts: Vec<Verdict>,
    pub seconds: f64,
}

impl GroupResult {
    fn failed(&self) -> usize {
        self.verdicts.iter().filter(|v| !v.passed()).count()
    }
}

/// The group's table: a row per case (in `order`, then any others as they came), a column
/// per provider; the notes below it.
pub fn table(result: &GroupResult, order: &[&'static str]) -> String {
    let mut rows: Vec<&'static str> = order
        .iter()
        .copied()
        .filter(|c| result.verdicts.iter().any(|v| v.case == *c))
        .collect();
    for v in &result.verdicts {
        if !rows.contains(&v.case) {
            rows.push(v.case);
        }
    }
    let width = rows.iter().map(|r| r.len()).max().unwrap_or(0).max(12);
    let mut header = format!("{:<width$}", result.group);
    for p in PROVIDERS {
        let _ = write!(header, "  {p:<24}");
    }
    let mut out = format!("\n{}\n", header.trim_end());
    for row in rows {
        let mut line = format!("{row:<width$}");
        for p in PROVIDERS {
            let cell = result
                .verdicts
                .iter()
                .find(|v| v.case == row && v.provider == p)
                .map_or_else(|| "-".to_owned(), cell);
            let _ = write!(line, "  {cell:<24}");
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    for v in result.verdicts.iter().filter(|v| !v.note.is_empty()) {
        let _ = writeln!(out, "note {} × {}: {}", v.case, v.provider, v.note);
    }
    let _ = writeln!(
        out,
        "{}: {} passed, {} failed, {:.1}s",
        result.group,
        result.verdicts.len() - result.failed(),
        result.failed(),
        result.seconds
    );
    out
}

fn cell(v: &Verdict) -> String {
    let mut cell = if v.passed() { "ok" } else { "FAIL" }.to_owned();
    if !v.status.is_empty() {
        let _ = write!(cell, " {}", v.status);
    }
    if v.seconds > 0.0 {
        let _ = write!(cell, " {:.1}s", v.seconds);
    }
    cell
}

/// The closing summary (a line per group, the total in the plain `e2e: N passed, N failed`
/// form CI tooling reads, then every failure) and the failed cases' names.
pub fn summary(results: &[GroupResult], total: f64, jobs: usize) -> (String, Vec<String>) {
    let mut out = format!(
        "\n{:<14} {:>6} {:>6} {:>8}\n",
        "group", "passed", "failed", "seconds"
    );
    for r in results {
        let _ = writeln!(
            out,
            "{:<14} {:>6} {:>6} {:>8.1}",
            r.group,
            r.verdicts.len() - r.failed(),
            r.failed(),
            r.seconds
        );
    }
    let passed: usize = results.iter().map(|r| r.verdicts.len() - r.failed()).sum();
    let failed: usize = results.iter().map(GroupResult::failed).sum();
    let _ = writeln!(
        out,
        "\n--jobs {jobs}, {total:.1}s in all\ne2e: {passed} passed, {failed} failed"
    );
    let mut names = Vec::new();
    for r in results {
        for v in r.verdicts.iter().filter(|v| !v.passed()) {
            names.push(format!("{} {} × {}", r.group, v.case, v.provider));
            for f in &v.failures {
                let _ = writeln!(out, "FAIL {} {} × {}: {f}", r.group, v.case, v.provider);
            }
        }
    }
    (out, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(case: &'static str, provider: &'static str, failures: &[&str]) -> Verdict {
        Verdict {
            status: "success".into(),
            seconds: 1.5,
            failures: failures.iter().map(|f| (*f).to_owned()).collect(),
            ..Verdict::new(case, provider)
        }
    }

    #[test]
    fn the_table_follows_the_given_order_and_leaves_unrun_cells_empty() {
        let result = GroupResult {
            group: "cases",
            verdicts: vec![
                verdict("b", "codex", &[]),
                verdict("a", "claude", &["no text"]),
                verdict("extra", "gemini", &[]),
            ],
            seconds: 3.0,
        };
        insta::assert_snapshot!(table(&result, &["a", "b", "unrun"]));
    }

    #[test]
    fn the_summary_counts_per_group_and_names_each_failure() {
        let results = [
            GroupResult {
                group: "cases",
                verdicts: vec![verdict("a", "claude", &[]), verdict("b", "codex", &["x"])],
                seconds: 10.0,
            },
            GroupResult {
                group: "serve",
                verdicts: vec![verdict("cancel", "gemini", &["y", "z"])],
                seconds: 4.25,
            },
        ];
        let (text, failed) = summary(&results, 14.5, 4);
        insta::assert_snapshot!(text);
        assert_eq!(failed, ["cases b × codex", "serve cancel × gemini"]);
    }
}
