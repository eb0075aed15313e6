//! A table of contents built from a document's headings, kept between two marker lines:
//!
//! ```markdown
//! <!-- toc -->
//! - [Setup](#setup)
//!   - [On Linux](#on-linux)
//! <!-- tocstop -->
//! ```
//!
//! The markers are the ones markdown-toc and several editors' TOC commands write, so a
//! table made by one of them is updated in place. Each entry links to its heading's slug
//! (the one slug rule, [`crate::parse::slug`], with GitHub's `-1` suffixes for repeats).
//!
//! Which headings are listed: the document's outline ([`crate::features::outline`]: every
//! heading but one nested in a block quote or a list item), except one whose line carries `<!-- omit in toc -->` (or `omit from
//! toc`, as Markdown All in One writes), and the title — the first heading when it is the
//! document's only level-1 heading.
//!
//! The list keeps the style of the table it replaces: the bullet (`-`, `*`, `+`) or the
//! ordered delimiter (`1.`, `1)`, with every number `1` when the old table numbered that
//! way) and the indentation of nested entries. A new table takes the bullet of the
//! document's first list, else `-`. The edit replaces only the lines between the markers,
//! and none is returned when they already read as they should, so the action is
//! idempotent.

use std::ops::Range;

use crate::document::TextEdit;
use crate::parse::{ElementKind, Heading, Parsed};
use crate::workspace::SiteGenerator;

/// The line that opens the table of contents.
pub const TOC_START: &str = "<!-- toc -->";
/// The line that closes the table of contents.
pub const TOC_END: &str = "<!-- tocstop -->";

/// How list items of the table are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListMarker {
    /// A bullet list with this character (`-`, `*` or `+`).
    Bullet(char),
    /// An ordered list with this delimiter (`.` or `)`); `all_ones` writes every number as `1`.
    Ordered {
        /// `.` or `)`.
        delimiter: char,
        /// Every item numbered `1` (lazy numbering) instead of counting up.
        all_ones: bool,
    },
}

/// The style of a table of contents: the list marker and the indentation per level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TocStyle {
    /// The list marker.
    pub marker: ListMarker,
    /// Spaces added per nesting level; `None` is the width of the parent's marker.
    pub indent: Option<usize>,
}

impl Default for TocStyle {
    fn default() -> TocStyle {
        TocStyle {
            marker: ListMarker::Bullet('-'),
            indent: None,
        }
    }
}

/// Whether the edit creates the table or refreshes an existing one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TocAction {
    /// No markers yet: the table is inserted.
    Insert,
    /// The lines between the markers are replaced.
    Update,
}

/// The edit that inserts or updates a document's table of contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TocEdit {
    /// Insert or update.
    pub action: TocAction,
    /// The one edit, against the unchanged text.
    pub edit: TextEdit,
}

/// The headings a table of contents lists (see the module documentation).
pub fn toc_headings<'a>(text: &str, parsed: &'a Parsed) -> Vec<&'a Heading> {
    let sections: Vec<&Heading> = parsed.section_headings().map(|(_, h)| h).collect();
    let n_top = sections.iter().filter(|h| h.level == 1).count();
    let skip_title = sections.first().is_some_and(|h| h.level == 1) && n_top == 1;
    sections
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !(skip_title && *i == 0))
        .filter(|(_, h)| {
            let line = text.get(h.range.clone()).unwrap_or("").to_lowercase();
            !(line.contains("<!-- omit in toc -->") || line.contains("<!-- omit from toc -->"))
        })
        .map(|(_, h)| h)
        .collect()
}

/// Escapes what would end or nest a link text.
fn link_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The list of a table of contents for `headings`, each line ended by `eol`; each entry
/// links to `anchor(heading)`.
pub fn toc_list(
    headings: &[&Heading],
    style: TocStyle,
    eol: &str,
    anchor: &dyn Fn(&Heading) -> String,
) -> String {
    let mut out = String::new();
    // Per open nesting level: the heading level, the indentation of its items, the
    // width of its last marker and its item count.
    let mut stack: Vec<(u8, usize, usize, usize)> = Vec::new();
    for h in headings {
        while stack.last().is_some_and(|(level, ..)| *level > h.level) {
            stack.pop();
        }
        // Now the innermost open level is at most this heading's: a deeper heading opens a
        // nested list, an equal one continues the list.
        if stack.last().is_none_or(|(level, ..)| *level < h.level) {
            let indent = stack.last().map_or(0, |(_, indent, width, _)| {
                indent + style.indent.map_or(*width, |i| i.max(*width))
            });
            stack.push((h.level, indent, 0, 0));
        }
        let Some(top) = stack.last_mut() else {
            continue;
        };
        top.3 += 1;
        let marker = match style.marker {
            ListMarker::Bullet(c) => c.to_string(),
            ListMarker::Ordered {
                delimiter,
                all_ones,
            } => format!("{}{delimiter}", if all_ones { 1 } else { top.3 }),
        };
        top.2 = marker.len() + 1;
        out.push_str(&" ".repeat(top.1));
        out.push_str(&marker);
        out.push(' ');
        out.push('[');
        out.push_str(&link_text(&h.text));
        out.push_str("](#");
        out.push_str(&anchor(h));
        out.push(')');
        out.push_str(eol);
    }
    out
}

