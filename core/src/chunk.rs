//! Search units built from elements.
//!
//! A chunk is a run of consecutive top-level elements of one heading section, cut at
//! element boundaries under a byte budget; an element larger than the budget (a long
//! code block, say) is one chunk of its own and is never split, but for a GFM table:
//! a table larger than the budget is cut between rows, and every part after the first
//! starts with the table's header and delimiter rows, so that a row is found with its
//! column names (a table under the budget is never cut). Every chunk keeps its
//! section's heading path as context, the pointer of its first element (a table part:
//! the table's) and its 1-based line range (a table part: its rows'). Frontmatter is
//! metadata, not a chunk.

use std::ops::Range;

use crate::parse::{ElementKind, Parsed};

/// The version of the rule [`chunks`] cuts by: raised whenever the same text and budget
/// give other chunks, so that an index records its notes again (2: tables over the
/// budget cut between rows).
pub const RULE_VERSION: u32 = 2;

/// One search unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// Position in the document, from 0.
    pub seq: u32,
    /// Pointer of the first element.
    pub pointer: String,
    /// Texts of the headings above, outermost first (the section's own heading included).
    pub heading_path: Vec<String>,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
    /// Bytes of the document the chunk covers.
    pub range: Range<usize>,
    /// The chunk's source text: the document's bytes in `range`, but for a table part
    /// after the first, which is the table's header and delimiter rows followed by them.
    pub text: String,
}

/// Splits a parsed document into chunks of at most about `budget` bytes.
pub fn chunks(text: &str, parsed: &Parsed, budget: usize) -> Vec<Chunk> {
    let elements = &parsed.elements;
    // Top-level elements: owned by the root or by a heading, not nested in a list item.
    let top: Vec<usize> = (0..elements.len())
        .filter(|&i| {
            let e = &elements[i];
            e.kind != ElementKind::Document
                && e.kind != ElementKind::Frontmatter
                && e.parent
                    .is_none_or(|p| elements[p].kind == ElementKind::Heading)
        })
        .collect();
    // Heading text by element index, so a heading path costs its depth, not the heading count.
    let mut heading_text: Vec<Option<&str>> = vec![None; elements.len()];
    for h in &parsed.headings {
        if let Some(e) = h.element {
            heading_text[e] = Some(&h.text);
        }
    }
    let heading_path = |i: usize| -> Vec<String> {
        let mut path = Vec::new();
        let mut cur = Some(i);
        while let Some(c) = cur {
            if let Some(text) = heading_text[c] {
                path.push(text.to_string());
            }
            cur = elements[c].parent;
        }
        path.reverse();
        path
    };

    let mut out: Vec<Chunk> = Vec::new();
    let mut current: Option<(usize, usize, Vec<String>)> = None; // (first element, last element, heading path)
    let flush = |current: &mut Option<(usize, usize, Vec<String>)>, out: &mut Vec<Chunk>| {
        if let Some((first, last, path)) = current.take() {
            let start = elements[first].range.start;
            let end = elements[last].subtree.end.max(elements[last].range.end);
            let end = if elements[last].kind == ElementKind::Heading {
                elements[last].range.end
            } else {
                end
            };
            out.push(Chunk {
                seq: out.len() as u32,
                pointer: elements[first].pointer().to_string(),
                heading_path: path,
                start_line: elements[first].start_line,
                end_line: parsed.line_of(end.saturating_sub(1).max(start)),
                range: start..end,
                text: text[start..end].to_string(),
            });
        }
    };
    for &i in &top {
        let e = &elements[i];
        if e.kind == ElementKind::Table
            && e.range.len() > budget
            && let Some(table) = TableRows::of(text, e.range.clone())
        {
            // A chunk that holds only its heading takes the first part.
            let lead = match &current {
                Some((first, last, _))
                    if first == last && elements[*first].kind == ElementKind::Heading =>
                {
                    Some(*first)
                }
                _ => None,
            };
            let path = match (&current, lead) {
                (Some((_, _, path)), Some(_)) => path.clone(),
                _ => e.parent.map(&heading_path).unwrap_or_default(),
            };
            if lead.is_none() {
                flush(&mut current, &mut out);
            }
            current = None;
            for (n, rows) in table.parts(budget).into_iter().enumerate() {
                let (start, first_line, pointer, text) = match (n, lead) {
                    (0, Some(h)) => (
                        elements[h].range.start,
                        elements[h].start_line,
                        elements[h].pointer().to_string(),
                        text[elements[h].range.start..rows.end].to_string(),
                    ),
                    (0, None) => (
                        e.range.start,
                        e.start_line,
                        e.pointer().to_string(),
                        text[e.range.start..rows.end].to_string(),
                    ),
                    _ => (
                        rows.start,
                        parsed.line_of(rows.start),
                        e.pointer().to_string(),
                        format!("{}{}", table.head, &text[rows.clone()]),
                    ),
                };
                out.push(Chunk {
                    seq: out.len() as u32,
                    pointer,
                    heading_path: path.clone(),
                    start_line: first_line,
                    end_line: parsed.line_of(rows.end.saturating_sub(1).max(start)),
                    range: start..rows.end,
                    text,
                });
            }
            continue;
        }
        if e.kind == ElementKind::Heading {
            flush(&mut current, &mut out);
            current = Some((i, i, heading_path(i)));
            continue;
        }
        let own_end = e.subtree.end.max(e.range.end);
        match &mut current {
            Some((first, last, _)) if own_end - elements[*first].range.start <= budget => *last = i,
            // A chunk that holds only its heading takes the element whatever its size.
            Some((first, last, _))
                if *first == *last && elements[*first].kind == ElementKind::Heading =>
            {
                *last = i
            }
            _ => {
                let path = current
                    .as_ref()
                    .map(|c| c.2.clone())
                    .unwrap_or_else(|| e.parent.map(&heading_path).unwrap_or_default());
                flush(&mut current, &mut out);
                current = Some((i, i, path));
            }
        }
    }
    flush(&mut current, &mut out);
    out
}

