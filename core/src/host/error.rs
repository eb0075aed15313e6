//! The one error type of host operations: a stable [`ErrorCode`] and a message for the
//! person or agent who asked. Each front end maps it in one place (MCP: a tool error
//! `{code, message}`; LSP: a JSON-RPC error; CLI: a message and an exit code).

use serde::Serialize;

pub use crate::codes::ErrorCode;
use crate::path_policy::PathError;

/// An operation that ran and failed: `{code, message}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct HostError {
    /// Stable error code.
    pub code: ErrorCode,
    /// What went wrong, for the agent.
    pub message: String,
}

impl HostError {
    /// An error with a code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> HostError {
        HostError {
            code,
            message: message.into(),
        }
    }

    /// `INVALID_ARGUMENT`.
    pub fn invalid(message: impl Into<String>) -> HostError {
        HostError::new(ErrorCode::InvalidArgument, message)
    }

    /// `INTERNAL` from any error.
    pub fn internal(err: impl std::fmt::Display) -> HostError {
        HostError::new(ErrorCode::Internal, err.to_string())
    }
}

impl From<PathError> for HostError {
    fn from(err: PathError) -> HostError {
        let code = match err {
            PathError::Invalid { .. } => ErrorCode::InvalidPath,
            PathError::NotFound { .. } => ErrorCode::NotFound,
            PathError::Collides { .. } => ErrorCode::AlreadyExists,
        };
        HostError::new(code, err.to_string())
    }
}

impl From<crate::write::WriteError> for HostError {
    fn from(err: crate::write::WriteError) -> HostError {
        use crate::write::WriteError;
        let code = match &err {
            WriteError::Busy { .. } | WriteError::InUse { .. } => ErrorCode::Busy,
            WriteError::Changed { .. } => ErrorCode::Conflict,
            WriteError::AlreadyExists { .. } => ErrorCode::AlreadyExists,
            WriteError::NotFound { .. } => ErrorCode::NotFound,
            WriteError::Io { .. } => ErrorCode::Internal,
        };
        HostError::new(code, err.to_string())
    }
}

impl From<crate::edit::EditError> for HostError {
    fn from(err: crate::edit::EditError) -> HostError {
        let code = match err {
            crate::edit::EditError::InvalidArgument(_) => ErrorCode::InvalidArgument,
            crate::edit::EditError::Conflict(_) => ErrorCode::Conflict,
        };
        HostError::new(code, err.to_string())
    }
}

/// Result of a host operation.
pub type HostResult<T> = Result<T, HostError>;
