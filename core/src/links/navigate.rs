//! Navigation over links: what is at an offset and where a link leads. Who links to a
//! heading, a definition or a file is [`crate::features::references`]; the edits that
//! rename or move are [`crate::links::rewrite`]'s.
//!
//! Everything here is protocol-free: byte ranges into the exact text of each
//! document, KB-relative paths, and [`TextEdit`]s that are sorted and disjoint per
//! document, against the unchanged text.

use std::collections::BTreeMap;
use std::ops::Range;

use crate::document::TextEdit;
use crate::links::{Target, resolve_link};
use crate::parse::{Heading, Link, LinkKind, Parsed, footnote_ids, slug};
use crate::workspace::{SiteGenerator, Workspace};

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

/// The index of the block id (`^id`, its marker's bytes) that contains `offset`.
pub fn block_id_at(parsed: &Parsed, offset: usize) -> Option<usize> {
    parsed
        .block_ids
        .iter()
        .position(|(_, range)| touches(range, offset))
}

/// The index of the link reference definition whose label contains `offset`.
pub fn definition_at(parsed: &Parsed, offset: usize) -> Option<usize> {
    parsed
        .definitions
        .iter()
        .position(|d| touches(&d.label_range, offset))
}

/// Bytes of what `fragment` names in `target`: a heading, an HTML anchor, a block id or a
/// footnote definition ([`footnote_ids`]); a Markdown link's also a heading by the id
/// `generator` gives it ([`Parsed::heading_anchors`]).
pub fn fragment_range(
    target: &Parsed,
    fragment: &str,
    wiki: bool,
    case_sensitive: bool,
    generator: SiteGenerator,
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
    if wiki && let Some(i) = heading_path(target, fragment, case_sensitive) {
        return Some(target.headings[i].range.clone());
    }
    if !generator.uses_github_slugs()
        && !wiki
        && let Some(i) = target
            .heading_anchors(generator)
            .iter()
            .position(|id| eq(id, fragment))
    {
        return Some(target.headings[i].range.clone());
    }
    target
        .anchors
        .iter()
        .find(|a| eq(&a.id, fragment))
        .map(|a| a.range.clone())
        .or_else(|| {
            target
                .footnote_definitions
                .iter()
                .find(|(label, _)| footnote_ids(label).iter().any(|id| eq(id, fragment)))
                .map(|(_, range)| range.clone())
        })
}

/// The heading an Obsidian heading path names: `Setup#On Linux` is a heading `On Linux`
/// nested (at any depth) under a heading `Setup`; every segment but the last names an
/// ancestor, outermost first. `None` when `fragment` has no `#` or nothing matches.
pub fn heading_path(target: &Parsed, fragment: &str, case_sensitive: bool) -> Option<usize> {
    heading_path_chain(target, fragment, case_sensitive).and_then(|chain| chain.last().copied())
}

