//! [`SandboxedRunner`]: the [`ProcessRunner`] decorator that confines what must be confined.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use forge_domain::sandbox::{
    Confinement, SandboxMode, SandboxSettings, fs_plan, state_dirs_named, toolchain_caches_named,
};
use forge_domain::{EndedOrphan, ForgeError};
use forge_ports::{
    CapturedOutput, EgressSession, EnvSpec, Invocation, NetworkConfinement, ProcessRunner,
    RunningProcess, SandboxDescription, SandboxNetwork, SpawnOptions,
};
use futures::FutureExt as _;
use tokio::sync::OnceCell;

use crate::args::{bwrap_args, kind_of};
use crate::env::confined_env;
use crate::facts::{Run, gather};
use crate::mechanism::{Mechanism, Unavailable, probe};
use crate::process::ConfinedProcess;
use crate::protected::MissingProtected;

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
    /// Where a successful probe of the mechanism is kept between forge processes; `None`:
    /// probed by every process.
    pub probe_kept: Option<PathBuf>,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            settings: SandboxSettings::default(),
            bwrap: PathBuf::from("bwrap"),
            forge_private: Vec::new(),
            home: None,
            probe_kept: None,
        }
    }
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

    /// Whether the network is confined too (an egress point is plugged in).
    pub fn network_confined(&self) -> bool {
        self.network.is_some()
    }

    /// The mechanism, probed once per process.
    ///
    /// # Errors
    /// [`Unavailable`] when this machine cannot confine a run.
    pub async fn mechanism(&self) -> Result<&Mechanism, Unavailable> {
        self.mechanism
            .get_or_init(|| {
                probe(
                    self.inner.as_ref(),
                    &self.config.bwrap,
                    self.config.probe_kept.as_deref(),
                )
            })
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
        // The egress point, if any, stops here: for inspecting the command line only.
        Ok(self.confine(invocation).await?.invocation)
    }

    /// [`SandboxedRunner::wrap`], with what must live as long as the wrapped command: the
    /// egress point it needs running, the protected paths to look at when it ends.
    ///
    /// # Errors
    /// As [`SandboxedRunner::wrap`]; [`ForgeError::Io`] when the egress point cannot start.
    async fn confine(&self, invocation: Invocation) -> Result<Confined, ForgeError> {
        let unconfined = |invocation| Confined {
            invocation,
            egress: None,
            watch: None,
        };
        let Some(confinement) = invocation.confinement.clone() else {
            return Ok(unconfined(invocation));
        };
        if self.config.settings.mode == SandboxMode::Off {
            return Ok(unconfined(invocation));
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
        let mut confinement = named
            .into_iter()
            .fold(confinement, Confinement::with_writable);
        // The package caches code's environment puts outside the home (`CARGO_HOME`…):
        // writable when present, as those in the home are.
        if confinement.caches_from_env {
            confinement.user_state.extend(toolchain_caches_named(
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            ));
        }
        let confinement = settle(confinement)?;
        let home = self
            .config
            .home
            .clone()
            .or_else(|| std::env::var_os("HOME").map(PathBuf::from));
        let (egress, cli_args) = match &self.network {
            Some(network) => {
                let plan = crate::net::plan(
                    &confinement,
                    &mut env,
                    &invocation.files,
                    &self.config.settings.reachable_hosts(),
                )?;
                (Some(network.start(&plan)?), plan.cli_args)
            }
            None => (None, Vec::new()),
        };
        // The bridge is a program the sandbox runs too (forge itself, or the forge beside a
        // program built on its library): visible wherever it lies, under /tmp included.
        let bridge = egress
            .as_ref()
            .and_then(|e| e.bridge_args().into_iter().next())
            .map(PathBuf::from);
        let run = Run {
            work_tree: &confinement.work_tree,
            program: &program,
            also_runs: bridge.as_deref(),
            config_reads: &confinement.config_reads,
        };
        let facts = gather(
            &run,
            home,
            invocation.env.set.get("HOME").map(PathBuf::from),
            &self.config.forge_private,
        );
        let mut mounts = fs_plan(&confinement, &facts);
        let watch = MissingProtected::before(&confinement);
        if let Some(egress) = &egress {
            mounts.push(forge_domain::sandbox::Mount::Writable(egress.socket_dir()));
        }
        let mut args = bwrap_args(&mounts, &kind_of, &invocation.cwd, egress.is_some())?;
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
        if let Some(egress) = &egress {
            outer.extend(egress.bridge_args());
            env.extend(egress.inside_env());
        }
        outer.push(text(&program));
        outer.extend(cli_args);
        outer.extend(invocation.args.iter().cloned());
        let wrapped = Invocation {
            program: mechanism.env.clone(),
            args: outer,
            env: EnvSpec {
                inherit: false,
                set: env,
                remove: Vec::new(),
            },
            ..invocation
        };
        Ok(Confined {
            invocation: wrapped,
            egress,
            watch: Some(watch),
        })
    }
}

