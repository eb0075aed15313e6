//! Writing tools: `kb_patch`, `kb_edit_table`, `kb_create`, `kb_move`, `kb_delete`.
//!
//! Each checks `allow_writes` first, then the path policy, computes the edit in core
//! (`crate::edit`), and writes atomically. The index rows of the changed files are
//! updated right after, and `indexSynchronized` says whether that is confirmed.

use crate::edit::table::{
    Alignment, ColumnSelector, RowSelector, TableAction, ValueFormat, edit_table,
};
use crate::edit::{PatchKind, PatchOp, apply_edits, apply_patch};
use crate::links::rewrite::{WorkspaceEdits, move_plan, unnameable_message};
use crate::path_policy::{check_syntax, resolve_new};
use crate::pointer::{hash_bytes, hex};
use crate::workspace::DiskState;
use crate::write::{StagedSteps, Step, WriteGuard};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::live::{Buffer, Landed};
use super::read::TableInfo;
use super::status::Written;
use super::{ErrorCode, Host, HostError, HostResult};

/// One patch operation.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct PatchOperation {
    /// replace_element (alias replace): one element; a heading keeps its body, a list item its nested items. replace_section / delete_section: a heading with its whole section (checks subtreeHash). replace_subtree: a list item with its nested items (checks subtreeHash). insert_before / insert_after: new blocks next to an element (after a list item's nested items). delete: one element (a heading line only; a list item with its nested items). set_field / delete_field: one top-level key of the YAML frontmatter (`key`, and `value` for set_field), pointer `document` or none; only that key's lines change, a missing key is added at the end of the block, a file without frontmatter gets one.
    pub kind: PatchKindArg,
    /// Concrete pointer `logical~selfHash~subtreeHash` from kb_read, kb_outline or kb_search; or `document` with insert_before (start of file, after frontmatter) / insert_after (end of file) / set_field / delete_field. Required except for set_field and delete_field.
    #[serde(default)]
    pub pointer: String,
    /// The new Markdown (replace and insert operations). A replacement must parse as the same kind of element (a heading: same level); list items must match the target's marker style.
    #[serde(default)]
    pub markdown: Option<String>,
    /// set_field / delete_field: the top-level frontmatter key, on one line.
    #[serde(default)]
    pub key: Option<String>,
    /// set_field: the key's new value, any JSON (null included). Written as YAML: a scalar on the key's line, a multi-line string as a `|-` block, a non-empty list or map in block style indented two spaces under the key (a map's keys sorted).
    #[serde(default, deserialize_with = "present")]
    pub value: Option<serde_json::Value>,
}

/// A field that is present, null included (`"value": null` is `Some(Null)`; an absent
/// field is `None` through `#[serde(default)]`).
fn present<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(deserializer).map(Some)
}

/// `kb_patch` arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct PatchArgs {
    /// KB-relative path of the Markdown document.
    pub path: String,
    /// Operations, applied together: all succeed or nothing is written. Always an array, even for one operation.
    pub operations: Vec<PatchOperation>,
}

/// What one operation produced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PatchOpResult {
    /// The operation kind.
    pub kind: String,
    /// Pointer of the element it produced or replaced; null for deletions and for set_field / delete_field.
    pub pointer: Option<String>,
    /// True when the given pointer had moved and was re-anchored by kind + selfHash.
    pub reanchored: bool,
}

/// `kb_patch` output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PatchOutput {
    /// The document.
    pub path: String,
    /// XxHash64 of the file after the edit.
    #[serde(rename = "sourceHash")]
    pub source_hash: String,
    /// Per operation, in request order.
    pub operations: Vec<PatchOpResult>,
    /// True when the search index already reflects the new file.
    #[serde(rename = "indexSynchronized")]
    pub index_synchronized: bool,
    /// Where the edit landed: `editor` (the buffer of a document open in an editor running `folio lsp`; the file changes when the editor saves) or `disk`.
    #[serde(rename = "appliedTo")]
    pub applied_to: String,
    /// The editor that received the edit (its LSP client name), when `appliedTo` is `editor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub editor: Option<String>,
}

/// Selects a row by a column's exact displayed value.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct WhereEq {
    /// Column header.
    pub column: String,
    /// Exact, case-sensitive cell text.
    pub equals: String,
}

