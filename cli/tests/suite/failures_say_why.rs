//! The invariant of every result, for every provider: a result that is not a success carries
//! at least one error saying why; and a run the CLI reported successful stays a success when
//! its exit code is unknown (offline decoding of a transcript without its `.meta.json`).
//! Checked over every recorded transcript and mutated ones (a line broken, cut or dropped),
//! each with a spread of exits.

use forge_app::decode_transcript;
use forge_domain::{ExecutionRequest, ExecutionResult, ExecutionStatus, ProviderId};
use forge_ports::{ProcessExit, ProviderSettings};
use forge_testkit::props::{edits, fixture_runs, mutated_run};
use proptest::prelude::*;

const PROVIDERS: [&str; 3] = ["claude", "codex", "gemini"];

/// Exits a run may end with: unknown (offline), clean, failing, usage, signals, gemini's own.
fn exits() -> Vec<Option<ProcessExit>> {
    let exit = |code: Option<i32>, stderr: &str| ProcessExit {
        code,
        stderr_tail: stderr.to_owned(),
        ..ProcessExit::default()
    };
    vec![
        None,
        Some(exit(Some(0), "")),
        Some(exit(Some(1), "")),
        Some(exit(Some(1), "Error: something broke\n")),
        Some(exit(Some(2), "")),
        Some(exit(Some(42), "")),
        Some(exit(Some(130), "")),
        Some(exit(Some(143), "")),
        Some(exit(None, "")),
    ]
}

fn decode(provider: &str, lines: &[String], exit: Option<ProcessExit>) -> ExecutionResult {
    let id = ProviderId::new(provider).unwrap();
    let built = forge_cli::registry()
        .build(&id, ProviderSettings::default())
        .unwrap();
    let request = ExecutionRequest::new(id.clone(), "p", "<WORKDIR>");
    let text = lines.join("\n");
    decode_transcript(id, built.decoder(&request), &text, exit, &mut drop)
}

fn says_why(result: &ExecutionResult) -> Result<(), String> {
    if result.status != ExecutionStatus::Success && result.errors.is_empty() {
        return Err(format!("status {:?} with no error", result.status));
    }
    if result
        .errors
        .iter()
        .any(|e| e.to_string().trim().is_empty())
    {
        return Err("an empty error".into());
    }
    Ok(())
}

#[test]
fn every_recorded_run_that_is_not_a_success_says_why() {
    for provider in PROVIDERS {
        let runs = fixture_runs(provider);
        assert!(runs.len() >= 3, "{provider}: fixtures missing");
        for run in &runs {
            for exit in exits() {
                let code = exit.as_ref().map(|e| e.code);
                let result = decode(provider, run, exit);
                if let Err(why) = says_why(&result) {
                    panic!("{provider} exit {code:?}: {why}: {:?}", run.first());
                }
            }
        }
    }
}

/// The CLI's own verdict survives an unknown exit: every recorded success decoded without
/// its exit code is a success with no error.
#[test]
fn a_reported_success_with_an_unknown_exit_stays_a_success() {
    for provider in PROVIDERS {
        for run in fixture_runs(provider) {
            let known = decode(provider, &run, exits()[1].clone());
            if known.status != ExecutionStatus::Success {
                continue;
            }
            let offline = decode(provider, &run, None);
            assert_eq!(offline.status, ExecutionStatus::Success, "{provider}");
            assert!(
                offline.errors.is_empty(),
                "{provider}: {:?}",
                offline.errors
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn mutated_runs_that_are_not_a_success_say_why(
        provider in prop::sample::select(PROVIDERS.to_vec()),
        pick in any::<prop::sample::Index>(),
        edits in edits(),
        exit in prop::sample::select(exits()),
        drop_from in prop::option::of(any::<prop::sample::Index>()),
    ) {
        let runs = fixture_runs(provider);
        let mut run = mutated_run(&runs, pick, &edits);
        // A run cut off before its end.
        if let Some(at) = drop_from {
            let at = at.index(run.len());
            run.truncate(at.max(1));
        }
        let result = decode(provider, &run, exit);
        prop_assert!(says_why(&result).is_ok(), "{provider}: {:?}", says_why(&result));
    }
}
