//! Running validation steps in a work tree through the [`ProcessRunner`] port: each step
//! `sh -c` in its own process group, stderr folded into stdout, a deadline per step (the
//! kill ladder on the whole group when crossed), a bounded tail of the output kept for the
//! report, the full (redacted) output teed into `validation/<label>-<step>.log`.

use futures::FutureExt as _;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use forge_domain::task::{FailureScanner, ValidationReport, ValidationStep};
use forge_domain::{ForgeError, Redactor};
use forge_ports::{Clock, Invocation, KillLadder, ProcessRunner, SpawnOptions, StdoutItem};

use super::detect::{PlannedStep, program_of};
use super::warm::Warm;
use crate::handle::RunCanceller;

/// Output kept per step for the report and the correction prompt.
pub const TAIL_BYTES: usize = 4000;

/// Runs validation steps; cheap to clone.
#[derive(Clone)]
pub struct StepRunner {
    pub runner: Arc<dyn ProcessRunner>,
    pub clock: Arc<dyn Clock>,
    pub ladder: KillLadder,
    pub redactor: Redactor,
    pub step_timeout: Duration,
    /// The task's build caches: their environment for every step, and the note each
    /// step's report carries.
    pub warm: Option<Arc<Warm>>,
}

impl StepRunner {
    /// Fails with the tool's name when a step's program is not installed.
    ///
    /// # Errors
    /// [`ForgeError::ExecutableNotFound`] naming the program and the step.
    pub fn check_tools<'a>(
        &self,
        steps: impl IntoIterator<Item = &'a PlannedStep>,
        dir: &Path,
    ) -> Result<(), ForgeError> {
        for step in steps {
            let Some(program) = program_of(&step.command) else {
                continue;
            };
            let path = if program.contains('/') {
                dir.join(program)
            } else {
                PathBuf::from(program)
            };
            if self.runner.locate(&path).is_none() {
                return Err(ForgeError::ExecutableNotFound {
                    program: program.to_owned(),
                    hint: format!(
                        "the validation step `{}` runs `{}`; install {program} or set [validation] {} in forge.toml",
                        step.name, step.command, step.name
                    ),
                });
            }
        }
        Ok(())
    }

    /// Runs every one of `steps` in order in `dir` (all of them, even after a failure, so a
    /// step that was already failing before the task cannot hide a later one). Logs go to
    /// `<log_dir>/<label>-<step>.log`.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when `sh` cannot be started; [`ForgeError::Cancelled`] when
    /// `cancel` fired (the running step's group is stopped first).
    pub async fn run(
        &self,
        dir: &Path,
        steps: &[&PlannedStep],
        log_dir: Option<&Path>,
        label: &str,
        cancel: &RunCanceller,
    ) -> Result<ValidationReport, ForgeError> {
        if let Some(warm) = &self.warm {
            warm.before_pass().await?;
        }
        let mut done = Vec::new();
        for step in steps {
            let log = log_dir.map(|d| d.join(format!("{label}-{}.log", step.name)));
            let install = step.name == forge_domain::task::StepName::Install;
            done.push(self.run_one(dir, step, log, install, cancel).await?);
        }
        Ok(ValidationReport::from_steps(done))
    }

    async fn run_one(
        &self,
        dir: &Path,
        step: &PlannedStep,
        log: Option<PathBuf>,
        install: bool,
        cancel: &RunCanceller,
    ) -> Result<ValidationStep, ForgeError> {
        let script = format!("exec 2>&1\n{}", step.command);
        let mut invocation = Invocation::new("sh", vec!["-c".to_owned(), script], dir);
        // Tools that ask questions or draw progress bars behave when they see CI.
        invocation.env.set.insert("CI".into(), "1".into());
        let cache = self.warm.as_ref().and_then(|w| {
            invocation.env.set.extend(w.env.clone());
            if install {
                w.peek_note(&step.command)
            } else {
                w.note_for(&step.command)
            }
        });
        invocation.install_hint = Some("a POSIX shell (sh) is needed to run validation".into());
        let caches = self.warm.as_ref().map(|w| w.dirs()).unwrap_or_default();
        let invocation = crate::confine::code(invocation, dir, &caches);
        let options = SpawnOptions {
            stdout_log: log,
            redactor: self.redactor.clone(),
            max_line_bytes: 64 * 1024,
            ..SpawnOptions::default()
        };
        let started = self.clock.monotonic_ms();
        let mut child = self.runner.spawn(invocation, options).await?;
        // What the sandbox refuses the code under test, read once the step is over (its
        // egress point stops with it).
        let mut denials = child.take_sandbox_denials();
        let killer = child.killer();
        let mut tail = Tail::new(TAIL_BYTES);
        // The whole output, not the tail, says which tests failed.
        let mut scanner = FailureScanner::new();
        let deadline = tokio::time::sleep(self.step_timeout);
        tokio::pin!(deadline);
        let mut timed_out = false;
        let mut cancelled = false;
        loop {
            tokio::select! {
                item = child.next_stdout() => match item {
                    Ok(Some(StdoutItem::Line { text, .. })) => {
                        scanner.line(&text);
                        tail.push(&self.redactor.redact(&text));
                    }
                    Ok(Some(StdoutItem::Oversize { size_bytes, prefix, .. })) => {
                        tail.push(&format!("{} … ({size_bytes} bytes)", self.redactor.redact(&prefix)));
                    }
                    Ok(None) | Err(_) => break,
                },
                () = &mut deadline, if !timed_out && !cancelled => {
                    timed_out = true;
                    killer.shutdown(self.ladder).await?;
                }
                () = cancel.cancel.cancelled(), if !timed_out && !cancelled => {
                    cancelled = true;
                    killer.shutdown(self.ladder).await?;
                }
            }
        }
        let exit = child.wait().await?;
        let mut sandbox_denied = Vec::new();
        if let Some(denials) = denials.as_mut() {
            while let Some(Some(denial)) = denials.next_denial().now_or_never() {
                sandbox_denied.push(denial);
            }
        }
        if cancelled {
            return Err(ForgeError::Cancelled);
        }
        let duration_ms = self.clock.monotonic_ms().saturating_sub(started);
        let mut output_tail = tail.text();
        if timed_out {
            output_tail.push_str(&format!(
                "\n(forge: stopped after {} ms, the step's timeout)",
                self.step_timeout.as_millis()
            ));
        }
        let passed = exit.code == Some(0) && !timed_out;
        Ok(ValidationStep {
            name: step.name,
            command: step.command.clone(),
            exit_code: exit.code,
            duration_ms,
            output_tail,
            timed_out,
            cache,
            failed_tests: (!passed).then(|| {
                let mut failed = scanner.finish();
                for name in &mut failed.names {
                    *name = self.redactor.redact(name).into_owned();
                }
                failed
            }),
            sandbox_denied,
        })
    }
}

