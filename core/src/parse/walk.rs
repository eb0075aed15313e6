//! The walk over the markdown-rs tree: top-level blocks become elements with logical
//! addresses (`1.2.p3`, `li1`, `1.t1`) and owned sections, headings get their slugs and
//! custom ids, and every node is handed to the inline pass (`inline.rs`) for its links.
//!
//! The walk also records where the source scanner (`scanner.rs`) must not look: code,
//! HTML, math and frontmatter (`excluded`), and what the tree's links, references and
//! definitions already claim (`covered`).

use std::ops::Range;

use markdown::mdast::{self, Node};

use crate::document::LineIndex;
use crate::pointer::{ElementKind, hash_bytes};

use super::attribute_list::{SplitHeading, split_attribute_list};
use super::parsed::{Anchor, Element, Heading, Parsed};
use super::slug::Slugger;

/// What the walk found, before the source scanner runs.
pub(super) struct Walk {
    /// Elements, headings, anchors, definitions, tree links, frontmatter and problems.
    pub(super) parsed: Parsed,
    /// Line index of the source.
    pub(super) lines: LineIndex,
    /// Ranges where nothing is a link: code, inline code, HTML, math, frontmatter.
    pub(super) excluded: Vec<Range<usize>>,
    /// Ranges already claimed by links, references and definitions the parser found.
    pub(super) covered: Vec<Range<usize>>,
}

/// Walks the top-level mdast `nodes` of `text` (positions are byte offsets into `text`).
pub(super) fn walk<'n>(text: &str, nodes: impl IntoIterator<Item = &'n Node>) -> Walk {
    let lines = LineIndex::new(text);
    let mut builder = Builder {
        text,
        lines,
        parsed: Parsed::default(),
        excluded: Vec::new(),
        covered: Vec::new(),
        slugger: Slugger::default(),
    };
    let document = document_element(text, &builder.lines);
    builder.parsed.elements.push(document);
    builder.blocks(nodes);
    builder.finish_sections();
    Walk {
        parsed: builder.parsed,
        lines: builder.lines,
        excluded: builder.excluded,
        covered: builder.covered,
    }
}

/// The `document` element: the whole text.
pub(super) fn document_element(text: &str, lines: &LineIndex) -> Element {
    let hash = hash_bytes(text.as_bytes());
    Element {
        kind: ElementKind::Document,
        logical: "document".into(),
        range: 0..text.len(),
        subtree: 0..text.len(),
        self_hash: hash,
        subtree_hash: hash,
        level: 0,
        parent: None,
        start_line: 1,
        end_line: lines.len_lines() as u32,
    }
}

/// A scope that numbers its children: the root, a heading or a list item.
struct Scope {
    element: Option<usize>,
    logical: String,
    level: u8,
    counters: Vec<(&'static str, u32)>,
}

impl Scope {
    fn next(&mut self, prefix: &'static str) -> u32 {
        if let Some(c) = self.counters.iter_mut().find(|(p, _)| *p == prefix) {
            c.1 += 1;
            return c.1;
        }
        self.counters.push((prefix, 1));
        1
    }

    fn child_logical(&self, segment: &str) -> String {
        if self.logical.is_empty() {
            segment.to_string()
        } else {
            format!("{}.{}", self.logical, segment)
        }
    }
}

/// The state of one walk; its inline half is in `inline.rs`.
pub(super) struct Builder<'a> {
    pub(super) text: &'a str,
    pub(super) lines: LineIndex,
    pub(super) parsed: Parsed,
    /// Ranges where nothing is a link: code, inline code, HTML, math, frontmatter.
    pub(super) excluded: Vec<Range<usize>>,
    /// Ranges already claimed by links, references and definitions the parser found.
    pub(super) covered: Vec<Range<usize>>,
    slugger: Slugger,
}

/// The byte range of a node's position (empty when it has none).
pub(super) fn span(node_pos: Option<&markdown::unist::Position>) -> Range<usize> {
    node_pos.map_or(0..0, |p| p.start.offset..p.end.offset)
}