/// The rows of a GFM table's source, for cutting it between rows.
struct TableRows<'a> {
    /// The header and delimiter rows, each with its line ending.
    head: &'a str,
    /// The byte ranges of the body rows in the document, without line endings.
    rows: Vec<Range<usize>>,
}

impl<'a> TableRows<'a> {
    /// The rows of the table at `range` of `text`; `None` when it has no body row.
    fn of(text: &'a str, range: Range<usize>) -> Option<Self> {
        let source = &text[range.clone()];
        let mut lines = source.split_inclusive('\n').scan(range.start, |at, line| {
            let start = *at;
            *at += line.len();
            Some(start..start + line.trim_end_matches(['\n', '\r']).len())
        });
        let _header = lines.next()?;
        let delimiter = lines.next()?;
        let head_end = delimiter.end + line_ending(text, delimiter.end);
        let rows: Vec<Range<usize>> = lines.filter(|r| !r.is_empty()).collect();
        (!rows.is_empty()).then(|| TableRows {
            head: &text[range.start..head_end],
            rows,
        })
    }

    /// The body rows cut into parts of consecutive rows, each part with the head at most
    /// `budget` bytes (a part holds at least one row): the byte range of each part's rows.
    fn parts(&self, budget: usize) -> Vec<Range<usize>> {
        let mut parts: Vec<Range<usize>> = Vec::new();
        let mut bytes = self.head.len();
        for row in &self.rows {
            // A row's bytes with its line ending: the gap to the next row's start.
            let row_bytes = row.len() + 1;
            match parts.last_mut() {
                Some(part) if bytes + row_bytes <= budget => {
                    part.end = row.end;
                    bytes += row_bytes;
                }
                _ => {
                    parts.push(row.clone());
                    bytes = self.head.len() + row_bytes;
                }
            }
        }
        parts
    }
}