/// The lines of `text`: (bytes of the line without its break, offset after the break).
fn lines(text: &str) -> impl Iterator<Item = (Range<usize>, usize)> + '_ {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= text.len() {
            return None;
        }
        let rest = &text[start..];
        let (len, brk) = match rest.find(['\n', '\r']) {
            Some(i) if rest[i..].starts_with("\r\n") => (i, 2),
            Some(i) => (i, 1),
            None => (rest.len(), 0),
        };
        let line = start..start + len;
        start += len + brk;
        Some((line, start))
    })
}

/// True when `line` (trimmed) is the marker `marker`, spaces inside the comment ignored.
fn is_marker(line: &str, marker: &str) -> bool {
    let squeeze = |s: &str| {
        s.chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_lowercase()
    };
    squeeze(line) == squeeze(marker)
}

/// The bytes between the markers of the table of contents (from after the opening
/// marker's line break to the start of the closing marker's line), when the document has
/// both markers in that order outside code blocks.
pub fn toc_region(text: &str, parsed: &Parsed) -> Option<Range<usize>> {
    let in_code = |offset: usize| {
        parsed
            .elements
            .iter()
            .any(|e| e.kind == ElementKind::Code && e.range.contains(&offset))
    };
    let mut start = None;
    for (line, next) in lines(text) {
        if in_code(line.start) {
            continue;
        }
        match start {
            None if is_marker(&text[line.clone()], TOC_START) => start = Some(next),
            Some(s) if is_marker(&text[line.clone()], TOC_END) => return Some(s..line.start),
            _ => {}
        }
    }
    None
}

/// The marker of a list item line (`- x`, `  1. x`): its indentation and marker.
fn list_item(line: &str) -> Option<(usize, ListMarker, u32)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    let mut chars = rest.chars();
    match chars.next()? {
        c @ ('-' | '*' | '+') if chars.next() == Some(' ') => {
            Some((indent, ListMarker::Bullet(c), 0))
        }
        c if c.is_ascii_digit() => {
            let digits = rest.chars().take_while(char::is_ascii_digit).count();
            let mut after = rest[digits..].chars();
            let delimiter = after.next().filter(|d| matches!(d, '.' | ')'))?;
            (after.next() == Some(' ')).then_some(())?;
            let number = rest[..digits].parse().ok()?;
            Some((
                indent,
                ListMarker::Ordered {
                    delimiter,
                    all_ones: false,
                },
                number,
            ))
        }
        _ => None,
    }
}

/// The style of an existing table (its lines), `None` when it holds no list item.
pub fn style_of(list: &str) -> Option<TocStyle> {
    let items: Vec<(usize, ListMarker, u32)> = list
        .lines()
        .filter_map(|l| list_item(l.trim_end_matches('\r')))
        .collect();
    let (base, marker, _) = *items.first()?;
    let indent = items
        .iter()
        .map(|(i, ..)| *i)
        .filter(|i| *i > base)
        .min()
        .map(|i| i - base);
    let marker = match marker {
        ListMarker::Ordered { delimiter, .. } => {
            let top: Vec<u32> = items
                .iter()
                .filter(|(i, ..)| *i == base)
                .map(|(.., n)| *n)
                .collect();
            ListMarker::Ordered {
                delimiter,
                all_ones: top.len() > 1 && top.iter().all(|n| *n == 1),
            }
        }
        bullet => bullet,
    };
    // The marker's own width is the default; only a different indentation is kept.
    let default_width = match marker {
        ListMarker::Bullet(_) => 2,
        ListMarker::Ordered { .. } => 3,
    };
    Some(TocStyle {
        marker,
        indent: indent.filter(|i| *i != default_width),
    })
}

/// The bullet of the document's first bullet list, for a new table.
fn document_style(text: &str, parsed: &Parsed) -> TocStyle {
    let marker = parsed
        .elements
        .iter()
        .filter(|e| e.kind == ElementKind::ListItem)
        .find_map(
            |e| match list_item(text.get(e.range.clone())?.trim_start()) {
                Some((_, ListMarker::Bullet(c), _)) => Some(c),
                _ => None,
            },
        );
    TocStyle {
        marker: ListMarker::Bullet(marker.unwrap_or('-')),
        indent: None,
    }
}

