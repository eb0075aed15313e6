//! The actions offered over a range of a document ([`actions_at`]): the feature behind
//! `textDocument/codeAction`. For each link diagnostic the range touches: the repair core
//! attaches to it (a link to a file that exists under another letter case or folder), the
//! creation of the file a link names when it is missing, and the change of a broken
//! `#anchor` to the closest heading (Levenshtein similarity, written in the link's anchor
//! style); and, anywhere in a document with headings, inserting or updating its table of
//! contents ([`crate::edit::toc`]).

use std::ops::Range;

use crate::document::TextEdit;
use crate::edit::toc::{TocAction, toc_edit};
use crate::links::navigate::{WorkspaceEdits, closest_heading};
use crate::links::{Diagnostic, DiagnosticCode, Target, diagnostics, join_relative, resolve_link};
use crate::parse::Link;
use crate::workspace::{DocEntry, SiteGenerator, Workspace};

/// Below this similarity no heading is offered as the fix of a broken anchor.
pub const MIN_SIMILARITY: f64 = 0.4;

/// What an action is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionKind {
    /// The repair of one diagnostic.
    QuickFix,
    /// Inserting or updating the document's table of contents (a source action, like
    /// organising imports).
    TableOfContents,
    /// Turning the other notes' unlinked mentions of this note into links (a rewrite).
    LinkMentions,
}

/// What applying an action changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ActionChange {
    /// Text edits per document (KB-relative path), each list sorted and disjoint, against
    /// the current texts (byte ranges).
    Edits(WorkspaceEdits),
    /// Create the empty file at this KB-relative path (never overwriting one that exists).
    CreateFile(String),
    /// Not computed yet ([`ActionOptions::defer`]): [`resolve_link_mentions`] of this
    /// document gives the edits.
    LinkMentionsOf(String),
    /// Create this note with this text (never overwriting a file): a missing note made
    /// from the workspace's template ([`crate::features::notes`]).
    CreateNote(crate::features::notes::NewNote),
}

/// One action offered over a range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Action {
    /// What the action does, for a menu, e.g. ``Change anchor to `#set-up` ``.
    pub title: String,
    /// What it is.
    pub kind: ActionKind,
    /// The diagnostic a quick fix repairs, as [`diagnostics`] reports it; `None` for the
    /// table of contents.
    pub diagnostic: Option<Diagnostic>,
    /// True when this is the one obvious repair, to apply without asking.
    pub preferred: bool,
    /// What applying it changes.
    pub change: ActionChange,
}

/// Which actions the caller can use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ActionOptions {
    /// Offer to create a missing file (the client can create files).
    pub create_files: bool,
    /// Offer to create a missing note (a Markdown file a link names, or a wiki link's
    /// target) from the `[notes].template`, dated this local time: the caller creates
    /// it ([`ActionChange::CreateNote`]). Other missing files stay `create_files`'.
    pub create_notes: Option<chrono::NaiveDateTime>,
    /// Offer the table of contents action.
    pub table_of_contents: bool,
    /// Offer to link the note's unlinked mentions ([`crate::features::mentions`]) when
    /// the range touches its title: its first level-1 heading, else its first byte.
    pub link_mentions: bool,
    /// Leave costly edits to be computed when the action is chosen: linking mentions is
    /// then offered when a quick scan finds a name in another note
    /// ([`crate::features::mentions::may_have_mentions`]), titled without a count, with
    /// [`ActionChange::LinkMentionsOf`].
    pub defer: bool,
}

