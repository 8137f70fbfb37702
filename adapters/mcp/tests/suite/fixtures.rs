//! Tools for the tests: one per behaviour the engine must isolate.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use forge_domain::{ForgeError, HostedTool, RunId};
use forge_ports::{RegisteredTool, ToolContext, ToolHandler, ToolRun};
use forge_testkit::fakes::PassthroughWorkspace;
use serde_json::{Value, json};

pub enum Behaviour {
    Echo,
    Fail,
    Panic,
    Sleep,
}

pub struct Handler(pub Behaviour);

#[async_trait]
impl ToolHandler for Handler {
    async fn call(&self, args: Value, ctx: ToolContext) -> Result<Value, ForgeError> {
        match self.0 {
            Behaviour::Echo => Ok(json!({"args": args, "run": ctx.run_id.as_str()})),
            Behaviour::Fail => Err(ForgeError::ToolExecution {
                tool: "fail".into(),
                message: "disk on fire".into(),
            }),
            Behaviour::Panic => panic!("handler blew up"),
            Behaviour::Sleep => {
                tokio::time::sleep(Duration::from_secs(30)).await;
                Ok(Value::Null)
            }
        }
    }
}

fn tool(name: &str, behaviour: Behaviour, schema: Value) -> RegisteredTool {
    let mut tool = HostedTool::new(name, format!("the {name} tool"), schema).unwrap();
    if matches!(behaviour, Behaviour::Sleep) {
        tool = tool.with_timeout_ms(100);
    }
    RegisteredTool {
        tool,
        handler: Arc::new(Handler(behaviour)),
    }
}

pub fn run() -> ToolRun {
    let path_schema =
        json!({"type":"object","properties":{"path":{"type":"string","format":"path"}}});
    ToolRun {
        run_id: RunId::new("run-1").unwrap(),
        workspace_root: "/ws".into(),
        workspace: Arc::new(PassthroughWorkspace::default()),
        tools: Arc::from(vec![
            tool("echo", Behaviour::Echo, path_schema),
            tool("fail", Behaviour::Fail, json!({"type":"object"})),
            tool("boom", Behaviour::Panic, json!({"type":"object"})),
            tool("slow", Behaviour::Sleep, json!({"type":"object"})),
        ]),
    }
}
