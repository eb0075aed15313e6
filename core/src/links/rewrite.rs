//! The one link-rewrite engine: the edits that keep links working when files move
//! (`kb_move`, `kb_move_image`, LSP `workspace/willRenameFiles`) and when a heading or a
//! link reference label is renamed (LSP rename). Every front end turns these edits into
//! its own wire format.
//!
//! For a moved file, every link that resolves to it is rewritten, and the moved file's own
//! relative links are rewritten so they still reach their targets from its new folder:
//! - Markdown links and images (inline, and link reference definitions; reference usages
//!   follow their definition): only the path part of the destination changes; the
//!   fragment, query and title stay. The style of the path is kept: root-relative `/…`
//!   stays root-relative, a `./` prefix stays, a link without an extension stays without,
//!   a `.html` site link (mdBook renders `x.md` to `x.html`) stays `.html`; a destination
//!   in `<angle brackets>` keeps its spaces, any other is percent-encoded where CommonMark
//!   needs it.
//! - Wiki links and embeds (`[[path]]`, `[[name]]`, `#heading`, `|alias`, `![[…]]`):
//!   the target part changes; one written as a path becomes the new KB-relative path, one
//!   written as a name becomes the new name when the name changed. The extension is kept
//!   if it was written.
//!
//! Edits are keyed by each document's path before the move, sorted and disjoint, against
//! the unchanged text.

use std::ops::Range;

use crate::document::TextEdit;
use crate::links::navigate::{fragment_range, heading_matches, heading_path_chain};
use crate::links::{Target, join_relative, resolve_link};
use crate::parse::{Heading, Link, LinkKind, heading_anchors, parse, percent_decode, slug};
use crate::path_policy::check_syntax;
use crate::workspace::{Workspace, is_markdown};

pub use crate::links::navigate::WorkspaceEdits;

/// The path from document `from`'s folder to `to` (both KB-relative), with `..` as needed.
pub fn relative_path(from: &str, to: &str) -> String {
    let from_dir: Vec<&str> = from
        .split('/')
        .collect::<Vec<_>>()
        .split_last()
        .map_or(Vec::new(), |(_, d)| d.to_vec());
    let to_parts: Vec<&str> = to.split('/').collect();
    let common = from_dir
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut parts: Vec<&str> = vec![".."; from_dir.len() - common];
    parts.extend(&to_parts[common..]);
    parts.join("/")
}

/// Percent-encodes the characters a Markdown link destination cannot hold bare
/// (CommonMark 6.3): spaces, parentheses, angle brackets, and `#` and `?` inside a path.
pub(crate) fn encode_dest(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            ' ' => out.push_str("%20"),
            '(' => out.push_str("%28"),
            ')' => out.push_str("%29"),
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            '#' => out.push_str("%23"),
            '?' => out.push_str("%3F"),
            c => out.push(c),
        }
    }
    out
}

