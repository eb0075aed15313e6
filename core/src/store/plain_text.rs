//! The plain-text view of a chunk and of a whole document: the text an embedder reads.
//!
//! The embedder is given words, not Markdown. A chunk's view is its heading path
//! (headings joined with [`HEADING_PATH_SEPARATOR`]), a blank line, then its blocks as
//! plain text, one block a line, built from markdown-rs's mdast of the chunk:
//!
//! - the heading that opens the chunk is left out (the heading path already ends with
//!   it); any other heading is a line of its text;
//! - paragraphs, list items, quotes and table cells keep their text with the inline
//!   markup removed: emphasis and strikethrough keep their words, a link keeps its
//!   text and never its URL (an autolink, whose text is its URL, is dropped), an image
//!   keeps its alt text, inline code keeps its words, raw HTML and footnote references
//!   are dropped;
//! - letters marked in brackets inside a word lose the brackets (`[c]reate` →
//!   `create`, `g[z]ipped` → `gzipped`: tldr's mnemonics), a wiki link keeps its label
//!   or target (`[[setup|Install guide]]` → `Install guide`) and a `{{placeholder}}`
//!   keeps its inside (`{{path/to/file}}` → `path/to/file`, `{{[-C|--directory]}}` →
//!   `-C|--directory`);
//! - code blocks, math blocks and paragraphs that hold only inline code (tldr's
//!   example commands) are code: kept as their words (whitespace collapsed) when the
//!   chunk has nothing else, dropped when it has prose;
//! - runs of whitespace inside a block become one space.
//!
//! A document's view ([`document_embedding_text`]) is its title once, its frontmatter
//! aliases and tags on one line, then each chunk's section heading (unless it repeats
//! the title) and blocks, at most [`DOCUMENT_TEXT_BYTES`] bytes.
//!
//! Changing what either view holds changes every vector: bump
//! [`EMBEDDING_TEXT_VERSION`] with it, so that an index embedded with the old view is
//! embedded again instead of mixing old vectors with new ones.

use markdown::mdast::Node;

use super::HEADING_PATH_SEPARATOR;
use super::vectors::DOCUMENT_TEXT_BYTES;

/// The version of the text given to the embedder for chunks and documents.
///
/// Recorded in the index's `meta` (`embedding_text`); an index holding another
/// version (or none: folio before version 2 embedded the raw Markdown) gets its chunk
/// hashes computed again and its vectors dropped when it is opened, so that every chunk
/// and document is embedded again with this view.
///
/// Version 2: the plain-text view of this module (version 1, unrecorded: the heading
/// path, a blank line and the raw Markdown; a document's title and raw chunks).
pub const EMBEDDING_TEXT_VERSION: u32 = 2;

/// The text an embedder is given for a chunk: its heading path (as stored, headings
/// joined with [`HEADING_PATH_SEPARATOR`]), a blank line, then [`chunk_plain_text`];
/// just the plain text when the chunk has no heading, just the path when the chunk is
/// only its heading.
///
/// `chunks.content_hash` is the XxHash64 of exactly this text, so vectors are keyed by
/// what was embedded.
pub fn embedding_text(heading_path: &str, text: &str) -> String {
    if std::env::var_os("FOLIO_TV_RAWCHUNK").is_some() {
        return if heading_path.is_empty() { text.to_owned() } else { format!("{heading_path}\n\n{text}") };
    }
    let body = if std::env::var_os("FOLIO_TV_LIGHT").is_some() { light(text) } else { chunk_plain_text(!heading_path.is_empty(), text) };
    match (heading_path.is_empty(), body.is_empty()) {
        (true, _) => body,
        (false, true) => heading_path.to_owned(),
        (false, false) => format!("{heading_path}\n\n{body}"),
    }
}

