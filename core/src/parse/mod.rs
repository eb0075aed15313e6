//! Markdown → elements, headings, links and other symbols of one document.
//!
//! Parsing never fails: broken Markdown is input, and whatever the parser cannot
//! make sense of is kept as text. The parser is markdown-rs (CommonMark + GFM +
//! frontmatter); its positions are UTF-8 byte offsets into the exact source, which
//! is what every range here is. Wiki links, block ids and undefined references are
//! found by our own scanner over the source, outside code, HTML and math.

use std::ops::Range;
use std::sync::OnceLock;

use markdown::mdast::{self, Node};
use regex::Regex;

use crate::document::LineIndex;
use crate::pointer::{Pointer, hash_bytes};
use slug::Slugger;

pub use crate::pointer::ElementKind;
pub use resolve::{Resolution, ResolveError, resolve_pointer};

/// One addressable block of a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Element {
    /// What kind of block this is.
    pub kind: ElementKind,
    /// Logical address following heading nesting, e.g. `1.2.p3` or `li1`.
    pub logical: String,
    /// Bytes of the element itself, trailing line endings excluded.
    pub range: Range<usize>,
    /// Bytes the element owns: a heading's section (up to the next heading of the same
    /// or a higher level), a list item with its nested lists, else `range`.
    pub subtree: Range<usize>,
    /// XxHash64 of the bytes in `range`.
    pub self_hash: u64,
    /// XxHash64 of the bytes in `subtree`.
    pub subtree_hash: u64,
    /// Heading level 1–6; 0 for other kinds.
    pub level: u8,
    /// Index (in [`Parsed::elements`]) of the heading or list item that owns this element.
    pub parent: Option<usize>,
    /// First line of `range`, 1-based.
    pub start_line: u32,
    /// Last line of `range`, 1-based, inclusive.
    pub end_line: u32,
}

impl Element {
    /// The concrete pointer `logical~selfHash~subtreeHash`.
    pub fn pointer(&self) -> Pointer {
        Pointer {
            logical: self.logical.clone(),
            self_hash: self.self_hash,
            subtree_hash: self.subtree_hash,
        }
    }
}

/// A heading with its anchor slug.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heading {
    /// Level 1–6.
    pub level: u8,
    /// Plain text of the heading (inline markup removed, a trailing `{#id}` removed).
    pub text: String,
    /// GitHub-compatible anchor slug, unique in the document (`-1`, `-2` for repeats).
    pub slug: String,
    /// An explicit id from a trailing `{#id}` attribute, if any.
    pub custom_id: Option<String>,
    /// Bytes of the heading line(s).
    pub range: Range<usize>,
    /// Bytes of the heading's text content.
    pub text_range: Range<usize>,
    /// Index of the heading's element in [`Parsed::elements`]; `None` for a heading
    /// nested in a container (block quote, list item), which has an anchor but is part
    /// of its container's element.
    pub element: Option<usize>,
}

/// An HTML anchor: `<a name="x">` or any tag with `id="x"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anchor {
    /// The id or name.
    pub id: String,
    /// Bytes of the HTML that declares it.
    pub range: Range<usize>,
}

/// A link reference definition `[label]: destination` (CommonMark 4.7).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Definition {
    /// The label as written.
    pub label: String,
    /// The label normalised for matching (CommonMark 4.7: whitespace collapsed, Unicode case fold).
    pub key: String,
    /// Bytes of the whole definition.
    pub range: Range<usize>,
    /// Bytes of the label text between the brackets.
    pub label_range: Range<usize>,
}

/// How a link is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    /// `[text](dest)`.
    Inline,
    /// `![alt](dest)`.
    Image,
    /// `<https://…>` or a GFM literal autolink.
    Autolink,
    /// `[text][label]`, `[label][]` or `[label]` with a definition.
    Reference,
    /// `![alt][label]`.
    ImageReference,
    /// The destination of a link reference definition.
    Definition,
    /// `[[target]]` and its variants.
    Wiki,
    /// `![[target]]`.
    WikiEmbed,
    /// `[^label]`.
    Footnote,
    /// `[text][label]`, `[label][]` or `[^label]` whose label has no definition.
    UndefinedReference,
}

