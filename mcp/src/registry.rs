//! The KnowledgePulse registry client: [`McpRegistry`] implements core's
//! [`Registry`] port by calling the registry's `kp_*` tools over MCP streamable HTTP.
//!
//! The registry is another `folio mcp --http` with `[knowledge] serve_registry = true`,
//! so the client speaks MCP to it with rmcp's own streamable HTTP client (session,
//! `initialize`, `tools/call`, session `DELETE`). rmcp's bundled HTTP backend is reqwest
//! (a second HTTP and TLS stack); `UreqHttp` is the small backend rmcp's
//! `StreamableHttpClient` trait asks for, over ureq, which folio already uses for
//! embeddings and downloads. It answers POSTs with JSON or server-sent events, deletes
//! sessions, and declines the optional standalone GET stream (a tool call needs no
//! server-initiated messages).
//!
//! Each [`Registry::call`] runs on its own thread with a current-thread runtime, so the
//! host's synchronous methods can call it from anywhere (a blocking thread of the
//! server's runtime, a test, the CLI). A call opens a session, runs one tool and closes
//! the session; every step has a timeout ([`CALL_TIMEOUT`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderName, HeaderValue};
use folio_core::codes::ErrorCode;
use folio_core::host::registry::{Registry, RegistryError, error_code};
use futures::StreamExt;
use futures::stream::BoxStream;
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ClientJsonRpcMessage, Implementation,
    ServerJsonRpcMessage,
};
use rmcp::service::ServiceError;
use rmcp::transport::streamable_http_client::{
    HttpStatusError, SseError, StreamableHttpClient, StreamableHttpClientTransport,
    StreamableHttpClientTransportConfig, StreamableHttpError, StreamableHttpPostResponse,
};
use serde_json::Value;
use sse_stream::{Sse, SseStream};

/// The longest a registry call may take, connection to answer.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The most bytes of one answer read from the registry: 16 MiB.
pub const MAX_ANSWER_BYTES: u64 = 16 * 1024 * 1024;

/// A KnowledgePulse registry at an MCP endpoint, called with a bearer token.
#[derive(Clone)]
pub struct McpRegistry {
    url: String,
    token: Option<String>,
    agent: ureq::Agent,
}

impl std::fmt::Debug for McpRegistry {
    /// The URL only: the token never reaches a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpRegistry")
            .field("url", &self.url)
            .field("token", &self.token.as_ref().map(|_| "…"))
            .finish()
    }
}

impl McpRegistry {
    /// A client of the registry whose MCP endpoint is `url` (e.g.
    /// `https://kb.example.com/mcp`), sending `token` as `Authorization: Bearer`.
    ///
    /// Errors (message naming the setting): `url` is not an `http://` or `https://` URL
    /// with a host, or it is plain `http://` to another machine (the token would cross
    /// the network in the clear; a registry elsewhere is reached over https).
    pub fn new(url: &str, token: Option<String>) -> Result<McpRegistry, String> {
        let uri: ureq::http::Uri = url
            .parse()
            .map_err(|e| format!("[knowledge] registry = `{url}` is not a URL: {e}"))?;
        let host = uri
            .host()
            .ok_or_else(|| format!("[knowledge] registry = `{url}` has no host"))?;
        // The embedding endpoint's rule (names are never resolved); a URI's IPv6 host
        // keeps its brackets.
        let loopback = folio_core::endpoint::is_loopback_host(
            host.trim_start_matches('[').trim_end_matches(']'),
        );
        match uri.scheme_str() {
            Some("https") => {}
            Some("http") if loopback => {}
            Some("http") => {
                return Err(format!(
                    "[knowledge] registry = `{url}`: plain http to another machine would send the registry token in the clear; use https (a registry behind a TLS proxy, docs/mcp.md)"
                ));
            }
            _ => {
                return Err(format!(
                    "[knowledge] registry = `{url}` must start with https:// (or http:// on this machine)"
                ));
            }
        }
        let agent = folio_core::service_http::agent(loopback, CALL_TIMEOUT);
        Ok(McpRegistry {
            url: url.to_string(),
            token,
            agent,
        })
    }

