//! One integration-test binary for the store.

mod suite;
