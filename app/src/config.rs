//! Configuration (filled in by the CLI issue).
