//! Claude Code provider: argv builder and stream-json decoder.