/// One link of a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// How it is written.
    pub kind: LinkKind,
    /// Bytes of the whole link.
    pub range: Range<usize>,
    /// Bytes of the destination as written (for wiki links: the target part), if it has one.
    pub dest_range: Option<Range<usize>>,
    /// Destination: percent-decoded path or URL, fragment and query string excluded
    /// (empty for `#frag` links).
    pub dest: String,
    /// Fragment after `#`, percent-decoded, without the `#`.
    pub fragment: Option<String>,
    /// Bytes of the fragment as written (after `#`), if any.
    pub fragment_range: Option<Range<usize>>,
    /// For references and footnotes: the normalised label; for wiki links: the normalised
    /// text between the brackets (`target#heading|alias`).
    pub label: Option<String>,
    /// True when the destination has a URL scheme (`https:`, `mailto:`) or is protocol-relative.
    pub external: bool,
}

/// Problems the parser noticed (never fatal).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Bytes concerned.
    pub range: Range<usize>,
    /// What is wrong.
    pub message: String,
}

/// Everything known about one document after parsing.
#[derive(Clone, Debug, Default)]
pub struct Parsed {
    /// Block elements in source order; the first is always the `document` element.
    pub elements: Vec<Element>,
    /// Headings in source order.
    pub headings: Vec<Heading>,
    /// HTML anchors.
    pub anchors: Vec<Anchor>,
    /// Link reference definitions in source order.
    pub definitions: Vec<Definition>,
    /// GFM footnote definitions: (normalised label, bytes).
    pub footnote_definitions: Vec<(String, Range<usize>)>,
    /// Obsidian-style block ids (`^id` at the end of a block): (id, bytes).
    pub block_ids: Vec<(String, Range<usize>)>,
    /// Links in source order.
    pub links: Vec<Link>,
    /// Frontmatter parsed as YAML (or TOML), if present and well-formed.
    pub frontmatter: Option<serde_json::Value>,
    /// Problems noticed while parsing.
    pub problems: Vec<Problem>,
    /// Line index of the source.
    pub lines: Option<LineIndex>,
    /// Fragment names, built on first use by [`Parsed::fragment_names`].
    fragment_names: std::sync::OnceLock<FragmentNames>,
}

/// Every name a link fragment may use for a document, in sets for constant-time lookup.
#[derive(Clone, Debug, Default)]
pub struct FragmentNames {
    /// Heading slugs and HTML/`{#id}` anchor ids, as written.
    pub ids: std::collections::HashSet<String>,
    /// The same, lowercased.
    pub ids_lower: std::collections::HashSet<String>,
    /// Heading texts and their undeduplicated slugs (wiki links name headings by text).
    pub texts: std::collections::HashSet<String>,
    /// The same, lowercased.
    pub texts_lower: std::collections::HashSet<String>,
    /// Block ids (`^id`), without the caret.
    pub blocks: std::collections::HashSet<String>,
    /// The same, lowercased.
    pub blocks_lower: std::collections::HashSet<String>,
}

impl Parsed {
    /// The document title: frontmatter `title`, else the first level-1 heading, else the first heading.
    pub fn title(&self) -> Option<String> {
        if let Some(t) = self
            .frontmatter
            .as_ref()
            .and_then(|f| f.get("title"))
            .and_then(|v| v.as_str())
        {
            return Some(t.to_string());
        }
        self.headings
            .iter()
            .find(|h| h.level == 1)
            .or_else(|| self.headings.first())
            .map(|h| h.text.clone())
    }

