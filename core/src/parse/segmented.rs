//! Parsing a large document in segments.
//!
//! markdown-rs keeps its events in one vector and inserts into it as it resolves each
//! construct, so its time grows with the square of a document's size: 20,000 headings
//! (1.3 MB) take about 4 s, while the same text in 64 KiB pieces takes a few tens of
//! milliseconds. A document larger than [`SEGMENT_BYTES`] is therefore cut, by a line
//! scan, at lines that start in column 0 right after a blank line outside fenced code,
//! math, HTML comments, processing instructions, CDATA and raw HTML blocks, and that
//! begin an ATX heading, a paragraph or a definition (a letter, `[` or `!`; not a digit
//! or a marker that could continue a list, a quote or a table). There every container is closed and
//! markdown-rs starts afresh (CommonMark 4.2, 4.8, 5.1–5.3: a blank line ends a
//! paragraph and a table, and an unindented line that is no list marker ends every list
//! item and block quote), so a note of one heading and many paragraphs is cut too. Each
//! segment is parsed on its own. Link reference and footnote definitions are document-wide: the
//! definitions markdown-rs finds in the segments are collected, and each segment with a
//! `[` is parsed again with a stub definition of every label appended (the stubs' nodes
//! dropped), so its references resolve as in the whole document. A test compares the result with a whole-document parse of the
//! real fixture files.

use markdown::mdast::Node;

use super::to_mdast;

/// Documents larger than this many bytes are parsed in segments of about this size.
pub const SEGMENT_BYTES: usize = 64 * 1024;

/// The byte range of a node (empty when it has no position).
pub(crate) fn span(node: &Node) -> std::ops::Range<usize> {
    node.position()
        .map_or(0..0, |p| p.start.offset..p.end.offset)
}

/// Adds `delta` to every offset in `node` (negative when text before it shrank).
pub(crate) fn shift(node: &mut Node, delta: isize) {
    if let Some(pos) = node.position_mut() {
        pos.start.offset = (pos.start.offset as isize + delta) as usize;
        pos.end.offset = (pos.end.offset as isize + delta) as usize;
    }
    if let Some(children) = node.children_mut() {
        for child in children {
            shift(child, delta);
        }
    }
}

/// The top-level mdast nodes of `text`, offsets into `text`; parsed in segments when
/// the text is larger than [`SEGMENT_BYTES`].
pub(crate) fn top_level_nodes(text: &str) -> Result<Vec<Node>, String> {
    segmented(text, SEGMENT_BYTES)
}

/// [`top_level_nodes`] with segments of about `target` bytes.
pub(crate) fn segmented(text: &str, target: usize) -> Result<Vec<Node>, String> {
    let starts = segment_starts(text, target);
    if starts.len() == 1 {
        return match to_mdast(text, true)? {
            Node::Root(root) => Ok(root.children),
            _ => Ok(Vec::new()),
        };
    }
    // First each segment alone; the definitions markdown-rs found are the document's.
    let mut parts: Vec<Vec<Node>> = Vec::with_capacity(starts.len());
    let mut own_labels: Vec<Vec<String>> = Vec::with_capacity(starts.len());
    let mut labels: Vec<String> = Vec::new();
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(text.len());
        let nodes = parse_segment(&text[start..end], "", i == 0)?;
        let mut own = Vec::new();
        collect_labels(&nodes, &mut own);
        own_labels.push(
            own.iter()
                .map(|l| crate::parse::normalize_label(l))
                .collect(),
        );
        labels.extend(own);
        parts.push(nodes);
    }
    labels.sort();
    labels.dedup();
    let stubs: String = labels.iter().map(|l| format!("[{l}]: x\n\n")).collect();
    let keys: Vec<String> = labels
        .iter()
        .map(|l| crate::parse::normalize_label(l))
        .collect();
    let mut nodes = Vec::new();
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(text.len());
        let segment = &text[start..end];
        // Then again with a stub of every label, so references across segments resolve —
        // only when the segment names a label another segment defines, and unless it ends
        // inside something that would swallow the stubs.
        let mut parsed = std::mem::take(&mut parts[i]);
        let lower = segment.to_lowercase();
        let names_foreign_label = keys
            .iter()
            .any(|k| !own_labels[i].contains(k) && lower.contains(&format!("[{k}]")));
        if names_foreign_label {
            let with_stubs = parse_segment(segment, &stubs, i == 0)?;
            if with_stubs.iter().all(|n| span(n).end <= segment.len()) {
                parsed = with_stubs;
            }
        }
        for mut node in parsed {
            shift(&mut node, start as isize);
            nodes.push(node);
        }
    }
    Ok(nodes)
}

/// The labels of the link reference and footnote definitions among `nodes`, written as
/// a definition's brackets hold them (`label`, `^label`).
fn collect_labels(nodes: &[Node], out: &mut Vec<String>) {
    for node in nodes {
        match node {
            Node::Definition(d) => {
                out.push(d.label.clone().unwrap_or_else(|| d.identifier.clone()))
            }
            Node::FootnoteDefinition(f) => out.push(format!(
                "^{}",
                f.label.clone().unwrap_or_else(|| f.identifier.clone())
            )),
            _ => {}
        }
        if let Some(children) = node.children() {
            collect_labels(children, out);
        }
    }
}

