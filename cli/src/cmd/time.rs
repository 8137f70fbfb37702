//! UTC timestamps for listings.

/// `2026-05-01 12:34:56` (UTC) for milliseconds since the Unix epoch.
pub fn utc(ms: u64) -> String {
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| t.format(&format).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00:00");
        assert_eq!(utc(1_709_251_199_000), "2024-02-29 23:59:59");
    }
}
