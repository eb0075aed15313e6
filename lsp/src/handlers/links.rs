//! `textDocument/documentLink`: every link a user can click — inline, reference usages
//! (through their definition), wiki links, and links whose target is missing (editors
//! offer to create the file) — with the heading's line when the fragment names one.

use std::str::FromStr;

use anyhow::Result;
use folio_core::links::navigate::click_target;
use folio_core::parse::LinkKind;
use tower_lsp_server::ls_types::{DocumentLink, DocumentLinkParams, Uri};

use crate::convert;
use crate::session::Session;

/// Every clickable link of the document; where each goes is core's `click_target`.
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
    // The whole parse: a closed document's outline leaves out its external links.
    for link in &entry.full_parsed().links {
        if matches!(link.kind, LinkKind::Footnote | LinkKind::UndefinedReference) {
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
        let Some(target) = click_target(ws, &doc.path, link) else {
            continue;
        };
        let Some(uri) = s.uri(doc.root, &target.path) else {
            continue;
        };
        // VS Code opens `file:///…#L12` at line 12.
        let uri = match target.line {
            Some(line) => Uri::from_str(&format!("{}#L{line}", uri.as_str())).unwrap_or(uri),
            None => uri,
        };
        let tooltip = if target.missing {
            format!("{} (does not exist yet)", target.path)
        } else {
            target.path
        };
        out.push(DocumentLink {
            range,
            target: Some(uri),
            tooltip: Some(tooltip),
            data: None,
        });
    }
    Ok(Some(out))
}
