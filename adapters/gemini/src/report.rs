//! The CLI's end-of-run report as the decoder keeps it until `finish`.

use forge_domain::Usage;

use crate::cost::ModelUsage;
use crate::wire::ModelsMap;

/// The CLI's own end-of-run report (`result` event or `-o json` object).
#[derive(Debug, Clone, Default)]
pub struct RunReport {
    pub success: bool,
    pub error_type: Option<String>,
    pub error_message: Option<String>,
    pub usage: Option<Usage>,
    pub models: Vec<ModelUsage>,
    /// stream-json `stats.models`, kept as JSON until [`RunReport::resolve_models`].
    pub models_json: Option<String>,
    pub cost_usd: Option<f64>,
    pub duration_ms: Option<u64>,
}

impl RunReport {
    /// Reads the per-model stats kept as JSON (once; a no-op afterwards).
    pub fn resolve_models(&mut self) -> &[ModelUsage] {
        if let Some(json) = self.models_json.take() {
            if let Ok(ModelsMap(models)) = serde_json::from_str::<ModelsMap<'_>>(&json) {
                self.models = models
                    .into_iter()
                    .map(|(model, m)| ModelUsage {
                        model: model.into_owned(),
                        usage: Usage {
                            input_tokens: m.input_tokens,
                            output_tokens: m.output_tokens,
                            cache_read_tokens: m.cached,
                            ..Usage::default()
                        },
                    })
                    .collect();
            }
        }
        &self.models
    }
}
