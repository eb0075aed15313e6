//! `textDocument/documentSymbol` (headings as a tree) and `workspace/symbol` (fuzzy
//! over document titles, headings and tags of every root, with nucleo-matcher).

use anyhow::Result;
use folio_core::document::{Document, Encoding};
use folio_core::features::outline::{OutlineNode, outline};
use folio_core::parse::Parsed;
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config as MatcherConfig, Matcher, Utf32Str};
use tower_lsp_server::ls_types::{
    DocumentSymbol, DocumentSymbolParams, DocumentSymbolResponse, Location, Range as LspRange,
    SymbolInformation, SymbolKind, Uri, WorkspaceSymbolParams, WorkspaceSymbolResponse,
};

use crate::convert;
use crate::session::{Session, kb_abs_path};
use crate::startup::Outlines;

/// The most symbols one `workspace/symbol` answer holds.
pub const MAX_WORKSPACE_SYMBOLS: usize = 256;

/// The document's outline (core `features::outline`: headings that start a section,
/// nested by level); a heading's range is its section.
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
    let symbols = heading_symbols(&entry.doc, parsed, &outline(parsed), s.encoding);
    Ok(Some(DocumentSymbolResponse::Nested(symbols)))
}

/// The outline's nodes as document symbols.
fn heading_symbols(
    doc: &Document,
    parsed: &Parsed,
    nodes: &[OutlineNode],
    encoding: Encoding,
) -> Vec<DocumentSymbol> {
    nodes
        .iter()
        .map(|node| {
            let h = &parsed.headings[node.heading];
            let children = heading_symbols(doc, parsed, &node.children, encoding);
            #[allow(deprecated)]
            DocumentSymbol {
                name: if h.text.is_empty() {
                    "(empty heading)".to_string()
                } else {
                    h.text.clone()
                },
                detail: Some(format!("{} #{}", "#".repeat(h.level as usize), h.slug)),
                kind: SymbolKind::STRING,
                tags: None,
                deprecated: None,
                range: convert::range(doc, &node.section, encoding),
                selection_range: convert::range(doc, &h.range, encoding),
                children: (!children.is_empty()).then_some(children),
            }
        })
        .collect()
}

/// One match: (score, name, path, root, kind, byte range).
type Hit = (
    u32,
    String,
    String,
    usize,
    SymbolKind,
    std::ops::Range<usize>,
);

/// The one ranking of `workspace/symbol`, for answers from the session and from the
/// start-up outlines: each document's title (with its path) and each of its tags and
/// headings scored by nucleo against the query, the best [`MAX_WORKSPACE_SYMBOLS`] kept.
struct Ranker {
    matcher: Matcher,
    pattern: Pattern,
    buf: Vec<char>,
    hits: Vec<Hit>,
}

impl Ranker {
    fn new(query: &str) -> Ranker {
        Ranker {
            matcher: Matcher::new(MatcherConfig::DEFAULT),
            pattern: Pattern::parse(query, CaseMatching::Smart, Normalization::Smart),
            buf: Vec::new(),
            hits: Vec::new(),
        }
    }

    /// The document itself: its title (else its path), matched with its path.
    fn file(&mut self, root: usize, path: &str, title: String) {
        let haystack = format!("{title} {path}");
        if let Some(score) = self
            .pattern
            .score(Utf32Str::new(&haystack, &mut self.buf), &mut self.matcher)
        {
            let hit = (score, title, path.to_string(), root, SymbolKind::FILE, 0..0);
            self.hits.push(hit);
        }
    }

    /// A tag or heading named `name` at `bytes` of the document.
    fn symbol(
        &mut self,
        root: usize,
        path: &str,
        name: &str,
        kind: SymbolKind,
        bytes: &std::ops::Range<usize>,
    ) {
        if let Some(score) = self
            .pattern
            .score(Utf32Str::new(name, &mut self.buf), &mut self.matcher)
        {
            let hit = (
                score,
                name.to_string(),
                path.to_string(),
                root,
                kind,
                bytes.clone(),
            );
            self.hits.push(hit);
        }
    }

