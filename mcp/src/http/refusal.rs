//! Refusing a request so that the client receives the refusal.
//!
//! A layer that answers without reading the request's body (401, 403, 404, 429, 503)
//! leaves the body unread in the socket; the connection is then closed after the answer,
//! and closing a socket with unread bytes makes the kernel send a reset, which can reach
//! the client before it has read the answer: under a flood of requests with a wrong token,
//! some connections ended without their 401. [`read_body_then`] reads (and drops) the
//! body first, up to [`DRAIN_LIMIT`] bytes and for at most [`DRAIN_TIME`]; a larger or
//! slower body gets the answer with `Connection: close`.

use std::time::Duration;

use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::response::Response;

/// The most body bytes read before a refusal.
pub const DRAIN_LIMIT: usize = 64 * 1024;
/// The longest time spent reading them.
pub const DRAIN_TIME: Duration = Duration::from_secs(2);

/// `response`, sent after `request`'s body was read to its end (see the module docs).
pub async fn read_body_then(request: Request, response: Response) -> Response {
    let read = tokio::time::timeout(
        DRAIN_TIME,
        axum::body::to_bytes(request.into_body(), DRAIN_LIMIT),
    )
    .await;
    if matches!(read, Ok(Ok(_))) {
        response
    } else {
        closing(response)
    }
}

/// `response` with `Connection: close`: the connection ends after it, and whatever the
/// client has not sent of its request is never read.
pub fn closing(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}
