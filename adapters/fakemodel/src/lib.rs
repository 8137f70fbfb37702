//! Scripted fake model server speaking Anthropic, OpenAI Responses and Gemini wire formats.
