//! Link diagnostics as LSP diagnostics: pushed with `publishDiagnostics`, or pulled with
//! `textDocument/diagnostic` and `workspace/diagnostic` (LSP 3.17) when the client pulls.
//!
//! Each root caches every document's diagnostics with a result id (a hash of the items);
//! a mutation drops the entries of the documents it affects (the link graph says which),
//! so a pull recomputes only those, and a document whose id the client already holds
//! gets an `unchanged` report.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use anyhow::Result;
use folio_core::document::{Document, Encoding};
use folio_core::links::{Diagnostic as CoreDiagnostic, Severity, diagnostics};
use tower_lsp_server::ls_types::{
    Diagnostic, DiagnosticSeverity, DocumentDiagnosticParams, DocumentDiagnosticReport,
    DocumentDiagnosticReportResult, FullDocumentDiagnosticReport, NumberOrString,
    RelatedFullDocumentDiagnosticReport, RelatedUnchangedDocumentDiagnosticReport,
    UnchangedDocumentDiagnosticReport, Uri, WorkspaceDiagnosticParams, WorkspaceDiagnosticReport,
    WorkspaceDiagnosticReportResult, WorkspaceDocumentDiagnosticReport,
    WorkspaceFullDocumentDiagnosticReport, WorkspaceUnchangedDocumentDiagnosticReport,
};

use crate::convert;
use crate::session::{CachedDiagnostics, DocRef, Session};

/// The diagnostics of one document in the negotiated encoding, computed now.
pub fn for_document(s: &Session, doc: &DocRef) -> Vec<Diagnostic> {
    let Some(root) = s.roots.get(doc.root) else {
        return Vec::new();
    };
    let Some(entry) = root.ws().get(&doc.path) else {
        return Vec::new();
    };
    diagnostics(root.ws(), &doc.path)
        .into_iter()
        .map(|d| to_lsp(&entry.doc, d, s.encoding))
        .collect()
}

/// A core link diagnostic of document `doc` as an LSP diagnostic in `encoding`.
pub fn to_lsp(doc: &Document, d: CoreDiagnostic, encoding: Encoding) -> Diagnostic {
    Diagnostic {
        range: convert::range(doc, &d.range, encoding),
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(d.code.as_str().to_string())),
        source: Some("folio".to_string()),
        message: d.message,
        ..Diagnostic::default()
    }
}

/// The result id of a list of diagnostics: a hash of their JSON.
fn result_id(items: &[Diagnostic]) -> String {
    let mut hasher = DefaultHasher::new();
    serde_json::to_string(items)
        .unwrap_or_default()
        .hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// The diagnostics of a document from its root's cache, computed (and cached) when a
/// mutation dropped them or they were never asked for. `None` for an unknown document.
pub fn cached<'a>(s: &'a mut Session, doc: &DocRef) -> Option<&'a CachedDiagnostics> {
    let root = s.roots.get(doc.root)?;
    root.ws().get(&doc.path)?;
    if !root.diagnostics.contains_key(&doc.path) {
        let items = for_document(s, doc);
        let entry = CachedDiagnostics {
            result_id: result_id(&items),
            items,
        };
        s.roots[doc.root]
            .diagnostics
            .insert(doc.path.clone(), entry);
    }
    s.roots[doc.root].diagnostics.get(&doc.path)
}

/// `textDocument/diagnostic`: `unchanged` when the client's `previousResultId` is the
/// document's current one, else the full report with its result id.
pub fn pull(
    s: &mut Session,
    params: &DocumentDiagnosticParams,
) -> Result<DocumentDiagnosticReportResult> {
    let current = s
        .locate_uri(&params.text_document.uri)
        .and_then(|doc| cached(s, &doc).cloned());
    let report = match current {
        Some(c) if params.previous_result_id.as_deref() == Some(c.result_id.as_str()) => {
            DocumentDiagnosticReport::Unchanged(RelatedUnchangedDocumentDiagnosticReport {
                related_documents: None,
                unchanged_document_diagnostic_report: UnchangedDocumentDiagnosticReport {
                    result_id: c.result_id,
                },
            })
        }
        current => DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
            related_documents: None,
            full_document_diagnostic_report: FullDocumentDiagnosticReport {
                result_id: current.as_ref().map(|c| c.result_id.clone()),
                items: current.map(|c| c.items).unwrap_or_default(),
            },
        }),
    };
    Ok(DocumentDiagnosticReportResult::Report(report))
}

