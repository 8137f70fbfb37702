//! Use cases composed from ports: CodeAgent run/stream/cancel, provider registry, configuration.