fn strip_markdown_ext(path: &str) -> &str {
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".markdown") {
        &path[..path.len() - ".markdown".len()]
    } else if lower.ends_with(".md") {
        &path[..path.len() - ".md".len()]
    } else {
        path
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The new path part of the Markdown or HTML `link` at `range` of `text` (the target as
/// written), from `linking_doc` (where it is after the move) to `target`: in `<angle
/// brackets>` spaces stay, and in an HTML attribute value `'`, `"` and `&` are
/// percent-encoded too, so the value stays one value whatever its quotes and is never
/// read as a character reference.
fn destination(
    text: &str,
    link: &Link,
    range: &Range<usize>,
    linking_doc: &str,
    target: &str,
) -> String {
    let written = &text[range.clone()];
    // A shortcode's quoted path is read as written: no percent-encoding.
    let angle = (range.start > 0 && text.as_bytes()[range.start - 1] == b'<')
        || link.kind == LinkKind::Shortcode;
    let path = markdown_path(written, linking_doc, target, angle);
    if link.kind == LinkKind::Html {
        path.replace('&', "%26")
            .replace('\'', "%27")
            .replace('"', "%22")
    } else {
        path
    }
}

/// True when a Markdown or HTML destination names the same path as written, only
/// encoded otherwise (`/my pic.png` and `/my%20pic.png`): a move leaves it as written.
fn same_path(new: &str, written: &str, wiki: bool) -> bool {
    !wiki && percent_decode(new) == percent_decode(written)
}

/// The new path part of a Markdown link from `linking_doc` (where it is after the move)
/// to `target` (likewise), in the style of `written`.
fn markdown_path(
    written: &str,
    linking_doc: &str,
    target: &str,
    in_angle_brackets: bool,
) -> String {
    let mut new = if written.starts_with('/') {
        format!("/{target}")
    } else {
        relative_path(linking_doc, target)
    };
    if written.starts_with("./") && !new.starts_with("../") {
        new = format!("./{new}");
    }
    // Read as the resolver reads it: `target%2Emd` names `target.md`.
    let old_name = percent_decode(file_name(written)).to_ascii_lowercase();
    if is_markdown(target) {
        if old_name.ends_with(".html") || old_name.ends_with(".htm") {
            new = format!("{}.html", strip_markdown_ext(&new));
        } else if !old_name.contains('.') {
            new = strip_markdown_ext(&new).to_string();
        }
    }
    if in_angle_brackets {
        new
    } else {
        encode_dest(&new)
    }
}

/// The new target part of a wiki link to `target` (where it is after the move), in the
/// style of `written`; `None` when `written` still names it.
fn wiki_target(written: &str, target: &str) -> Option<String> {
    let with_ext = is_markdown(written);
    let shown = |path: &str| {
        if with_ext {
            path.to_string()
        } else {
            strip_markdown_ext(path).to_string()
        }
    };
    if written.contains('/') {
        return Some(shown(target));
    }
    let old_name = strip_markdown_ext(written).to_lowercase();
    let new_name = strip_markdown_ext(file_name(target));
    (old_name != new_name.to_lowercase()).then(|| shown(file_name(target)))
}

/// `edit` of the wiki `link` of `text`, kept valid YAML when the link is a frontmatter
/// property's quoted value ([`crate::parse::frontmatter::property_link_quote`]): a new
/// text holding that quote (or, in double quotes, a backslash) rewrites the whole value in
/// the other quote instead (`'[[Task]]'` → `"[[Bob's Task]]"`); `None` (the link is left
/// as it is) when the new text holds both quotes. Any other edit is returned as it is.
fn yaml_safe(text: &str, link: &Link, edit: TextEdit) -> Option<TextEdit> {
    let Some(quote) = crate::parse::frontmatter::yaml_range(text)
        .and_then(|fm| crate::parse::frontmatter::property_link_quote(text, &fm, &link.range))
    else {
        return Some(edit);
    };
    let breaks = |q: char| edit.new_text.contains(q) || (q == '"' && edit.new_text.contains('\\'));
    if !breaks(quote) {
        return Some(edit);
    }
    let other = if quote == '"' { '\'' } else { '"' };
    if breaks(other) {
        return None;
    }
    let value = format!(
        "{other}{}{}{}{other}",
        &text[link.range.start..edit.range.start],
        edit.new_text,
        &text[edit.range.end..link.range.end]
    );
    Some(TextEdit {
        range: link.range.start - 1..link.range.end + 1,
        new_text: value,
    })
}

/// The bytes of a link's target as written, without the fragment, query (Markdown) or
/// alias (wiki).
pub fn written_target(text: &str, link: &Link, wiki: bool) -> Option<Range<usize>> {
    let dest = link.dest_range.clone()?;
    let written = text.get(dest.clone())?;
    let stops: &[char] = if wiki { &['#', '|'] } else { &['#', '?'] };
    let end = written.find(stops).unwrap_or(written.len());
    (end > 0).then_some(dest.start..dest.start + end)
}

/// The edit that makes `link` of document `from` lead to `target` (a KB-relative path),
/// in the link's own style (see the module documentation): the quick fix of a link whose
/// file exists under another spelling or in another folder. `None` when the link has no
/// written target or already reads that way.
pub fn retarget(ws: &Workspace, from: &str, link: &Link, target: &str) -> Option<TextEdit> {
    let text = ws.get(from)?.doc.text();
    let wiki = link.kind.is_wiki();
    let range = written_target(&text, link, wiki)?;
    let written = &text[range.clone()];
    let replacement = if wiki {
        wiki_target(written, target).filter(|r| !r.contains(WIKI_TARGET_BREAKERS))?
    } else {
        destination(&text, link, &range, from, target)
    };
    if replacement == written || same_path(&replacement, written, wiki) {
        return None;
    }
    yaml_safe(
        &text,
        link,
        TextEdit {
            range,
            new_text: replacement,
        },
    )
}

/// The characters a wiki link's target cannot hold: `#` starts a heading, `|` an alias,
/// `[` and `]` end the link (Obsidian refuses them in the names of notes it links to).
pub const WIKI_TARGET_BREAKERS: [char; 4] = ['#', '|', '[', ']'];

/// A wiki link a move cannot keep: the moved file's new name holds one of
/// [`WIKI_TARGET_BREAKERS`], so no `[[…]]` names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnnameableWikiLink {
    /// KB-relative path (before the move) of the document holding the link.
    pub document: String,
    /// Bytes of the whole link in that document.
    pub range: Range<usize>,
    /// KB-relative path the link's target moves to.
    pub target: String,
}

/// The edits that keep links working when files move, and the wiki links they cannot keep.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MovePlan {
    /// What [`move_edits`] returns.
    pub edits: WorkspaceEdits,
    /// Wiki links to a moved file whose new name no wiki link can hold; [`move_edits`]
    /// leaves them as written. A move that must keep every link refuses when any exist
    /// ([`unnameable_message`]).
    pub unnameable: Vec<UnnameableWikiLink>,
}

