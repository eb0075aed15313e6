//! `folio mcp --http ADDR`: MCP over streamable HTTP (rmcp's server: sessions, SSE for
//! server messages, resumption with `Last-Event-ID`), for many agents on one knowledge base.
//!
//! One [`Host`] serves every session, so all agents share one index and one writer (the
//! writer serialises writes per root across sessions and processes). In front of rmcp's
//! service, one job per layer, outermost first: [`origin`] (Host/Origin allow-list, 403),
//! [`auth`] (bearer tokens of the token file or OAuth access tokens checked by [`oauth`],
//! 401; skipped with `--no-auth`), [`limits`] (rate per token,
//! 429), [`sessions`] (the body read once, at most the body limit, 413, and checked as
//! one JSON-RPC message by [`message`], 400; sessions bound to their token, capped, and no
//! request id twice in flight). [`check_bind`] refuses addresses that would
//! expose the server without TLS. Ctrl-C or SIGTERM stops it cleanly: new requests are
//! refused, open SSE streams end, sessions close.

pub mod auth;
pub mod connections;
pub mod limits;
pub mod message;
pub mod oauth;
pub mod origin;
pub mod refusal;
pub mod sessions;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use axum::Router;
use axum::middleware::from_fn_with_state;
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::server::FolioServer;
use folio_core::host::registry::KnowledgeNetwork;
use folio_core::host::{Host, Options};

/// How clients authenticate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthMode {
    /// No tokens (`--no-auth`): loopback addresses only.
    None,
    /// Bearer tokens of a token file.
    Tokens {
        /// The token file (outside the knowledge base).
        path: PathBuf,
        /// Authorization servers published in the protected-resource metadata.
        authorization_servers: Vec<String>,
        /// Access tokens of OAuth authorization servers accepted too (`[mcp.http.oauth]`).
        oauth: Option<Box<oauth::Settings>>,
    },
}

/// How `folio mcp --http` serves.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// The address to listen on.
    pub addr: SocketAddr,
    /// Tokens, or none.
    pub auth: AuthMode,
    /// A reverse proxy in front terminates TLS (`--behind-proxy`): a non-loopback
    /// address is allowed and URLs the server publishes use https.
    pub behind_proxy: bool,
    /// The URL clients reach the server at (for the metadata), e.g. `https://kb.example.com`.
    pub public_url: Option<String>,
    /// `Host` values allowed besides loopback names and the bound address.
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed besides the server's own.
    pub allowed_origins: Vec<String>,
    /// Rate and body limits.
    pub limits: limits::Limits,
    /// How many sessions may live at once.
    pub sessions: sessions::SessionLimits,
    /// How many connections may be open at once, and how long a request's headers may
    /// take.
    pub connections: connections::ConnectionLimits,
    /// The agent whose tokens may see and fill the private KnowledgePulse folder
    /// (`[mcp.http] private_owner`); `None`: no token may.
    pub private_owner: Option<String>,
}

/// Refuses an address the options must not serve on.
///
/// Errors: `--no-auth` on a non-loopback address, or a non-loopback address without a
/// TLS-terminating proxy (folio serves plain HTTP; tokens must not cross a network in
/// the clear).
pub fn check_bind(addr: &SocketAddr, auth: &AuthMode, behind_proxy: bool) -> Result<(), String> {
    if addr.ip().is_loopback() {
        return Ok(());
    }
    if *auth == AuthMode::None {
        return Err(format!(
            "--no-auth serves loopback addresses only (127.0.0.1, ::1), not {addr}: anyone who reaches the address could read the knowledge base; drop --no-auth and give agents tokens (`folio token add`)"
        ));
    }
    if !behind_proxy {
        return Err(format!(
            "refusing to serve {addr} without TLS: folio speaks plain HTTP, so bearer tokens would cross the network in the clear; put a reverse proxy that terminates TLS in front (Caddy, nginx: docs/mcp.md#behind-a-reverse-proxy) and start with --behind-proxy, or listen on 127.0.0.1"
        ));
    }
    Ok(())
}

/// The `Host` allow-list: loopback names and the bound address (when it is a specific
/// one), each with the port the server listens on (`bound`), then the public URL's
/// authority and the user's.
fn allowed_hosts(http: &HttpOptions, bound: &SocketAddr) -> Vec<String> {
    let port = bound.port();
    let mut hosts: Vec<String> = origin::LOOPBACK_HOSTS
        .iter()
        .map(|h| format!("{h}:{port}"))
        .collect();
    let ip = http.addr.ip();
    if !ip.is_unspecified() && !ip.is_loopback() {
        hosts.push(match ip {
            std::net::IpAddr::V4(v4) => format!("{v4}:{port}"),
            std::net::IpAddr::V6(v6) => format!("[{v6}]:{port}"),
        });
    }
    if let Some(url) = &http.public_url
        && let Some((_, rest)) = url.split_once("://")
    {
        hosts.push(rest.split('/').next().unwrap_or(rest).to_string());
    }
    hosts.extend(http.allowed_hosts.iter().cloned());
    hosts
}

