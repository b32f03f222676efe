//! Progress shown on a terminal only; silent when output goes to a file or a pipe.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar counting to `total`, or a hidden one off a terminal.
pub(crate) fn bar(total: u64, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template(&format!(
        "{what} {{bar:40}} {{pos}}/{{len}} ({{per_sec}}, {{eta}} left)"
    )) {
        bar.set_style(style);
    }
    bar
}

/// A one-line status that can be rewritten, or a hidden one off a terminal.
pub(crate) fn line() -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let line = ProgressBar::new_spinner();
    line.enable_steady_tick(Duration::from_millis(200));
    line
}