impl Builder<'_> {
    /// Trims trailing line endings and blanks so a block's bytes do not depend on what follows it.
    fn trim_end(&self, range: Range<usize>) -> Range<usize> {
        let bytes = self.text.as_bytes();
        let mut end = range.end.min(bytes.len());
        while end > range.start && matches!(bytes[end - 1], b'\n' | b'\r' | b' ' | b'\t') {
            end -= 1;
        }
        range.start..end
    }

    fn push_element(
        &mut self,
        kind: ElementKind,
        logical: String,
        range: Range<usize>,
        subtree: Range<usize>,
        level: u8,
        parent: Option<usize>,
    ) -> usize {
        let bytes = self.text.as_bytes();
        let self_hash = hash_bytes(&bytes[range.clone()]);
        let subtree_hash = if subtree == range {
            self_hash
        } else {
            hash_bytes(&bytes[subtree.clone()])
        };
        let start_line = self.lines.line_of(range.start) as u32 + 1;
        let end_line = self
            .lines
            .line_of(range.end.saturating_sub(1).max(range.start)) as u32
            + 1;
        self.parsed.elements.push(Element {
            kind,
            logical: logical.into(),
            range,
            subtree,
            self_hash,
            subtree_hash,
            level,
            parent,
            start_line,
            end_line,
        });
        self.parsed.elements.len() - 1
    }

    /// Walks the top-level blocks, numbering them under the heading that owns them.
    fn blocks<'n>(&mut self, children: impl IntoIterator<Item = &'n Node>) {
        let mut stack: Vec<Scope> = vec![Scope {
            element: None,
            logical: String::new(),
            level: 0,
            counters: Vec::new(),
        }];
        for node in children {
            if let Node::Heading(h) = node {
                while stack.len() > 1 && stack.last().is_some_and(|s| s.level >= h.depth) {
                    stack.pop();
                }
                let parent = stack.last_mut().expect("root scope is never popped");
                let n = parent.next("");
                let logical = parent.child_logical(&n.to_string());
                let parent_el = parent.element;
                let range = self.trim_end(span(h.position.as_ref()));
                // The section is fixed up in `finish_sections` once all headings are known.
                let idx = self.push_element(
                    ElementKind::Heading,
                    logical.clone(),
                    range.clone(),
                    range.clone(),
                    h.depth,
                    parent_el,
                );
                self.heading(h, Some(idx));
                stack.push(Scope {
                    element: Some(idx),
                    logical,
                    level: h.depth,
                    counters: Vec::new(),
                });
                continue;
            }
            let scope = stack.last_mut().expect("root scope is never popped");
            self.block(node, scope);
        }
    }

    fn block(&mut self, node: &Node, scope: &mut Scope) {
        let kind = match node {
            Node::Paragraph(_) => ElementKind::Paragraph,
            Node::Table(_) => ElementKind::Table,
            Node::Blockquote(_) => ElementKind::BlockQuote,
            Node::Code(_) => ElementKind::Code,
            Node::Html(_) => ElementKind::Html,
            Node::ThematicBreak(_) => ElementKind::ThematicBreak,
            Node::Definition(_) => ElementKind::Definition,
            Node::FootnoteDefinition(_) => ElementKind::FootnoteDefinition,
            Node::Math(_) => ElementKind::Math,
            Node::Yaml(_) | Node::Toml(_) => ElementKind::Frontmatter,
            Node::List(list) => {
                for item in &list.children {
                    self.list_item(item, scope);
                }
                return;
            }
            other => {
                // Any other flow node (none in GFM) is still scanned for links.
                self.inline(other);
                return;
            }
        };
        let range = self.trim_end(span(node.position()));
        let logical = if kind == ElementKind::Frontmatter {
            "frontmatter".to_string()
        } else {
            let n = scope.next(kind.prefix());
            scope.child_logical(&format!("{}{}", kind.prefix(), n))
        };
        self.push_element(
            kind,
            logical,
            range.clone(),
            range.clone(),
            0,
            scope.element,
        );
        if let Node::Paragraph(p) = node {
            self.definition_terms(&p.children, range);
        }
        self.inline(node);
    }

    /// Records the definition terms of the paragraph at `range` whose inline nodes are
    /// `children` ([`Parsed::definition_terms`]): its lines before the first that starts
    /// (after at most three spaces) with `:` and a space or tab, when that is not its
    /// first line.
    fn definition_terms(&mut self, children: &[Node], range: Range<usize>) {
        let source = &self.text[range.clone()];
        let is_definition = |line: &str| {
            let indent = line.len() - line.trim_start_matches(' ').len();
            indent <= 3 && {
                let rest = &line[indent..];
                rest.starts_with(": ") || rest.starts_with(":\t")
            }
        };
        let mut terms = Vec::new();
        let mut at = range.start;
        for line in source.split_inclusive('\n') {
            let bare = line.trim_end_matches(['\n', '\r']);
            if is_definition(bare) {
                break;
            }
            terms.push(at..at + bare.len());
            at += line.len();
        }
        if terms.is_empty() || terms.len() == source.split_inclusive('\n').count() {
            return;
        }
        let mut text = String::new();
        for child in children {
            collect_text(child, &mut text, true);
        }
        let lines: Vec<&str> = text.split('\n').collect();
        if lines.len() <= terms.len() {
            return;
        }
        for (line, bytes) in lines.iter().zip(terms) {
            let line = line.trim();
            if !line.is_empty() {
                self.parsed.definition_terms.push((line.to_string(), bytes));
            }
        }
    }

    fn list_item(&mut self, node: &Node, scope: &mut Scope) {
        let Node::ListItem(item) = node else {
            self.inline(node);
            return;
        };
        let subtree = self.trim_end(span(item.position.as_ref()));
        // The item itself ends where its first nested list starts.
        let own_end = item
            .children
            .iter()
            .find_map(|c| {
                if let Node::List(l) = c {
                    l.position.as_ref().map(|p| p.start.offset)
                } else {
                    None
                }
            })
            .unwrap_or(subtree.end);
        let range = self.trim_end(subtree.start..own_end.max(subtree.start));
        let n = scope.next("li");
        let logical = scope.child_logical(&format!("li{n}"));
        let idx = self.push_element(
            ElementKind::ListItem,
            logical.clone(),
            range,
            subtree,
            0,
            scope.element,
        );
        let mut inner = Scope {
            element: Some(idx),
            logical,
            level: scope.level,
            counters: Vec::new(),
        };
        for child in &item.children {
            match child {
                Node::List(list) => {
                    for sub in &list.children {
                        self.list_item(sub, &mut inner);
                    }
                }
                other => self.inline(other),
            }
        }
    }

    pub(super) fn heading(&mut self, h: &mdast::Heading, element: Option<usize>) {
        let range = match element {
            Some(i) => self.parsed.elements[i].range.clone(),
            None => self.trim_end(span(h.position.as_ref())),
        };
        let mut text = String::new();
        for child in &h.children {
            collect_text(child, &mut text, true);
        }
        let text_range = match (h.children.first(), h.children.last()) {
            (Some(first), Some(last)) => span(first.position()).start..span(last.position()).end,
            _ => range.clone(),
        };
        // GitHub slugs the whole text (it has no attribute lists); mdBook, Pandoc and
        // MkDocs take the list off and use its id, or else the slug of the rest.
        let slug = self.slugger.slug(text.trim());
        let SplitHeading {
            text,
            id: custom_id,
            has_list,
        } = split_attribute_list(text.trim());
        // A rename replaces the name and keeps the list (and so the id) as written.
        let text_range = match self.text.get(text_range.clone()) {
            Some(source) if has_list => match source.rfind('{') {
                Some(open) => text_range.start..text_range.start + source[..open].trim_end().len(),
                None => text_range,
            },
            _ => text_range,
        };
        let text = one_line(text);
        // Site generators leave images out of a heading's id (Python-Markdown's `toc`
        // takes its text nodes, markdown-it-anchor its text tokens).
        let site_text = if text_holds_image(&h.children) {
            let mut without_alt = String::new();
            for child in &h.children {
                collect_text(child, &mut without_alt, false);
            }
            Some(one_line(split_attribute_list(without_alt.trim()).text))
                .map(|t| t.trim().to_string())
                .filter(|t| *t != text)
        } else {
            None
        };
        if let Some(id) = &custom_id {
            self.parsed.anchors.push(Anchor {
                id: id.clone(),
                range: range.clone(),
            });
        } else if has_list {
            self.parsed.anchors.push(Anchor {
                id: super::slug::slug(&text),
                range: range.clone(),
            });
        }
        // The tabs of Microsoft's docs platform: a heading that is one link to `#tab/…`
        // defines that anchor, `# [Windows](#tab/windows)`. Other self-links in headings
        // do not (GitHub gives such a heading the slug of its text).
        if let [Node::Link(l)] = h.children.as_slice()
            && let Some(id) = l.url.strip_prefix('#')
            && id.len() > "tab/".len()
            && id.starts_with("tab/")
        {
            self.parsed.anchors.push(Anchor {
                id: super::percent_decode(id),
                range: range.clone(),
            });
        }
        self.parsed.headings.push(Heading {
            level: h.depth,
            text,
            slug,
            custom_id,
            site_text,
            range,
            text_range,
            element,
        });
        for child in &h.children {
            self.inline(child);
        }
    }

    /// Sets each heading's section: up to the start of the line of the next heading of
    /// the same or a higher level, or the end of the document.
    fn finish_sections(&mut self) {
        let heading_idx: Vec<usize> = (0..self.parsed.elements.len())
            .filter(|&i| self.parsed.elements[i].kind == ElementKind::Heading)
            .collect();
        for (n, &i) in heading_idx.iter().enumerate() {
            let level = self.parsed.elements[i].level;
            let end = heading_idx[n + 1..]
                .iter()
                .find(|&&j| self.parsed.elements[j].level <= level)
                .map(|&j| {
                    let start = self.parsed.elements[j].range.start;
                    self.lines
                        .line_start(self.lines.line_of(start))
                        .unwrap_or(start)
                })
                .unwrap_or(self.text.len());
            let start = self.parsed.elements[i].range.start;
            let subtree = self.trim_end(start..end);
            let el = &mut self.parsed.elements[i];
            el.subtree_hash = hash_bytes(&self.text.as_bytes()[subtree.clone()]);
            el.subtree = subtree;
        }
    }
}

/// The plain text of a node: inline markup removed, code and math kept, HTML dropped.
fn collect_text(node: &Node, out: &mut String, image_alt: bool) {
    match node {
        Node::Text(t) => out.push_str(&t.value),
        Node::InlineCode(c) => out.push_str(&c.value),
        Node::InlineMath(m) => out.push_str(&m.value),
        Node::Image(i) if image_alt => out.push_str(&i.alt),
        Node::Image(_) | Node::ImageReference(_) => {}
        Node::Break(_) => out.push(' '),
        Node::Html(_) | Node::FootnoteReference(_) => {}
        other => {
            if let Some(children) = other.children() {
                for c in children {
                    collect_text(c, out, image_alt);
                }
            }
        }
    }
}

/// Whether any of `nodes` is or holds an image with alt text.
fn text_holds_image(nodes: &[Node]) -> bool {
    nodes.iter().any(|node| match node {
        Node::Image(i) => !i.alt.is_empty(),
        other => other.children().is_some_and(|c| text_holds_image(c)),
    })
}

/// A heading's name on one line: a setext heading's lines joined with spaces.
fn one_line(text: String) -> String {
    if text.contains(['\n', '\r']) {
        text.split(['\n', '\r'])
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        text
    }
}
