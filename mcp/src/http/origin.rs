//! DNS-rebinding protection: every request's `Host` must be on the allow-list, and an
//! `Origin`, when a browser sends one, must be the server's own origin or on the list of
//! allowed origins. Anything else gets 403 before authentication or MCP see it.
//!
//! A web page on another site cannot make a browser send a foreign `Host` to a loopback
//! server once its DNS name is rebound to 127.0.0.1 without that name showing up in
//! `Host` and its site in `Origin`; both are checked here. Clients that are not browsers
//! send no `Origin`.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The allow-lists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowList {
    /// Host names (`localhost`, `kb.example.com`) or `host:port` authorities, compared
    /// without letter case; a bare name allows any port.
    pub hosts: Vec<String>,
    /// Origins (`https://app.example.com`, with a port when it is not the scheme's
    /// default) allowed besides the server's own.
    pub origins: Vec<String>,
}

/// Loopback names allowed by default.
pub const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Splits an authority into host and optional port (`[::1]:80` → `[::1]`, `80`).
fn split_authority(authority: &str) -> (&str, Option<&str>) {
    if authority.starts_with('[') {
        match authority.find(']') {
            Some(end) => {
                let port = authority[end + 1..].strip_prefix(':');
                (&authority[..=end], port)
            }
            None => (authority, None),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    }
}

/// The authority of an origin (`http://a:1` → `a:1`), with the scheme's default port
/// dropped; `None` for `null` or anything without a scheme.
fn origin_authority(origin: &str) -> Option<(String, String)> {
    let (scheme, rest) = origin.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let authority = rest.trim_end_matches('/').to_ascii_lowercase();
    let authority = match (scheme.as_str(), split_authority(&authority)) {
        ("http", (host, Some("80"))) | ("https", (host, Some("443"))) => host.to_string(),
        _ => authority,
    };
    Some((scheme, authority))
}

impl AllowList {
    /// Whether `host` (a `Host` header value) is allowed.
    pub fn host_allowed(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        let (name, _) = split_authority(&host);
        self.hosts.iter().any(|allowed| {
            let allowed = allowed.to_ascii_lowercase();
            allowed == host || (split_authority(&allowed).1.is_none() && allowed == name)
        })
    }

    /// Whether `origin` may call a server reached as `host`: the same authority (the
    /// server's own page), or an origin on the list.
    pub fn origin_allowed(&self, origin: &str, host: &str) -> bool {
        let Some((scheme, authority)) = origin_authority(origin) else {
            return false;
        };
        let own = {
            let host = host.to_ascii_lowercase();
            match (scheme.as_str(), split_authority(&host)) {
                ("http", (name, Some("80"))) | ("https", (name, Some("443"))) => name.to_string(),
                _ => host,
            }
        };
        authority == own
            || self.origins.iter().any(|allowed| {
                origin_authority(allowed).is_some_and(|a| a == (scheme.clone(), authority.clone()))
            })
    }

    /// Why a request with these headers is refused, if it is.
    pub fn refusal(&self, host: Option<&str>, origin: Option<&str>) -> Option<String> {
        let Some(host) = host else {
            return Some("the request has no Host header".into());
        };
        if !self.host_allowed(host) {
            return Some(format!(
                "Host `{host}` is not allowed (add it with --allowed-host)"
            ));
        }
        match origin {
            Some(origin) if !self.origin_allowed(origin, host) => Some(format!(
                "Origin `{origin}` is not allowed (add it with --allowed-origin)"
            )),
            _ => None,
        }
    }
}

/// Middleware: 403 for a request whose `Host` or `Origin` is not allowed.
pub async fn check_origin(
    State(allow): State<Arc<AllowList>>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    let text = |name| headers.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"));
    // HTTP/2 carries the authority in the URI instead of a Host header.
    let host = text(header::HOST)
        .map(str::to_string)
        .or_else(|| request.uri().authority().map(|a| a.to_string()));
    if let Some(why) = allow.refusal(host.as_deref(), text(header::ORIGIN)) {
        tracing::warn!(%why, "request refused (DNS-rebinding protection)");
        return (StatusCode::FORBIDDEN, format!("Forbidden: {why}\n")).into_response();
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allow() -> AllowList {
        AllowList {
            hosts: vec![
                "localhost".into(),
                "127.0.0.1".into(),
                "[::1]".into(),
                "kb.example.com:8443".into(),
            ],
            origins: vec!["https://app.example.com".into()],
        }
    }

    #[test]
    fn hosts_match_by_name_or_exact_authority() {
        let a = allow();
        let refused: Vec<&str> = [
            "127.0.0.1:8765",
            "LOCALHOST:1",
            "[::1]:9",
            "kb.example.com:8443",
            "kb.example.com",
            "evil.example.com:8765",
            "127.0.0.1.evil.com",
        ]
        .into_iter()
        .filter(|h| !a.host_allowed(h))
        .collect();
        assert_eq!(
            refused,
            vec![
                "kb.example.com",
                "evil.example.com:8765",
                "127.0.0.1.evil.com"
            ]
        );
    }

    #[test]
    fn origins_must_be_the_servers_own_or_listed() {
        let a = allow();
        assert_eq!(a.refusal(Some("127.0.0.1:8765"), None), None);
        assert_eq!(
            a.refusal(Some("127.0.0.1:8765"), Some("http://127.0.0.1:8765")),
            None
        );
        assert_eq!(
            a.refusal(Some("localhost:80"), Some("http://localhost")),
            None
        );
        assert_eq!(
            a.refusal(Some("127.0.0.1:8765"), Some("https://app.example.com:443")),
            None
        );
        assert_eq!(
            a.refusal(Some("127.0.0.1:8765"), Some("http://127.0.0.1:3000")),
            Some(
                "Origin `http://127.0.0.1:3000` is not allowed (add it with --allowed-origin)"
                    .into()
            )
        );
        assert_eq!(
            a.refusal(Some("127.0.0.1:8765"), Some("null")),
            Some("Origin `null` is not allowed (add it with --allowed-origin)".into())
        );
        assert_eq!(
            a.refusal(Some("evil.example.com"), Some("http://evil.example.com")),
            Some("Host `evil.example.com` is not allowed (add it with --allowed-host)".into())
        );
        assert_eq!(
            a.refusal(None, None),
            Some("the request has no Host header".into())
        );
    }
}
