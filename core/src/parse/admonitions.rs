//! Python-Markdown's indented block containers, as MkDocs sites write them: admonitions
//! (`!!! note "Title"`), collapsible details (`??? tip`, `???+ tip`) and content tabs
//! (`=== "Linux"`, `===+ "macOS"`).
//!
//! Their body is indented four spaces under the marker line, which CommonMark reads as an
//! indented code block (CommonMark 4.4): the links, definitions, tags and headings in it
//! would be invisible, and a definition used only there reported unused. Python-Markdown
//! (the `admonition` extension and PyMdown Extensions' `details` and `tabbed`) reads the
//! body as Markdown, de-indented by four spaces.
//!
//! markdown-rs knows none of these, so they are read as list items whose content starts
//! four columns after the marker, which is exactly a body's indentation: the marker's first
//! bytes are overwritten with a bullet and spaces, bytes for bytes, so every offset stays
//! that of the source, and the text is parsed again. The bullet is one no neighbouring list
//! uses, so a container never joins a list. A nested container's marker is only a
//! paragraph once its parent's body is, so this repeats, at most [`MAX_DEPTH`] times.
//!
//! A marker line becomes a container only where it is a line of a paragraph and a body
//! follows: the paragraph's next line, or the indented code block right after it, in the
//! same block quote and four columns past the marker. As in Python-Markdown, the marker
//! stands at a multiple of four columns (a list item's content counting as four columns
//! in), tabs count to the next multiple of four, and a lone `\r` ends a line. The marker's
//! shape is Python-Markdown's: `!!!`, `???` or `???+`, one or more type words and an
//! optional quoted title (for `???`, a title alone will do); or `===`, `===+` or `===!`
//! and a quoted title.

use std::ops::Range;
use std::sync::OnceLock;

use markdown::mdast::Node;
use regex::Regex;

/// How many levels of nested containers are opened.
pub(super) const MAX_DEPTH: usize = 8;

/// Whether `text` may hold a container marker at all (a cheap test before any work).
pub(super) fn may_hold(text: &str) -> bool {
    text.contains("!!!") || text.contains("???") || text.contains("===")
}

/// The mdast of `text` with every container read as Markdown (see the module docs).
/// `root` is markdown-rs's tree of `text`; `parse` parses a text of the same length.
pub(super) fn open(
    text: &str,
    mut root: Node,
    parse: impl Fn(&str) -> Result<Node, String>,
) -> Result<Node, String> {
    let mut rewritten: Option<String> = None;
    for _ in 0..MAX_DEPTH {
        let current = rewritten.as_deref().unwrap_or(text);
        let mut markers = Vec::new();
        find_markers(current, &root, &mut markers);
        if markers.is_empty() {
            break;
        }
        let mut bytes = current.as_bytes().to_vec();
        for Marker { range, bullet } in markers {
            bytes[range.start] = bullet;
            for b in &mut bytes[range.start + 1..range.end] {
                *b = b' ';
            }
            // The content must start right at the body's column: nothing blank there, and
            // no part of a character split by the overwrite (`!!!é`).
            let mut at = range.end;
            if matches!(bytes.get(at), Some(b' ' | b'\t')) {
                bytes[at] = b'_';
            }
            while bytes.get(at).is_some_and(|b| (0x80..0xC0).contains(b)) {
                bytes[at] = b'_';
                at += 1;
            }
        }
        // Whole characters were replaced by as many ASCII bytes, so this cannot fail.
        let next = String::from_utf8(bytes).map_err(|e| e.to_string())?;
        root = parse(&next)?;
        rewritten = Some(next);
    }
    Ok(root)
}

/// A container marker to overwrite: `range` is its first four bytes in the text, `bullet`
/// the list marker written over its first byte.
struct Marker {
    range: Range<usize>,
    bullet: u8,
}

