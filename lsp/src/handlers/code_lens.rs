//! `textDocument/codeLens`: reference counts above a document and its headings (core
//! `features::code_lens`). Each lens carries the command [`SHOW_REFERENCES`] with the
//! document's URI, the lens's position and the references' locations; the editors'
//! extensions open that list (VS Code's references peek, Neovim's quickfix list).

use anyhow::Result;
use folio_core::features::code_lens::code_lenses;
use serde_json::json;
use tower_lsp_server::ls_types::{CodeLens, CodeLensParams, Command, Location};

use super::{location, lsp_range};
use crate::session::Session;

/// The command of every lens: arguments `[uri, position, locations]`. The server does
/// not execute it (it is not in `executeCommandProvider`): each editor's extension
/// registers it and shows the locations.
pub const SHOW_REFERENCES: &str = "folio.showReferences";

/// The lenses of the document: its own reference count, then one per heading that links
/// reach.
pub fn code_lens(s: &Session, params: &CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
    let uri = &params.text_document.uri;
    let Some(doc) = s.locate_uri(uri) else {
        return Ok(None);
    };
    let lenses = code_lenses(s.roots[doc.root].ws(), &doc.path);
    let out = lenses
        .iter()
        .filter_map(|lens| {
            let range = lsp_range(s, doc.root, &doc.path, &lens.range)?;
            let locations: Vec<Location> = lens
                .references
                .iter()
                .filter_map(|r| location(s, doc.root, &r.path, Some(&r.range)))
                .collect();
            Some(CodeLens {
                range,
                command: Some(Command {
                    title: lens.title(),
                    command: SHOW_REFERENCES.to_string(),
                    arguments: Some(vec![json!(uri), json!(range.start), json!(locations)]),
                }),
                data: None,
            })
        })
        .collect();
    Ok(Some(out))
}
