//! [`SandboxedRunner`]: the [`ProcessRunner`] decorator that confines what must be confined.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use forge_domain::sandbox::{Confinement, SandboxMode, SandboxSettings, fs_plan, state_dirs_named};
use forge_domain::{EndedOrphan, ForgeError};
use forge_ports::{
    CapturedOutput, EnvSpec, Invocation, ProcessRunner, RunningProcess, SpawnOptions,
};
use tokio::sync::OnceCell;

use crate::args::{bwrap_args, kind_of};
use crate::env::confined_env;
use crate::facts::gather;
use crate::mechanism::{Mechanism, Unavailable, probe};

/// How the sandbox is set up for this forge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxConfig {
    pub settings: SandboxSettings,
    /// bubblewrap: a path, or a name looked up on PATH.
    pub bwrap: PathBuf,
    /// forge's own files no run reads (its config files, a configured store or queue file).
    pub forge_private: Vec<PathBuf>,
    /// The user's home whose secrets are hidden; `None`: `HOME`.
    pub home: Option<PathBuf>,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            settings: SandboxSettings::default(),
            bwrap: PathBuf::from("bwrap"),
            forge_private: Vec::new(),
            home: None,
        }
    }
}

/// The network half, which the egress adapter provides: until one is plugged in, a confined
/// run shares forge's network (and `doctor` and the run's report say so).
pub trait NetworkConfinement: Send + Sync {
    /// The argv prefix run inside the sandbox before the CLI (the egress bridge), the
    /// variables it needs inside, and the directory of its sockets (bound in at the same path).
    fn inside(&self) -> (Vec<String>, Vec<(String, String)>, PathBuf);
}

/// Confines every invocation that carries a [`Confinement`], when the mode is on.
pub struct SandboxedRunner {
    inner: Arc<dyn ProcessRunner>,
    config: SandboxConfig,
    network: Option<Arc<dyn NetworkConfinement>>,
    mechanism: OnceCell<Result<Mechanism, Unavailable>>,
}

impl SandboxedRunner {
    pub fn new(inner: Arc<dyn ProcessRunner>, config: SandboxConfig) -> Self {
        Self {
            inner,
            config,
            network: None,
            mechanism: OnceCell::new(),
        }
    }

    /// Plugs in the egress (network confinement).
    #[must_use]
    pub fn with_network(mut self, network: Arc<dyn NetworkConfinement>) -> Self {
        self.network = Some(network);
        self
    }

    pub fn mode(&self) -> SandboxMode {
        self.config.settings.mode
    }

    /// Whether the network is confined too (an egress is plugged in).
    pub fn network_confined(&self) -> bool {
        self.network.is_some()
    }

    /// The mechanism, probed once per process.
    ///
    /// # Errors
    /// [`Unavailable`] when this machine cannot confine a run.
    pub async fn mechanism(&self) -> Result<&Mechanism, Unavailable> {
        self.mechanism
            .get_or_init(|| probe(self.inner.as_ref(), &self.config.bwrap))
            .await
            .as_ref()
            .map_err(Clone::clone)
    }

