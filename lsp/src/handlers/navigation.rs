//! `textDocument/definition`, `textDocument/references` and `textDocument/hover`.

use anyhow::Result;
use folio_core::features::references::references_at;
use folio_core::links::navigate::{destination, link_at};
use tower_lsp_server::ls_types::{
    GotoDefinitionParams, GotoDefinitionResponse, Hover, HoverContents, HoverParams, Location,
    MarkupContent, MarkupKind, ReferenceParams,
};

use super::{cursor, location};
use crate::convert;
use crate::session::Session;

/// The most bytes a hover preview shows.
pub const PREVIEW_BYTES: usize = 1200;
/// The most lines a hover preview shows.
pub const PREVIEW_LINES: usize = 20;

/// Where the link under the cursor leads.
pub fn definition(
    s: &Session,
    params: &GotoDefinitionParams,
) -> Result<Option<GotoDefinitionResponse>> {
    let p = &params.text_document_position_params;
    let Some(c) = cursor(s, &p.text_document.uri, p.position) else {
        return Ok(None);
    };
    let ws = &s.roots[c.doc.root].ws();
    let Some(link) = link_at(&c.parsed, c.offset) else {
        return Ok(None);
    };
    let Some(dest) = destination(ws, &c.doc.path, link) else {
        return Ok(None);
    };
    Ok(
        location(s, c.doc.root, &dest.path, dest.range.as_ref())
            .map(GotoDefinitionResponse::Scalar),
    )
}

/// Every place the tag under the cursor is carried; else the links to the heading, block
/// id, reference definition or document under the cursor (or that the link under the
/// cursor leads to): core `features::references::references_at`.
pub fn references(s: &Session, params: &ReferenceParams) -> Result<Option<Vec<Location>>> {
    let p = &params.text_document_position;
    let Some(c) = cursor(s, &p.text_document.uri, p.position) else {
        return Ok(None);
    };
    let ws = s.roots[c.doc.root].ws();
    let found = references_at(ws, &c.doc.path, &c.parsed, c.offset);
    let declaration = found
        .declaration
        .filter(|_| params.context.include_declaration);
    let locations = declaration
        .iter()
        .chain(&found.references)
        .filter_map(|r| location(s, c.doc.root, &r.path, Some(&r.range)))
        .collect();
    Ok(Some(locations))
}

/// Cuts a preview to [`PREVIEW_LINES`] lines and [`PREVIEW_BYTES`] bytes on a character boundary.
pub fn clip(text: &str) -> String {
    let mut end = text.len().min(PREVIEW_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut clipped: String = text[..end]
        .lines()
        .take(PREVIEW_LINES)
        .collect::<Vec<_>>()
        .join("\n");
    if clipped.len() < text.trim_end().len() {
        clipped.push_str("\n…");
    }
    clipped
}

/// A preview of what the link under the cursor leads to: the target section, the
/// start of the target document, or the reference definition.
pub fn hover(s: &Session, params: &HoverParams) -> Result<Option<Hover>> {
    let p = &params.text_document_position_params;
    let Some(c) = cursor(s, &p.text_document.uri, p.position) else {
        return Ok(None);
    };
    let ws = &s.roots[c.doc.root].ws();
    let Some(link) = link_at(&c.parsed, c.offset) else {
        return Ok(None);
    };
    let Some(dest) = destination(ws, &c.doc.path, link) else {
        return Ok(None);
    };
    let body = match (&dest.range, ws.get(&dest.path)) {
        (Some(range), Some(target)) => {
            let parsed = &target.parsed;
            let bytes = if range.is_empty() {
                0..target.doc.len_bytes()
            } else if let Some(h) = parsed.headings.iter().find(|h| h.range == *range) {
                h.element
                    .map_or(h.range.clone(), |i| parsed.elements[i].subtree.clone())
            } else {
                range.clone()
            };
            clip(&target.doc.slice(bytes).unwrap_or_default())
        }
        _ => format!("File `{}`", dest.path),
    };
    let value = format!("`{}`\n\n---\n\n{}", dest.path, body);
    Ok(Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value,
        }),
        range: Some(convert::range(&c.entry.doc, &link.range, s.encoding)),
    }))
}
