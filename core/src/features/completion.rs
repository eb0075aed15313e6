//! What can be typed at the cursor ([`completions_at`]): the feature behind
//! `textDocument/completion`. Relative paths and `#` anchors inside `](…)`, wiki targets
//! and their headings inside `[[…`, reference labels inside `][…`, and the workspace's
//! tags after a `#` that starts a tag (where the parser reads a tag: not in code, math,
//! HTML, links or the frontmatter).
//!
//! The context is read from the text of the cursor's line before the cursor. Every item
//! carries an edit that replaces what was typed of the destination, label, anchor or tag,
//! so clients need not guess word boundaries.

use std::collections::BTreeMap;
use std::ops::Range;

use crate::document::{Document, Encoding, LineCol, TextEdit};
use crate::links::join_relative;
use crate::links::rewrite::relative_path;
use crate::parse::{Parsed, is_tag_char, percent_decode};
use crate::tags::suggestions;
use crate::workspace::{SiteGenerator, Workspace};

/// The most items one answer holds; beyond it the list is filtered by the typed text
/// and marked incomplete, so the client asks again as the user types.
pub const MAX_ITEMS: usize = 1000;

/// Characters that open a completion context.
pub const TRIGGER_CHARACTERS: [&str; 4] = ["(", "#", "[", "/"];

/// What an item completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionKind {
    /// A document: a relative path inside `](…)` or a wiki target inside `[[…`.
    File,
    /// A heading: its anchor after `](…#` (the heading's text as detail), or its text
    /// after `[[…#`.
    Heading,
    /// An HTML or attribute-list anchor after `](…#`.
    Anchor,
    /// A link reference definition's label inside `][…`.
    Reference,
    /// A tag of the workspace after `#`.
    Tag,
}

/// One thing that can be typed at the cursor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// What is shown and typed: a path, an anchor, a label or a tag name.
    pub label: String,
    /// What it completes.
    pub kind: CompletionKind,
    /// A second line: the document's KB-relative path (wiki targets), the heading's text
    /// (anchors) or slug (wiki headings, `#slug`), or how many notes carry a tag.
    pub detail: Option<String>,
    /// The edit that puts the item in: it replaces what was typed (bytes of the cursor's
    /// document, ending at the cursor) with the label.
    pub edit: TextEdit,
}

/// The items that can be typed at a cursor.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Completions {
    /// The items, sorted by label.
    pub items: Vec<Completion>,
    /// True when there were more than [`MAX_ITEMS`]: then only the items whose label
    /// contains the typed text (ignoring case) are kept, the shortest labels first, up to
    /// [`MAX_ITEMS`], and the client should ask again as the user types.
    pub incomplete: bool,
}

/// An item before its edit: every item of one answer replaces the same bytes.
struct Item {
    label: String,
    kind: CompletionKind,
    detail: Option<String>,
}

impl Item {
    fn new(label: String, kind: CompletionKind, detail: Option<String>) -> Item {
        Item {
            label,
            kind,
            detail,
        }
    }
}

/// The completions at byte `offset` of document `path` (parsed with every element and
/// link as `parsed`), read from the text of the offset's line before it:
/// - after `[[` (no `]]` or `|` since): the workspace's documents by file stem (the path
///   without extension when stems repeat); after `[[target#`, the headings of the one
///   document `target` names (this one when it is empty), by text;
/// - after `](` (no `)` or white space since): the relative paths of the other documents;
///   after `](dest#`, the anchors of the document `dest` names (with or without `.md`;
///   this one when empty): headings by the id the site generator gives them, then HTML
///   and attribute-list anchors;
/// - after `][` (no `]` since): the document's reference labels, first spelling of each;
/// - after a `#` that starts the line or follows white space, followed only by tag
///   characters: the workspace's tags ([`crate::tags::suggestions`]).
///
/// `None` where none of these applies, inside a wiki alias, when the anchors' document is
/// not one, where no tag can be, or when `path` is not a document of `ws`.
pub fn completions_at(
    ws: &Workspace,
    path: &str,
    parsed: &Parsed,
    offset: usize,
) -> Option<Completions> {
    let doc = &ws.get(path)?.doc;
    let line_start = line_start(doc, offset);
    let prefix = doc.slice(line_start..offset)?;
    let (typed, items) = context(ws, path, parsed, offset, &prefix)?;
    let replace = line_start + typed..offset;
    Some(finish(items, replace, &prefix[typed..]))
}