    /// `invocation` as it is started: unchanged when it carries no confinement or the mode
    /// is off, else inside bubblewrap.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when the sandbox is unavailable (with reason and fix);
    /// [`ForgeError::ExecutableNotFound`] when the program is not found;
    /// [`ForgeError::Io`] when a writable directory cannot be created.
    pub async fn wrap(&self, invocation: Invocation) -> Result<Invocation, ForgeError> {
        let Some(confinement) = invocation.confinement.clone() else {
            return Ok(invocation);
        };
        if self.config.settings.mode == SandboxMode::Off {
            return Ok(invocation);
        }
        let mechanism = self
            .mechanism()
            .await
            .map_err(|why| ForgeError::InvalidRequest {
                reason: why.to_string(),
            })?;
        let program = self.inner.locate(&invocation.program).ok_or_else(|| {
            let program = invocation.program.display().to_string();
            let hint = invocation
                .install_hint
                .clone()
                .unwrap_or_else(|| format!("install {program} or put it on PATH"));
            ForgeError::ExecutableNotFound { program, hint }
        })?;
        let (mut env, _dropped) = confined_env(
            &invocation.env,
            std::env::vars(),
            &confinement.credentials,
            &self.config.settings.env_pass,
        );
        // The state directories the CLI's environment names (a provider's `env`, gemini's
        // view of the user's home, a `CODEX_HOME` forge itself was given): the CLI was told
        // to write there. Not for the code it runs.
        let named = if confinement.cli_state_from_env {
            state_dirs_named(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        } else {
            Vec::new()
        };
        let confinement = named
            .into_iter()
            .fold(confinement, Confinement::with_writable);
        let confinement = settle(confinement)?;
        let home = self
            .config
            .home
            .clone()
            .or_else(|| std::env::var_os("HOME").map(PathBuf::from));
        let facts = gather(
            &confinement.work_tree,
            &program,
            home,
            invocation.env.set.get("HOME").map(PathBuf::from),
            &self.config.forge_private,
        );
        let mut mounts = fs_plan(&confinement, &facts);
        let network = self.network.as_ref().map(|n| n.inside());
        if let Some((_, _, sockets)) = &network {
            mounts.push(forge_domain::sandbox::Mount::Writable(sockets.clone()));
        }
        let mut args = bwrap_args(&mounts, &kind_of, &invocation.cwd, network.is_some())?;
        // The private /tmp: whatever TMPDIR said outside is not writable inside.
        env.insert("TMPDIR".to_owned(), "/tmp".to_owned());
        let mut outer = vec![
            "--ignore-signal=INT,TERM".to_owned(),
            text(&mechanism.bwrap),
        ];
        outer.append(&mut args);
        outer.push("--".to_owned());
        outer.push(text(&mechanism.env));
        outer.push("--default-signal=INT,TERM".to_owned());
        if let Some((prefix, inside_env, _)) = network {
            outer.extend(prefix);
            env.extend(inside_env);
        }
        outer.push(text(&program));
        outer.extend(invocation.args.iter().cloned());
        Ok(Invocation {
            program: mechanism.env.clone(),
            args: outer,
            env: EnvSpec {
                inherit: false,
                set: env,
                remove: Vec::new(),
            },
            ..invocation
        })
    }
}

/// Absolute, existing paths: the work tree canonical, the writable directories created.
fn settle(mut confinement: Confinement) -> Result<Confinement, ForgeError> {
    confinement.work_tree = canonical(&confinement.work_tree);
    for dir in &mut confinement.writable {
        std::fs::create_dir_all(&*dir)
            .map_err(|err| ForgeError::io(format!("creating {}", dir.display()), err))?;
        *dir = canonical(dir);
    }
    Ok(confinement)
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

fn text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[async_trait]
impl ProcessRunner for SandboxedRunner {
    async fn spawn(
        &self,
        invocation: Invocation,
        options: SpawnOptions,
    ) -> Result<Box<dyn RunningProcess>, ForgeError> {
        let invocation = self.wrap(invocation).await?;
        self.inner.spawn(invocation, options).await
    }

    async fn output(
        &self,
        invocation: Invocation,
        timeout: Duration,
    ) -> Result<CapturedOutput, ForgeError> {
        let invocation = self.wrap(invocation).await?;
        self.inner.output(invocation, timeout).await
    }

    async fn output_until(
        &self,
        invocation: Invocation,
        timeout: Duration,
        enough: &(dyn for<'a> Fn(&'a str) -> bool + Send + Sync),
    ) -> Result<CapturedOutput, ForgeError> {
        let invocation = self.wrap(invocation).await?;
        self.inner.output_until(invocation, timeout, enough).await
    }

    fn locate(&self, program: &Path) -> Option<PathBuf> {
        self.inner.locate(program)
    }

    fn sandbox(&self) -> Option<String> {
        if self.config.settings.mode == SandboxMode::Off {
            return Some("off".to_owned());
        }
        let network = if self.network.is_some() {
            "network through forge's egress"
        } else {
            "network not confined"
        };
        Some(match self.mechanism.get() {
            Some(Ok(m)) => format!("on ({}; {network})", m.version),
            _ => format!("on ({network})"),
        })
    }

    async fn end_orphans_of_finished_runs(&self) -> Vec<EndedOrphan> {
        self.inner.end_orphans_of_finished_runs().await
    }
}
