//! `textDocument/codeAction`: create the file a link names when it is missing (for
//! clients that apply `CreateFile` operations), change a broken `#anchor` to the
//! closest existing heading (Levenshtein similarity), and apply the repair core attaches
//! to a diagnostic (a link to a file that exists under another letter case or folder);
//! and, anywhere in a document with headings, insert or update its table of contents
//! (`source.toc`, built by core `edit::toc`).

use std::collections::HashMap;

use anyhow::Result;
use folio_core::edit::toc::{TocAction, toc_edit};
use folio_core::links::navigate::closest_heading;
use folio_core::links::{DiagnosticCode, Target, diagnostics, join_relative, resolve_link};
use folio_core::workspace::SiteGenerator;
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeActionResponse,
    CreateFile, CreateFileOptions, DocumentChangeOperation, DocumentChanges, ResourceOp, TextEdit,
    WorkspaceEdit,
};

use crate::convert;
use crate::handlers::diagnostics::for_document;
use crate::session::Session;

/// Below this similarity no heading is offered as the fix of a broken anchor.
pub const MIN_SIMILARITY: f64 = 0.4;

/// The kind of the table-of-contents action (a source action, like organising imports).
pub fn toc_kind() -> CodeActionKind {
    CodeActionKind::new("source.toc")
}

/// True when the client's `only` filter admits `kind` (a filter entry admits its sub-kinds).
fn admitted(only: Option<&[CodeActionKind]>, kind: &CodeActionKind) -> bool {
    only.is_none_or(|only| {
        only.iter().any(|k| {
            kind.as_str() == k.as_str() || kind.as_str().starts_with(&format!("{}.", k.as_str()))
        })
    })
}

/// Quick fixes for the link diagnostics that overlap the requested range, and the table
/// of contents action when the document's table is missing or out of date.
pub fn code_action(s: &Session, params: &CodeActionParams) -> Result<Option<CodeActionResponse>> {
    let Some(doc) = s.locate_uri(&params.text_document.uri) else {
        return Ok(None);
    };
    let Some(entry) = s.entry(&doc) else {
        return Ok(None);
    };
    let ws = &s.roots[doc.root].ws();
    let wanted = convert::byte_range(&entry.doc, params.range, s.encoding);
    let lsp_diagnostics = for_document(s, &doc);
    let mut out = Vec::new();
    for (d, lsp_d) in diagnostics(ws, &doc.path).into_iter().zip(lsp_diagnostics) {
        if d.range.end < wanted.start || d.range.start > wanted.end {
            continue;
        }
        let Some(link) = entry
            .parsed
            .links
            .iter()
            .find(|l| l.range.start <= d.range.start && d.range.end <= l.range.end)
        else {
            continue;
        };
        // A repair core worked out (a file found under another spelling or folder).
        if let Some(fix) = &d.fix
            && let Some(uri) = s.uri(doc.root, &doc.path)
        {
            let edit = TextEdit {
                range: convert::range(&entry.doc, &fix.edit.range, s.encoding),
                new_text: fix.edit.new_text.clone(),
            };
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: fix.title.clone(),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![lsp_d.clone()]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri, vec![edit])])),
                    ..WorkspaceEdit::default()
                }),
                is_preferred: Some(true),
                ..CodeAction::default()
            }));
        }
        match d.code {
            // Creating a file needs a client that applies `CreateFile` operations.
            DiagnosticCode::MissingFile if s.flags.create_files && s.flags.document_changes => {
                let Some(mut path) =
                    join_relative(&doc.path, link.dest.split('?').next().unwrap_or(""))
                else {
                    continue;
                };
                if !path.rsplit('/').next().unwrap_or(&path).contains('.') {
                    path.push_str(".md");
                }
                let Some(uri) = s.uri(doc.root, &path) else {
                    continue;
                };
                let create = CreateFile {
                    uri,
                    options: Some(CreateFileOptions {
                        overwrite: Some(false),
                        ignore_if_exists: Some(true),
                    }),
                    annotation_id: None,
                };
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: format!("Create `{path}`"),
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![lsp_d]),
                    edit: Some(WorkspaceEdit {
                        document_changes: Some(DocumentChanges::Operations(vec![
                            DocumentChangeOperation::Op(ResourceOp::Create(create)),
                        ])),
                        ..WorkspaceEdit::default()
                    }),
                    ..CodeAction::default()
                }));
            }
            DiagnosticCode::MissingHeading => {
                let (Some(fragment), Some(fragment_range)) =
                    (link.fragment.as_deref(), link.fragment_range.clone())
                else {
                    continue;
                };
                let Target::Document {
                    path: target_path, ..
                } = resolve_link(ws, &doc.path, link)
                else {
                    continue;
                };
                let Some(target) = ws.parsed(&target_path) else {
                    continue;
                };
                let wiki = link.kind.is_wiki();
                // Wiki links name headings by GitHub's slug or text, never a site's ids.
                let generator = if wiki {
                    SiteGenerator::None
                } else {
                    ws.generator()
                };
                let Some((index, anchor)) =
                    closest_heading(&target, fragment, MIN_SIMILARITY, generator)
                else {
                    continue;
                };
                let replacement = if wiki {
                    target.headings[index].text.clone()
                } else {
                    anchor
                };
                let Some(uri) = s.uri(doc.root, &doc.path) else {
                    continue;
                };
                let edit = TextEdit {
                    range: convert::range(&entry.doc, &fragment_range, s.encoding),
                    new_text: replacement.clone(),
                };
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: format!("Change anchor to `#{replacement}`"),
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![lsp_d]),
                    edit: Some(WorkspaceEdit {
                        changes: Some(HashMap::from([(uri, vec![edit])])),
                        ..WorkspaceEdit::default()
                    }),
                    is_preferred: Some(true),
                    ..CodeAction::default()
                }));
            }
            _ => {}
        }
    }
    let kind = toc_kind();
    if admitted(params.context.only.as_deref(), &kind)
        && let Some(toc) = toc_edit(&entry.doc.text(), &entry.full_parsed(), ws.generator())
        && let Some(uri) = s.uri(doc.root, &doc.path)
    {
        let edit = TextEdit {
            range: convert::range(&entry.doc, &toc.edit.range, s.encoding),
            new_text: toc.edit.new_text,
        };
        let title = match toc.action {
            TocAction::Insert => "Insert table of contents",
            TocAction::Update => "Update table of contents",
        };
        out.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: title.to_string(),
            kind: Some(kind),
            edit: Some(WorkspaceEdit {
                changes: Some(HashMap::from([(uri, vec![edit])])),
                ..WorkspaceEdit::default()
            }),
            ..CodeAction::default()
        }));
    }
    Ok(Some(out))
}
