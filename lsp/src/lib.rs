//! folio-lsp: the language server over folio-core (`folio lsp`).
//!
//! [`server`] dispatches; [`session`] holds the state (the negotiated encoding and
//! flags, one core live model per root, the open documents) and applies changes in
//! order; `state` is what handlers and background tasks share and where mutations run;
//! [`capabilities`] negotiates; [`convert`] is the only place that sees LSP positions;
//! [`handlers`] has one module per feature; [`bridge`] serves the live bridge to `folio
//! mcp`; `custom_requests` runs `folio/search`, `folio/reindex` and `folio/status` on the
//! core host of a root (`hosts`); `progress` and
//! `watcher` report work and watch files; `startup` holds the outlines `workspace/symbol`
//! answers from while the folders load; [`guard`] keeps a failing request from taking
//! the server down. Stdout is the wire: logs go to stderr through `tracing`.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod bridge;
pub mod capabilities;
pub mod convert;
mod custom_requests;
pub mod framing;
pub mod guard;
pub mod handlers;
mod hosts;
mod interrupted;
mod order;
mod progress;
pub mod server;
pub mod session;
pub mod startup;
mod state;
mod watcher;

pub use server::{Backend, Options};
use tower_lsp_server::{ClientSocket, LspService, Server};

/// A language server service and its client socket, for in-process use (tests,
/// benchmarks) or for [`serve`].
pub fn service() -> (LspService<Backend>, ClientSocket) {
    service_with(Options::default())
}

/// [`service`] with [`Options`].
pub fn service_with(options: Options) -> (LspService<Backend>, ClientSocket) {
    LspService::build(move |client| Backend::with_options(client, options))
        .custom_method("folio/search", Backend::folio_search)
        .custom_method("folio/reindex", Backend::folio_reindex)
        .custom_method("folio/status", Backend::folio_status)
        .finish()
}

/// Serves LSP over any byte streams until the client sends `exit`.
///
/// Requests and notifications are handled one at a time in the order received, so
/// document changes apply strictly in that order; only a message about a document whose
/// large change is still being parsed waits apart, letting the messages about other
/// documents behind it go on (the `order` module).
pub async fn serve<I, O>(input: I, output: O)
where
    I: tokio::io::AsyncRead + Unpin,
    O: tokio::io::AsyncWrite,
{
    serve_with(input, output, Options::default()).await;
}

/// [`serve`] with [`Options`]. The live-bridge sockets are removed when this returns
/// (the client sent `exit` or closed the stream) or when the future is dropped.
pub async fn serve_with<I, O>(input: I, output: O, options: Options)
where
    I: tokio::io::AsyncRead + Unpin,
    O: tokio::io::AsyncWrite,
{
    let (service, socket) = service_with(options);
    // The client's frames pass the framing layer first; the server's and the layer's
    // answers reach the client through one writer.
    let (to_server, server_input) = tokio::io::duplex(1 << 16);
    let (server_output, from_server) = tokio::io::duplex(1 << 16);
    let (frames_tx, frames_rx) = tokio::sync::mpsc::unbounded_channel();
    let (replies_tx, replies_rx) = tokio::sync::mpsc::unbounded_channel();
    let serving = async {
        tokio::join!(
            Server::new(server_input, server_output, socket)
                .concurrency_level(order::IN_PROGRESS)
                .serve(order::Ordered::new(service)),
            framing::relay_server(from_server, frames_tx),
            framing::write_client(frames_rx, replies_rx, output),
        );
    };
    let reading = framing::read_client(input, to_server, replies_tx);
    tokio::pin!(serving, reading);
    // The server ends on `exit` or when its input ends (the reader ended); the reader may
    // still wait on the client's input then, which is not waited for.
    tokio::select! {
        () = &mut serving => {}
        () = &mut reading => serving.await,
    }
}

/// Runs the server over stdin and stdout on a new Tokio runtime, until the client
/// sends `exit`, closes stdin, or the process gets SIGTERM or SIGINT. In each case the
/// server is dropped before returning, which removes its live-bridge sockets.
pub fn run_stdio() -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    folio_core::heap::fix_trim_threshold();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut terminate = signal(SignalKind::terminate())?;
        let mut interrupt = signal(SignalKind::interrupt())?;
        tokio::select! {
            () = serve(tokio::io::stdin(), tokio::io::stdout()) => {}
            _ = terminate.recv() => tracing::info!("SIGTERM: stopping"),
            _ = interrupt.recv() => tracing::info!("SIGINT: stopping"),
        }
        anyhow::Ok(())
    })?;
    // Reading stdin blocks a runtime thread that cannot be interrupted; do not wait for it.
    runtime.shutdown_background();
    Ok(())
}
