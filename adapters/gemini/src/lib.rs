//! Gemini CLI provider: argv builder and stream-json decoder.
