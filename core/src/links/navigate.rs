//! Navigation and refactoring over links: what is at an offset, where a link leads,
//! who links to a heading or file, and the edits that rename a heading, a reference
//! label or a file.
//!
//! Everything here is protocol-free: byte ranges into the exact text of each
//! document, KB-relative paths, and [`TextEdit`]s that are sorted and disjoint per
//! document, against the unchanged text.

use std::collections::BTreeMap;
use std::ops::Range;

use crate::document::TextEdit;
use crate::links::{Target, resolve_link};
use crate::parse::{Heading, Link, LinkKind, Parsed, parse, slug};
use crate::workspace::Workspace;

/// Edits per document (KB-relative path), each list sorted and disjoint.
pub type WorkspaceEdits = BTreeMap<String, Vec<TextEdit>>;

/// True when `offset` lies in `range`, its end included (a cursor right after a link
/// still touches it).
fn touches(range: &Range<usize>, offset: usize) -> bool {
    range.start <= offset && offset <= range.end
}

/// The link whose bytes contain `offset`, the innermost first.
pub fn link_at(parsed: &Parsed, offset: usize) -> Option<&Link> {
    parsed
        .links
        .iter()
        .filter(|l| touches(&l.range, offset))
        .min_by_key(|l| l.range.len())
}

/// The index of the heading whose line contains `offset`.
pub fn heading_at(parsed: &Parsed, offset: usize) -> Option<usize> {
    parsed
        .headings
        .iter()
        .position(|h| touches(&h.range, offset))
}

/// The index of the link reference definition whose label contains `offset`.
pub fn definition_at(parsed: &Parsed, offset: usize) -> Option<usize> {
    parsed
        .definitions
        .iter()
        .position(|d| touches(&d.label_range, offset))
}

/// Bytes of what `fragment` names in `target`: a heading, an HTML anchor or a block id.
pub fn fragment_range(
    target: &Parsed,
    fragment: &str,
    wiki: bool,
    case_sensitive: bool,
) -> Option<Range<usize>> {
    let eq = |a: &str, b: &str| {
        if case_sensitive {
            a == b
        } else {
            a.to_lowercase() == b.to_lowercase()
        }
    };
    if let Some(block) = fragment.strip_prefix('^') {
        return target
            .block_ids
            .iter()
            .find(|(id, _)| eq(id, block))
            .map(|(_, r)| r.clone());
    }
    if let Some(h) = target
        .headings
        .iter()
        .find(|h| heading_matches(h, fragment, wiki, case_sensitive))
    {
        return Some(h.range.clone());
    }
    target
        .anchors
        .iter()
        .find(|a| eq(&a.id, fragment))
        .map(|a| a.range.clone())
}

/// Does `fragment` name heading `h`? Same rules as [`crate::links::fragment_matches`].
pub fn heading_matches(h: &Heading, fragment: &str, wiki: bool, case_sensitive: bool) -> bool {
    let eq = |a: &str, b: &str| {
        if case_sensitive {
            a == b
        } else {
            a.to_lowercase() == b.to_lowercase()
        }
    };
    eq(&h.slug, fragment)
        || h.custom_id.as_deref().is_some_and(|id| eq(id, fragment))
        || (wiki && (eq(&h.text, fragment) || eq(&slug::slug(&h.text), &slug::slug(fragment))))
}

/// Where a link leads: a document path and the bytes of the target in it (the whole
/// document when there is no fragment, or the definition for a reference).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Destination {
    /// KB-relative path of the document (or file) the link leads to.
    pub path: String,
    /// Bytes in that document; `None` for a file that is not a Markdown document.
    pub range: Option<Range<usize>>,
}

