//! Tool lists recorded from the real CLIs' requests (descriptions stripped).

use forge_adapter_fakemodel::tools::Vendor;
use serde_json::Value;

/// A request body holding the tools the pinned CLI version advertised.
pub fn tools_request(vendor: Vendor) -> Value {
    let text = match vendor {
        Vendor::Anthropic => include_str!("../fixtures/tools-claude-2.1.330.json"),
        Vendor::OpenAi => include_str!("../fixtures/tools-codex-0.169.0.json"),
        Vendor::Gemini => include_str!("../fixtures/tools-gemini-0.61.0.json"),
    };
    serde_json::from_str(text).unwrap()
}
