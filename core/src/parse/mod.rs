//! Markdown → elements, headings, links and other symbols of one document.
//!
//! Parsing never fails: broken Markdown is input, and whatever the parser cannot
//! make sense of is kept as text. The parser is markdown-rs (CommonMark + GFM +
//! frontmatter); its positions are UTF-8 byte offsets into the exact source, which
//! is what every range here is. Wiki links, block ids and undefined references are
//! found by our own scanner over the source, outside code, HTML and math.
//!
//! This file is the entry: [`parse`] refuses texts nested too deeply or too crowded (`nesting.rs`),
//! runs markdown-rs (in segments for a large document, `segmented.rs`), walks the tree
//! (`walk.rs` for blocks, elements and headings; `inline.rs` for the links and anchors
//! inside them; `frontmatter.rs` for the metadata) and then scans the source for what
//! markdown-rs does not report (`scanner.rs`). The result's types are in `parsed.rs`,
//! the reading of labels and destinations in `link_text.rs`.

use std::ops::Range;

use markdown::mdast::Node;

use crate::document::LineIndex;

pub use crate::pointer::ElementKind;
pub use link_text::{has_scheme, normalize_label, percent_decode};
pub use nesting::{
    MAX_CONTAINER_INDENT, MAX_CONTAINER_MARKERS, MAX_DELIMITER_RUN, MAX_INLINE_OPENERS_PER_BLOCK,
    nesting_problem,
};
pub use parsed::{
    Anchor, Definition, Element, FragmentNames, Heading, Link, LinkKind, LinkSyntax, Logical,
    Parsed, Problem, Tag, definition_term_ids, file_title, footnote_ids, frontmatter_strings,
    heading_anchors,
};
pub use resolve::{Resolution, ResolveError, resolve_pointer};
pub use tag_syntax::{clean as clean_tag, is_tag_char, is_tag_name, within as tag_within};

mod admonitions;
mod attribute_list;
pub mod frontmatter;
pub mod html_comments;
mod html_links;
mod inline;
mod link_text;
mod nesting;
mod opaque_spans;
mod parsed;
mod scanner;
mod tag_syntax;
mod walk;

pub mod incremental;
pub mod outline;
pub mod resolve;
pub mod segmented;
pub mod slug;

/// The markdown-rs options: CommonMark + GFM + math blocks, frontmatter only where a document starts.
pub(crate) fn parse_options(frontmatter: bool) -> markdown::ParseOptions {
    let mut options = markdown::ParseOptions::gfm();
    options.constructs.frontmatter = frontmatter;
    // `$$ … $$` blocks are math (Obsidian, GitHub, KaTeX): opaque, never headings or links.
    // Inline `$…$` stays text: a price such as `$5 and $10` must not hide what is between.
    options.constructs.math_flow = true;
    options
}

/// markdown-rs, with a panic inside it turned into an error: markdown-rs 1.0 panics
/// ("Cannot push to non-parent") on some inputs, e.g. two copies of a file with YAML
/// frontmatter one after the other, and parsing must never fail.
///
/// MkDocs' admonitions, details and content tabs are read as Markdown, not as indented
/// code (see [`admonitions`]); every offset is still one into `text`.
pub(crate) fn to_mdast(text: &str, frontmatter: bool) -> Result<Node, String> {
    let root = commonmark_mdast(text, frontmatter)?;
    if !admonitions::may_hold(text) {
        return Ok(root);
    }
    admonitions::open(text, root, |t| commonmark_mdast(t, frontmatter))
}

/// markdown-rs's own tree of `text` (see [`to_mdast`]).
fn commonmark_mdast(text: &str, frontmatter: bool) -> Result<Node, String> {
    let options = parse_options(frontmatter);
    // The options hold no state a panic could leave half-updated.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        markdown::to_mdast(text, &options)
    })) {
        Ok(result) => result.map_err(|m| m.to_string()),
        Err(_) => Err(
            "markdown-rs could not parse this document (internal panic); it is kept as plain text"
                .to_string(),
        ),
    }
}

/// Parses a document. Never fails; see [`Parsed::problems`].
///
/// A document that [`nesting_problem`] rejects gets only its `document` element and
/// one problem saying why it was not parsed.
pub fn parse(text: &str) -> Parsed {
    if let Some(reason) = nesting_problem(text) {
        return unparsed(text, format!("not parsed: {reason}"));
    }
    match segmented::top_level_nodes(text) {
        Ok(nodes) => build(text, nodes.iter()),
        // markdown-rs only errors on MDX constructs (off) or panics; keep the text anyway.
        Err(message) => unparsed(text, message),
    }
}

