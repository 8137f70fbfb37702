//! Times for people: local date and time in human output (machine output keeps its own
//! formats). The local offset comes from the environment (`TZ`, `/etc/localtime`) and is read
//! once, at start-up, while the process has one thread: reading it later is refused by the
//! `time` crate on Unix (another thread could be changing the environment).

use std::sync::OnceLock;

use time::{OffsetDateTime, UtcOffset};

static LOCAL_OFFSET: OnceLock<UtcOffset> = OnceLock::new();

/// Reads the local offset; call first thing in `main`. When it cannot be read (already
/// multi-threaded, no time zone data), times are shown in UTC and labelled so.
pub fn detect_local_offset() {
    let offset = UtcOffset::current_local_offset().unwrap_or(UtcOffset::UTC);
    let _ = LOCAL_OFFSET.set(offset);
}

fn local_offset() -> UtcOffset {
    LOCAL_OFFSET.get().copied().unwrap_or(UtcOffset::UTC)
}

/// `2026-05-01 14:34:56` in local time for milliseconds since the Unix epoch.
pub fn local(ms: u64) -> String {
    at_offset(ms, local_offset())
}

/// `UTC+02:00` (or `UTC`): which local time [`local`] shows, for a column header.
pub fn local_zone() -> String {
    zone(local_offset())
}

fn zone(offset: UtcOffset) -> String {
    if offset.is_utc() {
        return "UTC".to_owned();
    }
    let format = time::macros::format_description!("[offset_hour sign:mandatory]:[offset_minute]");
    format!("UTC{}", offset.format(&format).unwrap_or_default())
}

/// `ms` since the epoch as `YYYY-MM-DD hh:mm:ss` at `offset`; the raw number when out of range.
fn at_offset(ms: u64, offset: UtcOffset) -> String {
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .map(|t| t.to_offset(offset))
        .and_then(|t| t.format(&format).ok())
        .unwrap_or_else(|| ms.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offset(hours: i8, minutes: i8) -> UtcOffset {
        UtcOffset::from_hms(hours, minutes, 0).unwrap()
    }

    #[test]
    fn formats_at_an_offset() {
        let cases = [
            (0, UtcOffset::UTC, "1970-01-01 00:00:00"),
            (1_709_251_199_000, UtcOffset::UTC, "2024-02-29 23:59:59"),
            // Across midnight and a leap day, both ways.
            (1_709_251_199_000, offset(2, 0), "2024-03-01 01:59:59"),
            (1_709_251_200_000, offset(-5, -30), "2024-02-29 18:30:00"),
            // The audit log's example (`1795632707596 task_started`).
            (1_795_632_707_596, offset(1, 0), "2026-11-25 19:51:47"),
        ];
        for (ms, offset, want) in cases {
            assert_eq!(at_offset(ms, offset), want, "{ms} at {offset}");
        }
    }

    #[test]
    fn names_the_zone() {
        assert_eq!(zone(UtcOffset::UTC), "UTC");
        assert_eq!(zone(offset(2, 0)), "UTC+02:00");
        assert_eq!(zone(offset(-9, -30)), "UTC-09:30");
    }
}