/// One cell update.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct CellUpdate {
    /// Row by value (preferred when unique).
    #[serde(default, rename = "where")]
    pub where_eq: Option<WhereEq>,
    /// Row by 0-based data row index.
    #[serde(default, rename = "rowIndex")]
    pub row_index: Option<usize>,
    /// Column by header (preferred when unique).
    #[serde(default)]
    pub column: Option<String>,
    /// Column by 0-based index.
    #[serde(default, rename = "columnIndex")]
    pub column_index: Option<usize>,
    /// The new cell value.
    pub value: String,
}

/// `kb_edit_table` arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct EditTableArgs {
    /// KB-relative path of the Markdown document.
    pub path: String,
    /// Current table pointer `…tN~selfHash~subtreeHash` from kb_read / kb_outline.
    pub pointer: String,
    /// update_cells, insert_row, delete_row, insert_column, delete_column, rename_column or set_alignment.
    pub action: String,
    /// update_cells: the updates, applied together.
    #[serde(default)]
    pub updates: Vec<CellUpdate>,
    /// delete_row: the row by value.
    #[serde(default, rename = "where")]
    pub where_eq: Option<WhereEq>,
    /// delete_row: the row by 0-based index; insert_row: where to insert (default: at the end).
    #[serde(default, rename = "rowIndex")]
    pub row_index: Option<usize>,
    /// delete_column, rename_column, set_alignment: the column by header.
    #[serde(default)]
    pub column: Option<String>,
    /// delete_column, rename_column, set_alignment: the column by 0-based index; insert_column: where to insert (default: at the end).
    #[serde(default, rename = "columnIndex")]
    pub column_index: Option<usize>,
    /// insert_row: values by column header.
    #[serde(default)]
    pub cells: std::collections::BTreeMap<String, String>,
    /// insert_row: values in column order (instead of `cells`).
    #[serde(default)]
    pub values: Vec<String>,
    /// insert_column: the header; rename_column: the new header.
    #[serde(default)]
    pub name: Option<String>,
    /// insert_column: value for every existing row (default empty).
    #[serde(default)]
    pub default: Option<String>,
    /// insert_column, set_alignment: none, left, center or right.
    #[serde(default)]
    pub alignment: Option<AlignmentArg>,
    /// `text` (default): values are literal and Markdown punctuation is escaped; `markdown`: values are inline Markdown (pipes still escaped).
    #[serde(default, rename = "valueFormat")]
    pub value_format: Option<ValueFormatArg>,
}

/// `kb_edit_table` output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct EditTableOutput {
    /// The document.
    pub path: String,
    /// The table's new pointer; reuse it for the next edit.
    pub pointer: String,
    /// XxHash64 of the file after the edit.
    #[serde(rename = "sourceHash")]
    pub source_hash: String,
    /// True when the given pointer had moved and was re-anchored.
    pub reanchored: bool,
    /// The table after the edit.
    pub table: TableInfo,
    /// True when the search index already reflects the new file.
    #[serde(rename = "indexSynchronized")]
    pub index_synchronized: bool,
    /// Where the edit landed: `editor` (the buffer of a document open in an editor running `folio lsp`; the file changes when the editor saves) or `disk`.
    #[serde(rename = "appliedTo")]
    pub applied_to: String,
    /// The editor that received the edit (its LSP client name), when `appliedTo` is `editor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub editor: Option<String>,
}

/// `kb_create` arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct CreateArgs {
    /// KB-relative path of the new Markdown file (.md or .markdown); missing folders are created.
    pub path: String,
    /// The file's Markdown content (default empty).
    #[serde(default)]
    pub markdown: Option<String>,
}

/// `kb_create` output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CreateOutput {
    /// The new document.
    pub path: String,
    /// XxHash64 of its content.
    #[serde(rename = "sourceHash")]
    pub source_hash: String,
    /// Size in bytes.
    pub bytes: usize,
    /// True when the search index already holds it.
    #[serde(rename = "indexSynchronized")]
    pub index_synchronized: bool,
    /// Where the edit landed: `editor` (the buffer of a document open in an editor running `folio lsp`; the file changes when the editor saves) or `disk`.
    #[serde(rename = "appliedTo")]
    pub applied_to: String,
    /// The editor that received the edit (its LSP client name), when `appliedTo` is `editor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub editor: Option<String>,
}

/// `kb_move` arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct MoveArgs {
    /// KB-relative path of the Markdown document to move.
    #[serde(rename = "sourcePath")]
    pub source_path: String,
    /// New KB-relative path (.md or .markdown); must not exist. Missing folders are created.
    #[serde(rename = "targetPath")]
    pub target_path: String,
    /// sourceHash from kb_read; the move fails with CONFLICT if the file changed since.
    #[serde(default, rename = "expectedSourceHash")]
    pub expected_source_hash: Option<String>,
    /// Rewrite Markdown links in other documents that point at the moved file, and the moved file's own relative links (default true).
    #[serde(default)]
    pub update_links: Option<bool>,
}

