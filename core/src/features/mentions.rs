//! Unlinked mentions and orphans: where other notes name a note in plain text without
//! linking to it, the edit that links them, and the notes nothing links to.
//!
//! A note's names are its title ([`Parsed::title_for`]: frontmatter `title`, first
//! level-1 heading, else the file name), its file stem and its frontmatter aliases; a
//! name shorter than [`MIN_NAME_CHARS`] characters is not looked for. A mention is a
//! match of a name in another document, letter case aside, that is not part of a longer
//! word (a Latin, Greek, Cyrillic… letter or digit on either side; Chinese and Japanese
//! text has no spaces, so there any match counts) and lies in prose: not in code, HTML,
//! math, the frontmatter, a link, a link reference definition, a heading or a `#tag`
//! ([`crate::parse::prose_map`]). Where several names overlap, the longest match wins.

use std::collections::BTreeMap;
use std::ops::Range;

use crate::document::TextEdit;
use crate::links::navigate::WorkspaceEdits;
use crate::links::references::references_to_documents;
use crate::links::rewrite::{encode_dest, relative_path};
use crate::parse::{LinkKind, Parsed, prose_map};
use crate::workspace::Workspace;

/// Names shorter than this (in characters) are not looked for: `Go` or `UI` would be
/// found in every other note.
pub const MIN_NAME_CHARS: usize = 3;

/// One place another document names a note without linking to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mention {
    /// KB-relative path of the document that names it.
    pub path: String,
    /// Bytes of the name in that document.
    pub range: Range<usize>,
    /// The name as written there.
    pub text: String,
    /// True when it stands in a GFM table row (where a wiki link's alias separator must
    /// be written `\|`).
    pub in_table: bool,
}

/// The names of document `path` looked for: title, file stem and aliases, each once
/// (letter case aside), longest first.
pub fn names_of(ws: &Workspace, path: &str, parsed: &Parsed) -> Vec<String> {
    let stem = file_stem(path);
    let mut names: Vec<String> = std::iter::once(parsed.title_for(path, ws.is_vault()))
        .chain(std::iter::once(stem.to_string()))
        .chain(parsed.aliases())
        .map(|n| n.trim().to_string())
        .filter(|n| n.chars().count() >= MIN_NAME_CHARS)
        .collect();
    names.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    let mut seen = std::collections::HashSet::new();
    names.retain(|n| seen.insert(n.to_lowercase()));
    names
}

/// The case-insensitive patterns of the names of document `path`; empty when it is not
/// a document or has no name long enough.
fn patterns_of(ws: &Workspace, path: &str) -> Vec<regex::Regex> {
    let Some(parsed) = ws.parsed(path) else {
        return Vec::new();
    };
    names_of(ws, path, &parsed)
        .iter()
        .filter_map(|name| {
            regex::RegexBuilder::new(&regex::escape(name))
                .case_insensitive(true)
                .build()
                .ok()
        })
        .collect()
}

/// True when another document writes one of the names of document `path` as a whole
/// word anywhere, prose or not: a quick test (no document is parsed) that
/// [`unlinked_mentions`] may find something. False means it finds nothing.
pub fn may_have_mentions(ws: &Workspace, path: &str) -> bool {
    let patterns = patterns_of(ws, path);
    !patterns.is_empty()
        && ws.document_paths().filter(|p| *p != path).any(|from| {
            ws.get(from)
                .is_some_and(|entry| !matches_in(&entry.doc.text(), &patterns).is_empty())
        })
}

/// Every unlinked mention of document `path` in the other documents of `ws`, in path
/// then source order. Empty when `path` is not a document.
pub fn unlinked_mentions(ws: &Workspace, path: &str) -> Vec<Mention> {
    let patterns = patterns_of(ws, path);
    if patterns.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for from in ws.document_paths().filter(|p| *p != path) {
        let Some(entry) = ws.get(from) else {
            continue;
        };
        let text = entry.doc.text();
        let mut found = matches_in(&text, &patterns);
        if found.is_empty() {
            continue;
        }
        let map = prose_map(&text);
        found.retain(|r| !overlaps_any(r, &map.not_prose));
        out.extend(found.into_iter().map(|range| Mention {
            path: from.to_string(),
            text: text[range.clone()].to_string(),
            in_table: overlaps_any(&range, &map.tables),
            range,
        }));
    }
    out
}

