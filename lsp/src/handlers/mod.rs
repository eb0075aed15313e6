//! One module per feature; each handler reads a [`Session`] and returns wire types.
//!
//! Handlers run under the session lock, synchronously, inside `catch_unwind` (see
//! `server.rs`), so a panic fails one request and leaves the server running.

pub mod actions;
pub mod code_lens;
pub mod commands;
pub mod completion;
pub mod diagnostics;
pub mod folding;
pub mod links;
pub mod navigation;
pub mod rename;
pub mod search;
pub mod symbols;

use std::ops::Range;
use std::sync::Arc;

use folio_core::parse::Parsed;
use folio_core::workspace::DocEntry;
use tower_lsp_server::ls_types::{Location, Position, Range as LspRange, Uri};

use crate::convert;
use crate::session::{DocRef, Session};

/// A cursor in a document: the document, its entry, its whole parse and the byte offset.
pub struct Cursor<'a> {
    /// The document.
    pub doc: DocRef,
    /// Its entry in the model.
    pub entry: &'a DocEntry,
    /// Its parse with every element and link ([`DocEntry::full_parsed`]): what is at the
    /// cursor is read from it, since a closed document's outline leaves out external links
    /// and most block elements.
    pub parsed: Arc<Parsed>,
    /// The byte offset of the position.
    pub offset: usize,
}

/// The document and byte offset of a URI and position, if the document is known.
pub fn cursor<'a>(s: &'a Session, uri: &Uri, pos: Position) -> Option<Cursor<'a>> {
    let doc = s.locate_uri(uri)?;
    let entry = s.entry(&doc)?;
    // A position past the last line names nothing (columns past a line's end are clamped).
    if pos.line as usize >= entry.doc.len_lines() {
        return None;
    }
    let offset = convert::offset(&entry.doc, pos, s.encoding);
    Some(Cursor {
        doc,
        entry,
        parsed: entry.full_parsed(),
        offset,
    })
}

/// The LSP range of bytes of a document of a root.
pub fn lsp_range(s: &Session, root: usize, path: &str, bytes: &Range<usize>) -> Option<LspRange> {
    let entry = s.roots.get(root)?.ws().get(path)?;
    Some(convert::range(&entry.doc, bytes, s.encoding))
}

/// A location in a document or file of a root; files that are not documents get an empty range at the start.
pub fn location(
    s: &Session,
    root: usize,
    path: &str,
    bytes: Option<&Range<usize>>,
) -> Option<Location> {
    let uri = s.uri(root, path)?;
    let range = match bytes {
        Some(b) => lsp_range(s, root, path, b)?,
        None => LspRange::default(),
    };
    Some(Location { uri, range })
}
