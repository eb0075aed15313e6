//! Markdown to Typst source for a book.
//!
//! The document is parsed with the same markdown-rs options as the rest of folio (GFM,
//! frontmatter) and every node becomes a Typst function call; text from the document
//! only ever enters the source as a string literal ([`super::style::string`]), so no
//! Markdown content can run Typst code. Headings get labels (`<folio-hN>`), so links to
//! `#slug` (GitHub slugs, as folio's links use them) and the table of contents are
//! clickable; links to other documents are printed as text. Local images are read
//! through the path policy, checked and prepared for the profile ([`super::images`]);
//! remote and unreadable ones become placeholders with a warning.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use markdown::mdast::{AlignKind, Node};

use super::images::{prepare, printed_width_pt};
use super::style::{BookOptions, Geometry, string};
use crate::media::{ImageFormat, check_image, dimensions};
use crate::parse::{has_scheme, percent_decode};
use crate::path_policy::resolve_existing;

/// The generated body and what it needs.
#[derive(Debug, Default)]
pub struct Generated {
    /// Typst markup of the body (after the preamble).
    pub body: String,
    /// Image files the body reads: (virtual path, bytes).
    pub files: Vec<(String, Vec<u8>)>,
    /// Problems to report (missing images, remote images, raw HTML left out).
    pub warnings: Vec<String>,
    /// The document's title: frontmatter `title`, else its first heading, else its name.
    pub title: String,
}

/// Builds the body of the book for document `path` (KB-relative) with `text`.
pub fn generate(root: &Path, path: &str, text: &str, options: &BookOptions) -> Generated {
    let parsed = crate::parse::parse(text);
    let mut state = Gen {
        root,
        path,
        options,
        geometry: Geometry::new(options.page_format, options.style),
        labels: HashMap::new(),
        targets: HashMap::new(),
        custom_ids: HashMap::new(),
        definitions: HashMap::new(),
        footnotes: HashMap::new(),
        open_footnotes: HashSet::new(),
        images: HashMap::new(),
        files: Vec::new(),
        warnings: Vec::new(),
        html_skipped: 0,
    };
    for (i, heading) in parsed.headings.iter().enumerate() {
        let label = format!("folio-h{}", i + 1);
        state.labels.insert(heading.range.start, label.clone());
        state
            .targets
            .entry(heading.slug.to_lowercase())
            .or_insert_with(|| label.clone());
        if let Some(id) = &heading.custom_id {
            state.targets.entry(id.to_lowercase()).or_insert(label);
        }
    }
    let custom_ids: HashMap<usize, String> = parsed
        .headings
        .iter()
        .filter_map(|h| Some((h.range.start, h.custom_id.clone()?)))
        .collect();
    let title = parsed
        .frontmatter
        .as_ref()
        .and_then(|f| f.get("title"))
        .and_then(|t| t.as_str())
        .map(str::to_string)
        .or_else(|| parsed.headings.first().map(|h| h.text.clone()))
        .unwrap_or_else(|| {
            let name = path.rsplit('/').next().unwrap_or(path);
            name.rsplit_once('.').map_or(name, |(s, _)| s).to_string()
        });
    let root_node = match crate::parse::nesting_problem(text) {
        Some(problem) => Err(problem),
        None => crate::parse::to_mdast(text, true),
    };
    let mut blocks = Vec::new();
    match root_node {
        Ok(node) => {
            let children = node.children().cloned().unwrap_or_default();
            state.collect_definitions(&children);
            state.custom_ids = custom_ids;
            for child in &children {
                let mut out = String::new();
                state.block(child, &mut out);
                if !out.is_empty() {
                    blocks.push(out);
                }
            }
        }
        Err(problem) => {
            state.warnings.push(format!(
                "the document could not be parsed ({problem}); it is printed as plain text"
            ));
            blocks.push(format!("#raw(block: true, {})\n\n", string(text)));
        }
    }
    if parsed.headings.len() >= 3 {
        let at = usize::from(text_starts_with_title(&parsed));
        blocks.insert(at.min(blocks.len()), "#outline(depth: 3)\n\n".to_string());
    }
    if state.html_skipped > 0 {
        state.warnings.push(format!(
            "{} raw HTML fragment(s) are not rendered in the PDF",
            state.html_skipped
        ));
    }
    Generated {
        body: blocks.concat(),
        files: state.files,
        warnings: state.warnings,
        title,
    }
}

