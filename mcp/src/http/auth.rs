//! Bearer-token authentication of `folio mcp --http`, and the OAuth protected-resource
//! metadata (RFC 9728) that MCP clients read to learn how to authenticate.
//!
//! A request to `/mcp` needs `Authorization: Bearer <token>` with a token of the token
//! file ([`folio_core::config::tokens`]) that is not revoked, or, when `[mcp.http.oauth]`
//! names issuers, an access token one of them issued for this server ([`super::oauth`]).
//! Without one: 401 with `WWW-Authenticate: Bearer resource_metadata="…"` (plus
//! `error="invalid_token"` and why when a token was sent, and the scope to ask for when
//! OAuth is on) and an empty body. An OAuth token that grants none of folio's scopes is
//! 403 `insufficient_scope`; an issuer that cannot be reached, 503. With a token, the
//! request goes on carrying its [`Caller`] (and, for an OAuth token, the [`StepUp`] that
//! answers a write the token's scope does not allow with 403, RFC 6750 §3.1). The token
//! file is read again whenever its size or modification time changes, so `folio token
//! revoke` takes effect on the next request.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use folio_core::config::tokens::{Scope, TokenFile};

use super::oauth::{OAuth, Rejection, ScopeNames};
use crate::caller::Caller;

/// Path of the protected-resource metadata of the `/mcp` endpoint (RFC 9728 §3.1: the
/// well-known prefix, then the resource's path).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";
/// The same document at the host's root, for clients that look there.
pub const METADATA_ROOT_PATH: &str = "/.well-known/oauth-protected-resource";

/// The token file, kept loaded.
#[derive(Debug)]
struct Loaded {
    /// Size and modification time when it was read (`None`: the file did not exist).
    stamp: Option<(u64, Option<SystemTime>)>,
    file: TokenFile,
}

/// The authentication state shared by every request.
#[derive(Debug)]
pub struct Auth {
    tokens_path: PathBuf,
    loaded: Mutex<Loaded>,
    /// `https://…` base used in metadata URLs instead of the request's `Host`.
    public_url: Option<String>,
    /// Whether requests arrive through a TLS-terminating proxy (metadata URLs use https).
    https: bool,
    /// Authorization servers to publish in the metadata (issuer URLs).
    authorization_servers: Vec<String>,
    /// Access tokens of OAuth authorization servers, when `[mcp.http.oauth]` names any.
    oauth: Option<OAuth>,
}

/// What answers a write an OAuth token's scope does not allow: 403 with
/// `error="insufficient_scope"` and the scope to ask for (RFC 6750 §3.1), so that the
/// client can ask the authorization server for more (the MCP specification's step-up
/// authorization). Put into an OAuth caller's request by [`authenticate`].
#[derive(Clone, Debug)]
pub struct StepUp {
    /// The protected-resource metadata URL.
    metadata_url: String,
    /// The issuer's names of folio's scopes.
    names: ScopeNames,
}

impl StepUp {
    /// 403 for a request that needs `scope`.
    pub fn forbidden(&self, scope: Scope) -> Response {
        forbidden(&self.metadata_url, self.names.name(scope))
    }
}