/// Links rewritten in one document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct UpdatedDocument {
    /// The document (under its new path if it is the moved one).
    pub path: String,
    /// Number of links rewritten.
    pub links: usize,
    /// Where this document's edit landed: `editor` (open in an editor: its buffer) or `disk`.
    #[serde(rename = "appliedTo")]
    pub applied_to: String,
    /// The editor that received the edit, when `appliedTo` is `editor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub editor: Option<String>,
}

/// `kb_move` output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct MoveOutput {
    /// The old path.
    #[serde(rename = "previousPath")]
    pub previous_path: String,
    /// The new path.
    pub path: String,
    /// XxHash64 of the moved file now.
    #[serde(rename = "sourceHash")]
    pub source_hash: String,
    /// Documents whose links were rewritten.
    pub updated_links: Vec<UpdatedDocument>,
    /// True when the search index already reflects every change.
    #[serde(rename = "indexSynchronized")]
    pub index_synchronized: bool,
    /// Where the edit landed: `editor` (the buffer of a document open in an editor running `folio lsp`; the file changes when the editor saves) or `disk`.
    #[serde(rename = "appliedTo")]
    pub applied_to: String,
    /// The editor that received the edit (its LSP client name), when `appliedTo` is `editor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub editor: Option<String>,
}

/// `kb_delete` arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct DeleteArgs {
    /// KB-relative path of the Markdown document to delete.
    pub path: String,
    /// sourceHash from kb_read; the delete fails with CONFLICT if the file changed since.
    #[serde(default, rename = "expectedSourceHash")]
    pub expected_source_hash: Option<String>,
}

/// `kb_delete` output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DeleteOutput {
    /// The deleted document.
    pub path: String,
    /// Always true on success.
    pub deleted: bool,
    /// True when the search index no longer holds it.
    #[serde(rename = "indexSynchronized")]
    pub index_synchronized: bool,
    /// Where the edit landed: `editor` (the buffer of a document open in an editor running `folio lsp`; the file changes when the editor saves) or `disk`.
    #[serde(rename = "appliedTo")]
    pub applied_to: String,
    /// The editor that received the edit (its LSP client name), when `appliedTo` is `editor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub editor: Option<String>,
}

fn check_expected(path: &str, text: &str, expected: Option<&str>) -> HostResult<()> {
    if let Some(expected) = expected {
        // A sourceHash is 16 hexadecimal digits (XxHash64); anything else was never one.
        if expected.len() != 16 || !expected.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(HostError::invalid(format!(
                "`expectedSourceHash` must be a sourceHash: 16 hexadecimal digits (got `{expected}`)"
            )));
        }
        let now = hex(hash_bytes(text.as_bytes()));
        if now != expected.to_ascii_lowercase() {
            return Err(HostError::new(
                ErrorCode::Conflict,
                format!(
                    "`{path}` changed since it was read (sourceHash is now {now}); read it again"
                ),
            ));
        }
    }
    Ok(())
}

/// The link edits of `moves` (core `links::rewrite::move_plan`), or `INVALID_ARGUMENT` when
/// a wiki link could not name its target's new name; `skip_links` is how the tool's caller
/// moves without rewriting links (`update_links: false`).
pub(crate) fn link_edits_keeping_every_link(
    ws: &crate::workspace::Workspace,
    moves: &[(String, String)],
    skip_links: &str,
) -> HostResult<WorkspaceEdits> {
    let plan = move_plan(ws, moves);
    if !plan.unnameable.is_empty() {
        return Err(HostError::invalid(format!(
            "{}. Choose a name without these characters, or move with `{skip_links}`; nothing was changed",
            unnameable_message(&plan.unnameable)
        )));
    }
    Ok(plan.edits)
}

impl Host {
    /// Brings the index and the cached model up to date after a write: a disk write is
    /// indexed now; an edit in an editor is not (the index follows the disk, and the
    /// editor decides when to save), so it returns false.
    fn after_write(&self, path: &str, landed: &Landed, text: Option<&str>) -> bool {
        match landed {
            Landed::Disk => self.sync_document(path, text),
            Landed::Editor(_) => {
                self.invalidate(path);
                false
            }
        }
    }

