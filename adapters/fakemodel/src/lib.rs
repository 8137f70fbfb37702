//! Scripted fake model server speaking Anthropic, OpenAI Responses and Gemini wire formats.
//!
//! Point a real agent CLI at it (claude via `ANTHROPIC_BASE_URL`, codex via a custom
//! `model_providers.<id>.base_url = "<base_url>/v1"`, gemini via `GOOGLE_GEMINI_BASE_URL`) and
//! it plays a [`Scenario`]: text answers, tool calls the CLI really executes in its workspace,
//! and failures (HTTP 429/500, cut streams, slow chunks). Users run it as
//! `forge-code-agent fake-model serve --scenario FILE`; the end-to-end suite runs the pinned
//! CLIs against it.
//!
//! ```no_run
//! # async fn demo() -> Result<(), forge_adapter_fakemodel::FakeModelError> {
//! use forge_adapter_fakemodel::{FakeModelOptions, FakeModelServer, Scenario};
//! let server = FakeModelServer::start(Scenario::builtin("write_file")?, FakeModelOptions::default()).await?;
//! println!("ANTHROPIC_BASE_URL={}", server.base_url());
//! // … run the CLI …
//! let requests = server.request_log();
//! server.shutdown().await?;
//! # Ok(()) }
//! ```
//!
//! # Scenario format
//!
//! TOML (or JSON with the same keys):
//!
//! ```toml
//! name = "write_file"
//! prompts = ["Create hello.txt."]     # optional, for harnesses
//! [[turns]]
//! text = "I'll create the file."      # optional text before tool calls
//! tool_calls = [{ action = "write_file", path = "hello.txt", content = "hi\n" }]
//! [[turns]]
//! text = "Created hello.txt."
//! chunks = 3                          # split the text into N deltas
//! chunk_delay_ms = 0                  # pause between streamed events
//! fail = { status = 429, times = 1 }  # or times = "always"
//! cut_after_events = 2                # drop the connection mid-stream once
//! ```
//!
//! Actions: `write_file {path, content}`, `read_file {path}`, `shell {command, description?}`,
//! mapped per request onto the advertised tools ([`tools`]): Claude `Write`/`Read`/`Bash`
//! (absolute paths joined to the `Primary working directory:` of the request), Codex
//! `apply_patch` (custom tool, `*** Add File:` patch) and `exec_command {cmd}`, Gemini
//! `write_file`/`read_file`/`run_shell_command` with the path field its schema names. Missing
//! tools fall back to the shell tool. `scenarios/README.md` has the full reference.
//!
//! # Turns, conversations and side calls
//!
//! A turn is one model request the scenario answers; a failed or cut attempt does not consume
//! it. Counters are per conversation — Claude's `x-claude-code-session-id` header, Codex's
//! `thread-id` header (both kept by resume), Gemini's workspace directory + first prompt (the
//! CLI sends no session header) — with a global fallback, so parallel runs against one server
//! do not steal each other's turns. An exhausted script answers
//! `(fake model: scenario finished)` with `end_turn`.
//!
//! What the pinned CLIs were observed to send besides turns (logged against this server):
//!
//! * claude 2.1.330: with `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`, only
//!   `POST /v1/messages?beta=true` turns (12 tools, `max_tokens` 128000, `stream: true`).
//!   Without it, also a `HEAD /api/hello` connectivity probe before each run (answered 200).
//!   No title/summary call was seen in `-p` mode; Messages requests without tools or with
//!   `max_tokens <= 1024`, and `/v1/messages/count_tokens`, are still treated as side calls.
//!   `--resume` keeps the session header, so the turn counter continues.
//! * codex 0.169.0: only `POST /v1/responses` turns (10 tools incl. the custom `apply_patch`);
//!   requests without tools would be side calls.
//! * gemini 0.61.0: before each prompt a non-streamed
//!   `gemini-3.5-flash-lite:generateContent` routing classifier with a `responseJsonSchema`
//!   `{complexity_reasoning, complexity_score}`; answered `complexity_score: 10`, after which
//!   turns go to `gemini-3.8-flash:streamGenerateContent?alt=sse`. Every non-streamed
//!   `generateContent` is a side call answered from its schema ([`inspect::fill_schema`]).
//!
//! # Wire formats
//!
//! [`anthropic`], [`openai`] and [`gemini`] render a [`reply::ReplyPlan`] into the events each
//! CLI needs (see `docs/wire-formats.md`); [`sse::body`] streams them with delays and cuts. A
//! cut sends the first N events, pauses so they are flushed, then fails the body and closes
//! the connection with a TCP reset (zero linger, no FIN): every CLI retries a reset, while
//! gemini 0.61.0 treats a plain close after partial data as fatal ("terminated").

pub mod anthropic;
mod book;
mod builtin;
mod conn;
mod error;
pub mod gemini;
mod handler;
pub mod inspect;
mod log;
pub mod mcp;
pub mod openai;
pub mod reply;
mod scenario;
mod server;
pub mod sse;
pub mod tools;

pub use book::{Decision, TurnBook};
pub use error::FakeModelError;
pub use log::{LoggedRequest, ServedUsage, credential_digest};
pub use scenario::{AlwaysWord, FailKnob, Route, Scenario, Times, ToolAction, Turn};
pub use server::{FakeModelOptions, FakeModelServer, RunningServer, serve_forever};