/// Resolves `link` of document `from` to a destination, if it has one in the workspace.
pub fn destination(ws: &Workspace, from: &str, link: &Link) -> Option<Destination> {
    let case_sensitive = ws.config().diagnostics.fragment_case_sensitive;
    match resolve_link(ws, from, link) {
        Target::Document { path, fragment } => {
            let parsed = ws.parsed(&path)?;
            let wiki = matches!(link.kind, LinkKind::Wiki | LinkKind::WikiEmbed);
            let range = match fragment.as_deref() {
                Some(f) if !f.is_empty() && f != "top" => {
                    fragment_range(&parsed, f, wiki, case_sensitive)?
                }
                _ => 0..0,
            };
            Some(Destination {
                path,
                range: Some(range),
            })
        }
        Target::File(path) => Some(Destination { path, range: None }),
        Target::Definition(label) => {
            let parsed = ws.parsed(from)?;
            let range = match label.strip_prefix('^') {
                Some(foot) if link.kind != LinkKind::Reference => parsed
                    .footnote_definitions
                    .iter()
                    .find(|(l, _)| l == foot)
                    .map(|(_, r)| r.clone())?,
                _ => parsed
                    .definitions
                    .iter()
                    .find(|d| d.key == label)?
                    .range
                    .clone(),
            };
            Some(Destination {
                path: from.to_string(),
                range: Some(range),
            })
        }
        _ => None,
    }
}

/// One link that points at something.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// KB-relative path of the linking document.
    pub path: String,
    /// Bytes of the whole link.
    pub range: Range<usize>,
}

/// Every link in the workspace that leads to document `path` (any fragment), in path
/// then source order.
pub fn references_to_document(ws: &Workspace, path: &str) -> Vec<Reference> {
    collect_references(
        ws,
        |link_target, _| matches!(link_target, Target::Document { path: p, .. } | Target::File(p) if p == path),
    )
}

/// Every link in the workspace that leads to heading `heading_idx` of document `path`.
pub fn references_to_heading(ws: &Workspace, path: &str, heading_idx: usize) -> Vec<Reference> {
    let Some(parsed) = ws.parsed(path) else {
        return Vec::new();
    };
    let Some(heading) = parsed.headings.get(heading_idx).cloned() else {
        return Vec::new();
    };
    let case_sensitive = ws.config().diagnostics.fragment_case_sensitive;
    collect_references(ws, |target, link| match target {
        Target::Document {
            path: p,
            fragment: Some(f),
        } if p == path => {
            let wiki = matches!(link.kind, LinkKind::Wiki | LinkKind::WikiEmbed);
            // The first heading that matches wins, as in a browser.
            parsed
                .headings
                .iter()
                .position(|h| heading_matches(h, f, wiki, case_sensitive))
                == Some(heading_idx)
                && heading_matches(&heading, f, wiki, case_sensitive)
        }
        _ => false,
    })
}

/// Every use of link reference definition `def_idx` of document `path` (references,
/// and wiki links that Foam-style definitions serve).
pub fn references_to_definition(ws: &Workspace, path: &str, def_idx: usize) -> Vec<Reference> {
    let Some(parsed) = ws.parsed(path) else {
        return Vec::new();
    };
    let Some(def) = parsed.definitions.get(def_idx) else {
        return Vec::new();
    };
    parsed
        .links
        .iter()
        .filter(|l| {
            matches!(l.kind, LinkKind::Reference | LinkKind::ImageReference)
                && l.label.as_deref() == Some(def.key.as_str())
        })
        .map(|l| Reference {
            path: path.to_string(),
            range: l.range.clone(),
        })
        .collect()
}

fn collect_references(
    ws: &Workspace,
    mut keep: impl FnMut(&Target, &Link) -> bool,
) -> Vec<Reference> {
    let mut out = Vec::new();
    for from in ws.document_paths() {
        let Some(parsed) = ws.parsed(from) else {
            continue;
        };
        for link in &parsed.links {
            if link.external
                || matches!(link.kind, LinkKind::UndefinedReference | LinkKind::Footnote)
            {
                continue;
            }
            let target = resolve_link(ws, from, link);
            if keep(&target, link) {
                out.push(Reference {
                    path: from.to_string(),
                    range: link.range.clone(),
                });
            }
        }
    }
    out
}

