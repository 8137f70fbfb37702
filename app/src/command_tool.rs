//! A configured command as a tool handler: run in the workspace through the `ProcessRunner`
//! port, the call's arguments as JSON on stdin, the result read from stdout.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_ports::{Invocation, ProcessRunner, ToolContext, ToolHandler};
use serde_json::Value;

/// How much of stderr's end a failure carries.
const STDERR_TAIL: usize = 2000;

pub struct CommandTool {
    runner: Arc<dyn ProcessRunner>,
    name: String,
    command: Vec<String>,
    timeout: Duration,
}

impl CommandTool {
    pub fn new(
        runner: Arc<dyn ProcessRunner>,
        name: impl Into<String>,
        command: Vec<String>,
        timeout: Duration,
    ) -> Self {
        Self {
            runner,
            name: name.into(),
            command,
            timeout,
        }
    }

    fn fail(&self, message: String) -> ForgeError {
        ForgeError::ToolExecution {
            tool: self.name.clone(),
            message,
        }
    }
}

#[async_trait]
impl ToolHandler for CommandTool {
    async fn call(&self, args: Value, ctx: ToolContext) -> Result<Value, ForgeError> {
        let Some((program, rest)) = self.command.split_first() else {
            return Err(self.fail("no command configured".into()));
        };
        let mut invocation = Invocation::new(
            PathBuf::from(program),
            rest.to_vec(),
            ctx.workspace_root.clone(),
        );
        invocation.stdin = Some(args.to_string().into_bytes());
        invocation
            .env
            .set
            .insert("FORGE_RUN_ID".into(), ctx.run_id.as_str().to_owned());
        let invocation = crate::confine::code(invocation, &ctx.workspace_root, &[]);
        let output = match self.runner.output(invocation, self.timeout).await {
            Ok(output) => output,
            Err(ForgeError::ProviderTimeout { after_ms }) => {
                return Err(self.fail(format!("timed out after {after_ms} ms")));
            }
            Err(e) => return Err(self.fail(e.to_string())),
        };
        if output.code != Some(0) {
            let status = output.code.map_or_else(
                || "killed by a signal".to_owned(),
                |c| format!("exit code {c}"),
            );
            let tail = tail(output.stderr.trim_end(), STDERR_TAIL);
            return Err(self.fail(format!("{status}: {tail}")));
        }
        let text = output.stdout.trim_end();
        // JSON on stdout is the structured result; anything else is text.
        Ok(serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned())))
    }
}

/// The last `max` bytes of `text`, cut on a char boundary.
fn tail(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}