    /// Refuses (`CONFLICT`) a file operation on an open document whose buffer has unsaved
    /// changes: deleting would drop them and renaming would save them, neither of which
    /// the agent may decide for the user.
    fn require_saved(&self, path: &str, buffer: &Buffer, what: &str) -> HostResult<()> {
        if self.read_disk(path)? != buffer.text {
            return Err(HostError::new(
                ErrorCode::Conflict,
                format!(
                    "`{path}` has unsaved changes in {}; it cannot be {what} until they are saved or reverted there. Nothing was changed",
                    buffer.editor
                ),
            ));
        }
        Ok(())
    }

    /// Plans an edit of one document against its current text with `plan` and applies
    /// it: into the editor's buffer when the document is open in an editor (checked
    /// against the buffer's version), else on disk under the root's write lock, planned
    /// again when another program changes the file in between (core `write`).
    ///
    /// Returns where it landed, the new text and what `plan` returned besides it.
    fn edit_document<T>(
        &self,
        guard: &WriteGuard<'_>,
        path: &str,
        label: &str,
        mut plan: impl FnMut(&str) -> HostResult<(String, T)>,
    ) -> HostResult<(Landed, String, T)> {
        let mut plan = |old: &str| {
            let (new, value) = plan(old)?;
            if new != old {
                self.check_writable(path, &new)?;
            }
            Ok((new, value))
        };
        let (_, text, buffer) = self.read_live(path)?;
        if let Some(buffer) = buffer {
            let (new, value) = plan(&text)?;
            self.apply_to_buffer(path, &buffer, &new, label)?;
            return Ok((Landed::Editor(buffer.editor.clone()), new, value));
        }
        let updated = guard.update(path, || self.read_disk(path), plan)?;
        if updated.replans > 0 {
            tracing::info!(
                path,
                replans = updated.replans,
                "planned again after another program changed the file"
            );
        }
        Ok((Landed::Disk, updated.new, updated.value))
    }

    /// `kb_patch`.
    pub fn patch(&self, args: &PatchArgs) -> HostResult<PatchOutput> {
        self.require_writes()?;
        let ops: Vec<PatchOp> = args
            .operations
            .iter()
            .map(|o| PatchOp {
                kind: o.kind.into(),
                pointer: o.pointer.clone(),
                markdown: o.markdown.clone(),
                key: o.key.clone(),
                value: o.value.clone(),
            })
            .collect();
        let guard = self.writer.lock()?;
        let (landed, text, outcome) =
            self.edit_document(&guard, &args.path, "kb_patch", |old| {
                let outcome = apply_patch(old, &ops)?;
                Ok((outcome.text.clone(), outcome))
            })?;
        tracing::info!(path = %args.path, operations = ops.len(), landed = ?landed, "patched");
        let index_synchronized = self.after_write(&args.path, &landed, Some(&text));
        drop(guard);
        Ok(PatchOutput {
            path: args.path.clone(),
            source_hash: outcome.source_hash,
            operations: ops
                .iter()
                .zip(outcome.new_pointers)
                .zip(outcome.reanchored)
                .map(|((op, pointer), reanchored)| PatchOpResult {
                    kind: op.kind.as_str().into(),
                    pointer,
                    reanchored,
                })
                .collect(),
            index_synchronized,
            applied_to: landed.applied_to(),
            editor: landed.editor(),
        })
    }

    /// `kb_edit_table`.
    pub fn edit_table(&self, args: &EditTableArgs) -> HostResult<EditTableOutput> {
        self.require_writes()?;
        let action = table_action(args)?;
        let format = match args.value_format {
            Some(ValueFormatArg::Markdown) => ValueFormat::Markdown,
            _ => ValueFormat::Text,
        };
        let guard = self.writer.lock()?;
        let (landed, text, outcome) =
            self.edit_document(&guard, &args.path, "kb_edit_table", |old| {
                let outcome = edit_table(old, &args.pointer, &action, format)?;
                Ok((outcome.text.clone(), outcome))
            })?;
        tracing::info!(path = %args.path, action = %args.action, landed = ?landed, "table edited");
        let index_synchronized = self.after_write(&args.path, &landed, Some(&text));
        drop(guard);
        Ok(EditTableOutput {
            path: args.path.clone(),
            pointer: outcome.pointer,
            source_hash: outcome.source_hash,
            reanchored: outcome.reanchored,
            table: outcome.table.into(),
            index_synchronized,
            applied_to: landed.applied_to(),
            editor: landed.editor(),
        })
    }