/// Builds the parse result of `text` from its top-level mdast nodes (positions are byte
/// offsets into `text`). [`parse`] passes the children of one root; the incremental
/// parser passes the nodes of several separately parsed chunks.
pub(crate) fn build<'n>(text: &str, nodes: impl IntoIterator<Item = &'n Node>) -> Parsed {
    let walk = walk::walk(text, nodes);
    let mut parsed = walk.parsed;
    let _ = scanner::scan(text, &mut parsed, &walk.excluded, walk.covered);
    parsed.links.sort_by_key(|l| l.range.start);
    parsed.lines = Some(walk.lines);
    parsed.shrink_to_fit();
    parsed
}

/// Where a document's prose is, from one parse ([`prose_map`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProseMap {
    /// The bytes that are not prose a link could replace, sorted by start: code (blocks
    /// and spans), HTML, math (blocks and inline), Obsidian comments, the frontmatter,
    /// links (every kind, wiki links included), link reference definitions, headings and
    /// `#tags`. All of the text when it is not parsed ([`parse`]'s problems).
    pub not_prose: Vec<Range<usize>>,
    /// The bytes of the GFM tables, in source order.
    pub tables: Vec<Range<usize>>,
}

/// The [`ProseMap`] of `text`: unlinked mentions are looked for outside its `not_prose`
/// ([`crate::features::mentions`]).
pub fn prose_map(text: &str) -> ProseMap {
    let everything = ProseMap {
        not_prose: std::iter::once(0..text.len()).collect(),
        tables: Vec::new(),
    };
    if nesting_problem(text).is_some() {
        return everything;
    }
    let Ok(nodes) = segmented::top_level_nodes(text) else {
        return everything;
    };
    let walk = walk::walk(text, nodes.iter());
    let mut parsed = walk.parsed;
    let mut out = scanner::scan(text, &mut parsed, &walk.excluded, walk.covered);
    out.extend(parsed.links.iter().map(|l| l.range.clone()));
    out.extend(parsed.definitions.iter().map(|d| d.range.clone()));
    out.extend(parsed.headings.iter().map(|h| h.range.clone()));
    out.extend(
        parsed
            .tags
            .iter()
            .filter(|t| !t.in_frontmatter)
            .map(|t| t.range.clone()),
    );
    out.sort_by_key(|r| r.start);
    let tables = parsed
        .elements
        .iter()
        .filter(|e| e.kind == crate::pointer::ElementKind::Table)
        .map(|e| e.range.clone())
        .collect();
    ProseMap {
        not_prose: out,
        tables,
    }
}

/// The headings of `text` by a line scan ([`outline::outline`]), as a parse holding
/// only them (elements and headings, numbered as [`parse`] numbers them) and the
/// `document` element: no links, other blocks or problems. What a
/// buffer too large to parse in full is served as (the language server's rule,
/// [`incremental::IncrementalParser::keeping_blocks_up_to`]); linear and about a hundred
/// times cheaper than [`parse`]. Heading ids are GitHub's slugs of the scanned text.
pub fn headings_only(text: &str) -> Parsed {
    use markdown::mdast::{Heading as HeadingNode, Text};
    use markdown::unist::Position;
    // Positions carry byte offsets, which is all the walk reads of them.
    let at = |range: &Range<usize>| Some(Position::new(0, 0, range.start, 0, 0, range.end));
    let nodes: Vec<Node> = outline::outline(text)
        .headings
        .into_iter()
        .map(|heading| {
            // The text is on the first line (a setext heading's underline is the second).
            let all = &text[heading.range.clone()];
            let line = all.split('\n').next().unwrap_or(all);
            let lead = line.len() - line.trim_start_matches(['#', ' ', '\t', '>']).len();
            let start = (heading.range.start + lead).min(heading.range.end);
            // An ATX heading's closing sequence (after a space) is not its text.
            let mut body = line.trim_end();
            let unclosed = body.trim_end_matches('#');
            if line.trim_start_matches([' ', '>']).starts_with('#')
                && unclosed.len() < body.len()
                && unclosed.ends_with([' ', '\t'])
            {
                body = unclosed.trim_end();
            }
            let end = (heading.range.start + body.len()).max(start);
            Node::Heading(HeadingNode {
                depth: heading.level,
                position: at(&heading.range),
                children: vec![Node::Text(Text {
                    value: heading.text,
                    position: at(&(start..end)),
                })],
            })
        })
        .collect();
    let walk = walk::walk(text, nodes.iter());
    let mut parsed = walk.parsed;
    parsed.lines = Some(walk.lines);
    parsed.shrink_to_fit();
    parsed
}

/// A parse holding only the `document` element and one problem.
fn unparsed(text: &str, message: String) -> Parsed {
    let lines = LineIndex::new(text);
    let mut parsed = Parsed::default();
    parsed.elements.push(walk::document_element(text, &lines));
    parsed.lines = Some(lines);
    parsed.problems.push(Problem {
        range: 0..text.len(),
        message,
    });
    parsed.shrink_to_fit();
    parsed
}

#[cfg(test)]
mod tests;