/// True when the document's first element after frontmatter is a level-1 heading.
fn text_starts_with_title(parsed: &crate::parse::Parsed) -> bool {
    use crate::parse::ElementKind;
    parsed
        .elements
        .iter()
        .find(|e| !matches!(e.kind, ElementKind::Document | ElementKind::Frontmatter))
        .is_some_and(|e| e.kind == ElementKind::Heading && e.level == 1)
}

struct Gen<'a> {
    root: &'a Path,
    path: &'a str,
    options: &'a BookOptions,
    geometry: Geometry,
    /// Heading start offset → label.
    labels: HashMap<usize, String>,
    /// Lowercased slug or custom id → label.
    targets: HashMap<String, String>,
    /// Heading start offset → custom id (`{#id}`), left out of the printed heading.
    custom_ids: HashMap<usize, String>,
    /// Link reference definitions: identifier → (url, title).
    definitions: HashMap<String, (String, Option<String>)>,
    /// Footnote definitions: identifier → children.
    footnotes: HashMap<String, Vec<Node>>,
    /// Footnotes being rendered (a definition that refers to itself stops there).
    open_footnotes: HashSet<String>,
    /// KB path → (virtual path, printed width in points).
    images: HashMap<String, (String, f64)>,
    files: Vec<(String, Vec<u8>)>,
    warnings: Vec<String>,
    html_skipped: usize,
}

impl Gen<'_> {
    fn collect_definitions(&mut self, nodes: &[Node]) {
        for node in nodes {
            match node {
                Node::Definition(d) => {
                    self.definitions
                        .entry(d.identifier.clone())
                        .or_insert_with(|| (d.url.clone(), d.title.clone()));
                }
                Node::FootnoteDefinition(f) => {
                    self.footnotes
                        .entry(f.identifier.clone())
                        .or_insert_with(|| f.children.clone());
                }
                _ => {}
            }
            if let Some(children) = node.children() {
                self.collect_definitions(children);
            }
        }
    }
}