/// Why a move is refused over `unnameable` (not empty): the name, the characters, how many
/// links in how many documents. Each front end adds what to do instead.
pub fn unnameable_message(unnameable: &[UnnameableWikiLink]) -> String {
    let first = &unnameable[0];
    let docs: std::collections::BTreeSet<&str> =
        unnameable.iter().map(|u| u.document.as_str()).collect();
    format!(
        "no wiki link can name `{}`: `#` starts a heading, `|` an alias, and `[` or `]` end the link; {} wiki link{} in {} document{} (first in `{}`) would break",
        first.target,
        unnameable.len(),
        if unnameable.len() == 1 { "" } else { "s" },
        docs.len(),
        if docs.len() == 1 { "" } else { "s" },
        first.document
    )
}

/// The edits that keep links working when files move: `moves` pairs each old
/// KB-relative path with its new one (several for a folder move, where a link between
/// two moved files is computed from both new places). See the module documentation for
/// the rules. A wiki link whose target's new name holds one of [`WIKI_TARGET_BREAKERS`]
/// is left as written; [`move_plan`] lists those.
pub fn move_edits(ws: &Workspace, moves: &[(String, String)]) -> WorkspaceEdits {
    move_plan(ws, moves).edits
}

/// [`move_edits`] and the wiki links it cannot keep.
pub fn move_plan(ws: &Workspace, moves: &[(String, String)]) -> MovePlan {
    let moved = |p: &str| moves.iter().find(|(o, _)| o == p).map(|(_, n)| n.as_str());
    let mut edits = WorkspaceEdits::new();
    let mut unnameable = Vec::new();
    for from in ws.document_paths() {
        let Some(entry) = ws.get(from) else { continue };
        let text = entry.doc.text();
        let new_from = moved(from);
        for link in &entry.parsed.links {
            if link.external || link.dest.is_empty() {
                continue;
            }
            let wiki = link.kind.is_wiki();
            let markdown = matches!(
                link.kind,
                LinkKind::Inline
                    | LinkKind::Image
                    | LinkKind::Html
                    | LinkKind::Shortcode
                    | LinkKind::Definition
            );
            if !wiki && !markdown {
                continue;
            }
            let target = match resolve_link(ws, from, link) {
                Target::Document { path, .. } | Target::File(path) => path,
                _ => continue,
            };
            let new_target = moved(&target);
            if new_target.is_none() && (new_from.is_none() || wiki) {
                continue;
            }
            let Some(range) = written_target(&text, link, wiki) else {
                continue;
            };
            let written = &text[range.clone()];
            if wiki && ws.is_alias_of(&target, written) {
                // `[[alias]]` names the note by its frontmatter, which moves with it.
                continue;
            }
            let target_after = new_target.unwrap_or(&target);
            let replacement = if wiki {
                match wiki_target(written, target_after) {
                    Some(r) if r.contains(WIKI_TARGET_BREAKERS) => {
                        unnameable.push(UnnameableWikiLink {
                            document: from.to_string(),
                            range: link.range.clone(),
                            target: target_after.to_string(),
                        });
                        continue;
                    }
                    Some(r) => r,
                    None => continue,
                }
            } else if let Some(site_form) =
                crate::links::site_moved_destination(ws, from, link, written, &target, target_after)
            {
                site_form
            } else {
                destination(&text, link, &range, new_from.unwrap_or(from), target_after)
            };
            if replacement != written
                && !same_path(&replacement, written, wiki)
                && let Some(edit) = yaml_safe(
                    &text,
                    link,
                    TextEdit {
                        range,
                        new_text: replacement,
                    },
                )
            {
                edits.entry(from.to_string()).or_default().push(edit);
            }
        }
    }
    for list in edits.values_mut() {
        list.sort_by_key(|e| e.range.start);
        list.dedup_by(|a, b| a.range == b.range);
    }
    MovePlan { edits, unnameable }
}

