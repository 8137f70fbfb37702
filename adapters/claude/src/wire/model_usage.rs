//! `modelUsage` and `model_usage_since_last_result` of a `result` line: counters and cost per
//! model (camelCase), read leniently and summed over the models.
//!
//! On `--resume`, `modelUsage` (like `total_cost_usd`) is the session's running total, while
//! `model_usage_since_last_result` (2.1.x) covers this process only: the run's own figures.

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess};

use super::lenient::{F64, Leaf, Obj, U64, deserialize_leaf};

/// One model's entry.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
struct ModelCounters {
    #[serde(rename = "inputTokens")]
    input_tokens: U64,
    #[serde(rename = "outputTokens")]
    output_tokens: U64,
    #[serde(rename = "cacheReadInputTokens")]
    cache_read_tokens: U64,
    #[serde(rename = "cacheCreationInputTokens")]
    cache_write_tokens: U64,
    #[serde(rename = "costUSD")]
    cost_usd: F64,
}

/// Every model's counters added up; `cost_usd` is `None` when no model carried a cost.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct PerModelTotals {
    pub usage: forge_domain::Usage,
    pub cost_usd: Option<f64>,
    /// How many model entries were read (0: the field was absent or not an object).
    pub models: u32,
}

impl<'de> Leaf<'de> for PerModelTotals {
    fn from_map<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut totals = PerModelTotals::default();
        while let Some((_, entry)) = map.next_entry::<IgnoredAny, Obj<ModelCounters>>()? {
            let Some(c) = entry.0 else { continue };
            let u = &mut totals.usage;
            u.input_tokens += c.input_tokens.get().unwrap_or(0);
            u.output_tokens += c.output_tokens.get().unwrap_or(0);
            u.cache_read_tokens += c.cache_read_tokens.get().unwrap_or(0);
            u.cache_write_tokens += c.cache_write_tokens.get().unwrap_or(0);
            if let Some(cost) = c.cost_usd.0 {
                *totals.cost_usd.get_or_insert(0.0) += cost;
            }
            totals.models += 1;
        }
        Ok(totals)
    }
}

impl<'de> Deserialize<'de> for PerModelTotals {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize_leaf(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_are_summed_and_other_shapes_read_as_nothing() {
        let check = |json: &str, want: (u64, u64, Option<f64>, u32)| {
            let t: PerModelTotals = serde_json::from_str(json).expect("valid json");
            assert_eq!(
                (
                    t.usage.input_tokens,
                    t.usage.output_tokens,
                    t.cost_usd,
                    t.models
                ),
                want,
                "{json}"
            );
        };
        check(
            r#"{"a":{"inputTokens":10,"outputTokens":2,"costUSD":0.5},"b":{"inputTokens":1,"costUSD":0.25}}"#,
            (11, 2, Some(0.75), 2),
        );
        check(r#"{"a":{"inputTokens":3}}"#, (3, 0, None, 1));
        check(r#"{"a":"x","b":{"inputTokens":"7"}}"#, (0, 0, None, 1));
        check("[]", (0, 0, None, 0));
        check("null", (0, 0, None, 0));
        check("{}", (0, 0, None, 0));
    }
}
