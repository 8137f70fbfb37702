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

#[cfg(test)]
mod tests {
    use forge_domain::{ExecutionStatus, ProviderId, RawJson, ToolCallStatus};
    use serde_json::json;

    use super::*;

    fn call(id: &str, kind: ToolKind, name: &str, input: Value) -> ToolCall {
        ToolCall {
            id: id.into(),
            kind,
            name: name.into(),
            input: RawJson::from_value(&input),
            output: None,
            is_error: false,
            exit_code: None,
            status: ToolCallStatus::Completed,
            canonical_name: None,
            duration_ms: None,
        }
    }

    fn execution(
        call_id: Option<&str>,
        tool: &str,
        duration_ms: u64,
        failed: bool,
    ) -> ToolExecution {
        ToolExecution {
            call_id: call_id.map(str::to_owned),
            tool: tool.into(),
            input: json!({}),
            output: format!("{tool} out"),
            is_error: failed,
            duration_ms,
            error: failed.then(|| ForgeError::ToolExecution {
                tool: tool.into(),
                message: "bad".into(),
            }),
        }
    }

    /// (kind, canonical name, duration, is_error, output) of each call after the merge.
    type Merged = Vec<(ToolKind, Option<String>, Option<u64>, bool, Option<String>)>;

    fn check(calls: Vec<ToolCall>, record: Vec<ToolExecution>, want: Merged, want_errors: usize) {
        let mut result =
            ExecutionResult::empty(ProviderId::new("claude").unwrap(), ExecutionStatus::Success);
        result.tool_calls = calls;
        merge_tool_record(&mut result, record);
        let got: Merged = result
            .tool_calls
            .iter()
            .map(|c| {
                (
                    c.kind,
                    c.canonical_name.as_deref().map(str::to_owned),
                    c.duration_ms,
                    c.is_error,
                    c.output.as_deref().map(str::to_owned),
                )
            })
            .collect();
        assert_eq!(got, want);
        assert_eq!(result.errors.len(), want_errors);
    }

    #[test]
    fn each_clis_spelling_pairs_with_forges_record_and_look_alikes_do_not() {
        let mcp = ToolKind::Mcp;
        // Claude, paired by the id it passed along, out of order.
        check(
            vec![
                call("t1", mcp, "mcp__forge__echo", json!({})),
                call("t2", mcp, "mcp__forge__echo", json!({})),
            ],
            vec![
                execution(Some("t2"), "echo", 7, false),
                execution(Some("t1"), "echo", 3, false),
            ],
            vec![
                (
                    mcp,
                    Some("echo".into()),
                    Some(3),
                    false,
                    Some("echo out".into()),
                ),
                (
                    mcp,
                    Some("echo".into()),
                    Some(7),
                    false,
                    Some("echo out".into()),
                ),
            ],
            0,
        );
        // Gemini, paired in order; forge's failure marks the call and joins the errors.
        check(
            vec![call("g1", ToolKind::Other, "mcp_forge_fail", json!({}))],
            vec![execution(None, "fail", 1, true)],
            vec![(
                mcp,
                Some("fail".into()),
                Some(1),
                true,
                Some("fail out".into()),
            )],
            1,
        );
        // Codex reports server and tool in the input.
        check(
            vec![call(
                "c1",
                mcp,
                "mcp_tool_call",
                json!({"server": "forge", "tool": "echo"}),
            )],
            vec![execution(None, "echo", 2, false)],
            vec![(
                mcp,
                Some("echo".into()),
                Some(2),
                false,
                Some("echo out".into()),
            )],
            0,
        );
        // Look-alikes stay as they were; an unpaired record still reports its error.
        check(
            vec![
                call("b", ToolKind::Shell, "Bash", json!({})),
                call("o", mcp, "mcp__other__echo", json!({})),
                call(
                    "x",
                    mcp,
                    "mcp_tool_call",
                    json!({"server": "other", "tool": "echo"}),
                ),
            ],
            vec![execution(None, "echo", 2, true)],
            vec![
                (ToolKind::Shell, None, None, false, None),
                (mcp, None, None, false, None),
                (mcp, None, None, false, None),
            ],
            1,
        );
    }

    #[test]
    fn a_name_is_registered_once() {
        let mut set = ToolSet::default();
        let handler: Arc<dyn ToolHandler> =
            Arc::new(FnHandler(|args: Value, _ctx: ToolContext| async move {
                Ok(args)
            }));
        let tool = HostedTool::new("echo", "e", json!({})).unwrap();
        set.add(tool.clone(), Arc::clone(&handler)).unwrap();
        assert!(set.add(tool, handler).is_err());
        assert_eq!(set.shared().len(), 1);
    }
}
