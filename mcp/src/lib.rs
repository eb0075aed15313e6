//! folio-mcp: the MCP server over folio-core's host (`folio mcp`).
//!
//! Every tool runs one method of [`folio_core::host::Host`] and returns its result as
//! structured content: [`server`] declares the tools (names, descriptions, schemas),
//! prompts and resources and maps [`folio_core::host::HostError`] to a tool error in one
//! place; [`transport`] answers malformed lines on stdio; [`http`] serves streamable HTTP
//! with tokens ([`caller`] carries a request's agent and scope to the tools); [`registry`] is the
//! KnowledgePulse registry client, core's `Registry` port over MCP. Stdout is the wire: nothing here
//! prints, logs go to stderr through `tracing` and never contain document text.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod arguments;
pub mod caller;
pub mod http;
pub mod prompts;
pub mod registry;
pub mod server;
pub mod transport;

#[cfg(test)]
mod tests;

pub use folio_core::host::registry::KnowledgeNetwork;
pub use folio_core::host::{Host, Options};
pub use http::{AuthMode, HttpOptions, serve_http};
pub use registry::McpRegistry;
pub use server::{FolioServer, serve_stdio};