    /// `kb_create`.
    pub fn create(&self, args: &CreateArgs) -> HostResult<CreateOutput> {
        self.require_writes()?;
        Host::check_markdown_name(&args.path)?;
        let guard = self.writer.lock()?;
        resolve_new(&self.root, &args.path)?;
        let text = args.markdown.clone().unwrap_or_default();
        self.check_writable(&args.path, &text)?;
        guard.create(&args.path, text.as_bytes())?;
        tracing::info!(path = %args.path, "created");
        let index_synchronized = self.sync_document(&args.path, Some(&text));
        drop(guard);
        Ok(CreateOutput {
            path: args.path.clone(),
            source_hash: hex(hash_bytes(text.as_bytes())),
            bytes: text.len(),
            index_synchronized,
            applied_to: "disk".into(),
            editor: None,
        })
    }

    /// `kb_move`.
    ///
    /// The move is planned, and the new texts of the linking documents staged next to
    /// them (core `write::Writer::stage`), before the root's write lock is taken; under
    /// the lock, a walk of the root must find every Markdown file as it was when the plan
    /// began (else the move is planned again, under the lock). Documents open in an
    /// editor are planned against their buffers and changed there first (a refusal stops
    /// the move before anything else changed); every change on disk (the link rewrites and
    /// the move itself) then runs as one journaled operation (core `write::journal`): all
    /// of it or, if a file changed under it, none of it. The index rows of the changed
    /// documents are written after the lock is released, in one transaction, each only
    /// while its file still holds what the move wrote.
    pub fn move_document(&self, args: &MoveArgs) -> HostResult<MoveOutput> {
        self.require_writes()?;
        check_syntax(&args.source_path)?;
        Host::check_markdown_name(&args.target_path)?;
        let early = self.plan_move_unlocked(args);
        #[cfg(test)]
        self.at_move_point(MovePoint::Planned);
        let guard = self.writer.lock()?;
        let (plan, staged) = match early {
            Some((disk, plan, staged)) if self.disk_unchanged_since(&disk) => (plan, Some(staged)),
            early => {
                if early.is_some() {
                    tracing::info!(
                        from = %args.source_path,
                        "notes changed while the move was planned; planning again under the lock"
                    );
                }
                // Its temporary files go before the walk of the new plan.
                drop(early);
                (self.plan_move(args)?, None)
            }
        };
        let MovePlan {
            text,
            source_buffer,
            moved_text,
            own_links,
            plans,
        } = &plan;
        // Editors first: a refusal there stops the move before anything else changed.
        let mut updated_links = Vec::new();
        for plan in plans.iter().filter(|p| p.buffer.is_some()) {
            let buffer = plan.buffer.as_ref().expect("filtered");
            self.apply_to_buffer(&plan.path, buffer, &plan.new, "kb_move")?;
            updated_links.push(UpdatedDocument {
                path: plan.path.clone(),
                links: plan.links,
                applied_to: "editor".into(),
                editor: Some(buffer.editor.clone()),
            });
        }
        let landed = match source_buffer {
            // The moved document is open: its own link rewrites go into its buffer, then
            // the editor renames it (Neovim writes the buffer under the new name).
            Some(buffer) => {
                let version = if moved_text == text {
                    buffer.version
                } else {
                    self.apply_to_buffer(&args.source_path, buffer, moved_text, "kb_move")?
                };
                self.file_operation(&args.source_path, buffer, version, Some(&args.target_path))?
            }
            None => Landed::Disk,
        };
        match staged {
            Some(staged) => guard.run_staged(staged)?,
            None => guard.run_journaled(&plan.disk_steps(args))?,
        }
        tracing::info!(from = %args.source_path, to = %args.target_path, landed = ?landed, "moved");
        for plan in plans.iter().filter(|p| p.buffer.is_none()) {
            updated_links.push(UpdatedDocument {
                path: plan.path.clone(),
                links: plan.links,
                applied_to: Landed::Disk.applied_to(),
                editor: None,
            });
        }
        if *own_links > 0 {
            updated_links.push(UpdatedDocument {
                path: args.target_path.clone(),
                links: *own_links,
                applied_to: landed.applied_to(),
                editor: landed.editor(),
            });
        }
        updated_links.sort_by(|a, b| a.path.cmp(&b.path));
        // The moved document's two paths are indexed as they were before the index rows
        // were written after the lock: checked against the disk only when the move was
        // made there (an editor renames the file when it saves).
        let on_disk = landed == Landed::Disk;
        let mut written = vec![
            Written {
                path: &args.source_path,
                text: None,
                checked: on_disk,
            },
            Written {
                path: &args.target_path,
                text: Some(moved_text.as_str()),
                checked: on_disk,
            },
        ];
        for plan in plans {
            match plan.buffer {
                None => written.push(Written {
                    path: &plan.path,
                    text: Some(plan.new.as_str()),
                    checked: true,
                }),
                // An edit in an editor is not indexed: the index follows the disk.
                Some(_) => self.invalidate(&plan.path),
            }
        }
        for w in &written {
            self.invalidate(w.path);
            self.note_own_write(w.path, w.text);
        }
        drop(guard);
        #[cfg(test)]
        self.at_move_point(MovePoint::Unlocked);
        let synced = self.sync_written(&written) && plans.iter().all(|p| p.buffer.is_none());
        Ok(MoveOutput {
            previous_path: args.source_path.clone(),
            path: args.target_path.clone(),
            source_hash: hex(hash_bytes(moved_text.as_bytes())),
            updated_links,
            index_synchronized: synced,
            applied_to: landed.applied_to(),
            editor: landed.editor(),
        })
    }