/// The file a link names, seen from the link: what renaming at the link's target renames.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkedFile {
    /// KB-relative path of the document or file the link resolves to.
    pub path: String,
    /// Bytes of the target as written in the linking document (no fragment, query or alias).
    pub range: Range<usize>,
    /// The target as written.
    pub written: String,
}

/// The file that `link` of document `from` resolves to, when `offset` lies on the link's
/// written target (the path of `[x](b.md#h)`, the name of `[[b#h]]`); `None` elsewhere,
/// for external links and for links that resolve to no single file.
pub fn linked_file_at(
    ws: &Workspace,
    from: &str,
    link: &Link,
    offset: usize,
) -> Option<LinkedFile> {
    if link.external || link.dest.is_empty() {
        return None;
    }
    let wiki = link.kind.is_wiki();
    let markdown = matches!(
        link.kind,
        LinkKind::Inline
            | LinkKind::Image
            | LinkKind::Html
            | LinkKind::Shortcode
            | LinkKind::Definition
    );
    if !wiki && !markdown {
        return None;
    }
    let text = ws.get(from)?.doc.text();
    let range = written_target(&text, link, wiki)?;
    if !(range.start <= offset && offset <= range.end) {
        return None;
    }
    let path = match resolve_link(ws, from, link) {
        Target::Document { path, .. } | Target::File(path) => path,
        _ => return None,
    };
    Some(LinkedFile {
        path,
        written: text[range.clone()].to_string(),
        range,
    })
}

/// The extension of a path's file name with its dot (`.md`), or "" when it has none.
fn extension(path: &str) -> &str {
    let name = file_name(path);
    name.rfind('.')
        .filter(|i| *i > 0)
        .map_or("", |i| &name[i..])
}

/// The KB-relative path file `old` (which `link` of document `from` names) moves to when
/// the link's written target is renamed to `new_written`, read as the link reads its
/// target: a Markdown destination relative to the linking document (`/…` from the root,
/// percent-decoded), a wiki target as a KB-relative path when it holds a `/`, else as a
/// new name in the file's own folder. A name without an extension keeps the file's
/// (`c` renames `b.md` to `c.md`), as does a `.html` site link to a Markdown file.
///
/// Errors, as a sentence for the user: an empty name, a path that leaves the root or
/// that the path policy refuses, the same path, or a path that already exists.
pub fn renamed_link_target(
    ws: &Workspace,
    from: &str,
    link: &Link,
    old: &str,
    new_written: &str,
) -> Result<String, String> {
    let new_written = new_written.trim();
    if new_written.is_empty() {
        return Err("the new name is empty".to_string());
    }
    let wiki = link.kind.is_wiki();
    let mut new = if wiki {
        if let Some(path) = new_written
            .strip_prefix('/')
            .or(new_written.contains('/').then_some(new_written))
        {
            join_relative("", path)
        } else {
            let folder = old.rsplit_once('/').map_or("", |(f, _)| f);
            Some(if folder.is_empty() {
                new_written.to_string()
            } else {
                format!("{folder}/{new_written}")
            })
        }
    } else {
        join_relative(from, &percent_decode(new_written))
    }
    .filter(|p| !p.is_empty())
    .ok_or_else(|| format!("`{new_written}` leaves the workspace root"))?;
    let old_ext = extension(old);
    let new_lower = new.to_ascii_lowercase();
    if is_markdown(old) && (new_lower.ends_with(".html") || new_lower.ends_with(".htm")) {
        new.truncate(new.len() - extension(&new).len());
        new.push_str(old_ext);
    } else if extension(&new).is_empty() {
        new.push_str(old_ext);
    }
    check_syntax(&new).map_err(|e| format!("`{new}` is not a valid path: {e}"))?;
    if new == old {
        return Err(format!("`{old}` already has that name"));
    }
    if ws.contains_document(&new) || ws.contains_other_path(&new) {
        return Err(format!("`{new}` already exists"));
    }
    Ok(new)
}

/// The parse of `text` with `heading`'s text replaced by `new_text`: the anchors every
/// heading gets then (duplicates in the document included).
fn parse_after_rename(text: &str, heading: &Heading, new_text: &str) -> crate::parse::Parsed {
    let mut edited = String::with_capacity(text.len() + new_text.len());
    edited.push_str(&text[..heading.text_range.start]);
    edited.push_str(new_text);
    edited.push_str(&text[heading.text_range.end..]);
    parse(&edited)
}

/// The id an attribute list without one gives heading `h` of `parsed` (the slug of the
/// text before the list: `## Appendix {.unnumbered}` → `appendix`), if it has such a list.
fn list_id(parsed: &crate::parse::Parsed, h: &Heading) -> Option<String> {
    if h.custom_id.is_some() {
        return None;
    }
    let id = slug::slug(&h.text);
    parsed
        .anchors
        .iter()
        .any(|a| a.range == h.range && a.id == id)
        .then_some(id)
}