/// The edits that turn each of `mentions` into a link to document `path`, per document:
/// a wiki link (`[[name]]`, or `[[name|as written]]` when the text differs from the name
/// other than in letter case) in an Obsidian vault or a document that already has wiki
/// links, else a Markdown link `[as written](relative/path.md)`. The wiki name is the
/// file stem when it resolves to `path` from the linking document, else the path
/// without its extension.
pub fn link_mentions(ws: &Workspace, path: &str, mentions: &[Mention]) -> WorkspaceEdits {
    let mut edits: WorkspaceEdits = BTreeMap::new();
    for m in mentions {
        let wiki = ws.is_vault()
            || ws
                .parsed(&m.path)
                .is_some_and(|p| p.links.iter().any(|l| l.kind == LinkKind::Wiki));
        let new_text = if wiki {
            let name = wiki_name(ws, &m.path, path);
            if name.to_lowercase() == m.text.to_lowercase() {
                format!("[[{}]]", m.text)
            } else if m.in_table {
                // A bare `|` would end the table cell.
                format!("[[{name}\\|{}]]", m.text)
            } else {
                format!("[[{name}|{}]]", m.text)
            }
        } else {
            format!(
                "[{}]({})",
                m.text,
                encode_dest(&relative_path(&m.path, path))
            )
        };
        edits.entry(m.path.clone()).or_default().push(TextEdit {
            range: m.range.clone(),
            new_text,
        });
    }
    edits
}

/// The documents no other document links to (any kind of link, site rules included: the
/// rule of `textDocument/references`), sorted by path.
pub fn orphans(ws: &Workspace) -> Vec<String> {
    let linked = references_to_documents(ws);
    ws.document_paths()
        .filter(|p| !linked.contains_key(*p))
        .map(str::to_string)
        .collect()
}

/// The name a wiki link in document `from` gives document `to`: its file stem when that
/// resolves to `to` alone, else its path without the extension.
fn wiki_name(ws: &Workspace, from: &str, to: &str) -> String {
    let stem = file_stem(to);
    if ws.wiki_candidates(from, stem) == [to.to_string()] {
        stem.to_string()
    } else {
        to.rsplit_once('.').map_or(to, |(p, _)| p).to_string()
    }
}

fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(stem, _)| stem)
}

/// The whole-word matches of `patterns` in `text`, sorted, overlaps resolved for the
/// earlier pattern (the longer name).
fn matches_in(text: &str, patterns: &[regex::Regex]) -> Vec<Range<usize>> {
    let mut found: Vec<Range<usize>> = Vec::new();
    for re in patterns {
        for m in re.find_iter(text) {
            let range = m.range();
            if whole_word(text, &range) && !overlaps_any(&range, &found) {
                found.push(range);
            }
        }
    }
    found.sort_by_key(|r| r.start);
    found
}

/// True when the match at `range` stands as a word of prose: no word character
/// ([`is_word_char`]) joins it on either side where the match itself starts or ends with
/// one, and it is no piece of a handle, path, address or compound: not after `@`, `/`,
/// `\`, `.`, `-`, `#`, `~` or `:`, nor after a `_` that a letter or digit precedes, and not
/// before `/`, `\`, `-` or `@`, nor before a `.`, `:` or `_` that a letter or digit follows
/// (`kubernetes.io`, `rust_x`; but a sentence may end after the name, and `_Name_` is
/// emphasis).
fn whole_word(text: &str, range: &Range<usize>) -> bool {
    let inner = &text[range.clone()];
    let mut before = text[..range.start].chars().rev();
    let mut after = text[range.end..].chars();
    let (b, b2, a, a2) = (before.next(), before.next(), after.next(), after.next());
    let first = inner.chars().next();
    let last = inner.chars().next_back();
    let joins = |outside: Option<char>, edge: Option<char>| {
        outside.is_some_and(is_word_char) && edge.is_some_and(is_word_char)
    };
    // `_` joins a compound (`rust_x`), not emphasis (`_Rust_`): only with a letter or
    // digit on its other side.
    let piece_before = b.is_some_and(|c| "@/\\.-#~:".contains(c))
        || (b == Some('_') && b2.is_some_and(char::is_alphanumeric));
    let piece_after = a.is_some_and(|c| "/\\-@".contains(c))
        || (a.is_some_and(|c| c == '.' || c == ':' || c == '_')
            && a2.is_some_and(char::is_alphanumeric));
    !joins(b, first) && !joins(a, last) && !piece_before && !piece_after
}

