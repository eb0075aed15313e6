//! `textDocument/foldingRange`: heading sections, and multi-line blocks (code, lists,
//! tables, quotes, frontmatter, HTML).

use anyhow::Result;
use folio_core::parse::ElementKind;
use tower_lsp_server::ls_types::{FoldingRange, FoldingRangeKind, FoldingRangeParams};

use crate::session::Session;

/// Folding ranges by line (zero-based, inclusive), in source order.
pub fn folding_range(
    s: &Session,
    params: &FoldingRangeParams,
) -> Result<Option<Vec<FoldingRange>>> {
    let Some(doc) = s.locate_uri(&params.text_document.uri) else {
        return Ok(None);
    };
    let Some(entry) = s.entry(&doc) else {
        return Ok(None);
    };
    // Every block element, also of a closed document kept as an outline.
    let parsed = entry.full_parsed();
    let mut out = Vec::new();
    for el in &parsed.elements {
        let (bytes, kind) = match el.kind {
            ElementKind::Heading | ElementKind::ListItem => (el.subtree.clone(), None),
            ElementKind::Frontmatter => (el.range.clone(), Some(FoldingRangeKind::Imports)),
            ElementKind::Code
            | ElementKind::Table
            | ElementKind::BlockQuote
            | ElementKind::Html
            | ElementKind::Math => (el.range.clone(), None),
            _ => continue,
        };
        let start = parsed.line_of(bytes.start) - 1;
        let end = parsed.line_of(bytes.end.saturating_sub(1).max(bytes.start)) - 1;
        if end > start {
            out.push(FoldingRange {
                start_line: start,
                start_character: None,
                end_line: end,
                end_character: None,
                kind,
                collapsed_text: None,
            });
        }
    }
    Ok(Some(out))
}
