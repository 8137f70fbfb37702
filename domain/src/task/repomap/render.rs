//! The map's text within a budget: a header line, then per file (most relevant first) its
//! path and its most relevant definitions as `  line: signature`. The first files get the
//! most definitions; a file whose block does not fit is shown with fewer, then by path
//! only; the map ends at the first file whose path no longer fits, so what is shown is
//! always a prefix of the ranking.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use serde::Serialize;

use super::{Definition, FileTags, Ranked, lexical, terms};

/// A signature longer than this is cut (a long parameter list says little more).
const MAX_SIGNATURE: usize = 100;

/// The rendered map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RepoMap {
    /// The text exactly as the instruction file holds it.
    pub text: String,
    /// The files shown, most relevant first.
    pub files: Vec<String>,
    pub budget_chars: usize,
    /// Files in the repository (ranked or not).
    pub total_files: usize,
}

/// How many definitions the file at `position` may show.
fn allowance(position: usize) -> usize {
    match position {
        0..3 => 8,
        3..10 => 4,
        10..25 => 2,
        _ => 0,
    }
}

/// Renders `ranked` (from [`super::rank`]) within `budget` characters.
pub fn render(files: &[FileTags], ranked: &[Ranked], task: &str, budget: usize) -> RepoMap {
    render_for(files, ranked, task, "the task", budget)
}

/// [`render`] with the header saying what the files are ranked by (`the task`, `the
/// failure`).
pub fn render_for(
    files: &[FileTags],
    ranked: &[Ranked],
    task: &str,
    ranked_by: &str,
    budget: usize,
) -> RepoMap {
    let query: BTreeSet<String> = terms::of_task(task).into_iter().collect();
    let named = lexical::named_identifiers(files, task);
    let used = use_counts(files);
    let mut text = format!(
        "{} files; most relevant to {ranked_by} first, with their definitions (line: signature)\n",
        files.len()
    );
    let mut shown = Vec::new();
    if text.chars().count() > budget {
        text.clear();
    }
    let mut used_chars = text.chars().count();
    for (position, r) in ranked.iter().enumerate() {
        let file = &files[r.index];
        let defs = best_defs(file, &query, &named, &used, allowance(position));
        let block = (0..=defs.len())
            .rev()
            .map(|k| block(file, &defs[..k]))
            .find(|b| used_chars + b.chars().count() <= budget);
        let Some(block) = block else {
            break;
        };
        used_chars += block.chars().count();
        text.push_str(&block);
        shown.push(file.path.clone());
    }
    RepoMap {
        text,
        files: shown,
        budget_chars: budget,
        total_files: files.len(),
    }
}

/// How often each identifier is used across the repository.
fn use_counts(files: &[FileTags]) -> HashMap<&str, u32> {
    let mut used: HashMap<&str, u32> = HashMap::new();
    for f in files {
        for (name, n) in &f.refs {
            *used.entry(name.as_str()).or_default() += n;
        }
    }
    used
}

/// The file's `limit` most relevant definitions, in line order: those the task names or
/// whose words it uses first, then those the rest of the repository uses most.
fn best_defs<'a>(
    file: &'a FileTags,
    query: &BTreeSet<String>,
    named: &BTreeSet<String>,
    used: &HashMap<&str, u32>,
    limit: usize,
) -> Vec<&'a Definition> {
    let mut scored: Vec<(f64, &Definition)> = file
        .defs
        .iter()
        .map(|d| {
            let matches = terms::of_identifier(&d.name)
                .iter()
                .filter(|t| query.contains(*t))
                .count();
            let named_bonus = if named.contains(&d.name) { 5.0 } else { 0.0 };
            let uses = f64::from(used.get(d.name.as_str()).copied().unwrap_or(0));
            #[expect(clippy::cast_precision_loss, reason = "a handful of matches")]
            let score =
                d.kind.weight() * (1.0 + 3.0 * matches as f64 + named_bonus) + 0.2 * uses.ln_1p();
            (score, d)
        })
        .collect();
    scored.sort_by(|a, b| {
        b.0.partial_cmp(&a.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.1.line.cmp(&b.1.line))
    });
    let mut chosen: Vec<&Definition> = scored.into_iter().take(limit).map(|(_, d)| d).collect();
    chosen.sort_by_key(|d| d.line);
    chosen
}

