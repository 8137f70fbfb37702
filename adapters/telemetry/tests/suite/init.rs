//! `init_tracing` reports problems instead of panicking. The only test in this binary that
//! touches the global subscriber.

use forge_adapter_telemetry::{InitTracingError, init_tracing};

#[test]
fn bad_filters_and_second_installs_are_errors() {
    assert!(matches!(
        init_tracing(false, "forge=loud"),
        Err(InitTracingError::BadFilter { .. })
    ));
    init_tracing(true, "warn").unwrap();
    assert!(matches!(
        init_tracing(false, "info"),
        Err(InitTracingError::AlreadySet)
    ));
}