    /// One call: session, tool, session closed.
    async fn call_async(&self, tool: &str, arguments: Value) -> Result<Value, RegistryError> {
        let failure = Arc::new(Mutex::new(None::<Failure>));
        let http = UreqHttp {
            agent: self.agent.clone(),
            failure: Arc::clone(&failure),
        };
        let mut config = StreamableHttpClientTransportConfig::with_uri(self.url.clone())
            .custom_headers(HashMap::from([(
                HeaderName::from_static(REGISTRY_CLIENT_HEADER),
                HeaderValue::from_static("1"),
            )]));
        if let Some(token) = &self.token {
            config = config.auth_header(token.clone());
        }
        let transport = StreamableHttpClientTransport::with_client(http, config);
        let info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("folio-registry-client", env!("CARGO_PKG_VERSION")),
        );
        let seen = |what: String| -> RegistryError {
            match failure.lock().ok().and_then(|f| f.clone()) {
                Some(f) => f.into_error(),
                None => RegistryError::Unavailable(what),
            }
        };
        let service = match tokio::time::timeout(CALL_TIMEOUT, info.serve(transport)).await {
            Err(_) => return Err(RegistryError::Unavailable("timed out".into())),
            Ok(Err(e)) => return Err(seen(format!("MCP initialize failed: {e}"))),
            Ok(Ok(service)) => service,
        };
        let Value::Object(arguments) = arguments else {
            return Err(RegistryError::Refused {
                code: ErrorCode::InvalidArgument,
                message: "tool arguments must be a JSON object".into(),
            });
        };
        let request = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let answer = tokio::time::timeout(CALL_TIMEOUT, service.call_tool(request)).await;
        let _ = tokio::time::timeout(Duration::from_secs(5), service.cancel()).await;
        let result = match answer {
            Err(_) => return Err(RegistryError::Unavailable("timed out".into())),
            Ok(Err(ServiceError::McpError(e))) => {
                return Err(RegistryError::Refused {
                    code: ErrorCode::InvalidArgument,
                    message: format!("`{tool}` was refused: {}", e.message),
                });
            }
            Ok(Err(e)) => return Err(seen(format!("`{tool}` failed: {e}"))),
            Ok(Ok(result)) => result,
        };
        let text = result
            .content
            .iter()
            .find_map(|c| c.as_text())
            .map(|t| t.text.clone());
        if result.is_error == Some(true) {
            return Err(tool_error(tool, text.as_deref()));
        }
        match (result.structured_content, text) {
            (Some(value), _) => Ok(value),
            (None, Some(text)) => serde_json::from_str(&text).map_err(|_| {
                RegistryError::Unavailable(format!("`{tool}` answered text that is not JSON"))
            }),
            (None, None) => Err(RegistryError::Unavailable(format!(
                "`{tool}` answered no result"
            ))),
        }
    }
}

/// A tool error's `{code, message}` text as a [`RegistryError`].
fn tool_error(tool: &str, text: Option<&str>) -> RegistryError {
    let body: Option<Value> = text.and_then(|t| serde_json::from_str(t).ok());
    let code = body
        .as_ref()
        .and_then(|b| b.get("code"))
        .and_then(Value::as_str)
        .and_then(error_code);
    let message = body
        .as_ref()
        .and_then(|b| b.get("message"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| text.map(str::to_string))
        .unwrap_or_default();
    match code {
        Some(code) => RegistryError::Refused { code, message },
        None => RegistryError::Unavailable(format!(
            "`{tool}` failed without one of folio's error codes: {message}"
        )),
    }
}

impl Registry for McpRegistry {
    fn location(&self) -> &str {
        &self.url
    }

    fn call(&self, tool: &str, arguments: Value) -> Result<Value, RegistryError> {
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map_err(|e| RegistryError::Unavailable(format!("no runtime: {e}")))?;
                    runtime.block_on(self.call_async(tool, arguments))
                })
                .join()
                .unwrap_or_else(|_| {
                    Err(RegistryError::Unavailable(
                        "the registry client panicked (a bug in folio)".into(),
                    ))
                })
        })
    }
}

/// What went wrong at the HTTP level, kept for a clearer message than rmcp's.
#[derive(Clone, Debug)]
enum Failure {
    /// Not reached: the transport's error.
    Transport(String),
    /// The registry answered with this HTTP status.
    Status(u16),
}

