//! The progress bar of the long commands (index, embed, check --external): on stderr,
//! only when it is a terminal.

use std::io::IsTerminal;

/// A bar reading `<spinner> <what> <done>/<total> <unit> [=====>    ] <elapsed> <msg>`,
/// or `None` when stderr is not a terminal (a pipe or a CI log gets no bar).
pub fn bar(what: &str, unit: &str) -> Option<indicatif::ProgressBar> {
    std::io::stderr().is_terminal().then(|| {
        let unit = if unit.is_empty() {
            String::new()
        } else {
            format!(" {unit}")
        };
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template(&format!(
                "{{spinner}} {what} {{pos}}/{{len}}{unit} [{{bar:30}}] {{elapsed}} {{msg}}"
            ))
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar
    })
}

/// `bar`'s report of `done` of `total` (nothing without a bar).
pub fn report(bar: Option<&indicatif::ProgressBar>, done: u64, total: u64) {
    if let Some(bar) = bar {
        bar.set_length(total);
        bar.set_position(done);
    }
}
