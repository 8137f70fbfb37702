//! One integration-test binary for the notifiers.

mod suite;
