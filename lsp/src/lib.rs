//! folio-lsp: the language server over folio-core (`folio lsp`).
//!
//! [`server`] dispatches, [`session`] holds the state and applies changes in order,
//! [`convert`] is the only place that sees LSP positions, and [`handlers`] has one
//! module per feature. Stdout is the wire: logs go to stderr through `tracing`.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod convert;
pub mod handlers;
pub mod server;
pub mod session;

pub use server::Backend;
use tower_lsp_server::{ClientSocket, LspService, Server};

/// A language server service and its client socket, for in-process use (tests,
/// benchmarks) or for [`serve`].
pub fn service() -> (LspService<Backend>, ClientSocket) {
    LspService::new(Backend::new)
}

/// Serves LSP over any byte streams until the client sends `exit`.
///
/// Requests and notifications are handled one at a time (concurrency level 1), so
/// document changes apply strictly in the order received.
pub async fn serve<I, O>(input: I, output: O)
where
    I: tokio::io::AsyncRead + Unpin,
    O: tokio::io::AsyncWrite,
{
    let (service, socket) = service();
    Server::new(input, output, socket).concurrency_level(1).serve(service).await;
}

/// Runs the server over stdin and stdout on a new Tokio runtime.
pub fn run_stdio() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(serve(tokio::io::stdin(), tokio::io::stdout()));
    Ok(())
}
