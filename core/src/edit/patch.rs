//! Patch operations on elements addressed by hashed pointers.
//!
//! Each operation becomes one byte-range [`TextEdit`] against the original text (the
//! frontmatter field operations of a request, `set_field` and `delete_field`, become one
//! together: see `edit::field`); all operations of a request are checked, applied and
//! verified together, so a request either applies completely or not at all.

use crate::document::TextEdit;
use crate::parse::{Element, ElementKind, Parsed, parse};
use crate::parse::{Resolution, resolve_pointer as resolve};
use crate::pointer::{Pointer, hash_bytes, hex};

use super::{EditError, Expect, apply_edits, content_start, dominant_eol, field, verify};

/// What a patch operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PatchKind {
    /// Replace exactly one element (a heading keeps its section body; a list item keeps its nested items).
    #[serde(alias = "replace")]
    ReplaceElement,
    /// Replace a heading and the whole section it owns (checks subtreeHash).
    ReplaceSection,
    /// Delete a heading and the whole section it owns (checks subtreeHash).
    DeleteSection,
    /// Replace a list item with all its nested items (checks subtreeHash).
    ReplaceSubtree,
    /// Insert Markdown before an element (`document`: at the start of the file, after any frontmatter).
    InsertBefore,
    /// Insert Markdown after an element (a list item: after its nested items; `document`: at the end).
    InsertAfter,
    /// Delete one element (a heading: only the heading line; a list item: with its nested items).
    Delete,
    /// Set one top-level key of the YAML frontmatter to a value (`document` pointer).
    SetField,
    /// Delete one top-level key of the YAML frontmatter (`document` pointer).
    DeleteField,
}

impl PatchKind {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            PatchKind::ReplaceElement => "replace_element",
            PatchKind::ReplaceSection => "replace_section",
            PatchKind::DeleteSection => "delete_section",
            PatchKind::ReplaceSubtree => "replace_subtree",
            PatchKind::InsertBefore => "insert_before",
            PatchKind::InsertAfter => "insert_after",
            PatchKind::Delete => "delete",
            PatchKind::SetField => "set_field",
            PatchKind::DeleteField => "delete_field",
        }
    }
}

/// One operation of a patch request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatchOp {
    /// What to do.
    pub kind: PatchKind,
    /// `logical~selfHash~subtreeHash`, or `document` (insertions and field operations).
    pub pointer: String,
    /// The new Markdown (replace and insert operations).
    pub markdown: Option<String>,
    /// The frontmatter key (field operations).
    pub key: Option<String>,
    /// The key's new value (`set_field`; JSON `null` is a value).
    pub value: Option<serde_json::Value>,
}

/// The result of a successful patch (not yet written anywhere).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatchOutcome {
    /// The new text.
    pub text: String,
    /// The edits against the original text, sorted and disjoint.
    pub edits: Vec<TextEdit>,
    /// Per operation, in request order: the pointer of the element it produced or
    /// replaced (`None` for deletions).
    pub new_pointers: Vec<Option<String>>,
    /// Per operation: true when the pointer's logical address had moved and it was
    /// re-anchored by kind + selfHash.
    pub reanchored: Vec<bool>,
    /// XxHash64 of the new text, 16 hex digits.
    pub source_hash: String,
}

struct Planned {
    op_index: usize,
    edit: TextEdit,
    expect: Expect,
    /// Offset in `edit.new_text` where the operation's own content starts.
    content_offset: usize,
    produces: bool,
    /// Goes before the other insertions at the same point (a new frontmatter block).
    leads: bool,
}

