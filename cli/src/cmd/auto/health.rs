//! The health check before a loop starts: every provider it will run must be usable.

use forge_app::config::EffectiveConfig;
use forge_ports::EnvSnapshot;

use crate::compose;
use crate::exit::Failure;

/// `Ok(None)` when every provider is usable, else the problems with their hints.
pub async fn check(
    config: &EffectiveConfig,
    providers: &[&str],
) -> Result<Option<String>, Failure> {
    let registry = compose::registry();
    let runtime = compose::runtime();
    let env: EnvSnapshot = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
        .collect();
    let mut problems = Vec::new();
    for name in providers {
        let provider = compose::build_provider(&registry, name, config.settings(name))
            .map_err(|e| Failure::Usage(e.to_string()))?;
        let detection = provider.detect(runtime.runner.as_ref(), &env).await;
        if !detection.usable() {
            let hints = if detection.hints.is_empty() {
                "run `forge-code-agent doctor` for details".to_owned()
            } else {
                detection.hints.join("; ")
            };
            problems.push(format!("{name} is not usable: {hints}"));
        }
    }
    Ok((!problems.is_empty()).then(|| problems.join("\n")))
}
