//! Bearer-token authentication of `folio mcp --http`, and the OAuth protected-resource
//! metadata (RFC 9728) that MCP clients read to learn how to authenticate.
//!
//! A request to `/mcp` needs `Authorization: Bearer <token>` with a token of the token
//! file ([`folio_core::config::tokens`]) that is not revoked. Without one: 401 with
//! `WWW-Authenticate: Bearer resource_metadata="…"` (plus `error="invalid_token"` when a
//! token was sent) and an empty body. With one, the request goes on carrying its
//! [`Caller`]. The token file is read again whenever its size or modification time
//! changes, so `folio token revoke` takes effect on the next request.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use folio_core::config::tokens::{Scope, TokenFile};

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
}

fn stamp(path: &std::path::Path) -> Option<(u64, Option<SystemTime>)> {
    std::fs::metadata(path)
        .ok()
        .map(|m| (m.len(), m.modified().ok()))
}

impl Auth {
    /// Loads the token file at `tokens_path`.
    ///
    /// Errors: the file exists but cannot be read or parsed.
    pub fn new(
        tokens_path: PathBuf,
        public_url: Option<String>,
        https: bool,
        authorization_servers: Vec<String>,
    ) -> Result<Auth, String> {
        let stamp = stamp(&tokens_path);
        let file = TokenFile::load(&tokens_path)?;
        Ok(Auth {
            tokens_path,
            loaded: Mutex::new(Loaded { stamp, file }),
            public_url: public_url.map(|u| u.trim_end_matches('/').to_string()),
            https,
            authorization_servers,
        })
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

    /// The caller a token belongs to, reading the token file again if it changed. A
    /// file that became unreadable or invalid keeps the tokens last read (logged).
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
        let base = self.base_url(headers);
        let mut doc = serde_json::json!({
            "resource": format!("{base}/mcp"),
            "resource_name": "folio",
            "bearer_methods_supported": ["header"],
            "scopes_supported": [Scope::Read.as_str(), Scope::Contribute.as_str(), Scope::ReadWrite.as_str()],
            "resource_documentation": "https://github.com/folio-kb/folio/blob/main/docs/mcp.md#http",
        });
        if !self.authorization_servers.is_empty() {
            doc["authorization_servers"] = serde_json::json!(self.authorization_servers);
        }
        doc
    }

    /// 401 with the `WWW-Authenticate` challenge and nothing else.
    fn unauthorized(&self, headers: &HeaderMap, token_sent: bool) -> Response {
        let mut challenge = format!(
            "Bearer resource_metadata=\"{}{METADATA_PATH}\"",
            self.base_url(headers)
        );
        if token_sent {
            challenge.push_str(", error=\"invalid_token\"");
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
    let present = headers.contains_key(header::AUTHORIZATION);
    let caller = bearer(headers).and_then(|token| auth.verify(token));
    match caller {
        Some(caller) => {
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
        None => {
            tracing::warn!(
                token_sent = present,
                "request without a valid token refused (401)"
            );
            let response = auth.unauthorized(request.headers(), present);
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
        let auth = Auth::new(path.clone(), None, false, vec![]).unwrap();
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
        let r = auth.unauthorized(&h, true);
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            r.headers()[header::WWW_AUTHENTICATE],
            "Bearer resource_metadata=\"https://kb.example.com/.well-known/oauth-protected-resource/mcp\", error=\"invalid_token\""
        );
    }
}
