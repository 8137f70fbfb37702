//! `detect`'s common steps: locate the configured binary, start a [`Detection`], run
//! `--version` through the [`ProcessRunner`] port and record what it says.
//!
//! Each adapter keeps its own hint texts, probe environment and authentication checks; these
//! helpers only do what all three did the same way.

use std::path::{Path, PathBuf};
use std::time::Duration;

use forge_domain::ForgeError;
use forge_ports::{CapturedOutput, Detection, Invocation, ProcessRunner, ProviderSettings};
use semver::Version;

/// Locates the configured binary (or `default_binary`) and starts the detection.
///
/// `Ok((detection, path))` with `path` recorded in the detection; `Err(detection)` when the
/// binary is not found, for the adapter to add its install hint to.
///
/// # Errors
/// The detection so far when the binary cannot be located.
#[expect(
    clippy::result_large_err,
    reason = "called once per `detect`; both arms hand the same detection on, boxing buys nothing"
)]
pub fn start_detection(
    provider_id: &str,
    settings: &ProviderSettings,
    default_binary: &str,
    supported_range: &str,
    runner: &dyn ProcessRunner,
) -> Result<(Detection, PathBuf), Detection> {
    let binary = settings
        .binary
        .clone()
        .unwrap_or_else(|| PathBuf::from(default_binary));
    let mut det = Detection {
        provider: provider_id.to_owned(),
        binary: binary.to_string_lossy().into_owned(),
        supported_range: supported_range.to_owned(),
        ..Detection::default()
    };
    let Some(path) = runner.locate(&binary) else {
        return Err(det);
    };
    det.path = Some(path.clone());
    Ok((det, path))
}

/// A short probe of `path` run in `cwd` with the provider's configured environment, so it
/// sees what runs see. Adapters add their own variables on top.
pub fn probe_invocation(
    path: &Path,
    args: &[&str],
    cwd: PathBuf,
    settings: &ProviderSettings,
    install_hint: &str,
) -> Invocation {
    let mut inv = Invocation::new(path, args.iter().map(|a| (*a).to_owned()).collect(), cwd);
    inv.env
        .set
        .extend(settings.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    inv.install_hint = Some(install_hint.to_owned());
    inv
}

/// What running `<cli> --version` told.
#[derive(Debug)]
pub enum VersionProbe {
    /// It ran and printed a version.
    Read(Version),
    /// It ran but printed no version the adapter could read.
    Unreadable(CapturedOutput),
    /// The binary vanished between `locate` and the run.
    NotFound(ForgeError),
    /// Any other failure (timeout, I/O).
    Failed(ForgeError),
}

/// Runs the `--version` `invocation` and reads the version with `parse` (which chooses
/// stdout, stderr or both, and how strictly).
pub async fn probe_version(
    runner: &dyn ProcessRunner,
    invocation: Invocation,
    timeout: Duration,
    parse: impl Fn(&CapturedOutput) -> Option<Version>,
) -> VersionProbe {
    match runner.output(invocation, timeout).await {
        Ok(out) => match parse(&out) {
            Some(version) => VersionProbe::Read(version),
            None => VersionProbe::Unreadable(out),
        },
        Err(e @ ForgeError::ExecutableNotFound { .. }) => VersionProbe::NotFound(e),
        Err(e) => VersionProbe::Failed(e),
    }
}

/// Records `version` and whether it is `supported`, with the adapter's hint when it is not.
pub fn record_version(
    det: &mut Detection,
    version: &Version,
    supported: bool,
    unsupported_hint: impl FnOnce() -> String,
) {
    if !supported {
        det.hints.push(unsupported_hint());
    }
    det.version = Some(version.to_string());
    det.version_supported = Some(supported);
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use forge_ports::{RunningProcess, SpawnOptions};

    use super::*;
    use crate::version::parse_version;

    /// Locates only `/bin/fake`; `output` answers with the queued result.
    struct Runner(Mutex<Option<Result<CapturedOutput, ForgeError>>>);

    #[async_trait::async_trait]
    impl ProcessRunner for Runner {
        async fn spawn(
            &self,
            _: Invocation,
            _: SpawnOptions,
        ) -> Result<Box<dyn RunningProcess>, ForgeError> {
            unreachable!("detection only captures output")
        }
        async fn output(&self, _: Invocation, _: Duration) -> Result<CapturedOutput, ForgeError> {
            self.0.lock().unwrap().take().unwrap()
        }
        fn locate(&self, program: &Path) -> Option<PathBuf> {
            (program == Path::new("fake")).then(|| PathBuf::from("/bin/fake"))
        }
    }

    fn out(stdout: &str) -> CapturedOutput {
        CapturedOutput {
            code: Some(0),
            stdout: stdout.to_owned(),
            stderr: String::new(),
        }
    }

    #[test]
    fn detection_starts_with_the_located_binary() {
        let runner = Runner(Mutex::new(None));
        let mut settings = ProviderSettings::default();
        let (det, path) = start_detection("p", &settings, "fake", ">=1", &runner).unwrap();
        assert_eq!(path, Path::new("/bin/fake"));
        assert_eq!(
            (
                det.provider.as_str(),
                det.binary.as_str(),
                det.supported_range.as_str()
            ),
            ("p", "fake", ">=1")
        );
        assert_eq!(det.path.as_deref(), Some(path.as_path()));
        settings.binary = Some("missing".into());
        let det = start_detection("p", &settings, "fake", ">=1", &runner).unwrap_err();
        assert_eq!((det.binary.as_str(), det.path), ("missing", None));
    }

    #[test]
    fn the_version_probe_sorts_its_outcomes() {
        let check = |answer: Result<CapturedOutput, ForgeError>, want: &str| {
            let runner = Runner(Mutex::new(Some(answer)));
            let inv = probe_invocation(
                Path::new("/bin/fake"),
                &["--version"],
                PathBuf::from("/"),
                &ProviderSettings::default(),
                "install it",
            );
            let got = futures::executor::block_on(probe_version(
                &runner,
                inv,
                Duration::from_secs(1),
                |o: &CapturedOutput| parse_version(&o.stdout),
            ));
            let got = match got {
                VersionProbe::Read(v) => format!("read {v}"),
                VersionProbe::Unreadable(o) => format!("unreadable {:?}", o.stdout),
                VersionProbe::NotFound(_) => "not found".to_owned(),
                VersionProbe::Failed(e) => format!("failed {e}"),
            };
            assert_eq!(got, want);
        };
        check(Ok(out("fake 1.2.3\n")), "read 1.2.3");
        check(Ok(out("no version")), "unreadable \"no version\"");
        check(
            Err(ForgeError::ExecutableNotFound {
                program: "fake".into(),
                hint: "install it".into(),
            }),
            "not found",
        );
    }

    #[test]
    fn unsupported_versions_get_the_adapters_hint() {
        let mut det = Detection::default();
        record_version(&mut det, &Version::new(1, 2, 3), false, || "upgrade".into());
        assert_eq!(det.version.as_deref(), Some("1.2.3"));
        assert_eq!(det.version_supported, Some(false));
        assert_eq!(det.hints, ["upgrade"]);
        record_version(&mut det, &Version::new(2, 0, 0), true, || unreachable!());
        assert_eq!(det.hints.len(), 1);
    }
}
