//! A run's own cost from a `result` line, also on `--resume`, where `total_cost_usd` and
//! `modelUsage` are the session's running totals (earlier runs included) while `usage` stays
//! this run's.
//!
//! In order: the CLI's figure for this process (`model_usage_since_last_result`, reported);
//! for a run that does not resume, `total_cost_usd` (reported: the session is the run); for a
//! resumed run without the former, the session's cost per token applied to this run's
//! `usage` (derived). Otherwise `None`, and the caller prices the run's tokens from the
//! pricing table (estimated). Never the running total.

use forge_domain::{CostSource, Usage};

use crate::wire::model_usage::PerModelTotals;

/// What a `result` line says about cost.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CostFacts<'a> {
    pub resumed: bool,
    /// `usage`: the run's main loop.
    pub run_usage: Option<&'a Usage>,
    /// `total_cost_usd`.
    pub total_cost_usd: Option<f64>,
    /// `modelUsage`.
    pub session: PerModelTotals,
    /// `model_usage_since_last_result`.
    pub since_last_result: PerModelTotals,
}

/// The run's cost and where it came from (`None`: not known from the line).
pub(crate) fn run_cost(facts: &CostFacts<'_>) -> Option<(f64, CostSource)> {
    if let Some(cost) = facts.since_last_result.cost_usd {
        return Some((cost, CostSource::Reported));
    }
    if !facts.resumed {
        return facts.total_cost_usd.map(|c| (c, CostSource::Reported));
    }
    let session_cost = facts.session.cost_usd.or(facts.total_cost_usd)?;
    let session_weight = weight(&facts.session.usage);
    if facts.session.models == 0 || session_weight <= 0.0 {
        return None;
    }
    let share = (weight(facts.run_usage?) / session_weight).min(1.0);
    Some((session_cost * share, CostSource::Derived))
}

/// Tokens in input-token equivalents at Anthropic's fixed ratios between the classes (the
/// same for every Claude model): output 5×, cache reads 0.1×, cache writes 1.25×.
fn weight(u: &Usage) -> f64 {
    u.input_tokens as f64
        + 5.0 * u.output_tokens as f64
        + 0.1 * u.cache_read_tokens as f64
        + 1.25 * u.cache_write_tokens as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        }
    }

    fn totals(input: u64, output: u64, cost: Option<f64>) -> PerModelTotals {
        PerModelTotals {
            usage: usage(input, output),
            cost_usd: cost,
            models: 1,
        }
    }

    #[test]
    fn a_resumed_run_costs_its_own_share_never_the_running_total() {
        // The recorded resume (claude 2.1.330, fake model): session 25 115 in / 13 out for
        // $0.10072, this run 12 575 in / 10 out.
        let run = usage(12_575, 10);
        let session = totals(25_115, 13, Some(0.10072));
        let check = |facts: CostFacts<'_>, want: Option<(f64, CostSource)>| {
            let got = run_cost(&facts);
            match (got, want) {
                (Some((g, gs)), Some((w, ws))) => {
                    assert!((g - w).abs() < 1e-9 && gs == ws, "{got:?} != {want:?}");
                }
                _ => assert_eq!(got.is_none(), want.is_none(), "{got:?} != {want:?}"),
            }
        };
        let resumed = CostFacts {
            resumed: true,
            run_usage: Some(&run),
            total_cost_usd: Some(0.10072),
            session,
            since_last_result: PerModelTotals::default(),
        };
        // The CLI's own per-process figure wins.
        check(
            CostFacts {
                since_last_result: totals(12_575, 10, Some(0.0505)),
                ..resumed
            },
            Some((0.0505, CostSource::Reported)),
        );
        // Without it: the session's price per token times this run's tokens.
        check(resumed, Some((0.0505, CostSource::Derived)));
        // A fresh run: the total is the run's.
        check(
            CostFacts {
                resumed: false,
                ..resumed
            },
            Some((0.10072, CostSource::Reported)),
        );
        // Look-alikes that must not fall back to the running total.
        check(
            CostFacts {
                session: PerModelTotals::default(),
                ..resumed
            },
            None,
        );
        check(
            CostFacts {
                run_usage: None,
                ..resumed
            },
            None,
        );
        check(
            CostFacts {
                session: totals(0, 0, Some(0.1)),
                ..resumed
            },
            None,
        );
    }
}
