//! The sessions of `folio mcp --http`, kept in front of rmcp's session manager: each bound
//! to the token that opened it, capped per token and in total, and checked for request ids
//! already in flight.
//!
//! - **Binding.** The `initialize` that opens a session records the caller's token id. A
//!   request naming the session (`Mcp-Session-Id`) with another token, `DELETE` included,
//!   gets 404 as if the session did not exist, so a token cannot learn of, use or end
//!   another agent's session. With `--no-auth` there are no tokens and nothing to bind.
//! - **Caps.** [`SessionLimits`]: at most `per_token` live sessions per token and `total`
//!   in all. An `initialize` over a cap closes the least recently used idle session (no
//!   request of it in flight) of that token, or of anyone for the total; when every
//!   session is busy it gets 503 with `Retry-After`. A `DELETE` that ends a session is
//!   200; one naming no session this caller can see is 404.
//! - **Ids in flight.** A request whose id is that of a request of the same session still
//!   being answered gets 400 with a JSON-RPC `-32600` error (`id: null`, so a client does
//!   not take it for the first request's answer) instead of reaching rmcp, which routes
//!   answers by id and would lose one of the two.
//! - **Memory.** Sessions that ended (closed, deleted or expired after rmcp's idle time)
//!   are dropped from the table when sessions are counted and every
//!   [`PRUNE_EVERY`]; then the allocator is asked to hand freed memory back to the system.
//!
//! A POST's body is read here once (at most `max_body_bytes`, else 413) and checked by
//! [`super::message::check`]; rmcp gets the same bytes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::message::{self, Message, Refusal};
use super::refusal::closing;
use crate::caller::Caller;

/// The header naming a request's session (MCP streamable HTTP transport).
pub const SESSION_HEADER: &str = "mcp-session-id";
/// Default largest number of live sessions a token may hold.
pub const DEFAULT_SESSIONS_PER_TOKEN: usize = 32;
/// Default largest number of live sessions in all.
pub const DEFAULT_SESSIONS_TOTAL: usize = 1024;
/// Default time after which a session no request named ends (rmcp's default too).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// How often ended sessions are dropped from the table and memory handed back.
pub const PRUNE_EVERY: Duration = Duration::from_secs(30);

/// How many sessions may live at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionLimits {
    /// Live sessions per token (with `--no-auth`, all sessions share one owner).
    pub per_token: usize,
    /// Live sessions in all.
    pub total: usize,
    /// A session no request names for this long ends (rmcp closes it).
    pub idle_timeout: Duration,
}

impl Default for SessionLimits {
    fn default() -> SessionLimits {
        SessionLimits {
            per_token: DEFAULT_SESSIONS_PER_TOKEN,
            total: DEFAULT_SESSIONS_TOTAL,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
        }
    }
}

/// One live session as this layer knows it.
#[derive(Debug)]
struct Entry {
    /// The token id that opened it (`None` without authentication).
    owner: Option<String>,
    /// When a request last named it.
    last_used: Instant,
    /// Ids (as compact JSON) of its requests being answered.
    in_flight: Vec<String>,
}

/// The session table shared by every request.
pub struct Sessions {
    /// rmcp's session manager, which the service shares.
    pub manager: Arc<LocalSessionManager>,
    table: Mutex<HashMap<Arc<str>, Entry>>,
    limits: SessionLimits,
    max_body_bytes: usize,
    /// How long a POST's body may take to arrive once its headers have.
    body_read_timeout: Duration,
}

impl Sessions {
    /// A table in front of `manager` (the one rmcp's service uses).
    pub fn new(
        manager: Arc<LocalSessionManager>,
        limits: SessionLimits,
        max_body_bytes: usize,
        body_read_timeout: Duration,
    ) -> Sessions {
        Sessions {
            manager,
            table: Mutex::new(HashMap::new()),
            limits,
            max_body_bytes,
            body_read_timeout,
        }
    }

    fn table(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, Entry>> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The number of sessions in the table (live ones, and ended ones not yet pruned).
    pub fn len(&self) -> usize {
        self.table().len()
    }

    /// True when the table is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops the sessions rmcp no longer has (closed or expired); hands freed memory back
    /// to the system when any were dropped. Returns how many were.
    pub async fn prune(&self) -> usize {
        let ids: Vec<Arc<str>> = self.table().keys().cloned().collect();
        let mut ended = Vec::new();
        for id in ids {
            if !self.manager.has_session(&id).await.unwrap_or(false) {
                ended.push(id);
            }
        }
        if !ended.is_empty() {
            let mut table = self.table();
            for id in &ended {
                table.remove(id);
            }
            drop(table);
            release_freed_memory();
        }
        ended.len()
    }

    /// Makes room for a session of `owner`: closes the least recently used idle session
    /// of `owner` when it is at its cap, then of anyone when the total is. `Err(())` when
    /// a cap is reached and every session under it is busy, naming that cap.
    async fn make_room(&self, owner: &Option<String>) -> Result<(), Cap> {
        self.prune().await;
        for (whose, cap, which) in [
            (Some(owner), self.limits.per_token, Cap::Token),
            (None, self.limits.total, Cap::Server),
        ] {
            let victim = match room_for(&self.table(), whose, cap) {
                Room::Free => continue,
                Room::Full => return Err(which),
                Room::Close(victim) => victim,
            };
            tracing::info!(
                session = %victim,
                cap,
                "closing the least recently used idle session: a cap of live sessions was reached"
            );
            self.table().remove(&victim);
            let _ = self.manager.close_session(&victim).await;
            release_freed_memory();
        }
        Ok(())
    }
}

/// Which cap left no room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cap {
    /// The caller's token's (`sessions_per_token`).
    Token,
    /// The server's (`max_sessions`).
    Server,
}

