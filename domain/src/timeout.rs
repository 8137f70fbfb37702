//! Which timeout applies: the most specific one that is set.

/// Timeouts from each level, most specific first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TimeoutSources {
    /// On this one call (`ExecutionRequest::timeout_ms`, `--timeout`).
    pub call_ms: Option<u64>,
    /// Configured on the agent (`CodeAgent::builder().timeout(..)`).
    pub agent_ms: Option<u64>,
    /// The provider's own default (configuration per provider).
    pub provider_default_ms: Option<u64>,
    /// The global default.
    pub global_ms: Option<u64>,
}

/// call > agent > provider default > global; `None` means no deadline. A zero at any level
/// counts as set (an immediate deadline), not as "unset".
pub fn resolve_timeout(sources: TimeoutSources) -> Option<u64> {
    sources
        .call_ms
        .or(sources.agent_ms)
        .or(sources.provider_default_ms)
        .or(sources.global_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn most_specific_wins() {
        let all = TimeoutSources {
            call_ms: Some(1),
            agent_ms: Some(2),
            provider_default_ms: Some(3),
            global_ms: Some(4),
        };
        assert_eq!(resolve_timeout(all), Some(1));
        assert_eq!(
            resolve_timeout(TimeoutSources {
                call_ms: None,
                ..all
            }),
            Some(2)
        );
        assert_eq!(
            resolve_timeout(TimeoutSources {
                call_ms: None,
                agent_ms: None,
                ..all
            }),
            Some(3)
        );
        assert_eq!(
            resolve_timeout(TimeoutSources {
                global_ms: Some(4),
                ..TimeoutSources::default()
            }),
            Some(4)
        );
        assert_eq!(resolve_timeout(TimeoutSources::default()), None);
    }
}
