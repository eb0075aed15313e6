//! Running a request: an error or a panic in it becomes a JSON-RPC internal error for
//! that one request, and the server goes on.

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

/// Runs `f`, turning an error or a panic into a JSON-RPC internal error naming `method`.
pub fn guarded<T>(method: &str, f: impl FnOnce() -> anyhow::Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => {
            tracing::warn!("{method}: {err:#}");
            Err(Error {
                code: ErrorCode::InternalError,
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
