//! `POST /api/chat`: the seed's wire, for clients written against it. Body {message,
//! projectPath, agent?, provider?}; SSE `data:` lines `{"type":"token","content":…}` as
//! text arrives, `{"type":"error","content":…}`, `{"type":"done","result":…}`, then
//! `data: [DONE]`. The client closing the request cancels the run (the seed's abort).

use std::convert::Infallible;

use axum::Json;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use forge_domain::AgentEvent;
use futures::Stream;
use serde::Deserialize;
use serde_json::{Value, json};

use super::events::KEEP_ALIVE;
use crate::error::ApiError;
use crate::live::{Item, Subscription};
use crate::start::{RunBody, start};
use crate::state::Shared;

/// This area's routes (`routes/mod.rs` merges every area's).
pub(super) fn routes() -> axum::Router<Shared> {
    use axum::routing::post;
    axum::Router::new().route("/api/chat", post(chat))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatBody {
    pub message: String,
    pub project_path: String,
    #[serde(default)]
    pub agent: Option<String>,
    #[serde(default)]
    pub provider: Option<String>,
}

pub async fn chat(
    State(state): State<Shared>,
    body: Result<Json<ChatBody>, axum::extract::rejection::JsonRejection>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let Json(body) = body.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let run = start(
        &state,
        RunBody {
            provider: body.provider,
            prompt: body.message,
            workdir: body.project_path,
            agent: body.agent,
            cancel_on_disconnect: true,
            ..RunBody::default()
        },
    )?;
    let wire = Wire {
        sub: Some(run.subscribe(0)),
        streamed_text: false,
        pending: Vec::new(),
    };
    let stream = futures::stream::unfold(wire, |mut wire| async move {
        let data = wire.next().await?;
        Some((Ok(Event::default().data(data)), wire))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}

/// Turns a run's items into the seed's messages.
struct Wire {
    sub: Option<Subscription>,
    /// Text came as deltas: a whole block repeating it is not sent again.
    streamed_text: bool,
    pending: Vec<String>,
}

impl Wire {
    async fn next(&mut self) -> Option<String> {
        loop {
            if !self.pending.is_empty() {
                return Some(self.pending.remove(0));
            }
            let sub = self.sub.as_mut()?;
            match sub.next().await {
                Some(Item::Event(frame)) => {
                    if let Some(message) = self.message(&frame.event) {
                        return Some(message.to_string());
                    }
                }
                Some(Item::Result(result)) => {
                    self.pending.push("[DONE]".into());
                    return Some(json!({"type": "done", "result": &*result}).to_string());
                }
                None => self.sub = None,
            }
        }
    }

    fn message(&mut self, event: &AgentEvent) -> Option<Value> {
        match event {
            AgentEvent::Text { text, delta: true } => {
                self.streamed_text = true;
                Some(json!({"type": "token", "content": text}))
            }
            AgentEvent::Text { text, delta: false } => {
                if self.streamed_text {
                    // The block the deltas built: already sent piece by piece.
                    self.streamed_text = false;
                    None
                } else {
                    Some(json!({"type": "token", "content": text}))
                }
            }
            AgentEvent::Error { message, .. } => Some(json!({"type": "error", "content": message})),
            _ => None,
        }
    }
}
