//! [`UuidV7Ids`]: run ids that sort by creation time.

use forge_domain::RunId;
use forge_ports::IdGenerator;

/// UUID v7 run ids: the first 48 bits are the Unix time in milliseconds, and the `uuid`
/// crate keeps ids from one process strictly increasing even within a millisecond, so
/// `ls .forgecode/runs` lists runs in the order they started.
#[derive(Debug, Clone, Copy, Default)]
pub struct UuidV7Ids;

impl UuidV7Ids {
    pub fn new() -> Self {
        Self
    }
}

impl IdGenerator for UuidV7Ids {
    #[expect(
        clippy::expect_used,
        reason = "a hyphenated uuid is 36 characters of [0-9a-f-], always a valid run id"
    )]
    fn run_id(&self) -> RunId {
        let id = uuid::Uuid::now_v7().hyphenated().to_string();
        RunId::new(id).expect("uuid is a valid run id")
    }
}
