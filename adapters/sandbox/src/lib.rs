//! forge-adapter-sandbox: every agent run, and everything it starts, confined (issue 31).
//!
//! [`SandboxedRunner`] decorates the [`forge_ports::ProcessRunner`] in the composition root:
//! an invocation that carries a [`forge_domain::sandbox::Confinement`] (the CLI, validation
//! and install steps, MCP command tools, ACP terminals) is started inside bubblewrap; forge's
//! own commands (git, version probes) carry none and pass through unchanged.
//!
//! Why bubblewrap and not Landlock + seccomp: bubblewrap gives, in one exec, a PID namespace
//! (the agent cannot see or signal forge, and `/proc/*/environ` shows only its own
//! processes), a network namespace for the egress bridge, a private `/tmp`, and secrets
//! replaced by empty files — Landlock can only refuse accesses (a refused `~/.ssh` is still
//! listed, `/proc` still shows forge) and needs forge's own code in the child before the
//! exec. It is Debian's `bubblewrap` package, the mechanism Codex and Anthropic's
//! sandbox-runtime use on Linux.

mod args;
mod env;
mod facts;
mod mechanism;
mod net;
mod probe_cache;
mod process;
mod protected;
mod runner;

pub use args::bwrap_args;
pub use env::confined_env;
pub use mechanism::{Mechanism, Unavailable, probe};
pub use runner::{SandboxConfig, SandboxedRunner};