/// The byte where the line holding `offset` starts (after a byte order mark on the first line).
fn line_start(doc: &Document, offset: usize) -> usize {
    let line = doc.offset_to_line_col(offset, Encoding::Utf8).line;
    let start = doc.line_col_to_offset(LineCol { line, col: 0 }, Encoding::Utf8);
    if start == 0 && doc.slice(0..3).as_deref() == Some("\u{feff}") {
        3
    } else {
        start
    }
}

/// What is being completed at the end of `prefix` (the cursor's line up to `offset`):
/// the byte of `prefix` where the typed text starts, and the items.
fn context(
    ws: &Workspace,
    path: &str,
    parsed: &Parsed,
    offset: usize,
    prefix: &str,
) -> Option<(usize, Vec<Item>)> {
    if let Some(open) = prefix.rfind("[[").filter(|&i| !prefix[i..].contains("]]")) {
        let inner = &prefix[open + 2..];
        if inner.contains('|') {
            return None;
        }
        return Some(match inner.find('#') {
            Some(hash) => (
                open + 2 + hash + 1,
                wiki_headings(ws, path, inner[..hash].trim())?,
            ),
            None => (open + 2, wiki_targets(ws)),
        });
    }
    if let Some(open) = prefix
        .rfind("](")
        .filter(|&i| !prefix[i + 2..].contains([')', ' ', '\t']))
    {
        let partial = &prefix[open + 2..];
        return Some(match partial.find('#') {
            Some(hash) => {
                let written = &partial[..hash];
                let target = if written.is_empty() {
                    Some(path.to_owned())
                } else {
                    resolve_document(ws, path, written)
                };
                let target = ws.parsed(&target?)?;
                (open + 2 + hash + 1, anchors(&target, ws.generator()))
            }
            None => (open + 2, paths(ws, path)),
        });
    }
    if let Some(open) = prefix
        .rfind("][")
        .filter(|&i| !prefix[i + 2..].contains(']'))
    {
        return Some((open + 2, labels(parsed)));
    }
    let hash = typed_tag(prefix)?;
    let tags = suggestions(ws, parsed, offset, &prefix[hash + 1..])?;
    let items = tags
        .into_iter()
        .map(|(tag, n)| {
            let notes = if n == 1 {
                "1 note".to_string()
            } else {
                format!("{n} notes")
            };
            Item::new(tag, CompletionKind::Tag, Some(notes))
        })
        .collect();
    Some((hash + 1, items))
}

/// The headings of the document wiki target `target` names from `from` (`from` itself
/// when empty), by text with `#slug` as detail; `None` unless exactly one document matches.
fn wiki_headings(ws: &Workspace, from: &str, target: &str) -> Option<Vec<Item>> {
    let path = if target.is_empty() {
        Some(from.to_owned())
    } else {
        let candidates = ws.wiki_candidates(from, target);
        if candidates.len() == 1 {
            candidates.into_iter().next()
        } else {
            None
        }
    };
    let parsed = ws.parsed(&path?)?;
    let items = parsed
        .headings
        .iter()
        .map(|h| {
            let detail = Some(format!("#{}", h.slug));
            Item::new(h.text.clone(), CompletionKind::Heading, detail)
        })
        .collect();
    Some(items)
}

