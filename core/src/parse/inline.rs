//! The inline half of the walk over the markdown-rs tree: links, images, autolinks,
//! references, link reference and footnote definitions, footnote references and HTML
//! anchors inside a block; headings nested in containers; and the ranges of code, HTML,
//! math and frontmatter, which the source scanner leaves alone.

use std::ops::Range;
use std::sync::OnceLock;

use markdown::mdast::Node;
use regex::Regex;

use super::frontmatter;
use super::link_text::{has_scheme, normalize_label, percent_decode};
use super::parsed::{Anchor, Definition, Link, LinkKind, Problem};
use super::walk::{Builder, span};

impl Builder<'_> {
    /// Collects links, images, anchors, definitions and footnotes inside a node.
    pub(super) fn inline(&mut self, node: &Node) {
        let range = span(node.position());
        match node {
            Node::Code(_) => {
                if let Some(id) = fence_id(&self.text[range.clone()]) {
                    self.parsed.anchors.push(Anchor {
                        id,
                        range: range.clone(),
                    });
                }
                self.excluded.push(range);
                return;
            }
            Node::InlineCode(_) | Node::Math(_) | Node::InlineMath(_) => {
                self.excluded.push(range);
                return;
            }
            Node::Yaml(y) => {
                self.excluded.push(range.clone());
                self.keep_frontmatter(frontmatter::read_yaml(&y.value), range);
                return;
            }
            Node::Toml(t) => {
                self.excluded.push(range.clone());
                self.keep_frontmatter(frontmatter::read_toml(&t.value), range);
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
                // Read from the source, not `h.value`, whose offsets lose a container's
                // `> ` prefixes.
                for (tag, value) in super::html_links::html_links(&self.text[range.clone()]) {
                    let at = |r: Range<usize>| range.start + r.start..range.start + r.end;
                    let (tag, value) = (at(tag), at(value));
                    let url = self.text[value.clone()].to_string();
                    self.push_link(LinkKind::Html, tag, Some(value), &url, None);
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
                let label = reference_label(self.text, &range, &r.reference_kind, 0)
                    .or(r.label.as_deref())
                    .unwrap_or(&r.identifier);
                self.push_reference(LinkKind::Reference, range.clone(), label);
            }
            Node::ImageReference(r) => {
                self.covered.push(range.clone());
                let label = reference_label(self.text, &range, &r.reference_kind, 1)
                    .or(r.label.as_deref())
                    .unwrap_or(&r.identifier);
                self.push_reference(LinkKind::ImageReference, range.clone(), label);
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
                    comment: matches!(d.url.trim(), "" | "#"),
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

    /// Keeps what the frontmatter at `range` holds, or the problem that it is not valid.
    fn keep_frontmatter(
        &mut self,
        read: Result<Option<serde_json::Value>, String>,
        range: Range<usize>,
    ) {
        match read {
            Ok(Some(metadata)) => self.parsed.frontmatter = Some(metadata),
            Ok(None) => {}
            Err(message) => self.parsed.problems.push(Problem { range, message }),
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
        let link = link(self.text, kind, range, dest_range, url, label);
        self.parsed.links.push(link);
    }
}

/// The label of a shortcut (`[label]`) or collapsed (`[label][]`) reference at `range` of
/// `text` as written, markup included, after `skip` leading bytes (1 for an image's `!`);
/// `None` for a full reference, whose label markdown-rs gives as written.
///
/// CommonMark 4.7 matches a reference to a definition on the label's source text, so
/// `` [`x`] `` uses `` [`x`]: … `` and `[_x_]` does not use `[x]: …`; markdown-rs gives a
/// shortcut's and a collapsed reference's label as the text of its content, without the
/// markup.
fn reference_label<'t>(
    text: &'t str,
    range: &Range<usize>,
    kind: &markdown::mdast::ReferenceKind,
    skip: usize,
) -> Option<&'t str> {
    use markdown::mdast::ReferenceKind;
    let source = text.get(range.clone())?.get(skip..)?;
    let inner = match kind {
        ReferenceKind::Shortcut => source.strip_prefix('[')?.strip_suffix(']')?,
        ReferenceKind::Collapsed => source.strip_prefix('[')?.strip_suffix("][]")?,
        ReferenceKind::Full => return None,
    };
    Some(inner)
}

/// The link of `kind` at `range` of `text` whose destination, written at `dest_range`,
/// reads `url` (as markdown-rs gives it: escapes and entities decoded): path and fragment
/// split and percent-decoded, the scheme noticed. The one reading of a destination, for
/// the walk and for [`super::incremental::update_destinations`].
pub(super) fn link(
    text: &str,
    kind: LinkKind,
    range: Range<usize>,
    dest_range: Option<Range<usize>>,
    url: &str,
    label: Option<String>,
) -> Link {
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
        (Some(d), Some(_)) => text[d.clone()].find('#').map(|i| d.start + i + 1..d.end),
        _ => None,
    };
    let dest = if external {
        url.to_string()
    } else {
        percent_decode(path)
    };
    Link {
        kind,
        range,
        dest_range,
        dest,
        fragment: fragment.map(percent_decode),
        fragment_range,
        label,
        external,
    }
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

/// The id a fenced code block's attribute list gives it, as Pandoc and PyMdown Extensions'
/// SuperFences read one: ```` ``` { .sh #example } ```` or ```` ```python {#example} ````
/// (see [`super::attribute_list`]). `source` is the block as written.
fn fence_id(source: &str) -> Option<String> {
    let first = source.lines().next()?.trim_start();
    let info = first
        .strip_prefix("```")
        .or_else(|| first.strip_prefix("~~~"))?
        .trim_start_matches(['`', '~'])
        .trim();
    if !info.ends_with('}') {
        return None;
    }
    super::attribute_list::split_attribute_list(info).id
}
