//! `textDocument/prepareRename`, `textDocument/rename` (headings, tags, reference labels,
//! and from a link: the heading its fragment names or the file its path names) and
//! `workspace/willRenameFiles` (link edits for moved files and folders).

use std::collections::HashMap;
use std::ops::Range;
use std::str::FromStr;

use anyhow::{Result, bail};
use folio_core::document::TextEdit as CoreEdit;
use folio_core::links::navigate::{definition_at, destination, heading_at, link_at};
use folio_core::links::rewrite::{
    LinkedFile, WorkspaceEdits, heading_rename_conflict, linked_file_at, move_plan,
    reference_label_range, rename_definition, rename_heading, renamed_link_target,
    unnameable_message,
};
use folio_core::parse::{Link, LinkKind};
use folio_core::tags::{name_range, rename_tag, tag_at};
use tower_lsp_server::ls_types::{
    DocumentChangeOperation, DocumentChanges, OneOf, OptionalVersionedTextDocumentIdentifier,
    PrepareRenameResponse, RenameFile, RenameFileOptions, RenameFilesParams, RenameParams,
    ResourceOp, TextDocumentEdit, TextDocumentPositionParams, TextEdit, Uri, WorkspaceEdit,
};

use super::{Cursor, cursor, lsp_range};
use crate::convert;
use crate::session::Session;

/// What a rename at the cursor renames.
enum Renamable {
    /// Heading `index` of document `path`, shown at `range` of the cursor's document.
    Heading {
        path: String,
        index: usize,
        range: Range<usize>,
        placeholder: String,
    },
    /// Link reference definition `index` of the cursor's document.
    Definition {
        index: usize,
        range: Range<usize>,
        placeholder: String,
    },
    /// The file a link of the cursor's document names (the cursor on the link's path).
    File { file: LinkedFile, link: Box<Link> },
    /// A tag (with the tags nested in it), its name at `range` of the cursor's document.
    Tag { name: String, range: Range<usize> },
}

fn renamable(s: &Session, c: &Cursor<'_>) -> Option<Renamable> {
    let parsed = &c.parsed;
    let ws = &s.roots[c.doc.root].ws();
    if let Some(tag) = tag_at(parsed, c.offset)
        && let Some(range) = name_range(tag)
    {
        return Some(Renamable::Tag {
            name: tag.name.clone(),
            range,
        });
    }
    if let Some(h) = heading_at(parsed, c.offset) {
        let heading = &parsed.headings[h];
        return Some(Renamable::Heading {
            path: c.doc.path.clone(),
            index: h,
            range: heading.text_range.clone(),
            placeholder: heading.text.clone(),
        });
    }
    if let Some(d) = definition_at(parsed, c.offset) {
        let def = &parsed.definitions[d];
        return Some(Renamable::Definition {
            index: d,
            range: def.label_range.clone(),
            placeholder: def.label.clone(),
        });
    }
    let link = link_at(parsed, c.offset)?;
    if matches!(link.kind, LinkKind::Reference | LinkKind::ImageReference) {
        let key = link.label.as_deref()?;
        let index = parsed.definitions.iter().position(|d| d.key == key)?;
        let range = reference_label_range(&c.entry.doc.text(), &link.range)?;
        return Some(Renamable::Definition {
            index,
            range,
            placeholder: parsed.definitions[index].label.clone(),
        });
    }
    // On a link's path: rename the file it names.
    if let Some(file) = linked_file_at(ws, &c.doc.path, link, c.offset) {
        return Some(Renamable::File {
            file,
            link: Box::new(link.clone()),
        });
    }
    // On a link's fragment: rename the heading it names.
    let fragment = link
        .fragment_range
        .clone()
        .filter(|f| f.start <= c.offset && c.offset <= f.end)?;
    let dest = destination(ws, &c.doc.path, link)?;
    let target = ws.parsed(&dest.path)?;
    let index = target
        .headings
        .iter()
        .position(|h| Some(&h.range) == dest.range.as_ref())?;
    Some(Renamable::Heading {
        path: dest.path,
        index,
        range: fragment,
        placeholder: target.headings[index].text.clone(),
    })
}

