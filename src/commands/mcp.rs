//! `folio mcp`: the MCP server over stdin and stdout, or over streamable HTTP with
//! `--http`, with the user's settings for writes, embeddings and HTTP.

use std::num::NonZeroU32;
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow};
use folio_core::config::user::UserConfig;
use folio_mcp::http::connections::{
    ConnectionLimits, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_MAX_CONNECTIONS, MAX_CONNECTIONS_LIMIT,
    MAX_HEADER_READ_SECONDS,
};
use folio_mcp::http::limits::{
    DEFAULT_BURST, DEFAULT_MAX_BODY_BYTES, DEFAULT_REQUESTS_PER_MINUTE, Limits,
};
use folio_mcp::http::sessions::{
    DEFAULT_IDLE_TIMEOUT, DEFAULT_SESSIONS_PER_TOKEN, DEFAULT_SESSIONS_TOTAL, SessionLimits,
};
use folio_mcp::{AuthMode, HttpOptions};

use super::root::resolve_root;
use crate::cli::McpArgs;

/// Serves MCP until the client closes the connection (stdio) or until Ctrl-C / SIGTERM (HTTP).
pub fn run(args: &McpArgs) -> Result<ExitCode> {
    // The server keeps the root's whole model for its lifetime, as `folio lsp` does.
    folio_core::heap::fix_trim_threshold();
    let r = resolve_root(&args.root)?;
    let user = UserConfig::load().map_err(anyhow::Error::msg)?;
    // Settings that cannot be resolved (a refused remote endpoint, say) leave embeddings
    // off with the reason in kb_status; the server still starts.
    let mut options = folio_mcp::Options::resolve(
        &r.root,
        &r.config,
        Ok(&user),
        args.embed.allow_remote_embeddings,
    );
    if let Err(reason) = &options.embed {
        tracing::warn!(%reason, "embeddings are off");
    }
    if let Err(reason) = &options.rerank {
        tracing::warn!(%reason, "reranking is off");
    }
    let http = args
        .http
        .map(|addr| http_options(args, &user, addr))
        .transpose()?;
    // With tokens, each token's scope decides whether its writes run (a read-only token
    // gets PERMISSION_DENIED); without, the flag and the user's setting decide, as on stdio.
    let token_scopes_decide = matches!(&http, Some(h) if h.auth != AuthMode::None);
    options.db = Some(r.db);
    options.allow_writes = args.allow_writes || user.mcp.allow_writes || token_scopes_decide;
    options.fetch = test_fetch_allowances()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let agent_id = args.agent_id.clone().or(user.mcp.agent_id.clone());
    let network = knowledge_network(&user, &options.root)?;
    match http {
        None => runtime.block_on(folio_mcp::serve_stdio(options, agent_id, network))?,
        Some(http) => {
            let auth = match &http.auth {
                AuthMode::None => "no authentication (loopback only)".to_string(),
                AuthMode::Tokens {
                    path, oauth: None, ..
                } => format!("bearer tokens of {}", path.display()),
                AuthMode::Tokens {
                    path,
                    oauth: Some(oauth),
                    ..
                } => format!(
                    "bearer tokens of {} and OAuth access tokens of {}",
                    path.display(),
                    oauth.issuers.join(", ")
                ),
            };
            runtime.block_on(folio_mcp::serve_http(
                options,
                http,
                agent_id,
                network,
                |addr| {
                    // Tests and scripts read the address (port 0 picks one) from this line.
                    note!("folio mcp: listening on http://{addr}/mcp ({auth})");
                },
            ))?
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What `visibility: network` means here, from `[knowledge]` of the user's configuration:
/// this server is the registry (`serve_registry`), or a client of the one at `registry`
/// with the token of `FOLIO_REGISTRY_TOKEN` or `registry_token_file`, or neither.
///
/// Errors: both set; a token file inside the knowledge base, unreadable or empty; a
/// registry URL that is not https (or http on this machine).
fn knowledge_network(
    user: &UserConfig,
    root: &std::path::Path,
) -> Result<folio_mcp::KnowledgeNetwork> {
    let k = &user.knowledge;
    match (&k.registry, k.serve_registry) {
        (Some(_), true) => Err(anyhow!(
            "[knowledge] registry and serve_registry = true cannot both be set: a registry keeps network items itself"
        )),
        (None, true) => Ok(folio_mcp::KnowledgeNetwork::Serve),
        (None, false) => Ok(folio_mcp::KnowledgeNetwork::None),
        (Some(url), false) => {
            if let Some(file) = &k.registry_token_file {
                folio_core::config::tokens::check_outside_root(file, root)
                    .map_err(|e| anyhow!("[knowledge] registry_token_file: {e}"))?;
            }
            let token = k.registry_token().map_err(anyhow::Error::msg)?;
            if token.is_none() {
                tracing::warn!(
                    registry = %url,
                    "no registry token (FOLIO_REGISTRY_TOKEN or [knowledge] registry_token_file): calls go without one"
                );
            }
            let registry = folio_mcp::McpRegistry::new(url, token).map_err(anyhow::Error::msg)?;
            Ok(folio_mcp::KnowledgeNetwork::Client(std::sync::Arc::new(
                registry,
            )))
        }
    }
}

/// Environment variable naming a PEM root certificate that replaces the public roots for
/// `kb_save_image` downloads. **Test-only**: the MCP end-to-end tests serve images from a
/// local HTTPS server with a certificate only they trust.
const TEST_FETCH_CA_ENV: &str = "FOLIO_TEST_FETCH_CA";

/// Environment variable naming one loopback socket address (`127.0.0.1:PORT`) that
/// `kb_save_image` downloads may reach despite the rule against non-public addresses.
/// **Test-only**, like [`TEST_FETCH_CA_ENV`].
const TEST_FETCH_LOOPBACK_ENV: &str = "FOLIO_TEST_FETCH_LOOPBACK";

/// The test-only download allowances, read from this process's environment only (no
/// configuration file, of the workspace or the user, can set them).
fn test_fetch_allowances() -> Result<folio_core::fetch::TestAllowances> {
    let mut out = folio_core::fetch::TestAllowances::default();
    if let Some(path) = std::env::var_os(TEST_FETCH_CA_ENV).filter(|v| !v.is_empty()) {
        let pem = std::fs::read(&path).with_context(|| {
            format!(
                "{TEST_FETCH_CA_ENV}: reading {}",
                std::path::Path::new(&path).display()
            )
        })?;
        out.trusted_root_pem = Some(pem);
    }
    if let Some(addr) = std::env::var_os(TEST_FETCH_LOOPBACK_ENV).filter(|v| !v.is_empty()) {
        let addr = addr.to_string_lossy();
        out.loopback = Some(addr.parse().with_context(|| {
            format!(
                "{TEST_FETCH_LOOPBACK_ENV}=`{addr}` is not an address with a port (127.0.0.1:PORT)"
            )
        })?);
    }
    Ok(out)
}

/// The HTTP options from the flags and `[mcp.http]` of the user's configuration.
fn http_options(
    args: &McpArgs,
    user: &UserConfig,
    addr: std::net::SocketAddr,
) -> Result<HttpOptions> {
    let h = &user.mcp.http;
    let auth = if args.no_auth {
        if !h.oauth.issuers.is_empty() {
            eprintln!(
                "folio: --no-auth: the issuers of [mcp.http.oauth] in {} are not used",
                folio_core::config::user::UserConfig::location()
            );
        }
        AuthMode::None
    } else {
        let secret = std::env::var(folio_mcp::http::oauth::CLIENT_SECRET_ENV)
            .ok()
            .filter(|v| !v.trim().is_empty());
        for server in &h.authorization_servers {
            folio_mcp::http::oauth::issuer::check_url(server, "[mcp.http] authorization_servers:")
                .map_err(anyhow::Error::msg)?;
        }
        AuthMode::Tokens {
            path: super::token::tokens_path(args.tokens.as_ref(), user)?,
            authorization_servers: h.authorization_servers.clone(),
            oauth: folio_mcp::http::oauth::Settings::from_config(&h.oauth, secret)
                .map_err(anyhow::Error::msg)?
                .map(Box::new),
        }
    };
    let at_least_one = |value: Option<usize>, default: usize, key: &str| match value {
        Some(0) => Err(anyhow!("[mcp.http] {key} must be at least 1")),
        value => Ok(value.unwrap_or(default)),
    };
    let non_zero = |value: Option<u32>, default: u32, key: &str| {
        NonZeroU32::new(value.unwrap_or(default))
            .ok_or_else(|| anyhow!("[mcp.http] {key} must be at least 1"))
    };
    Ok(HttpOptions {
        addr,
        auth,
        behind_proxy: args.behind_proxy,
        public_url: args.public_url.clone(),
        allowed_hosts: h
            .allowed_hosts
            .iter()
            .chain(&args.allowed_host)
            .cloned()
            .collect(),
        allowed_origins: h
            .allowed_origins
            .iter()
            .chain(&args.allowed_origin)
            .cloned()
            .collect(),
        limits: Limits {
            requests_per_minute: non_zero(
                h.requests_per_minute,
                DEFAULT_REQUESTS_PER_MINUTE,
                "requests_per_minute",
            )?,
            burst: non_zero(h.burst, DEFAULT_BURST, "burst")?,
            max_body_bytes: at_least_one(
                h.max_body_bytes,
                DEFAULT_MAX_BODY_BYTES,
                "max_body_bytes",
            )?,
        },
        sessions: SessionLimits {
            per_token: at_least_one(
                h.sessions_per_token,
                DEFAULT_SESSIONS_PER_TOKEN,
                "sessions_per_token",
            )?,
            total: at_least_one(h.max_sessions, DEFAULT_SESSIONS_TOTAL, "max_sessions")?,
            idle_timeout: match h.session_idle_seconds {
                Some(0) => {
                    return Err(anyhow!(
                        "[mcp.http] session_idle_seconds must be at least 1"
                    ));
                }
                Some(seconds) => std::time::Duration::from_secs(seconds),
                None => DEFAULT_IDLE_TIMEOUT,
            },
        },
        connections: ConnectionLimits {
            max_connections: match h.max_connections {
                Some(n) if !(1..=MAX_CONNECTIONS_LIMIT).contains(&n) => {
                    return Err(anyhow!(
                        "[mcp.http] max_connections must be from 1 to {MAX_CONNECTIONS_LIMIT}, not {n}"
                    ));
                }
                n => n.unwrap_or(DEFAULT_MAX_CONNECTIONS),
            },
            header_read_timeout: match h.header_read_seconds {
                Some(seconds) if !(1..=MAX_HEADER_READ_SECONDS).contains(&seconds) => {
                    return Err(anyhow!(
                        "[mcp.http] header_read_seconds must be from 1 to {MAX_HEADER_READ_SECONDS}, not {seconds}"
                    ));
                }
                Some(seconds) => std::time::Duration::from_secs(seconds),
                None => DEFAULT_HEADER_READ_TIMEOUT,
            },
        },
        private_owner: private_owner(h)?,
    })
}

/// `[mcp.http] private_owner`, checked: a token file's agent id, or an OAuth agent id
/// (`{claim}@{issuer}`) of an issuer `[mcp.http.oauth]` lists.
///
/// Errors: an empty value, an id no token could have.
fn private_owner(h: &folio_core::config::user::UserHttpConfig) -> Result<Option<String>> {
    let Some(owner) = &h.private_owner else {
        return Ok(None);
    };
    if owner.contains("://") {
        if !h
            .oauth
            .issuers
            .iter()
            .any(|issuer| owner.ends_with(&format!("@{issuer}")))
        {
            return Err(anyhow!(
                "[mcp.http] private_owner = `{owner}` names an issuer that [mcp.http.oauth] issuers does not list (an OAuth agent id is `{{claim}}@{{issuer}}`)"
            ));
        }
    } else {
        folio_core::config::tokens::check_agent_id(owner)
            .map_err(|e| anyhow!("[mcp.http] private_owner: {e}"))?;
    }
    Ok(Some(owner.clone()))
}