/// The slug heading `heading_idx` of `text` gets when its text becomes `new_text`
/// (duplicates in the document included), found by parsing the edited text.
fn headings_after_rename(text: &str, heading: &Heading, new_text: &str) -> Vec<Heading> {
    let mut edited = String::with_capacity(text.len() + new_text.len());
    edited.push_str(&text[..heading.text_range.start]);
    edited.push_str(new_text);
    edited.push_str(&text[heading.text_range.end..]);
    parse(&edited).headings
}

/// Why renaming heading `heading_idx` of `path` to `new_text` would break other links:
/// another heading of the document would change its anchor (GitHub numbers repeated
/// slugs in document order, so a duplicate name shifts `-1` suffixes). `None` when the
/// rename is safe.
pub fn heading_rename_conflict(
    ws: &Workspace,
    path: &str,
    heading_idx: usize,
    new_text: &str,
) -> Option<String> {
    let entry = ws.get(path)?;
    let heading = entry.parsed.headings.get(heading_idx)?;
    let after = headings_after_rename(&entry.doc.text(), heading, new_text.trim());
    entry.parsed.headings.iter().zip(&after).enumerate().find_map(|(i, (before, now))| {
        (i != heading_idx && before.slug != now.slug).then(|| {
            format!(
                "renaming to `{}` would change the anchor of heading `{}` from #{} to #{}; choose a name no other heading has",
                new_text.trim(),
                before.text,
                before.slug,
                now.slug
            )
        })
    })
}

