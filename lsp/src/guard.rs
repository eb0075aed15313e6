//! Running a request: an error or a panic in it becomes a JSON-RPC error for that one
//! request (invalid params or request failed when the handler said so with
//! [`InvalidParams`] or [`RequestFailed`], else internal error), and the server goes on.

use std::panic::{AssertUnwindSafe, catch_unwind};

use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};

/// The message of a caught panic.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".to_string())
}

/// An error of the request's parameters (JSON-RPC -32602): a handler returns it (as an
/// `anyhow::Error`) when the client sent arguments the method cannot take.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InvalidParams(pub String);

/// LSP's `RequestFailed` (-32803, LSP 3.17): the request was well formed and what it asks
/// cannot be done (a rename to a name the rules refuse, a note that already exists); the
/// message says why, for the user.
pub const REQUEST_FAILED: i64 = -32803;

/// A refusal of a well-formed request ([`REQUEST_FAILED`]): a handler returns it (as an
/// `anyhow::Error`) when the user asked for something that cannot be done.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RequestFailed(pub String);

/// Runs `f`, turning an error or a panic into a JSON-RPC error naming `method`: -32602 for
/// an [`InvalidParams`] error, -32803 for a [`RequestFailed`] one, -32603 (internal error)
/// for any other error or a panic.
pub fn guarded<T>(method: &str, f: impl FnOnce() -> anyhow::Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => {
            tracing::warn!("{method}: {err:#}");
            let code = if err.downcast_ref::<InvalidParams>().is_some() {
                ErrorCode::InvalidParams
            } else if err.downcast_ref::<RequestFailed>().is_some() {
                ErrorCode::ServerError(REQUEST_FAILED)
            } else {
                ErrorCode::InternalError
            };
            Err(Error {
                code,
                message: format!("{method}: {err:#}").into(),
                data: None,
            })
        }
        Err(payload) => {
            let message = panic_message(payload.as_ref());
            tracing::error!("{method} panicked: {message}");
            Err(Error {
                code: ErrorCode::InternalError,
                message: format!("{method} failed: internal error ({message})").into(),
                data: None,
            })
        }
    }
}