/// The range and current name of what can be renamed at the cursor.
pub fn prepare_rename(
    s: &Session,
    params: &TextDocumentPositionParams,
) -> Result<Option<PrepareRenameResponse>> {
    let Some(c) = cursor(s, &params.text_document.uri, params.position) else {
        return Ok(None);
    };
    let Some(r) = renamable(s, &c) else {
        return Ok(None);
    };
    let (range, placeholder) = match r {
        Renamable::Heading {
            range, placeholder, ..
        }
        | Renamable::Definition {
            range, placeholder, ..
        } => (range, placeholder),
        Renamable::Tag { name, range } => (range, name),
        Renamable::File { file, .. } => {
            if !can_rename_files(s) {
                bail!(NO_FILE_RENAMES);
            }
            (file.range, file.written)
        }
    };
    Ok(Some(PrepareRenameResponse::RangeWithPlaceholder {
        range: convert::range(&c.entry.doc, &range, s.encoding),
        placeholder,
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
/// updating every link to it (every use of the tag and of the tags nested in it).
pub fn rename(s: &Session, params: &RenameParams) -> Result<Option<WorkspaceEdit>> {
    let p = &params.text_document_position;
    let Some(c) = cursor(s, &p.text_document.uri, p.position) else {
        return Ok(None);
    };
    let Some(r) = renamable(s, &c) else {
        bail!(
            "nothing to rename here: put the cursor on a heading, a tag, a reference label, or a link's path or #anchor"
        )
    };
    let ws = &s.roots[c.doc.root].ws();
    let edits = match r {
        Renamable::Heading { path, index, .. } => {
            if let Some(conflict) = heading_rename_conflict(ws, &path, index, &params.new_name) {
                bail!(conflict);
            }
            rename_heading(ws, &path, index, &params.new_name)
        }
        Renamable::Definition { index, .. } => {
            rename_definition(ws, &c.doc.path, index, &params.new_name)
                .map(|list| WorkspaceEdits::from([(c.doc.path.clone(), list)]))
        }
        Renamable::Tag { name, .. } => {
            Some(rename_tag(ws, &name, &params.new_name).map_err(anyhow::Error::msg)?)
        }
        Renamable::File { file, link } => {
            if !can_rename_files(s) {
                bail!(NO_FILE_RENAMES);
            }
            let new = renamed_link_target(ws, &c.doc.path, &link, &file.path, &params.new_name)
                .map_err(anyhow::Error::msg)?;
            let plan = move_plan(ws, &[(file.path.clone(), new.clone())]);
            if !plan.unnameable.is_empty() {
                bail!(
                    "{}. Choose a name without these characters",
                    unnameable_message(&plan.unnameable)
                );
            }
            return Ok(Some(file_rename_edit(
                s,
                c.doc.root,
                &file.path,
                &new,
                &plan.edits,
            )));
        }
    };
    let Some(edits) = edits else {
        bail!("`{}` is not a valid new name here", params.new_name)
    };
    Ok(Some(workspace_edit(s, c.doc.root, &edits)))
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
        let (Ok(old_uri), Ok(new_uri)) =
            (Uri::from_str(&file.old_uri), Uri::from_str(&file.new_uri))
        else {
            continue;
        };
        let (Some(old_abs), Some(new_abs)) = (
            convert::uri_to_path(&old_uri),
            convert::uri_to_path(&new_uri),
        ) else {
            continue;
        };
        let (Some(old), Some(new)) = (s.locate(&old_abs), s.locate(&new_abs)) else {
            continue;
        };
        if old.root != new.root {
            continue;
        }
        let ws = &s.roots[old.root].ws();
        let moves = per_root.entry(old.root).or_default();
        if ws.contains_document(&old.path) || !old_abs.is_dir() {
            moves.push((old.path.clone(), new.path.clone()));
        } else {
            // A folder: every document under it moves.
            let prefix = format!("{}/", old.path);
            for path in ws.document_paths().filter(|p| p.starts_with(&prefix)) {
                moves.push((
                    path.to_string(),
                    format!("{}/{}", new.path, &path[prefix.len()..]),
                ));
            }
        }
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