/// A letter or digit of a script written with spaces between words: not Han, Hiragana,
/// Katakana or Hangul, whose words run together.
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric()
        && !matches!(c as u32,
            0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF
            | 0xAC00..=0xD7AF | 0x20000..=0x2FA1F)
}

fn overlaps_any(range: &Range<usize>, others: &[Range<usize>]) -> bool {
    others
        .iter()
        .any(|o| o.start < range.end && range.start < o.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = "//- /notes/Solar Panels.md\n---\naliases: [PV]\n---\n# Solar Panels\n\nAbout them.\n\
//- /a.md\n# A\n\nWe fitted solar panels last year. Solar panelsmith is no match.\n\n\
`solar panels` in code, [solar panels](notes/Solar%20Panels.md) linked, #solar tag.\n\n## Solar Panels heading\n\
//- /b.md\n# B\n\nSee [[notes/Solar Panels]] and also Solar Panels again; 太陽のSolar Panelsも。\n\
//- /c.md\n# C\n\nNothing here.\n";

    #[test]
    fn mentions_are_names_in_prose_and_become_links_in_the_style_of_their_document() {
        let ws = crate::fixture::workspace(FIXTURE);
        let parsed = ws.parsed("notes/Solar Panels.md").unwrap();
        // `PV` is too short to look for; the title and the stem are one name.
        assert_eq!(
            names_of(&ws, "notes/Solar Panels.md", &parsed),
            vec!["Solar Panels"]
        );
        let mentions = unlinked_mentions(&ws, "notes/Solar Panels.md");
        let found: Vec<(&str, &str)> = mentions
            .iter()
            .map(|m| (m.path.as_str(), m.text.as_str()))
            .collect();
        assert_eq!(
            found,
            vec![
                ("a.md", "solar panels"),
                ("b.md", "Solar Panels"),
                ("b.md", "Solar Panels"),
            ]
        );
        let edits = link_mentions(&ws, "notes/Solar Panels.md", &mentions);
        // a.md has no wiki link: a Markdown link; b.md has one: wiki links, by stem.
        assert_eq!(
            edits["a.md"],
            vec![TextEdit {
                range: mentions[0].range.clone(),
                new_text: "[solar panels](notes/Solar%20Panels.md)".into()
            }]
        );
        assert_eq!(
            edits["b.md"]
                .iter()
                .map(|e| e.new_text.as_str())
                .collect::<Vec<_>>(),
            vec!["[[Solar Panels]]", "[[Solar Panels]]"]
        );
        // In a table a wiki link's alias separator is escaped; math, handles, paths and
        // domains are no mentions.
        let ws2 = crate::fixture::workspace(
            "//- /Rust.md\n---\naliases: [Ferris]\n---\n# Rust\n\
             //- /t.md\n[[Other]]\n\n| Lang | Note |\n|---|---|\n| ferris | fast |\n\n\
             Math $Rust$ here; @rust/team, rust-lang, rust.org, crates/rust, rust_x, x_rust and Rust.\n\nIn _Ferris_ emphasis it is one.\n",
        );
        let found = unlinked_mentions(&ws2, "Rust.md");
        let texts: Vec<(&str, bool)> = found
            .iter()
            .map(|m| (m.text.as_str(), m.in_table))
            .collect();
        assert_eq!(
            texts,
            vec![("ferris", true), ("Rust", false), ("Ferris", false)]
        );
        let edits = link_mentions(&ws2, "Rust.md", &found);
        assert_eq!(
            edits["t.md"]
                .iter()
                .map(|e| e.new_text.as_str())
                .collect::<Vec<_>>(),
            vec!["[[Rust\\|ferris]]", "[[Rust]]", "[[Rust|Ferris]]"]
        );
        assert!(may_have_mentions(&ws, "notes/Solar Panels.md"));
        assert!(!may_have_mentions(&ws, "c.md"));
        // The note is linked from a.md and b.md; nothing links to those three.
        assert_eq!(orphans(&ws), vec!["a.md", "b.md", "c.md"]);
    }
}
