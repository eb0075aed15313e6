//! Structural edits of Markdown source: patch operations on elements and on the YAML
//! frontmatter's keys (`field`), table edits and the table of contents (`toc`). Nothing
//! here touches the disk.
//!
//! Every edit is data: a list of sorted, disjoint [`TextEdit`]s against the unchanged
//! text, so the same edit can be written to disk (through [`crate::write`]) or sent to an
//! editor buffer. Nothing re-serialises the syntax tree: bytes outside the edited
//! ranges (BOM, line endings, trailing blanks) stay exactly as they were.
//!
//! Before an edit is accepted the result is parsed again and checked by `verify`:
//! every element outside the edited ranges must still be there with the same kind and
//! bytes, list items must keep their list and their parent item, and each operation
//! must produce the kind of element it promised. Otherwise the whole request fails.

mod field;

pub mod patch;

pub mod table;

pub mod toc;

use std::collections::HashMap;
use std::ops::Range;

use crate::document::TextEdit;
use crate::parse::{ElementKind, Parsed};

pub use patch::{PatchKind, PatchOp, PatchOutcome, apply_patch};

/// Why an edit was refused. Nothing was changed.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum EditError {
    /// The request itself is wrong (malformed pointer, missing Markdown, wrong element kind).
    #[error("{0}")]
    InvalidArgument(String),
    /// The target changed since it was read, or the result would change untouched structure.
    #[error("{0}")]
    Conflict(String),
}

impl EditError {
    /// The MCP error code: `INVALID_ARGUMENT` or `CONFLICT`.
    pub fn code(&self) -> &'static str {
        match self {
            EditError::InvalidArgument(_) => "INVALID_ARGUMENT",
            EditError::Conflict(_) => "CONFLICT",
        }
    }
}

/// The line ending a document mostly uses: `\r\n` when it has more CRLF than LF lines.
pub fn dominant_eol(text: &str) -> &'static str {
    let crlf = text.matches("\r\n").count();
    let lf = text.matches('\n').count() - crlf;
    if crlf > lf { "\r\n" } else { "\n" }
}

/// The first byte at or after `offset` that is not a space or tab.
pub(crate) fn content_start(text: &str, offset: usize) -> usize {
    let rest = &text.as_bytes()[offset.min(text.len())..];
    offset
        + rest
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t'))
            .count()
}

/// Applies sorted, disjoint edits (against `text`) and returns the new text.
///
/// Errors: [`EditError::InvalidArgument`] when two edits overlap or a range is out of bounds.
pub fn apply_edits(text: &str, edits: &[TextEdit]) -> Result<String, EditError> {
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for e in edits {
        if e.range.start < pos || e.range.end > text.len() || e.range.start > e.range.end {
            return Err(EditError::InvalidArgument(
                "operations overlap or reach outside the document".into(),
            ));
        }
        if !text.is_char_boundary(e.range.start) || !text.is_char_boundary(e.range.end) {
            return Err(EditError::InvalidArgument(
                "edit range splits a character".into(),
            ));
        }
        out.push_str(&text[pos..e.range.start]);
        out.push_str(&e.new_text);
        pos = e.range.end;
    }
    out.push_str(&text[pos..]);
    Ok(out)
}

/// Maps an offset of the old text to the new text, given sorted disjoint edits.
/// Offsets inside an edited range map to the start of its replacement.
pub(crate) fn map_offset(edits: &[TextEdit], offset: usize) -> usize {
    let mut delta: isize = 0;
    for e in edits {
        if e.range.end <= offset {
            delta += e.new_text.len() as isize - e.range.len() as isize;
        } else if e.range.start < offset {
            return (e.range.start as isize + delta) as usize;
        } else {
            break;
        }
    }
    (offset as isize + delta) as usize
}

/// What an edit region must contain after the edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Expect {
    /// Anything (insertions, deletions).
    Any,
    /// Exactly one element of this kind (and heading level, when a heading).
    One(ElementKind, u8),
    /// Starts with a heading of this level; every other heading in it is deeper.
    Section(u8),
    /// Starts with a list item; everything in it is list items.
    Items,
}

/// Checks that `new` (the parse of the edited text) keeps every element of `old` that the
/// edits did not touch, list membership and parent items, and that each edit region holds
/// what it promised. `regions` pairs each edit index with its expectation.
pub(crate) fn verify(
    old_text: &str,
    old: &Parsed,
    new: &Parsed,
    new_text: &str,
    edits: &[TextEdit],
    expects: &[Expect],
) -> Result<(), EditError> {
    // A text too deeply nested to parse parses as its `document` alone: say so, rather
    // than that every element changed.
    if let Some(problem) = crate::parse::nesting_problem(new_text) {
        return Err(EditError::InvalidArgument(format!(
            "the edit would make the document too deeply nested or crowded to parse safely ({problem}); nothing was written"
        )));
    }
    let old_to_new = untouched_elements(old_text, old, new, new_text, edits)?;
    parents_kept(old, new, edits, &old_to_new)?;
    regions_hold(new, new_text, edits, expects)
}

