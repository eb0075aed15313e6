//! Tags across a workspace: the tag at an offset, every place a tag is carried, and the
//! tags known in the workspace with how many documents carry each.
//!
//! A document's tags ([`crate::parse::Tag`]) are its frontmatter `tags` and the `#tag`s
//! of its text; the syntax is `parse`'s (`parse/tag_syntax.rs`). Tags compare exactly,
//! and a tag also stands for the tags nested in it ([`crate::parse::tag_within`]): the
//! references of `project` include `#project/alpha`. The search filters `tags_any` and
//! `tags_all` apply the same rule to the index (`search::build_filters`).

use std::collections::BTreeMap;

use crate::document::TextEdit;
use crate::links::navigate::WorkspaceEdits;
use crate::links::references::Reference;
use crate::parse::{ElementKind, Parsed, Tag, is_tag_name, tag_within};
use crate::workspace::Workspace;

/// The tag whose bytes contain `offset` (its end included, so a cursor right after
/// `#tag` still touches it); a frontmatter entry only where it was located.
pub fn tag_at(parsed: &Parsed, offset: usize) -> Option<&Tag> {
    parsed
        .tags
        .iter()
        .find(|t| t.located && t.range.start <= offset && offset <= t.range.end)
}

/// Every tag carried in the workspace that is `name` or nested in it, in path then
/// source order: `#name` in text, and frontmatter entries (their range is the entry, or
/// the whole frontmatter when the entry could not be located).
pub fn references_to_tag(ws: &Workspace, name: &str) -> Vec<Reference> {
    let mut out = Vec::new();
    for path in ws.document_paths() {
        let Some(parsed) = ws.parsed(path) else {
            continue;
        };
        out.extend(
            parsed
                .tags
                .iter()
                .filter(|t| tag_within(&t.name, name))
                .map(|t| Reference {
                    path: path.to_string(),
                    range: t.range.clone(),
                }),
        );
    }
    out
}

/// Every tag of the workspace with the number of documents carrying it exactly (nested
/// tags are counted under their own name), sorted by tag.
pub fn workspace_tags(ws: &Workspace) -> BTreeMap<String, usize> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for path in ws.document_paths() {
        let Some(parsed) = ws.parsed(path) else {
            continue;
        };
        let mut names: Vec<&str> = parsed.tags.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            *counts.entry(name.to_string()).or_default() += 1;
        }
    }
    counts
}

/// The tags to offer where a user is typing a tag at `offset` of `parsed` (`typed`: what
/// follows the `#` so far), each with the number of documents carrying it, sorted; `None`
/// where no tag can be. With something typed, a tag is offered only where the parser
/// reads one (outside code, math, HTML, links and the frontmatter); after a lone `#`,
/// not inside a code, math, HTML or frontmatter block, nor in a link. The tag being typed
/// is not offered for itself: its own use here is not counted.
pub fn suggestions(
    ws: &Workspace,
    parsed: &Parsed,
    offset: usize,
    typed: &str,
) -> Option<Vec<(String, usize)>> {
    let typing = tag_at(parsed, offset);
    let allowed = if typed.is_empty() {
        let in_block = parsed.elements.iter().any(|e| {
            matches!(
                e.kind,
                ElementKind::Code
                    | ElementKind::Math
                    | ElementKind::Html
                    | ElementKind::Frontmatter
            ) && e.range.start < offset
                && offset <= e.range.end
        });
        !in_block && crate::links::navigate::link_at(parsed, offset).is_none()
    } else {
        typing.is_some_and(|t| !t.in_frontmatter)
    };
    if !allowed {
        return None;
    }
    let mut counts = workspace_tags(ws);
    if let Some(tag) = typing
        && parsed.tags.iter().filter(|t| t.name == tag.name).count() == 1
        && let Some(n) = counts.get_mut(&tag.name)
    {
        *n -= 1;
    }
    Some(counts.into_iter().filter(|(_, n)| *n > 0).collect())
}

/// The bytes of a tag's name: after the `#` of an inline tag, the entry itself in the
/// frontmatter; `None` for a frontmatter entry that could not be located in its source.
pub fn name_range(tag: &Tag) -> Option<std::ops::Range<usize>> {
    if !tag.located {
        return None;
    }
    let start = if tag.in_frontmatter {
        tag.range.start
    } else {
        tag.range.start + 1
    };
    Some(start..tag.range.end)
}

