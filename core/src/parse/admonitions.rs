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
//! A marker line becomes a container only where it starts a paragraph and a body follows:
//! the paragraph's next line, or the indented code block right after it, repeats the
//! marker line's container prefix (a block quote's `>`, a list item's indentation) and is
//! indented four more columns past the marker, tabs counting to the next multiple of four
//! as in Python-Markdown. The marker's shape is Python-Markdown's: `!!!`, `???` or `???+`,
//! one or more type words and an optional quoted title (for `???`, a title alone will
//! do); or `===`, `===+` or `===!` and a quoted title.

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
            // The content must start right at the body's column: nothing blank there.
            if matches!(bytes.get(range.end), Some(b' ' | b'\t')) {
                bytes[range.end] = b'_';
            }
        }
        // Only ASCII bytes replaced ASCII bytes, so the text is still UTF-8.
        let next = String::from_utf8(bytes).expect("ASCII replaced ASCII");
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
            && let Some(range) =
                marker_at(text, pos.start.offset, pos.end.offset, children.get(i + 1))
        {
            let bullet = *bullet.get_or_insert_with(|| free_bullet(text, children));
            out.push(Marker { range, bullet });
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

/// The marker starting the paragraph at `start..end`, as the byte range of its first four
/// bytes, if it opens a container whose body follows (see the module docs). `next` is the
/// paragraph's next sibling.
///
/// The shapes are those of Python-Markdown's `admonition` (`!!! ?type… "title"?`) and
/// PyMdown Extensions' `details` (`???+? ?type… "title"?`, or a title alone) and `tabbed`
/// (`===[+!]* "title"`).
fn marker_at(text: &str, start: usize, end: usize, next: Option<&Node>) -> Option<Range<usize>> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r#"^(?:(?:!!!|\?\?\?\+?) ?[\w-]+(?: +[\w-]+)*(?: +"[^"\r\n]*")?|\?\?\?\+? +"[^"\r\n]*"|===[+!]* +"[^"\r\n]*") *\r?$"#,
        )
        .expect("valid regex")
    });
    // A paragraph's position includes the indentation its container leaves to it.
    let start = start + text.get(start..end)?.find(|c| c != ' ' && c != '\t')?;
    if !matches!(text.as_bytes().get(start), Some(b'!' | b'?' | b'=')) {
        return None;
    }
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    if start + 4 >= line_end || !re.is_match(&text[start..line_end]) {
        return None;
    }
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    // The body's first line: the paragraph's second line, or the next block's first.
    let body_line = if end > line_end {
        line_end + 1
    } else {
        let Some(Node::Code(code)) = next else {
            return None;
        };
        let code_start = code.position.as_ref()?.start.offset;
        text[..code_start].rfind('\n').map_or(0, |i| i + 1)
    };
    let body_end = text[body_line..]
        .find('\n')
        .map_or(text.len(), |i| body_line + i);
    let marker = columns(&text[line_start..start]);
    let body = &text[body_line..body_end];
    let body = columns(
        &body[..body
            .find(|c| !matches!(c, ' ' | '\t' | '>'))
            .unwrap_or(body.len())],
    );
    (body.len() >= marker.len() + 4
        && body.starts_with(&marker)
        && body[marker.len()..marker.len() + 4]
            .bytes()
            .all(|b| b == b' '))
    .then_some(start..start + 4)
}

/// The columns of the container prefix `prefix` (what comes before a line's content), as
/// a continuation line repeats them: block quote markers kept, tabs expanded to the next
/// multiple of four columns (CommonMark 2.2) and every other character (a list marker) a
/// space.
fn columns(prefix: &str) -> String {
    let mut out = String::new();
    for c in prefix.chars() {
        match c {
            '>' => out.push('>'),
            '\t' => {
                out.push(' ');
                while !out.len().is_multiple_of(4) {
                    out.push(' ');
                }
            }
            _ => out.push(' '),
        }
    }
    out
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
        // A marker on the list item's own line: the body is indented past the item.
        assert_eq!(
            shape("- !!! note\n\n      body\n"),
            vec!["list(item(list(item(p p))))"]
        );
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
            ("Some text\n!!! note\n\n    code\n", vec!["p", "code"]),
            // In fenced code.
            ("```\n!!! note\n\n    body\n```\n", vec!["code"]),
            // A body indented less than four spaces.
            ("!!! note\n\n   text\n", vec!["p", "p"]),
            // In a list item, less than four past the marker.
            (
                "- item\n\n    !!! note\n\n      text\n",
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