/// Does an edit touch range `r`? An insertion touches the ranges it falls strictly inside.
fn touched(edits: &[TextEdit], r: &Range<usize>) -> bool {
    edits.iter().any(|e| {
        if e.range.is_empty() {
            r.start < e.range.start && e.range.start < r.end
        } else {
            r.start < e.range.end && e.range.start < r.end
        }
    })
}

/// Each element of `old` outside the edited ranges, by index, mapped to its index in `new`
/// (same start after the edits, kind, selfHash and level); an untouched list item must
/// keep its list.
fn untouched_elements(
    old_text: &str,
    old: &Parsed,
    new: &Parsed,
    new_text: &str,
    edits: &[TextEdit],
) -> Result<HashMap<usize, usize>, EditError> {
    // New elements by (start, kind).
    let mut new_at: HashMap<(usize, ElementKind), usize> = HashMap::new();
    for (i, e) in new.elements.iter().enumerate() {
        if e.kind != ElementKind::Document {
            new_at.entry((e.range.start, e.kind)).or_insert(i);
        }
    }
    let mut lists = ListMapping::new(old_text, new_text);
    let mut old_to_new: HashMap<usize, usize> = HashMap::new();
    for (i, e) in old.elements.iter().enumerate() {
        if e.kind == ElementKind::Document || touched(edits, &e.range) {
            continue;
        }
        let start = map_offset(edits, e.range.start);
        let found = new_at.get(&(start, e.kind)).copied().filter(|&j| {
            new.elements[j].self_hash == e.self_hash && new.elements[j].level == e.level
        });
        let Some(j) = found else {
            // The Markdown given joins or splits a neighbour (a paragraph after a list
            // item becomes part of it): the agent's text, not another writer, is the cause.
            return Err(EditError::InvalidArgument(format!(
                "the Markdown given would change element {} ({}), which the operation does not target (it would join or split it); separate it with a blank line or give other Markdown; nothing was written",
                e.logical,
                e.kind.as_str()
            )));
        };
        old_to_new.insert(i, j);
        if e.kind == ElementKind::ListItem {
            lists.keep(e, new.elements[j].range.start)?;
        }
    }
    Ok(old_to_new)
}

/// The lists of the old and the new text, and which old list each new one continues
/// (one to one).
struct ListMapping {
    /// List item start → list start, in the old text.
    old: HashMap<usize, usize>,
    /// List item start → list start, in the new text.
    new: HashMap<usize, usize>,
    /// Old list → new list.
    map: HashMap<usize, usize>,
    /// New list → old list.
    back: HashMap<usize, usize>,
}

impl ListMapping {
    /// The lists of both texts, nothing mapped yet.
    fn new(old_text: &str, new_text: &str) -> ListMapping {
        ListMapping {
            old: list_containers(old_text),
            new: list_containers(new_text),
            map: HashMap::new(),
            back: HashMap::new(),
        }
    }

    /// Checks that untouched list item `e` of the old text, now at `new_start`, is in the
    /// list that continues its old list, and no other old list continues there.
    fn keep(&mut self, e: &crate::parse::Element, new_start: usize) -> Result<(), EditError> {
        let (Some(&lo), Some(&ln)) = (self.old.get(&e.range.start), self.new.get(&new_start))
        else {
            return Ok(());
        };
        if *self.map.entry(lo).or_insert(ln) != ln || *self.back.entry(ln).or_insert(lo) != lo {
            return Err(EditError::InvalidArgument(format!(
                "the Markdown given would split or merge the list holding {}; nothing was written",
                e.logical
            )));
        }
        Ok(())
    }
}

/// Parent items of untouched list items stay their parents.
fn parents_kept(
    old: &Parsed,
    new: &Parsed,
    edits: &[TextEdit],
    old_to_new: &HashMap<usize, usize>,
) -> Result<(), EditError> {
    for (&i, &j) in old_to_new {
        let e = &old.elements[i];
        if e.kind != ElementKind::ListItem {
            continue;
        }
        let old_parent = e
            .parent
            .filter(|&p| old.elements[p].kind == ElementKind::ListItem);
        let new_parent = new.elements[j]
            .parent
            .filter(|&p| new.elements[p].kind == ElementKind::ListItem);
        let ok = match (old_parent, new_parent) {
            (None, None) => true,
            (Some(op), Some(np)) => match old_to_new.get(&op) {
                Some(&mapped) => mapped == np,
                // The parent was edited: the new parent must start where the old one did.
                None => {
                    new.elements[np].range.start == map_offset(edits, old.elements[op].range.start)
                }
            },
            _ => false,
        };
        if !ok {
            return Err(EditError::InvalidArgument(format!(
                "the Markdown given would move list item {} to another parent; nothing was written",
                e.logical
            )));
        }
    }
    Ok(())
}

