//! A confined child with its egress point: the egress lives exactly as long as the child
//! (stopped, its sockets removed, once the child was waited for or dropped), and its
//! refusals are the child's [`SandboxDenials`].

use std::sync::Arc;

use async_trait::async_trait;
use forge_domain::{EndedOrphan, ForgeError};
use forge_ports::{
    ProcessExit, ProcessKiller, RunningProcess, SandboxDenials, StderrLines, StdinWriter,
    StdoutItem,
};

use crate::net::EgressSession;

pub(crate) struct EgressedProcess {
    pub(crate) inner: Box<dyn RunningProcess>,
    pub(crate) egress: Option<Box<dyn EgressSession>>,
}

impl EgressedProcess {
    pub(crate) async fn stop_egress(&mut self) {
        if let Some(egress) = self.egress.take() {
            egress.shutdown().await;
        }
    }
}

#[async_trait]
impl RunningProcess for EgressedProcess {
    fn pid(&self) -> Option<u32> {
        self.inner.pid()
    }

    async fn next_stdout(&mut self) -> Result<Option<StdoutItem>, ForgeError> {
        self.inner.next_stdout().await
    }

    fn killer(&self) -> Arc<dyn ProcessKiller> {
        self.inner.killer()
    }

    fn take_stderr_lines(&mut self) -> Option<Box<dyn StderrLines>> {
        self.inner.take_stderr_lines()
    }

    fn take_stdin(&mut self) -> Option<Box<dyn StdinWriter>> {
        self.inner.take_stdin()
    }

    fn take_sandbox_denials(&mut self) -> Option<Box<dyn SandboxDenials>> {
        self.egress.as_mut()?.take_denials()
    }

    async fn wait(&mut self) -> Result<ProcessExit, ForgeError> {
        let exit = self.inner.wait().await;
        self.stop_egress().await;
        exit
    }

    fn ended_orphans(&self) -> Vec<EndedOrphan> {
        self.inner.ended_orphans()
    }
}
