//! Run ids are unique and sort in creation order; the clock reads sensibly.

use std::collections::HashSet;

use forge_adapter_telemetry::{SystemClock, UuidV7Ids};
use forge_ports::{Clock, IdGenerator};

#[test]
fn ids_are_unique_path_safe_and_sort_in_creation_order() {
    let ids = UuidV7Ids::new();
    let generated: Vec<String> = (0..10_000).map(|_| ids.run_id().to_string()).collect();
    let unique: HashSet<&String> = generated.iter().collect();
    assert_eq!(unique.len(), generated.len());
    let mut sorted = generated.clone();
    sorted.sort();
    assert_eq!(
        sorted, generated,
        "ids must sort in the order they were made"
    );
    assert!(generated.iter().all(|id| id.len() == 36));
    assert_eq!(&generated[0][14..15], "7", "uuid version nibble");
}

#[test]
fn ids_embed_the_wall_clock() {
    let clock = SystemClock::new();
    let before = clock.now_ms();
    let id = UuidV7Ids::new().run_id();
    let after = clock.now_ms();
    let millis = u64::from_str_radix(&id.as_str().replace('-', "")[..12], 16).unwrap();
    assert!(
        (before..=after).contains(&millis),
        "{before} <= {millis} <= {after}"
    );
}
