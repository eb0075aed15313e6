//! The heading tree of a document: the one outline behind `textDocument/documentSymbol`,
//! `kb_outline` and the table of contents ([`crate::edit::toc`]).
//!
//! Which headings it holds: every heading that starts a section, at any level. A heading
//! nested in a block quote or a list item is not one: it has an anchor (links to it
//! resolve), but it is part of its container's content, owns no section and has no
//! element or pointer of its own (CommonMark: a block quote or list item is one
//! container block), so the outline, `kb_outline` and the table of contents leave it out.
//! Headings nest by level: a heading is the child of the nearest heading before it with
//! a lower level (a skipped level, `#` then `###`, nests directly).

use std::ops::Range;

use crate::parse::Parsed;

/// One heading of the outline, with the headings nested under it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutlineNode {
    /// Index of the heading in [`Parsed::headings`].
    pub heading: usize,
    /// Index of its element in [`Parsed::elements`].
    pub element: usize,
    /// Bytes of its section: the heading and everything up to the next heading of the
    /// same or a lower level, blank lines at its end left out.
    pub section: Range<usize>,
    /// The headings nested under it, in document order.
    pub children: Vec<OutlineNode>,
}

/// The outline of a parsed document: its top-level headings, each with the headings
/// nested under it.
pub fn outline(parsed: &Parsed) -> Vec<OutlineNode> {
    let mut roots: Vec<OutlineNode> = Vec::new();
    let mut stack: Vec<OutlineNode> = Vec::new();
    for (index, h) in parsed.section_headings() {
        let element = h.element.expect("section headings have an element");
        while stack
            .last()
            .is_some_and(|top| parsed.headings[top.heading].level >= h.level)
        {
            let done = stack.pop().expect("checked");
            attach(&mut stack, &mut roots, done);
        }
        stack.push(OutlineNode {
            heading: index,
            element,
            section: parsed.elements[element].subtree.clone(),
            children: Vec::new(),
        });
    }
    while let Some(done) = stack.pop() {
        attach(&mut stack, &mut roots, done);
    }
    roots
}

/// Adds a finished node to its parent (the top of the stack) or to the roots.
fn attach(stack: &mut [OutlineNode], roots: &mut Vec<OutlineNode>, node: OutlineNode) {
    match stack.last_mut() {
        Some(parent) => parent.children.push(node),
        None => roots.push(node),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    /// (level, text, children) of each node.
    fn shape(parsed: &Parsed, nodes: &[OutlineNode]) -> Vec<(u8, String, usize)> {
        let mut out = Vec::new();
        for n in nodes {
            out.push((
                parsed.headings[n.heading].level,
                parsed.headings[n.heading].text.clone(),
                n.children.len(),
            ));
            out.extend(shape(parsed, &n.children));
        }
        out
    }

    #[test]
    fn headings_nest_by_level_and_contained_headings_are_left_out() {
        let text = "# Title\n\n## A\n\n> ## Quoted\n\n- ## In a list\n\n### A.1\n\n# Second\n\n### Deep\n\n## B\n";
        let parsed = parse(text);
        let tree = outline(&parsed);
        assert_eq!(
            shape(&parsed, &tree),
            [
                (1, "Title".to_owned(), 1),
                (2, "A".to_owned(), 1),
                (3, "A.1".to_owned(), 0),
                (1, "Second".to_owned(), 2),
                (3, "Deep".to_owned(), 0),
                (2, "B".to_owned(), 0),
            ]
        );
        // The section of `A` runs to `# Second`; the quoted heading is inside it.
        let a = &tree[0].children[0];
        assert_eq!(
            &text[a.section.clone()],
            "## A\n\n> ## Quoted\n\n- ## In a list\n\n### A.1"
        );
        assert_eq!(&text[parsed.headings[a.heading].range.clone()], "## A");
        // The contained headings still have anchors.
        let slugs: Vec<&str> = parsed.headings.iter().map(|h| h.slug.as_str()).collect();
        assert_eq!(
            slugs,
            [
                "title",
                "a",
                "quoted",
                "in-a-list",
                "a1",
                "second",
                "deep",
                "b"
            ]
        );
    }
}