/// Applies `ops` to `text` atomically.
///
/// Errors: [`EditError::InvalidArgument`] for malformed pointers, missing Markdown,
/// an operation that does not fit the element kind, overlapping operations, or a
/// replacement that parses as something else; [`EditError::Conflict`] when a target
/// changed (selfHash, or subtreeHash for section and subtree operations) or the result
/// would change elements outside the targets.
pub fn apply_patch(text: &str, ops: &[PatchOp]) -> Result<PatchOutcome, EditError> {
    if ops.is_empty() {
        return Err(EditError::InvalidArgument(
            "operations must not be empty".into(),
        ));
    }
    let parsed = parse(text);
    let eol = dominant_eol(text);
    let mut planned = Vec::new();
    let mut reanchored = Vec::new();
    let mut fields = Vec::new();
    for (op_index, op) in ops.iter().enumerate() {
        let field = field_op(op).map_err(|m| {
            EditError::InvalidArgument(format!("operation {op_index} ({}): {m}", op.kind.as_str()))
        })?;
        if let Some(field) = field {
            fields.push((op_index, field));
            reanchored.push(false);
            continue;
        }
        let (plan, moved) = plan_op(text, &parsed, eol, op).map_err(|e| match e {
            EditError::InvalidArgument(m) => EditError::InvalidArgument(format!(
                "operation {op_index} ({}): {m}",
                op.kind.as_str()
            )),
            EditError::Conflict(m) => {
                EditError::Conflict(format!("operation {op_index} ({}): {m}", op.kind.as_str()))
            }
        })?;
        planned.push(Planned { op_index, ..plan });
        reanchored.push(moved);
    }
    // The field operations edit the frontmatter together, in request order.
    if let Some(&(first, _)) = fields.first()
        && let Some(edit) = field::plan_fields(text, &parsed, eol, &fields)?
    {
        // A new block stays first whatever is inserted at the start of the file.
        let creates = !parsed
            .elements
            .iter()
            .any(|e| e.kind == ElementKind::Frontmatter);
        planned.push(Planned {
            op_index: first,
            leads: creates,
            ..Planned::new(edit, Expect::Any, 0, false)
        });
    }
    // Sorted by start; insertions at one point keep request order (a new frontmatter
    // block first).
    planned.sort_by_key(|p| (p.edit.range.start, p.edit.range.end, !p.leads, p.op_index));
    for w in planned.windows(2) {
        let (a, b) = (&w[0].edit.range, &w[1].edit.range);
        let overlap = a.end > b.start || (a.start == b.start && !a.is_empty() && !b.is_empty());
        if overlap {
            return Err(EditError::InvalidArgument(format!(
                "operations {} and {} touch overlapping parts of the document; nothing was written",
                w[0].op_index, w[1].op_index
            )));
        }
    }
    let edits: Vec<TextEdit> = planned.iter().map(|p| p.edit.clone()).collect();
    let expects: Vec<Expect> = planned.iter().map(|p| p.expect.clone()).collect();
    let new_text = apply_edits(text, &edits)?;
    let new_parsed = parse(&new_text);
    verify(text, &parsed, &new_parsed, &new_text, &edits, &expects)?;

    let mut new_pointers = vec![None; ops.len()];
    let mut shift: isize = 0;
    for p in &planned {
        let start = (p.edit.range.start as isize + shift) as usize;
        shift += p.edit.new_text.len() as isize - p.edit.range.len() as isize;
        if !p.produces {
            continue;
        }
        let at = start + p.content_offset;
        new_pointers[p.op_index] = new_parsed
            .elements
            .iter()
            .find(|e| {
                e.kind != ElementKind::Document && content_start(&new_text, e.range.start) == at
            })
            .map(|e| e.pointer().to_string());
    }
    Ok(PatchOutcome {
        source_hash: hex(hash_bytes(new_text.as_bytes())),
        text: new_text,
        edits,
        new_pointers,
        reanchored,
    })
}

/// The field operation `op` is (`None` for the other kinds), its arguments checked: a
/// field operation takes the `document` pointer (or an empty one), a `key` and, for
/// `set_field`, a `value`, and no `markdown`; the other kinds take no `key` or `value`.
fn field_op(op: &PatchOp) -> Result<Option<field::FieldOp<'_>>, String> {
    if !matches!(op.kind, PatchKind::SetField | PatchKind::DeleteField) {
        if op.key.is_some() || op.value.is_some() {
            return Err(
                "`key` and `value` belong to set_field and delete_field; this operation takes `markdown`"
                    .into(),
            );
        }
        if op.pointer.is_empty() {
            return Err("`pointer` is required".into());
        }
        return Ok(None);
    }
    if !(op.pointer.is_empty() || op.pointer == "document") {
        return Err(
            "set_field and delete_field edit the document's frontmatter: give the pointer `document` or none"
                .into(),
        );
    }
    if op.markdown.is_some() {
        return Err(format!(
            "{} takes `key`{}, not `markdown`",
            op.kind.as_str(),
            if op.kind == PatchKind::SetField {
                " and `value`"
            } else {
                ""
            }
        ));
    }
    let key = op.key.as_deref().ok_or("`key` is required")?;
    field::check_key(key)?;
    Ok(Some(match op.kind {
        PatchKind::SetField => field::FieldOp::Set(
            key,
            op.value
                .as_ref()
                .ok_or("`value` is required (JSON null is a value)")?,
        ),
        _ => {
            if op.value.is_some() {
                return Err("delete_field takes `key` only, not `value`".into());
            }
            field::FieldOp::Delete(key)
        }
    }))
}