    /// The names link fragments may use for this document (built once, then cached).
    pub fn fragment_names(&self) -> &FragmentNames {
        self.fragment_names.get_or_init(|| {
            let mut names = FragmentNames::default();
            for h in &self.headings {
                names.ids.insert(h.slug.clone());
                names.texts.insert(h.text.clone());
                names.texts.insert(slug::slug(&h.text));
            }
            for a in &self.anchors {
                names.ids.insert(a.id.clone());
            }
            for (id, _) in &self.block_ids {
                names.blocks.insert(id.clone());
            }
            names.ids_lower = names.ids.iter().map(|s| s.to_lowercase()).collect();
            names.texts_lower = names.texts.iter().map(|s| s.to_lowercase()).collect();
            names.blocks_lower = names.blocks.iter().map(|s| s.to_lowercase()).collect();
            names
        })
    }

    /// 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> u32 {
        self.lines
            .as_ref()
            .map_or(1, |l| l.line_of(offset) as u32 + 1)
    }
}

/// Most container markers (`>`, list markers) at the start of one line that folio parses.
pub const MAX_CONTAINER_MARKERS: usize = 100;
/// Most columns of indentation before a list marker or `>` that folio parses.
pub const MAX_CONTAINER_INDENT: usize = 256;
/// Longest run of emphasis delimiters (`*`, `_`) or of `[` that folio parses.
pub const MAX_DELIMITER_RUN: usize = 1000;

/// Why `text` is too deeply nested to parse safely, if it is.
///
/// markdown-rs recurses once per level of nesting and takes time that grows faster than
/// the nesting depth, so a small file with thousands of levels (`>>>>…`, `- - - …`,
/// hundreds of indented list levels, `****…x****…`) would exhaust a thread's stack or
/// take minutes. Real documents stay far below these limits; such a file is reported
/// instead of parsed.
pub fn nesting_problem(text: &str) -> Option<String> {
    for (n, line) in text.lines().enumerate() {
        let bytes = line.as_bytes();
        let (mut i, mut col, mut markers) = (0usize, 0usize, 0usize);
        loop {
            while i < bytes.len() && matches!(bytes[i], b' ' | b'\t') {
                col += if bytes[i] == b'\t' { 4 - col % 4 } else { 1 };
                i += 1;
            }
            let Some(&b) = bytes.get(i) else { break };
            let marker_len = match b {
                b'>' => 1,
                b'-' | b'*' | b'+' if matches!(bytes.get(i + 1), Some(b' ' | b'\t') | None) => 1,
                b'0'..=b'9' => {
                    let digits = bytes[i..].iter().take_while(|c| c.is_ascii_digit()).count();
                    match bytes.get(i + digits) {
                        Some(b'.' | b')')
                            if digits <= 9
                                && matches!(
                                    bytes.get(i + digits + 1),
                                    Some(b' ' | b'\t') | None
                                ) =>
                        {
                            digits + 1
                        }
                        _ => 0,
                    }
                }
                _ => 0,
            };
            if marker_len == 0 {
                break;
            }
            if col > MAX_CONTAINER_INDENT {
                return Some(format!(
                    "line {} is indented {col} columns before a list marker or `>` (limit {MAX_CONTAINER_INDENT})",
                    n + 1
                ));
            }
            markers += 1;
            if markers > MAX_CONTAINER_MARKERS {
                return Some(format!(
                    "line {} opens more than {MAX_CONTAINER_MARKERS} nested block quotes or lists",
                    n + 1
                ));
            }
            i += marker_len;
            col += marker_len;
        }
    }
    let mut run = 0usize;
    let mut prev = 0u8;
    for &b in text.as_bytes() {
        if matches!(b, b'*' | b'_' | b'[') && (b == prev || (b == b'[' && prev == b'!')) {
            run += 1;
        } else if matches!(b, b'*' | b'_' | b'[') {
            run = 1;
        } else if !(b == b'!' && prev == b'[') {
            run = 0;
        }
        if run > MAX_DELIMITER_RUN {
            return Some(format!(
                "a run of more than {MAX_DELIMITER_RUN} `*`, `_` or `[` characters"
            ));
        }
        prev = b;
    }
    None
}

