//! [`TreeSitterMapper`]: the [`forge_ports::RepoMapper`] port. Walks a work tree with the
//! `ignore` crate (as the repository index does), parses Rust, Python, JavaScript,
//! TypeScript and Go files with tree-sitter and the grammars' own tags queries
//! (definitions) plus every identifier leaf (references), counts every text file's words,
//! and keeps the result per repository in one JSON file keyed by content digest, so a
//! second task on the same repository reads the files but parses only the changed ones.

mod cache;
mod mapper;
mod parse;
mod walk;

pub use mapper::TreeSitterMapper;
pub use parse::{Lang, tags_of};
