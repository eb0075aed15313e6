//! The HTML comments of a document as CommonMark reads them: an HTML block that is a
//! comment (CommonMark 4.6, start condition 2) or an inline raw-HTML comment (6.6) in a
//! paragraph, heading or table cell. A `<!--` in code, math, a link destination or title,
//! the frontmatter, or escaped (`\<!--`) is text, not a comment.

use std::ops::Range;

use markdown::mdast::Node;

use super::segmented::{span, top_level_nodes};

/// An HTML comment: its bytes in the text (from `<!--` to `-->`; a block may hold
/// several comments and the text after the last on its line), and whether it is an HTML
/// block (on lines of its own) rather than inline in a paragraph or heading.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HtmlComment {
    /// Bytes of the HTML node that holds it.
    pub range: Range<usize>,
    /// An HTML block, not inline HTML.
    pub block: bool,
}

/// Every HTML comment of `text`, in document order. Empty when markdown-rs cannot parse
/// the text (only MDX constructs, which are off, make it fail).
pub fn html_comments(text: &str) -> Vec<HtmlComment> {
    let mut out = Vec::new();
    if let Ok(nodes) = top_level_nodes(text) {
        for node in &nodes {
            visit(node, true, text, &mut out);
        }
    }
    out
}

/// Collects the comments of `node`; `flow`: `node` sits where blocks do (the root, a
/// block quote, a list item, a footnote definition), so an HTML node there is a block.
fn visit(node: &Node, flow: bool, text: &str, out: &mut Vec<HtmlComment>) {
    if let Node::Html(_) = node {
        let range = span(node);
        if text
            .get(range.clone())
            .is_some_and(|s| s.trim_start().starts_with("<!--"))
        {
            out.push(HtmlComment { range, block: flow });
        }
        return;
    }
    let children_flow = matches!(
        node,
        Node::Root(_)
            | Node::Blockquote(_)
            | Node::List(_)
            | Node::ListItem(_)
            | Node::FootnoteDefinition(_)
    );
    if let Some(children) = node.children() {
        for child in children {
            visit(child, children_flow, text, out);
        }
    }
}
