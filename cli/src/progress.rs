//! A spinner on stderr for long work, only when stderr is a terminal.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

pub struct Progress(Option<ProgressBar>);

impl Progress {
    pub fn start(message: &str) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress(None);
        }
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})").expect("valid template"),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        bar.set_message(message.to_owned());
        Progress(Some(bar))
    }

    pub fn step(&self, message: &str) {
        if let Some(bar) = &self.0 {
            bar.set_message(message.to_owned());
        }
        tracing::info!("{message}");
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}