/// Why [`plan_heading_rename`] plans no edits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeadingRenameError {
    /// No such heading, or the new text is empty, holds a line break, or would not be one
    /// heading's text.
    InvalidName,
    /// Some link could not be kept on what it names: the reason, as a sentence for the
    /// user that ends with what to do instead.
    Conflict(String),
}

/// Why renaming heading `heading_idx` of `path` to `new_text` would break links that
/// no edit can keep ([`plan_heading_rename`]'s [`HeadingRenameError::Conflict`]), as a
/// sentence for the user. `None` when the rename can be planned, or when the new text is
/// no valid heading text.
pub fn heading_rename_conflict(
    ws: &Workspace,
    path: &str,
    heading_idx: usize,
    new_text: &str,
) -> Option<String> {
    match plan_heading_rename(ws, path, heading_idx, new_text) {
        Err(HeadingRenameError::Conflict(message)) => Some(message),
        _ => None,
    }
}

/// [`plan_heading_rename`]'s edits, `None` when it plans none.
pub fn rename_heading(
    ws: &Workspace,
    path: &str,
    heading_idx: usize,
    new_text: &str,
) -> Option<WorkspaceEdits> {
    plan_heading_rename(ws, path, heading_idx, new_text).ok()
}

/// One name in a link's fragment that names a heading: the whole fragment, or one
/// segment of a wiki link's heading path (`[[guide#Setup#On Linux]]`).
pub(crate) struct FragmentPart {
    /// Bytes of the name in the linking document.
    pub(crate) range: Range<usize>,
    /// The name (percent-decoded in a Markdown link).
    pub(crate) written: String,
    /// The heading it names: an index into the target's headings.
    pub(crate) heading: usize,
}

/// The names in `link`'s fragment (`fragment`, the resolver's, at bytes `fragment_range`
/// of `text`) that name headings of `target`, where the whole fragment resolves to bytes
/// `resolved`: one part for a fragment naming a heading, one per segment of a wiki heading
/// path; none when it names no heading (an HTML anchor, a block id, a footnote).
pub(crate) fn fragment_parts(
    target: &crate::parse::Parsed,
    text: &str,
    fragment: &str,
    fragment_range: &Range<usize>,
    resolved: &Range<usize>,
    wiki: bool,
    case_sensitive: bool,
) -> Vec<FragmentPart> {
    let Some(heading) = target.headings.iter().position(|h| h.range == *resolved) else {
        return Vec::new();
    };
    let whole = || {
        vec![FragmentPart {
            range: fragment_range.clone(),
            written: fragment.to_string(),
            heading,
        }]
    };
    let first_match = target
        .headings
        .iter()
        .position(|h| heading_matches(h, fragment, wiki, case_sensitive));
    let Some(source) = text.get(fragment_range.clone()) else {
        return whole();
    };
    if !wiki || first_match == Some(heading) {
        return whole();
    }
    let Some(chain) = heading_path_chain(target, source, case_sensitive)
        .filter(|chain| chain.last() == Some(&heading))
    else {
        return whole();
    };
    let mut parts = Vec::with_capacity(chain.len());
    let mut offset = fragment_range.start;
    for (segment, heading) in source.split('#').zip(chain) {
        let lead = segment.len() - segment.trim_start().len();
        let name = segment.trim();
        let start = offset + lead;
        parts.push(FragmentPart {
            range: start..start + name.len(),
            written: name.to_string(),
            heading,
        });
        offset += segment.len() + 1;
    }
    parts
}