fn parse_segment(segment: &str, stubs: &str, frontmatter: bool) -> Result<Vec<Node>, String> {
    let source;
    let input = if stubs.is_empty() {
        segment
    } else {
        let mut s = String::with_capacity(segment.len() + stubs.len() + 2);
        s.push_str(segment);
        s.push_str("\n\n");
        s.push_str(stubs);
        source = s;
        &source
    };
    let mut nodes: Vec<Node> = match to_mdast(input, frontmatter)? {
        Node::Root(root) => root
            .children
            .into_iter()
            .filter(|n| span(n).start < segment.len())
            .collect(),
        _ => Vec::new(),
    };
    if !stubs.is_empty() {
        // A block that runs to the start of the next one (a list ends where the next block
        // starts) reaches into the `\n\n` before the stubs; in the document it ends where
        // the next segment starts, which is the segment's end.
        for node in &mut nodes {
            clamp_end(node, segment.len(), segment.len() + 2);
        }
    }
    Ok(nodes)
}

/// Sets ends in `limit..=reach` to `limit`; an end past `reach` is left for the caller to see.
fn clamp_end(node: &mut Node, limit: usize, reach: usize) {
    if let Some(pos) = node.position_mut()
        && pos.end.offset > limit
        && pos.end.offset <= reach
    {
        pos.end.offset = limit;
    }
    if let Some(children) = node.children_mut() {
        for child in children {
            clamp_end(child, limit, reach);
        }
    }
}

/// True when a column-0 line after a blank line, in normal text, starts a block that
/// nothing before it can continue: an ATX heading, or a paragraph or definition whose
/// first character is a letter, `[` or `!` (a digit could start an ordered list item,
/// other punctuation a list item, a quote, a table row or an HTML block).
fn starts_fresh_block(line: &str) -> bool {
    if line.starts_with('#') {
        let hashes = line.bytes().take_while(|&b| b == b'#').count();
        return hashes <= 6 && matches!(line.as_bytes().get(hashes), None | Some(b' ' | b'\t'));
    }
    line.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '[' || c == '!')
}

