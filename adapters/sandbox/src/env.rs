//! The environment a confined process starts with: forge's own, as the invocation changes
//! it, through the domain's filter, and passed explicitly (nothing inherited).

use std::collections::BTreeMap;

use forge_domain::sandbox::{EnvVerdict, env_verdict};
use forge_ports::EnvSpec;

/// The variables kept, and the names dropped (for the run's report; never their values).
pub fn confined_env(
    spec: &EnvSpec,
    process_env: impl IntoIterator<Item = (String, String)>,
    credentials: &[String],
    env_pass: &[String],
) -> (BTreeMap<String, String>, Vec<String>) {
    let mut all: BTreeMap<String, String> = if spec.inherit {
        process_env.into_iter().collect()
    } else {
        BTreeMap::new()
    };
    for name in &spec.remove {
        all.remove(name);
    }
    all.extend(spec.set.iter().map(|(k, v)| (k.clone(), v.clone())));
    let mut dropped = Vec::new();
    all.retain(|name, _| match env_verdict(name, credentials, env_pass) {
        EnvVerdict::Keep | EnvVerdict::Credential => true,
        EnvVerdict::DropForge | EnvVerdict::DropSecret => {
            dropped.push(name.clone());
            false
        }
    });
    (all, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn inherited_secrets_and_forge_own_are_dropped_the_set_ones_filtered_too() {
        let mut spec = EnvSpec::default();
        spec.set.insert("IS_SANDBOX".into(), "1".into());
        spec.set.insert("MY_TOKEN".into(), "t".into());
        spec.remove.push("OLDPWD".into());
        let process = vars(&[
            ("PATH", "/bin"),
            ("OLDPWD", "/x"),
            ("AWS_SECRET_ACCESS_KEY", "s"),
            ("ANTHROPIC_API_KEY", "k"),
            ("FORGE_QUEUE_URL", "postgres://u:pw@h/db"),
            ("NPM_TOKEN", "n"),
        ]);
        let (env, mut dropped) = confined_env(
            &spec,
            process,
            &["ANTHROPIC_API_KEY".to_owned()],
            &["NPM_TOKEN".to_owned()],
        );
        let kept: Vec<_> = env.keys().map(String::as_str).collect();
        assert_eq!(
            kept,
            ["ANTHROPIC_API_KEY", "IS_SANDBOX", "NPM_TOKEN", "PATH"]
        );
        dropped.sort();
        assert_eq!(
            dropped,
            ["AWS_SECRET_ACCESS_KEY", "FORGE_QUEUE_URL", "MY_TOKEN"]
        );
    }

    #[test]
    fn nothing_is_inherited_when_the_invocation_clears_the_environment() {
        let spec = EnvSpec {
            inherit: false,
            ..EnvSpec::default()
        };
        let (env, _) = confined_env(&spec, vars(&[("PATH", "/bin")]), &[], &[]);
        assert!(env.is_empty());
    }
}
