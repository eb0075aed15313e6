//! `textDocument/codeAction`: the quick fixes for broken links (the repair core attaches
//! to a diagnostic, creating a missing file for clients that apply `CreateFile`
//! operations, the closest heading for a broken `#anchor`) and the table of contents
//! (`source.toc`): core `features::actions`, converted.

use std::collections::HashMap;

use anyhow::Result;
use folio_core::features::actions::{
    Action, ActionChange, ActionKind, ActionOptions, actions_at, resolve_link_mentions,
};
use folio_core::links::navigate::WorkspaceEdits;
use serde_json::json;
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeActionResponse, Command,
    CreateFile, CreateFileOptions, DocumentChangeOperation, DocumentChanges, ResourceOp, TextEdit,
    Uri, WorkspaceEdit,
};

use super::lsp_range;
use crate::convert;
use crate::handlers::diagnostics::to_lsp;
use crate::session::{DocRef, Session};

/// The kind of the table-of-contents action (a source action, like organising imports).
pub fn toc_kind() -> CodeActionKind {
    CodeActionKind::new("source.toc")
}

/// The kind of the action that links a note's unlinked mentions.
pub fn link_mentions_kind() -> CodeActionKind {
    CodeActionKind::new("refactor.rewrite.linkMentions")
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
    let wanted = convert::byte_range(&entry.doc, params.range, s.encoding);
    let options = ActionOptions {
        // Creating a file needs a client that applies `CreateFile` operations.
        create_files: s.flags.create_files && s.flags.document_changes,
        table_of_contents: admitted(params.context.only.as_deref(), &toc_kind()),
        link_mentions: admitted(params.context.only.as_deref(), &link_mentions_kind()),
        defer: s.flags.code_action_resolve_edit,
        // Run by the server (`folio.createNote`), so every client gets it.
        create_notes: Some(folio_core::features::notes::local_now()),
    };
    let actions = actions_at(s.roots[doc.root].ws(), &doc.path, wanted, options)
        .into_iter()
        .filter_map(|a| code_action_of(s, &doc, a))
        .map(CodeActionOrCommand::CodeAction)
        .collect();
    Ok(Some(actions))
}

/// A core action over document `doc` as an LSP code action; `None` when a path it
/// touches has no URI.
fn code_action_of(s: &Session, doc: &DocRef, action: Action) -> Option<CodeAction> {
    let mut data = None;
    let mut command = None;
    let edit = match action.change {
        ActionChange::CreateNote(note) => {
            command = Some(Command {
                title: action.title.clone(),
                command: super::commands::CREATE_NOTE.to_string(),
                arguments: Some(vec![json!(s.uri(doc.root, &note.path)?), json!(note.text)]),
            });
            None
        }
        ActionChange::LinkMentionsOf(path) => {
            data = Some(json!({ RESOLVE_KEY: s.uri(doc.root, &path)? }));
            None
        }
        ActionChange::Edits(edits) => Some(WorkspaceEdit {
            changes: Some(changes(s, doc.root, &edits)?),
            ..WorkspaceEdit::default()
        }),
        ActionChange::CreateFile(path) => {
            let create = CreateFile {
                uri: s.uri(doc.root, &path)?,
                options: Some(CreateFileOptions {
                    overwrite: Some(false),
                    ignore_if_exists: Some(true),
                }),
                annotation_id: None,
            };
            Some(WorkspaceEdit {
                document_changes: Some(DocumentChanges::Operations(vec![
                    DocumentChangeOperation::Op(ResourceOp::Create(create)),
                ])),
                ..WorkspaceEdit::default()
            })
        }
    };
    let entry = s.entry(doc)?;
    let diagnostic = action.diagnostic.map(|d| to_lsp(&entry.doc, d, s.encoding));
    Some(CodeAction {
        title: action.title,
        kind: Some(match action.kind {
            ActionKind::QuickFix => CodeActionKind::QUICKFIX,
            ActionKind::TableOfContents => toc_kind(),
            ActionKind::LinkMentions => link_mentions_kind(),
        }),
        diagnostics: diagnostic.map(|d| vec![d]),
        edit,
        command,
        data,
        is_preferred: action.preferred.then_some(true),
        ..CodeAction::default()
    })
}

/// The key of a deferred action's `data`: the URI of the note whose mentions it links.
const RESOLVE_KEY: &str = "linkMentionsOf";

/// `codeAction/resolve`: the edit of an action offered without one (linking a note's
/// unlinked mentions, computed now: core `features::actions::resolve_link_mentions`).
/// Any other action comes back as it was sent.
pub fn resolve(s: &Session, mut action: CodeAction) -> Result<CodeAction> {
    let Some(uri) = action
        .data
        .as_ref()
        .and_then(|d| d.get(RESOLVE_KEY))
        .and_then(|u| u.as_str())
        .and_then(|u| u.parse::<Uri>().ok())
    else {
        return Ok(action);
    };
    let doc = s.locate_uri(&uri).ok_or_else(|| {
        anyhow::anyhow!("{} is no longer a document of the workspace", uri.as_str())
    })?;
    let edits = resolve_link_mentions(s.roots[doc.root].ws(), &doc.path);
    let changes = changes(s, doc.root, &edits)
        .ok_or_else(|| anyhow::anyhow!("a document to edit has no URI"))?;
    action.edit = Some(WorkspaceEdit {
        changes: Some(changes),
        ..WorkspaceEdit::default()
    });
    Ok(action)
}

/// Core text edits per document as LSP changes per URI; `None` when a path has no URI.
fn changes(
    s: &Session,
    root: usize,
    edits: &WorkspaceEdits,
) -> Option<HashMap<Uri, Vec<TextEdit>>> {
    let mut out = HashMap::new();
    for (path, list) in edits {
        let converted = list
            .iter()
            .map(|e| {
                Some(TextEdit {
                    range: lsp_range(s, root, path, &e.range)?,
                    new_text: e.new_text.clone(),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        out.insert(s.uri(root, path)?, converted);
    }
    Some(out)
}