fn block(file: &FileTags, defs: &[&Definition]) -> String {
    let mut out = format!("{}\n", file.path);
    for d in defs {
        let _ = writeln!(out, "  {}: {}", d.line, signature(&d.signature));
    }
    out
}

/// One line, whitespace collapsed, an opening brace dropped, cut at [`MAX_SIGNATURE`].
fn signature(raw: &str) -> String {
    let one: String = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    let one = one.trim_end_matches('{').trim_end();
    if one.chars().count() <= MAX_SIGNATURE {
        return one.to_owned();
    }
    let cut: String = one.chars().take(MAX_SIGNATURE - 1).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::repomap::{DefKind, build};

    fn def(name: &str, kind: DefKind, line: u32, sig: &str) -> Definition {
        Definition {
            name: name.to_owned(),
            kind,
            line,
            signature: sig.to_owned(),
        }
    }

    fn repo() -> Vec<FileTags> {
        vec![
            FileTags {
                path: "src/routing/mod.rs".into(),
                defs: vec![
                    def("Router", DefKind::Type, 10, "pub struct Router<S = ()> {"),
                    def(
                        "route",
                        DefKind::Method,
                        40,
                        "pub fn route(mut self, path: &str, method_router: MethodRouter<S>) -> Self {",
                    ),
                    def(
                        "nest",
                        DefKind::Method,
                        80,
                        "pub fn nest(self, path: &str, router: Router<S>) -> Self {",
                    ),
                    def(
                        "fallback",
                        DefKind::Method,
                        120,
                        "pub fn fallback<H, T>(self, handler: H) -> Self",
                    ),
                ],
                refs: vec![("MethodRouter".into(), 3), ("Handler".into(), 2)],
                terms: terms::count("router route nest fallback path"),
            },
            FileTags {
                path: "src/routing/method_routing.rs".into(),
                defs: vec![
                    def(
                        "MethodRouter",
                        DefKind::Type,
                        5,
                        "pub struct MethodRouter<S = ()> {",
                    ),
                    def(
                        "get",
                        DefKind::Function,
                        30,
                        "pub fn get<H, T, S>(handler: H) -> MethodRouter<S, Infallible>",
                    ),
                ],
                refs: vec![("Handler".into(), 4)],
                terms: terms::count("method router get post handler"),
            },
            FileTags {
                path: "src/handler/mod.rs".into(),
                defs: vec![def(
                    "Handler",
                    DefKind::Interface,
                    12,
                    "pub trait Handler<T, S>: Clone + Send + Sized + 'static {",
                )],
                refs: vec![],
                terms: terms::count("handler call"),
            },
            FileTags {
                path: "docs/guide.md".into(),
                defs: vec![],
                refs: vec![],
                terms: terms::count("how to nest routers in a guide"),
            },
        ]
    }

    #[test]
    fn the_map_for_a_task() {
        let map = build(&repo(), "Fix `nest` of routers with a fallback", 3_000);
        insta::assert_snapshot!("repomap_nest", map.text);
        assert_eq!(map.files[0], "src/routing/mod.rs");
    }

    #[test]
    fn a_tight_budget_drops_definitions_then_files() {
        for budget in [400, 200, 120, 90, 10, 0] {
            let map = build(&repo(), "Fix `nest` of routers with a fallback", budget);
            assert!(map.text.chars().count() <= budget, "{budget}: {}", map.text);
            insta::assert_snapshot!(format!("repomap_budget_{budget}"), map.text);
        }
    }

    #[test]
    fn signatures_are_one_short_line() {
        for (raw, expected) in [
            ("pub fn a() {", "pub fn a()"),
            ("def f(x,\n      y):", "def f(x, y):"),
            ("func (s *S) Get() error {", "func (s *S) Get() error"),
        ] {
            assert_eq!(signature(raw), expected);
        }
        let long = format!("fn x({})", "a: u8, ".repeat(40));
        assert_eq!(signature(&long).chars().count(), MAX_SIGNATURE);
    }
}
