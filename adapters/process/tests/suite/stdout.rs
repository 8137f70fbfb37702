//! Stdout as bounded lines: oversize, invalid UTF-8, CRLF, blank and truncated lines,
//! ordering, cancel-safety and the redacted log.

use forge_domain::Redactor;
use forge_ports::{RunningProcess, SpawnOptions, StdoutItem};

use super::support::{all_items, fake, quick_options, start, texts};

fn line(line_no: u64, text: &str) -> StdoutItem {
    StdoutItem::Line {
        line_no,
        text: text.into(),
    }
}

/// Peak resident memory of this test process, in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib * 1024
}

#[tokio::test]
async fn a_50_mb_line_becomes_an_oversize_item_and_the_stream_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let options = SpawnOptions {
        max_line_bytes: 1024 * 1024,
        stdout_log: Some(dir.path().join("stdout.log")),
        ..quick_options()
    };
    let peak_before = peak_rss();
    let mut child = start(fake(&[("FAKE_HUGE_LINE_MB", "50")]), options).await;
    let items = all_items(&mut child).await;
    let grown = peak_rss().saturating_sub(peak_before);
    assert_eq!(child.wait().await.unwrap().code, Some(0));

    let [
        StdoutItem::Oversize {
            line_no,
            size_bytes,
            prefix,
        },
        after,
    ] = items.as_slice()
    else {
        panic!("unexpected items: {items:?}");
    };
    assert_eq!((*line_no, *size_bytes), (1, 50 * 1024 * 1024));
    assert!(
        prefix.starts_with(r#"{"type":"huge","data":"xxx"#),
        "{prefix}"
    );
    assert_eq!(prefix.len(), 200);
    assert_eq!(after, &line(2, r#"{"type":"after_huge"}"#));
    assert!(
        grown < 32 * 1024 * 1024,
        "peak memory grew by {grown} bytes"
    );
    let log = std::fs::read_to_string(dir.path().join("stdout.log")).unwrap();
    assert!(
        log.len() < 1024,
        "the log keeps a marker, not 50 MB: {} bytes",
        log.len()
    );
    assert!(
        log.contains("[forge: line 1 of 52428800 bytes cut]"),
        "{log}"
    );
}

#[tokio::test]
async fn odd_lines_are_delivered_not_fatal() {
    let knobs = [
        ("FAKE_CRLF", "1"),
        ("FAKE_INVALID_UTF8", "1"),
        ("FAKE_TRUNCATED", "1"),
    ];
    let mut child = start(fake(&knobs), quick_options()).await;
    let items = all_items(&mut child).await;
    // Line 2 is the blank CRLF line: skipped, but counted.
    assert_eq!(
        items,
        [
            line(1, r#"{"type":"crlf"}"#),
            line(
                3,
                "{\"type\":\"text\",\"text\":\"bad \u{fffd}\u{fffd} bytes\"}"
            ),
            line(4, r#"{"type":"text","text":"cut"#),
        ]
    );
    assert_eq!(child.wait().await.unwrap().code, Some(0));
}

#[tokio::test]
async fn a_replayed_transcript_arrives_whole_and_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::write(&path, "{\"a\":1}\n\n{\"b\":2}\r\n{\"c\":3}").unwrap();
    let mut child = start(
        fake(&[
            ("FAKE_REPLAY", path.to_str().unwrap()),
            ("FAKE_DELAY_MS", "5"),
        ]),
        quick_options(),
    )
    .await;
    let items = all_items(&mut child).await;
    assert_eq!(
        items,
        [
            line(1, r#"{"a":1}"#),
            line(3, r#"{"b":2}"#),
            line(4, r#"{"c":3}"#)
        ]
    );
}

#[tokio::test]
async fn next_stdout_is_cancel_safe_in_select() {
    const EVENTS: usize = 5000;
    let mut child = start(fake(&[("FAKE_EVENTS", "5000")]), quick_options()).await;
    let mut got = Vec::new();
    let mut cancelled = 0;
    loop {
        // `yield_now` is ready on its second poll: whenever a read is still waiting by
        // then, the select drops it half-way.
        tokio::select! {
            biased;
            () = tokio::task::yield_now() => cancelled += 1,
            item = child.next_stdout() => match item.unwrap() {
                Some(item) => got.push(item),
                None => break,
            },
        }
    }
    let want: Vec<String> = (0..EVENTS)
        .map(|i| format!(r#"{{"type":"text","i":{i}}}"#))
        .collect();
    assert_eq!(texts(&got), want);
    assert!(cancelled > 0, "the select never cancelled a read");
}

#[tokio::test]
async fn the_stdout_log_is_a_redacted_copy() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("logs/stdout.log");
    let options = SpawnOptions {
        stdout_log: Some(log.clone()),
        redactor: Redactor::new().with_secrets(["hunter2-secret"]),
        ..quick_options()
    };
    let knobs = [("FAKE_SECRET", "hunter2-secret"), ("FAKE_CRLF", "1")];
    let mut child = start(fake(&knobs), options).await;
    let items = all_items(&mut child).await;
    child.wait().await.unwrap();
    // The consumer gets the raw line (decoders need it); only the artifacts are redacted.
    assert!(texts(&items).iter().any(|t| t.contains("hunter2-secret")));
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "{\"type\":\"text\",\"text\":\"the secret is [REDACTED]\"}\n{\"type\":\"crlf\"}\n\n"
    );
}

#[tokio::test]
async fn exit_codes_and_crashes_are_reported() {
    let mut child = start(fake(&[("FAKE_EXIT", "3")]), quick_options()).await;
    assert!(all_items(&mut child).await.is_empty());
    let exit = child.wait().await.unwrap();
    assert_eq!((exit.code, exit.signal), (Some(3), None));

    let mut child = start(
        fake(&[("FAKE_EVENTS", "5"), ("FAKE_CRASH_AFTER", "2")]),
        quick_options(),
    )
    .await;
    assert_eq!(all_items(&mut child).await.len(), 2);
    let exit = child.wait().await.unwrap();
    assert_eq!((exit.code, exit.signal), (None, Some(libc::SIGKILL)));
}