/// Byte offsets where segments start (the first is 0): column-0 headings and paragraph
/// starts after a blank line ([`starts_fresh_block`]), in normal text, at least `target`
/// bytes after the previous start.
fn segment_starts(text: &str, target: usize) -> Vec<usize> {
    let mut starts = vec![0];
    if text.len() <= target {
        return starts;
    }
    enum State {
        Normal,
        Fence(u8, usize),
        Math,
        Comment,
        Raw(&'static str),
        Frontmatter,
    }
    let mut state = if text.starts_with("---") {
        State::Frontmatter
    } else {
        State::Normal
    };
    let mut prev_blank = false;
    let mut offset = 0usize;
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += line.len();
        let content = line.trim_end_matches(['\n', '\r']);
        let indent = content.len() - content.trim_start_matches(' ').len();
        let trimmed = content.trim_start_matches(' ');
        let blank = content.trim().is_empty();
        state = match state {
            State::Frontmatter => {
                if n > 0 && (content == "---" || content == "...") {
                    State::Normal
                } else {
                    State::Frontmatter
                }
            }
            State::Fence(ch, len) => {
                let run = trimmed.bytes().take_while(|&b| b == ch).count();
                if indent <= 3 && run >= len && trimmed[run..].trim().is_empty() {
                    State::Normal
                } else {
                    State::Fence(ch, len)
                }
            }
            State::Math => {
                if trimmed.starts_with("$$") {
                    State::Normal
                } else {
                    State::Math
                }
            }
            State::Comment => {
                if content.contains("-->") {
                    State::Normal
                } else {
                    State::Comment
                }
            }
            State::Raw(end) => {
                if content.to_ascii_lowercase().contains(end) {
                    State::Normal
                } else {
                    State::Raw(end)
                }
            }
            State::Normal => {
                if indent == 0
                    && prev_blank
                    && start - starts[starts.len() - 1] >= target
                    && starts_fresh_block(trimmed)
                {
                    starts.push(start);
                }
                let fence_char = trimmed.bytes().next().filter(|&b| b == b'`' || b == b'~');
                let lower = trimmed.to_ascii_lowercase();
                match fence_char {
                    Some(ch)
                        if indent <= 3 && trimmed.bytes().take_while(|&b| b == ch).count() >= 3 =>
                    {
                        State::Fence(ch, trimmed.bytes().take_while(|&b| b == ch).count())
                    }
                    _ if indent <= 3
                        && trimmed.starts_with("$$")
                        && !trimmed[2..].contains("$$") =>
                    {
                        State::Math
                    }
                    _ if indent <= 3 && trimmed.starts_with("<!--") && !trimmed.contains("-->") => {
                        State::Comment
                    }
                    _ if indent <= 3 && trimmed.starts_with("<?") && !trimmed.contains("?>") => {
                        State::Raw("?>")
                    }
                    _ if indent <= 3
                        && trimmed.starts_with("<![CDATA[")
                        && !trimmed.contains("]]>") =>
                    {
                        State::Raw("]]>")
                    }
                    _ if indent <= 3 => {
                        let raw = [
                            ("<pre", "</pre>"),
                            ("<script", "</script>"),
                            ("<style", "</style>"),
                            ("<textarea", "</textarea>"),
                        ];
                        match raw.iter().find(|(open, _)| lower.starts_with(open)) {
                            Some((_, end)) if !lower.contains(end) => State::Raw(end),
                            _ => State::Normal,
                        }
                    }
                    _ => State::Normal,
                }
            }
        };
        prev_blank = blank;
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::build;

    /// Every Markdown file of tests/fixtures (real files of three corpora), joined.
    fn fixture_text() -> String {
        fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, out);
                } else if path.extension().is_some_and(|e| e == "md") {
                    out.push(path);
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
        let mut files = Vec::new();
        walk(&root, &mut files);
        files.sort();
        files
            .iter()
            .map(|f| std::fs::read_to_string(f).unwrap())
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    #[test]
    fn segments_give_the_same_parse_as_the_whole_document() {
        let text = fixture_text();
        assert!(text.len() > 250_000, "{}", text.len());
        let whole = match to_mdast(&text, true).unwrap() {
            Node::Root(root) => root.children,
            _ => unreachable!(),
        };
        let pieces = segmented(&text, 8 * 1024).unwrap();
        assert!(segment_starts(&text, 8 * 1024).len() > 20);
        let (a, b) = (build(&text, whole.iter()), build(&text, pieces.iter()));
        assert_eq!(a.elements, b.elements);
        assert_eq!(a.headings, b.headings);
        let only_whole: Vec<_> = a
            .links
            .iter()
            .filter(|l| !b.links.contains(l))
            .map(|l| (&text[l.range.clone()], l.kind))
            .collect();
        let only_pieces: Vec<_> = b
            .links
            .iter()
            .filter(|l| !a.links.contains(l))
            .map(|l| (&text[l.range.clone()], l.kind))
            .collect();
        assert_eq!((only_whole, only_pieces), (vec![], vec![]));
        assert_eq!(a.definitions, b.definitions);
        assert_eq!(a.footnote_definitions, b.footnote_definitions);
        assert_eq!(a.anchors, b.anchors);
    }

    #[test]
    fn no_cut_inside_fences_comments_math_or_raw_html() {
        let filler = "`text`\n\n".repeat(20);
        let text = format!(
            "{filler}```sh\n\n# not a heading\n```\n\n{filler}<!--\n\n# not either\n-->\n\n{filler}$$\n\n# math\n$$\n\n{filler}<pre>\n\n# raw\n</pre>\n\n{filler}# Real\n\n[a][x]\n\n{filler}## Second\n\n[x]: y.md\n"
        );
        let starts = segment_starts(&text, 16);
        let cut_lines: Vec<&str> = starts[1..]
            .iter()
            .map(|&s| text[s..].lines().next().unwrap())
            .collect();
        assert_eq!(cut_lines, vec!["# Real", "## Second"]);
        // The reference in the middle segment finds the definition in the last one.
        let parsed = build(&text, segmented(&text, 16).unwrap().iter());
        assert_eq!(
            parsed
                .links
                .iter()
                .filter(|l| l.kind == crate::parse::LinkKind::Reference)
                .count(),
            1
        );
    }

    #[test]
    fn paragraphs_are_cut_and_continuing_blocks_are_not() {
        let text = "# One heading\n\nFirst paragraph.\n\n- item\n\n- loose item\n\n1. ordered\n\n\
                    2. ordered again\n\n> quote\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n    indented code\n\n\
                    Second paragraph [^n] and [ref].\n\n<?php\n\nEcho inside.\n?>\n\n\u{65e5}\u{672c}\u{8a9e}\n\n\
                    [^n]: A note.\n\n    Its second paragraph.\n\nLast.\n\n[ref]: target.md\n";
        let cut_lines: Vec<&str> = segment_starts(text, 1)[1..]
            .iter()
            .map(|&s| text[s..].lines().next().unwrap())
            .collect();
        assert_eq!(
            cut_lines,
            vec![
                "First paragraph.",
                "Second paragraph [^n] and [ref].",
                "\u{65e5}\u{672c}\u{8a9e}",
                "[^n]: A note.",
                "Last.",
                "[ref]: target.md"
            ]
        );
        // Cut at every paragraph, the parse is the whole document's.
        let whole = match to_mdast(text, true).unwrap() {
            Node::Root(root) => root.children,
            _ => unreachable!(),
        };
        let pieces = segmented(text, 1).unwrap();
        let (a, b) = (build(text, whole.iter()), build(text, pieces.iter()));
        assert_eq!(a.elements, b.elements);
        assert_eq!(a.links, b.links);
        assert_eq!(a.footnote_definitions, b.footnote_definitions);
        assert_eq!(a.definitions, b.definitions);
    }
}