/// Renames tag `old` to `new` in every document: `#old` and the nested `#old/x` become
/// `#new` and `#new/x`, in text and in frontmatter `tags`. Renaming onto an existing tag
/// merges the two. Edits are per document, sorted and disjoint, against the current texts.
///
/// `new` may start with `#` (dropped). Errors: `new` is not a tag name
/// ([`crate::parse::is_tag_name`]: a character that is not a tag character, no letter or
/// emoji, or a `/` at either end), or a
/// document lists `old` in a frontmatter form whose entry cannot be located (nothing is
/// renamed then, rather than half of the tag's uses).
pub fn rename_tag(ws: &Workspace, old: &str, new: &str) -> Result<WorkspaceEdits, String> {
    let new = new.strip_prefix('#').unwrap_or(new);
    if !is_tag_name(new) {
        return Err(format!(
            "`{new}` is not a tag name: use letters, digits, emoji, `_`, `-` and `/` (for nesting), with at least one letter or emoji"
        ));
    }
    let mut edits = WorkspaceEdits::new();
    for path in ws.document_paths() {
        let Some(parsed) = ws.parsed(path) else {
            continue;
        };
        for tag in parsed.tags.iter().filter(|t| tag_within(&t.name, old)) {
            let Some(range) = name_range(tag) else {
                return Err(format!(
                    "{path} lists tag `{}` in its frontmatter in a form folio cannot locate; rename it there by hand first",
                    tag.name
                ));
            };
            edits.entry(path.to_string()).or_default().push(TextEdit {
                range: range.start..range.start + old.len(),
                new_text: new.to_string(),
            });
        }
    }
    for list in edits.values_mut() {
        list.sort_by_key(|e| e.range.start);
    }
    Ok(edits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::workspace;

    #[test]
    fn references_cover_inline_frontmatter_and_nested_tags() {
        let ws = workspace(
            "//- /a.md\n---\ntags: [project]\n---\n# A\n\nSee #project/alpha and #projects.\n\
             //- /b.md\n# B #project\n\n`#project` and <b>#project</b>\n\
             //- /c.md\n# C\n\n    #project in indented code\n",
        );
        let found: Vec<(String, String)> = references_to_tag(&ws, "project")
            .into_iter()
            .map(|r| {
                let text = ws.get(&r.path).unwrap().doc.text();
                (r.path, text[r.range].to_string())
            })
            .collect();
        assert_eq!(
            found,
            [
                ("a.md".to_string(), "project".to_string()),
                ("a.md".to_string(), "#project/alpha".to_string()),
                ("b.md".to_string(), "#project".to_string()),
            ]
        );
        assert_eq!(references_to_tag(&ws, "project/alpha").len(), 1);
        assert_eq!(
            workspace_tags(&ws).into_iter().collect::<Vec<_>>(),
            [
                ("project".to_string(), 2),
                ("project/alpha".to_string(), 1),
                ("projects".to_string(), 1)
            ]
        );
        let a = ws.parsed("a.md").unwrap();
        let offset = a.tags[1].range.start + 3;
        assert_eq!(
            tag_at(&a, offset).map(|t| t.name.as_str()),
            Some("project/alpha")
        );
        assert_eq!(tag_at(&a, 0), None);
    }

    #[test]
    fn renaming_a_tag_renames_its_nested_tags_and_frontmatter_entries() {
        let ws = workspace(
            "//- /a.md\n---\ntags: [project, other]\n---\n# A\n\n#project/alpha and #projects.\n\
             //- /b.md\n# B\n\nSee #project.\n",
        );
        let edits = rename_tag(&ws, "project", "#work").unwrap();
        let applied: Vec<(String, String)> = edits
            .iter()
            .map(|(path, list)| {
                let mut text = ws.get(path).unwrap().doc.text();
                for e in list.iter().rev() {
                    text.replace_range(e.range.clone(), &e.new_text);
                }
                (path.clone(), text)
            })
            .collect();
        assert_eq!(
            applied,
            [
                (
                    "a.md".to_string(),
                    "---\ntags: [work, other]\n---\n# A\n\n#work/alpha and #projects.\n"
                        .to_string()
                ),
                ("b.md".to_string(), "# B\n\nSee #work.\n".to_string()),
            ]
        );
        for bad in ["", "#", "a b", "123", "/x", "x/", "a.b"] {
            assert!(rename_tag(&ws, "project", bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            rename_tag(&ws, "project", "x y").unwrap_err(),
            "`x y` is not a tag name: use letters, digits, emoji, `_`, `-` and `/` (for nesting), with at least one letter or emoji"
        );
    }
}
