//! Link diagnostics as LSP diagnostics: pushed with `publishDiagnostics`, or pulled
//! with `textDocument/diagnostic` when the client supports it.

use anyhow::Result;
use folio_core::links::{Severity, diagnostics};
use tower_lsp_server::ls_types::{
    Diagnostic, DiagnosticSeverity, DocumentDiagnosticParams, DocumentDiagnosticReport,
    DocumentDiagnosticReportResult, FullDocumentDiagnosticReport, NumberOrString,
    RelatedFullDocumentDiagnosticReport,
};

use crate::convert;
use crate::session::{DocRef, Session};

/// The diagnostics of one document in the negotiated encoding.
pub fn for_document(s: &Session, doc: &DocRef) -> Vec<Diagnostic> {
    let Some(root) = s.roots.get(doc.root) else {
        return Vec::new();
    };
    let Some(entry) = root.ws().get(&doc.path) else {
        return Vec::new();
    };
    diagnostics(root.ws(), &doc.path)
        .into_iter()
        .map(|d| Diagnostic {
            range: convert::range(&entry.doc, &d.range, s.encoding),
            severity: Some(match d.severity {
                Severity::Error => DiagnosticSeverity::ERROR,
                Severity::Warning => DiagnosticSeverity::WARNING,
            }),
            code: Some(NumberOrString::String(d.code.as_str().to_string())),
            source: Some("folio".to_string()),
            message: d.message,
            ..Diagnostic::default()
        })
        .collect()
}

/// `textDocument/diagnostic`: a full report every time.
pub fn pull(
    s: &Session,
    params: &DocumentDiagnosticParams,
) -> Result<DocumentDiagnosticReportResult> {
    let items = s
        .locate_uri(&params.text_document.uri)
        .map(|doc| for_document(s, &doc))
        .unwrap_or_default();
    Ok(DocumentDiagnosticReportResult::Report(
        DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
            related_documents: None,
            full_document_diagnostic_report: FullDocumentDiagnosticReport {
                result_id: None,
                items,
            },
        }),
    ))
}
