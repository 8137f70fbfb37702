//! A spinner on stderr while the agent is silent; only on a terminal.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

pub struct Spinner {
    enabled: bool,
    bar: Option<ProgressBar>,
    message: String,
}

impl Spinner {
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            bar: None,
            message: String::new(),
        }
    }

    /// Shows the spinner (if enabled and hidden) with `message`.
    pub fn show(&mut self, message: &str) {
        message.clone_into(&mut self.message);
        if !self.enabled {
            return;
        }
        match &self.bar {
            Some(bar) => bar.set_message(self.message.clone()),
            None => {
                let bar = ProgressBar::new_spinner();
                if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {elapsed:.dim}") {
                    bar.set_style(style);
                }
                bar.set_message(self.message.clone());
                bar.enable_steady_tick(Duration::from_millis(100));
                self.bar = Some(bar);
            }
        }
    }

    /// Hides it before text is written to the terminal.
    pub fn hide(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.hide();
    }
}
