//! Which persona suits a task: the one whose keywords the task mentions most.

use super::config::PersonaConfig;

/// The recommended persona's name: most keyword hits (whole words, any case) wins, the
/// earlier-listed persona on a tie, the default when nothing matches.
pub fn recommend_persona<'a>(config: &'a PersonaConfig, task: &str) -> &'a str {
    let words = words(task);
    let mut best: Option<(&str, usize)> = None;
    for persona in &config.personas {
        let hits = persona
            .keywords
            .iter()
            .filter(|k| contains_phrase(&words, &self::words(k)))
            .count();
        if hits > 0 && best.is_none_or(|(_, b)| hits > b) {
            best = Some((&persona.name, hits));
        }
    }
    best.map_or(config.default_persona.as_str(), |(name, _)| name)
}

/// Lower-case words (letters, digits, `_` and `-` kept together).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `phrase` (one or more words) occurs in `words` as consecutive whole words.
fn contains_phrase(words: &[String], phrase: &[String]) -> bool {
    !phrase.is_empty() && words.windows(phrase.len()).any(|w| w == phrase)
}
