//! The terminal's answer to a permission request (`run --permission-mode ask` on a TTY):
//! `y` allows once, `a` (always) for the session, `n [message]` denies with the message.
//! One question at a time; a request decided elsewhere first (the board, `permissions
//! allow`) is not asked, and a late answer is told the decision that stands.

use std::io::{BufRead, Write};
use std::sync::Arc;

use forge_domain::permission::{PermissionDecision, PermissionRequest, Verdict};
use forge_ports::PermissionRequests;
use tokio::sync::Mutex;

/// A typed answer: the decision and a deny's message; `None` for anything else.
pub fn parse_answer(line: &str) -> Option<(Verdict, Option<String>)> {
    let line = line.trim();
    let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let rest = rest.trim();
    match word.to_ascii_lowercase().as_str() {
        "y" | "yes" if rest.is_empty() => Some((Verdict::Allow, None)),
        "a" | "always" if rest.is_empty() => Some((Verdict::AllowSession, None)),
        "n" | "no" => Some((Verdict::Deny, (!rest.is_empty()).then(|| rest.to_owned()))),
        _ => None,
    }
}

/// Asks in the terminal, one request at a time.
#[derive(Clone)]
pub struct Prompter {
    store: Arc<dyn PermissionRequests>,
    turn: Arc<Mutex<()>>,
    name: String,
}

impl Prompter {
    pub fn new(store: Arc<dyn PermissionRequests>) -> Self {
        let name = std::env::var("USER").unwrap_or_else(|_| "terminal".to_owned());
        Self {
            store,
            turn: Arc::new(Mutex::new(())),
            name,
        }
    }

    /// Asks about `request` in the background (the run's events go on meanwhile).
    pub fn ask(&self, request: &PermissionRequest) {
        let this = self.clone();
        let request = request.clone();
        tokio::spawn(async move { this.ask_now(request).await });
    }

    async fn ask_now(self, request: PermissionRequest) {
        let _turn = self.turn.lock().await;
        loop {
            // Decided elsewhere while waiting for its turn: nothing to ask.
            match self.store.permission(&request.id).await {
                Ok(Some(now)) if now.is_pending() => {}
                _ => return,
            }
            let question = format!(
                "allow {}? y / a(lways) / n [message]: ",
                request.tool.summary()
            );
            let line = tokio::task::spawn_blocking(move || {
                let mut err = std::io::stderr();
                let _ = write!(err, "{question}");
                let _ = err.flush();
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line).map(|_| line)
            })
            .await;
            let Ok(Ok(line)) = line else { return };
            if line.is_empty() {
                // stdin closed: the request waits for an answer from elsewhere.
                return;
            }
            let Some((verdict, message)) = parse_answer(&line) else {
                continue;
            };
            let Ok(decision) = PermissionDecision::person(verdict, message, self.name.clone())
            else {
                continue;
            };
            if let Ok(Some(decided)) = self.store.decide_permission(&request.id, &decision).await
                && let Some(refusal) = decided.refusal()
            {
                let _ = writeln!(std::io::stderr(), "{refusal}");
            }
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_read_as_decisions_and_nothing_else_does() {
        let check = |line: &str, expected: Option<(Verdict, Option<&str>)>| {
            let expected = expected.map(|(v, m)| (v, m.map(str::to_owned)));
            assert_eq!(parse_answer(line), expected, "{line:?}");
        };
        check("y\n", Some((Verdict::Allow, None)));
        check(" YES ", Some((Verdict::Allow, None)));
        check("a", Some((Verdict::AllowSession, None)));
        check("always\n", Some((Verdict::AllowSession, None)));
        check("n", Some((Verdict::Deny, None)));
        check(
            "n use cargo nextest\n",
            Some((Verdict::Deny, Some("use cargo nextest"))),
        );
        check("no   not now ", Some((Verdict::Deny, Some("not now"))));
        // Look-alikes.
        check("", None);
        check("yy", None);
        check("y please", None);
        check("nope", None);
        check("allow", None);
        check("a b", None);
    }
}
