//! The repository map: the files of a work tree ranked by how likely a task is to need
//! them, rendered within a character budget with each file's most relevant definitions
//! (signatures, not bodies). It replaces the alphabetical tree listing in the instruction
//! file.
//!
//! The adapter parses the files (tree-sitter tags: definitions and referenced
//! identifiers) and counts their words with [`terms::count`]; this module only ranks and
//! renders:
//!
//! - [`terms`]: how text becomes search terms (identifier parts, lowercased, stemmed);
//! - [`lexical`]: BM25 over three fields (path, definition names, content words);
//! - [`graph`]: personalised PageRank over the definition/reference graph, biased toward
//!   the files the task's words match;
//! - [`rank`]: the two mixed with the structure of the path;
//! - [`render`]: the budgeted text;
//! - [`failure`]: a smaller map ranked by a validation failure, for the correction prompt.

pub mod failure;
pub mod graph;
pub mod lexical;
pub mod rank;
pub mod render;
pub mod terms;

use serde::{Deserialize, Serialize};

pub use rank::{Ranked, rank};
pub use render::{RepoMap, render};

/// The map's default size (characters), `[task] context_chars`.
pub const DEFAULT_CONTEXT_CHARS: usize = 3_000;

/// What a definition is, as the parser tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DefKind {
    Function,
    Method,
    Type,
    Interface,
    Constant,
    Module,
    Macro,
    Other,
}

impl DefKind {
    /// How much a definition of this kind tells the agent about a file (types and
    /// functions more than constants).
    fn weight(self) -> f64 {
        match self {
            Self::Type | Self::Interface => 1.0,
            Self::Function | Self::Method | Self::Macro => 0.9,
            Self::Module => 0.6,
            Self::Constant | Self::Other => 0.5,
        }
    }
}

/// One definition of a file: its name, kind, 1-based line and signature (the first line
/// of the definition, as written).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Definition {
    pub name: String,
    pub kind: DefKind,
    pub line: u32,
    pub signature: String,
}

/// One file as the ranking sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileTags {
    /// From the repository root, `/`-separated.
    pub path: String,
    pub defs: Vec<Definition>,
    /// Identifiers the file uses, with how often (as written, not lowercased).
    pub refs: Vec<(String, u32)>,
    /// Search terms of the file's text with their counts ([`terms::count`]).
    pub terms: Vec<(String, u32)>,
}

/// The map of `files` for `task`, at most `budget` characters.
pub fn build(files: &[FileTags], task: &str, budget: usize) -> RepoMap {
    let ranked = rank(files, task);
    render(files, &ranked, task, budget)
}
