//! A fake model server for one scenario: the product's own `forge-code-agent fake-model
//! serve`, in the background. Its first stdout line names the port.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, bail};

/// How long the server may take to print where it listens.
const STARTUP: Duration = Duration::from_secs(20);

/// A running `fake-model serve`; stopped (killed) when dropped.
pub struct ServerProcess {
    child: Child,
    pub base_url: String,
}

impl ServerProcess {
    /// Starts `forge fake-model serve --scenario <scenario> --request-log <log>`.
    pub fn start(forge: &Path, scenario: &str, request_log: &Path) -> anyhow::Result<Self> {
        let mut child = Command::new(forge)
            .args([
                "fake-model",
                "serve",
                "--scenario",
                scenario,
                "--request-log",
            ])
            .arg(request_log)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting {} fake-model serve", forge.display()))?;
        let Some(stdout) = child.stdout.take() else {
            bail!("fake-model serve: no stdout pipe");
        };
        // Read the first line on a thread, so a server that never prints cannot hang us;
        // the thread then drains the rest so the server never blocks on a full pipe.
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let _ = tx.send(lines.next());
            for _ in lines {}
        });
        let first = match rx.recv_timeout(STARTUP) {
            Ok(Some(Ok(line))) => line,
            other => {
                let _ = child.kill();
                let _ = child.wait();
                bail!("fake-model serve for {scenario} did not say where it listens: {other:?}");
            }
        };
        let Some(base_url) = first.strip_prefix("listening on ") else {
            let _ = child.kill();
            let _ = child.wait();
            bail!("fake-model serve: unexpected first line {first:?}");
        };
        Ok(Self {
            base_url: base_url.trim().to_owned(),
            child,
        })
    }

    /// The port of [`Self::base_url`].
    pub fn port(&self) -> &str {
        self.base_url.rsplit(':').next().unwrap_or_default()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The base URL `forge-code-agent serve` prints on its first line (`listening on URL`); its
/// stdout is taken. The caller owns the child (and kills it on an error).
pub(crate) fn listening_on(child: &mut Child) -> anyhow::Result<String> {
    let stdout = child.stdout.take().context("serve's stdout is not piped")?;
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    line.trim()
        .strip_prefix("listening on ")
        .map(str::to_owned)
        .with_context(|| format!("serve's first line: {line:?}"))
}
