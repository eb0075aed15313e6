//! Accepting connections for `folio mcp --http`: `TCP_NODELAY` on each, a cap on the
//! connections open at once, and a time limit on a request's headers.
//!
//! Without the last two, a client that opens connections and sends nothing, or its
//! headers a byte at a time (a slow-header, "slowloris", attack), holds each connection
//! and a file descriptor for as long as it likes: twenty thousand of them left the server
//! unable to accept anyone. Here a connection whose request headers are not complete
//! within the limit is closed (a kept-alive connection waiting for its next request
//! counts from the end of the previous answer; a POST's body then has as long again,
//! in `sessions.rs`), and a connection accepted while the
//! cap is reached is closed at once, so the descriptors the server holds stay bounded
//! and the slots free themselves.

use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// Default of `[mcp.http] max_connections`.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;

/// The most `[mcp.http] max_connections` may be (each connection holds a file
/// descriptor; the process's limit is usually far lower).
pub const MAX_CONNECTIONS_LIMIT: usize = 1 << 20;

/// The most `[mcp.http] header_read_seconds` may be: an hour (a far larger one
/// overflowed the timer's clock).
pub const MAX_HEADER_READ_SECONDS: u64 = 3600;

/// Default of `[mcp.http] header_read_seconds`.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long shutting down waits for open connections to finish their answers.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(10);

/// How long to wait after `accept` fails (out of file descriptors, say) before trying
/// again.
const ACCEPT_RETRY: Duration = Duration::from_millis(50);

/// Limits on connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Connections open at once; one more is closed as soon as it is accepted.
    pub max_connections: usize,
    /// Time a client has to send a request's headers, from the connection's start or
    /// the end of the previous answer.
    pub header_read_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> ConnectionLimits {
        ConnectionLimits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
        }
    }
}

/// Serves `app` over HTTP/1.1 on the connections `listener` accepts, within `limits`,
/// until `shutdown` is cancelled; then stops accepting, lets each open connection finish
/// the answer it is sending (at most 10 s) and returns.
pub async fn serve(
    listener: TcpListener,
    app: axum::Router,
    limits: ConnectionLimits,
    shutdown: CancellationToken,
) {
    let open = Arc::new(Semaphore::new(limits.max_connections));
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let tcp = match accepted {
            Ok((tcp, _)) => tcp,
            Err(e) => {
                tracing::warn!("cannot accept a connection: {e}");
                tokio::time::sleep(ACCEPT_RETRY).await;
                continue;
            }
        };
        let Ok(slot) = Arc::clone(&open).try_acquire_owned() else {
            tracing::debug!(
                "{} connections open: closing a new one",
                limits.max_connections
            );
            continue;
        };
        // Each response goes out at once: without TCP_NODELAY, Nagle's algorithm held a
        // response's body until the client's delayed ACK of its headers, about 40 ms a call.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY on a connection: {e}");
        }
        let service = TowerToHyperService::new(app.clone());
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_read_timeout)
                .serve_connection(TokioIo::new(tcp), service);
            tokio::pin!(connection);
            let ended = tokio::select! {
                ended = connection.as_mut() => ended,
                () = shutdown.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = ended {
                tracing::debug!("connection ended: {e}");
            }
        });
    }
    // Every connection holds a slot until it ends: all slots back means all ended.
    let slots = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    if tokio::time::timeout(SHUTDOWN_WAIT, open.acquire_many(slots))
        .await
        .is_err()
    {
        tracing::warn!("stopping with connections still open");
    }
}
