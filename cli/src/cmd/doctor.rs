//! `doctor`: is each provider's CLI installed, in the supported range and logged in; is
//! the project usable. Every failure comes with a hint a person can act on.

use std::io::{IsTerminal, Write};
use std::path::Path;

use forge_app::config::EffectiveConfig;
use forge_app::{ProviderRegistry, Runtime};
use forge_ports::{Detection, EnvSnapshot};
use serde::Serialize;

use crate::args::{ConfigFlags, DoctorArgs};
use crate::compose;
use crate::config_load::{load_config, workdir};
use crate::exit::Failure;
use crate::output::style::Style;
use crate::output::write_json_pretty;

#[derive(Debug, Serialize)]
struct Report {
    /// The provider whose usability decides the exit code.
    chosen: String,
    usable: bool,
    providers: Vec<Detection>,
    project: Vec<Check>,
}

#[derive(Debug, Serialize)]
struct Check {
    check: &'static str,
    ok: bool,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
}

pub async fn run(args: DoctorArgs) -> Result<u8, Failure> {
    let flags = ConfigFlags {
        provider: args.provider.clone(),
        workdir: args.workdir.clone(),
        binary: args.binary.clone(),
        ..ConfigFlags::default()
    };
    let config = load_config(&flags)?;
    let registry = compose::registry();
    let runtime = compose::runtime();
    let chosen = config.default_provider.value.clone();
    let names = match &args.provider {
        Some(_) => vec![chosen.clone()],
        None => forge_app::doctor::provider_names(&config, &registry),
    };
    let providers = detect(&config, &registry, &runtime, &names).await?;
    let usable = providers
        .iter()
        .find(|d| d.provider == chosen)
        .is_some_and(Detection::usable);
    let report = Report {
        chosen,
        usable,
        providers,
        project: {
            let mut checks = project_checks(&runtime, &workdir(&flags)).await;
            checks.push(sandbox_check(&workdir(&flags)).await?);
            checks
        },
    };
    let stdout = std::io::stdout();
    let style = Style::detect(stdout.is_terminal());
    let mut out = stdout.lock();
    if args.json {
        write_json_pretty(&mut out, &report)?;
    } else {
        print_human(&mut out, style, &report)?;
    }
    Ok(if report.usable { 0 } else { 1 })
}

/// What `doctor` says of each of `names` (`forge_app::doctor::detect` over this process's
/// environment).
///
/// # Errors
/// A usage failure when a provider cannot be built from its settings.
pub async fn detect(
    config: &EffectiveConfig,
    registry: &ProviderRegistry,
    runtime: &Runtime,
    names: &[String],
) -> Result<Vec<Detection>, Failure> {
    let env: EnvSnapshot = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
        .collect();
    forge_app::doctor::detect(config, registry, runtime.runner.as_ref(), names, &env)
        .await
        .map_err(|e| Failure::Usage(e.to_string()))
}

async fn project_checks(runtime: &Runtime, workdir: &Path) -> Vec<Check> {
    let mut checks = Vec::new();
    let root = match runtime.workspace.open(workdir).await {
        Ok(root) => {
            checks.push(Check {
                check: "workdir",
                ok: true,
                detail: format!("workdir {}", root.display()),
                hint: None,
            });
            root
        }
        Err(e) => {
            checks.push(Check {
                check: "workdir",
                ok: false,
                detail: e.to_string(),
                hint: Some("create the directory, or pass --workdir DIR".into()),
            });
            return checks;
        }
    };
    if let Some(vcs) = &runtime.vcs {
        let (ok, detail, hint) = match vcs.is_repository(&root).await {
            Ok(true) => (true, "inside a git work tree".to_owned(), None),
            Ok(false) => (
                false,
                "not a git repository".to_owned(),
                Some("run `git init` there: agents track and undo changes through git, and codex refuses to run outside a repository".to_owned()),
            ),
            Err(e) => (false, e.to_string(), Some("install git".to_owned())),
        };
        checks.push(Check {
            check: "git_repository",
            ok,
            detail,
            hint,
        });
    }
    let forge_dir = root.join(".forgecode");
    let (ok, detail, hint) = match probe_writable(&forge_dir) {
        Ok(()) => (true, format!("writable {}", forge_dir.display()), None),
        Err(e) => (
            false,
            format!("{}: {e}", forge_dir.display()),
            Some(format!(
                "make {} writable (run bundles are written there)",
                forge_dir.display()
            )),
        ),
    };
    checks.push(Check {
        check: "forgecode_writable",
        ok,
        detail,
        hint,
    });
    checks
}