    /// [`Host::plan_move`] without the root's write lock, with the root's Markdown files as
    /// they were before it began and the disk steps staged; `None` when it fails (the move
    /// is then planned under the lock, where its error, if any, is final).
    fn plan_move_unlocked(&self, args: &MoveArgs) -> Option<(DiskState, MovePlan, StagedSteps)> {
        let disk = DiskState::read(&self.root, &self.config).ok()?;
        let plan = self.plan_move(args).ok()?;
        let staged = self.writer.stage(plan.disk_steps(args)).ok()?;
        Some((disk, plan, staged))
    }

    /// Whether a walk of the root now finds the same Markdown files with the same stamps
    /// (size, modification and status-change times) as `before`: then no document was
    /// created, removed or changed since, and a plan made after `before` still holds.
    /// Other files are not compared (the staged temporary files are among them).
    fn disk_unchanged_since(&self, before: &DiskState) -> bool {
        DiskState::read(&self.root, &self.config).is_ok_and(|now| {
            now.scan.markdown == before.scan.markdown
                && now.stamps == before.stamps
                && now.scan.skipped == before.scan.skipped
        })
    }

    /// Plans a move: reads the moved document, checks the target and the expected hash,
    /// and computes the link edits of every document that links to it (against the
    /// buffers of documents open in an editor) and of the moved document's own links.
    ///
    /// Errors: `NOT_FOUND` / `ALREADY_EXISTS` for the paths, `CONFLICT` when the moved
    /// document's hash differs from `expected_source_hash`, has unsaved changes in an
    /// editor, or a document changed while it was planned; `INVALID_ARGUMENT` when a
    /// wiki link could not name the new name or a new text could not be read back.
    fn plan_move(&self, args: &MoveArgs) -> HostResult<MovePlan> {
        let (_, text, source_buffer) = self.read_live(&args.source_path)?;
        if let Some(buffer) = &source_buffer {
            self.require_saved(&args.source_path, buffer, "moved")?;
        }
        let to_abs = resolve_new(&self.root, &args.target_path)?;
        if std::fs::symlink_metadata(&to_abs).is_ok() {
            return Err(HostError::new(
                ErrorCode::AlreadyExists,
                format!("`{}` already exists", args.target_path),
            ));
        }
        check_expected(
            &args.source_path,
            &text,
            args.expected_source_hash.as_deref(),
        )?;
        // Plan every link edit before touching anything; documents open in an editor are
        // planned against their buffers.
        let buffers = self.buffers()?;
        let mut plans: Vec<LinkPlan> = Vec::new();
        let mut moved_text = text.clone();
        let mut own_links = 0;
        if args.update_links.unwrap_or(true) {
            let overlay: std::collections::HashMap<String, String> = buffers
                .iter()
                .map(|(path, b)| (path.clone(), b.text.clone()))
                .collect();
            let planned = self.with_workspace_overlay(&overlay, |ws| {
                let mut out = Vec::new();
                let moves = [(args.source_path.clone(), args.target_path.clone())];
                for (doc, edits) in
                    link_edits_keeping_every_link(ws, &moves, "update_links: false")?
                {
                    let Some(entry) = ws.get(&doc) else { continue };
                    out.push((doc, entry.doc.text(), edits));
                }
                Ok(out)
            })?;
            for (doc, known, edits) in planned {
                if doc == args.source_path {
                    if known != text {
                        // The live model missed a change (a same-size edit that kept the
                        // file's time): read the file again next time.
                        self.invalidate(&doc);
                        return Err(changed_while_planned(&doc));
                    }
                    moved_text = apply_edits(&text, &edits)?;
                    self.check_writable(&args.target_path, &moved_text)?;
                    own_links = edits.len();
                    continue;
                }
                let (_, now, buffer) = self.read_live(&doc)?;
                if now != known {
                    self.invalidate(&doc);
                    return Err(changed_while_planned(&doc));
                }
                let new = apply_edits(&now, &edits)?;
                self.check_writable(&doc, &new)?;
                plans.push(LinkPlan {
                    path: doc,
                    old: now,
                    new,
                    links: edits.len(),
                    buffer,
                });
            }
        }
        Ok(MovePlan {
            text,
            source_buffer,
            moved_text,
            own_links,
            plans,
        })
    }