impl Gen<'_> {
    fn block(&mut self, node: &Node, out: &mut String) {
        match node {
            Node::Heading(h) => {
                let start = node.position().map(|p| p.start.offset);
                let mut content = self.inlines(&h.children);
                if let Some(id) = start.and_then(|s| self.custom_ids.get(&s)).cloned() {
                    content = strip_custom_id(&content, &id);
                }
                out.push_str(&format!(
                    "#heading(level: {})[{content}]",
                    h.depth.clamp(1, 6)
                ));
                if let Some(label) = start.and_then(|s| self.labels.get(&s)) {
                    out.push_str(&format!(" <{label}>"));
                }
                out.push_str("\n\n");
            }
            Node::Paragraph(p) => {
                if let [Node::Image(img)] = p.children.as_slice() {
                    let line = node.position().map(|p| p.start.line);
                    let call = self.image(&img.url, &img.alt, line);
                    match (&img.title, call) {
                        (Some(title), Ok(call)) => out.push_str(&format!(
                            "#figure({call}, caption: [#{}])\n\n",
                            string(title)
                        )),
                        (None, Ok(call)) => out.push_str(&format!("#align(center)[#{call}]\n\n")),
                        (_, Err(placeholder)) => out.push_str(&format!("{placeholder}\n\n")),
                    }
                    return;
                }
                let content = self.inlines(&p.children);
                if !content.is_empty() {
                    out.push_str(&content);
                    out.push_str("\n\n");
                }
            }
            Node::Blockquote(q) => {
                let inner = self.blocks(&q.children);
                out.push_str(&format!("#quote(block: true)[{}]\n\n", inner.trim_end()));
            }
            Node::List(list) => {
                let tight = !list.spread;
                let mut items = Vec::new();
                for item in &list.children {
                    let Node::ListItem(li) = item else { continue };
                    let mut content = match li.checked {
                        Some(true) => format!("#{}", string("☑ ")),
                        Some(false) => format!("#{}", string("☐ ")),
                        None => String::new(),
                    };
                    if tight
                        && li.children.len() == 1
                        && matches!(li.children[0], Node::Paragraph(_))
                    {
                        if let Node::Paragraph(p) = &li.children[0] {
                            content.push_str(&self.inlines(&p.children));
                        }
                    } else {
                        content.push_str(self.blocks(&li.children).trim_end());
                    }
                    items.push(format!("[{content}]"));
                }
                let head = if list.ordered {
                    format!("enum(tight: {tight}, start: {}", list.start.unwrap_or(1))
                } else {
                    format!("list(tight: {tight}")
                };
                out.push_str(&format!("#{head}, {})\n\n", items.join(", ")));
            }
            Node::Code(code) => {
                let lang = code
                    .lang
                    .as_deref()
                    .filter(|l| {
                        !l.is_empty()
                            && l.chars().all(|c| {
                                c.is_ascii_alphanumeric()
                                    || matches!(c, '-' | '+' | '#' | '_' | '.')
                            })
                    })
                    .map(|l| format!(", lang: {}", string(l)))
                    .unwrap_or_default();
                out.push_str(&format!(
                    "#raw(block: true{lang}, {})\n\n",
                    string(&code.value)
                ));
            }
            Node::Table(table) => {
                let columns = table.align.len().max(1);
                let align: Vec<&str> = (0..columns)
                    .map(|i| match table.align.get(i) {
                        Some(AlignKind::Left) => "left",
                        Some(AlignKind::Center) => "center",
                        Some(AlignKind::Right) => "right",
                        _ => "auto",
                    })
                    .collect();
                let mut rows = Vec::new();
                for (r, row) in table.children.iter().enumerate() {
                    let Node::TableRow(row) = row else { continue };
                    let mut cells: Vec<String> = row
                        .children
                        .iter()
                        .take(columns)
                        .map(|cell| match cell {
                            Node::TableCell(c) => format!("[{}]", self.inlines(&c.children)),
                            _ => "[]".to_string(),
                        })
                        .collect();
                    cells.resize(columns, "[]".to_string());
                    if r == 0 {
                        rows.push(format!("table.header({})", cells.join(", ")));
                    } else {
                        rows.push(cells.join(", "));
                    }
                }
                out.push_str(&format!(
                    "#table(columns: {columns}, align: ({},), {})\n\n",
                    align.join(", "),
                    rows.join(", ")
                ));
            }
            Node::ThematicBreak(_) => {
                out.push_str("#line(length: 100%, stroke: 0.5pt + luma(160))\n\n");
            }
            Node::Html(html) => {
                if is_line_break(&html.value) {
                    out.push_str("#linebreak()\n\n");
                } else {
                    self.html_skipped += 1;
                }
            }
            Node::Math(math) => {
                out.push_str(&format!("#raw(block: true, {})\n\n", string(&math.value)));
            }
            Node::Definition(_) | Node::FootnoteDefinition(_) | Node::Yaml(_) | Node::Toml(_) => {}
            other => {
                // Inline content where a block was expected (should not happen with GFM).
                let content = self.inline_of(other);
                if !content.is_empty() {
                    out.push_str(&content);
                    out.push_str("\n\n");
                }
            }
        }
    }

    fn blocks(&mut self, nodes: &[Node]) -> String {
        let mut out = String::new();
        for node in nodes {
            self.block(node, &mut out);
        }
        out
    }

    fn inlines(&mut self, nodes: &[Node]) -> String {
        let mut out = String::new();
        for (i, node) in nodes.iter().enumerate() {
            if let Node::Text(t) = node {
                let before = i.checked_sub(1).and_then(|j| last_char(&nodes[j]));
                let after = nodes.get(i + 1).and_then(first_char);
                let text = soft_breaks(&t.value, before, after);
                if !text.is_empty() {
                    out.push('#');
                    out.push_str(&string(&text));
                }
            } else {
                out.push_str(&self.inline_of(node));
            }
        }
        out
    }

    fn inline_of(&mut self, node: &Node) -> String {
        match node {
            Node::Text(t) => format!("#{}", string(&soft_breaks(&t.value, None, None))),
            Node::Emphasis(e) => format!("#emph[{}]", self.inlines(&e.children)),
            Node::Strong(s) => format!("#strong[{}]", self.inlines(&s.children)),
            Node::Delete(d) => format!("#strike[{}]", self.inlines(&d.children)),
            Node::InlineCode(c) => format!("#raw({})", string(&c.value)),
            Node::InlineMath(m) => format!("#raw({})", string(&m.value)),
            Node::Break(_) => "#linebreak()".to_string(),
            Node::Link(link) => {
                let content = self.inlines(&link.children);
                self.link(&link.url, content)
            }
            Node::LinkReference(r) => {
                let content = self.inlines(&r.children);
                match self.definitions.get(&r.identifier).cloned() {
                    Some((url, _)) => self.link(&url, content),
                    None => content,
                }
            }
            Node::Image(img) => {
                let line = node.position().map(|p| p.start.line);
                match self.image(&img.url, &img.alt, line) {
                    Ok(call) => format!("#box({call})"),
                    Err(placeholder) => placeholder,
                }
            }
            Node::ImageReference(r) => {
                let line = node.position().map(|p| p.start.line);
                match self.definitions.get(&r.identifier).cloned() {
                    Some((url, _)) => match self.image(&url, &r.alt, line) {
                        Ok(call) => format!("#box({call})"),
                        Err(placeholder) => placeholder,
                    },
                    None => format!("#{}", string(&r.alt)),
                }
            }
            Node::FootnoteReference(f) => {
                let Some(children) = self.footnotes.get(&f.identifier).cloned() else {
                    return format!(
                        "#{}",
                        string(&format!(
                            "[^{}]",
                            f.label.as_deref().unwrap_or(&f.identifier)
                        ))
                    );
                };
                if !self.open_footnotes.insert(f.identifier.clone()) {
                    return String::new();
                }
                let content = match children.as_slice() {
                    [Node::Paragraph(p)] => self.inlines(&p.children),
                    _ => self.blocks(&children).trim_end().to_string(),
                };
                self.open_footnotes.remove(&f.identifier);
                format!("#footnote[{content}]")
            }
            Node::Html(html) => {
                if is_line_break(&html.value) {
                    "#linebreak()".to_string()
                } else {
                    self.html_skipped += 1;
                    String::new()
                }
            }
            other => match other.children() {
                Some(children) => {
                    let children = children.clone();
                    self.inlines(&children)
                }
                None => String::new(),
            },
        }
    }

    /// A link: external URLs are clickable, `#fragment` links (and links to this
    /// document) go to the heading, anything else is printed as its text.
    fn link(&mut self, url: &str, content: String) -> String {
        let content = if content.is_empty() {
            format!("#{}", string(url))
        } else {
            content
        };
        if has_scheme(url) {
            let scheme = url.split(':').next().unwrap_or("").to_ascii_lowercase();
            if matches!(scheme.as_str(), "http" | "https" | "mailto" | "ftp") {
                return format!("#link({})[{content}]", string(url));
            }
            return content;
        }
        let (path_part, fragment) = match url.split_once('#') {
            Some((p, f)) => (p, Some(f)),
            None => (url, None),
        };
        let path_part = path_part.split('?').next().unwrap_or(path_part);
        let same_document = path_part.is_empty()
            || join(self.path, &percent_decode(path_part)).as_deref() == Some(self.path);
        if same_document
            && let Some(fragment) = fragment
            && let Some(label) = self.targets.get(&percent_decode(fragment).to_lowercase())
        {
            return format!("#link(<{label}>)[{content}]");
        }
        content
    }

    /// The Typst `image(…)` call for an image reference, or a placeholder (and a warning)
    /// when it cannot be shown.
    fn image(&mut self, url: &str, alt: &str, line: Option<usize>) -> Result<String, String> {
        let at = line.map(|l| format!("line {l}: ")).unwrap_or_default();
        let fail = |state: &mut Gen<'_>, reason: String| {
            state.warnings.push(format!(
                "{at}image `{url}` {reason}; a placeholder is printed"
            ));
            let text = if alt.is_empty() {
                format!("[image: {url}]")
            } else {
                format!("[image: {alt}]")
            };
            Err(format!(
                "#box(stroke: 0.5pt + luma(150), inset: 4pt)[#text(size: 0.85em, fill: luma(90))[#{}]]",
                string(&text)
            ))
        };
        if has_scheme(url) || url.starts_with("//") {
            return fail(self, "is remote and is never fetched".into());
        }
        let dest = percent_decode(url.split(['?', '#']).next().unwrap_or(url));
        let Some(kb_path) = join(self.path, &dest) else {
            return fail(self, "points outside the knowledge base".into());
        };
        if let Some((vpath, width)) = self.images.get(&kb_path) {
            return Ok(image_call(vpath, *width, alt));
        }
        if let Err(e) = resolve_existing(self.root, &kb_path) {
            return fail(self, format!("is not available ({e})"));
        }
        let Some(named) = ImageFormat::from_path(&kb_path) else {
            return fail(self, "is not a PNG, JPEG, WebP or GIF file".into());
        };
        let bytes = match crate::workspace::beneath::read(
            self.root,
            &kb_path,
            crate::media::MAX_IMAGE_BYTES + 1,
        ) {
            Ok(bytes) => bytes,
            Err(e) => return fail(self, format!("cannot be read ({e})")),
        };
        let label = format!("`{kb_path}`");
        let format = match check_image(&bytes, Some(named), &label) {
            Ok(format) => format,
            Err(e) => return fail(self, format!("cannot be used: {e}")),
        };
        let px = match dimensions(&bytes, format) {
            Ok(px) => px,
            Err(e) => return fail(self, format!("cannot be used: {e}")),
        };
        let width = printed_width_pt(
            px,
            self.geometry.text_width_pt(),
            self.geometry.text_height_pt(),
        );
        let (prepared, _) = prepare(&bytes, format, px, width, self.options.profile);
        let vpath = format!("/img/{}.{}", self.files.len() + 1, format.extension());
        self.files.push((vpath.clone(), prepared));
        self.images.insert(kb_path, (vpath.clone(), width));
        Ok(image_call(&vpath, width, alt))
    }
}