/// The markdown-rs options: CommonMark + GFM, frontmatter only where a document starts.
pub(crate) fn parse_options(frontmatter: bool) -> markdown::ParseOptions {
    let mut options = markdown::ParseOptions::gfm();
    options.constructs.frontmatter = frontmatter;
    options
}

/// markdown-rs, with a panic inside it turned into an error: markdown-rs 1.0 panics
/// ("Cannot push to non-parent") on some inputs, e.g. two copies of a file with YAML
/// frontmatter one after the other, and parsing must never fail.
pub(crate) fn to_mdast(text: &str, frontmatter: bool) -> Result<Node, String> {
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
    builder.scan_text_constructs();
    builder.parsed.links.sort_by_key(|l| l.range.start);
    let mut parsed = builder.parsed;
    parsed.lines = Some(builder.lines);
    parsed
}

/// A parse holding only the `document` element and one problem.
fn unparsed(text: &str, message: String) -> Parsed {
    let lines = LineIndex::new(text);
    let mut parsed = Parsed::default();
    parsed.elements.push(document_element(text, &lines));
    parsed.lines = Some(lines);
    parsed.problems.push(Problem {
        range: 0..text.len(),
        message,
    });
    parsed
}

fn document_element(text: &str, lines: &LineIndex) -> Element {
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

struct Builder<'a> {
    text: &'a str,
    lines: LineIndex,
    parsed: Parsed,
    /// Ranges where nothing is a link: code, inline code, HTML, math, frontmatter.
    excluded: Vec<Range<usize>>,
    /// Ranges already claimed by links, references and definitions the parser found.
    covered: Vec<Range<usize>>,
    slugger: Slugger,
}

