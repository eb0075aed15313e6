//! Who links to what: every link in the workspace that reaches a document, one of its
//! headings or block ids, or a link reference definition. The one rule behind
//! `textDocument/references` ([`crate::features::references`]), `kb_links`' incoming
//! links and the links a heading rename rewrites.
//!
//! Every document's links are resolved ([`crate::links::resolve_link`], site rules
//! included) rather than narrowed through [`crate::links::graph::LinkGraph`]: the graph's
//! keys are the paths and names a link is written with, and a site generator's routes
//! (a Docusaurus `slug`, a Hugo `ref`) reach files under none of them.

use std::collections::HashMap;
use std::ops::Range;

use crate::links::navigate::fragment_range;
use crate::links::{Target, resolve_link};
use crate::parse::{Link, LinkKind};
use crate::workspace::Workspace;

/// One link that points at something.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// KB-relative path of the linking document.
    pub path: String,
    /// Bytes of the whole link.
    pub range: Range<usize>,
}

/// Every link in another document that leads to document `path` (any fragment), in
/// path then source order: the incoming links of `kb_links` and the references to a
/// document. A document's links to itself (`[x](#setup)`) are references to its
/// headings, not to the document.
pub fn references_to_document(ws: &Workspace, path: &str) -> Vec<Reference> {
    collect_references(ws, |from, target, _| {
        document_reached(from, target) == Some(path)
    })
}

/// [`references_to_document`] of every document at once (one pass over the links):
/// document → the references to it.
pub fn references_to_documents(ws: &Workspace) -> HashMap<String, Vec<Reference>> {
    let mut out: HashMap<String, Vec<Reference>> = HashMap::new();
    for from in ws.document_paths() {
        for_each_resolved(ws, from, |link, target| {
            if let Some(to) = document_reached(from, &target) {
                out.entry(to.to_owned()).or_default().push(Reference {
                    path: from.to_owned(),
                    range: link.range.clone(),
                });
            }
        });
    }
    out
}

/// The references to document `path` and to each of its headings, from one pass over
/// the workspace's links: `.document` is [`references_to_document`], `.headings[i]` is
/// [`references_to_heading`] of heading `i` (the same rules, so the same lists). Empty
/// when `path` is not a document of the workspace.
pub fn references_to_document_and_headings(ws: &Workspace, path: &str) -> DocumentReferences {
    let Some(parsed) = ws.parsed(path) else {
        return DocumentReferences::default();
    };
    let heading_of: HashMap<(usize, usize), usize> = parsed
        .headings
        .iter()
        .enumerate()
        .map(|(i, h)| ((h.range.start, h.range.end), i))
        .collect();
    let case_sensitive = ws.config().diagnostics.fragment_case_sensitive;
    let mut out = DocumentReferences {
        document: Vec::new(),
        headings: vec![Vec::new(); parsed.headings.len()],
    };
    for from in ws.document_paths() {
        for_each_resolved(ws, from, |link, target| {
            let reference = || Reference {
                path: from.to_string(),
                range: link.range.clone(),
            };
            if document_reached(from, &target) == Some(path) {
                out.document.push(reference());
            }
            if let Target::Document {
                path: p,
                fragment: Some(f),
            } = &target
                && p == path
                && let Some(range) = fragment_range(
                    &parsed,
                    f,
                    link.kind.is_wiki(),
                    case_sensitive,
                    ws.generator(),
                )
                && let Some(&i) = heading_of.get(&(range.start, range.end))
            {
                out.headings[i].push(reference());
            }
        });
    }
    out
}

/// The references to a document and to each of its headings
/// ([`references_to_document_and_headings`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DocumentReferences {
    /// The links from other documents to the document, in path then source order.
    pub document: Vec<Reference>,
    /// Per heading (in the document's heading order), the links to it.
    pub headings: Vec<Vec<Reference>>,
}

