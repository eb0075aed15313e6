//! `textDocument/prepareRename`, `textDocument/rename` (headings, tags, reference labels,
//! and from a link: the heading its fragment names or the file its path names) and
//! `workspace/willRenameFiles` (link edits for moved files and folders).

use std::collections::HashMap;
use std::str::FromStr;

use anyhow::{Result, bail};
use folio_core::document::TextEdit as CoreEdit;
use folio_core::features::rename::{Renamable, RenamePlan, file_moves, plan_rename, renamable_at};
use folio_core::links::rewrite::{WorkspaceEdits, move_plan, unnameable_message};
use tower_lsp_server::ls_types::{
    DocumentChangeOperation, DocumentChanges, OneOf, OptionalVersionedTextDocumentIdentifier,
    PrepareRenameResponse, RenameFile, RenameFileOptions, RenameFilesParams, RenameParams,
    ResourceOp, TextDocumentEdit, TextDocumentPositionParams, TextEdit, Uri, WorkspaceEdit,
};

use super::{cursor, lsp_range};
use crate::convert;
use crate::guard::RequestFailed;
use crate::session::{DocRef, Session};

/// The range and current name of what can be renamed at the cursor: core
/// `features::rename::renamable_at`.
pub fn prepare_rename(
    s: &Session,
    params: &TextDocumentPositionParams,
) -> Result<Option<PrepareRenameResponse>> {
    let Some(c) = cursor(s, &params.text_document.uri, params.position) else {
        return Ok(None);
    };
    let ws = s.roots[c.doc.root].ws();
    let Some(r) = renamable_at(ws, &c.doc.path, &c.parsed, c.offset) else {
        return Ok(None);
    };
    if matches!(r, Renamable::File { .. }) && !can_rename_files(s) {
        bail!(RequestFailed(NO_FILE_RENAMES.to_owned()));
    }
    Ok(Some(PrepareRenameResponse::RangeWithPlaceholder {
        range: convert::range(&c.entry.doc, r.range(), s.encoding),
        placeholder: r.placeholder().to_owned(),
    }))
}

/// Converts core edits per document into an LSP workspace edit.
pub fn workspace_edit(s: &Session, root: usize, edits: &WorkspaceEdits) -> WorkspaceEdit {
    let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
    for (path, list) in edits {
        let Some(uri) = s.uri(root, path) else {
            continue;
        };
        let converted = list
            .iter()
            .filter_map(|e| text_edit(s, root, path, e))
            .collect();
        changes.insert(uri, converted);
    }
    WorkspaceEdit {
        changes: Some(changes),
        ..WorkspaceEdit::default()
    }
}

fn text_edit(s: &Session, root: usize, path: &str, e: &CoreEdit) -> Option<TextEdit> {
    Some(TextEdit {
        range: lsp_range(s, root, path, &e.range)?,
        new_text: e.new_text.clone(),
    })
}

/// Renames the heading, tag, reference label or (from a link's path) file at the cursor,
/// updating every link to it (every use of the tag and of the tags nested in it): core
/// `features::rename::plan_rename`.
pub fn rename(s: &Session, params: &RenameParams) -> Result<Option<WorkspaceEdit>> {
    let p = &params.text_document_position;
    let Some(c) = cursor(s, &p.text_document.uri, p.position) else {
        return Ok(None);
    };
    let ws = s.roots[c.doc.root].ws();
    let Some(r) = renamable_at(ws, &c.doc.path, &c.parsed, c.offset) else {
        bail!(RequestFailed(
            "nothing to rename here: put the cursor on a heading, a tag, a reference label, or a link's path or #anchor".to_owned()
        ))
    };
    if matches!(r, Renamable::File { .. }) && !can_rename_files(s) {
        bail!(RequestFailed(NO_FILE_RENAMES.to_owned()));
    }
    let edit = match plan_rename(ws, &c.doc.path, r, &params.new_name).map_err(RequestFailed)? {
        RenamePlan::Edits(edits) => workspace_edit(s, c.doc.root, &edits),
        RenamePlan::File { old, new, edits } => file_rename_edit(s, c.doc.root, &old, &new, &edits),
    };
    Ok(Some(edit))
}

