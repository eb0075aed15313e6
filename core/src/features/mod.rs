//! The editor and agent features over the model, one file per feature, each a plain
//! function from a parse (or the workspace), a path and a byte offset to plain data:
//! the language server, the MCP server and the CLI convert their wire to a call here
//! and its answer back, so a rule is written once and tested here once.
//!
//! - [`actions`]: the quick fixes for broken links and the table of contents action
//!   over a range (`textDocument/codeAction`).
//! - [`code_lens`]: the reference counts above a document and its headings
//!   (`textDocument/codeLens`).
//! - [`completion`]: what can be typed at the cursor: paths, anchors, wiki targets,
//!   reference labels and tags (`textDocument/completion`).
//! - [`mentions`]: where other notes name a note without linking to it, the edit that
//!   links them (a code action), and the notes nothing links to (`kb_links`' orphans).
//! - [`notes`]: the note a link to a missing note names and the daily note, from the
//!   workspace's templates (`[notes]`).
//! - [`outline`]: the heading tree of a document (`textDocument/documentSymbol`,
//!   `kb_outline`, the table of contents).
//! - [`references`]: the links that reach a document or one of its headings
//!   (`textDocument/references`, `kb_links`' incoming links).
//! - [`rename`]: what can be renamed at the cursor and the edits of a rename or a move
//!   (`textDocument/prepareRename`, `textDocument/rename`, `workspace/willRenameFiles`).

pub mod actions;
pub mod code_lens;
pub mod completion;
pub mod mentions;
pub mod notes;
pub mod outline;
pub mod references;
pub mod rename;