/// The document a link of document `from` that resolved to `target` is a reference to:
/// the document or file it leads to, unless that is `from` itself.
fn document_reached<'a>(from: &str, target: &'a Target) -> Option<&'a str> {
    match target {
        Target::Document { path, .. } | Target::File(path) if path != from => Some(path),
        _ => None,
    }
}

/// Every link in the workspace that leads to heading `heading_idx` of document `path`:
/// its fragment names that heading as [`fragment_range`] resolves it (the first heading
/// that matches wins, as in a browser; a wiki heading path when none matches whole).
pub fn references_to_heading(ws: &Workspace, path: &str, heading_idx: usize) -> Vec<Reference> {
    let Some(range) = ws
        .parsed(path)
        .and_then(|parsed| parsed.headings.get(heading_idx).map(|h| h.range.clone()))
    else {
        return Vec::new();
    };
    references_to_fragment(ws, path, &range)
}

/// Every link to block id `block_idx` of document `path` (`[[plan#^id]]`,
/// `![[plan#^id]]`, `[x](plan.md#^id)`), matched as [`fragment_range`] matches it: the
/// first block of that id, letter case as `fragment_case_sensitive` says.
pub fn references_to_block(ws: &Workspace, path: &str, block_idx: usize) -> Vec<Reference> {
    let Some(range) = ws
        .parsed(path)
        .and_then(|parsed| parsed.block_ids.get(block_idx).map(|(_, r)| r.clone()))
    else {
        return Vec::new();
    };
    references_to_fragment(ws, path, &range)
}

/// Every link whose fragment [`fragment_range`] resolves to `range` of document `path`.
fn references_to_fragment(ws: &Workspace, path: &str, range: &Range<usize>) -> Vec<Reference> {
    let Some(parsed) = ws.parsed(path) else {
        return Vec::new();
    };
    let case_sensitive = ws.config().diagnostics.fragment_case_sensitive;
    collect_references(ws, |_, target, link| match target {
        Target::Document {
            path: p,
            fragment: Some(f),
        } if p == path => {
            let wiki = link.kind.is_wiki();
            fragment_range(&parsed, f, wiki, case_sensitive, ws.generator()).as_ref() == Some(range)
        }
        _ => false,
    })
}

/// Every use of link reference definition `def_idx` of document `path` (references,
/// and wiki links that Foam-style definitions serve).
pub fn references_to_definition(ws: &Workspace, path: &str, def_idx: usize) -> Vec<Reference> {
    let Some(parsed) = ws.parsed(path) else {
        return Vec::new();
    };
    let Some(def) = parsed.definitions.get(def_idx) else {
        return Vec::new();
    };
    parsed
        .links
        .iter()
        .filter(|l| {
            matches!(l.kind, LinkKind::Reference | LinkKind::ImageReference)
                && l.label.as_deref() == Some(def.key.as_str())
        })
        .map(|l| Reference {
            path: path.to_string(),
            range: l.range.clone(),
        })
        .collect()
}

fn collect_references(
    ws: &Workspace,
    mut keep: impl FnMut(&str, &Target, &Link) -> bool,
) -> Vec<Reference> {
    let mut out = Vec::new();
    for from in ws.document_paths() {
        for_each_resolved(ws, from, |link, target| {
            if keep(from, &target, link) {
                out.push(Reference {
                    path: from.to_string(),
                    range: link.range.clone(),
                });
            }
        });
    }
    out
}

/// Calls `f` with each link of document `from` that can refer to something (not
/// external, not an undefined reference or a footnote) and where it leads.
fn for_each_resolved(ws: &Workspace, from: &str, mut f: impl FnMut(&Link, Target)) {
    let Some(parsed) = ws.parsed(from) else {
        return;
    };
    for link in &parsed.links {
        if link.external || matches!(link.kind, LinkKind::UndefinedReference | LinkKind::Footnote) {
            continue;
        }
        f(link, resolve_link(ws, from, link));
    }
}