/// The edits that rename heading `heading_idx` of document `path` to `new_text` (trimmed)
/// and keep every link into the document on what it names, across the workspace: edits
/// keyed by KB-relative path, each list sorted and disjoint, against the current texts.
///
/// - A link to the renamed heading gets its new name in the link's style: a Markdown
///   link's fragment becomes the new slug (or, written with the site generator's id or
///   with an attribute list's id, the new one of those); a wiki link's becomes the new
///   heading text when it was written as the heading text (or as anything but the slug),
///   and the new slug when it was written as the slug or the new text holds one of
///   [`WIKI_TARGET_BREAKERS`]. An id written in the heading's attribute list stays, and so
///   do links written with it.
/// - In a wiki heading path (`[[Setup#Install#Linux]]`) each segment that names the
///   renamed heading changes, and only that segment.
/// - GitHub numbers repeated slugs in document order (`#usage`, `#usage-1`, `#usage-2`):
///   when the rename adds or removes a duplicate, the other headings' anchors shift, and
///   links written with an anchor that shifts get the new one (likewise the site
///   generator's ids).
/// - Every link into the document is then resolved against the renamed text; one that
///   would no longer reach what it reaches now gets, as its whole fragment, the new
///   anchor of its heading (a wiki link written as text whose text now names an earlier
///   heading: `[[a#Set Up]]` → `[[a#set-up-1]]`).
///
/// Errors: [`HeadingRenameError::InvalidName`] (no such heading, an empty new text, a
/// line break, or a text that is no longer one heading); [`HeadingRenameError::Conflict`]
/// when the heading's attribute list would give it an id another heading has, or when a
/// link could not be kept on its target by any fragment (it names an HTML anchor, block
/// or footnote the new name takes over).
pub fn plan_heading_rename(
    ws: &Workspace,
    path: &str,
    heading_idx: usize,
    new_text: &str,
) -> Result<WorkspaceEdits, HeadingRenameError> {
    let rename = HeadingRename::new(ws, path, heading_idx, new_text)?;
    let mut edits = WorkspaceEdits::new();
    edits.entry(path.to_string()).or_default().push(TextEdit {
        range: rename.heading.text_range.clone(),
        new_text: rename.new_text.to_string(),
    });
    for from in ws.document_paths() {
        let Some(from_entry) = ws.get(from) else {
            continue;
        };
        let from_text = from_entry.doc.text();
        for link in &from_entry.parsed.links {
            if let Some(edit) = rename.link_edit(ws, from, &from_text, link)? {
                edits.entry(from.to_string()).or_default().push(edit);
            }
        }
    }
    for list in edits.values_mut() {
        list.sort_by_key(|e| e.range.start);
        list.dedup_by(|a, b| a.range == b.range);
    }
    Ok(edits)
}

/// One heading rename, planned: the document's parse before and after it, and the ids
/// each heading had and will have ([`plan_heading_rename`]).
struct HeadingRename<'a> {
    path: &'a str,
    heading_idx: usize,
    heading: Heading,
    new_text: &'a str,
    before: std::sync::Arc<crate::parse::Parsed>,
    after: crate::parse::Parsed,
    generator: crate::config::SiteGenerator,
    case_sensitive: bool,
    /// A published site's ids before and after ([`heading_anchors`]), when its
    /// generator's ids are not GitHub's slugs.
    old_site: Option<Vec<String>>,
    new_site: Option<Vec<String>>,
    /// The id an attribute list without one gives the heading, before and after.
    old_list_id: Option<String>,
    new_list_id: String,
}

/// Letter case aside, `a` equals `b`.
fn same(a: &str, b: &str) -> bool {
    a.to_lowercase() == b.to_lowercase()
}

/// Heading `h`'s id in `ids` (a site generator's), when there are any.
fn site_id(ids: &Option<Vec<String>>, h: usize) -> Option<&str> {
    ids.as_ref().and_then(|ids| ids.get(h)).map(String::as_str)
}

