//! Secrets out of every text of the outcome: what the agent wrote may quote a key the rules
//! found (the rules themselves only name it).

use forge_domain::Redactor;
use forge_domain::review::ReviewOutcome;

pub fn outcome(redactor: &Redactor, mut outcome: ReviewOutcome) -> ReviewOutcome {
    let mask = |text: &mut String| {
        if redactor.has_secret(text) {
            *text = redactor.redact(text).into_owned();
        }
    };
    for placed in &mut outcome.findings {
        let f = &mut placed.finding;
        mask(&mut f.path);
        mask(&mut f.title);
        mask(&mut f.body);
        if let Some(s) = f.suggestion.as_mut() {
            mask(s);
        }
    }
    for rejected in &mut outcome.rejected {
        mask(&mut rejected.reason);
        mask(&mut rejected.entry);
    }
    outcome.notices.iter_mut().for_each(mask);
    if let Some(raw) = outcome.raw_answer.as_mut() {
        mask(raw);
    }
    outcome
}
