//! One file's tags. Definitions come from each grammar's own `tags.scm` query (the one
//! GitHub's code navigation uses): the `@name` of every `@definition.*` match, with the
//! first lines of the definition up to its body as the signature. References are every
//! identifier leaf that is not a definition's name: richer than the queries' call sites,
//! so a type used in a signature links its file too.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use forge_domain::task::repomap::{DefKind, Definition, FileTags, terms};
use tree_sitter::{Language, Node, Parser, Query, QueryCursor, StreamingIterator};

/// A signature spans at most this many lines (a long parameter list).
const SIGNATURE_LINES: usize = 4;

/// The languages parsed for definitions; other files are read for their words only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Text,
}

impl Lang {
    pub fn of(path: &str) -> Self {
        let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
        match ext {
            "rs" => Self::Rust,
            "py" | "pyi" => Self::Python,
            "js" | "jsx" | "mjs" | "cjs" => Self::JavaScript,
            "ts" | "mts" | "cts" => Self::TypeScript,
            "tsx" => Self::Tsx,
            "go" => Self::Go,
            _ => Self::Text,
        }
    }

    /// Part of the cache key: a grammar or query change makes old tags stale.
    pub(crate) fn tag(self) -> &'static str {
        match self {
            Self::Rust => "rust-0.24",
            Self::Python => "python-0.25",
            Self::JavaScript => "javascript-0.25",
            Self::TypeScript => "typescript-0.23",
            Self::Tsx => "tsx-0.23",
            Self::Go => "go-0.25",
            Self::Text => "text",
        }
    }
}

struct Grammar {
    language: Language,
    query: Query,
}

fn grammar(lang: Lang) -> Option<&'static Grammar> {
    static RUST: OnceLock<Option<Grammar>> = OnceLock::new();
    static PYTHON: OnceLock<Option<Grammar>> = OnceLock::new();
    static JS: OnceLock<Option<Grammar>> = OnceLock::new();
    static TS: OnceLock<Option<Grammar>> = OnceLock::new();
    static TSX: OnceLock<Option<Grammar>> = OnceLock::new();
    static GO: OnceLock<Option<Grammar>> = OnceLock::new();
    let (cell, language, queries): (_, Language, &[&str]) = match lang {
        Lang::Rust => (
            &RUST,
            tree_sitter_rust::LANGUAGE.into(),
            &[tree_sitter_rust::TAGS_QUERY],
        ),
        Lang::Python => (
            &PYTHON,
            tree_sitter_python::LANGUAGE.into(),
            &[tree_sitter_python::TAGS_QUERY],
        ),
        Lang::JavaScript => (
            &JS,
            tree_sitter_javascript::LANGUAGE.into(),
            &[tree_sitter_javascript::TAGS_QUERY],
        ),
        Lang::TypeScript => (
            &TS,
            tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            &[
                tree_sitter_javascript::TAGS_QUERY,
                tree_sitter_typescript::TAGS_QUERY,
            ],
        ),
        Lang::Tsx => (
            &TSX,
            tree_sitter_typescript::LANGUAGE_TSX.into(),
            &[
                tree_sitter_javascript::TAGS_QUERY,
                tree_sitter_typescript::TAGS_QUERY,
            ],
        ),
        Lang::Go => (
            &GO,
            tree_sitter_go::LANGUAGE.into(),
            &[tree_sitter_go::TAGS_QUERY],
        ),
        Lang::Text => return None,
    };
    cell.get_or_init(|| {
        // TypeScript's own tags query holds only what it adds to JavaScript's; the
        // JavaScript one applies to its grammar too. A query that does not compile
        // (a grammar renamed a node) falls back to the language's own.
        let joined = queries.join("\n");
        let query = Query::new(&language, &joined)
            .or_else(|_| Query::new(&language, queries[queries.len() - 1]))
            .ok()?;
        Some(Grammar { language, query })
    })
    .as_ref()
}

/// The tags of the file at `path` with `text`.
pub fn tags_of(path: &str, text: &str) -> FileTags {
    let mut tags = FileTags {
        path: path.to_owned(),
        terms: terms::count(text),
        ..FileTags::default()
    };
    if let Some(g) = grammar(Lang::of(path)) {
        let (defs, refs) = code_tags(g, text);
        tags.defs = defs;
        tags.refs = refs;
    }
    tags
}

type Refs = Vec<(String, u32)>;

fn code_tags(g: &Grammar, text: &str) -> (Vec<Definition>, Refs) {
    let mut parser = Parser::new();
    if parser.set_language(&g.language).is_err() {
        return (Vec::new(), Vec::new());
    }
    let Some(tree) = parser.parse(text, None) else {
        return (Vec::new(), Vec::new());
    };
    let src = text.as_bytes();
    let names = g.query.capture_names();
    let mut defs = Vec::new();
    let mut def_name_nodes: BTreeSet<usize> = BTreeSet::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(&g.query, tree.root_node(), src);
    while let Some(m) = matches.next() {
        let mut name = None;
        let mut def = None;
        for c in m.captures {
            let capture = names[c.index as usize];
            if capture == "name" {
                name = Some(c.node);
            } else if let Some(kind) = capture.strip_prefix("definition.") {
                def = Some((c.node, kind));
            }
        }
        let (Some(name), Some((node, kind))) = (name, def) else {
            continue;
        };
        let Ok(ident) = name.utf8_text(src) else {
            continue;
        };
        if !def_name_nodes.insert(name.id()) {
            continue;
        }
        defs.push(Definition {
            name: ident.to_owned(),
            kind: def_kind(kind),
            line: u32::try_from(node.start_position().row + 1).unwrap_or(u32::MAX),
            signature: signature(text, node),
        });
    }
    defs.sort_by_key(|d| d.line);
    let mut refs: BTreeMap<String, u32> = BTreeMap::new();
    identifiers(tree.root_node(), src, &def_name_nodes, &mut refs);
    (defs, refs.into_iter().collect())
}