/// Each region holds what its operation promised.
fn regions_hold(
    new: &Parsed,
    new_text: &str,
    edits: &[TextEdit],
    expects: &[Expect],
) -> Result<(), EditError> {
    let mut shift: isize = 0;
    for (edit, expect) in edits.iter().zip(expects) {
        let start = (edit.range.start as isize + shift) as usize;
        let end = start + edit.new_text.len();
        shift += edit.new_text.len() as isize - edit.range.len() as isize;
        if *expect == Expect::Any {
            continue;
        }
        let inside: Vec<&crate::parse::Element> = new
            .elements
            .iter()
            .filter(|e| {
                let at = content_start(new_text, e.range.start);
                e.kind != ElementKind::Document && at >= start && at < end.max(start + 1)
            })
            .collect();
        match expect {
            Expect::Any => {}
            Expect::One(kind, level) => holds_one(&inside, start, end, *kind, *level)?,
            Expect::Section(level) => holds_section(&inside, new_text, start, *level)?,
            Expect::Items => holds_items(&inside, new)?,
        }
    }
    Ok(())
}

/// The refusal of an edit whose region does not hold what it promised.
fn refused(msg: String) -> Result<(), EditError> {
    Err(EditError::InvalidArgument(format!(
        "{msg}; nothing was written"
    )))
}

/// [`Expect::One`]: the region `start..end` (its elements `inside`) holds exactly one
/// element of `kind` and `level`.
fn holds_one(
    inside: &[&crate::parse::Element],
    start: usize,
    end: usize,
    kind: ElementKind,
    level: u8,
) -> Result<(), EditError> {
    // Children kept from the old list item are outside the region.
    let own: Vec<_> = inside
        .iter()
        .filter(|e| e.range.end <= end || e.range.start == start)
        .collect();
    if own.len() != 1 || own[0].kind != kind || own[0].level != level {
        let found: Vec<String> = own
            .iter()
            .map(|e| {
                if e.kind == ElementKind::Heading {
                    format!("heading level {}", e.level)
                } else {
                    e.kind.as_str().to_string()
                }
            })
            .collect();
        let want = if kind == ElementKind::Heading {
            format!("heading level {level}")
        } else {
            kind.as_str().to_string()
        };
        return refused(format!(
            "the replacement must be exactly one {want}, but it parses as [{}]",
            found.join(", ")
        ));
    }
    Ok(())
}

/// [`Expect::Section`]: the region starting at `start` (its elements `inside`) starts
/// with a heading of `level`, and every other heading in it is deeper.
fn holds_section(
    inside: &[&crate::parse::Element],
    new_text: &str,
    start: usize,
    level: u8,
) -> Result<(), EditError> {
    let Some(first) = inside.first() else {
        return refused("the replacement section is empty".into());
    };
    if first.kind != ElementKind::Heading
        || first.level != level
        || content_start(new_text, first.range.start) != start
    {
        return refused(format!(
            "a replacement section must start with a level-{level} heading"
        ));
    }
    if inside
        .iter()
        .skip(1)
        .any(|e| e.kind == ElementKind::Heading && e.level <= level)
    {
        return refused(format!(
            "headings inside a replacement section must be deeper than level {level}"
        ));
    }
    Ok(())
}

/// [`Expect::Items`]: the region's elements `inside` start with a list item and are all
/// list items or inside one.
fn holds_items(inside: &[&crate::parse::Element], new: &Parsed) -> Result<(), EditError> {
    let first_ok = inside
        .first()
        .is_some_and(|e| e.kind == ElementKind::ListItem);
    let all_items = inside.iter().all(|e| {
        e.kind == ElementKind::ListItem
            || e.parent
                .is_some_and(|p| new.elements[p].kind == ElementKind::ListItem)
    });
    if !first_ok || !all_items {
        return refused(
            "the Markdown must be list items matching the target's indentation and marker".into(),
        );
    }
    Ok(())
}

/// Start offset of each list item → start offset of the list that holds it, from the
/// Markdown tree (two adjacent lists with different markers are two lists).
fn list_containers(text: &str) -> HashMap<usize, usize> {
    use markdown::mdast::Node;
    fn walk(node: &Node, out: &mut HashMap<usize, usize>) {
        if let Node::List(list) = node {
            let id = list.position.as_ref().map_or(0, |p| p.start.offset);
            for item in &list.children {
                if let Some(p) = item.position() {
                    out.insert(p.start.offset, id);
                }
            }
        }
        if let Some(children) = node.children() {
            for c in children {
                walk(c, out);
            }
        }
    }
    let mut out = HashMap::new();
    // Through the parser's guard: markdown-rs panics on some texts (a new text that does
    // not parse leaves only its `document` element, and the check above refuses the edit).
    // Segment by segment, as `parse` does: one markdown-rs pass over a long note takes
    // time that grows faster than its length (seconds for 2 MB).
    if let Ok(nodes) = crate::parse::segmented::top_level_nodes(text) {
        for node in &nodes {
            walk(node, &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests;
