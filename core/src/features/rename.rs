//! What can be renamed at the cursor ([`renamable_at`]) and the edits of a rename
//! ([`plan_rename`], [`file_moves`]): the feature behind `textDocument/prepareRename`,
//! `textDocument/rename` and `workspace/willRenameFiles`. The edits themselves come from
//! the one link-rewrite engine, [`crate::links::rewrite`] (and [`crate::tags::rename_tag`]).

use std::ops::Range;

use crate::links::navigate::{WorkspaceEdits, definition_at, destination, heading_at, link_at};
use crate::links::rewrite::{
    LinkedFile, heading_rename_conflict, linked_file_at, move_plan, reference_label_range,
    rename_definition, rename_heading, renamed_link_target, unnameable_message,
};
use crate::parse::{Link, LinkKind, Parsed};
use crate::tags::{name_range, rename_tag, tag_at};
use crate::workspace::Workspace;

/// What a rename at a cursor renames. Ranges are bytes of the cursor's document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Renamable {
    /// Heading `index` of document `path` (the cursor's, or the one a link's fragment
    /// leads to), shown at `range`: the heading's text, or the link's fragment.
    Heading {
        /// KB-relative path of the document holding the heading.
        path: String,
        /// Index of the heading in its document's [`Parsed::headings`].
        index: usize,
        /// Bytes of what the cursor is on: the heading's text or the link's fragment.
        range: Range<usize>,
        /// The heading's text.
        placeholder: String,
    },
    /// Link reference definition `index` of the cursor's document, shown at `range` (the
    /// definition's label, or the label of a reference link that uses it).
    Definition {
        /// Index of the definition in [`Parsed::definitions`].
        index: usize,
        /// Bytes of the label the cursor is on.
        range: Range<usize>,
        /// The definition's label as written.
        placeholder: String,
    },
    /// The file a link of the cursor's document names (the cursor on the link's path).
    File {
        /// The file, and the bytes and text of the link's written target.
        file: LinkedFile,
        /// The link.
        link: Box<Link>,
    },
    /// A tag (with the tags nested in it).
    Tag {
        /// The tag's name without `#`.
        name: String,
        /// Bytes of its name in the cursor's document.
        range: Range<usize>,
    },
}

impl Renamable {
    /// The bytes of the cursor's document that show the name being renamed.
    pub fn range(&self) -> &Range<usize> {
        match self {
            Renamable::Heading { range, .. }
            | Renamable::Definition { range, .. }
            | Renamable::Tag { range, .. } => range,
            Renamable::File { file, .. } => &file.range,
        }
    }

    /// The current name, to edit: the heading's text, the definition's label, the tag's
    /// name or the link's target as written.
    pub fn placeholder(&self) -> &str {
        match self {
            Renamable::Heading { placeholder, .. } | Renamable::Definition { placeholder, .. } => {
                placeholder
            }
            Renamable::Tag { name, .. } => name,
            Renamable::File { file, .. } => &file.written,
        }
    }
}

/// What a rename at byte `offset` of document `path` (parsed with every element and link
/// as `parsed`) renames, the first that applies: the tag there (when its name can be
/// located); the heading whose line it is on; the reference definition whose label it is
/// on; in a reference link, the definition it uses; on a link's written target, the file
/// it names; on a link's fragment, the heading it names. `None` elsewhere.
pub fn renamable_at(
    ws: &Workspace,
    path: &str,
    parsed: &Parsed,
    offset: usize,
) -> Option<Renamable> {
    if let Some(tag) = tag_at(parsed, offset)
        && let Some(range) = name_range(tag)
    {
        return Some(Renamable::Tag {
            name: tag.name.clone(),
            range,
        });
    }
    if let Some(h) = heading_at(parsed, offset) {
        let heading = &parsed.headings[h];
        return Some(Renamable::Heading {
            path: path.to_owned(),
            index: h,
            range: heading.text_range.clone(),
            placeholder: heading.text.clone(),
        });
    }
    if let Some(d) = definition_at(parsed, offset) {
        let def = &parsed.definitions[d];
        return Some(Renamable::Definition {
            index: d,
            range: def.label_range.clone(),
            placeholder: def.label.clone(),
        });
    }
    let link = link_at(parsed, offset)?;
    if matches!(link.kind, LinkKind::Reference | LinkKind::ImageReference) {
        let key = link.label.as_deref()?;
        let index = parsed.definitions.iter().position(|d| d.key == key)?;
        let range = reference_label_range(&ws.get(path)?.doc.text(), &link.range)?;
        return Some(Renamable::Definition {
            index,
            range,
            placeholder: parsed.definitions[index].label.clone(),
        });
    }
    if let Some(file) = linked_file_at(ws, path, link, offset) {
        return Some(Renamable::File {
            file,
            link: Box::new(link.clone()),
        });
    }
    heading_of_fragment(ws, path, link, offset)
}

