//! Cost out of the box: with no model from the request or settings, the model is read from
//! the `config.toml` the run's `CODEX_HOME` holds, so the recorded run gets an estimate (or
//! names the model the pricing table lacks).

use std::collections::BTreeMap;

use forge_adapter_codex::CodexProvider;
use forge_domain::RunId;
use forge_ports::{InvocationContext, Provider};

use super::common::{decode_with, request, settings};

fn ctx(home: Option<&std::path::Path>) -> InvocationContext {
    InvocationContext {
        run_id: RunId::new("run-1").unwrap(),
        run_dir: "<WORKDIR>/.forgecode/runs/run-1".into(),
        home: home.map(std::path::Path::to_path_buf),
        in_repository: Some(false),
        resumed_usage: None,
        mcp: None,
    }
}

fn recorded_hello() -> String {
    forge_testkit::fixtures::transcripts("codex")
        .into_iter()
        .find(|t| t.scenario == "hello")
        .map(|t| t.stdout)
        .unwrap_or_else(|| panic!("no recorded codex hello"))
}

/// (config.toml of the user's home or none, model in settings, private home,
/// want model, want a cost)
type Case = (
    Option<&'static str>,
    Option<&'static str>,
    bool,
    Option<&'static str>,
    bool,
);

fn check(case: Case) {
    let (config, settings_model, private, want_model, want_cost) = case;
    let dir = tempfile::tempdir().unwrap();
    let codex_home = dir.path().join("codex-home");
    std::fs::create_dir_all(&codex_home).unwrap();
    if let Some(config) = config {
        std::fs::write(codex_home.join("config.toml"), config).unwrap();
    }
    let mut s = settings();
    s.model = settings_model.map(str::to_owned);
    let provider = CodexProvider::new(s);
    let mut req = request("Say hello.");
    let private_home = dir.path().join("run-home");
    if private {
        // A private home without the user's files: forge's own automation config only.
        std::fs::create_dir_all(&private_home).unwrap();
    } else {
        req.env = BTreeMap::from([("CODEX_HOME".to_owned(), codex_home.display().to_string())]);
    }
    let c = ctx(private.then_some(private_home.as_path()));
    provider.invocation(&req, &c).unwrap();
    let decoded = decode_with(provider.decoder(&req), &recorded_hello(), None);
    let m = &decoded.pieces.metadata;
    assert_eq!(m.model.as_deref(), want_model, "{case:?}");
    assert_eq!(
        m.cost_usd.is_some(),
        want_cost,
        "{case:?}: {:?}",
        m.cost_usd
    );
}

#[test]
fn the_users_config_names_the_model_that_prices_the_run() {
    let cases: [Case; 6] = [
        // Only the user's config: the model is read, the run priced.
        (
            Some("model = \"gpt-5.5\"\n"),
            None,
            false,
            Some("gpt-5.5"),
            true,
        ),
        // Its active profile's model.
        (
            Some("model = \"o3\"\nprofile = \"p\"\n[profiles.p]\nmodel = \"gpt-5.5\"\n"),
            None,
            false,
            Some("gpt-5.5"),
            true,
        ),
        // A model the table lacks is named, not priced (the footer says which).
        (
            Some("model = \"mystery-model\"\n"),
            None,
            false,
            Some("mystery-model"),
            false,
        ),
        // Settings win over the config.
        (
            Some("model = \"mystery-model\"\n"),
            Some("gpt-5.5"),
            false,
            Some("gpt-5.5"),
            true,
        ),
        // No model anywhere: none guessed.
        (
            Some("model_provider = \"mock\"\n"),
            None,
            false,
            None,
            false,
        ),
        (None, None, false, None, false),
    ];
    for case in cases {
        check(case);
    }
}

#[test]
fn a_private_home_without_the_users_config_names_no_model() {
    check((Some("model = \"gpt-5.5\"\n"), None, true, None, false));
}
