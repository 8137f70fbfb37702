//! A process runner that plays a script instead of spawning: lines with delays, an exit
//! code, or a hang until the kill ladder arrives. It records every invocation and signal.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_ports::{
    CapturedOutput, Invocation, KillLadder, ProcessExit, ProcessKiller, ProcessRunner,
    RunningProcess, SpawnOptions, StdoutItem,
};
use tokio::sync::Notify;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptStep {
    Line(String),
    Oversize {
        size_bytes: u64,
        prefix: String,
    },
    Sleep(Duration),
    /// Stop producing output and wait until killed (a hung CLI).
    Hang,
}

/// What one spawned "process" does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptedRun {
    pub steps: Vec<ScriptStep>,
    pub exit_code: i32,
    pub stderr: String,
    /// Lines printed when the process receives the ladder's SIGINT (Claude prints an error
    /// result then exits 0).
    pub on_interrupt: Vec<String>,
}

impl ScriptedRun {
    /// Plays `lines` and exits with `exit_code`.
    pub fn lines<I, S>(lines: I, exit_code: i32) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            steps: lines
                .into_iter()
                .map(|l| ScriptStep::Line(l.into()))
                .collect(),
            exit_code,
            stderr: String::new(),
            on_interrupt: Vec::new(),
        }
    }
}

/// Hands out scripted runs in order (the last one repeats) and records invocations.
#[derive(Debug, Clone, Default)]
pub struct ScriptedProcessRunner {
    scripts: Arc<Mutex<VecDeque<ScriptedRun>>>,
    invocations: Arc<Mutex<Vec<Invocation>>>,
    signals: Arc<Mutex<Vec<String>>>,
    missing_programs: Vec<PathBuf>,
}

impl ScriptedProcessRunner {
    pub fn new(runs: impl IntoIterator<Item = ScriptedRun>) -> Self {
        Self {
            scripts: Arc::new(Mutex::new(runs.into_iter().collect())),
            ..Self::default()
        }
    }

    /// `spawn` of `program` fails with ExecutableNotFound.
    pub fn with_missing(mut self, program: impl Into<PathBuf>) -> Self {
        self.missing_programs.push(program.into());
        self
    }

    pub fn invocations(&self) -> Vec<Invocation> {
        self.invocations
            .lock()
            .map(|i| i.clone())
            .unwrap_or_default()
    }

    /// Signals the runs received, e.g. `["shutdown", "kill_now"]`.
    pub fn signals(&self) -> Vec<String> {
        self.signals.lock().map(|s| s.clone()).unwrap_or_default()
    }

    fn next_script(&self) -> ScriptedRun {
        let mut scripts = match self.scripts.lock() {
            Ok(s) => s,
            Err(poisoned) => poisoned.into_inner(),
        };
        if scripts.len() > 1 {
            scripts
                .pop_front()
                .unwrap_or_else(|| ScriptedRun::lines(Vec::<String>::new(), 0))
        } else {
            scripts
                .front()
                .cloned()
                .unwrap_or_else(|| ScriptedRun::lines(Vec::<String>::new(), 0))
        }
    }
}

#[async_trait]
impl ProcessRunner for ScriptedProcessRunner {
    async fn spawn(
        &self,
        invocation: Invocation,
        _options: SpawnOptions,
    ) -> Result<Box<dyn RunningProcess>, ForgeError> {
        if self.missing_programs.contains(&invocation.program) {
            return Err(ForgeError::ExecutableNotFound {
                program: invocation.program.display().to_string(),
                hint: invocation.install_hint.clone().unwrap_or_default(),
            });
        }
        if let Ok(mut inv) = self.invocations.lock() {
            inv.push(invocation);
        }
        let script = self.next_script();
        let state = Arc::new(KillState {
            signals: Arc::clone(&self.signals),
            notify: Notify::new(),
            killed: Mutex::new(None),
        });
        Ok(Box::new(ScriptedProcess {
            steps: script.steps.clone().into(),
            script,
            line_no: 0,
            state,
            interrupt_lines_sent: false,
        }))
    }

