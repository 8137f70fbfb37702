//! A confined child with what watches it: its egress point lives exactly as long as the
//! child (stopped, its sockets removed, once the child was waited for or dropped), the
//! protected paths it could not be kept from creating are removed when it ends, and the
//! refusals of both are the child's [`SandboxDenials`].

use std::sync::Arc;

use async_trait::async_trait;
use forge_domain::sandbox::SandboxDenial;
use forge_domain::{EndedOrphan, ForgeError};
use forge_ports::{
    ProcessExit, ProcessKiller, RunningProcess, SandboxDenials, StderrLines, StdinWriter,
    StdoutItem,
};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::protected::MissingProtected;
use forge_ports::EgressSession;

pub(crate) struct ConfinedProcess {
    inner: Box<dyn RunningProcess>,
    egress: Option<Box<dyn EgressSession>>,
    watch: Option<MissingProtected>,
    /// The file refusals found when the child ended; dropped then, which ends the stream.
    fs_denials: Option<UnboundedSender<SandboxDenial>>,
    fs_stream: Option<UnboundedReceiver<SandboxDenial>>,
}

impl ConfinedProcess {
    pub(crate) fn new(
        inner: Box<dyn RunningProcess>,
        egress: Option<Box<dyn EgressSession>>,
        watch: MissingProtected,
    ) -> Self {
        let (tx, rx) = unbounded_channel();
        Self {
            inner,
            egress,
            watch: Some(watch),
            fs_denials: Some(tx),
            fs_stream: Some(rx),
        }
    }

    async fn ended(&mut self) {
        if let Some(egress) = self.egress.take() {
            egress.shutdown().await;
        }
        if let Some(watch) = self.watch.take() {
            for denial in watch.created() {
                if let Some(tx) = &self.fs_denials {
                    let _ = tx.send(denial);
                }
            }
        }
        self.fs_denials = None;
    }
}

impl Drop for ConfinedProcess {
    fn drop(&mut self) {
        // Never waited for (its caller gave up on it): what it created still goes.
        if let Some(watch) = self.watch.take() {
            for denial in watch.created() {
                tracing::warn!("sandbox: {}", denial.describe());
            }
        }
    }
}

#[async_trait]
impl RunningProcess for ConfinedProcess {
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
        let fs = self.fs_stream.take()?;
        let network = self
            .egress
            .as_mut()
            .and_then(|egress| egress.take_denials());
        Some(Box::new(Denials {
            network,
            fs: Some(fs),
        }))
    }

    async fn wait(&mut self) -> Result<ProcessExit, ForgeError> {
        let exit = self.inner.wait().await;
        self.ended().await;
        exit
    }

    fn ended_orphans(&self) -> Vec<EndedOrphan> {
        self.inner.ended_orphans()
    }
}

/// The egress point's refusals and the file ones, as they come; ends when both ended.
struct Denials {
    network: Option<Box<dyn SandboxDenials>>,
    fs: Option<UnboundedReceiver<SandboxDenial>>,
}

#[async_trait]
impl SandboxDenials for Denials {
    async fn next_denial(&mut self) -> Option<SandboxDenial> {
        loop {
            tokio::select! {
                denial = next_network(&mut self.network), if self.network.is_some() => match denial {
                    Some(denial) => return Some(denial),
                    None => self.network = None,
                },
                denial = next_fs(&mut self.fs), if self.fs.is_some() => match denial {
                    Some(denial) => return Some(denial),
                    None => self.fs = None,
                },
                else => return None,
            }
        }
    }
}

async fn next_network(network: &mut Option<Box<dyn SandboxDenials>>) -> Option<SandboxDenial> {
    match network {
        Some(network) => network.next_denial().await,
        None => None,
    }
}

async fn next_fs(fs: &mut Option<UnboundedReceiver<SandboxDenial>>) -> Option<SandboxDenial> {
    match fs {
        Some(fs) => fs.recv().await,
        None => None,
    }
}