/// The edits that rename heading `heading_idx` of document `path` to `new_text` and
/// update every link to its anchor across the workspace.
///
/// A Markdown link's fragment becomes the new slug; a wiki link's fragment becomes the
/// new text when it was written as the heading text, else the new slug. `None` when
/// there is no such heading, the new text is empty, or [`heading_rename_conflict`]
/// finds that another heading's anchor would change.
pub fn rename_heading(
    ws: &Workspace,
    path: &str,
    heading_idx: usize,
    new_text: &str,
) -> Option<WorkspaceEdits> {
    let new_text = new_text.trim();
    if new_text.is_empty() || new_text.contains(['\n', '\r']) {
        return None;
    }
    let entry = ws.get(path)?;
    let heading = entry.parsed.headings.get(heading_idx)?.clone();
    if heading_rename_conflict(ws, path, heading_idx, new_text).is_some() {
        return None;
    }
    let new_slug = headings_after_rename(&entry.doc.text(), &heading, new_text)
        .get(heading_idx)?
        .slug
        .clone();
    let mut edits = WorkspaceEdits::new();
    edits.entry(path.to_string()).or_default().push(TextEdit {
        range: heading.text_range.clone(),
        new_text: new_text.to_string(),
    });
    for reference in references_to_heading(ws, path, heading_idx) {
        let Some(parsed) = ws.parsed(&reference.path) else {
            continue;
        };
        let Some(link) = parsed.links.iter().find(|l| l.range == reference.range) else {
            continue;
        };
        let Some(fragment_range) = link.fragment_range.clone() else {
            continue;
        };
        let written = link.fragment.as_deref().unwrap_or("");
        let wiki = matches!(link.kind, LinkKind::Wiki | LinkKind::WikiEmbed);
        let replacement = if wiki && written.to_lowercase() != heading.slug.to_lowercase() {
            new_text
        } else {
            &new_slug
        };
        edits
            .entry(reference.path.clone())
            .or_default()
            .push(TextEdit {
                range: fragment_range,
                new_text: replacement.to_string(),
            });
    }
    for list in edits.values_mut() {
        list.sort_by_key(|e| e.range.start);
        list.dedup_by(|a, b| a.range == b.range);
    }
    Some(edits)
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

/// The path from document `from`'s folder to `to`, with `..` as needed.
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

/// Percent-encodes the characters a Markdown link destination cannot hold bare.
fn encode_dest(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            ' ' => out.push_str("%20"),
            '(' => out.push_str("%28"),
            ')' => out.push_str("%29"),
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out
}

/// The edits that keep links working when the file `old` moves to `new` (both
/// KB-relative): links from other documents to it, and relative links inside it.
///
/// A link written without the `.md` extension stays without it; a wiki link that
/// named the file by its stem gets the new stem.
pub fn rename_file_edits(ws: &Workspace, old: &str, new: &str) -> WorkspaceEdits {
    rename_files_edits(ws, &[(old.to_string(), new.to_string())])
}

/// [`rename_file_edits`] for several moves at once (a folder move): a link between two
/// moved files is computed from both new locations.
pub fn rename_files_edits(ws: &Workspace, moves: &[(String, String)]) -> WorkspaceEdits {
    let mut edits = WorkspaceEdits::new();
    let moved =
        |p: &str| -> Option<String> { moves.iter().find(|(o, _)| o == p).map(|(_, n)| n.clone()) };
    let strip_ext = |p: &str| -> String {
        p.strip_suffix(".md")
            .or_else(|| p.strip_suffix(".markdown"))
            .unwrap_or(p)
            .to_string()
    };
    for from in ws.document_paths() {
        let Some(entry) = ws.get(from) else { continue };
        let parsed = &entry.parsed;
        let new_from = moved(from);
        for link in &parsed.links {
            if link.external || link.dest.is_empty() {
                continue;
            }
            let Some(dest_range) = link.dest_range.clone() else {
                continue;
            };
            let wiki = matches!(link.kind, LinkKind::Wiki | LinkKind::WikiEmbed);
            let target_path = match resolve_link(ws, from, link) {
                Target::Document { path, .. } | Target::File(path) => path,
                _ => continue,
            };
            let new_target = moved(&target_path);
            if new_target.is_none() && new_from.is_none() {
                continue;
            }
            let target_after = new_target.clone().unwrap_or(target_path.clone());
            let from_after = new_from.as_deref().unwrap_or(from);
            let written_end = link
                .fragment_range
                .as_ref()
                .map_or(dest_range.end, |f| f.start - 1);
            let written = entry
                .doc
                .slice(dest_range.start..written_end)
                .unwrap_or_default();
            let replacement = if wiki {
                if new_target.is_none() {
                    continue;
                }
                if written.contains('/') {
                    strip_ext(&target_after)
                } else {
                    strip_ext(target_after.rsplit('/').next().unwrap_or(&target_after))
                }
            } else {
                if written.starts_with('/') && new_target.is_none() {
                    continue;
                }
                let mut rel = if written.starts_with('/') {
                    format!("/{target_after}")
                } else {
                    relative_path(from_after, &target_after)
                };
                let had_ext = written.ends_with(".md")
                    || written.ends_with(".markdown")
                    || !is_doc(&target_after);
                if !had_ext {
                    rel = strip_ext(&rel);
                }
                encode_dest(&rel)
            };
            if written == replacement {
                continue;
            }
            edits.entry(from.to_string()).or_default().push(TextEdit {
                range: dest_range.start..written_end,
                new_text: replacement,
            });
        }
    }
    for list in edits.values_mut() {
        list.sort_by_key(|e| e.range.start);
        list.dedup_by(|a, b| a.range == b.range);
    }
    edits
}

fn is_doc(path: &str) -> bool {
    path.ends_with(".md") || path.ends_with(".markdown")
}

/// Levenshtein distance in characters.
pub fn levenshtein(a: &str, b: &str) -> usize {
    let b_chars: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b_chars.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b_chars.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == cb {
                prev
            } else {
                1 + prev.min(cur).min(row[j])
            };
            prev = cur;
        }
    }
    row[b_chars.len()]
}

