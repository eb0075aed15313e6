//! `textDocument/definition`, `textDocument/references` and `textDocument/hover`.

use std::ops::Range;

use anyhow::Result;
use folio_core::links::navigate::{
    Destination, Reference, block_id_at, definition_at, destination, heading_at, link_at,
    references_to_block, references_to_definition, references_to_document, references_to_heading,
};
use folio_core::tags::{references_to_tag, tag_at};
use folio_core::workspace::Workspace;
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

/// The index of the heading of `path` whose range is `range`.
fn heading_with_range(ws: &Workspace, path: &str, range: &Range<usize>) -> Option<usize> {
    ws.parsed(path)?
        .headings
        .iter()
        .position(|h| h.range == *range)
}

/// Every place the tag under the cursor is carried; else the links to the heading, block
/// id, reference definition or document under the cursor (or that the link under the
/// cursor leads to).
pub fn references(s: &Session, params: &ReferenceParams) -> Result<Option<Vec<Location>>> {
    let p = &params.text_document_position;
    let Some(c) = cursor(s, &p.text_document.uri, p.position) else {
        return Ok(None);
    };
    let ws = &s.roots[c.doc.root].ws();
    let parsed = &c.parsed;
    let include_declaration = params.context.include_declaration;
    let mut declaration: Option<(String, Range<usize>)> = None;
    let refs: Vec<Reference> = if let Some(tag) = tag_at(parsed, c.offset) {
        // Every note carrying the tag, or a tag nested in it; each is a use, none a declaration.
        references_to_tag(ws, &tag.name)
    } else if let Some(h) = heading_at(parsed, c.offset) {
        declaration = Some((c.doc.path.clone(), parsed.headings[h].range.clone()));
        references_to_heading(ws, &c.doc.path, h)
    } else if let Some(b) = block_id_at(parsed, c.offset) {
        declaration = Some((c.doc.path.clone(), parsed.block_ids[b].1.clone()));
        references_to_block(ws, &c.doc.path, b)
    } else if let Some(d) = definition_at(parsed, c.offset) {
        declaration = Some((
            c.doc.path.clone(),
            parsed.definitions[d].label_range.clone(),
        ));
        references_to_definition(ws, &c.doc.path, d)
    } else if let Some(link) = link_at(parsed, c.offset) {
        match destination(ws, &c.doc.path, link) {
            Some(Destination {
                path,
                range: Some(range),
            }) if range.is_empty() => references_to_document(ws, &path),
            Some(Destination {
                path,
                range: Some(range),
            }) => {
                let block = ws
                    .parsed(&path)
                    .and_then(|pp| pp.block_ids.iter().position(|(_, r)| *r == range));
                if let Some(h) = heading_with_range(ws, &path, &range) {
                    declaration = Some((path.clone(), range.clone()));
                    references_to_heading(ws, &path, h)
                } else if let Some(b) = block {
                    declaration = Some((path.clone(), range.clone()));
                    references_to_block(ws, &path, b)
                } else if let Some(d) = ws
                    .parsed(&path)
                    .and_then(|pp| pp.definitions.iter().position(|d| d.range == range))
                {
                    declaration = Some((
                        path.clone(),
                        ws.parsed(&path)
                            .map(|pp| pp.definitions[d].label_range.clone())
                            .unwrap_or(range),
                    ));
                    references_to_definition(ws, &path, d)
                } else {
                    Vec::new()
                }
            }
            Some(Destination { path, range: None }) => references_to_document(ws, &path),
            None => Vec::new(),
        }
    } else {
        references_to_document(ws, &c.doc.path)
    };
    let mut out = Vec::new();
    if include_declaration && let Some((path, range)) = &declaration {
        out.extend(location(s, c.doc.root, path, Some(range)));
    }
    for r in refs {
        out.extend(location(s, c.doc.root, &r.path, Some(&r.range)));
    }
    Ok(Some(out))
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