/// The headings an Obsidian heading path names, one per `#`-separated segment of
/// `fragment` in the same order (outermost first): indices into `target`'s
/// [`Parsed::headings`], the last being [`heading_path`]'s answer. `None` when `fragment`
/// has no `#` or nothing matches.
pub fn heading_path_chain(
    target: &Parsed,
    fragment: &str,
    case_sensitive: bool,
) -> Option<Vec<usize>> {
    let segments: Vec<&str> = fragment.split('#').map(str::trim).collect();
    let (last, ancestors) = segments.split_last()?;
    if ancestors.is_empty() {
        return None;
    }
    let headings = &target.headings;
    (0..headings.len()).find_map(|i| {
        if !heading_matches(&headings[i], last, true, case_sensitive) {
            return None;
        }
        // The ancestor chain of heading `i`, innermost first.
        let mut level = headings[i].level;
        let mut chain = vec![i];
        let mut wanted = ancestors.iter().rev().peekable();
        for (j, h) in headings[..i].iter().enumerate().rev() {
            if h.level < level {
                level = h.level;
                if wanted
                    .peek()
                    .is_some_and(|w| heading_matches(h, w, true, case_sensitive))
                {
                    wanted.next();
                    chain.push(j);
                }
            }
        }
        wanted.peek().is_none().then(|| {
            chain.reverse();
            chain
        })
    })
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
    let target = match resolve_link(ws, from, link) {
        // Found on case-insensitive systems; going there shows the user which file it is.
        Target::CaseMismatch { path, fragment } if ws.contains_document(&path) => {
            Target::Document { path, fragment }
        }
        Target::CaseMismatch { path, .. } => Target::File(path),
        other => other,
    };
    match target {
        Target::Document { path, fragment } => {
            let parsed = ws.parsed(&path)?;
            let wiki = link.kind.is_wiki();
            let range = match fragment.as_deref() {
                Some(f) if !f.is_empty() && f != "top" => {
                    fragment_range(&parsed, f, wiki, case_sensitive, ws.generator())?
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

/// Where clicking a link takes the user (LSP `documentLink`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClickTarget {
    /// KB-relative path of the document or file, or of the file a click would create.
    pub path: String,
    /// 1-based line of the heading, anchor or block id the fragment names, if any.
    pub line: Option<u32>,
    /// True when nothing exists at `path` yet (editors offer to create it).
    pub missing: bool,
}

/// Where clicking `link` of document `from` goes: its target document (at the line of
/// the heading its fragment names; a broken fragment still leads to the file), a file,
/// the target of the definition a reference link uses, or — for a link whose target is
/// missing — the file it would name: a Markdown link's path (`.md` added when it has no
/// extension), a wiki link's name as a KB-relative `.md` path. `None` for external links,
/// footnotes, undefined references, ambiguous targets and paths outside the root.
pub fn click_target(ws: &Workspace, from: &str, link: &Link) -> Option<ClickTarget> {
    if link.external {
        return None;
    }
    if matches!(link.kind, LinkKind::Reference | LinkKind::ImageReference) {
        let parsed = ws.parsed(from)?;
        let key = link.label.as_deref()?;
        let def = parsed.definitions.iter().find(|d| d.key == key)?;
        let def_link = parsed
            .links
            .iter()
            .find(|l| l.kind == LinkKind::Definition && l.range == def.range)?;
        return click_target(ws, from, def_link);
    }
    let wiki = link.kind.is_wiki();
    let found = |path: String, line: Option<u32>| ClickTarget {
        path,
        line,
        missing: false,
    };
    match resolve_link(ws, from, link) {
        Target::Document { path, fragment } => {
            let parsed = ws.parsed(&path)?;
            let case_sensitive = ws.config().diagnostics.fragment_case_sensitive;
            let line = fragment
                .as_deref()
                .filter(|f| !f.is_empty() && *f != "top")
                .and_then(|f| fragment_range(&parsed, f, wiki, case_sensitive, ws.generator()))
                .map(|r| parsed.line_of(r.start));
            Some(found(path, line))
        }
        Target::File(path) | Target::CaseMismatch { path, .. } => Some(found(path, None)),
        Target::Missing | Target::MissingFoundByName(_) => {
            let mut path = if wiki {
                link.dest.trim_start_matches('/').to_string()
            } else {
                crate::links::join_relative(from, link.dest.split('?').next().unwrap_or(""))?
            };
            if path.is_empty() {
                return None;
            }
            if !path.rsplit('/').next().unwrap_or(&path).contains('.') {
                path.push_str(".md");
            }
            Some(ClickTarget {
                path,
                line: None,
                missing: true,
            })
        }
        Target::External
        | Target::OutsideRoot
        | Target::Definition(_)
        | Target::Ambiguous(_)
        | Target::Redirected(_) => None,
    }
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

/// The heading of `target` whose anchor is closest to `fragment` by [`similarity`]
/// (compared lowercased), if any reaches `min_similarity`: its index in `target.headings`
/// and its anchor, GitHub's slug or on a published site the id `generator` gives it
/// ([`Parsed::heading_anchors`]).
pub fn closest_heading(
    target: &Parsed,
    fragment: &str,
    min_similarity: f64,
    generator: SiteGenerator,
) -> Option<(usize, String)> {
    let wanted = fragment.to_lowercase();
    target
        .heading_anchors(generator)
        .into_iter()
        .enumerate()
        .map(|(i, id)| (similarity(&wanted, &id), i, id))
        .filter(|(s, ..)| *s >= min_similarity)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, i, id)| (i, id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    #[test]
    fn closest_heading_allows_a_typo() {
        let parsed = parse("# Installation\n# Usage\n");
        assert_eq!(
            closest_heading(&parsed, "instalation", 0.5, SiteGenerator::None),
            Some((0, "installation".to_string()))
        );
        assert_eq!(
            closest_heading(&parsed, "zzzz", 0.5, SiteGenerator::None),
            None
        );
        let parsed = parse("# build.assetsInlineLimit\n");
        assert_eq!(
            closest_heading(
                &parsed,
                "build-assetsinlinelimt",
                0.5,
                SiteGenerator::Vitepress
            ),
            Some((0, "build-assetsinlinelimit".to_string()))
        );
    }

    #[test]
    fn click_targets_of_every_kind_of_link() {
        let ws = crate::fixture::workspace(
            "
//- /notes/a.md
[t][lbl] [lbl][] [lbl] [x](b.md#second) [y](b.md#nope) [z](new) [w](new.png) [[b#Second]] [[New note]] [[b#^blk]] [s](#own) [e](https://x.test) [^1] [u][nodef]

# Own

[lbl]: b.md#second
[^1]: foot
//- /notes/b.md
# B

## Second

Para ^blk
",
        );
        let parsed = ws.parsed("notes/a.md").unwrap();
        let text = ws.get("notes/a.md").unwrap().doc.text();
        let got: Vec<String> = parsed
            .links
            .iter()
            .map(|l| {
                let t = click_target(&ws, "notes/a.md", l);
                format!(
                    "{} -> {}",
                    &text[l.range.clone()],
                    t.map_or("none".to_string(), |t| format!(
                        "{}{}{}",
                        t.path,
                        t.line.map_or(String::new(), |n| format!(":{n}")),
                        if t.missing { " (missing)" } else { "" }
                    ))
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                "[t][lbl] -> notes/b.md:3",
                "[lbl][] -> notes/b.md:3",
                "[lbl] -> notes/b.md:3",
                "[x](b.md#second) -> notes/b.md:3",
                "[y](b.md#nope) -> notes/b.md",
                "[z](new) -> notes/new.md (missing)",
                "[w](new.png) -> notes/new.png (missing)",
                "[[b#Second]] -> notes/b.md:3",
                "[[New note]] -> New note.md (missing)",
                "[[b#^blk]] -> notes/b.md:5",
                "[s](#own) -> notes/a.md:3",
                "[e](https://x.test) -> none",
                "[^1] -> none",
                "[u][nodef] -> none",
                "[lbl]: b.md#second -> notes/b.md:3",
            ]
        );
    }
}