impl<'a> HeadingRename<'a> {
    /// Checks the rename and parses the document as it will be (see
    /// [`plan_heading_rename`] for the errors).
    fn new(
        ws: &'a Workspace,
        path: &'a str,
        heading_idx: usize,
        new_text: &'a str,
    ) -> Result<HeadingRename<'a>, HeadingRenameError> {
        use HeadingRenameError::{Conflict, InvalidName};
        let new_text = new_text.trim();
        if new_text.is_empty() || new_text.contains(['\n', '\r']) {
            return Err(InvalidName);
        }
        let entry = ws.get(path).ok_or(InvalidName)?;
        let before = entry.full_parsed();
        let text = entry.doc.text();
        let heading = before.headings.get(heading_idx).ok_or(InvalidName)?.clone();
        let after = parse_after_rename(&text, &heading, new_text);
        if after.headings.len() != before.headings.len() {
            return Err(InvalidName);
        }
        // The id an attribute list gives it must not be another heading's anchor.
        if let Some(id) = list_id(&after, &after.headings[heading_idx])
            && let Some(other) = after.headings.iter().enumerate().find_map(|(i, h)| {
                let taken = h.slug.eq_ignore_ascii_case(&id)
                    || list_id(&after, h).is_some_and(|other| other.eq_ignore_ascii_case(&id));
                (i != heading_idx && taken).then_some(h)
            })
        {
            return Err(Conflict(format!(
                "renaming to `{new_text}` would give this heading the id #{id} of its attribute list, which names heading `{}` already; choose a name no other heading has",
                other.text
            )));
        }
        let generator = ws.generator();
        let (old_site, new_site) = if generator.uses_github_slugs() {
            (None, None)
        } else {
            (
                Some(heading_anchors(&before.headings, generator)),
                Some(heading_anchors(&after.headings, generator)),
            )
        };
        Ok(HeadingRename {
            path,
            heading_idx,
            old_list_id: list_id(&before, &heading),
            new_list_id: slug::slug(&after.headings[heading_idx].text),
            heading,
            new_text,
            before,
            after,
            generator,
            case_sensitive: ws.config().diagnostics.fragment_case_sensitive,
            old_site,
            new_site,
        })
    }

    /// Bytes `r` of the document before the rename, in the renamed text.
    fn shift(&self, r: &Range<usize>) -> Range<usize> {
        let end = self.heading.text_range.end;
        let at = |x: usize| {
            if x >= end {
                x - end + self.heading.text_range.start + self.new_text.len()
            } else {
                x
            }
        };
        at(r.start)..at(r.end)
    }

    /// The new name of one part of a fragment, `None` when it stays.
    fn renamed(&self, part: &FragmentPart, wiki: bool) -> Option<String> {
        let old = &self.before.headings[part.heading];
        let new_slug = &self.after.headings[part.heading].slug;
        let w = part.written.as_str();
        if old.custom_id.as_deref().is_some_and(|id| same(id, w)) {
            // The attribute list's id stays as written, and so do links to it.
            return None;
        }
        if part.heading == self.heading_idx {
            let lowered: Option<String>;
            let name = if wiki {
                // Written as the heading's text, or as its text in lower case (one word:
                // `#install` for `## Install`), the link gets the new text the same way, which
                // every wiki-link tool resolves (Obsidian has no slugs); written as a slug
                // the text is not (`#getting-started`), the new slug.
                let old_text = old.text.trim();
                let lower = w != old_text && w == old_text.to_lowercase();
                let as_text = w == old_text || lower || !same(w, &old.slug);
                if as_text && !self.new_text.contains(WIKI_TARGET_BREAKERS) {
                    lowered = lower.then(|| self.new_text.to_lowercase());
                    lowered.as_deref().unwrap_or(self.new_text)
                } else {
                    new_slug
                }
            } else if same(w, &old.slug) {
                new_slug
            } else if site_id(&self.old_site, part.heading).is_some_and(|id| same(w, id)) {
                site_id(&self.new_site, part.heading).unwrap_or(new_slug)
            } else if self.old_list_id.as_deref().is_some_and(|id| same(w, id)) {
                // Written with the id an attribute list without one gives (`## A {.x}` → `#a`).
                &self.new_list_id
            } else {
                new_slug
            };
            return Some(name.to_string());
        }
        if same(w, &old.slug) && old.slug != *new_slug {
            return Some(new_slug.clone());
        }
        match (
            site_id(&self.old_site, part.heading),
            site_id(&self.new_site, part.heading),
        ) {
            (Some(old_id), Some(new_id)) if !wiki && same(w, old_id) && old_id != new_id => {
                Some(new_id.to_string())
            }
            _ => None,
        }
    }

    /// The edit of `link` (in document `from`, whose text is `from_text`) that keeps it on
    /// what it names now, `None` when it needs none.
    ///
    /// Errors: [`HeadingRenameError::Conflict`] when no fragment would keep it there.
    fn link_edit(
        &self,
        ws: &Workspace,
        from: &str,
        from_text: &str,
        link: &Link,
    ) -> Result<Option<TextEdit>, HeadingRenameError> {
        if link.external || matches!(link.kind, LinkKind::UndefinedReference | LinkKind::Footnote) {
            return Ok(None);
        }
        let Some(fragment_bytes) = link.fragment_range.clone() else {
            return Ok(None);
        };
        // A link in the renamed text goes with it.
        let heading_range = &self.heading.text_range;
        if from == self.path
            && fragment_bytes.start < heading_range.end
            && heading_range.start < fragment_bytes.end
        {
            return Ok(None);
        }
        let Target::Document {
            path: to,
            fragment: Some(fragment),
        } = resolve_link(ws, from, link)
        else {
            return Ok(None);
        };
        let wiki = link.kind.is_wiki();
        if to != self.path || fragment.is_empty() {
            return Ok(None);
        }
        let Some(resolved) = fragment_range(
            &self.before,
            &fragment,
            wiki,
            self.case_sensitive,
            self.generator,
        ) else {
            return Ok(None);
        };
        let parts = fragment_parts(
            &self.before,
            from_text,
            &fragment,
            &fragment_bytes,
            &resolved,
            wiki,
            self.case_sensitive,
        );
        let mut edit = self.parts_edit(&parts, from_text, wiki);
        // The fragment as the resolver will read it after the edit.
        let new_fragment = match &edit {
            Some(e) if !wiki => e.new_text.clone(),
            Some(e) => format!(
                "{}{}{}",
                &from_text[fragment_bytes.start..e.range.start],
                e.new_text,
                &from_text[e.range.end..fragment_bytes.end]
            ),
            None => fragment.clone(),
        };
        let target_after = self.shift(&resolved);
        let reaches = |f: &str| {
            fragment_range(&self.after, f, wiki, self.case_sensitive, self.generator).as_ref()
                == Some(&target_after)
        };
        if !reaches(new_fragment.trim()) {
            // Named by its heading's new anchor instead.
            let anchor = parts.last().map(|p| {
                let new_slug = self.after.headings[p.heading].slug.as_str();
                if wiki {
                    new_slug
                } else {
                    site_id(&self.new_site, p.heading).unwrap_or(new_slug)
                }
            });
            match anchor {
                Some(anchor) if reaches(anchor) => {
                    edit = Some(TextEdit {
                        range: fragment_bytes.clone(),
                        new_text: anchor.to_string(),
                    });
                }
                _ => {
                    return Err(HeadingRenameError::Conflict(format!(
                        "renaming to `{}` would make the link `{}` in `{from}` lead elsewhere, and no fragment would keep it on what it names now; choose another name",
                        self.new_text,
                        &from_text[link.range.clone()]
                    )));
                }
            }
        }
        // Only a wiki link can be a frontmatter property's value.
        Ok(match edit {
            Some(edit) if wiki => yaml_safe(from_text, link, edit),
            edit => edit,
        })
    }

    /// One edit from the first renamed part of a fragment to the last, `None` when no
    /// part changes.
    fn parts_edit(&self, parts: &[FragmentPart], from_text: &str, wiki: bool) -> Option<TextEdit> {
        let changes: Vec<(&FragmentPart, String)> = parts
            .iter()
            .filter_map(|part| self.renamed(part, wiki).map(|name| (part, name)))
            .filter(|(part, name)| *name != part.written)
            .collect();
        let (first, last) = (changes.first()?.0, changes.last()?.0);
        let mut new_text = String::new();
        let mut at = first.range.start;
        for (part, name) in &changes {
            new_text.push_str(&from_text[at..part.range.start]);
            new_text.push_str(name);
            at = part.range.end;
        }
        Some(TextEdit {
            range: first.range.start..last.range.end,
            new_text,
        })
    }
}