/// The application: `/mcp` behind the layers, and the metadata documents.
fn router(
    kb: Arc<Host>,
    http: &HttpOptions,
    bound: &SocketAddr,
    agent_id: Option<String>,
    sessions: Arc<sessions::Sessions>,
    ct: CancellationToken,
) -> Result<Router, String> {
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(ct)
        .with_max_request_body_bytes(http.limits.max_body_bytes)
        // Host and Origin are checked by `origin`, for every route, before authentication.
        .disable_allowed_hosts()
        .disable_allowed_origins();
    let owner = http.private_owner.clone();
    let service = StreamableHttpService::new(
        move || {
            Ok(FolioServer::new(Arc::clone(&kb))
                .with_agent_id(agent_id.clone())
                .with_private_owner(owner.clone()))
        },
        Arc::clone(&sessions.manager),
        config,
    );
    let rate = limits::RateLimit::new(&http.limits);
    // Route layers: a path that is not served is 404 before any of them (not 401).
    let mut mcp = Router::new()
        .route_service("/mcp", service)
        .route_layer(from_fn_with_state(sessions, sessions::guard))
        .route_layer(from_fn_with_state(rate, limits::rate_limit));
    let mut app: Router = Router::new();
    if let AuthMode::Tokens {
        path,
        authorization_servers,
        oauth,
    } = &http.auth
    {
        let oauth = oauth
            .clone()
            .map(|settings| oauth::OAuth::new(*settings))
            .transpose()?;
        let auth = Arc::new(auth::Auth::new(
            path.clone(),
            http.public_url.clone(),
            http.behind_proxy,
            authorization_servers.clone(),
            oauth,
        )?);
        if auth.oauth() {
            tracing::info!("OAuth access tokens accepted ([mcp.http.oauth])");
        } else if auth.active_tokens() == 0 {
            tracing::warn!(path = %path.display(), "no active tokens: every request will get 401 (add one with `folio token add AGENT`)");
        }
        mcp = mcp.route_layer(from_fn_with_state(Arc::clone(&auth), auth::authenticate));
        let mut metadata = Router::new()
            .route(auth::METADATA_PATH, get(auth::metadata))
            .route(auth::METADATA_ROOT_PATH, get(auth::metadata));
        if let Some(path) = auth::public_metadata_path(http.public_url.as_deref()) {
            metadata = metadata.route(&path, get(auth::metadata));
        }
        app = metadata.with_state(auth);
    }
    let allow = Arc::new(origin::AllowList {
        hosts: allowed_hosts(http, bound),
        origins: http.allowed_origins.clone(),
        scheme: if http.behind_proxy { "https" } else { "http" },
    });
    Ok(app
        .merge(mcp)
        .layer(from_fn_with_state(allow, origin::check_origin)))
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

/// Serves MCP over streamable HTTP until Ctrl-C or SIGTERM; calls `ready` with the bound
/// address once it listens. `network` says what `visibility: network` means (with
/// [`KnowledgeNetwork::Serve`] this server is a KnowledgePulse registry).
///
/// Starts an incremental reindex in the background first, and follows the root's
/// changes from then on (`[index].watch`); tools answer meanwhile.
pub async fn serve_http(
    options: Options,
    http: HttpOptions,
    agent_id: Option<String>,
    network: KnowledgeNetwork,
    ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    check_bind(&http.addr, &http.auth, http.behind_proxy).map_err(anyhow::Error::msg)?;
    if let AuthMode::Tokens { path, .. } = &http.auth {
        folio_core::config::tokens::check_outside_root(path, &options.root)
            .map_err(anyhow::Error::msg)?;
    }
    let kb = Arc::new(Host::open(options)?.with_knowledge_network(network));
    tracing::info!(root = %kb.root().display(), allow_writes = kb.allow_writes(), "folio mcp (HTTP) starting");
    if let Err(e) = kb.start_reindex(false) {
        tracing::warn!(error = %e.message, "initial reindex did not start");
    }
    kb.start_watching();
    let ct = CancellationToken::new();
    let listener = tokio::net::TcpListener::bind(http.addr)
        .await
        .with_context(|| format!("cannot listen on {}", http.addr))?;
    let bound = listener.local_addr()?;
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(http.sessions.idle_timeout);
    let sessions = Arc::new(sessions::Sessions::new(
        Arc::new(manager),
        http.sessions,
        http.limits.max_body_bytes,
        http.connections.header_read_timeout,
    ));
    let app = router(
        kb,
        &http,
        &bound,
        agent_id,
        Arc::clone(&sessions),
        ct.child_token(),
    )
    .map_err(anyhow::Error::msg)?;
    // Ended sessions leave the table, and their memory the process, within PRUNE_EVERY.
    let pruning = ct.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = pruning.cancelled() => break,
                _ = tokio::time::sleep(sessions::PRUNE_EVERY) => {
                    sessions.prune().await;
                }
            }
        }
    });
    ready(bound);
    let stop = ct.clone();
    tokio::spawn(async move {
        shutdown_signal().await;
        tracing::info!("stopping: closing sessions");
        stop.cancel();
    });
    connections::serve(listener, app, http.connections, ct).await;
    tracing::info!("folio mcp (HTTP) stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_loopback_addresses_need_tokens_and_a_tls_proxy() {
        let tokens = AuthMode::Tokens {
            path: "/t".into(),
            authorization_servers: vec![],
            oauth: None,
        };
        let lan: SocketAddr = "0.0.0.0:8765".parse().unwrap();
        let local: SocketAddr = "127.0.0.1:8765".parse().unwrap();
        let local6: SocketAddr = "[::1]:8765".parse().unwrap();
        assert_eq!(check_bind(&local, &AuthMode::None, false), Ok(()));
        assert_eq!(check_bind(&local6, &AuthMode::None, false), Ok(()));
        assert_eq!(check_bind(&local, &tokens, false), Ok(()));
        assert!(
            check_bind(&lan, &AuthMode::None, true)
                .unwrap_err()
                .starts_with(
                    "--no-auth serves loopback addresses only (127.0.0.1, ::1), not 0.0.0.0:8765"
                )
        );
        assert!(
            check_bind(&lan, &tokens, false)
                .unwrap_err()
                .starts_with("refusing to serve 0.0.0.0:8765 without TLS")
        );
        assert_eq!(check_bind(&lan, &tokens, true), Ok(()));
    }
}
