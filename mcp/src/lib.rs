//! folio-mcp: the MCP server over folio-core.
//!
//! [`kb`] holds the tools' logic as plain synchronous methods with serde argument and
//! result types; [`server`] binds them to rmcp (tools, prompts, resources) and serves
//! stdio. Stdout is the wire: nothing here prints, logs go to stderr through `tracing`
//! and never contain document text.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod kb;
pub mod prompts;
pub mod resources;
pub mod server;
pub mod transport;

pub use kb::{Kb, Options};
pub use server::{FolioServer, serve_stdio};