/// Plans one operation: its edit and what the edited region must hold, and whether its
/// pointer was re-anchored.
fn plan_op(
    text: &str,
    parsed: &Parsed,
    eol: &str,
    op: &PatchOp,
) -> Result<(Planned, bool), EditError> {
    if op.pointer == "document" || op.pointer.starts_with("document~") {
        // The operation first: a `delete` of `document` is refused for what it is, not
        // for its missing `markdown`.
        if !matches!(op.kind, PatchKind::InsertBefore | PatchKind::InsertAfter) {
            return Err(EditError::InvalidArgument(DOCUMENT_OPS.into()));
        }
        return plan_document(text, parsed, eol, op, new_markdown(op, eol)?).map(|p| (p, false));
    }
    let target = Target::resolve(text, parsed, eol, op)?;
    let el = target.el;
    let plan = match op.kind {
        PatchKind::ReplaceElement => {
            target.replace(op, el.range.end, Expect::One(el.kind, el.level))?
        }
        PatchKind::ReplaceSection => {
            require(
                target.kind == ElementKind::Heading,
                "replace_section needs a heading pointer",
            )?;
            target.replace(op, el.subtree.end, Expect::Section(el.level))?
        }
        PatchKind::DeleteSection => {
            require(
                target.kind == ElementKind::Heading,
                "delete_section needs a heading pointer",
            )?;
            target.delete(el.subtree.clone())
        }
        PatchKind::ReplaceSubtree => {
            require(
                target.kind == ElementKind::ListItem,
                "replace_subtree needs a list item pointer (use replace_section for headings)",
            )?;
            target.replace(op, el.subtree.end, Expect::Items)?
        }
        PatchKind::Delete => {
            let range = if target.kind == ElementKind::ListItem {
                el.subtree.clone()
            } else {
                el.range.clone()
            };
            target.delete(range)
        }
        PatchKind::InsertBefore => target.insert_before(target.markdown(op)?),
        PatchKind::InsertAfter => target.insert_after(target.markdown(op)?),
        // Planned together by `apply_patch`; an element pointer is refused before.
        PatchKind::SetField | PatchKind::DeleteField => {
            return Err(EditError::InvalidArgument(
                "set_field and delete_field take the `document` pointer".into(),
            ));
        }
    };
    Ok((plan, target.moved))
}

impl Planned {
    /// A planned operation (its `op_index` set by the caller).
    fn new(edit: TextEdit, expect: Expect, content_offset: usize, produces: bool) -> Planned {
        Planned {
            op_index: 0,
            edit,
            expect,
            content_offset,
            produces,
            leads: false,
        }
    }
}

/// The operation's `markdown`, required and not blank, without its trailing line breaks,
/// its line breaks in the document's line ending `eol`.
fn new_markdown(op: &PatchOp, eol: &str) -> Result<String, EditError> {
    let md = op
        .markdown
        .as_deref()
        .ok_or_else(|| EditError::InvalidArgument("`markdown` is required".into()))?;
    let md = md.trim_end_matches(['\n', '\r']);
    if md.trim().is_empty() {
        return Err(EditError::InvalidArgument(
            "`markdown` must not be empty; use a delete operation".into(),
        ));
    }
    // New lines take the document's line ending; existing bytes are not touched.
    Ok(md.replace("\r\n", "\n").replace('\n', eol))
}

/// The element an operation's pointer resolves to, and where its content starts.
struct Target<'a> {
    text: &'a str,
    eol: &'a str,
    el: &'a Element,
    /// The pointer's element kind.
    kind: ElementKind,
    /// The element's first byte after its line's indentation.
    start: usize,
    /// That indentation.
    indent: &'a str,
    /// Bytes of indentation the element's range starts with.
    lead: usize,
    /// The pointer was re-anchored by kind + selfHash.
    moved: bool,
}

