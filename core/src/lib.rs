//! folio-core: the live model of a folder of Markdown.
//!
//! Layers, from the bottom: [`document`] (rope text, byte-offset edits, line/column
//! conversions), [`parse`] (elements, headings, links — parsing never fails), [`pointer`](mod@pointer)
//! (hashed semantic pointers), [`links`] (resolution and diagnostics), [`workspace`]
//! (root, configuration, walking, path policy), [`chunk`] (search units), and the
//! SQLite [`store`] with lexical [`search`], tied together by [`index`].
//!
//! This crate knows no protocol: it returns plain data with byte ranges; the LSP and
//! MCP front ends convert to their wire types.

pub mod best_practice;
#[cfg(feature = "pdf-book")]
pub mod book;
pub mod bridge;
pub mod chunk;
pub mod codes;
pub mod config;
pub mod data_dir;
pub mod digest;
pub mod document;
pub mod edit;
pub mod embed;
pub mod endpoint;
pub mod eval;
pub mod external;
pub mod extract;
pub mod features;
pub mod fetch;
pub mod formats;
pub mod heap;
pub mod host;
pub mod index;
pub mod knowledge;
pub(crate) mod le_reader;
pub mod links;
pub mod media;
pub mod model_install;
pub mod packed_text;
pub mod parse;
pub mod path_policy;
pub mod pointer;
pub mod rerank;
pub mod search;
pub mod serde_wording;
pub mod service_http;
pub mod similarity_graph;
pub mod site;
pub mod store;
pub mod tags;
pub mod watch;
pub mod workspace;
pub mod write;

#[cfg(test)]
pub(crate) mod fixture;