/// The last `cap` bytes of a line stream, cut at line starts where possible.
struct Tail {
    cap: usize,
    size: usize,
    lines: VecDeque<String>,
    dropped: bool,
}

impl Tail {
    fn new(cap: usize) -> Self {
        Self {
            cap,
            size: 0,
            lines: VecDeque::new(),
            dropped: false,
        }
    }

    fn push(&mut self, line: &str) {
        // One byte of the cap is the line's newline.
        let keep = self.cap.saturating_sub(1);
        let line = if line.len() > keep {
            self.dropped = true;
            let mut start = line.len() - keep;
            while !line.is_char_boundary(start) {
                start += 1;
            }
            &line[start..]
        } else {
            line
        };
        self.size += line.len() + 1;
        self.lines.push_back(line.to_owned());
        while self.size > self.cap {
            match self.lines.pop_front() {
                Some(old) => {
                    self.size -= old.len() + 1;
                    self.dropped = true;
                }
                None => break,
            }
        }
    }

    fn text(&self) -> String {
        let body = self.lines.iter().cloned().collect::<Vec<_>>().join("\n");
        if self.dropped {
            format!("…\n{body}")
        } else {
            body
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_lines_within_the_cap() {
        let mut tail = Tail::new(12);
        for line in ["one", "two", "three", "four"] {
            tail.push(line);
        }
        assert_eq!(tail.text(), "…\nthree\nfour");
        let mut short = Tail::new(100);
        short.push("a");
        short.push("b");
        assert_eq!(short.text(), "a\nb");
        let mut long = Tail::new(4);
        long.push("abcdefgh");
        assert_eq!(long.text(), "…\nfgh");
    }
}
