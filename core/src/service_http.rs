//! The HTTP agent of folio's clients of a service the user configured: an embedding
//! provider ([`crate::embed::http`]), a reranker ([`crate::rerank::http`]) and a
//! KnowledgePulse registry (`folio_mcp::registry`); and the JSON request the first two
//! send ([`post_json`]).
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

/// The answer of [`post_json`]: its HTTP status and body.
#[derive(Debug)]
pub struct JsonAnswer {
    /// The HTTP status code.
    pub status: u16,
    /// The body, at most the `limit` given to [`post_json`].
    pub body: Vec<u8>,
}

impl JsonAnswer {
    /// Whether the status is 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// `HTTP {status} from {url}` (for a 3xx, with a note that redirects are not
    /// followed), then `: ` and the body's first 300 characters when it has any, each
    /// control character (an escape sequence, a line break) turned into a space so that
    /// a server cannot paint a terminal: the message of an error status.
    pub fn status_message(&self, url: &str) -> String {
        let excerpt: String = String::from_utf8_lossy(&self.body)
            .chars()
            .take(300)
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let excerpt = excerpt.trim();
        let redirect = if (300..400).contains(&self.status) {
            " (redirects are not followed: set the endpoint it points to)"
        } else {
            ""
        };
        if excerpt.is_empty() {
            format!("HTTP {} from {url}{redirect}", self.status)
        } else {
            format!("HTTP {} from {url}{redirect}: {excerpt}", self.status)
        }
    }
}

/// POSTs `body` (JSON text) to `url` with `agent`, with `Authorization: Bearer {api_key}`
/// when a key is given, and reads the answer's body up to `limit` bytes.
///
/// Errors: a transport failure (connecting, sending, reading, a body over `limit`), as
/// `{url}: {what}` ([`describe_error`]). An error status is an answer, not an error.
pub fn post_json(
    agent: &ureq::Agent,
    url: &str,
    body: &str,
    api_key: Option<&str>,
    limit: u64,
) -> Result<JsonAnswer, String> {
    let transport = |err: ureq::Error| format!("{url}: {}", describe_error(&err));
    if api_key.is_some_and(|k| !k.bytes().all(|b| b.is_ascii_graphic())) {
        return Err(format!(
            "{url}: the API key from the environment holds a space, a control or a non-ASCII character, \
             which an HTTP header cannot carry"
        ));
    }
    let mut req = agent.post(url).header("Content-Type", "application/json");
    if let Some(key) = api_key {
        req = req.header("Authorization", &format!("Bearer {key}"));
    }
    let response = req.send(body.as_bytes()).map_err(transport)?;
    let status = response.status().as_u16();
    let body = response
        .into_body()
        .into_with_config()
        .limit(limit)
        .read_to_vec()
        .map_err(transport)?;
    Ok(JsonAnswer { status, body })
}

/// The first non-empty value, trimmed, of the environment variables `names`, in order:
/// where an API key is read from.
pub fn api_key_from_env(names: &[&str]) -> Option<String> {
    names
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .map(|v| v.trim().to_owned())
        .find(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_status_message_cannot_carry_control_characters() {
        let answer = JsonAnswer {
            status: 500,
            body: b"\x1b[31mRED\x1b[0m line1\r\nline2\n".to_vec(),
        };
        assert_eq!(
            answer.status_message("http://127.0.0.1:1/rerank"),
            "HTTP 500 from http://127.0.0.1:1/rerank: [31mRED [0m line1  line2"
        );
        let redirect = JsonAnswer {
            status: 302,
            body: Vec::new(),
        };
        assert_eq!(
            redirect.status_message("http://127.0.0.1:1/rerank"),
            "HTTP 302 from http://127.0.0.1:1/rerank (redirects are not followed: set the endpoint it points to)"
        );
    }
}