impl<'a> Target<'a> {
    /// Parses and resolves `op`'s pointer (checking its subtreeHash for the operations
    /// that touch the subtree).
    fn resolve(
        text: &'a str,
        parsed: &'a Parsed,
        eol: &'a str,
        op: &PatchOp,
    ) -> Result<Target<'a>, EditError> {
        let pointer =
            Pointer::parse(&op.pointer).map_err(|e| EditError::InvalidArgument(e.to_string()))?;
        let kind = pointer.kind().unwrap_or(ElementKind::Document);
        let check_subtree = match op.kind {
            PatchKind::ReplaceSection | PatchKind::DeleteSection | PatchKind::ReplaceSubtree => {
                true
            }
            PatchKind::Delete => kind == ElementKind::ListItem,
            _ => false,
        };
        let resolution = resolve(parsed, &pointer, check_subtree)
            .map_err(|e| EditError::Conflict(e.to_string()))?;
        let moved = matches!(resolution, Resolution::Reanchored(_));
        let el = &parsed.elements[resolution.index()];
        // markdown-rs starts some indented blocks (a list item after a paragraph, say) at
        // the line start: the element's own first byte is after that indentation.
        let start = content_start(text, el.range.start).min(el.range.end);
        let indent = line_indent(text, start);
        // Markdown copied from kb_read starts with that indentation too: it is already in
        // the file.
        let lead = start - el.range.start;
        Ok(Target {
            text,
            eol,
            el,
            kind,
            start,
            indent,
            lead,
            moved,
        })
    }

    /// [`new_markdown`] without the leading indentation the file already holds.
    fn markdown(&self, op: &PatchOp) -> Result<String, EditError> {
        let md = new_markdown(op, self.eol)?;
        let n = md
            .bytes()
            .take(self.lead)
            .take_while(|b| matches!(b, b' ' | b'\t'))
            .count();
        Ok(md[n..].to_string())
    }

    /// Replaces the element's content up to `end` with the operation's Markdown.
    fn replace(&self, op: &PatchOp, end: usize, expect: Expect) -> Result<Planned, EditError> {
        let md = self.markdown(op)?;
        Ok(Planned::new(
            TextEdit {
                range: self.start..end,
                new_text: md,
            },
            expect,
            0,
            true,
        ))
    }

    /// Deletes `range` with the blank space around it ([`deletion_range`]).
    fn delete(&self, range: std::ops::Range<usize>) -> Planned {
        Planned::new(
            TextEdit {
                range: deletion_range(self.text, range),
                new_text: String::new(),
            },
            Expect::Any,
            0,
            false,
        )
    }

    /// What an insertion next to the element expects and is separated by: a list item's
    /// neighbour is list items one line break away, a block's is anything a blank line away.
    fn insertion(&self) -> (bool, String, Expect) {
        let eol = self.eol;
        let item = self.kind == ElementKind::ListItem;
        let sep = if item {
            eol.to_string()
        } else {
            format!("{eol}{eol}")
        };
        let expect = if item { Expect::Items } else { Expect::Any };
        (item, sep, expect)
    }

    /// Inserts `md` before the element.
    fn insert_before(&self, md: String) -> Planned {
        let (text, eol, indent, start) = (self.text, self.eol, self.indent, self.start);
        let (item, sep, expect) = self.insertion();
        let line_start = start - indent.len();
        let at_line_start =
            line_start > 0 && matches!(text.as_bytes()[line_start - 1], b'\n' | b'\r');
        if !item && at_line_start && !previous_line_blank(text, line_start) {
            // A text line right above: start with a blank line so the new blocks do not join it.
            let new_text = format!("{eol}{indent}{md}{sep}");
            Planned::new(
                TextEdit {
                    range: line_start..line_start,
                    new_text,
                },
                expect,
                eol.len() + indent.len(),
                true,
            )
        } else {
            // At the element's first byte: its indentation stays in front of the new text.
            Planned::new(
                TextEdit {
                    range: start..start,
                    new_text: format!("{md}{sep}{indent}"),
                },
                expect,
                0,
                true,
            )
        }
    }

    /// Inserts `md` after the element (a list item: after its nested items).
    fn insert_after(&self, md: String) -> Planned {
        let (eol, indent) = (self.eol, self.indent);
        let (item, sep, expect) = self.insertion();
        let at = if item {
            self.el.subtree.end
        } else {
            self.el.range.end
        };
        // A block needs a blank line from a text line just below it too.
        let tail = if !item && !next_line_blank(self.text, at) {
            eol
        } else {
            ""
        };
        let new_text = format!("{sep}{indent}{md}{tail}");
        let offset = sep.len() + indent.len();
        Planned::new(
            TextEdit {
                range: at..at,
                new_text,
            },
            expect,
            offset,
            true,
        )
    }
}