fn image_call(vpath: &str, width: f64, alt: &str) -> String {
    let alt = if alt.is_empty() {
        String::new()
    } else {
        format!(", alt: {}", string(alt))
    };
    format!("image({}, width: {width:.2}pt{alt})", string(vpath))
}

/// The KB-relative path a destination written in `doc` names: relative to the document's
/// folder, or to the root when it starts with `/`; `None` when it climbs above the root.
fn join(doc: &str, dest: &str) -> Option<String> {
    let mut parts: Vec<&str> = if dest.starts_with('/') {
        Vec::new()
    } else {
        let mut p: Vec<&str> = doc.split('/').collect();
        p.pop();
        p
    };
    for seg in dest.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    if parts.is_empty() {
        return None;
    }
    Some(parts.join("/"))
}

fn is_line_break(html: &str) -> bool {
    let t = html.trim().to_ascii_lowercase();
    matches!(t.as_str(), "<br>" | "<br/>" | "<br />")
}

/// Removes a trailing `{#id}` from a heading's generated content.
fn strip_custom_id(content: &str, id: &str) -> String {
    let written = string(&format!("{{#{id}}}"));
    let written = &written[1..written.len() - 1];
    let mut out = content.replacen(&format!(" {written}\""), "\"", 1);
    if out == content {
        out = content.replacen(&format!("{written}\""), "\"", 1);
    }
    out.replace("#\"\"", "")
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3000..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xf900..=0xfaff | 0xff00..=0xffef | 0x31f0..=0x31ff)
}