impl Failure {
    fn into_error(self) -> RegistryError {
        match self {
            Failure::Transport(why) => RegistryError::Unavailable(why),
            Failure::Status(status @ (401 | 403)) => RegistryError::Refused {
                code: ErrorCode::PermissionDenied,
                message: format!(
                    "the registry refused the token (HTTP {status}): check `[knowledge] registry_token_file` or FOLIO_REGISTRY_TOKEN, and `folio token list` on the registry"
                ),
            },
            Failure::Status(status) => RegistryError::Unavailable(format!("HTTP {status}")),
        }
    }
}

/// The error of the ureq backend of rmcp's client: what ureq said.
#[derive(Debug)]
pub struct HttpError(String);

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HttpError {}

type HttpResult<T> = Result<T, StreamableHttpError<HttpError>>;

/// rmcp's streamable HTTP client backend over ureq (blocking calls on tokio's blocking
/// threads).
#[derive(Clone)]
struct UreqHttp {
    agent: ureq::Agent,
    /// The first transport failure or HTTP error status of this session.
    failure: Arc<Mutex<Option<Failure>>>,
}

/// What the blocking part of a POST found.
enum Posted {
    Accepted,
    Json(Vec<u8>, Option<String>),
    Sse(ureq::Body, Option<String>),
}

impl UreqHttp {
    fn note(&self, failure: Failure) {
        if let Ok(mut slot) = self.failure.lock()
            && slot.is_none()
        {
            *slot = Some(failure);
        }
    }

    fn transport_error(&self, err: ureq::Error) -> StreamableHttpError<HttpError> {
        let message = match &err {
            ureq::Error::Timeout(_) => "timed out".to_string(),
            ureq::Error::Io(e) => e.to_string(),
            other => other.to_string(),
        };
        self.note(Failure::Transport(message.clone()));
        StreamableHttpError::Client(HttpError(message))
    }

    fn status_error(&self, status: u16) -> StreamableHttpError<HttpError> {
        self.note(Failure::Status(status));
        StreamableHttpError::HttpStatus(HttpStatusError::new(status, None))
    }
}

/// The header a registry client sends with every request, so that a folio server that is
/// not a registry refuses the KnowledgePulse calls instead of forwarding them to its own
/// registry (a client pointed at itself, or at another client, would loop).
pub const REGISTRY_CLIENT_HEADER: &str = "folio-registry-client";

fn headers_of<B>(
    mut request: ureq::RequestBuilder<B>,
    session_id: Option<&str>,
    auth: Option<&str>,
    custom: &HashMap<HeaderName, HeaderValue>,
) -> ureq::RequestBuilder<B> {
    for (name, value) in custom {
        request = request.header(name, value);
    }
    if let Some(session) = session_id {
        request = request.header("mcp-session-id", session);
    }
    if let Some(token) = auth {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    request
}

/// The body of an SSE answer as a stream of events, read on a blocking thread.
fn sse_events(body: ureq::Body) -> BoxStream<'static, Result<Sse, SseError>> {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(16);
    tokio::task::spawn_blocking(move || {
        use std::io::Read;
        let mut reader = body.into_with_config().limit(MAX_ANSWER_BYTES).reader();
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match reader.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => {
                    if tx
                        .blocking_send(Ok(Bytes::copy_from_slice(&buf[..n])))
                        .is_err()
                    {
                        return;
                    }
                }
                Err(e) => {
                    let _ = tx.blocking_send(Err(e));
                    return;
                }
            }
        }
    });
    let bytes = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
    SseStream::from_bytes_stream(bytes).boxed()
}