    /// Best score first; then shorter names, files before their headings, path, position.
    fn best(mut self) -> Vec<Hit> {
        let is_heading = |k: &SymbolKind| *k != SymbolKind::FILE;
        self.hits.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then(a.1.len().cmp(&b.1.len()))
                .then(is_heading(&a.4).cmp(&is_heading(&b.4)))
                .then(a.2.cmp(&b.2))
                .then(a.5.start.cmp(&b.5.start))
        });
        self.hits.truncate(MAX_WORKSPACE_SYMBOLS);
        self.hits
    }
}

/// A ranked hit as a symbol at `range`.
fn symbol_information(hit: Hit, uri: Uri, range: LspRange) -> SymbolInformation {
    let (_, name, path, _, kind, _) = hit;
    #[allow(deprecated)]
    SymbolInformation {
        name,
        kind,
        tags: None,
        deprecated: None,
        location: Location { uri, range },
        container_name: Some(path),
    }
}

/// Fuzzy search over every document title, heading and tag (`#name`, kind `Key`, once
/// per document at its first place) of every root.
pub fn workspace_symbol(
    s: &Session,
    params: &WorkspaceSymbolParams,
) -> Result<Option<WorkspaceSymbolResponse>> {
    let mut ranker = Ranker::new(&params.query);
    for (root_idx, root) in s.roots.iter().enumerate() {
        for path in root.ws().document_paths() {
            let Some(parsed) = root.ws().parsed(path) else {
                continue;
            };
            ranker.file(root_idx, path, parsed.title_for(path, root.ws().is_vault()));
            // Each tag once per document, at its first place: `#project/alpha`.
            let mut seen = std::collections::HashSet::new();
            for tag in parsed.tags.iter().filter(|t| seen.insert(t.name.as_str())) {
                let name = format!("#{}", tag.name);
                ranker.symbol(root_idx, path, &name, SymbolKind::KEY, &tag.range);
            }
            for h in &parsed.headings {
                ranker.symbol(root_idx, path, &h.text, SymbolKind::STRING, &h.range);
            }
        }
    }
    let mut out = Vec::new();
    for hit in ranker.best() {
        let (root_idx, path) = (hit.3, &hit.2);
        let (Some(entry), Some(uri)) = (s.roots[root_idx].ws().get(path), s.uri(root_idx, path))
        else {
            continue;
        };
        let range = convert::range(&entry.doc, &hit.5, s.encoding);
        out.push(symbol_information(hit, uri, range));
    }
    Ok(Some(WorkspaceSymbolResponse::Flat(out)))
}

/// [`workspace_symbol`] while the workspace loads, from the documents' outlines
/// ([`crate::startup`]): titles and headings, no tags.
pub fn workspace_symbol_from_outlines(
    outlines: &Outlines,
    params: &WorkspaceSymbolParams,
) -> Result<Option<WorkspaceSymbolResponse>> {
    let mut ranker = Ranker::new(&params.query);
    for (root_idx, root) in outlines.roots.iter().enumerate() {
        for (i, (_, outline)) in root.documents.iter().enumerate() {
            let path = root.path(i);
            ranker.file(root_idx, path, outline.title_for(path, root.vault));
            for h in &outline.headings {
                ranker.symbol(root_idx, path, &h.text, SymbolKind::STRING, &h.range);
            }
        }
    }
    let hits = ranker.best();
    // Positions need a document of each text a hit is in (a few hundred at most).
    let mut documents: std::collections::HashMap<(usize, usize), Document> =
        std::collections::HashMap::new();
    let mut out = Vec::with_capacity(hits.len());
    for hit in hits {
        let root = &outlines.roots[hit.3];
        let Ok(at) = root.texts.scan.markdown.binary_search(&hit.2) else {
            continue;
        };
        let Some(Ok((text, _))) = root.texts.texts.get(at) else {
            continue;
        };
        let Some(uri) = convert::path_to_uri(&kb_abs_path(&root.folder, &hit.2)) else {
            continue;
        };
        let doc = documents
            .entry((hit.3, at))
            .or_insert_with(|| Document::new(text, 0));
        let range = convert::range(doc, &hit.5, outlines.encoding);
        out.push(symbol_information(hit, uri, range));
    }
    Ok(Some(WorkspaceSymbolResponse::Flat(out)))
}
