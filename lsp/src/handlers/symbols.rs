//! `textDocument/documentSymbol` (headings as a tree) and `workspace/symbol` (fuzzy
//! over document titles, headings and tags of every root, with nucleo-matcher).

use anyhow::Result;
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config as MatcherConfig, Matcher, Utf32Str};
use tower_lsp_server::ls_types::{
    DocumentSymbol, DocumentSymbolParams, DocumentSymbolResponse, Location, SymbolInformation,
    SymbolKind, WorkspaceSymbolParams, WorkspaceSymbolResponse,
};

use crate::convert;
use crate::session::Session;

/// The most symbols one `workspace/symbol` answer holds.
pub const MAX_WORKSPACE_SYMBOLS: usize = 256;

/// Headings nested by level; a heading's range is its section.
pub fn document_symbol(
    s: &Session,
    params: &DocumentSymbolParams,
) -> Result<Option<DocumentSymbolResponse>> {
    let Some(doc) = s.locate_uri(&params.text_document.uri) else {
        return Ok(None);
    };
    let Some(entry) = s.entry(&doc) else {
        return Ok(None);
    };
    let parsed = &entry.parsed;
    // A stack of (level, symbol); popping attaches a symbol to its parent.
    let mut roots: Vec<DocumentSymbol> = Vec::new();
    let mut stack: Vec<(u8, DocumentSymbol)> = Vec::new();
    fn attach(stack: &mut Vec<(u8, DocumentSymbol)>, roots: &mut Vec<DocumentSymbol>) {
        let (_, done) = stack.pop().expect("attach is called on a non-empty stack");
        match stack.last_mut() {
            Some((_, parent)) => parent.children.get_or_insert_with(Vec::new).push(done),
            None => roots.push(done),
        }
    }
    for h in &parsed.headings {
        while stack.last().is_some_and(|(level, _)| *level >= h.level) {
            attach(&mut stack, &mut roots);
        }
        let section = h
            .element
            .map_or(h.range.clone(), |i| parsed.elements[i].subtree.clone());
        #[allow(deprecated)]
        let symbol = DocumentSymbol {
            name: if h.text.is_empty() {
                "(empty heading)".to_string()
            } else {
                h.text.clone()
            },
            detail: Some(format!("{} #{}", "#".repeat(h.level as usize), h.slug)),
            kind: SymbolKind::STRING,
            tags: None,
            deprecated: None,
            range: convert::range(&entry.doc, &section, s.encoding),
            selection_range: convert::range(&entry.doc, &h.range, s.encoding),
            children: None,
        };
        stack.push((h.level, symbol));
    }
    while !stack.is_empty() {
        attach(&mut stack, &mut roots);
    }
    Ok(Some(DocumentSymbolResponse::Nested(roots)))
}

/// One match: (score, name, path, offset, root, kind, byte range).
type Hit = (
    u32,
    String,
    String,
    usize,
    usize,
    SymbolKind,
    std::ops::Range<usize>,
);

/// Fuzzy search over every document title, heading and tag (`#name`, kind `Key`, once
/// per document at its first place) of every root.
pub fn workspace_symbol(
    s: &Session,
    params: &WorkspaceSymbolParams,
) -> Result<Option<WorkspaceSymbolResponse>> {
    let mut matcher = Matcher::new(MatcherConfig::DEFAULT);
    let pattern = Pattern::parse(&params.query, CaseMatching::Smart, Normalization::Smart);
    let mut buf = Vec::new();
    let mut hits: Vec<Hit> = Vec::new();
    for (root_idx, root) in s.roots.iter().enumerate() {
        for path in root.ws().document_paths() {
            let Some(parsed) = root.ws().parsed(path) else {
                continue;
            };
            let title = parsed.title().unwrap_or_else(|| path.to_string());
            let file_haystack = format!("{title} {path}");
            if let Some(score) =
                pattern.score(Utf32Str::new(&file_haystack, &mut buf), &mut matcher)
            {
                hits.push((
                    score,
                    title,
                    path.to_string(),
                    0,
                    root_idx,
                    SymbolKind::FILE,
                    0..0,
                ));
            }
            // Each tag once per document, at its first place: `#project/alpha`.
            let mut seen = std::collections::HashSet::new();
            for tag in parsed.tags.iter().filter(|t| seen.insert(t.name.as_str())) {
                let name = format!("#{}", tag.name);
                if let Some(score) = pattern.score(Utf32Str::new(&name, &mut buf), &mut matcher) {
                    hits.push((
                        score,
                        name,
                        path.to_string(),
                        tag.range.start,
                        root_idx,
                        SymbolKind::KEY,
                        tag.range.clone(),
                    ));
                }
            }
            for h in &parsed.headings {
                if let Some(score) = pattern.score(Utf32Str::new(&h.text, &mut buf), &mut matcher) {
                    hits.push((
                        score,
                        h.text.clone(),
                        path.to_string(),
                        h.range.start,
                        root_idx,
                        SymbolKind::STRING,
                        h.range.clone(),
                    ));
                }
            }
        }
    }
    // Best score first; then shorter names, files before their headings, path, position.
    let is_heading = |k: &SymbolKind| *k != SymbolKind::FILE;
    hits.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(a.1.len().cmp(&b.1.len()))
            .then(is_heading(&a.5).cmp(&is_heading(&b.5)))
            .then(a.2.cmp(&b.2))
            .then(a.3.cmp(&b.3))
    });
    hits.truncate(MAX_WORKSPACE_SYMBOLS);
    let mut out = Vec::with_capacity(hits.len());
    for (_, name, path, _, root_idx, kind, bytes) in hits {
        let Some(entry) = s.roots[root_idx].ws().get(&path) else {
            continue;
        };
        let Some(uri) = s.uri(root_idx, &path) else {
            continue;
        };
        #[allow(deprecated)]
        out.push(SymbolInformation {
            name,
            kind,
            tags: None,
            deprecated: None,
            location: Location {
                uri,
                range: convert::range(&entry.doc, &bytes, s.encoding),
            },
            container_name: Some(path),
        });
    }
    Ok(Some(WorkspaceSymbolResponse::Flat(out)))
}