fn plan_document(
    text: &str,
    parsed: &Parsed,
    eol: &str,
    op: &PatchOp,
    md: String,
) -> Result<Planned, EditError> {
    let planned = |edit: TextEdit, content_offset: usize| Planned {
        op_index: 0,
        edit,
        expect: Expect::Any,
        content_offset,
        produces: true,
        leads: false,
    };
    match op.kind {
        PatchKind::InsertBefore => {
            // After a BOM and after frontmatter: both must stay first.
            let mut at = if text.starts_with('\u{feff}') { 3 } else { 0 };
            if let Some(fm) = parsed
                .elements
                .iter()
                .find(|e| e.kind == ElementKind::Frontmatter)
            {
                at = fm.range.end;
                // A blank line before and, when something follows, after the new blocks.
                let tail = if text[at..].trim().is_empty() {
                    ""
                } else {
                    eol
                };
                let new_text = format!("{eol}{eol}{md}{tail}");
                return Ok(planned(
                    TextEdit {
                        range: at..at,
                        new_text,
                    },
                    2 * eol.len(),
                ));
            }
            let rest_empty = text[at..].trim().is_empty();
            let new_text = if rest_empty {
                format!("{md}{eol}")
            } else {
                format!("{md}{eol}{eol}")
            };
            Ok(planned(
                TextEdit {
                    range: at..at,
                    new_text,
                },
                0,
            ))
        }
        PatchKind::InsertAfter => {
            let at = text.len();
            let body = text.trim_end_matches(['\n', '\r', ' ', '\t']);
            if body.is_empty() || body == "\u{feff}" {
                return Ok(planned(
                    TextEdit {
                        range: at..at,
                        new_text: format!("{md}{eol}"),
                    },
                    0,
                ));
            }
            let lead = if text.ends_with('\n') || text.ends_with('\r') {
                eol.to_string()
            } else {
                format!("{eol}{eol}")
            };
            // A file ending in one line break needs one more for the blank line.
            let lead = if text.ends_with(&format!("{eol}{eol}")) {
                String::new()
            } else {
                lead
            };
            let offset = lead.len();
            Ok(planned(
                TextEdit {
                    range: at..at,
                    new_text: format!("{lead}{md}{eol}"),
                },
                offset,
            ))
        }
        _ => Err(EditError::InvalidArgument(DOCUMENT_OPS.into())),
    }
}

/// Why an operation other than an insert names the `document` pointer.
const DOCUMENT_OPS: &str = "the `document` pointer only takes insert_before (start of file), insert_after (end of file), set_field and delete_field (frontmatter)";

/// Is the line before the one starting at `line_start` blank (or is there none)?
fn previous_line_blank(text: &str, line_start: usize) -> bool {
    // One line break ends the previous line; more would be blank lines, which count.
    let before = &text[..line_start];
    let before = before
        .strip_suffix("\r\n")
        .or_else(|| before.strip_suffix(['\n', '\r']))
        .unwrap_or(before);
    let prev = before
        .rfind(['\n', '\r'])
        .map_or(before, |i| &before[i + 1..]);
    before.is_empty() || prev.trim().is_empty()
}

/// Is the line after the one holding `offset` blank (or is there none)?
fn next_line_blank(text: &str, offset: usize) -> bool {
    let rest = &text[offset..];
    let Some(i) = rest.find('\n') else {
        return true;
    };
    let next = &rest[i + 1..];
    let line = next.split('\n').next().unwrap_or("");
    line.trim().is_empty()
}

fn require(ok: bool, message: &str) -> Result<(), EditError> {
    if ok {
        Ok(())
    } else {
        Err(EditError::InvalidArgument(message.into()))
    }
}

/// The whitespace between the start of `offset`'s line and `offset`, if only whitespace.
fn line_indent(text: &str, offset: usize) -> &str {
    let line_start = text[..offset].rfind(['\n', '\r']).map_or(0, |i| i + 1);
    let before = &text[line_start..offset];
    if before.chars().all(|c| c == ' ' || c == '\t') {
        before
    } else {
        ""
    }
}

/// Widens an element's range for deletion: its indentation, its line ending and the
/// blank lines after it; at the end of the file, the blank lines before it instead.
fn deletion_range(text: &str, range: std::ops::Range<usize>) -> std::ops::Range<usize> {
    let bytes = text.as_bytes();
    let mut start = range.start;
    let indent = line_indent(text, start);
    start -= indent.len();
    let mut end = range.end;
    // Consume the rest of the line's break and following blank lines.
    let mut probe = end;
    loop {
        let line_end = text[probe..].find('\n').map(|i| probe + i + 1);
        let segment_end = line_end.unwrap_or(text.len());
        if text[probe..segment_end].trim().is_empty() {
            end = segment_end;
            if line_end.is_none() {
                break;
            }
            probe = segment_end;
        } else {
            break;
        }
    }
    if end == text.len() {
        // Nothing follows: drop the blank lines before the element instead, keeping one break.
        let before = &text[..start];
        let trimmed = before.trim_end_matches(['\n', '\r', ' ', '\t']);
        if !trimmed.is_empty() {
            let after_content = trimmed.len();
            let first_break = if bytes.get(after_content) == Some(&b'\r')
                && bytes.get(after_content + 1) == Some(&b'\n')
            {
                after_content + 2
            } else {
                after_content + 1
            };
            start = first_break.min(start);
        }
    }
    start..end
}