/// 403 `insufficient_scope` asking for `scope`, with a plain-text body saying so.
fn forbidden(metadata_url: &str, scope: &str) -> Response {
    let challenge = format!(
        "Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{metadata_url}\""
    );
    let mut response = (
        StatusCode::FORBIDDEN,
        format!("Forbidden: this needs an access token with the scope `{scope}`"),
    )
        .into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// An `error_description` value: printable ASCII without quotes or backslashes
/// (RFC 6750 §3: %x20-21 / %x23-5B / %x5D-7E), the rest dropped.
fn description(text: &str) -> String {
    text.chars()
        .filter(|c| matches!(c, ' '..='~') && *c != '"' && *c != '\\')
        .take(300)
        .collect()
}

fn stamp(path: &std::path::Path) -> Option<(u64, Option<SystemTime>)> {
    std::fs::metadata(path)
        .ok()
        .map(|m| (m.len(), m.modified().ok()))
}

impl Auth {
    /// Loads the token file at `tokens_path`; accepts `oauth`'s tokens too when given.
    ///
    /// Errors: the file exists but cannot be read or parsed.
    pub fn new(
        tokens_path: PathBuf,
        public_url: Option<String>,
        https: bool,
        authorization_servers: Vec<String>,
        oauth: Option<OAuth>,
    ) -> Result<Auth, String> {
        let stamp = stamp(&tokens_path);
        let file = TokenFile::load(&tokens_path)?;
        Ok(Auth {
            tokens_path,
            loaded: Mutex::new(Loaded { stamp, file }),
            public_url: public_url.map(|u| u.trim_end_matches('/').to_string()),
            https,
            authorization_servers,
            oauth,
        })
    }

    /// Whether OAuth access tokens are accepted.
    pub fn oauth(&self) -> bool {
        self.oauth.is_some()
    }

    /// The number of active tokens (for the start-up message).
    pub fn active_tokens(&self) -> usize {
        let loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        loaded
            .file
            .tokens
            .iter()
            .filter(|t| t.revoked.is_none())
            .count()
    }

    /// The caller a token of the token file belongs to, reading the file again if it
    /// changed. A file that became unreadable or invalid keeps the tokens last read
    /// (logged).
    pub fn verify(&self, token: &str) -> Option<Caller> {
        let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        let now = stamp(&self.tokens_path);
        if now != loaded.stamp {
            match TokenFile::load(&self.tokens_path) {
                Ok(file) => {
                    tracing::info!(path = %self.tokens_path.display(), "token file read again");
                    *loaded = Loaded { stamp: now, file };
                }
                Err(e) => {
                    tracing::error!(error = %e, "token file unreadable; keeping the tokens read before")
                }
            }
        }
        loaded.file.verify(token).map(|t| Caller {
            agent: t.agent.clone(),
            scope: t.scope,
            token_id: t.id.clone(),
        })
    }

    /// `scheme://authority` of this server as the client reached it.
    fn base_url(&self, headers: &HeaderMap) -> String {
        if let Some(url) = &self.public_url {
            return url.clone();
        }
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("localhost");
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://{host}")
    }

    /// The protected-resource metadata document.
    pub fn metadata(&self, headers: &HeaderMap) -> serde_json::Value {
        let names = self
            .oauth
            .as_ref()
            .map(|o| o.settings.scopes.clone())
            .unwrap_or_default();
        let mut doc = serde_json::json!({
            "resource": self.resource(headers),
            "resource_name": "folio",
            "bearer_methods_supported": ["header"],
            "scopes_supported": [&names.read, &names.contribute, &names.read_write],
            "resource_documentation": "https://github.com/folio-kb/folio/blob/main/docs/mcp.md#http",
        });
        let mut servers = self.authorization_servers.clone();
        if let Some(oauth) = &self.oauth {
            for issuer in &oauth.settings.issuers {
                if !servers.contains(issuer) {
                    servers.push(issuer.clone());
                }
            }
        }
        if !servers.is_empty() {
            doc["authorization_servers"] = serde_json::json!(servers);
        }
        doc
    }

    /// This server's resource URI as the client reached it (RFC 9728 `resource`).
    fn resource(&self, headers: &HeaderMap) -> String {
        format!("{}/mcp", self.base_url(headers))
    }

    /// The protected-resource metadata URL.
    fn metadata_url(&self, headers: &HeaderMap) -> String {
        let base = self.base_url(headers);
        let (origin, path) = split_origin(&base);
        format!("{origin}{}", metadata_path(path))
    }

    /// 401 with the `WWW-Authenticate` challenge and nothing else: the metadata URL, the
    /// scope to ask for when OAuth is on, and `invalid_token` with `why` when a token was
    /// sent (`why` is `None` for a token of neither kind).
    fn unauthorized(&self, headers: &HeaderMap, token_sent: bool, why: Option<&str>) -> Response {
        let mut challenge = format!(
            "Bearer resource_metadata=\"{}\"",
            self.metadata_url(headers)
        );
        if let Some(oauth) = &self.oauth {
            challenge.push_str(&format!(", scope=\"{}\"", oauth.settings.scopes.read));
        }
        if token_sent {
            challenge.push_str(", error=\"invalid_token\"");
        }
        if let Some(why) = why {
            challenge.push_str(&format!(", error_description=\"{}\"", description(why)));
        }
        let mut response = StatusCode::UNAUTHORIZED.into_response();
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

/// `scheme://authority` and the path of a base URL (`https://kb.example.com/kb` →
/// `https://kb.example.com`, `/kb`; the path is empty for none).
fn split_origin(base: &str) -> (&str, &str) {
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    match base[after_scheme..].find('/') {
        Some(slash) => base.split_at(after_scheme + slash),
        None => (base, ""),
    }
}

/// The path of the protected-resource metadata of `{base path}/mcp` (RFC 9728 §3.1: the
/// well-known prefix inserted between the host and the resource's path), for a public
/// URL whose path is `base_path` (`""` or `/kb`).
pub fn metadata_path(base_path: &str) -> String {
    format!(
        "/.well-known/oauth-protected-resource{}/mcp",
        base_path.trim_end_matches('/')
    )
}

/// The path the metadata is also served at when the public URL has a path
/// (`--public-url https://kb.example.com/kb`), for a proxy that forwards it unchanged.
pub fn public_metadata_path(public_url: Option<&str>) -> Option<String> {
    let (_, path) = split_origin(public_url?.trim_end_matches('/'));
    (!path.is_empty()).then(|| metadata_path(path))
}

/// The token of an `Authorization: Bearer …` header (scheme without letter case).
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// Middleware: 401 without a valid token; else the request goes on with its [`Caller`].
pub async fn authenticate(
    State(auth): State<Arc<Auth>>,
    mut request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    if headers.get_all(header::AUTHORIZATION).iter().count() > 1 {
        let response = (
            StatusCode::BAD_REQUEST,
            "Bad Request: two Authorization headers; send one",
        )
            .into_response();
        return super::refusal::read_body_then(request, response).await;
    }
    let present = headers.contains_key(header::AUTHORIZATION);
    let token = bearer(headers).map(str::to_owned);
    let mut why = None;
    let mut caller = token.as_deref().and_then(|t| auth.verify(t));
    // A token of the token file's form never leaves the server, not even one revoked or
    // mistyped: it is not sent to an issuer's introspection.
    let own_form = token.as_deref().is_some_and(|t| {
        let prefix = folio_core::config::tokens::TOKEN_PREFIX;
        t.get(..prefix.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(prefix))
    });
    if caller.is_none() && own_form && auth.oauth.is_some() {
        why = Some(
            "not an active token of this server's token file (revoked, or mistyped)".to_owned(),
        );
    }
    if caller.is_none()
        && !own_form
        && let (Some(token), Some(oauth)) = (&token, &auth.oauth)
    {
        let resource = auth.resource(request.headers());
        match oauth.verify(token, &resource).await {
            Ok(verified) => {
                let metadata_url = auth.metadata_url(request.headers());
                request.extensions_mut().insert(StepUp {
                    metadata_url,
                    names: oauth.settings.scopes.clone(),
                });
                caller = Some(verified);
            }
            Err(Rejection::Invalid(reason)) => why = Some(reason),
            Err(Rejection::NoScope) => {
                tracing::warn!("an access token that grants none of folio's scopes refused (403)");
                let response = forbidden(
                    &auth.metadata_url(request.headers()),
                    &oauth.settings.scopes.read,
                );
                return super::refusal::read_body_then(request, response).await;
            }
            Err(Rejection::Unavailable(reason)) => {
                // The reason (URLs, the issuer's own error text) goes to the log only.
                tracing::error!(%reason, "an access token could not be checked (503)");
                let mut response = (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "Service Unavailable: the access token could not be checked, its issuer could not be reached; try again shortly",
                )
                    .into_response();
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("10"));
                return super::refusal::read_body_then(request, response).await;
            }
        }
    }
    match caller {
        Some(caller) => {
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
        None => {
            tracing::warn!(
                token_sent = present,
                reason = why.as_deref().unwrap_or(""),
                "request without a valid token refused (401)"
            );
            let response = auth.unauthorized(request.headers(), present, why.as_deref());
            super::refusal::read_body_then(request, response).await
        }
    }
}

/// `GET` of the protected-resource metadata.
pub async fn metadata(State(auth): State<Arc<Auth>>, headers: HeaderMap) -> Response {
    Json(auth.metadata(&headers)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_are_read_from_the_header() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer(&h), None);
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer abc"),
        );
        assert_eq!(bearer(&h), Some("abc"));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert_eq!(bearer(&h), None);
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer "));
        assert_eq!(bearer(&h), None);
    }

    #[test]
    fn revocation_in_the_file_takes_effect_without_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.toml");
        let mut file = TokenFile::load(&path).unwrap();
        let token = file.add("alice", Scope::Read, 0).unwrap();
        file.save().unwrap();
        let auth = Auth::new(path.clone(), None, false, vec![], None).unwrap();
        assert_eq!(auth.verify(&token).unwrap().agent, "alice");
        assert_eq!(auth.active_tokens(), 1);
        file.revoke("alice", 1).unwrap();
        file.save().unwrap();
        assert_eq!(auth.verify(&token), None);
    }

    #[test]
    fn metadata_names_the_resource_and_the_authorization_servers() {
        let auth = Auth::new(
            PathBuf::from("/nonexistent/tokens.toml"),
            None,
            true,
            vec!["https://id.example.com".into()],
            None,
        )
        .unwrap();
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("kb.example.com"));
        let doc = auth.metadata(&h);
        assert_eq!(doc["resource"], "https://kb.example.com/mcp");
        assert_eq!(
            doc["authorization_servers"],
            serde_json::json!(["https://id.example.com"])
        );
        assert_eq!(
            doc["scopes_supported"],
            serde_json::json!(["read", "contribute", "read-write"])
        );
        let r = auth.unauthorized(&h, true, None);
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            r.headers()[header::WWW_AUTHENTICATE],
            "Bearer resource_metadata=\"https://kb.example.com/.well-known/oauth-protected-resource/mcp\", error=\"invalid_token\""
        );
    }
}
