//! A child's stdin kept open for a conversation ([`forge_ports::StdinWriter`]).

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_ports::StdinWriter;
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;

/// Writes whole lines; dropping it closes the pipe, so the child sees end-of-file.
pub struct StdinPipe {
    pipe: ChildStdin,
}

impl StdinPipe {
    pub(crate) fn new(pipe: ChildStdin) -> Self {
        Self { pipe }
    }
}

#[async_trait]
impl StdinWriter for StdinPipe {
    async fn write_line(&mut self, line: &str) -> Result<(), ForgeError> {
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        self.pipe
            .write_all(&bytes)
            .await
            .map_err(|e| ForgeError::io("writing to the child's stdin", e))?;
        self.pipe
            .flush()
            .await
            .map_err(|e| ForgeError::io("writing to the child's stdin", e))
    }
}
