//! The KnowledgePulse network registry as the host sees it: a role ([`KnowledgeNetwork`])
//! and, for a client, a port ([`Registry`]) that runs a KnowledgePulse tool on the
//! registry.
//!
//! Core knows no protocol: the registry is another folio server reached over MCP, and
//! the adapter that speaks MCP lives in the MCP front end (`folio_mcp::registry`), which
//! the binary injects into the host ([`super::Host::with_knowledge_network`]).
//! docs/knowledgepulse.md ("Network registry") is the user's view.

use std::sync::Arc;

use serde_json::Value;

use super::{ErrorCode, HostError};

/// What this host does with `visibility: network`.
#[derive(Clone, Debug, Default)]
pub enum KnowledgeNetwork {
    /// No registry: `network` is `NOT_CONFIGURED` and nothing is written.
    #[default]
    None,
    /// This host is the registry (`[knowledge] serve_registry = true`): `network`
    /// contributions are kept in this knowledge base, like `org` ones, as the calling
    /// agent's.
    Serve,
    /// This host uses a registry (`[knowledge] registry = URL`): `network` contributions,
    /// verdicts on its items and reputations go to it, and searches merge its results.
    Client(Arc<dyn Registry>),
}

/// A KnowledgePulse registry reached over the network.
///
/// Implementations run one of the six `kp_*` tools on the registry, as the agent the
/// registry's credentials name (not the local caller), and return its structured result.
/// They must not panic on bad answers and must time out rather than hang.
pub trait Registry: Send + Sync + std::fmt::Debug {
    /// Where the registry is, for messages (its URL).
    fn location(&self) -> &str;

    /// Runs KnowledgePulse tool `tool` (e.g. `kp_search_skill`) with `arguments` (a JSON
    /// object of the tool's arguments) on the registry.
    ///
    /// Returns the tool's structured result (a JSON object).
    ///
    /// Errors: [`RegistryError::Unavailable`] when the registry could not be reached or
    /// answered something that is not a tool result; [`RegistryError::Refused`] when the
    /// tool ran there and failed with one of folio's error codes (a read-only token's
    /// contribution is `PERMISSION_DENIED`, an unknown unit `NOT_FOUND`).
    fn call(&self, tool: &str, arguments: Value) -> Result<Value, RegistryError>;
}

/// Why a call to the registry failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegistryError {
    /// Not reached (connection refused, timeout, TLS, HTTP error, not an MCP server):
    /// what happened, for the message.
    Unavailable(String),
    /// The tool ran on the registry and failed: its code and message.
    Refused {
        /// The registry's error code.
        code: ErrorCode,
        /// The registry's message.
        message: String,
    },
}

impl RegistryError {
    /// The host error for a call to the registry at `location` that failed: `UNAVAILABLE`
    /// for [`RegistryError::Unavailable`], else the registry's own code, with a message
    /// that says the registry answered it.
    pub fn into_host_error(self, location: &str) -> HostError {
        match self {
            RegistryError::Unavailable(why) => HostError::new(
                ErrorCode::Unavailable,
                format!(
                    "the KnowledgePulse registry at {location} is unavailable ({why}); nothing was written here, but a request that timed out may have reached the registry (a retried contribution then answers ALREADY_EXISTS)"
                ),
            ),
            RegistryError::Refused { code, message } => {
                HostError::new(code, format!("the registry at {location}: {message}"))
            }
        }
    }
}

/// The error code named `name` (`"NOT_FOUND"`), if it is one of folio's.
pub fn error_code(name: &str) -> Option<ErrorCode> {
    ErrorCode::ALL.into_iter().find(|c| c.as_str() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_errors_keep_the_registry_code_or_say_unavailable() {
        assert_eq!(
            RegistryError::Unavailable("connection refused".into())
                .into_host_error("http://127.0.0.1:9/mcp"),
            HostError::new(
                ErrorCode::Unavailable,
                "the KnowledgePulse registry at http://127.0.0.1:9/mcp is unavailable (connection refused); nothing was written here, but a request that timed out may have reached the registry (a retried contribution then answers ALREADY_EXISTS)"
            )
        );
        assert_eq!(
            RegistryError::Refused {
                code: ErrorCode::PermissionDenied,
                message: "read-only".into()
            }
            .into_host_error("http://r/mcp"),
            HostError::new(
                ErrorCode::PermissionDenied,
                "the registry at http://r/mcp: read-only"
            )
        );
        assert_eq!(error_code("NOT_FOUND"), Some(ErrorCode::NotFound));
        assert_eq!(error_code("UNAVAILABLE"), Some(ErrorCode::Unavailable));
        assert_eq!(error_code("nope"), None);
    }
}
