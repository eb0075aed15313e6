//! `textDocument/completion`: relative paths and `#` anchors inside `](…)`, wiki
//! targets and their headings inside `[[…`, reference labels inside `][…`, and the
//! workspace's tags after a `#` that starts a tag: core `features::completion`, whose
//! items each carry the edit that replaces what was typed.

use anyhow::Result;
use folio_core::features::completion::{CompletionKind, completions_at};
use tower_lsp_server::ls_types::{
    CompletionItem, CompletionItemKind, CompletionList, CompletionParams, CompletionResponse,
    CompletionTextEdit, TextEdit,
};

pub use folio_core::features::completion::TRIGGER_CHARACTERS;

use super::cursor;
use crate::convert;
use crate::session::Session;

/// Completion items at the cursor: an array, or an incomplete list when core kept only
/// the items matching the typed text.
pub fn completion(s: &Session, params: &CompletionParams) -> Result<Option<CompletionResponse>> {
    let p = &params.text_document_position;
    let Some(c) = cursor(s, &p.text_document.uri, p.position) else {
        return Ok(None);
    };
    let ws = s.roots[c.doc.root].ws();
    let Some(found) = completions_at(ws, &c.doc.path, &c.parsed, c.offset) else {
        return Ok(None);
    };
    let items: Vec<CompletionItem> = found
        .items
        .into_iter()
        .map(|item| CompletionItem {
            kind: Some(kind(item.kind)),
            detail: item.detail,
            filter_text: Some(item.label.clone()),
            text_edit: Some(CompletionTextEdit::Edit(TextEdit {
                range: convert::range(&c.entry.doc, &item.edit.range, s.encoding),
                new_text: item.edit.new_text,
            })),
            label: item.label,
            ..CompletionItem::default()
        })
        .collect();
    if found.incomplete {
        return Ok(Some(CompletionResponse::List(CompletionList {
            is_incomplete: true,
            items,
        })));
    }
    Ok(Some(CompletionResponse::Array(items)))
}

/// The LSP kind of a core completion kind.
fn kind(kind: CompletionKind) -> CompletionItemKind {
    match kind {
        CompletionKind::File => CompletionItemKind::FILE,
        CompletionKind::Heading | CompletionKind::Anchor | CompletionKind::Reference => {
            CompletionItemKind::REFERENCE
        }
        CompletionKind::Tag => CompletionItemKind::KEYWORD,
    }
}
