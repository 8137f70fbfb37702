//! The only crate that spawns processes: process groups, bounded line reading, the kill ladder.