fn span(node_pos: Option<&markdown::unist::Position>) -> Range<usize> {
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
            logical,
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
        self.inline(node);
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

    fn heading(&mut self, h: &mdast::Heading, element: Option<usize>) {
        let range = match element {
            Some(i) => self.parsed.elements[i].range.clone(),
            None => self.trim_end(span(h.position.as_ref())),
        };
        let mut text = String::new();
        for child in &h.children {
            collect_text(child, &mut text);
        }
        let text_range = match (h.children.first(), h.children.last()) {
            (Some(first), Some(last)) => span(first.position()).start..span(last.position()).end,
            _ => range.clone(),
        };
        // GitHub slugs the whole text (it has no `{#id}` syntax); mdBook and Pandoc use the id.
        let slug = self.slugger.slug(text.trim());
        let (text, custom_id) = split_custom_id(text.trim());
        if let Some(id) = &custom_id {
            self.parsed.anchors.push(Anchor {
                id: id.clone(),
                range: range.clone(),
            });
        }
        self.parsed.headings.push(Heading {
            level: h.depth,
            text,
            slug,
            custom_id,
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

    /// Collects links, images, anchors, definitions and footnotes inside a node.
    fn inline(&mut self, node: &Node) {
        let range = span(node.position());
        match node {
            Node::Code(_) | Node::InlineCode(_) | Node::Math(_) | Node::InlineMath(_) => {
                self.excluded.push(range);
                return;
            }
            Node::Yaml(y) => {
                self.excluded.push(range.clone());
                match serde_norway::from_str::<serde_json::Value>(&y.value) {
                    Ok(v) if v.is_object() => self.parsed.frontmatter = Some(v),
                    Ok(_) => {}
                    Err(e) => self.parsed.problems.push(Problem {
                        range,
                        message: format!("frontmatter is not valid YAML: {e}"),
                    }),
                }
                return;
            }
            Node::Toml(t) => {
                self.excluded.push(range.clone());
                match toml::from_str::<serde_json::Value>(&t.value) {
                    Ok(v) => self.parsed.frontmatter = Some(v),
                    Err(e) => self.parsed.problems.push(Problem {
                        range,
                        message: format!("frontmatter is not valid TOML: {e}"),
                    }),
                }
                return;
            }
            Node::Html(h) => {
                self.excluded.push(range.clone());
                for id in html_anchor_ids(&h.value) {
                    self.parsed.anchors.push(Anchor {
                        id,
                        range: range.clone(),
                    });
                }
                return;
            }
            Node::Link(l) => {
                self.covered.push(range.clone());
                let source = &self.text[range.clone()];
                let autolink = source.starts_with('<') || !source.starts_with('[');
                let dest_range = if autolink {
                    let inner = if source.starts_with('<') {
                        range.start + 1..range.end - 1
                    } else {
                        range.clone()
                    };
                    Some(inner)
                } else {
                    inline_dest_range(
                        self.text,
                        &range,
                        l.children.last().map(|c| span(c.position()).end),
                    )
                };
                let kind = if autolink {
                    LinkKind::Autolink
                } else {
                    LinkKind::Inline
                };
                self.push_link(kind, range, dest_range, &l.url, None);
            }
            Node::Image(i) => {
                self.covered.push(range.clone());
                let dest_range = inline_dest_range(self.text, &range, None);
                self.push_link(LinkKind::Image, range, dest_range, &i.url, None);
                return;
            }
            Node::LinkReference(r) => {
                self.covered.push(range.clone());
                self.push_reference(
                    LinkKind::Reference,
                    range,
                    r.label.as_deref().unwrap_or(&r.identifier),
                );
            }
            Node::ImageReference(r) => {
                self.covered.push(range.clone());
                self.push_reference(
                    LinkKind::ImageReference,
                    range,
                    r.label.as_deref().unwrap_or(&r.identifier),
                );
                return;
            }
            Node::Definition(d) => {
                self.covered.push(range.clone());
                let label = d.label.clone().unwrap_or_else(|| d.identifier.clone());
                let source = &self.text[range.clone()];
                let label_range = source
                    .find('[')
                    .and_then(|open| {
                        source
                            .find("]:")
                            .map(|close| range.start + open + 1..range.start + close)
                    })
                    .unwrap_or(range.clone());
                let key = normalize_label(&label);
                self.parsed.definitions.push(Definition {
                    label,
                    key,
                    range: range.clone(),
                    label_range,
                });
                let dest_range = definition_dest_range(self.text, &range);
                self.push_link(LinkKind::Definition, range, dest_range, &d.url, None);
                return;
            }
            Node::FootnoteReference(f) => {
                self.covered.push(range.clone());
                self.push_reference(
                    LinkKind::Footnote,
                    range,
                    f.label.as_deref().unwrap_or(&f.identifier),
                );
                return;
            }
            Node::Heading(h) => {
                // A heading inside a block quote or list item still gets an anchor.
                self.heading(h, None);
                return;
            }
            Node::FootnoteDefinition(f) => {
                let label_end = self.text[range.clone()]
                    .find("]:")
                    .map_or(range.start, |i| range.start + i + 2);
                self.covered.push(range.start..label_end);
                self.parsed.footnote_definitions.push((
                    normalize_label(f.label.as_deref().unwrap_or(&f.identifier)),
                    range.clone(),
                ));
            }
            _ => {}
        }
        if let Some(children) = node.children() {
            for child in children {
                self.inline(child);
            }
        }
    }

    fn push_reference(&mut self, kind: LinkKind, range: Range<usize>, identifier: &str) {
        self.parsed.links.push(Link {
            kind,
            range,
            dest_range: None,
            dest: String::new(),
            fragment: None,
            fragment_range: None,
            label: Some(normalize_label(identifier)),
            external: false,
        });
    }

    fn push_link(
        &mut self,
        kind: LinkKind,
        range: Range<usize>,
        dest_range: Option<Range<usize>>,
        url: &str,
        label: Option<String>,
    ) {
        let external = has_scheme(url);
        let (path, fragment) = match url.find('#') {
            Some(i) if !external => (&url[..i], Some(&url[i + 1..])),
            _ => (url, None),
        };
        // A query string is not part of the path; it is split off before percent-decoding,
        // so `what%3F.md` names the file `what?.md`.
        let path = if external {
            path
        } else {
            path.split('?').next().unwrap_or("")
        };
        let fragment_range = match (&dest_range, fragment) {
            (Some(d), Some(_)) => self.text[d.clone()]
                .find('#')
                .map(|i| d.start + i + 1..d.end),
            _ => None,
        };
        let dest = if external {
            url.to_string()
        } else {
            percent_decode(path)
        };
        self.parsed.links.push(Link {
            kind,
            range,
            dest_range,
            dest,
            fragment: fragment.map(percent_decode),
            fragment_range,
            label,
            external,
        });
    }

    /// An index of the ranges where nothing else can be a link, leaving out `skip`.
    fn taken(&self, skip: &std::collections::HashSet<(usize, usize)>) -> RangeIndex {
        RangeIndex::new(
            self.excluded
                .iter()
                .chain(&self.covered)
                .filter(|r| !skip.contains(&(r.start, r.end)))
                .cloned()
                .collect(),
        )
    }

    /// Finds wiki links, block ids and undefined references in the source outside code,
    /// HTML, math and links the parser already found.
    fn scan_text_constructs(&mut self) {
        let text = self.text;
        // `[[x]]` where `[x]` has a definition (Foam writes one per wiki link) was parsed as a
        // reference inside brackets: it is the wiki link that was meant.
        let bracketed_refs: std::collections::HashSet<(usize, usize)> = self
            .parsed
            .links
            .iter()
            .filter(|l| {
                l.kind == LinkKind::Reference
                    && l.range.start > 0
                    && text.as_bytes()[l.range.start - 1] == b'['
                    && text.as_bytes().get(l.range.end) == Some(&b']')
            })
            .map(|l| (l.range.start, l.range.end))
            .collect();
        let taken = self.taken(&bracketed_refs);
        let mut replaced: std::collections::HashSet<(usize, usize)> =
            std::collections::HashSet::new();
        let mut wiki_ranges = Vec::new();
        for m in wiki_regex().captures_iter(text) {
            let whole = m.get(0).expect("group 0 always matches");
            let range = whole.start()..whole.end();
            if is_escaped(text, range.start) || taken.overlaps(&range) {
                continue;
            }
            let bracket_start = if m.get(1).is_some() {
                range.start + 1
            } else {
                range.start
            };
            let inner_ref = (bracket_start + 1, range.end - 1);
            if bracketed_refs.contains(&inner_ref) {
                replaced.insert(inner_ref);
            }
            let embed = m.get(1).is_some();
            let inner = m.get(2).expect("wiki regex has group 2");
            let body = inner.as_str();
            let target_part = body.split('|').next().unwrap_or("");
            let (target, fragment) = match target_part.find('#') {
                Some(i) => (&target_part[..i], Some(target_part[i + 1..].trim())),
                None => (target_part, None),
            };
            let target_trimmed = target.trim();
            let lead = target.len() - target.trim_start().len();
            let dest_range = inner.start() + lead..inner.start() + lead + target_trimmed.len();
            let fragment_range = fragment.map(|f| {
                inner.start() + target.len() + 1..inner.start() + target.len() + 1 + f.len()
            });
            wiki_ranges.push(range.clone());
            self.parsed.links.push(Link {
                kind: if embed {
                    LinkKind::WikiEmbed
                } else {
                    LinkKind::Wiki
                },
                range,
                dest_range: Some(dest_range),
                dest: target_trimmed.to_string(),
                fragment: fragment.map(str::to_string),
                fragment_range,
                label: Some(normalize_label(body)),
                external: false,
            });
        }
        if !replaced.is_empty() {
            self.parsed.links.retain(|l| {
                !(l.kind == LinkKind::Reference && replaced.contains(&(l.range.start, l.range.end)))
            });
            self.covered
                .retain(|r| !replaced.contains(&(r.start, r.end)));
        }
        self.covered.extend(wiki_ranges);
        let taken = self.taken(&std::collections::HashSet::new());
        for m in block_id_regex().captures_iter(text) {
            let id = m.get(1).expect("block id regex has group 1");
            let range = id.start() - 1..id.end();
            if !taken.overlaps(&range) {
                self.parsed.block_ids.push((id.as_str().to_string(), range));
            }
        }
        for m in reference_regex().captures_iter(text) {
            let whole = m.get(0).expect("group 0 always matches");
            let range = whole.start()..whole.end();
            if taken.overlaps(&range) || is_escaped(text, range.start) {
                continue;
            }
            // `a[0][1]` is code-like text, not a reference: require a non-word character before.
            if text[..range.start]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == ']' || c == '!')
            {
                continue;
            }
            let text_label = m.get(1).expect("group 1").as_str();
            let label = m
                .get(2)
                .map(|g| g.as_str())
                .filter(|l| !l.is_empty())
                .unwrap_or(text_label);
            if label.trim().is_empty() {
                continue;
            }
            self.push_undefined(range, label);
        }
        let taken = self.taken(&std::collections::HashSet::new());
        for m in footnote_regex().find_iter(text) {
            let range = m.start()..m.end();
            if taken.overlaps(&range) || is_escaped(text, range.start) {
                continue;
            }
            let label = &text[range.start + 2..range.end - 1];
            self.push_undefined(range, &format!("^{label}"));
        }
    }

    fn push_undefined(&mut self, range: Range<usize>, label: &str) {
        self.covered.push(range.clone());
        self.parsed.links.push(Link {
            kind: LinkKind::UndefinedReference,
            range,
            dest_range: None,
            dest: String::new(),
            fragment: None,
            fragment_range: None,
            label: Some(normalize_label(label)),
            external: false,
        });
    }
}

/// Byte ranges sorted by start with a running maximum of their ends, so "does this
/// range overlap any of them" takes a binary search instead of a scan.
struct RangeIndex {
    starts: Vec<usize>,
    max_end: Vec<usize>,
}

impl RangeIndex {
    fn new(mut ranges: Vec<Range<usize>>) -> RangeIndex {
        ranges.sort_by_key(|r| r.start);
        let starts = ranges.iter().map(|r| r.start).collect();
        let mut max_end = Vec::with_capacity(ranges.len());
        let mut running = 0;
        for r in &ranges {
            running = running.max(r.end);
            max_end.push(running);
        }
        RangeIndex { starts, max_end }
    }

    /// True when a range overlaps `range` (shares at least one byte).
    fn overlaps(&self, range: &Range<usize>) -> bool {
        // Ranges starting before `range.end` overlap it iff one of them ends after `range.start`.
        let n = self.starts.partition_point(|&s| s < range.end);
        n > 0 && self.max_end[n - 1] > range.start
    }
}

fn is_escaped(text: &str, at: usize) -> bool {
    let preceding = text.as_bytes()[..at]
        .iter()
        .rev()
        .take_while(|&&b| b == b'\\')
        .count();
    preceding % 2 == 1
}

fn wiki_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(!)?\[\[([^\[\]\r\n]+)\]\]").expect("valid regex"))
}

fn block_id_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(?m)[ \t]\^([A-Za-z0-9-]+)[ \t]*\r?$").expect("valid regex"))
}

