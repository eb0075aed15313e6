//! Search units built from elements.
//!
//! A chunk is a run of consecutive top-level elements of one heading section, cut at
//! element boundaries under a byte budget; an element larger than the budget (a long
//! code block, say) is one chunk of its own and is never split. Every chunk keeps its
//! section's heading path as context, the pointer of its first element and its 1-based
//! line range. Frontmatter is metadata, not a chunk.

use std::ops::Range;

use crate::parse::{ElementKind, Parsed};

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
    /// The chunk's source text.
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
}