    async fn output(
        &self,
        invocation: Invocation,
        _timeout: Duration,
    ) -> Result<CapturedOutput, ForgeError> {
        if self.missing_programs.contains(&invocation.program) {
            return Err(ForgeError::ExecutableNotFound {
                program: invocation.program.display().to_string(),
                hint: invocation.install_hint.clone().unwrap_or_default(),
            });
        }
        if let Ok(mut inv) = self.invocations.lock() {
            inv.push(invocation);
        }
        let script = self.next_script();
        let stdout = script
            .steps
            .iter()
            .filter_map(|s| match s {
                ScriptStep::Line(l) => Some(format!("{l}\n")),
                _ => None,
            })
            .collect();
        Ok(CapturedOutput {
            code: Some(script.exit_code),
            stdout,
            stderr: script.stderr,
        })
    }

    fn locate(&self, program: &Path) -> Option<PathBuf> {
        (!self.missing_programs.iter().any(|m| m == program)).then(|| program.to_path_buf())
    }
}

/// How the fake died: `interrupt` (ladder) or `kill`.
struct KillState {
    signals: Arc<Mutex<Vec<String>>>,
    notify: Notify,
    killed: Mutex<Option<&'static str>>,
}

impl KillState {
    fn mark(&self, how: &'static str) {
        if let Ok(mut s) = self.signals.lock() {
            s.push(how.to_owned());
        }
        if let Ok(mut k) = self.killed.lock() {
            k.get_or_insert(how);
        }
        self.notify.notify_waiters();
        self.notify.notify_one();
    }

    fn killed(&self) -> Option<&'static str> {
        self.killed.lock().ok().and_then(|k| *k)
    }
}

struct ScriptedProcess {
    script: ScriptedRun,
    steps: VecDeque<ScriptStep>,
    line_no: u64,
    state: Arc<KillState>,
    interrupt_lines_sent: bool,
}

struct ScriptedKiller(Arc<KillState>);

#[async_trait]
impl ProcessKiller for ScriptedKiller {
    async fn shutdown(&self, _ladder: KillLadder) -> Result<(), ForgeError> {
        self.0.mark("shutdown");
        Ok(())
    }

    fn kill_now(&self) {
        self.0.mark("kill_now");
    }
}

#[async_trait]
impl RunningProcess for ScriptedProcess {
    fn pid(&self) -> Option<u32> {
        Some(4242)
    }

    async fn next_stdout(&mut self) -> Result<Option<StdoutItem>, ForgeError> {
        loop {
            if let Some(how) = self.state.killed() {
                if how == "shutdown" && !self.interrupt_lines_sent {
                    self.interrupt_lines_sent = true;
                    self.steps = self
                        .script
                        .on_interrupt
                        .iter()
                        .cloned()
                        .map(ScriptStep::Line)
                        .collect();
                } else if how == "kill_now" {
                    return Ok(None);
                }
                if !self.steps.iter().any(|s| matches!(s, ScriptStep::Line(_))) {
                    return Ok(None);
                }
            }
            let Some(step) = self.steps.pop_front() else {
                return Ok(None);
            };
            match step {
                ScriptStep::Line(text) => {
                    self.line_no += 1;
                    return Ok(Some(StdoutItem::Line {
                        line_no: self.line_no,
                        text,
                    }));
                }
                ScriptStep::Oversize { size_bytes, prefix } => {
                    self.line_no += 1;
                    return Ok(Some(StdoutItem::Oversize {
                        line_no: self.line_no,
                        size_bytes,
                        prefix,
                    }));
                }
                ScriptStep::Sleep(d) => {
                    // Cancel-safe: if this future is dropped mid-sleep the step is lost, which
                    // only shortens a fake delay.
                    tokio::select! {
                        () = tokio::time::sleep(d) => {}
                        () = self.state.notify.notified() => {}
                    }
                }
                ScriptStep::Hang => {
                    self.steps.push_front(ScriptStep::Hang);
                    if self.state.killed().is_none() {
                        self.state.notify.notified().await;
                    }
                    self.steps.pop_front();
                }
            }
        }
    }

    fn killer(&self) -> Arc<dyn ProcessKiller> {
        Arc::new(ScriptedKiller(Arc::clone(&self.state)))
    }

    async fn wait(&mut self) -> Result<ProcessExit, ForgeError> {
        let (code, signal) = match self.state.killed() {
            None => (Some(self.script.exit_code), None),
            Some("shutdown") if !self.script.on_interrupt.is_empty() => (Some(0), None),
            Some("shutdown") => (None, Some(2)),
            Some(_) => (None, Some(9)),
        };
        Ok(ProcessExit {
            code,
            signal,
            stderr_tail: self.script.stderr.clone(),
            stderr_bytes: self.script.stderr.len() as u64,
        })
    }
}
