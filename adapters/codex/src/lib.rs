//! Codex provider: argv builder and exec --json decoder.