/// `workspace/diagnostic`: one report per document of every root, in one response.
///
/// A document the client holds a result id for gets `unchanged` when the id is current,
/// else a full report (empty when its problems are gone, or when it no longer exists). A
/// document the client holds nothing for is reported only when it has diagnostics, so a
/// clean workspace of 38,000 files answers with a short list. Open documents carry their
/// buffer's version.
pub fn workspace(
    s: &mut Session,
    params: &WorkspaceDiagnosticParams,
) -> Result<WorkspaceDiagnosticReportResult> {
    // What the client holds, by document; URIs that name no document of a root are gone.
    let mut previous: HashMap<DocRef, (&Uri, &str)> = HashMap::new();
    let mut gone: Vec<&Uri> = Vec::new();
    for p in &params.previous_result_ids {
        match s.locate_uri(&p.uri).filter(|d| s.entry(d).is_some()) {
            Some(doc) => {
                previous.insert(doc, (&p.uri, p.value.as_str()));
            }
            None => gone.push(&p.uri),
        }
    }
    let mut items = Vec::new();
    for doc in s.all_documents() {
        let held = previous.remove(&doc);
        items.extend(document_report(s, &doc, held));
    }
    // Documents the client still shows that are gone: an empty report clears them.
    gone.extend(previous.into_values().map(|(u, _)| u));
    gone.sort_unstable_by(|a, b| a.as_str().cmp(b.as_str()));
    for uri in gone {
        items.push(full(uri.clone(), None, None, Vec::new()));
    }
    Ok(WorkspaceDiagnosticReportResult::Report(
        WorkspaceDiagnosticReport { items },
    ))
}

/// The workspace report of one document, given what the client holds for it (its URI
/// and result id): `unchanged` when that id is current, else a full report; none for a
/// clean document the client holds nothing for.
fn document_report(
    s: &mut Session,
    doc: &DocRef,
    held: Option<(&Uri, &str)>,
) -> Option<WorkspaceDocumentDiagnosticReport> {
    let current = cached(s, doc)?;
    let unchanged = held.map(|(_, id)| id) == Some(current.result_id.as_str());
    // A clean document the client holds nothing for: nothing to say (and no URI to build).
    if held.is_none() && current.items.is_empty() {
        return None;
    }
    let result_id = current.result_id.clone();
    let diagnostics = if unchanged {
        Vec::new()
    } else {
        current.items.clone()
    };
    let uri = held
        .map(|(u, _)| u.clone())
        .or_else(|| s.uri(doc.root, &doc.path))?;
    let version = s
        .open
        .get(&s.abs_path(doc.root, &doc.path))
        .map(|v| i64::from(*v));
    Some(if unchanged {
        WorkspaceDocumentDiagnosticReport::Unchanged(WorkspaceUnchangedDocumentDiagnosticReport {
            uri,
            version,
            unchanged_document_diagnostic_report: UnchangedDocumentDiagnosticReport { result_id },
        })
    } else {
        full(uri, version, Some(result_id), diagnostics)
    })
}

fn full(
    uri: Uri,
    version: Option<i64>,
    result_id: Option<String>,
    items: Vec<Diagnostic>,
) -> WorkspaceDocumentDiagnosticReport {
    WorkspaceDocumentDiagnosticReport::Full(WorkspaceFullDocumentDiagnosticReport {
        uri,
        version,
        full_document_diagnostic_report: FullDocumentDiagnosticReport { result_id, items },
    })
}