fn reference_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\[([^\[\]\r\n]+)\]\[([^\[\]\r\n]*)\]").expect("valid regex"))
}

fn footnote_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\[\^[^\[\]\s]+\]").expect("valid regex"))
}

/// Normalises a link label for matching (CommonMark 4.7): trims, collapses inner
/// whitespace to one space and case-folds (lower, upper, lower — as markdown-rs does,
/// so `ß` matches `SS`).
pub fn normalize_label(label: &str) -> String {
    let collapsed = label.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed.to_lowercase().to_uppercase().to_lowercase()
}

/// True when `url` starts with a URL scheme (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":")
/// or is protocol-relative (`//host`).
pub fn has_scheme(url: &str) -> bool {
    if url.starts_with("//") {
        return true;
    }
    let Some(colon) = url.find(':') else {
        return false;
    };
    let scheme = &url[..colon];
    // One letter would be a Windows drive; treat it as a path.
    scheme.len() > 1
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Percent-decodes a destination (RFC 3986); invalid UTF-8 after decoding keeps the input.
pub fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8()
        .map_or_else(|_| s.to_string(), |c| c.into_owned())
}

fn collect_text(node: &Node, out: &mut String) {
    match node {
        Node::Text(t) => out.push_str(&t.value),
        Node::InlineCode(c) => out.push_str(&c.value),
        Node::InlineMath(m) => out.push_str(&m.value),
        Node::Image(i) => out.push_str(&i.alt),
        Node::Break(_) => out.push(' '),
        Node::Html(_) | Node::FootnoteReference(_) => {}
        other => {
            if let Some(children) = other.children() {
                for c in children {
                    collect_text(c, out);
                }
            }
        }
    }
}