/// The length of the line ending at byte `at` of `text` (`\n`, `\r\n`, or 0 at the end).
fn line_ending(text: &str, at: usize) -> usize {
    let rest = &text.as_bytes()[at..];
    match rest {
        [b'\r', b'\n', ..] => 2,
        [b'\n', ..] => 1,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    #[test]
    fn sections_split_under_budget_and_keep_heading_paths() {
        let text = "# Guide\n\nIntro.\n\n## Install\n\nStep one is long enough.\n\nStep two is long too.\n\n```sh\nmake install && make check && make more\n```\n\n# Other\n";
        let parsed = parse(text);
        let chunks = chunks(text, &parsed, 40);
        let summary: Vec<(Vec<&str>, u32, u32, &str)> = chunks
            .iter()
            .map(|c| {
                (
                    c.heading_path.iter().map(String::as_str).collect(),
                    c.start_line,
                    c.end_line,
                    c.text.as_str(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                (vec!["Guide"], 1, 3, "# Guide\n\nIntro."),
                (
                    vec!["Guide", "Install"],
                    5,
                    7,
                    "## Install\n\nStep one is long enough."
                ),
                (vec!["Guide", "Install"], 9, 9, "Step two is long too."),
                (
                    vec!["Guide", "Install"],
                    11,
                    13,
                    "```sh\nmake install && make check && make more\n```"
                ),
                (vec!["Other"], 15, 15, "# Other"),
            ]
        );
        assert_eq!(
            chunks[1].pointer,
            parsed
                .elements
                .iter()
                .find(|e| e.logical == "1.1")
                .unwrap()
                .pointer()
                .to_string()
        );
        assert_eq!(
            chunks.iter().map(|c| c.seq).collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 4]
        );
    }

    #[test]
    fn content_before_the_first_heading_and_list_items_with_children() {
        let text = "---\ntitle: T\n---\nLead.\n\n- a\n  - a1\n- b\n";
        let parsed = parse(text);
        let chunks = chunks(text, &parsed, 1000);
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].text, "Lead.\n\n- a\n  - a1\n- b");
        assert_eq!(chunks[0].heading_path, Vec::<String>::new());
        assert_eq!((chunks[0].start_line, chunks[0].end_line), (4, 8));
    }

    /// (heading path, start line, end line, text, pointer's logical address) of each chunk.
    fn summary(text: &str, budget: usize) -> Vec<(Vec<String>, u32, u32, String, String)> {
        let parsed = parse(text);
        chunks(text, &parsed, budget)
            .into_iter()
            .map(|c| {
                let logical = parsed
                    .elements
                    .iter()
                    .find(|e| e.pointer().to_string() == c.pointer)
                    .map(|e| e.logical.to_string())
                    .unwrap_or_default();
                (c.heading_path, c.start_line, c.end_line, c.text, logical)
            })
            .collect()
    }

    #[test]
    fn a_table_over_the_budget_is_cut_between_rows_and_each_part_has_the_header() {
        let text = "# Prices\n\n| Item | Price |\n|---|---|\n| apple | 120 |\n| pear | 150 |\n| plum | 90 |\n\nAfter.\n";
        // Head 28 bytes, rows 16, 15 and 14: two rows fit in 60 bytes, the third does not.
        let path = vec!["Prices".to_string()];
        assert_eq!(
            summary(text, 60),
            vec![
                (
                    path.clone(),
                    1,
                    6,
                    "# Prices\n\n| Item | Price |\n|---|---|\n| apple | 120 |\n| pear | 150 |"
                        .to_string(),
                    "1".to_string()
                ),
                (
                    path.clone(),
                    7,
                    7,
                    "| Item | Price |\n|---|---|\n| plum | 90 |".to_string(),
                    "1.t1".to_string()
                ),
                (path, 9, 9, "After.".to_string(), "1.p1".to_string()),
            ]
        );
    }

    #[test]
    fn a_table_under_the_budget_is_never_cut_and_a_table_after_text_starts_its_own_chunk() {
        let text = "Intro line.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n";
        assert_eq!(
            summary(text, 1000),
            vec![(vec![], 1, 6, text.trim_end().to_string(), "p1".to_string())]
        );
        // With CRLF line endings, cut after each row: the head keeps its line endings.
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(
            summary(&crlf, 30),
            vec![
                (vec![], 1, 1, "Intro line.".to_string(), "p1".to_string()),
                (
                    vec![],
                    3,
                    5,
                    "| a | b |\r\n|---|---|\r\n| 1 | 2 |".to_string(),
                    "t1".to_string()
                ),
                (
                    vec![],
                    6,
                    6,
                    "| a | b |\r\n|---|---|\r\n| 3 | 4 |".to_string(),
                    "t1".to_string()
                ),
            ]
        );
    }
}