    /// Calls the test hook of the moves at `point`.
    #[cfg(test)]
    fn at_move_point(&self, point: MovePoint) {
        let hook = self
            .move_hook
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(hook) = hook.as_ref() {
            hook(point);
        }
    }

    /// `kb_delete`.
    pub fn delete(&self, args: &DeleteArgs) -> HostResult<DeleteOutput> {
        self.require_writes()?;
        let guard = self.writer.lock()?;
        let (_, text, buffer) = self.read_live(&args.path)?;
        check_expected(&args.path, &text, args.expected_source_hash.as_deref())?;
        let landed = match &buffer {
            Some(buffer) => {
                self.require_saved(&args.path, buffer, "deleted")?;
                self.file_operation(&args.path, buffer, buffer.version, None)?
            }
            None => {
                guard.remove(&args.path, text.as_bytes())?;
                Landed::Disk
            }
        };
        tracing::info!(path = %args.path, landed = ?landed, "deleted");
        let index_synchronized = self.sync_document(&args.path, None);
        drop(guard);
        Ok(DeleteOutput {
            path: args.path.clone(),
            deleted: true,
            index_synchronized,
            applied_to: landed.applied_to(),
            editor: landed.editor(),
        })
    }
}

/// A planned move ([`Host::plan_move`]).
struct MovePlan {
    /// The moved document's text (its buffer's, when open in an editor).
    text: String,
    /// Its editor buffer, when open in one.
    source_buffer: Option<Buffer>,
    /// Its text with its own relative links rewritten for the new folder.
    moved_text: String,
    /// How many of its own links were rewritten.
    own_links: usize,
    /// The documents that link to it.
    plans: Vec<LinkPlan>,
}

impl MovePlan {
    /// The changes on disk, as one journaled operation: the link rewrites of the
    /// documents not open in an editor, then the move itself unless the moved document
    /// is open in one (the editor renames it).
    fn disk_steps(&self, args: &MoveArgs) -> Vec<Step> {
        let mut steps: Vec<Step> = self
            .plans
            .iter()
            .filter(|p| p.buffer.is_none())
            .map(|p| Step::Replace {
                path: p.path.clone(),
                old: p.old.clone(),
                new: p.new.clone(),
            })
            .collect();
        if self.source_buffer.is_none() {
            steps.push(Step::Move {
                from: args.source_path.clone(),
                to: args.target_path.clone(),
                old: self.text.clone(),
                new: self.moved_text.clone(),
            });
        }
        steps
    }
}

/// Where a move calls the test hook ([`Host::at_move_point`]).
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MovePoint {
    /// Planned and staged, the root's write lock not yet taken.
    Planned,
    /// The files written and the lock released; the index rows not yet written.
    Unlocked,
}

/// The test hook of the moves: called at each [`MovePoint`] when set.
#[cfg(test)]
#[derive(Default)]
#[allow(clippy::type_complexity)]
pub(crate) struct MoveHook(
    pub(crate) std::sync::Mutex<Option<Box<dyn Fn(MovePoint) + Send + Sync>>>,
);

#[cfg(test)]
impl std::fmt::Debug for MoveHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MoveHook")
    }
}

/// One linking document's part of a move.
struct LinkPlan {
    /// KB-relative path.
    path: String,
    /// Its text when planned (the buffer's, when open in an editor).
    old: String,
    /// Its text with the links rewritten.
    new: String,
    /// How many links.
    links: usize,
    /// Its editor buffer, when open in one.
    buffer: Option<Buffer>,
}