/// Splits a trailing `{#id}` attribute (Pandoc, mdBook) off a heading's text.
fn split_custom_id(text: &str) -> (String, Option<String>) {
    if let Some(stripped) = text.strip_suffix('}')
        && let Some(open) = stripped.rfind("{#")
    {
        let id = &stripped[open + 2..];
        if !id.is_empty() && !id.contains(char::is_whitespace) {
            return (
                stripped[..open].trim_end().to_string(),
                Some(id.to_string()),
            );
        }
    }
    (text.to_string(), None)
}

/// Ids declared by HTML: `id="…"` on any tag and `name="…"` on `<a>`.
fn html_anchor_ids(html: &str) -> Vec<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r#"(?i)<(a|[a-z][a-z0-9]*)\b[^>]*?\s(id|name)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+))"#)
            .expect("valid regex")
    });
    let mut ids = Vec::new();
    for c in re.captures_iter(html) {
        let tag = c.get(1).map_or("", |m| m.as_str());
        let attr = c.get(2).map_or("", |m| m.as_str());
        if attr.eq_ignore_ascii_case("name") && !tag.eq_ignore_ascii_case("a") {
            continue;
        }
        if let Some(v) = c.get(3).or(c.get(4)).or(c.get(5)) {
            ids.push(v.as_str().to_string());
        }
    }
    ids
}

