//! What can be renamed at the cursor ([`renamable_at`]) and the edits of a rename
//! ([`plan_rename`], [`file_moves`]): the feature behind `textDocument/prepareRename`,
//! `textDocument/rename` and `workspace/willRenameFiles`. The edits themselves come from
//! the one link-rewrite engine, [`crate::links::rewrite`] (and [`crate::tags::rename_tag`]).

use std::ops::Range;

use crate::links::navigate::{WorkspaceEdits, definition_at, destination, heading_at, link_at};
use crate::links::rewrite::{
    HeadingRenameError, LinkedFile, fragment_parts, linked_file_at, move_plan, plan_heading_rename,
    reference_label_range, rename_definition, renamed_link_target, unnameable_message,
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
/// the fragment: in a wiki heading path (`[[Setup#Install#Linux]]`), the heading the
/// segment under the cursor names, shown at that segment.
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
    let resolved = dest.range?;
    let text = ws.get(from)?.doc.text();
    let parts = fragment_parts(
        &target,
        &text,
        link.fragment.as_deref()?,
        &fragment,
        &resolved,
        link.kind.is_wiki(),
        ws.config().diagnostics.fragment_case_sensitive,
    );
    let part = parts
        .iter()
        .find(|p| p.range.start <= offset && offset <= p.range.end)
        .or(parts.last())?;
    let range = if parts.len() == 1 {
        fragment
    } else {
        part.range.clone()
    };
    Some(Renamable::Heading {
        path: dest.path,
        index: part.heading,
        range,
        placeholder: target.headings[part.heading].text.clone(),
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
/// Errors, as a sentence for the user: a heading rename whose links no edit can keep
/// ([`plan_heading_rename`]), a name the tag or file rules refuse, a new file name some wiki links
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
            match plan_heading_rename(ws, &path, index, new_name) {
                Ok(edits) => Some(edits),
                Err(HeadingRenameError::Conflict(conflict)) => return Err(conflict),
                Err(HeadingRenameError::InvalidName) => None,
            }
        }
        Renamable::Definition { index, .. } => rename_definition(ws, path, index, new_name)
            .map(|list| WorkspaceEdits::from([(path.to_owned(), list)])),
        Renamable::Tag { name, .. } => Some(rename_tag(ws, &name, new_name)?),
        Renamable::File { file, link } => {
            if names_by_alias(ws, &link, &file) {
                return Err(format!(
                    "`{}` is an alias of `{}` (its frontmatter `aliases`), not its file name: \
                     renaming it here would rename the file. Change the alias in that note's \
                     frontmatter, or rename from a link that names the file",
                    file.written, file.path
                ));
            }
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

/// Whether wiki link `link` names `file` by one of its frontmatter aliases rather than by
/// its file name or path (`[[JD]]` for `people/Jane Doe.md` with `aliases: [JD]`).
fn names_by_alias(ws: &Workspace, link: &Link, file: &LinkedFile) -> bool {
    use crate::path_policy::folded;
    let written = folded(file.written.trim());
    let written = written.strip_suffix(".md").unwrap_or(&written);
    let path = folded(&file.path);
    let by_file = written == folded(&crate::parse::file_title(&file.path))
        || path.strip_suffix(".md").unwrap_or(&path) == written
        || path == written;
    link.kind.is_wiki() && !by_file && ws.is_alias_of(&file.path, &file.written)
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

    /// What a rename `delta` bytes into the first `needle` of document `path` renames.
    fn at_in(ws: &Workspace, path: &str, needle: &str, delta: usize) -> Option<Renamable> {
        let parsed = ws.get(path)?.full_parsed();
        renamable_at(ws, path, &parsed, find(ws, path, needle).start + delta)
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
        // `# Alpha` renamed to "Set Up" moves the later heading's anchor to #set-up-1: the
        // link to it follows.
        let title = at(&ws, "# Alpha", 2).unwrap();
        assert_eq!(
            plan_rename(&ws, "a.md", title, "Set Up"),
            Ok(RenamePlan::Edits(WorkspaceEdits::from([
                (
                    "a.md".to_owned(),
                    vec![edit(find(&ws, "a.md", "Alpha"), "Set Up")]
                ),
                (
                    "b.md".to_owned(),
                    vec![edit(find(&ws, "b.md", "set-up"), "set-up-1")]
                ),
            ])))
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
    fn a_rename_at_an_alias_link_is_refused_and_one_at_the_file_name_moves_the_file() {
        let ws = workspace(
            "//- /people/Jane Doe.md\n---\naliases: [JD]\n---\n# Jane\n//- /index.md\n[[JD]] and [[Jane Doe]]\n",
        );
        let alias = at_in(&ws, "index.md", "[[JD]]", 3).unwrap();
        assert_eq!(alias.placeholder(), "JD");
        assert_eq!(
            plan_rename(&ws, "index.md", alias, "Jay"),
            Err("`JD` is an alias of `people/Jane Doe.md` (its frontmatter `aliases`), not its file name: renaming it here would rename the file. Change the alias in that note's frontmatter, or rename from a link that names the file".to_owned())
        );
        let name = at_in(&ws, "index.md", "[[Jane Doe]]", 3).unwrap();
        let Ok(RenamePlan::File { old, new, .. }) = plan_rename(&ws, "index.md", name, "Jay")
        else {
            panic!("a rename at the file name moves the file");
        };
        assert_eq!(
            (old.as_str(), new.as_str()),
            ("people/Jane Doe.md", "people/Jay.md")
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

    /// The text of document `path` with `edits` applied.
    fn applied(ws: &Workspace, path: &str, edits: &[TextEdit]) -> String {
        let mut text = ws.get(path).unwrap().doc.text();
        for e in edits.iter().rev() {
            text.replace_range(e.range.clone(), &e.new_text);
        }
        text
    }

    /// The texts of every edited document after `plan`.
    fn texts_after(ws: &Workspace, plan: Result<RenamePlan, String>) -> Vec<(String, String)> {
        let Ok(RenamePlan::Edits(edits)) = plan else {
            panic!("not an edit: {plan:?}");
        };
        edits
            .iter()
            .map(|(path, list)| (path.clone(), applied(ws, path, list)))
            .collect()
    }

    const SETUP: &str = "\
//- /Setup.md
# Setup

## Install

### Linux

See [[#Install#Linux]].
//- /notes.md
[[Setup#Install]] [[Setup#Install#Linux]] [[Setup#install]] [a](Setup.md#install) [[Setup#Setup#Install#Linux]] [[Setup#Linux]]
";

    /// What `Install` renamed to `Installation` gives in `SETUP`.
    fn setup_renamed() -> Vec<(String, String)> {
        vec![
            (
                "Setup.md".to_owned(),
                "# Setup\n\n## Installation\n\n### Linux\n\nSee [[#Installation#Linux]].\n"
                    .to_owned(),
            ),
            (
                "notes.md".to_owned(),
                "[[Setup#Installation]] [[Setup#Installation#Linux]] [[Setup#installation]] [a](Setup.md#installation) [[Setup#Setup#Installation#Linux]] [[Setup#Linux]]\n"
                    .to_owned(),
            ),
        ]
    }

    #[test]
    fn a_heading_rename_rewrites_its_segment_of_every_heading_path() {
        let ws = workspace(SETUP);
        let parsed = ws.get("Setup.md").unwrap().full_parsed();
        let offset = find(&ws, "Setup.md", "## Install").start;
        let heading = renamable_at(&ws, "Setup.md", &parsed, offset).unwrap();
        assert_eq!(
            heading,
            Renamable::Heading {
                path: "Setup.md".to_owned(),
                index: 1,
                range: find(&ws, "Setup.md", "Install"),
                placeholder: "Install".to_owned(),
            }
        );
        // Exact edits: the heading, then one segment per link; the slug-style wiki link
        // and the Markdown link get the slug, the others the text.
        let notes = ws.get("notes.md").unwrap().doc.text();
        let at = |needle: &str, skip: usize| {
            let start = notes.find(needle).unwrap() + skip;
            start..start + "Install".len()
        };
        let see = find(&ws, "Setup.md", "[[#Install").start + 3;
        assert_eq!(
            plan_rename(&ws, "Setup.md", heading.clone(), "Installation"),
            Ok(RenamePlan::Edits(WorkspaceEdits::from([
                (
                    "Setup.md".to_owned(),
                    vec![
                        edit(find(&ws, "Setup.md", "Install"), "Installation"),
                        edit(see..see + 7, "Installation"),
                    ]
                ),
                (
                    "notes.md".to_owned(),
                    vec![
                        edit(at("[[Setup#Install]]", 8), "Installation"),
                        edit(at("[[Setup#Install#Linux]]", 8), "Installation"),
                        edit(at("[[Setup#install]]", 8), "installation"),
                        edit(at("(Setup.md#install)", 10), "installation"),
                        edit(at("[[Setup#Setup#Install#", 14), "Installation"),
                    ]
                ),
            ])))
        );
        assert_eq!(
            texts_after(&ws, plan_rename(&ws, "Setup.md", heading, "Installation")),
            setup_renamed()
        );
    }

    #[test]
    fn a_heading_renamed_from_a_link_fragment_or_a_heading_path_segment() {
        let ws = workspace(SETUP);
        let parsed = ws.get("notes.md").unwrap().full_parsed();
        let notes = ws.get("notes.md").unwrap().doc.text();
        // On `Install` of `[[Setup#Install#Linux]]`: the `## Install` heading, shown at
        // that segment (not `Linux`, which the whole path names).
        let segment = notes.find("[[Setup#Install#Linux]]").unwrap() + 8;
        let from_path = renamable_at(&ws, "notes.md", &parsed, segment + 2).unwrap();
        assert_eq!(
            from_path,
            Renamable::Heading {
                path: "Setup.md".to_owned(),
                index: 1,
                range: segment..segment + 7,
                placeholder: "Install".to_owned(),
            }
        );
        assert_eq!(
            texts_after(&ws, plan_rename(&ws, "notes.md", from_path, "Installation")),
            setup_renamed()
        );
        // On `Linux` of the same link: `### Linux`.
        let linux = segment + "Install#".len();
        let last = renamable_at(&ws, "notes.md", &parsed, linux + 1).unwrap();
        assert_eq!(
            last,
            Renamable::Heading {
                path: "Setup.md".to_owned(),
                index: 2,
                range: linux..linux + 5,
                placeholder: "Linux".to_owned(),
            }
        );
        // On the fragment of `[a](Setup.md#install)`: the heading, the whole fragment shown.
        let fragment = notes.find("#install)").unwrap() + 1;
        let from_link = renamable_at(&ws, "notes.md", &parsed, fragment + 3).unwrap();
        assert_eq!(from_link.range(), &(fragment..fragment + 7));
        assert_eq!(
            texts_after(&ws, plan_rename(&ws, "notes.md", from_link, "Installation")),
            setup_renamed()
        );
    }

    const USAGE: &str = "\
//- /tool.md
# Tool

## Usage

[a](#usage) [b](#usage-1) [c](#usage-2)

## Usage

## Usage
//- /other.md
[a](tool.md#usage) [b](tool.md#usage-1) [c](tool.md#usage-2) [[tool#usage-2]] [[tool#Usage]]
";

    /// The exact edits of renaming the first `## Usage` of `USAGE` to `Options`.
    fn usage_renamed(ws: &Workspace) -> RenamePlan {
        let tool = ws.get("tool.md").unwrap().doc.text();
        let other = ws.get("other.md").unwrap().doc.text();
        let in_tool = |needle: &str, skip: usize, len: usize| {
            let start = tool.find(needle).unwrap() + skip;
            start..start + len
        };
        let in_other = |needle: &str, skip: usize, len: usize| {
            let start = other.find(needle).unwrap() + skip;
            start..start + len
        };
        RenamePlan::Edits(WorkspaceEdits::from([
            (
                "tool.md".to_owned(),
                vec![
                    edit(in_tool("## Usage", 3, 5), "Options"),
                    edit(in_tool("(#usage)", 2, 5), "options"),
                    edit(in_tool("(#usage-1)", 2, 7), "usage"),
                    edit(in_tool("(#usage-2)", 2, 7), "usage-1"),
                ],
            ),
            (
                "other.md".to_owned(),
                vec![
                    edit(in_other("#usage)", 1, 5), "options"),
                    edit(in_other("#usage-1)", 1, 7), "usage"),
                    edit(in_other("#usage-2)", 1, 7), "usage-1"),
                    edit(in_other("#usage-2]]", 1, 7), "usage-1"),
                    edit(in_other("#Usage]]", 1, 5), "Options"),
                ],
            ),
        ]))
    }

    #[test]
    fn renaming_one_of_repeated_headings_renumbers_the_links_to_the_others() {
        let ws = workspace(USAGE);
        let parsed = ws.get("tool.md").unwrap().full_parsed();
        let heading = find(&ws, "tool.md", "## Usage").start + 4;
        let from_heading = renamable_at(&ws, "tool.md", &parsed, heading).unwrap();
        assert_eq!(
            plan_rename(&ws, "tool.md", from_heading, "Options"),
            Ok(usage_renamed(&ws))
        );
        let link = find(&ws, "tool.md", "[a](#usage)").start + 6;
        let from_link = renamable_at(&ws, "tool.md", &parsed, link).unwrap();
        assert_eq!(
            from_link,
            Renamable::Heading {
                path: "tool.md".to_owned(),
                index: 1,
                range: link - 1..link + 4,
                placeholder: "Usage".to_owned(),
            }
        );
        assert_eq!(
            plan_rename(&ws, "tool.md", from_link, "Options"),
            Ok(usage_renamed(&ws))
        );
        assert_eq!(
            texts_after(&ws, Ok(usage_renamed(&ws))),
            [
                (
                    "other.md".to_owned(),
                    "[a](tool.md#options) [b](tool.md#usage) [c](tool.md#usage-1) [[tool#usage-1]] [[tool#Options]]\n"
                        .to_owned()
                ),
                (
                    "tool.md".to_owned(),
                    "# Tool\n\n## Options\n\n[a](#options) [b](#usage) [c](#usage-1)\n\n## Usage\n\n## Usage\n"
                        .to_owned()
                ),
            ]
        );
        // The last one renamed: no other anchor moves.
        let last = tool_heading(&ws, 3);
        let Ok(RenamePlan::Edits(edits)) = plan_rename(&ws, "tool.md", last, "Examples") else {
            panic!("refused");
        };
        assert_eq!(
            applied(&ws, "other.md", &edits["other.md"]),
            "[a](tool.md#usage) [b](tool.md#usage-1) [c](tool.md#examples) [[tool#examples]] [[tool#Usage]]\n"
        );
    }

    /// Heading `index` of `tool.md`, as the cursor on its line renames it.
    fn tool_heading(ws: &Workspace, index: usize) -> Renamable {
        let parsed = ws.get("tool.md").unwrap().full_parsed();
        let offset = parsed.headings[index].text_range.start;
        renamable_at(ws, "tool.md", &parsed, offset).unwrap()
    }
}