/// The container markers among `node`'s descendants.
fn find_markers(text: &str, node: &Node, out: &mut Vec<Marker>) {
    let Some(children) = node.children() else {
        return;
    };
    let mut bullet = None;
    for (i, child) in children.iter().enumerate() {
        if let Node::Paragraph(p) = child
            && let Some(pos) = &p.position
        {
            // Python-Markdown finds a marker on any line of a paragraph; the list item
            // written over it interrupts the paragraph (CommonMark 5.2).
            let (start, end) = (pos.start.offset, pos.end.offset);
            let mut line = start;
            while line < end {
                if let Some(range) = marker_at(text, line, end, children.get(i + 1)) {
                    let bullet = *bullet.get_or_insert_with(|| free_bullet(text, children));
                    out.push(Marker { range, bullet });
                    break;
                }
                line = match text[line..end].find(['\n', '\r']) {
                    Some(i) => line + i + 1,
                    None => end,
                };
            }
        }
        find_markers(text, child, out);
    }
}

/// A bullet (`+`, `-` or `*`) that no list among `siblings` uses, so that a container
/// never joins a list written next to it (CommonMark 5.3: a list's items share their
/// bullet). `+` if every bullet is taken.
fn free_bullet(text: &str, siblings: &[Node]) -> u8 {
    let used: Vec<u8> = siblings
        .iter()
        .filter_map(|node| match node {
            Node::List(list) if !list.ordered => {
                let start = list.position.as_ref()?.start.offset;
                text.get(start..)?
                    .bytes()
                    .find(|b| !b.is_ascii_whitespace())
            }
            _ => None,
        })
        .collect();
    [b'+', b'-', b'*']
        .into_iter()
        .find(|b| !used.contains(b))
        .unwrap_or(b'+')
}

/// The marker on the paragraph line starting at `start` (the paragraph ends at `end`), as
/// the byte range of its first four bytes, if it opens a container whose body follows
/// (see the module docs). `next` is the paragraph's next sibling.
///
/// The shapes are those of Python-Markdown's `admonition` (`!!! ?type… "title"?`) and
/// PyMdown Extensions' `details` (`???+? ?type… "title"?`, or a title alone) and `tabbed`
/// (`===[+!]* "title"`). As Python-Markdown reads them, a marker stands at a multiple of
/// four columns in its block quote (a list item's content counts as four columns in), and
/// its body four columns further.
fn marker_at(text: &str, start: usize, end: usize, next: Option<&Node>) -> Option<Range<usize>> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r#"^(?:(?:!!!|\?\?\?\+?) ?[\w-]+(?: +[\w-]+)*(?: +"[^\r\n]*")?|\?\?\?\+? +"[^\r\n]*"|===[+!]* +"[^\r\n]*") *$"#,
        )
        .expect("valid regex")
    });
    // A line's position may include the indentation and block quote markers before it.
    let start = start
        + text
            .get(start..end)?
            .find(|c| !matches!(c, ' ' | '\t' | '>'))?;
    if !matches!(text.as_bytes().get(start), Some(b'!' | b'?' | b'=')) {
        return None;
    }
    let (line_end, after_line) = line_end(text, start);
    if start + 4 >= line_end || !re.is_match(&text[start..line_end]) {
        return None;
    }
    let line_start = text[..start].rfind(['\n', '\r']).map_or(0, |i| i + 1);
    // The body's first line: the paragraph's next line, or the next block's first.
    let body_line = if end > after_line {
        after_line
    } else {
        let Some(Node::Code(code)) = next else {
            return None;
        };
        let code_start = code.position.as_ref()?.start.offset;
        text[..code_start].rfind(['\n', '\r']).map_or(0, |i| i + 1)
    };
    let body = &text[body_line..line_end_of(text, body_line)];
    let body = &body[..body
        .find(|c| !matches!(c, ' ' | '\t' | '>'))
        .unwrap_or(body.len())];
    let marker = Indent::of(&text[line_start..start]);
    let column = if marker.after_list_marker {
        marker.column.next_multiple_of(4)
    } else if marker.column.is_multiple_of(4) {
        marker.column
    } else {
        return None;
    };
    let body = Indent::of(body);
    (body.quotes == marker.quotes && body.column >= column + 4).then_some(start..start + 4)
}