/// The edit that brings the document's table of contents up to date: an update of the
/// lines between its markers, or — without markers — a new table after the title (or
/// before the first listed heading). `None` when the table is already up to date, or
/// when there is no heading to list and no table to update. Entries link to GitHub's slug,
/// or to the id `generator` gives the heading on a published site ([`Parsed::heading_anchors`]).
pub fn toc_edit(text: &str, parsed: &Parsed, generator: SiteGenerator) -> Option<TocEdit> {
    let headings = toc_headings(text, parsed);
    let anchors = parsed.heading_anchors(generator);
    let anchor = |h: &Heading| -> String {
        parsed
            .headings
            .iter()
            .position(|x| std::ptr::eq(x, h))
            .and_then(|i| anchors.get(i).cloned())
            .unwrap_or_else(|| h.slug.clone())
    };
    let eol = super::dominant_eol(text);
    if let Some(region) = toc_region(text, parsed) {
        let old = &text[region.clone()];
        let style = style_of(old).unwrap_or_else(|| document_style(text, parsed));
        let new = toc_list(&headings, style, eol, &anchor);
        return (new != old).then_some(TocEdit {
            action: TocAction::Update,
            edit: TextEdit {
                range: region,
                new_text: new,
            },
        });
    }
    let first = *headings.first()?;
    let list = toc_list(&headings, document_style(text, parsed), eol, &anchor);
    let table = format!("{TOC_START}{eol}{list}{TOC_END}{eol}");
    let title = parsed
        .headings
        .first()
        .filter(|h| !std::ptr::eq(*h, first) && h.range.end <= first.range.start);
    let (at, new_text) = match title {
        // After the title's line and its line break: a blank line, then the table.
        Some(t) => {
            let after = lines(text)
                .find(|(line, _)| line.end >= t.range.end)
                .map_or(text.len(), |(_, next)| next);
            (after, format!("{eol}{table}"))
        }
        None => (first.range.start, format!("{table}{eol}")),
    };
    Some(TocEdit {
        action: TocAction::Insert,
        edit: TextEdit {
            range: at..at,
            new_text,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    /// The text after applying the table-of-contents edit, if there is one.
    fn apply(text: &str) -> Option<(TocAction, String)> {
        let toc = toc_edit(text, &parse(text), SiteGenerator::None)?;
        let mut out = text.to_string();
        out.replace_range(toc.edit.range.clone(), &toc.edit.new_text);
        Some((toc.action, out))
    }

    #[test]
    fn nesting_follows_levels_and_skips_omitted_and_contained_headings() {
        let text = "# T\n\n## A [b] c\n\n#### Deep\n\n### Mid\n\n## B <!-- omit in toc -->\n\n> ## Quoted\n\n## C\n";
        let (action, out) = apply(text).unwrap();
        assert_eq!(action, TocAction::Insert);
        assert_eq!(
            out,
            "# T\n\n<!-- toc -->\n- [A \\[b\\] c](#a-b-c)\n  - [Deep](#deep)\n  - [Mid](#mid)\n- [C](#c)\n<!-- tocstop -->\n\n## A [b] c\n\n#### Deep\n\n### Mid\n\n## B <!-- omit in toc -->\n\n> ## Quoted\n\n## C\n"
        );
        // Idempotent: the table just written is up to date.
        assert_eq!(apply(&out), None);
    }

    #[test]
    fn several_top_level_headings_are_all_listed() {
        let (_, out) = apply("# One\n\n# Two\n").unwrap();
        assert_eq!(
            out,
            "<!-- toc -->\n- [One](#one)\n- [Two](#two)\n<!-- tocstop -->\n\n# One\n\n# Two\n"
        );
    }

    #[test]
    fn crlf_and_custom_indentation_are_kept() {
        let text = "# T\r\n\r\n<!--toc-->\r\n+ [Old](#old)\r\n    + [X](#x)\r\n<!-- TOCSTOP -->\r\n\r\n## A\r\n\r\n### B\r\n";
        let (action, out) = apply(text).unwrap();
        assert_eq!(action, TocAction::Update);
        assert_eq!(
            out,
            "# T\r\n\r\n<!--toc-->\r\n+ [A](#a)\r\n    + [B](#b)\r\n<!-- TOCSTOP -->\r\n\r\n## A\r\n\r\n### B\r\n"
        );
        assert_eq!(apply(&out), None);
    }

    #[test]
    fn lazy_ordered_numbering_is_kept() {
        let text =
            "<!-- toc -->\n1) [X](#x)\n1) [Y](#y)\n<!-- tocstop -->\n\n## A\n\n## B\n\n## C\n";
        let (_, out) = apply(text).unwrap();
        assert!(
            out.starts_with("<!-- toc -->\n1) [A](#a)\n1) [B](#b)\n1) [C](#c)\n<!-- tocstop -->\n"),
            "{out}"
        );
    }

    #[test]
    fn markers_in_code_are_not_a_table() {
        let text = "# T\n\n```\n<!-- toc -->\n<!-- tocstop -->\n```\n\n## A\n";
        let (action, _) = apply(text).unwrap();
        assert_eq!(action, TocAction::Insert);
        assert_eq!(toc_region(text, &parse(text)), None);
    }

    #[test]
    fn nothing_to_list_is_no_edit() {
        assert_eq!(apply("# Only a title\n\ntext\n"), None);
        assert_eq!(apply("no headings\n"), None);
    }
}