/// The actions over bytes `range` of document `path`, in this order: for each link
/// diagnostic whose range touches `range` (ends included) and lies in one link, the
/// repair core attached to it, then — for a missing file, with
/// [`ActionOptions::create_files`] — creating it (`.md` added to a name without
/// extension), or — for a missing heading — changing the fragment to the closest heading
/// of the target ([`MIN_SIMILARITY`]): its text in a wiki link, else its anchor (GitHub's
/// slug, or the id the site generator gives it); then, with
/// [`ActionOptions::table_of_contents`], the table of contents edit when the table is
/// missing or out of date; then, with [`ActionOptions::link_mentions`] and `range` on the
/// title, linking the note's unlinked mentions. Empty when `path` is not a document of
/// `ws`.
pub fn actions_at(
    ws: &Workspace,
    path: &str,
    range: Range<usize>,
    options: ActionOptions,
) -> Vec<Action> {
    let Some(entry) = ws.get(path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for d in diagnostics(ws, path) {
        if d.range.end < range.start || d.range.start > range.end {
            continue;
        }
        let Some(link) = entry
            .parsed
            .links
            .iter()
            .find(|l| l.range.start <= d.range.start && d.range.end <= l.range.end)
        else {
            continue;
        };
        if let Some(fix) = &d.fix {
            out.push(Action {
                title: fix.title.clone(),
                kind: ActionKind::QuickFix,
                diagnostic: Some(d.clone()),
                preferred: true,
                change: edit(path, fix.edit.clone()),
            });
        }
        let note = match (d.code, options.create_notes) {
            (DiagnosticCode::MissingFile | DiagnosticCode::MissingWikiTarget, Some(now)) => {
                crate::features::notes::note_for_link(ws, path, link, now)
            }
            _ => None,
        };
        let action = match (d.code, note) {
            (_, Some(note)) => Some(Action {
                title: match &note.problem {
                    None => format!("Create `{}`", note.path),
                    Some(why) => format!("Create `{}` without its template: {why}", note.path),
                },
                kind: ActionKind::QuickFix,
                diagnostic: Some(d.clone()),
                preferred: false,
                change: ActionChange::CreateNote(note),
            }),
            (DiagnosticCode::MissingFile, None) if options.create_files => {
                create_file(path, link, d)
            }
            (DiagnosticCode::MissingHeading, _) => closest_heading_fix(ws, path, link, d),
            _ => None,
        };
        out.extend(action);
    }
    if options.table_of_contents {
        out.extend(table_of_contents(path, entry, ws.generator()));
    }
    if options.link_mentions && touches_title(&entry.parsed, &range) {
        if !options.defer {
            out.extend(link_mentions(ws, path));
        } else if crate::features::mentions::may_have_mentions(ws, path) {
            out.push(Action {
                title: "Link the unlinked mentions of this note".into(),
                kind: ActionKind::LinkMentions,
                diagnostic: None,
                preferred: false,
                change: ActionChange::LinkMentionsOf(path.to_string()),
            });
        }
    }
    out
}

/// True when `range` touches the note's title line: its first level-1 heading, else the
/// start of the document.
fn touches_title(parsed: &crate::parse::Parsed, range: &Range<usize>) -> bool {
    let title = parsed
        .headings
        .iter()
        .find(|h| h.level == 1)
        .map_or(0..0, |h| h.range.clone());
    range.start <= title.end && title.start <= range.end
}

/// The edits of a deferred [`ActionChange::LinkMentionsOf`] document `path`: every
/// unlinked mention of it turned into a link (empty when there is none any more).
pub fn resolve_link_mentions(ws: &Workspace, path: &str) -> WorkspaceEdits {
    use crate::features::mentions;
    mentions::link_mentions(ws, path, &mentions::unlinked_mentions(ws, path))
}

/// Linking every unlinked mention of document `path` in the other notes; `None` when
/// there is none.
fn link_mentions(ws: &Workspace, path: &str) -> Option<Action> {
    use crate::features::mentions;
    let found = mentions::unlinked_mentions(ws, path);
    if found.is_empty() {
        return None;
    }
    let notes = found
        .iter()
        .map(|m| m.path.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let (n, s) = (found.len(), if found.len() == 1 { "" } else { "s" });
    let in_notes = if notes == 1 {
        "1 note".to_string()
    } else {
        format!("{notes} notes")
    };
    Some(Action {
        title: format!("Link {n} unlinked mention{s} of this note (in {in_notes})"),
        kind: ActionKind::LinkMentions,
        diagnostic: None,
        preferred: false,
        change: ActionChange::Edits(mentions::link_mentions(ws, path, &found)),
    })
}

/// The one edit `e` of document `path` as an action's change.
fn edit(path: &str, e: TextEdit) -> ActionChange {
    ActionChange::Edits(WorkspaceEdits::from([(path.to_owned(), vec![e])]))
}

/// Creating the file `link` of document `from` names (its query left out, `.md` added to
/// a name without extension); `None` when the path leaves the root.
fn create_file(from: &str, link: &Link, d: Diagnostic) -> Option<Action> {
    let mut path = join_relative(from, link.dest.split('?').next().unwrap_or(""))?;
    if !path.rsplit('/').next().unwrap_or(&path).contains('.') {
        path.push_str(".md");
    }
    Some(Action {
        title: format!("Create `{path}`"),
        kind: ActionKind::QuickFix,
        diagnostic: Some(d),
        preferred: false,
        change: ActionChange::CreateFile(path),
    })
}

/// Changing the fragment of `link` of document `from` to the closest heading of the
/// document it leads to: the heading's text in a wiki link, else its anchor; `None`
/// without a fragment, a target document or a heading close enough.
fn closest_heading_fix(ws: &Workspace, from: &str, link: &Link, d: Diagnostic) -> Option<Action> {
    let (Some(fragment), Some(fragment_range)) =
        (link.fragment.as_deref(), link.fragment_range.clone())
    else {
        return None;
    };
    let Target::Document { path, .. } = resolve_link(ws, from, link) else {
        return None;
    };
    let target = ws.parsed(&path)?;
    let wiki = link.kind.is_wiki();
    // Wiki links name headings by GitHub's slug or text, never a site's ids.
    let generator = if wiki {
        SiteGenerator::None
    } else {
        ws.generator()
    };
    let (index, anchor) = closest_heading(&target, fragment, MIN_SIMILARITY, generator)?;
    let replacement = if wiki {
        target.headings[index].text.clone()
    } else {
        anchor
    };
    Some(Action {
        title: format!("Change anchor to `#{replacement}`"),
        kind: ActionKind::QuickFix,
        diagnostic: Some(d),
        preferred: true,
        change: edit(
            from,
            TextEdit {
                range: fragment_range,
                new_text: replacement,
            },
        ),
    })
}

/// Inserting or updating the table of contents of document `path` ([`toc_edit`]); `None`
/// when it is up to date or there is nothing to list.
fn table_of_contents(path: &str, entry: &DocEntry, generator: SiteGenerator) -> Option<Action> {
    let toc = toc_edit(&entry.doc.text(), &entry.full_parsed(), generator)?;
    let title = match toc.action {
        TocAction::Insert => "Insert table of contents",
        TocAction::Update => "Update table of contents",
    };
    Some(Action {
        title: title.to_string(),
        kind: ActionKind::TableOfContents,
        diagnostic: None,
        preferred: false,
        change: edit(path, toc.edit),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::workspace;

    const FIXTURE: &str = "\
//- /a.md
# Alpha

## Set Up

Bad [x](missing.md) and [h](b.md#beta-tow) and [[b#Beta Tow]].
New [n](notes/new?draft) and [p](pic.png).
//- /b.md
# Beta

## Beta Two
";

    /// The bytes of the first `needle` in document `path`.
    fn find(ws: &Workspace, path: &str, needle: &str) -> Range<usize> {
        let start = ws.get(path).unwrap().doc.text().find(needle).unwrap();
        start..start + needle.len()
    }

    /// (title, kind, preferred, change) of each action.
    fn summary(actions: &[Action]) -> Vec<(&str, ActionKind, bool, &ActionChange)> {
        actions
            .iter()
            .map(|a| (a.title.as_str(), a.kind, a.preferred, &a.change))
            .collect()
    }

    fn edits(path: &str, range: Range<usize>, new_text: &str) -> ActionChange {
        ActionChange::Edits(WorkspaceEdits::from([(
            path.to_owned(),
            vec![TextEdit {
                range,
                new_text: new_text.to_owned(),
            }],
        )]))
    }

    #[test]
    fn broken_links_get_a_file_to_create_and_the_closest_heading_in_their_anchor_style() {
        let ws = workspace(FIXTURE);
        let line = find(
            &ws,
            "a.md",
            "Bad [x](missing.md) and [h](b.md#beta-tow) and [[b#Beta Tow]].",
        );
        let options = ActionOptions {
            create_files: true,
            ..ActionOptions::default()
        };
        let actions = actions_at(&ws, "a.md", line, options);
        assert_eq!(
            summary(&actions),
            [
                (
                    "Create `missing.md`",
                    ActionKind::QuickFix,
                    false,
                    &ActionChange::CreateFile("missing.md".to_owned())
                ),
                (
                    "Change anchor to `#beta-two`",
                    ActionKind::QuickFix,
                    true,
                    &edits("a.md", find(&ws, "a.md", "beta-tow"), "beta-two")
                ),
                // A wiki link names the heading by its text.
                (
                    "Change anchor to `#Beta Two`",
                    ActionKind::QuickFix,
                    true,
                    &edits("a.md", find(&ws, "a.md", "Beta Tow"), "Beta Two")
                ),
            ]
        );
        // Each fix carries the diagnostic it repairs.
        let codes: Vec<DiagnosticCode> = actions
            .iter()
            .map(|a| a.diagnostic.as_ref().unwrap().code)
            .collect();
        assert_eq!(
            codes,
            [
                DiagnosticCode::MissingFile,
                DiagnosticCode::MissingHeading,
                DiagnosticCode::MissingHeading
            ]
        );
        // A missing heading is reported at the fragment.
        assert_eq!(
            actions[1].diagnostic.as_ref().unwrap().range,
            find(&ws, "a.md", "beta-tow")
        );
    }

    #[test]
    fn files_to_create_drop_the_query_and_get_md_without_extension() {
        let ws = workspace(FIXTURE);
        let line = find(&ws, "a.md", "New [n](notes/new?draft) and [p](pic.png).");
        let create = ActionOptions {
            create_files: true,
            ..ActionOptions::default()
        };
        let titles: Vec<String> = actions_at(&ws, "a.md", line.clone(), create)
            .into_iter()
            .map(|a| a.title)
            .collect();
        assert_eq!(titles, ["Create `notes/new.md`", "Create `pic.png`"]);
        // A client that cannot create files gets none.
        assert_eq!(actions_at(&ws, "a.md", line, ActionOptions::default()), []);
    }

    #[test]
    fn only_diagnostics_the_range_touches_and_the_repair_core_attached() {
        let ws = workspace("//- /a.md\nCafé ☕ [t](Sub/Topic.md)\n//- /sub/topic.md\n# Topic\n");
        // The case mismatch is reported at the destination: a range that ends right
        // before it gets nothing, one that ends where it starts touches it.
        let dest = find(&ws, "a.md", "Sub/Topic.md");
        assert_eq!(
            actions_at(&ws, "a.md", 0..dest.start - 1, ActionOptions::default()),
            []
        );
        let touching = 0..dest.start;
        let actions = actions_at(&ws, "a.md", touching, ActionOptions::default());
        assert_eq!(
            summary(&actions),
            [(
                "Change link to `sub/topic.md`",
                ActionKind::QuickFix,
                true,
                &edits("a.md", dest, "sub/topic.md")
            )]
        );
        assert_eq!(
            actions[0].diagnostic.as_ref().unwrap().code,
            DiagnosticCode::CaseMismatch
        );
    }

    #[test]
    fn the_table_of_contents_is_inserted_after_the_title_then_up_to_date() {
        let toc = ActionOptions {
            table_of_contents: true,
            ..ActionOptions::default()
        };
        let ws = workspace("//- /a.md\n# Alpha\n\n## Set Up\n");
        let actions = actions_at(&ws, "a.md", 0..0, toc);
        assert_eq!(
            summary(&actions),
            [(
                "Insert table of contents",
                ActionKind::TableOfContents,
                false,
                &edits(
                    "a.md",
                    8..8,
                    "\n<!-- toc -->\n- [Set Up](#set-up)\n<!-- tocstop -->\n"
                )
            )]
        );
        assert_eq!(actions[0].diagnostic, None);
        let ws = workspace(
            "//- /a.md\n# Alpha\n\n<!-- toc -->\n- [Set Up](#set-up)\n<!-- tocstop -->\n\n## Set Up\n\n## More\n",
        );
        let actions = actions_at(&ws, "a.md", 0..0, toc);
        assert_eq!(
            summary(&actions),
            [(
                "Update table of contents",
                ActionKind::TableOfContents,
                false,
                &edits(
                    "a.md",
                    find(&ws, "a.md", "- [Set Up](#set-up)\n"),
                    "- [Set Up](#set-up)\n- [More](#more)\n"
                )
            )]
        );
        // Not asked for: not computed.
        assert_eq!(actions_at(&ws, "a.md", 0..0, ActionOptions::default()), []);
    }
}
