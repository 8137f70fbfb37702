//! Server-sent-event framing and the streaming body (with delays and cuts).

use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use serde_json::Value;

/// Pause between the last event sent and the cut.
const CUT_FLUSH_PAUSE: Duration = Duration::from_millis(100);

/// `event: <name>\ndata: <json>\n\n` (Anthropic and OpenAI style).
pub fn named_event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// `data: <json>\r\n\r\n` (Gemini style: no event names, CRLF separators).
pub fn data_event(data: &Value) -> String {
    format!("data: {data}\r\n\r\n")
}

/// How to deliver a list of events.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Delivery {
    /// Pause before every event but the first.
    pub delay: Duration,
    /// Send this many events, then fail the body so the connection drops mid-stream.
    pub cut_after: Option<usize>,
}

/// A streaming response body playing `events` according to `delivery`.
///
/// A cut ends the stream with an I/O error: hyper then aborts the connection without the
/// terminating chunk, which clients see as a reset (a clean close would look like a short
/// but complete answer to some of them).
pub fn body(events: Vec<String>, delivery: Delivery) -> Body {
    let total = events.len();
    let limit = delivery.cut_after.map_or(total, |n| n.min(total));
    let cut = delivery.cut_after.is_some();
    let state = (events.into_iter().take(limit), 0usize, false);
    let stream = futures::stream::unfold(state, move |(mut events, sent, done)| async move {
        if done {
            return None;
        }
        match events.next() {
            Some(event) => {
                if sent > 0 && !delivery.delay.is_zero() {
                    tokio::time::sleep(delivery.delay).await;
                }
                let item: Result<Bytes, std::io::Error> = Ok(Bytes::from(event));
                Some((item, (events, sent + 1, false)))
            }
            None if cut => {
                // Give hyper a moment to flush what was sent, so the client really sees a
                // partial stream before the drop (an immediate error discards the buffer).
                tokio::time::sleep(CUT_FLUSH_PAUSE).await;
                let err = std::io::Error::other("fake model: stream cut");
                Some((Err(err), (events, sent, true)))
            }
            None => None,
        }
    });
    Body::from_stream(stream)
}