/// The edits that rename link reference definition `def_idx` of document `path` to
/// `new_label`: the definition's label and the label of every reference that uses it.
pub fn rename_definition(
    ws: &Workspace,
    path: &str,
    def_idx: usize,
    new_label: &str,
) -> Option<Vec<TextEdit>> {
    if new_label.trim().is_empty() || new_label.contains(['[', ']', '\n', '\r']) {
        return None;
    }
    let entry = ws.get(path)?;
    let parsed = &entry.parsed;
    let text = entry.doc.text();
    let def = parsed.definitions.get(def_idx)?;
    let mut edits = Vec::new();
    for (idx, other) in parsed.definitions.iter().enumerate() {
        // Duplicates share the label: rename them too so none becomes a different one.
        if idx == def_idx || other.key == def.key {
            edits.push(TextEdit {
                range: other.label_range.clone(),
                new_text: new_label.to_string(),
            });
        }
    }
    for link in &parsed.links {
        if !matches!(link.kind, LinkKind::Reference | LinkKind::ImageReference)
            || link.label.as_deref() != Some(def.key.as_str())
        {
            continue;
        }
        if let Some(range) = reference_label_range(&text, &link.range) {
            edits.push(TextEdit {
                range,
                new_text: new_label.to_string(),
            });
        }
    }
    edits.sort_by_key(|e| e.range.start);
    edits.dedup_by(|a, b| a.range == b.range);
    Some(edits)
}

/// Bytes of the label of a reference link: `[text][label]` → `label`; `[label][]` and
/// `[label]` → `label`.
pub fn reference_label_range(text: &str, range: &Range<usize>) -> Option<Range<usize>> {
    let source = text.get(range.clone())?;
    let body = source.strip_prefix('!').unwrap_or(source);
    let lead = source.len() - body.len();
    if let Some(mid) = body.rfind("][") {
        let label = &body[mid + 2..body.len() - 1];
        if !label.is_empty() {
            let start = range.start + lead + mid + 2;
            return Some(start..start + label.len());
        }
        let start = range.start + lead + 1;
        return Some(start..range.start + lead + mid);
    }
    let start = range.start + lead + 1;
    Some(start..range.end - 1)
}

#[cfg(test)]
mod tests;
