//! The tool-calling engine on the use-case side: the registered tools of an agent, and the
//! merge of the CLI's report of each call with forge's record of running it.

use std::future::Future;
use std::sync::Arc;

use async_trait::async_trait;
use forge_domain::{
    ExecutionResult, ForgeError, HostedTool, ToolCall, ToolExecution, ToolKind, ToolName,
    hosted_tool::TOOL_SERVER_NAME,
};
use forge_ports::{RegisteredTool, ToolContext, ToolHandler};
use serde_json::Value;

/// An async function as a [`ToolHandler`].
pub struct FnHandler<F>(pub F);

#[async_trait]
impl<F, Fut> ToolHandler for FnHandler<F>
where
    F: Fn(Value, ToolContext) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Value, ForgeError>> + Send,
{
    async fn call(&self, args: Value, ctx: ToolContext) -> Result<Value, ForgeError> {
        (self.0)(args, ctx).await
    }
}

/// Registered tools, names unique.
#[derive(Clone, Default)]
pub struct ToolSet {
    tools: Vec<RegisteredTool>,
}

impl ToolSet {
    /// Adds a tool.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when a tool of that name is registered already.
    pub fn add(
        &mut self,
        tool: HostedTool,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<(), ForgeError> {
        if self.tools.iter().any(|t| t.tool.name == tool.name) {
            return Err(ForgeError::InvalidRequest {
                reason: format!("tool {} is registered twice", tool.name),
            });
        }
        self.tools.push(RegisteredTool { tool, handler });
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    pub fn shared(&self) -> Arc<[RegisteredTool]> {
        Arc::from(self.tools.clone())
    }
}

/// The forge tool a CLI's call names, whatever the CLI's spelling: Claude `mcp__forge__x`,
/// Gemini `mcp_forge_x`, Codex an `mcp_tool_call` with `server: forge, tool: x`.
pub fn forge_tool_of(call: &ToolCall) -> Option<ToolName> {
    if let Some(name) = ToolName::from_cli_spelling(&call.name) {
        return Some(name);
    }
    if call.kind != ToolKind::Mcp {
        return None;
    }
    let input = call.input.to_value();
    if input.get("server").and_then(Value::as_str) != Some(TOOL_SERVER_NAME) {
        return None;
    }
    ToolName::new(input.get("tool").and_then(Value::as_str)?).ok()
}

/// Folds forge's record into the result: each forge tool call the CLI reported becomes one
/// canonical call (kind `mcp`, canonical name, duration, and forge's output and error flag
/// where the CLI left them out), paired by call id when the CLI passed one, else in order of
/// the same tool; failures the tools' policies record join the run's errors.
pub fn merge_tool_record(result: &mut ExecutionResult, record: Vec<ToolExecution>) {
    let mut used = vec![false; record.len()];
    for call in &mut result.tool_calls {
        let Some(name) = forge_tool_of(call) else {
            continue;
        };
        call.kind = ToolKind::Mcp;
        call.canonical_name = Some(Arc::from(name.as_str()));
        let by_id = record
            .iter()
            .enumerate()
            .position(|(i, e)| !used[i] && e.call_id.as_deref() == Some(call.id.as_ref()));
        let by_order = || {
            record
                .iter()
                .enumerate()
                .position(|(i, e)| !used[i] && e.tool == name.as_str())
        };
        let Some(at) = by_id.or_else(by_order) else {
            continue;
        };
        used[at] = true;
        let execution = &record[at];
        call.duration_ms = Some(execution.duration_ms);
        if call.output.is_none() {
            call.output = Some(Arc::from(execution.output.as_str()));
        }
        if execution.is_error && !call.is_error {
            call.is_error = true;
            call.status = forge_domain::ToolCallStatus::Failed;
        }
    }
    result
        .errors
        .extend(record.into_iter().filter_map(|execution| execution.error));
}
