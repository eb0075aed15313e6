//! The `folio` command line: index, search, eval, check, outline, status, bench, lsp, bench-lsp and mcp.
//!
//! Exit codes: 0 success; 1 `folio check` found errors; 2 a fatal error (bad root,
//! unreadable configuration, database failure, bad arguments); 3 the run completed but
//! some files were skipped (each is listed on stderr with its reason).
//!
//! The clap definitions are in `cli.rs`, each command in its own file under `commands/`,
//! how an error is printed in `error.rs`, how a panic is in `panic_report.rs`, and how
//! output survives a closed pipe in `output.rs` (its `note!` writes to standard error).

#[macro_use]
mod output;
mod cli;
mod commands;
mod error;
mod panic_report;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;

use cli::Cli;

/// True for log targets of folio's own crates (`folio`, `folio_core`, `folio_lsp`,
/// `folio_mcp` and their modules).
fn is_folio_target(target: &str) -> bool {
    let krate = target.split("::").next().unwrap_or(target);
    matches!(krate, "folio" | "folio_core" | "folio_lsp" | "folio_mcp")
}

fn main() -> ExitCode {
    use tracing_subscriber::prelude::*;
    // A child started to extract one binary document (core `extract::worker`).
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(folio_core::extract::WORKER_ARG) {
        return ExitCode::from(folio_core::extract::run_worker(&args[1..]) as u8);
    }
    // Every command extracts binary documents in such children: a document that makes
    // its parser abort (an allocation refused, a stack overflow) ends the child only.
    if let Ok(exe) = std::env::current_exe() {
        folio_core::extract::use_worker(exe);
    }
    // Below info, only folio's own crates log: the protocol crates log whole messages
    // (document text) at debug and trace level, and folio's own lines never hold text
    // (docs/reliability.md "Secrets and privacy"; tests/privacy.rs).
    let no_wire = tracing_subscriber::filter::filter_fn(|meta| {
        *meta.level() <= tracing::Level::INFO || is_folio_target(meta.target())
    });
    tracing_subscriber::registry()
        .with(tracing_subscriber::EnvFilter::from_env("FOLIO_LOG"))
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::stderr().is_terminal())
                .with_filter(no_wire),
        )
        .init();
    panic_report::install();
    let cli = Cli::parse();
    match commands::run(cli.command) {
        Ok(code) => code,
        // A closed pipe (`folio search … | head`) is the reader's choice, not an error.
        Err(err) if error::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            note!("folio: error: {}", error::error_chain(&err));
            ExitCode::from(2)
        }
    }
}