/// Whether a cap leaves room for one more session.
#[derive(Debug, PartialEq, Eq)]
enum Room {
    /// Under the cap.
    Free,
    /// At the cap: closing this idle session (the least recently used) makes room.
    Close(Arc<str>),
    /// At the cap with every session busy.
    Full,
}

/// The room `cap` leaves among the sessions of `whose` (`Some(owner)`: that token's;
/// `None`: everyone's).
fn room_for(table: &HashMap<Arc<str>, Entry>, whose: Option<&Option<String>>, cap: usize) -> Room {
    let counted = |e: &Entry| whose.is_none_or(|owner| e.owner == *owner);
    if table.values().filter(|e| counted(e)).count() < cap {
        return Room::Free;
    }
    table
        .iter()
        .filter(|(_, e)| counted(e) && e.in_flight.is_empty())
        .min_by_key(|(_, e)| e.last_used)
        .map_or(Room::Full, |(id, _)| Room::Close(Arc::clone(id)))
}

/// Asks the allocator to return freed pages to the system (glibc keeps them otherwise:
/// a thousand ended sessions kept their memory after they were gone).
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator's own arenas.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Removes a request's id from its session's in-flight list when dropped (its answer was
/// sent, or the client went away).
struct InFlight {
    sessions: Arc<Sessions>,
    session: Arc<str>,
    id: String,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Some(entry) = self.sessions.table().get_mut(&self.session)
            && let Some(i) = entry.in_flight.iter().position(|id| *id == self.id)
        {
            entry.in_flight.swap_remove(i);
        }
    }
}

/// 404 for a session this caller cannot see, the same bytes and headers as rmcp's answer
/// for a session that does not exist (so the two cannot be told apart).
fn not_found() -> Response {
    let mut response = Response::new(Body::from("Not Found: Session not found"));
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// 413: the request's body is larger than `max` bytes.
fn too_large(max: usize) -> Response {
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("Payload Too Large: request body exceeds {max} bytes"),
    )
        .into_response()
}

