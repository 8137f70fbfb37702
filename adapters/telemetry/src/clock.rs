//! [`SystemClock`]: the real clocks behind the [`Clock`] port.

use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use forge_ports::Clock;

/// The origin of [`Clock::monotonic_ms`]: shared by every `SystemClock` in the process so
/// two clocks give comparable readings.
static PROCESS_START: OnceLock<Instant> = OnceLock::new();

#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    pub fn new() -> Self {
        Self {
            origin: *PROCESS_START.get_or_init(Instant::now),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        // A clock set before 1970 reads as 0 rather than failing: timestamps here are for
        // people and ordering, never for security decisions.
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| saturating_ms(d.as_millis()))
            .unwrap_or(0)
    }

    fn monotonic_ms(&self) -> u64 {
        saturating_ms(self.origin.elapsed().as_millis())
    }
}

fn saturating_ms(ms: u128) -> u64 {
    u64::try_from(ms).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wall_clock_is_after_2024_and_monotonic_never_goes_back() {
        let clock = SystemClock::new();
        assert!(clock.now_ms() > 1_704_067_200_000);
        let a = clock.monotonic_ms();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let b = SystemClock::default().monotonic_ms();
        assert!(b >= a + 5, "{a} then {b}");
    }
}