/// The sandbox: its mechanism and version, and what it protects (issue 31).
async fn sandbox_check(workdir: &Path) -> Result<Check, Failure> {
    use forge_domain::sandbox::SandboxMode;
    // Probed afresh: doctor is where a changed machine is diagnosed.
    let mut config = crate::sandbox::config(None, workdir)?;
    config.probe_kept = None;
    let runner = crate::sandbox::runner(config);
    if runner.mode() == SandboxMode::Off {
        return Ok(Check {
            check: "sandbox",
            ok: true,
            detail: "sandbox: off ([sandbox] mode = \"off\"): agents run unconfined".to_owned(),
            hint: None,
        });
    }
    Ok(match runner.mechanism().await {
        Ok(m) => {
            let network = if runner.network_confined() {
                "network only through forge's egress"
            } else {
                "network NOT confined yet (shared with forge)"
            };
            Check {
                check: "sandbox",
                ok: true,
                detail: format!(
                    "sandbox: on, {} ({}): writes only in the work tree (its .git and dotfiles \
                     read-only), the CLI's home and a private /tmp; ~/.ssh ~/.aws ~/.config/gcloud \
                     ~/.azure ~/.kube ~/.docker ~/.gnupg ~/.netrc ~/.git-credentials and forge's \
                     config and store hidden; its own PID namespace; secret variables dropped; \
                     {network}",
                    m.version,
                    m.bwrap.display()
                ),
                hint: None,
            }
        }
        Err(why) => Check {
            check: "sandbox",
            ok: false,
            detail: format!("sandbox: unavailable: {}", why.reason),
            hint: Some(format!("{}; or --sandbox off", why.fix)),
        },
    })
}

/// Creates `.forgecode/` if needed and writes and removes a probe file in it.
fn probe_writable(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".doctor-probe-{}", std::process::id()));
    std::fs::write(&probe, b"ok")?;
    std::fs::remove_file(&probe)
}

fn print_human(out: &mut dyn Write, style: Style, report: &Report) -> std::io::Result<()> {
    let mark = |ok: bool| {
        if ok {
            style.green("✓")
        } else {
            style.red("✗")
        }
    };
    for d in &report.providers {
        let label = format!("{:<8}", d.provider);
        match &d.path {
            Some(path) => {
                let version = d.version.as_deref().unwrap_or("version unknown");
                let range = match d.version_supported {
                    Some(true) => format!("supported: {}", d.supported_range),
                    Some(false) => style.red(format!("unsupported, need {}", d.supported_range)),
                    None => format!("need {}", d.supported_range),
                };
                let auth = match d.authenticated {
                    Some(true) => "logged in".to_owned(),
                    Some(false) => style.red("not logged in"),
                    None => "login unknown".to_owned(),
                };
                writeln!(
                    out,
                    "{} {} {} {version} ({range}), {auth}",
                    style.bold(label),
                    mark(d.usable()),
                    path.display()
                )?;
            }
            None => writeln!(
                out,
                "{} {} {} not found",
                style.bold(label),
                mark(false),
                d.binary
            )?,
        }
        if let Some(detail) = &d.auth_detail {
            writeln!(out, "           {}", style.dim(detail))?;
        }
        for hint in &d.hints {
            writeln!(out, "           {} {hint}", style.dim("hint:"))?;
        }
    }
    for (i, c) in report.project.iter().enumerate() {
        let label = if i == 0 { "project " } else { "        " };
        writeln!(out, "{} {} {}", style.bold(label), mark(c.ok), c.detail)?;
        if let Some(hint) = &c.hint {
            writeln!(out, "           {} {hint}", style.dim("hint:"))?;
        }
    }
    let verdict = if report.usable {
        style.green(format!("{} is ready", report.chosen))
    } else {
        style.red(format!("{} is not usable", report.chosen))
    };
    writeln!(out, "{verdict}")
}
