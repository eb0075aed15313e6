//! `textDocument/documentLink`: every link whose target exists, as a clickable range.

use std::str::FromStr;

use anyhow::Result;
use folio_core::links::{Target, resolve_link};
use folio_core::parse::LinkKind;
use tower_lsp_server::ls_types::{DocumentLink, DocumentLinkParams, Uri};

use crate::convert;
use crate::session::Session;

/// Links to existing documents and files, and external URLs.
pub fn document_link(
    s: &Session,
    params: &DocumentLinkParams,
) -> Result<Option<Vec<DocumentLink>>> {
    let Some(doc) = s.locate_uri(&params.text_document.uri) else {
        return Ok(None);
    };
    let Some(entry) = s.entry(&doc) else {
        return Ok(None);
    };
    let ws = &s.roots[doc.root].ws();
    let mut out = Vec::new();
    for link in &entry.parsed.links {
        if matches!(
            link.kind,
            LinkKind::Reference
                | LinkKind::ImageReference
                | LinkKind::Footnote
                | LinkKind::UndefinedReference
        ) {
            continue;
        }
        let bytes = link.dest_range.clone().unwrap_or(link.range.clone());
        let range = convert::range(&entry.doc, &bytes, s.encoding);
        if link.external {
            if let Ok(uri) = Uri::from_str(&link.dest) {
                out.push(DocumentLink {
                    range,
                    target: Some(uri),
                    tooltip: None,
                    data: None,
                });
            }
            continue;
        }
        if link.dest.is_empty() && !matches!(link.kind, LinkKind::Wiki | LinkKind::WikiEmbed) {
            continue;
        }
        // A link with a broken anchor still leads to its file.
        let path = match resolve_link(ws, &doc.path, link) {
            Target::Document { path, .. } | Target::File(path) => path,
            _ => continue,
        };
        let Some(uri) = s.uri(doc.root, &path) else {
            continue;
        };
        out.push(DocumentLink {
            range,
            target: Some(uri),
            tooltip: Some(path),
            data: None,
        });
    }
    Ok(Some(out))
}