fn changed_while_planned(path: &str) -> HostError {
    HostError::new(
        ErrorCode::Conflict,
        format!("`{path}` changed while the move was planned; nothing was changed, try again"),
    )
}

fn column_selector(args: &EditTableArgs) -> ColumnSelector {
    ColumnSelector {
        name: args.column.clone(),
        index: args.column_index,
    }
}

fn table_action(args: &EditTableArgs) -> HostResult<TableAction> {
    let row = |w: &Option<WhereEq>, i: Option<usize>| RowSelector {
        where_eq: w.as_ref().map(|w| (w.column.clone(), w.equals.clone())),
        index: i,
    };
    Ok(match args.action.as_str() {
        "update_cells" => TableAction::UpdateCells(
            args.updates
                .iter()
                .map(|u| {
                    (
                        row(&u.where_eq, u.row_index),
                        ColumnSelector {
                            name: u.column.clone(),
                            index: u.column_index,
                        },
                        u.value.clone(),
                    )
                })
                .collect(),
        ),
        "insert_row" => TableAction::InsertRow {
            at: args.row_index,
            by_name: args
                .cells
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            in_order: args.values.clone(),
        },
        "delete_row" => TableAction::DeleteRow(row(&args.where_eq, args.row_index)),
        "insert_column" => TableAction::InsertColumn {
            name: args
                .name
                .clone()
                .ok_or_else(|| HostError::invalid("insert_column needs `name`"))?,
            at: args.column_index,
            alignment: args.alignment.map_or(Alignment::None, Alignment::from),
            default: args.default.clone().unwrap_or_default(),
        },
        "delete_column" => TableAction::DeleteColumn(column_selector(args)),
        "rename_column" => TableAction::RenameColumn(
            column_selector(args),
            args.name
                .clone()
                .ok_or_else(|| HostError::invalid("rename_column needs `name` (the new header)"))?,
        ),
        "set_alignment" => TableAction::SetAlignment(
            column_selector(args),
            args.alignment
                .map(Alignment::from)
                .ok_or_else(|| HostError::invalid("set_alignment needs `alignment`"))?,
        ),
        other => {
            return Err(HostError::invalid(format!(
                "unknown action `{other}`; use update_cells, insert_row, delete_row, insert_column, delete_column, rename_column or set_alignment"
            )));
        }
    })
}

/// Patch operation kinds on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PatchKindArg {
    /// Replace exactly one element.
    ReplaceElement,
    /// Deprecated alias of replace_element.
    Replace,
    /// Replace a heading and its section.
    ReplaceSection,
    /// Delete a heading and its section.
    DeleteSection,
    /// Replace a list item with its nested items.
    ReplaceSubtree,
    /// Insert before an element.
    InsertBefore,
    /// Insert after an element.
    InsertAfter,
    /// Delete one element.
    Delete,
    /// Set one top-level frontmatter key.
    SetField,
    /// Delete one top-level frontmatter key.
    DeleteField,
}

impl From<PatchKindArg> for PatchKind {
    fn from(k: PatchKindArg) -> PatchKind {
        match k {
            PatchKindArg::ReplaceElement | PatchKindArg::Replace => PatchKind::ReplaceElement,
            PatchKindArg::ReplaceSection => PatchKind::ReplaceSection,
            PatchKindArg::DeleteSection => PatchKind::DeleteSection,
            PatchKindArg::ReplaceSubtree => PatchKind::ReplaceSubtree,
            PatchKindArg::InsertBefore => PatchKind::InsertBefore,
            PatchKindArg::InsertAfter => PatchKind::InsertAfter,
            PatchKindArg::Delete => PatchKind::Delete,
            PatchKindArg::SetField => PatchKind::SetField,
            PatchKindArg::DeleteField => PatchKind::DeleteField,
        }
    }
}

/// Column alignment on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AlignmentArg {
    /// `---`
    None,
    /// `:--`
    Left,
    /// `:-:`
    Center,
    /// `--:`
    Right,
}

impl From<AlignmentArg> for Alignment {
    fn from(a: AlignmentArg) -> Alignment {
        match a {
            AlignmentArg::None => Alignment::None,
            AlignmentArg::Left => Alignment::Left,
            AlignmentArg::Center => Alignment::Center,
            AlignmentArg::Right => Alignment::Right,
        }
    }
}

/// How table values are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ValueFormatArg {
    /// Literal text; Markdown punctuation is escaped.
    Text,
    /// Inline Markdown; only pipes are escaped.
    Markdown,
}