/// Bytes of the destination of an inline link or image, found after the `](`.
fn inline_dest_range(
    text: &str,
    range: &Range<usize>,
    children_end: Option<usize>,
) -> Option<Range<usize>> {
    let search_from = children_end.unwrap_or(range.start);
    let rel = text[search_from..range.end].find("](")?;
    let mut start = search_from + rel + 2;
    let bytes = text.as_bytes();
    while start < range.end && matches!(bytes[start], b' ' | b'\t' | b'\n' | b'\r') {
        start += 1;
    }
    if bytes.get(start) == Some(&b'<') {
        let close = text[start..range.end].find('>')?;
        return Some(start + 1..start + close);
    }
    let mut end = start;
    let mut depth = 0usize;
    while end < range.end {
        match bytes[end] {
            b'\\' => end += 1,
            b'(' => depth += 1,
            b')' if depth == 0 => break,
            b')' => depth -= 1,
            b' ' | b'\t' | b'\n' | b'\r' => break,
            _ => {}
        }
        end += 1;
    }
    Some(start..end.min(range.end))
}

/// Bytes of the destination of a link reference definition.
fn definition_dest_range(text: &str, range: &Range<usize>) -> Option<Range<usize>> {
    let source = &text[range.clone()];
    let colon = source.find("]:")? + 2;
    let rest = &source[colon..];
    let lead = rest.len() - rest.trim_start().len();
    let start = range.start + colon + lead;
    let rest = &text[start..range.end];
    if let Some(inner) = rest.strip_prefix('<') {
        let close = inner.find('>')?;
        return Some(start + 1..start + 1 + close);
    }
    let len = rest.find(char::is_whitespace).unwrap_or(rest.len());
    Some(start..start + len)
}

pub mod incremental;
pub mod resolve;
pub mod segmented;
pub mod slug;

#[cfg(test)]
mod tests;