/// 503 when a cap is reached and every session under it is busy; `whose` says which cap.
fn busy(whose: Cap) -> Response {
    let message = match whose {
        Cap::Token => {
            "Service Unavailable: every session this token may hold is answering a request; try again shortly or end one of its sessions (DELETE)"
        }
        Cap::Server => {
            "Service Unavailable: the server holds as many sessions as it may and every one is answering a request; try again shortly"
        }
    };
    let mut response = (StatusCode::SERVICE_UNAVAILABLE, message).into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// Middleware: binding, caps and in-flight ids (see the module docs). Runs after
/// authentication, so the caller's token is known.
pub async fn guard(
    State(sessions): State<Arc<Sessions>>,
    request: Request,
    next: Next,
) -> Response {
    let owner = request
        .extensions()
        .get::<Caller>()
        .map(|c| c.token_id.clone());
    let session: Option<Arc<str>> = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(Arc::from);
    // Another token's session is, to this caller, one that does not exist.
    let foreign = session.as_ref().is_some_and(|id| {
        let mut table = sessions.table();
        match table.get_mut(id) {
            Some(entry) if entry.owner != owner => true,
            Some(entry) => {
                entry.last_used = Instant::now();
                false
            }
            None => false,
        }
    });
    if foreign {
        tracing::warn!("a request named a session another token opened: 404");
        return super::refusal::read_body_then(request, not_found()).await;
    }
    let deleting = request.method() == Method::DELETE;
    if deleting
        && let Some(id) = &session
        && !sessions.manager.has_session(id).await.unwrap_or(false)
    {
        // rmcp answers 202 to a DELETE of any id, which would tell a caller that an id
        // it was refused (404) exists: an unknown session is 404 here too.
        return not_found();
    }
    if request.method() != Method::POST {
        let mut response = next.run(request).await;
        if deleting
            && response.status().is_success()
            && let Some(id) = &session
        {
            sessions.table().remove(id);
            release_freed_memory();
            // 200, which clients accept for an ended session (the MCP Python SDK warns
            // on rmcp's 202).
            *response.status_mut() = StatusCode::OK;
        }
        return response;
    }
    // A body its own Content-Length says is too large is refused before any of it is
    // read, and the connection closed (the rest of it is never read).
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > sessions.max_body_bytes as u64) {
        return closing(too_large(sessions.max_body_bytes));
    }
    let (parts, body) = request.into_parts();
    // A body that stops coming would hold the connection: it has the headers' time limit.
    let read = axum::body::to_bytes(body, sessions.max_body_bytes);
    let bytes: Bytes = match tokio::time::timeout(sessions.body_read_timeout, read).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) => return too_large(sessions.max_body_bytes),
        Err(_) => {
            return closing(
                (
                    StatusCode::REQUEST_TIMEOUT,
                    format!(
                        "Request Timeout: the request body did not arrive within {} s",
                        sessions.body_read_timeout.as_secs()
                    ),
                )
                    .into_response(),
            );
        }
    };
    let message = match message::check(&bytes) {
        Ok(message) => message,
        Err(refusal) => return refusal.into_response(),
    };
    // An OAuth token's write beyond its scope: 403 asking for the scope (step-up), before
    // a session or the tool sees it.
    if let Message::Request {
        tool: Some(tool), ..
    } = &message
        && let (Some(step_up), Some(caller)) = (
            parts.extensions.get::<super::auth::StepUp>(),
            parts.extensions.get::<Caller>(),
        )
        && let Some(needed) = caller.lacks(tool)
    {
        tracing::warn!(agent = ?caller.agent, tool = ?tool, "a write beyond the access token's scope refused (403)");
        return step_up.forbidden(needed);
    }
    // Params of the wrong shape for a known method: -32602, as over stdio (rmcp would
    // answer -32601, method not found).
    if let Message::Request {
        invalid_params: Some(reply),
        ..
    } = &message
    {
        return (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            reply.clone(),
        )
            .into_response();
    }
    let opening = session.is_none() && message.is_initialize();
    if opening && let Err(cap) = sessions.make_room(&owner).await {
        return busy(cap);
    }
    let mut in_flight = None;
    if let (Some(session), Message::Request { id, .. }) = (&session, &message) {
        let id = id.to_string();
        let mut table = sessions.table();
        if let Some(entry) = table.get_mut(session) {
            if entry.in_flight.contains(&id) {
                return Refusal {
                    code: message::INVALID_REQUEST,
                    message: format!(
                        "a request with id {id} is already being answered in this session: use a new id for each request"
                    ),
                    id: serde_json::Value::Null,
                }
                .into_response();
            }
            entry.in_flight.push(id.clone());
            in_flight = Some(InFlight {
                sessions: Arc::clone(&sessions),
                session: Arc::clone(session),
                id,
            });
        }
    }
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    if opening
        && let Some(id) = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
    {
        sessions.table().insert(
            Arc::from(id),
            Entry {
                owner,
                last_used: Instant::now(),
                in_flight: Vec::new(),
            },
        );
    }
    match in_flight {
        // The id stays in flight until the answer's stream ends.
        Some(guard) => {
            let (parts, body) = response.into_parts();
            let stream = body.into_data_stream();
            let body = Body::from_stream(futures::StreamExt::map(stream, move |chunk| {
                let _ = &guard;
                chunk
            }));
            Response::from_parts(parts, body)
        }
        None => response,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(owner: &str, age_secs: u64, busy: bool) -> Entry {
        Entry {
            owner: Some(owner.into()),
            last_used: Instant::now() - Duration::from_secs(age_secs),
            in_flight: if busy { vec!["1".into()] } else { vec![] },
        }
    }

    #[test]
    fn a_cap_closes_the_least_recently_used_idle_session_under_it() {
        let mut table = HashMap::new();
        table.insert(Arc::from("a-old"), entry("a", 30, false));
        table.insert(Arc::from("a-new"), entry("a", 10, false));
        table.insert(Arc::from("b-oldest-busy"), entry("b", 60, true));
        let a = Some("a".to_string());
        let b = Some("b".to_string());
        let c = Some("c".to_string());
        // Token a holds 2: at a cap of 2 its older idle session goes, at 3 there is room.
        assert_eq!(room_for(&table, Some(&a), 2), Room::Close("a-old".into()));
        assert_eq!(room_for(&table, Some(&a), 3), Room::Free);
        // Token c holds none.
        assert_eq!(room_for(&table, Some(&c), 1), Room::Free);
        // The total: the oldest session is busy, so the oldest idle one goes.
        assert_eq!(room_for(&table, None, 3), Room::Close("a-old".into()));
        assert_eq!(room_for(&table, None, 4), Room::Free);
        // Token b's only session is busy: no room at a cap of 1.
        assert_eq!(room_for(&table, Some(&b), 1), Room::Full);
    }

    #[tokio::test]
    async fn sessions_rmcp_no_longer_has_are_pruned() {
        let sessions = Sessions::new(
            Arc::new(LocalSessionManager::default()),
            SessionLimits::default(),
            1024,
            Duration::from_secs(10),
        );
        sessions.table().insert("gone".into(), entry("a", 5, false));
        assert_eq!(sessions.prune().await, 1);
        assert!(sessions.is_empty());
    }
}