impl StreamableHttpClient for UreqHttp {
    type Error = HttpError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let body = serde_json::to_vec(&message)?;
        let agent = self.agent.clone();
        let had_session = session_id.is_some();
        let posted = tokio::task::spawn_blocking(move || -> Result<_, ureq::Error> {
            let request = agent
                .post(&*uri)
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json");
            let request = headers_of(
                request,
                session_id.as_deref(),
                auth_header.as_deref(),
                &custom_headers,
            );
            let response = request.send(&body[..])?;
            let status = response.status().as_u16();
            let header = |name: &str| {
                response
                    .headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            let session = header("mcp-session-id");
            let kind = header("content-type").unwrap_or_default();
            let essence = kind
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            Ok(match (status, essence.as_str()) {
                (202, _) => Ok(Posted::Accepted),
                (200..=299, "text/event-stream") => Ok(Posted::Sse(response.into_body(), session)),
                (200..=299, "application/json") => Ok(Posted::Json(
                    response
                        .into_body()
                        .into_with_config()
                        .limit(MAX_ANSWER_BYTES)
                        .read_to_vec()?,
                    session,
                )),
                (200..=299, _) => Err(Ok(kind)),
                (status, _) => Err(Err(status)),
            })
        })
        .await?
        .map_err(|e| self.transport_error(e))?;
        match posted {
            Ok(Posted::Accepted) => Ok(StreamableHttpPostResponse::Accepted),
            Ok(Posted::Json(bytes, session)) => {
                let message: ServerJsonRpcMessage = serde_json::from_slice(&bytes)?;
                Ok(StreamableHttpPostResponse::Json(message, session))
            }
            Ok(Posted::Sse(body, session)) => {
                Ok(StreamableHttpPostResponse::Sse(sse_events(body), session))
            }
            Err(Ok(kind)) => Err(StreamableHttpError::UnexpectedContentType(Some(kind))),
            Err(Err(404)) if had_session => Err(StreamableHttpError::SessionExpired),
            Err(Err(status)) => Err(self.status_error(status)),
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<()> {
        let agent = self.agent.clone();
        let status = tokio::task::spawn_blocking(move || -> Result<u16, ureq::Error> {
            let request = headers_of(
                agent.delete(&*uri),
                Some(&session_id),
                auth_header.as_deref(),
                &custom_headers,
            );
            Ok(request.call()?.status().as_u16())
        })
        .await?
        .map_err(|e| StreamableHttpError::Client(HttpError(e.to_string())))?;
        match status {
            200..=299 | 404 => Ok(()),
            405 => Err(StreamableHttpError::ServerDoesNotSupportDeleteSession),
            status => Err(StreamableHttpError::HttpStatus(HttpStatusError::new(
                status, None,
            ))),
        }
    }

    async fn get_stream(
        &self,
        _uri: Arc<str>,
        _session_id: Option<Arc<str>>,
        _last_event_id: Option<String>,
        _auth_header: Option<String>,
        _custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<BoxStream<'static, Result<Sse, SseError>>> {
        // A tool call needs no server-initiated messages: no standalone stream.
        Err(StreamableHttpError::ServerDoesNotSupportSse)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_urls_are_https_or_loopback_http() {
        assert!(McpRegistry::new("http://127.0.0.1:8765/mcp", None).is_ok());
        assert!(McpRegistry::new("http://localhost:8765/mcp", None).is_ok());
        assert!(McpRegistry::new("http://[::1]:8765/mcp", None).is_ok());
        assert!(McpRegistry::new("https://kb.example.com/mcp", None).is_ok());
        assert_eq!(
            McpRegistry::new("http://kb.example.com/mcp", None).unwrap_err(),
            "[knowledge] registry = `http://kb.example.com/mcp`: plain http to another machine would send the registry token in the clear; use https (a registry behind a TLS proxy, docs/mcp.md)"
        );
        assert_eq!(
            McpRegistry::new("ftp://kb.example.com/mcp", None).unwrap_err(),
            "[knowledge] registry = `ftp://kb.example.com/mcp` must start with https:// (or http:// on this machine)"
        );
    }

    #[test]
    fn the_token_never_shows_in_debug_output() {
        let r = McpRegistry::new("http://127.0.0.1:1/mcp", Some("folio_secret".into())).unwrap();
        assert_eq!(
            format!("{r:?}"),
            r#"McpRegistry { url: "http://127.0.0.1:1/mcp", token: Some("…") }"#
        );
    }

    #[test]
    fn tool_errors_keep_folio_codes() {
        assert_eq!(
            tool_error(
                "kp_validate_unit",
                Some(r#"{"code":"NOT_FOUND","message":"no unit"}"#)
            ),
            RegistryError::Refused {
                code: ErrorCode::NotFound,
                message: "no unit".into()
            }
        );
        assert_eq!(
            tool_error("kp_search_skill", Some("boom")),
            RegistryError::Unavailable(
                "`kp_search_skill` failed without one of folio's error codes: boom".into()
            )
        );
    }
}