/// Why a rename at a link's path is refused by a client that cannot rename files.
const NO_FILE_RENAMES: &str = "renaming a file needs a client that applies file renames in workspace edits (documentChanges with the `rename` resource operation)";

/// True when workspace edits may hold text edits and file renames together.
fn can_rename_files(s: &Session) -> bool {
    s.flags.document_changes && s.flags.rename_files
}

/// The workspace edit of a file rename: the link edits per document (against the texts
/// before the rename, with the version of each open buffer), then the rename itself.
fn file_rename_edit(
    s: &Session,
    root: usize,
    old: &str,
    new: &str,
    edits: &WorkspaceEdits,
) -> WorkspaceEdit {
    let mut operations = Vec::new();
    for (path, list) in edits {
        let Some(uri) = s.uri(root, path) else {
            continue;
        };
        let version = s.open.get(&s.abs_path(root, path)).copied();
        operations.push(DocumentChangeOperation::Edit(TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier { uri, version },
            edits: list
                .iter()
                .filter_map(|e| text_edit(s, root, path, e))
                .map(OneOf::Left)
                .collect(),
        }));
    }
    if let (Some(old_uri), Some(new_uri)) = (s.uri(root, old), s.uri(root, new)) {
        operations.push(DocumentChangeOperation::Op(ResourceOp::Rename(
            RenameFile {
                old_uri,
                new_uri,
                options: Some(RenameFileOptions {
                    overwrite: Some(false),
                    ignore_if_exists: Some(false),
                }),
                annotation_id: None,
            },
        )));
    }
    WorkspaceEdit {
        document_changes: Some(DocumentChanges::Operations(operations)),
        ..WorkspaceEdit::default()
    }
}

/// Link edits for files and folders about to move; moves across roots are ignored.
/// The link edits of `workspace/willRenameFiles`, and a warning to show when some wiki
/// links cannot name a file's new name (the client renames the file whatever folio
/// answers, so those links are left as written and the user is told).
pub fn will_rename_files(
    s: &Session,
    params: &RenameFilesParams,
) -> Result<(Option<WorkspaceEdit>, Option<String>)> {
    let mut per_root: HashMap<usize, Vec<(String, String)>> = HashMap::new();
    for file in &params.files {
        let Some((old, new, folder)) = located_move(s, &file.old_uri, &file.new_uri) else {
            continue;
        };
        let moves = file_moves(s.roots[old.root].ws(), &old.path, &new.path, folder);
        per_root.entry(old.root).or_default().extend(moves);
    }
    let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
    let mut unnameable = Vec::new();
    for (root, moves) in per_root {
        let plan = move_plan(s.roots[root].ws(), &moves);
        unnameable.extend(plan.unnameable);
        if let Some(c) = workspace_edit(s, root, &plan.edits).changes {
            changes.extend(c);
        }
    }
    let warning = (!unnameable.is_empty()).then(|| {
        format!(
            "folio: {}; they were left as written. Rename the file again to a name without these characters to keep them",
            unnameable_message(&unnameable)
        )
    });
    if changes.is_empty() {
        return Ok((None, warning));
    }
    Ok((
        Some(WorkspaceEdit {
            changes: Some(changes),
            ..WorkspaceEdit::default()
        }),
        warning,
    ))
}

/// The documents of a move of `old_uri` to `new_uri` within one root, and whether `old`
/// is a folder on disk; `None` for URIs that are not files of a root, or a move across roots.
fn located_move(s: &Session, old_uri: &str, new_uri: &str) -> Option<(DocRef, DocRef, bool)> {
    let (Ok(old_uri), Ok(new_uri)) = (Uri::from_str(old_uri), Uri::from_str(new_uri)) else {
        return None;
    };
    let old_abs = convert::uri_to_path(&old_uri)?;
    let new_abs = convert::uri_to_path(&new_uri)?;
    let (old, new) = (s.locate(&old_abs)?, s.locate(&new_abs)?);
    let folder = old_abs.is_dir();
    (old.root == new.root).then_some((old, new, folder))
}
