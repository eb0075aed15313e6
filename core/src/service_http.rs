//! The HTTP agent of folio's clients of a service the user configured: an embedding
//! provider ([`crate::embed::http`]) and a KnowledgePulse registry (`folio_mcp::registry`).
//!
//! One policy for both: a loopback address never goes through a proxy, any other uses
//! the environment's (`HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`); redirects are not followed
//! (a redirect could carry a token or the notes elsewhere); HTTP error statuses are
//! answers for the caller to read, not transport errors; the user agent is
//! `folio/<version>`. (Image downloads pin their addresses and certificates and build
//! their own agent: `crate::fetch`.)

use std::time::Duration;

/// Most time to open a connection, in seconds.
pub const CONNECT_TIMEOUT_SECS: u64 = 10;

/// An agent for a service at a loopback address (`loopback`) or elsewhere, whose every
/// request (connect, send, answer) must finish within `timeout`.
pub fn agent(loopback: bool, timeout: Duration) -> ureq::Agent {
    let proxy = if loopback {
        None
    } else {
        ureq::Proxy::try_from_env()
    };
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_connect(Some(Duration::from_secs(CONNECT_TIMEOUT_SECS).min(timeout)))
        .timeout_global(Some(timeout))
        .proxy(proxy)
        .user_agent(concat!("folio/", env!("CARGO_PKG_VERSION")))
        .build()
        .new_agent()
}

/// A transport failure of a request, in words for a message after the URL: `timed out`,
/// `connection refused`, `connection failed`, `host not found`, else ureq's own text.
pub fn describe_error(err: &ureq::Error) -> String {
    match err {
        ureq::Error::Timeout(_) => "timed out".to_owned(),
        ureq::Error::ConnectionFailed => "connection failed".to_owned(),
        ureq::Error::HostNotFound => "host not found".to_owned(),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            "connection refused".to_owned()
        }
        other => other.to_string(),
    }
}
