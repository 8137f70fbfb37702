//! What each built-in scenario must produce, per provider: the suite's expectations.

use std::time::Duration;

/// The providers, in table order.
pub const PROVIDERS: [&str; 3] = ["claude", "codex", "gemini"];

/// forge's deadline of a run that should succeed.
const RUN_TIMEOUT: Duration = Duration::from_secs(90);
/// forge's deadline when the model always fails: claude and codex give up by themselves
/// within it (few retries configured), gemini retries for minutes and forge stops it.
const FAILING_TIMEOUT: Duration = Duration::from_secs(20);

/// An abstract tool action of a scenario, as the canonical result should show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Write,
    Read,
    Shell,
}

impl Action {
    /// The canonical `ToolKind` (snake case) `provider` reports for this action. The fake
    /// model reads files through codex's shell tool (`cat`): codex has no read tool.
    pub fn kind(self, provider: &str) -> &'static str {
        match (self, provider) {
            (Action::Write, _) => "file_write",
            (Action::Read, "codex") | (Action::Shell, _) => "shell",
            (Action::Read, _) => "file_read",
        }
    }
}

/// How a run must end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Success,
    /// A clear failure: status error (or a forge timeout with a provider_timeout error),
    /// with at least one error in the result.
    ClearError,
}

/// One scenario's expectations.
#[derive(Debug, Clone)]
pub struct Expect {
    pub scenario: &'static str,
    pub ending: Ending,
    /// The final text must contain this.
    pub text: Option<&'static str>,
    pub tools: &'static [Action],
    /// Files (relative to the workspace) and their exact contents afterwards.
    pub files: &'static [(&'static str, &'static str)],
    /// The shell call must be reported failed (where the CLI reports it).
    pub shell_fails: bool,
    /// A second run resumes the first run's session with this text expected.
    pub resume_text: Option<&'static str>,
    pub timeout: Duration,
}

const fn expect(scenario: &'static str, text: &'static str) -> Expect {
    Expect {
        scenario,
        ending: Ending::Success,
        text: Some(text),
        tools: &[],
        files: &[],
        shell_fails: false,
        resume_text: None,
        timeout: RUN_TIMEOUT,
    }
}

/// Every built-in scenario of the fake model, with what it must produce.
pub fn all() -> Vec<Expect> {
    use Action::{Read, Shell, Write};
    vec![
        expect("plain_answer", "Hello from the fake model."),
        Expect {
            tools: &[Write],
            files: &[("hello.txt", "hi\n")],
            ..expect("write_file", "Created hello.txt")
        },
        Expect {
            tools: &[Write, Read, Shell],
            files: &[("notes.txt", "alpha\nbeta\n")],
            ..expect("write_read_shell", "notes.txt has 2 lines")
        },
        Expect {
            tools: &[Shell],
            shell_fails: true,
            ..expect("shell_fail", "The command failed with exit code 3")
        },
        Expect {
            tools: &[Write, Shell, Read, Write, Shell],
            files: &[
                ("step1.txt", "one\n"),
                ("step2.txt", "two\n"),
                ("step4.txt", "four\n"),
            ],
            ..expect("five_tool_rounds", "All five steps are done.")
        },
        expect("rate_limit_then_success", "Hello after a rate limit."),
        expect("rate_limit_retry_info", "Hello after a suggested wait."),
        Expect {
            ending: Ending::ClearError,
            text: None,
            timeout: FAILING_TIMEOUT,
            ..expect("server_error_always", "")
        },
        expect("stream_cut", "Hello after a cut stream."),
        Expect {
            resume_text: Some("Resumed the session: the word was kiwi."),
            ..expect("resume", "Noted: kiwi.")
        },
        Expect {
            tools: &[Write, Shell],
            files: &[(
                "quotes.txt",
                "say \"hi\"\tthere\nC:\\path\\to\nnaïve café 日本語 🚀\n",
            )],
            ..expect("escapes_unicode", "the count went to 300.")
        },
        // One plain run takes the task's first change (the correction turns are `demo`'s and
        // the task group's).
        Expect {
            tools: &[Write],
            files: &[("answer.txt", "41\n")],
            ..expect("task_fix_cycle", "Wrote answer.txt.")
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_scenario_has_expectations() {
        let names: Vec<_> = all().iter().map(|e| e.scenario).collect();
        assert_eq!(names, forge_adapter_fakemodel::Scenario::builtin_names());
    }

    #[test]
    fn codex_reads_through_its_shell() {
        assert_eq!(Action::Read.kind("codex"), "shell");
        assert_eq!(Action::Read.kind("claude"), "file_read");
        assert_eq!(Action::Write.kind("gemini"), "file_write");
    }
}
