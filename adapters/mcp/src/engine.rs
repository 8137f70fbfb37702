//! The tool-calling engine, without the protocol: find the tool, confine its path
//! arguments, run the handler isolated (own task, timeout, panic caught), and record the call.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use forge_domain::{ForgeError, ToolErrorPolicy, ToolExecution};
use forge_ports::{RegisteredTool, ToolContext};
use serde_json::{Map, Value};

/// What the agent gets back from one call.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The handler's result, as text (a JSON string result is passed as its text).
    Ok(String),
    /// An error result the agent sees (`isError: true`); the run goes on.
    ToolError(String),
    /// No such tool: a protocol error.
    Unknown(String),
}

/// One run's tools, its context, and the record of what was called.
pub struct Engine {
    tools: Arc<[RegisteredTool]>,
    ctx: ToolContext,
    record: Mutex<Vec<ToolExecution>>,
}

impl Engine {
    pub fn new(tools: Arc<[RegisteredTool]>, ctx: ToolContext) -> Self {
        Self {
            tools,
            ctx,
            record: Mutex::new(Vec::new()),
        }
    }

    pub fn tools(&self) -> &[RegisteredTool] {
        &self.tools
    }

    /// Every call answered so far, in order; empties the record.
    pub fn take_record(&self) -> Vec<ToolExecution> {
        match self.record.lock() {
            Ok(mut record) => std::mem::take(&mut *record),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        }
    }

    /// Answers one `tools/call`.
    pub async fn call(
        &self,
        name: &str,
        args: Map<String, Value>,
        call_id: Option<String>,
    ) -> Answer {
        let started = Instant::now();
        let input = Value::Object(args.clone());
        let Some(tool) = self.tools.iter().find(|t| t.tool.name.as_str() == name) else {
            let message = format!("tool {name:?} is not registered with forge");
            self.push(ToolExecution {
                call_id,
                tool: name.to_owned(),
                input,
                output: message.clone(),
                is_error: true,
                duration_ms: elapsed_ms(started),
                error: Some(ForgeError::ToolExecution {
                    tool: name.to_owned(),
                    message: message.clone(),
                }),
            });
            return Answer::Unknown(message);
        };
        let outcome = match self.confine_paths(tool, args).await {
            Ok(args) => self.run_isolated(tool, args).await,
            Err(e) => Err(e),
        };
        let (answer, error) = match outcome {
            Ok(value) => (Answer::Ok(text_of(&value)), None),
            Err(e) => {
                let message = e.to_string();
                let recorded = match tool.tool.error_policy {
                    ToolErrorPolicy::Record => Some(e),
                    ToolErrorPolicy::AgentOnly => None,
                };
                (Answer::ToolError(message), recorded)
            }
        };
        let (output, is_error) = match &answer {
            Answer::Ok(text) => (text.clone(), false),
            Answer::ToolError(text) | Answer::Unknown(text) => (text.clone(), true),
        };
        self.push(ToolExecution {
            call_id,
            tool: name.to_owned(),
            input,
            output,
            is_error,
            duration_ms: elapsed_ms(started),
            error,
        });
        answer
    }

    /// Resolves every declared path argument by the workspace rule, replacing it with the
    /// absolute path inside the workspace. An escape refuses the call before the handler runs.
    async fn confine_paths(
        &self,
        tool: &RegisteredTool,
        mut args: Map<String, Value>,
    ) -> Result<Map<String, Value>, ForgeError> {
        for name in tool.tool.path_args() {
            let Some(Value::String(requested)) = args.get(name) else {
                continue;
            };
            let resolved = self
                .ctx
                .workspace
                .resolve(&self.ctx.workspace_root, Path::new(requested))
                .await?;
            args.insert(
                name.to_owned(),
                Value::String(resolved.display().to_string()),
            );
        }
        Ok(args)
    }

    /// The handler on its own task: a panic is that task's failure, a timeout aborts it.
    async fn run_isolated(
        &self,
        tool: &RegisteredTool,
        args: Map<String, Value>,
    ) -> Result<Value, ForgeError> {
        let handler = Arc::clone(&tool.handler);
        let ctx = self.ctx.clone();
        let name = tool.tool.name.to_string();
        let fail = |message: String| ForgeError::ToolExecution {
            tool: name.clone(),
            message,
        };
        let mut task = tokio::spawn(async move { handler.call(Value::Object(args), ctx).await });
        let limit = Duration::from_millis(tool.tool.timeout_ms());
        match tokio::time::timeout(limit, &mut task).await {
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err(e @ ForgeError::WorkspaceSecurity { .. }))) => Err(e),
            Ok(Ok(Err(ForgeError::ToolExecution { message, .. }))) => Err(fail(message)),
            Ok(Ok(Err(e))) => Err(fail(e.to_string())),
            Ok(Err(join)) if join.is_panic() => {
                Err(fail(format!("the handler panicked: {}", panic_text(join))))
            }
            Ok(Err(join)) => Err(fail(format!("the handler was stopped: {join}"))),
            Err(_) => {
                task.abort();
                Err(fail(format!(
                    "timed out after {} ms",
                    tool.tool.timeout_ms()
                )))
            }
        }
    }

    fn push(&self, execution: ToolExecution) {
        match self.record.lock() {
            Ok(mut record) => record.push(execution),
            Err(poisoned) => poisoned.into_inner().push(execution),
        }
    }
}

fn panic_text(join: tokio::task::JoinError) -> String {
    let payload = join.into_panic();
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "(no message)".to_owned()
    }
}

/// A string result as its text; anything else as compact JSON.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}
