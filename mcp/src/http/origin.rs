//! DNS-rebinding protection: every request's `Host` must be on the allow-list, and an
//! `Origin`, when a browser sends one, must be the server's own origin or on the list of
//! allowed origins. Anything else gets 403 before authentication or MCP see it.
//!
//! Compared exactly: a `Host` port must be a port number (`127.0.0.1:8765@evil.example`
//! is refused) and, for the loopback names and the bound address, the port the server
//! listens on (a `Host` without a port means the scheme's default); an `Origin` is the
//! server's own only with the server's scheme (`https://127.0.0.1:PORT` is not the origin
//! of a plain-HTTP server on that port).
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
    /// The scheme clients reach the server with: `http`, or `https` behind a
    /// TLS-terminating proxy. A `Host` without a port means this scheme's default port.
    pub scheme: &'static str,
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

/// True for a port as a URL writes one: 1 to 5 digits, a number up to 65535.
fn is_port(port: &str) -> bool {
    (1..=5).contains(&port.len())
        && port.bytes().all(|b| b.is_ascii_digit())
        && port.parse::<u32>().is_ok_and(|p| p <= 65535)
}

/// The default port of `scheme` (`https`: 443, else 80).
fn default_port(scheme: &str) -> &'static str {
    if scheme == "https" { "443" } else { "80" }
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
    /// Whether `host` (a `Host` header value) is allowed: its port, when it has one, is
    /// a port number, and its name and port are those of an entry (an entry without a
    /// port allows any).
    pub fn host_allowed(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        let (name, port) = split_authority(&host);
        if port.is_some_and(|p| !is_port(p)) {
            return false;
        }
        let port = port.unwrap_or(default_port(self.scheme));
        self.hosts.iter().any(|allowed| {
            let allowed = allowed.to_ascii_lowercase();
            match split_authority(&allowed) {
                (allowed_name, Some(allowed_port)) => allowed_name == name && allowed_port == port,
                (allowed_name, None) => allowed_name == name,
            }
        })
    }

    /// Whether `origin` may call a server reached as `host`: the same scheme and
    /// authority (the server's own page), or an origin on the list.
    pub fn origin_allowed(&self, origin: &str, host: &str) -> bool {
        let Some((scheme, authority)) = origin_authority(origin) else {
            return false;
        };
        let own = scheme == self.scheme && {
            let host = host.to_ascii_lowercase();
            let own_authority = match (scheme.as_str(), split_authority(&host)) {
                ("http", (name, Some("80"))) | ("https", (name, Some("443"))) => name.to_string(),
                _ => host,
            };
            authority == own_authority
        };
        own || self.origins.iter().any(|allowed| {
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
    // Two Host or Origin headers: which one a proxy or a browser meant is unknown (RFC 9112
    // §3.2 answers two Hosts with 400).
    if headers.get_all(header::HOST).iter().count() > 1
        || headers.get_all(header::ORIGIN).iter().count() > 1
    {
        tracing::warn!("request with two Host or Origin headers refused (400)");
        let response = (
            StatusCode::BAD_REQUEST,
            "Bad Request: more than one Host or Origin header\n",
        )
            .into_response();
        return super::refusal::read_body_then(request, response).await;
    }
    let text = |name| headers.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"));
    // HTTP/2 carries the authority in the URI instead of a Host header.
    let host = text(header::HOST)
        .map(str::to_string)
        .or_else(|| request.uri().authority().map(|a| a.to_string()));
    if let Some(why) = allow.refusal(host.as_deref(), text(header::ORIGIN)) {
        tracing::warn!(%why, "request refused (DNS-rebinding protection)");
        let response = (StatusCode::FORBIDDEN, format!("Forbidden: {why}\n")).into_response();
        return super::refusal::read_body_then(request, response).await;
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allow() -> AllowList {
        AllowList {
            hosts: vec![
                "localhost:8765".into(),
                "127.0.0.1:8765".into(),
                "[::1]:8765".into(),
                "kb.example.com:8443".into(),
                "proxy.example.com".into(),
            ],
            origins: vec!["https://app.example.com".into()],
            scheme: "http",
        }
    }

    /// [`allow`] for a server listening on port 80.
    fn on_port_80() -> AllowList {
        AllowList {
            hosts: vec!["localhost:80".into()],
            ..allow()
        }
    }

    #[test]
    fn hosts_match_by_name_or_exact_authority() {
        let a = allow();
        let refused: Vec<&str> = [
            "127.0.0.1:8765",
            "LOCALHOST:8765",
            "[::1]:8765",
            "kb.example.com:8443",
            "proxy.example.com",
            "proxy.example.com:9000",
            "LOCALHOST:1",
            "[::1]:9",
            "127.0.0.1",
            "kb.example.com",
            "evil.example.com:8765",
            "127.0.0.1.evil.com",
            "127.0.0.1:8765@evil.example",
            "127.0.0.1:8765:1",
            "127.0.0.1:99999",
            "127.0.0.1:",
            "proxy.example.com:x",
        ]
        .into_iter()
        .filter(|h| !a.host_allowed(h))
        .collect();
        assert_eq!(
            refused,
            vec![
                "LOCALHOST:1",
                "[::1]:9",
                "127.0.0.1",
                "kb.example.com",
                "evil.example.com:8765",
                "127.0.0.1.evil.com",
                "127.0.0.1:8765@evil.example",
                "127.0.0.1:8765:1",
                "127.0.0.1:99999",
                "127.0.0.1:",
                "proxy.example.com:x",
            ]
        );
        // A Host without a port means the scheme's default one.
        let on_80 = on_port_80();
        assert!(on_80.host_allowed("localhost"));
        assert!(
            !AllowList {
                scheme: "https",
                ..on_80
            }
            .host_allowed("localhost")
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
        // The server's own origin needs the server's scheme too.
        assert_eq!(
            a.refusal(Some("127.0.0.1:8765"), Some("https://127.0.0.1:8765")),
            Some(
                "Origin `https://127.0.0.1:8765` is not allowed (add it with --allowed-origin)"
                    .into()
            )
        );
        let on_80 = on_port_80();
        assert_eq!(
            on_80.refusal(Some("localhost:80"), Some("http://localhost")),
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
