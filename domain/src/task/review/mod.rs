//! The heuristic review: pure rules over the changed files. Each rule has a stable id and a
//! severity; the findings never contain the secret they found.

pub mod input;

pub use input::{AddedLine, ChangedFile};