fn def_kind(capture: &str) -> DefKind {
    match capture {
        "function" => DefKind::Function,
        "method" => DefKind::Method,
        "class" | "type" => DefKind::Type,
        "interface" => DefKind::Interface,
        "constant" => DefKind::Constant,
        "module" => DefKind::Module,
        "macro" => DefKind::Macro,
        _ => DefKind::Other,
    }
}

/// The definition's first lines up to its body (`{`, or a line ending in `:` for Python),
/// at most [`SIGNATURE_LINES`]; decorators and attributes before it are not part of it.
fn signature(text: &str, node: Node<'_>) -> String {
    let start = node.start_byte().min(text.len());
    let end = node.end_byte().clamp(start, text.len());
    let mut out = String::new();
    for line in text
        .get(start..end)
        .unwrap_or_default()
        .lines()
        .take(SIGNATURE_LINES)
    {
        if let Some(i) = line.find('{') {
            out.push_str(line[..i].trim());
            break;
        }
        out.push_str(line.trim());
        out.push(' ');
        if line.trim_end().ends_with(':') || line.trim_end().ends_with(';') {
            break;
        }
    }
    out.trim().to_owned()
}

/// Every identifier leaf (`identifier`, `type_identifier`, `field_identifier`, …) but the
/// definitions' own names, counted.
fn identifiers(
    root: Node<'_>,
    src: &[u8],
    skip: &BTreeSet<usize>,
    out: &mut BTreeMap<String, u32>,
) {
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if node.child_count() == 0 {
            if node.kind().ends_with("identifier")
                && !skip.contains(&node.id())
                && let Ok(t) = node.utf8_text(src)
                && t.len() > 1
            {
                *out.entry(t.to_owned()).or_default() += 1;
            }
        } else if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defs(path: &str, text: &str) -> Vec<String> {
        tags_of(path, text)
            .defs
            .iter()
            .map(|d| format!("{}:{:?}:{}: {}", d.line, d.kind, d.name, d.signature))
            .collect()
    }

    #[test]
    fn definitions_of_each_language() {
        let cases: &[(&str, &str)] = &[
            (
                "src/lib.rs",
                "/// Doc\n#[derive(Debug)]\npub struct Router<S> {\n    inner: S,\n}\n\nimpl Router {\n    pub fn route(\n        self,\n        path: &str,\n    ) -> Self {\n        self\n    }\n}\ntrait Handler {}\nmacro_rules! m { () => {} }\n",
            ),
            (
                "app/views.py",
                "import os\n\nclass View(Base):\n    def dispatch(self, request,\n                 **kw):\n        return handle(request)\n\ndef helper():\n    pass\n",
            ),
            (
                "web/app.js",
                "export function mount(el) { return el }\nclass Store { get(key) { return key } }\nconst f = () => 1;\n",
            ),
            (
                "web/types.ts",
                "export interface Props { name: string }\nexport function render(p: Props): string { return p.name }\ntype Id = string;\n",
            ),
            (
                "cmd/root.go",
                "package cmd\n\ntype Command struct {\n\tUse string\n}\n\nfunc (c *Command) Execute() error {\n\treturn nil\n}\n\nfunc New() *Command { return nil }\n",
            ),
        ];
        let got: Vec<String> = cases
            .iter()
            .map(|(p, t)| format!("{p}\n  {}", defs(p, t).join("\n  ")))
            .collect();
        insta::assert_snapshot!("definitions", got.join("\n"));
    }

    #[test]
    fn references_leave_out_the_names_defined() {
        let t = tags_of(
            "a.rs",
            "use crate::body::Body;\nfn handle(b: Body) -> Body { helper(b) }\n",
        );
        let refs: Vec<&str> = t.refs.iter().map(|(r, _)| r.as_str()).collect();
        assert!(
            refs.contains(&"Body") && refs.contains(&"helper"),
            "{refs:?}"
        );
        assert!(!refs.contains(&"handle"), "{refs:?}");
        assert_eq!(
            t.refs.iter().find(|(r, _)| r == "Body").map(|r| r.1),
            Some(3)
        );
    }

    #[test]
    fn other_files_have_words_only() {
        for path in ["README.md", "Makefile", "config.toml", "x.rs.orig"] {
            let t = tags_of(path, "fn route() {}\nrouting guide");
            assert!(t.defs.is_empty() && t.refs.is_empty(), "{path}");
            assert!(t.terms.iter().any(|(w, _)| w == "rout"), "{path}");
        }
        assert_eq!(Lang::of("a.tsx"), Lang::Tsx);
        assert_eq!(Lang::of("a.pyi"), Lang::Python);
        assert_eq!(Lang::of("rs"), Lang::Text);
    }
}
