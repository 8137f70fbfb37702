//! Scripted fake model server speaking Anthropic, OpenAI Responses and Gemini wire formats.
//!
//! (Full documentation below is completed in a later step.)

pub mod anthropic;
mod book;
mod builtin;
mod error;
pub mod gemini;
mod handler;
pub mod inspect;
mod log;
pub mod openai;
pub mod reply;
mod scenario;
mod server;
pub mod sse;
pub mod tools;

pub use book::{Decision, TurnBook};
pub use error::FakeModelError;
pub use log::LoggedRequest;
pub use scenario::{AlwaysWord, FailKnob, Scenario, Times, ToolAction, Turn};
pub use server::{FakeModelOptions, FakeModelServer, RunningServer, serve_forever};