/// The heading `link` of document `from` names by its fragment, when `offset` lies on
/// the fragment.
fn heading_of_fragment(
    ws: &Workspace,
    from: &str,
    link: &Link,
    offset: usize,
) -> Option<Renamable> {
    let fragment = link
        .fragment_range
        .clone()
        .filter(|f| f.start <= offset && offset <= f.end)?;
    let dest = destination(ws, from, link)?;
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

/// The edits of a rename.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RenamePlan {
    /// Text edits per document (KB-relative path), sorted and disjoint, against the
    /// current texts.
    Edits(WorkspaceEdits),
    /// A file moves from `old` to `new` (KB-relative paths); `edits` update the links to
    /// it, against the texts before the move.
    File {
        /// Where the file is.
        old: String,
        /// Where it goes.
        new: String,
        /// The link edits.
        edits: WorkspaceEdits,
    },
}

/// The edits that rename `renamable` (found in document `path`) to `new_name`: a heading
/// and the links to its anchor, a reference label and its uses, a tag and the tags nested
/// in it, or a file and the links to it (its new path read from `new_name` as the link
/// writes its target, [`renamed_link_target`]).
///
/// Errors, as a sentence for the user: a heading rename that would change another
/// heading's anchor, a name the tag or file rules refuse, a new file name some wiki links
/// could not name, or `` `new_name` is not a valid new name here `` (an empty heading or
/// a label with brackets or a line break).
pub fn plan_rename(
    ws: &Workspace,
    path: &str,
    renamable: Renamable,
    new_name: &str,
) -> Result<RenamePlan, String> {
    let edits = match renamable {
        Renamable::Heading { path, index, .. } => {
            if let Some(conflict) = heading_rename_conflict(ws, &path, index, new_name) {
                return Err(conflict);
            }
            rename_heading(ws, &path, index, new_name)
        }
        Renamable::Definition { index, .. } => rename_definition(ws, path, index, new_name)
            .map(|list| WorkspaceEdits::from([(path.to_owned(), list)])),
        Renamable::Tag { name, .. } => Some(rename_tag(ws, &name, new_name)?),
        Renamable::File { file, link } => {
            let new = renamed_link_target(ws, path, &link, &file.path, new_name)?;
            let plan = move_plan(ws, &[(file.path.clone(), new.clone())]);
            if !plan.unnameable.is_empty() {
                return Err(format!(
                    "{}. Choose a name without these characters",
                    unnameable_message(&plan.unnameable)
                ));
            }
            return Ok(RenamePlan::File {
                old: file.path,
                new,
                edits: plan.edits,
            });
        }
    };
    edits
        .map(RenamePlan::Edits)
        .ok_or_else(|| format!("`{new_name}` is not a valid new name here"))
}

