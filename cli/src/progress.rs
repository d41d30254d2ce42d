//! A spinner on stderr for long work, only when stderr is a terminal (a pipe, a file and
//! `--json` stay quiet); a continuation's shows its events and bytes as they go.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{HumanBytes, HumanCount, ProgressBar, ProgressStyle};

pub struct Progress(Option<ProgressBar>);

impl Progress {
    /// No progress shown (`--json`: a program reads the output).
    pub fn none() -> Progress {
        Progress(None)
    }

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

    /// Runs `continue_it` (a continuation) showing the events it hands to the writer and the
    /// bytes written so far beside `message`, as the engine reports them.
    pub fn continuation<R>(
        &self,
        message: &str,
        source_len: Option<u64>,
        continue_it: impl FnOnce() -> R,
    ) -> R {
        self.step(message);
        let Some(bar) = self.0.clone() else {
            return continue_it();
        };
        let message = message.to_owned();
        let of = source_len.map_or(String::new(), |len| {
            format!(" (the source is {})", HumanBytes(len))
        });
        handoff_host::continuation::with_progress(
            move |p| {
                bar.set_message(format!(
                    "{message}: {} events, {} written{of}",
                    HumanCount(p.events),
                    HumanBytes(p.written_bytes)
                ))
            },
            continue_it,
        )
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