/// A chunk's Markdown `text` as plain text, one block a line (see the module
/// documentation). With `skip_opening_heading`, a heading that opens the chunk is left
/// out (it is the last heading of the chunk's path). Text markdown-rs cannot parse is
/// returned with its whitespace collapsed.
pub fn chunk_plain_text(skip_opening_heading: bool, text: &str) -> String {
    let Ok(root) = crate::parse::to_mdast(text, false) else {
        return collapse(&unwrap_marks(text));
    };
    let mut nodes: &[Node] = root.children().map(Vec::as_slice).unwrap_or_default();
    if skip_opening_heading && std::env::var_os("FOLIO_TV_HEAD").is_none() && matches!(nodes.first(), Some(Node::Heading(_))) {
        nodes = &nodes[1..];
    }
    let mut blocks = Vec::new();
    for node in nodes {
        collect_blocks(node, &mut blocks);
    }
    let has_prose = blocks.iter().any(|b| !b.code) && std::env::var_os("FOLIO_TV_KEEPCODE").is_none();
    blocks
        .into_iter()
        .filter(|b| !(has_prose && b.code) && !b.text.is_empty())
        .map(|b| b.text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The plain text of a chunk whose stored heading path is `heading_path`, for a
/// document's view: the chunk's own heading (when it opens with one) on its first line,
/// then its blocks.
fn chunk_section_text(heading_path: &str, text: &str, title: &str) -> String {
    if std::env::var_os("FOLIO_TV_LIGHT").is_some() {
        return light(text);
    }
    let body = chunk_plain_text(!heading_path.is_empty(), text);
    let opening = heading_path
        .rsplit(HEADING_PATH_SEPARATOR)
        .next()
        .filter(|h| !h.is_empty() && !h.eq_ignore_ascii_case(title) && opens_with_heading(text));
    match opening {
        Some(h) if body.is_empty() => h.to_owned(),
        Some(h) => format!("{h}\n{body}"),
        None => body,
    }
}

/// Experimental: raw Markdown without autolinks, mnemonics and placeholder braces.
pub fn light(text: &str) -> String {
    let re = regex::Regex::new(r"<[a-zA-Z][a-zA-Z0-9+.-]*:[^>\s]*>").unwrap();
    unwrap_marks(&re.replace_all(text, ""))
}

/// Whether the chunk's text starts with a heading (ATX `#` or a setext underline).
fn opens_with_heading(text: &str) -> bool {
    crate::parse::to_mdast(text, false).is_ok_and(|root| {
        matches!(
            root.children().and_then(|c| c.first()),
            Some(Node::Heading(_))
        )
    })
}

/// The text an embedder is given for a whole document: the title, then the frontmatter
/// aliases and tags (`terms`, one per line; a term equal to the title is left out) on
/// one line separated by `, `, then every chunk (`(heading_path, text)` as stored, in
/// order) as its section heading and plain text; cut at [`DOCUMENT_TEXT_BYTES`] bytes
/// (on a character boundary).
pub fn document_embedding_text<'a>(
    title: &str,
    terms: &str,
    chunks: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> String {
    let mut parts: Vec<String> = Vec::new();
    if !title.trim().is_empty() {
        parts.push(title.trim().to_owned());
    }
    let terms: Vec<&str> = terms
        .lines()
        .map(str::trim)
        .filter(|t| !t.is_empty() && !t.eq_ignore_ascii_case(title.trim()))
        .collect();
    if !terms.is_empty() {
        parts.push(terms.join(", "));
    }
    let mut len: usize = parts.iter().map(|p| p.len() + 1).sum();
    for (heading_path, text) in chunks {
        if len >= DOCUMENT_TEXT_BYTES {
            break;
        }
        let section = chunk_section_text(heading_path, text, title.trim());
        if !section.is_empty() {
            len += section.len() + 1;
            parts.push(section);
        }
    }
    let mut out = parts.join("\n");
    if out.len() > DOCUMENT_TEXT_BYTES {
        let mut cut = DOCUMENT_TEXT_BYTES;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
    }
    out
}

/// One block of plain text; `code` for code and math blocks and paragraphs of inline
/// code only.
struct Block {
    text: String,
    code: bool,
}

fn collect_blocks(node: &Node, out: &mut Vec<Block>) {
    match node {
        Node::Paragraph(p) => {
            let code = p.children.iter().any(|c| matches!(c, Node::InlineCode(_)))
                && p.children.iter().all(|c| match c {
                    Node::InlineCode(_) | Node::Break(_) => true,
                    Node::Text(t) => t.value.trim().is_empty(),
                    _ => false,
                });
            out.push(Block {
                text: inline_text(&p.children),
                code,
            });
        }
        Node::Heading(h) => out.push(Block {
            text: inline_text(&h.children),
            code: false,
        }),
        Node::Code(c) => out.push(Block {
            text: collapse(&unwrap_placeholders(&c.value)),
            code: true,
        }),
        Node::Math(m) => out.push(Block {
            text: collapse(&m.value),
            code: true,
        }),
        Node::Table(t) => {
            for row in &t.children {
                let cells: Vec<String> = row
                    .children()
                    .map(|cells| {
                        cells
                            .iter()
                            .map(|c| c.children().map(|c| inline_text(c)).unwrap_or_default())
                            .filter(|c| !c.is_empty())
                            .collect()
                    })
                    .unwrap_or_default();
                out.push(Block {
                    text: cells.join(", "),
                    code: false,
                });
            }
        }
        Node::ListItem(_) if std::env::var_os("FOLIO_TV_MARK").is_some() => {
            let at = out.len();
            for child in node.children().map(Vec::as_slice).unwrap_or_default() {
                collect_blocks(child, out);
            }
            if let Some(b) = out.get_mut(at) { b.text = format!("- {}", b.text); }
        }
        // Containers: their blocks, in order.
        Node::Root(_)
        | Node::Blockquote(_)
        | Node::List(_)
        | Node::ListItem(_)
        | Node::FootnoteDefinition(_) => {
            for child in node.children().map(Vec::as_slice).unwrap_or_default() {
                collect_blocks(child, out);
            }
        }
        // Raw HTML, thematic breaks, definitions, frontmatter: no words to read.
        _ => {}
    }
}

/// The words of inline nodes: markup removed, whitespace collapsed.
fn inline_text(nodes: &[Node]) -> String {
    let mut raw = String::new();
    push_inline(nodes, &mut raw);
    collapse(&raw)
}

fn push_inline(nodes: &[Node], out: &mut String) {
    for node in nodes {
        match node {
            Node::Text(t) => out.push_str(&unwrap_marks(&t.value)),
            Node::InlineCode(c) => out.push_str(&unwrap_placeholders(&c.value)),
            Node::InlineMath(m) => out.push_str(&m.value),
            Node::Break(_) => out.push(' '),
            Node::Image(i) => out.push_str(&i.alt),
            Node::ImageReference(i) => out.push_str(&i.alt),
            Node::Link(l) => {
                let mut label = String::new();
                push_inline(&l.children, &mut label);
                // An autolink's text is its URL: nothing to read.
                if std::env::var_os("FOLIO_TV_URL").is_some() || (label.trim() != l.url && !crate::parse::has_scheme(label.trim())) {
                    out.push_str(&label);
                }
            }
            Node::Emphasis(_) | Node::Strong(_) | Node::Delete(_) | Node::LinkReference(_) => {
                push_inline(node.children().map(Vec::as_slice).unwrap_or_default(), out)
            }
            // Raw HTML, footnote references.
            _ => {}
        }
    }
}

/// Collapses every run of whitespace to one space and trims; a space before a lone
/// `.`, `,`, `;`, `。` or `、` goes too (left there by a dropped autolink:
/// `More information: <https://…>.` → `More information:.`).
fn collapse(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        let lone_punct = word.chars().all(|c| matches!(c, '.' | ',' | ';' | '。' | '、'));
        if !out.is_empty() && !lone_punct {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// Text with tldr's mnemonic brackets, wiki links and placeholders unwrapped.
fn unwrap_marks(text: &str) -> String {
    unwrap_placeholders(&unwrap_mnemonics(&unwrap_wiki_links(text)))
}

/// `[[target|label]]` → `label`, `[[target]]` → `target`.
fn unwrap_wiki_links(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("[[") {
        let Some(len) = rest[start + 2..].find("]]") else {
            break;
        };
        let inner = &rest[start + 2..start + 2 + len];
        out.push_str(&rest[..start]);
        out.push_str(inner.rsplit('|').next().unwrap_or(inner));
        rest = &rest[start + 2 + len + 2..];
    }
    out.push_str(rest);
    out
}

/// `[c]reate` → `create`: brackets around letters or digits that touch a letter or
/// digit on either side (so a bracketed word standing alone keeps them).
fn unwrap_mnemonics(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '[' {
            let len = chars[i + 1..]
                .iter()
                .take_while(|c| c.is_alphanumeric())
                .count();
            let close = i + 1 + len;
            if len > 0 && chars.get(close) == Some(&']') {
                let before = i > 0 && chars[i - 1].is_alphanumeric();
                let after = chars.get(close + 1).is_some_and(|c| c.is_alphanumeric());
                if before || after {
                    out.extend(&chars[i + 1..close]);
                    i = close + 1;
                    continue;
                }
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// `{{path/to/file}}` → `path/to/file`; `{{[-C|--directory]}}` → `-C|--directory`.
fn unwrap_placeholders(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start + 2..].find("}}") else {
            break;
        };
        let inner = &rest[start + 2..start + 2 + len];
        let inner = inner
            .strip_prefix('[')
            .and_then(|i| i.strip_suffix(']'))
            .unwrap_or(inner);
        out.push_str(&rest[..start]);
        out.push_str(inner);
        rest = &rest[start + 2 + len + 2..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests;