/// Markdown soft line breaks: a space, except between two CJK characters (Japanese and
/// Chinese put no space there).
fn soft_breaks(text: &str, before: Option<char>, after: Option<char>) -> String {
    if !text.contains('\n') {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        if c != '\n' {
            out.push(c);
            continue;
        }
        let prev = if i == 0 { before } else { Some(chars[i - 1]) };
        let next = chars.get(i + 1).copied().or(after);
        if !(prev.is_some_and(is_cjk) && next.is_some_and(is_cjk)) {
            out.push(' ');
        }
    }
    out
}

fn first_char(node: &Node) -> Option<char> {
    match node {
        Node::Text(t) => t.value.chars().next(),
        other => other.children()?.first().and_then(first_char),
    }
}

fn last_char(node: &Node) -> Option<char> {
    match node {
        Node::Text(t) => t.value.chars().next_back(),
        other => other.children()?.last().and_then(last_char),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_join_inside_the_root_only() {
        assert_eq!(
            join("docs/book.md", "img/a.png").as_deref(),
            Some("docs/img/a.png")
        );
        assert_eq!(join("docs/book.md", "../a.png").as_deref(), Some("a.png"));
        assert_eq!(
            join("docs/book.md", "/images/a.png").as_deref(),
            Some("images/a.png")
        );
        assert_eq!(
            join("docs/book.md", "./x/../a.png").as_deref(),
            Some("docs/a.png")
        );
        assert_eq!(join("book.md", "../../etc/passwd"), None);
    }

    #[test]
    fn soft_breaks_join_cjk_lines_without_a_space() {
        assert_eq!(soft_breaks("日本語の\n文章", None, None), "日本語の文章");
        assert_eq!(soft_breaks("one\ntwo", None, None), "one two");
        assert_eq!(soft_breaks("漢字\nand", None, None), "漢字 and");
    }
}
