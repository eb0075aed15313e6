//! What the cursor asks references of, and who refers to it ([`references_at`]): the
//! feature behind `textDocument/references`. Who links to a document, heading, block id
//! or definition is [`crate::links::references`], the one rule `kb_links`' incoming
//! links use too.

use std::ops::Range;

use crate::links::navigate::{
    Destination, block_id_at, definition_at, destination, heading_at, link_at,
};
use crate::links::references::{
    Reference, references_to_block, references_to_definition, references_to_document,
    references_to_heading,
};
use crate::parse::Parsed;
use crate::tags::{references_to_tag, tag_at};
use crate::workspace::Workspace;

/// What the cursor asks about and who refers to it: the declaration (the heading, block
/// id or definition named, when there is one) and the references to it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct References {
    /// The place that declares what is referred to: KB-relative path and bytes.
    pub declaration: Option<Reference>,
    /// The places that refer to it, in path then source order.
    pub references: Vec<Reference>,
}

/// The references asked for at byte `offset` of document `path` (parsed as `parsed`):
/// of the tag there (every note carrying it; no declaration); else of the heading, block
/// id or link reference definition there; else of what the link there leads to (a
/// document, or a heading, block id or definition in one); else of the document itself.
pub fn references_at(ws: &Workspace, path: &str, parsed: &Parsed, offset: usize) -> References {
    let declared = |path: &str, range: Range<usize>| {
        Some(Reference {
            path: path.to_owned(),
            range,
        })
    };
    if let Some(tag) = tag_at(parsed, offset) {
        return References {
            declaration: None,
            references: references_to_tag(ws, &tag.name),
        };
    }
    if let Some(h) = heading_at(parsed, offset) {
        return References {
            declaration: declared(path, parsed.headings[h].range.clone()),
            references: references_to_heading(ws, path, h),
        };
    }
    if let Some(b) = block_id_at(parsed, offset) {
        return References {
            declaration: declared(path, parsed.block_ids[b].1.clone()),
            references: references_to_block(ws, path, b),
        };
    }
    if let Some(d) = definition_at(parsed, offset) {
        return References {
            declaration: declared(path, parsed.definitions[d].label_range.clone()),
            references: references_to_definition(ws, path, d),
        };
    }
    match link_at(parsed, offset).and_then(|link| destination(ws, path, link)) {
        Some(Destination {
            path,
            range: Some(range),
        }) if !range.is_empty() => references_to_range(ws, &path, range),
        Some(Destination { path, .. }) => References {
            declaration: None,
            references: references_to_document(ws, &path),
        },
        None if link_at(parsed, offset).is_some() => References::default(),
        None => References {
            declaration: None,
            references: references_to_document(ws, path),
        },
    }
}

/// The references to what starts at `range` of document `path`: a heading, a block id
/// or a link reference definition (none for anything else).
fn references_to_range(ws: &Workspace, path: &str, range: Range<usize>) -> References {
    let Some(target) = ws.parsed(path) else {
        return References::default();
    };
    let declared = |range: Range<usize>| {
        Some(Reference {
            path: path.to_owned(),
            range,
        })
    };
    if let Some(h) = target.headings.iter().position(|h| h.range == range) {
        return References {
            declaration: declared(range),
            references: references_to_heading(ws, path, h),
        };
    }
    if let Some(b) = target.block_ids.iter().position(|(_, r)| *r == range) {
        return References {
            declaration: declared(range),
            references: references_to_block(ws, path, b),
        };
    }
    if let Some(d) = target.definitions.iter().position(|d| d.range == range) {
        return References {
            declaration: declared(target.definitions[d].label_range.clone()),
            references: references_to_definition(ws, path, d),
        };
    }
    References::default()
}
