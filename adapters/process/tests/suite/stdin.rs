//! Stdin: /dev/null by default, or the payload followed by end-of-file.

use super::support::{all_items, fake, quick_options, start, texts};

async fn stdin_report(payload: Option<Vec<u8>>) -> serde_json::Value {
    let mut invocation = fake(&[("FAKE_READ_STDIN", "1")]);
    invocation.stdin = payload;
    let mut child = start(invocation, quick_options()).await;
    let items = tokio::time::timeout(std::time::Duration::from_secs(10), all_items(&mut child))
        .await
        .expect("the child waited on an open stdin");
    serde_json::from_str(&texts(&items)[0]).unwrap()
}

#[tokio::test]
async fn the_payload_is_written_then_stdin_is_closed() {
    let report = stdin_report(Some(b"hello agent".to_vec())).await;
    assert_eq!(report["bytes"], 11);
    assert_eq!(report["text"], "hello agent");

    // Bigger than a pipe buffer: written concurrently with the child's reading.
    let big = vec![b'z'; 1024 * 1024];
    assert_eq!(stdin_report(Some(big)).await["bytes"], 1024 * 1024);
}

#[tokio::test]
async fn without_a_payload_stdin_is_dev_null() {
    let report = stdin_report(None).await;
    assert_eq!(report["bytes"], 0);
}