/// Every document as a wiki target: its file stem, or its path without extension when
/// stems repeat, and each of its frontmatter aliases; the path as detail.
fn wiki_targets(ws: &Workspace) -> Vec<Item> {
    let mut by_stem: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for path in ws.document_paths() {
        by_stem
            .entry(stem(path).to_string())
            .or_default()
            .push(path);
    }
    let mut items = Vec::new();
    for (name, paths) in by_stem {
        if let [path] = paths[..] {
            items.push(Item::new(
                name,
                CompletionKind::File,
                Some(path.to_string()),
            ));
        } else {
            for path in paths {
                let no_ext = path.rsplit_once('.').map_or(path, |(a, _)| a);
                let detail = Some(path.to_string());
                items.push(Item::new(no_ext.to_string(), CompletionKind::File, detail));
            }
        }
    }
    for path in ws.document_paths() {
        if let Some(parsed) = ws.parsed(path) {
            for alias in parsed.aliases() {
                items.push(Item::new(
                    alias,
                    CompletionKind::File,
                    Some(path.to_string()),
                ));
            }
        }
    }
    items
}

/// Every other document, by its path relative to `from`.
fn paths(ws: &Workspace, from: &str) -> Vec<Item> {
    ws.document_paths()
        .filter(|p| *p != from)
        .map(|p| Item::new(relative_path(from, p), CompletionKind::File, None))
        .collect()
}

/// The labels of `parsed`'s link reference definitions, the first spelling of each key.
fn labels(parsed: &Parsed) -> Vec<Item> {
    let mut seen = Vec::new();
    let mut items = Vec::new();
    for d in &parsed.definitions {
        if !seen.contains(&d.key) {
            seen.push(d.key.clone());
            items.push(Item::new(d.label.clone(), CompletionKind::Reference, None));
        }
    }
    items
}

/// The answer: each item with its edit of `replace`, sorted by label; over [`MAX_ITEMS`],
/// only the items containing `typed` (ignoring case), shortest first, and incomplete.
fn finish(mut items: Vec<Item>, replace: Range<usize>, typed: &str) -> Completions {
    let incomplete = items.len() > MAX_ITEMS;
    if incomplete {
        let typed = typed.to_lowercase();
        items.retain(|i| i.label.to_lowercase().contains(&typed));
        items.sort_by(|a, b| {
            a.label
                .len()
                .cmp(&b.label.len())
                .then(a.label.cmp(&b.label))
        });
        items.truncate(MAX_ITEMS);
    }
    let mut items: Vec<Completion> = items
        .into_iter()
        .map(|i| Completion {
            edit: TextEdit {
                range: replace.clone(),
                new_text: i.label.clone(),
            },
            label: i.label,
            kind: i.kind,
            detail: i.detail,
        })
        .collect();
    items.sort_by(|a, b| a.label.cmp(&b.label));
    Completions { items, incomplete }
}

/// Where the tag being typed at the end of `prefix` starts: the byte of its `#`, which
/// begins the line or follows white space, every character after it a tag character
/// ([`is_tag_char`]).
fn typed_tag(prefix: &str) -> Option<usize> {
    let hash = prefix.rfind('#')?;
    let opens = prefix[..hash]
        .chars()
        .next_back()
        .is_none_or(char::is_whitespace);
    let typed = &prefix[hash + 1..];
    (opens && typed.chars().all(is_tag_char)).then_some(hash)
}

/// The file name of a KB-relative path without its extension.
fn stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(a, _)| a)
}

/// The fragments a Markdown link can name in `parsed`: each heading's GitHub slug, or on a
/// published site the id its generator gives the heading ([`Parsed::heading_anchors`]), then the
/// HTML and attribute-list anchors.
fn anchors(parsed: &Parsed, generator: SiteGenerator) -> Vec<Item> {
    let ids = parsed.heading_anchors(generator);
    let mut items: Vec<Item> = parsed
        .headings
        .iter()
        .zip(ids)
        .map(|(h, id)| Item::new(id, CompletionKind::Heading, Some(h.text.clone())))
        .collect();
    items.extend(
        parsed
            .anchors
            .iter()
            .map(|a| Item::new(a.id.clone(), CompletionKind::Anchor, None)),
    );
    items
}