/// Normalised similarity in `[0, 1]`: 1 minus the Levenshtein distance over the longer length.
pub fn similarity(a: &str, b: &str) -> f64 {
    let longest = a.chars().count().max(b.chars().count());
    if longest == 0 {
        return 1.0;
    }
    1.0 - levenshtein(a, b) as f64 / longest as f64
}

/// The slug of the heading of `target` closest to `fragment` by [`similarity`]
/// (compared lowercased), if any reaches `min_similarity`.
pub fn closest_heading(target: &Parsed, fragment: &str, min_similarity: f64) -> Option<String> {
    let wanted = fragment.to_lowercase();
    target
        .headings
        .iter()
        .map(|h| (similarity(&wanted, &h.slug), h))
        .filter(|(s, _)| *s >= min_similarity)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, h)| h.slug.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::workspace;

    fn apply(text: &str, edits: &[TextEdit]) -> String {
        let mut out = text.to_string();
        for e in edits.iter().rev() {
            out.replace_range(e.range.clone(), &e.new_text);
        }
        out
    }

    #[test]
    fn heading_rename_updates_links_everywhere() {
        let ws = workspace(
            "//- /a.md\n# Intro\n## Set Up\nsee [s](#set-up) and [o](b.md#x)\n//- /b.md\n[a](a.md#set-up) [[a#Set Up]] [[a#set-up]] [n](a.md#nope)\n",
        );
        let edits = rename_heading(&ws, "a.md", 1, "Getting Started").unwrap();
        let a = ws.get("a.md").unwrap().doc.text();
        let b = ws.get("b.md").unwrap().doc.text();
        assert_eq!(
            apply(&a, &edits["a.md"]),
            "# Intro\n## Getting Started\nsee [s](#getting-started) and [o](b.md#x)\n"
        );
        assert_eq!(
            apply(&b, &edits["b.md"]),
            "[a](a.md#getting-started) [[a#Getting Started]] [[a#getting-started]] [n](a.md#nope)\n"
        );
    }

    #[test]
    fn file_rename_rewrites_relative_links() {
        let ws = workspace(
            "//- /a.md\n[b](sub/b.md#h) [bare](sub/b) [[b]] [[sub/b]]\n//- /sub/b.md\n# H\n[a](../a.md) [c](c.md)\n//- /sub/c.md\n",
        );
        let edits = rename_file_edits(&ws, "sub/b.md", "other/bee.md");
        let a = ws.get("a.md").unwrap().doc.text();
        let b = ws.get("sub/b.md").unwrap().doc.text();
        assert_eq!(
            apply(&a, &edits["a.md"]),
            "[b](other/bee.md#h) [bare](other/bee) [[bee]] [[other/bee]]\n"
        );
        assert_eq!(
            apply(&b, &edits["sub/b.md"]),
            "# H\n[a](../a.md) [c](../sub/c.md)\n"
        );
    }

    #[test]
    fn definition_rename_and_closest_heading() {
        let ws = workspace("//- /a.md\n[x][Old] [old][] [old]\n\n[old]: b.md\n");
        let edits = rename_definition(&ws, "a.md", 0, "new").unwrap();
        let a = ws.get("a.md").unwrap().doc.text();
        assert_eq!(apply(&a, &edits), "[x][new] [new][] [new]\n\n[new]: b.md\n");
        let parsed = parse("# Installation\n# Usage\n");
        assert_eq!(
            closest_heading(&parsed, "instalation", 0.5).as_deref(),
            Some("installation")
        );
        assert_eq!(closest_heading(&parsed, "zzzz", 0.5), None);
        assert_eq!(relative_path("a/b/c.md", "a/d.md"), "../d.md");
        assert_eq!(relative_path("c.md", "a/d.md"), "a/d.md");
    }
}