/// An invocation as it is started, and what lives beside it.
struct Confined {
    invocation: Invocation,
    egress: Option<Box<dyn EgressSession>>,
    /// `None`: not confined.
    watch: Option<MissingProtected>,
}

/// A finished command's output with what its sandbox refused, told on stderr (where the
/// caller of a short command looks): its egress point's refusals once it stopped, and the
/// protected paths it created, removed.
async fn with_denials(
    out: Result<CapturedOutput, ForgeError>,
    egress: Option<Box<dyn EgressSession>>,
    watch: Option<MissingProtected>,
) -> Result<CapturedOutput, ForgeError> {
    let mut denials = Vec::new();
    if let Some(mut egress) = egress {
        let network = egress.take_denials();
        egress.shutdown().await;
        if let Some(mut network) = network {
            while let Some(Some(denial)) = network.next_denial().now_or_never() {
                denials.push(denial);
            }
        }
    }
    denials.extend(watch.map(MissingProtected::created).unwrap_or_default());
    let mut out = out?;
    for denial in denials {
        out.stderr
            .push_str(&format!("forge sandbox: {}\n", denial.describe()));
    }
    Ok(out)
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
        let Confined {
            invocation,
            egress,
            watch,
        } = self.confine(invocation).await?;
        let child = self.inner.spawn(invocation, options).await;
        let Some(watch) = watch else {
            return child;
        };
        match child {
            Ok(child) => Ok(Box::new(ConfinedProcess::new(child, egress, watch))),
            Err(e) => {
                if let Some(egress) = egress {
                    egress.shutdown().await;
                }
                Err(e)
            }
        }
    }

    async fn output(
        &self,
        invocation: Invocation,
        timeout: Duration,
    ) -> Result<CapturedOutput, ForgeError> {
        let confined = self.confine(invocation).await?;
        let out = self.inner.output(confined.invocation, timeout).await;
        with_denials(out, confined.egress, confined.watch).await
    }

    async fn output_until(
        &self,
        invocation: Invocation,
        timeout: Duration,
        enough: &(dyn for<'a> Fn(&'a str) -> bool + Send + Sync),
    ) -> Result<CapturedOutput, ForgeError> {
        let confined = self.confine(invocation).await?;
        let out = self
            .inner
            .output_until(confined.invocation, timeout, enough)
            .await;
        with_denials(out, confined.egress, confined.watch).await
    }

    fn locate(&self, program: &Path) -> Option<PathBuf> {
        self.inner.locate(program)
    }

    fn sandbox_description(&self) -> Option<SandboxDescription> {
        if self.config.settings.mode == SandboxMode::Off {
            return Some(SandboxDescription::Off);
        }
        Some(SandboxDescription::On {
            mechanism: match self.mechanism.get() {
                Some(Ok(m)) => Some(m.version.clone()),
                _ => None,
            },
            network: if self.network.is_some() {
                SandboxNetwork::Egress
            } else {
                SandboxNetwork::NotConfined
            },
        })
    }

    async fn end_orphans_of_finished_runs(&self) -> Vec<EndedOrphan> {
        self.inner.end_orphans_of_finished_runs().await
    }
}