/// The document a written relative destination names (with or without `.md`).
fn resolve_document(ws: &Workspace, from: &str, written: &str) -> Option<String> {
    let joined = join_relative(from, &percent_decode(written))?;
    [
        joined.clone(),
        format!("{joined}.md"),
        format!("{joined}.markdown"),
    ]
    .into_iter()
    .find(|p| ws.contains_document(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::workspace;

    const FIXTURE: &str = "\
//- /a.md
# Alpha

## Set Up

Link [b](b.md#be and [s](#se and [[b#Be and [[b|alias
Ref [r][l
Tags #pro

[lbl]: b.md
[LBL]: other.md
[other]: b.md
//- /b.md
# Beta

## Beta Two

<a id=\"anchor\"></a>

#project #project/alpha
//- /c.md
# C #project
//- /one/dup.md
//- /two/dup.md
";

    /// The completions in `path` with the cursor right after the first `before`, and that offset.
    fn complete(ws: &Workspace, path: &str, before: &str) -> (Option<Completions>, usize) {
        let entry = ws.get(path).unwrap();
        let text = entry.doc.text();
        let offset = text.find(before).unwrap() + before.len();
        (
            completions_at(ws, path, &entry.full_parsed(), offset),
            offset,
        )
    }

    /// (label, kind, detail) of each item.
    fn shown(c: &Completions) -> Vec<(&str, CompletionKind, Option<&str>)> {
        c.items
            .iter()
            .map(|i| (i.label.as_str(), i.kind, i.detail.as_deref()))
            .collect()
    }

    #[test]
    fn anchors_of_the_linked_document_replace_the_typed_fragment() {
        let ws = workspace(FIXTURE);
        let (found, offset) = complete(&ws, "a.md", "[b](b.md#be");
        let found = found.unwrap();
        assert_eq!(
            shown(&found),
            [
                ("anchor", CompletionKind::Anchor, None),
                ("beta", CompletionKind::Heading, Some("Beta")),
                ("beta-two", CompletionKind::Heading, Some("Beta Two")),
            ]
        );
        assert!(!found.incomplete);
        // Every item replaces the typed `be`, up to the cursor.
        for item in &found.items {
            assert_eq!(item.edit.range, offset - 2..offset);
            assert_eq!(item.edit.new_text, item.label);
        }
        // `](#` completes this document's own headings.
        let (own, _) = complete(&ws, "a.md", "[s](#se");
        assert_eq!(
            shown(&own.unwrap()),
            [
                ("alpha", CompletionKind::Heading, Some("Alpha")),
                ("set-up", CompletionKind::Heading, Some("Set Up")),
            ]
        );
    }

    #[test]
    fn paths_exclude_the_document_itself() {
        let ws = workspace("//- /notes/a.md\nSee [x](\n//- /b.md\n//- /notes/c.md\n");
        let (found, offset) = complete(&ws, "notes/a.md", "[x](");
        let found = found.unwrap();
        assert_eq!(
            shown(&found),
            [
                ("../b.md", CompletionKind::File, None),
                ("c.md", CompletionKind::File, None),
            ]
        );
        assert_eq!(found.items[0].edit.range, offset..offset);
    }

    #[test]
    fn wiki_targets_use_the_path_when_stems_repeat_and_headings_their_text() {
        let ws = workspace(FIXTURE);
        let text = ws.get("a.md").unwrap().doc.text();
        let parsed = ws.get("a.md").unwrap().full_parsed();
        // Right after `[[` of `[[b#Be`.
        let open = text.find("[[b#Be").unwrap() + 2;
        let targets = completions_at(&ws, "a.md", &parsed, open).unwrap();
        assert_eq!(
            shown(&targets),
            [
                ("a", CompletionKind::File, Some("a.md")),
                ("b", CompletionKind::File, Some("b.md")),
                ("c", CompletionKind::File, Some("c.md")),
                ("one/dup", CompletionKind::File, Some("one/dup.md")),
                ("two/dup", CompletionKind::File, Some("two/dup.md")),
            ]
        );
        assert_eq!(targets.items[0].edit.range, open..open);
        let (headings, offset) = complete(&ws, "a.md", "[[b#Be");
        let headings = headings.unwrap();
        assert_eq!(
            shown(&headings),
            [
                ("Beta", CompletionKind::Heading, Some("#beta")),
                ("Beta Two", CompletionKind::Heading, Some("#beta-two")),
            ]
        );
        assert_eq!(headings.items[1].edit.range, offset - 2..offset);
        // Nothing inside an alias.
        assert_eq!(complete(&ws, "a.md", "[[b|ali").0, None);
    }

    #[test]
    fn wiki_targets_include_frontmatter_aliases() {
        let ws =
            workspace("//- /task.md\n---\naliases: [Chore, Job]\n---\n# Task\n//- /a.md\n[[\n");
        let (found, offset) = complete(&ws, "a.md", "[[");
        assert_eq!(
            shown(&found.unwrap()),
            [
                ("Chore", CompletionKind::File, Some("task.md")),
                ("Job", CompletionKind::File, Some("task.md")),
                ("a", CompletionKind::File, Some("a.md")),
                ("task", CompletionKind::File, Some("task.md")),
            ]
        );
        assert_eq!(offset, 2);
    }

    #[test]
    fn reference_labels_keep_the_first_spelling_of_each_key() {
        let ws = workspace(FIXTURE);
        let (found, offset) = complete(&ws, "a.md", "[r][l");
        let found = found.unwrap();
        assert_eq!(
            shown(&found),
            [
                ("lbl", CompletionKind::Reference, None),
                ("other", CompletionKind::Reference, None),
            ]
        );
        assert_eq!(found.items[0].edit.range, offset - 1..offset);
    }

    #[test]
    fn tags_count_the_notes_carrying_them() {
        let ws = workspace(FIXTURE);
        let (found, offset) = complete(&ws, "a.md", "Tags #pro");
        let found = found.unwrap();
        assert_eq!(
            shown(&found),
            [
                ("project", CompletionKind::Tag, Some("2 notes")),
                ("project/alpha", CompletionKind::Tag, Some("1 note")),
            ]
        );
        assert_eq!(found.items[0].edit.range, offset - 3..offset);
        // A `#` inside a word starts no tag; nor does plain text.
        assert_eq!(complete(&ws, "a.md", "Ref [r]").0, None);
        assert_eq!(complete(&ws, "a.md", "# Alp").0, None);
    }

    #[test]
    fn a_tag_at_the_start_of_a_document_after_a_byte_order_mark() {
        // The line starts after the byte order mark, so this `#` opens a tag.
        let ws = workspace("//- /a.md\n\u{feff}#\n//- /b.md\n#work\n");
        let (found, offset) = complete(&ws, "a.md", "#");
        assert_eq!(offset, 4);
        let found = found.unwrap();
        assert_eq!(
            shown(&found),
            [("work", CompletionKind::Tag, Some("1 note"))]
        );
        assert_eq!(found.items[0].edit.range, 4..4);
    }

    #[test]
    fn over_the_limit_only_matching_items_are_sent_shortest_first() {
        let mut fixture = String::from("//- /a.md\nSee [[x-1\n");
        for i in 0..MAX_ITEMS + 10 {
            fixture.push_str(&format!("//- /n{i}.md\n"));
        }
        let ws = workspace(&fixture);
        let (found, _) = complete(&ws, "a.md", "[[x-1");
        let found = found.unwrap();
        assert!(found.incomplete);
        assert_eq!(found.items, []);
        let (found, _) = complete(&ws, "a.md", "[[");
        let found = found.unwrap();
        // 1,011 documents: over the limit, nothing typed, so the shortest 1,000 labels.
        assert!(found.incomplete);
        assert_eq!(found.items.len(), MAX_ITEMS);
        assert!(found.items.iter().any(|i| i.label == "a"));
        assert!(!found.items.iter().any(|i| i.label == "n1009"));
    }
}
