//! `folio lsp`: the language server over stdin and stdout.

use std::process::ExitCode;

use anyhow::Result;

/// Serves LSP on stdio until the client exits.
pub fn run() -> Result<ExitCode> {
    folio_lsp::run_stdio()?;
    Ok(ExitCode::SUCCESS)
}