/// The end of the line holding byte `at` (before its `\n`, `\r\n` or `\r`: Python-Markdown
/// reads a lone `\r` as a line break too), and where the next line starts.
fn line_end(text: &str, at: usize) -> (usize, usize) {
    let end = line_end_of(text, at);
    let next = match &text.as_bytes()[end..] {
        [b'\r', b'\n', ..] => end + 2,
        [] => end,
        _ => end + 1,
    };
    (end, next)
}

fn line_end_of(text: &str, at: usize) -> usize {
    text[at..].find(['\n', '\r']).map_or(text.len(), |i| at + i)
}

/// Where a line's content stands, from what precedes it on the line.
struct Indent {
    /// Block quote markers (`>`) before it.
    quotes: usize,
    /// Its column past the last block quote marker and the one space that may follow it,
    /// tabs counting to the next multiple of four (CommonMark 2.2, Python-Markdown).
    column: usize,
    /// A list item's marker stands before it on the line (`- !!! note`).
    after_list_marker: bool,
}

impl Indent {
    fn of(prefix: &str) -> Indent {
        let (mut column, mut base, mut quotes, mut after_list_marker) = (0, 0, 0, false);
        let mut chars = prefix.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '>' => {
                    column += 1;
                    quotes += 1;
                    if chars.next_if_eq(&' ').is_some() {
                        column += 1;
                    }
                    base = column;
                    after_list_marker = false;
                }
                '\t' => column = (column / 4 + 1) * 4,
                ' ' => column += 1,
                _ => {
                    column += 1;
                    after_list_marker = true;
                }
            }
        }
        Indent {
            quotes,
            column: column - base,
            after_list_marker,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::to_mdast;
    use super::*;

    /// The kinds of the top-level nodes and, for lists, of what each item holds.
    fn shape(text: &str) -> Vec<String> {
        let Node::Root(root) = to_mdast(text, false).unwrap() else {
            panic!("not a root")
        };
        root.children.iter().map(describe).collect()
    }

    fn describe(node: &Node) -> String {
        let kind = match node {
            Node::Paragraph(_) => "p",
            Node::Code(_) => "code",
            Node::List(_) => "list",
            Node::ListItem(_) => "item",
            Node::Definition(_) => "def",
            Node::Heading(_) => "h",
            Node::Blockquote(_) => "quote",
            _ => "other",
        };
        match node.children() {
            Some(children) if !matches!(node, Node::Paragraph(_) | Node::Heading(_)) => format!(
                "{kind}({})",
                children.iter().map(describe).collect::<Vec<_>>().join(" ")
            ),
            _ => kind.to_string(),
        }
    }

    #[test]
    fn bodies_are_markdown() {
        let text = "!!! note \"Title\"\n\n    [a][x]\n\n    ```yaml\n    k: v\n\n    w: 1\n    ```\n\n    [x]: a.md\n\nAfter.\n";
        assert_eq!(shape(text), vec!["list(item(p p code def))", "p"]);
        // Offsets are the source's: the definition's label is where it is written.
        let Node::Root(root) = to_mdast(text, false).unwrap() else {
            panic!()
        };
        let Node::List(list) = &root.children[0] else {
            panic!()
        };
        let def = &list.children[0].children().unwrap()[3];
        let start = def.position().unwrap().start.offset;
        assert_eq!(&text[start..start + 9], "[x]: a.md");
    }

    #[test]
    fn details_tabs_glued_bodies_and_nesting() {
        assert_eq!(
            shape("=== \"A\"\n\n    one\n\n=== \"B\"\n\n    two\n"),
            vec!["list(item(p p) item(p p))"]
        );
        assert_eq!(shape("???+ tip\n    glued [x]\n"), vec!["list(item(p))"]);
        assert_eq!(
            shape("??? example \"Outer\"\n\n    !!! note\n\n        inner\n"),
            vec!["list(item(p list(item(p p))))"]
        );
        assert_eq!(
            shape("> !!! warning\n>\n>     quoted body\n"),
            vec!["quote(list(item(p p)))"]
        );
    }

    #[test]
    fn containers_in_list_items_with_tabs_and_python_markdowns_other_shapes() {
        // The marker indented past the item's content column, as MkDocs pages write it.
        assert_eq!(
            shape("- item\n\n    !!! note\n\n        body\n"),
            vec!["list(item(p list(item(p p))))"]
        );
        // A marker on the list item's own line: Python-Markdown reads the item's content
        // as four columns in, so the body is at eight.
        assert_eq!(
            shape("- !!! note\n\n        body\n"),
            vec!["list(item(list(item(p p))))"]
        );
        // A marker on a paragraph's later line starts a container there.
        assert_eq!(
            shape("Some text\n!!! note\n\n    body\n"),
            vec!["p", "list(item(p p))"]
        );
        assert_eq!(
            shape("> Quoted\n> ??? tip\n>     glued\n"),
            vec!["quote(p list(item(p)))"]
        );
        // A title holding quotes; a multi-byte type right after the marker; `\r` lines.
        assert_eq!(
            shape("!!! note \"Say \"hi\" now\"\n\n    body\n"),
            vec!["list(item(p p))"]
        );
        assert_eq!(shape("!!!é\n    body\n"), vec!["list(item(p))"]);
        assert_eq!(shape("???日本\n\n    body\n"), vec!["list(item(p p))"]);
        assert_eq!(shape("!!! note\r\r    body\r"), vec!["list(item(p p))"]);
        // Tabs count to the next multiple of four columns.
        assert_eq!(shape("!!! note\n\n\tbody\n"), vec!["list(item(p p))"]);
        assert_eq!(
            shape("- item\n\n    !!! note\n\n    \tbody\n"),
            vec!["list(item(p list(item(p p))))"]
        );
        // No space before the type; details with a title and no type.
        assert_eq!(shape("!!!tip\n    body\n"), vec!["list(item(p))"]);
        assert_eq!(
            shape("??? \"Only title\"\n\n    body\n"),
            vec!["list(item(p p))"]
        );
    }

    #[test]
    fn a_container_never_joins_a_list_written_next_to_it() {
        for bullet in ['+', '-', '*'] {
            let text = format!(
                "{bullet} one\n\n!!! note\n\n    body\n\n{bullet} two\n\n=== \"A\"\n\n    tab\n"
            );
            assert_eq!(
                shape(&text),
                vec![
                    "list(item(p))",
                    "list(item(p p))",
                    "list(item(p))",
                    "list(item(p p))"
                ],
                "{text:?}"
            );
        }
        // Tabs written one after the other stay one list.
        assert_eq!(
            shape("+ x\n\n=== \"A\"\n\n    one\n\n=== \"B\"\n\n    two\n"),
            vec!["list(item(p))", "list(item(p p) item(p p))"]
        );
    }

    #[test]
    fn other_text_is_left_as_commonmark_reads_it() {
        for (text, expected) in [
            // No body.
            ("!!! note\n\nNext paragraph.\n", vec!["p", "p"]),
            // Not a marker's shape.
            ("!!! WARNING !!!\n\n    code\n", vec!["p", "code"]),
            ("=== Tab\n\n    code\n", vec!["p", "code"]),
            // In fenced code.
            ("```\n!!! note\n\n    body\n```\n", vec!["code"]),
            // A body indented less than four spaces.
            ("!!! note\n\n   text\n", vec!["p", "p"]),
            // In a list item, less than four past the marker.
            (
                "- item\n\n    !!! note\n\n      text\n",
                vec!["list(item(p p code))"],
            ),
            ("- !!! note\n\n      text\n", vec!["list(item(p code))"]),
            // Not at a multiple of four columns, where Python-Markdown sees no marker.
            (" !!! note\n\n     text\n", vec!["p", "code"]),
            (
                "- item\n\n  !!! note\n\n      text\n",
                vec!["list(item(p p code))"],
            ),
            (
                "- item\n\n     !!! note\n\n         text\n",
                vec!["list(item(p p code))"],
            ),
            // An admonition needs a type; `!!!` alone is text.
            ("!!! \"Title\"\n\n    code\n", vec!["p", "code"]),
            ("???\"Title\"\n\n    code\n", vec!["p", "code"]),
        ] {
            assert_eq!(shape(text), expected, "{text:?}");
        }
    }
}