/// The documents that move when `old` moves to `new` (KB-relative paths), as (old, new)
/// pairs for [`move_plan`]: `old` itself when it is a document or not a folder
/// (`folder`: whether `old` is a folder on disk), else every document under it.
pub fn file_moves(ws: &Workspace, old: &str, new: &str, folder: bool) -> Vec<(String, String)> {
    if ws.contains_document(old) || !folder {
        return vec![(old.to_owned(), new.to_owned())];
    }
    let prefix = format!("{old}/");
    ws.document_paths()
        .filter(|p| p.starts_with(&prefix))
        .map(|p| (p.to_string(), format!("{new}/{}", &p[prefix.len()..])))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::TextEdit;
    use crate::fixture::workspace;

    const FIXTURE: &str = "\
//- /a.md
# Alpha

## Set Up

See [b](b.md#beta-two) and [[b]], ref [r][lbl], tag #topic.

[lbl]: b.md
//- /b.md
# Beta

## Beta Two

Back to [a](a.md#set-up).
//- /notes/one.md
//- /notes/deep/two.md
";

    /// The bytes of the first `needle` in document `path`.
    fn find(ws: &Workspace, path: &str, needle: &str) -> Range<usize> {
        let start = ws.get(path).unwrap().doc.text().find(needle).unwrap();
        start..start + needle.len()
    }

    /// What can be renamed in `a.md` at `delta` bytes into the first `needle`.
    fn at(ws: &Workspace, needle: &str, delta: usize) -> Option<Renamable> {
        let parsed = ws.get("a.md").unwrap().full_parsed();
        renamable_at(ws, "a.md", &parsed, find(ws, "a.md", needle).start + delta)
    }

    fn edit(range: Range<usize>, new_text: &str) -> TextEdit {
        TextEdit {
            range,
            new_text: new_text.to_owned(),
        }
    }

    #[test]
    fn what_the_cursor_renames() {
        let ws = workspace(FIXTURE);
        let heading = at(&ws, "## Set Up", 0).unwrap();
        assert_eq!(
            heading,
            Renamable::Heading {
                path: "a.md".to_owned(),
                index: 1,
                range: find(&ws, "a.md", "Set Up"),
                placeholder: "Set Up".to_owned(),
            }
        );
        // On a link's fragment: the heading of the other document, shown at the fragment.
        let fragment = at(&ws, "beta-two", 2).unwrap();
        assert_eq!(
            fragment,
            Renamable::Heading {
                path: "b.md".to_owned(),
                index: 1,
                range: find(&ws, "a.md", "beta-two"),
                placeholder: "Beta Two".to_owned(),
            }
        );
        // On a link's path: the file, as written.
        let file = at(&ws, "b.md#", 1).unwrap();
        assert_eq!(file.range(), &find(&ws, "a.md", "b.md"));
        assert_eq!(file.placeholder(), "b.md");
        assert!(matches!(&file, Renamable::File { file, .. } if file.path == "b.md"));
        // On a reference link's label: its definition.
        let label = at(&ws, "[r][lbl]", 5).unwrap();
        assert_eq!(
            label,
            Renamable::Definition {
                index: 0,
                range: find(&ws, "a.md", "lbl"),
                placeholder: "lbl".to_owned(),
            }
        );
        let tag = at(&ws, "#topic", 3).unwrap();
        assert_eq!(tag.range(), &find(&ws, "a.md", "topic"));
        assert_eq!(tag.placeholder(), "topic");
        // Plain text renames nothing.
        assert_eq!(at(&ws, "See", 1), None);
    }

    #[test]
    fn heading_and_label_renames_and_their_refusals() {
        let ws = workspace(FIXTURE);
        let heading = at(&ws, "## Set Up", 0).unwrap();
        assert_eq!(
            plan_rename(&ws, "a.md", heading.clone(), "Getting Started"),
            Ok(RenamePlan::Edits(WorkspaceEdits::from([
                (
                    "a.md".to_owned(),
                    vec![edit(find(&ws, "a.md", "Set Up"), "Getting Started")]
                ),
                (
                    "b.md".to_owned(),
                    vec![edit(find(&ws, "b.md", "set-up"), "getting-started")]
                ),
            ])))
        );
        // `# Alpha` renamed to "Set Up" would move the later heading's anchor.
        let title = at(&ws, "# Alpha", 2).unwrap();
        assert_eq!(
            plan_rename(&ws, "a.md", title, "Set Up"),
            Err("renaming to `Set Up` would change the anchor of heading `Set Up` from #set-up to #set-up-1; choose a name no other heading has".to_owned())
        );
        let label = at(&ws, "[r][lbl]", 5).unwrap();
        assert_eq!(
            plan_rename(&ws, "a.md", label.clone(), "label"),
            Ok(RenamePlan::Edits(WorkspaceEdits::from([(
                "a.md".to_owned(),
                vec![
                    edit(find(&ws, "a.md", "lbl"), "label"),
                    edit(
                        find(&ws, "a.md", "[lbl]:").start + 1
                            ..find(&ws, "a.md", "[lbl]:").start + 4,
                        "label"
                    ),
                ]
            )])))
        );
        assert_eq!(
            plan_rename(&ws, "a.md", label, "a]b"),
            Err("`a]b` is not a valid new name here".to_owned())
        );
    }

    #[test]
    fn a_file_rename_moves_the_file_and_updates_its_links() {
        let ws = workspace(FIXTURE);
        let file = at(&ws, "b.md#", 1).unwrap();
        let link = find(&ws, "a.md", "b.md");
        let wiki = find(&ws, "a.md", "[[b]]").start + 2;
        let definition = find(&ws, "a.md", "[lbl]: b.md").end - 4;
        let back = find(&ws, "b.md", "a.md");
        assert_eq!(
            plan_rename(&ws, "a.md", file.clone(), "sub/bee.md"),
            Ok(RenamePlan::File {
                old: "b.md".to_owned(),
                new: "sub/bee.md".to_owned(),
                edits: WorkspaceEdits::from([
                    (
                        "a.md".to_owned(),
                        vec![
                            edit(link, "sub/bee.md"),
                            edit(wiki..wiki + 1, "bee"),
                            edit(definition..definition + 4, "sub/bee.md"),
                        ]
                    ),
                    ("b.md".to_owned(), vec![edit(back, "../a.md")]),
                ]),
            })
        );
        assert_eq!(
            plan_rename(&ws, "a.md", file, "a.md"),
            Err("`a.md` already exists".to_owned())
        );
    }

    #[test]
    fn a_folder_moves_every_document_under_it() {
        let ws = workspace(FIXTURE);
        assert_eq!(
            file_moves(&ws, "notes", "archive", true),
            [
                (
                    "notes/deep/two.md".to_owned(),
                    "archive/deep/two.md".to_owned()
                ),
                ("notes/one.md".to_owned(), "archive/one.md".to_owned()),
            ]
        );
        // A document, or a path that is no folder on disk, moves alone.
        assert_eq!(
            file_moves(&ws, "b.md", "c.md", true),
            [("b.md".to_owned(), "c.md".to_owned())]
        );
        assert_eq!(
            file_moves(&ws, "notes", "archive", false),
            [("notes".to_owned(), "archive".to_owned())]
        );
    }
}
