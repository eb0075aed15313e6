//! Incremental re-parsing: after an edit, parse again only the top-level blocks the
//! edit touches, and rebuild the [`Parsed`] result from the cached blocks.
//!
//! The document's top-level mdast nodes are kept in chunks of whole blocks. A chunk
//! boundary is a top-level block that starts in column 0 right after a blank line, so
//! every container before it is closed and markdown-rs starts afresh there. After an
//! edit, the chunks the changed bytes touch are parsed again on their own, the chunks
//! after them only have their offsets shifted, and the parser's builder makes the result from all
//! nodes, exactly as [`parse`] does from one root.
//!
//! Link reference and footnote definitions are document-wide, so a stub definition for
//! each label of the rest of the document is appended to the re-parsed text, in the
//! place of the block that follows it in the document (and the stubs' nodes dropped). Whenever a re-parse could differ from a whole-document parse — the
//! edit added or removed a definition label, the chunk no longer ends with a blank line,
//! or it ends inside an unclosed fence, math block or raw HTML block — the whole document
//! is parsed again instead, and so is a region larger than a segment
//! ([`super::segmented::SEGMENT_BYTES`]), which the whole-document parse cuts in pieces
//! (markdown-rs is quadratic in what it parses at once). A test compares the result with
//! [`parse`] after random edits of real files.
//!
//! A document without the block cache (closed in the editor, only its [`Parsed`] kept)
//! whose new text differs from the old only in link destinations, as after a heading
//! rename, gets its new parse from the old one by [`update_destinations`], without
//! markdown-rs.

use std::collections::BTreeSet;
use std::ops::Range;
use std::sync::OnceLock;

use markdown::mdast::Node;
use regex::Regex;

use super::segmented::{shift, span};
use super::{LinkKind, Parsed, build, nesting_problem, parse, to_mdast};
use crate::document::LineIndex;
use crate::pointer::hash_bytes;

/// A chunk is closed once it holds at least this many bytes and a boundary follows.
pub const MIN_CHUNK_BYTES: usize = 8 * 1024;

/// Whole top-level blocks from `range.start` to `range.end`, positions absolute.
#[derive(Clone, Debug)]
struct Chunk {
    range: Range<usize>,
    nodes: Vec<Node>,
}

/// Counts of how updates were made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Updates that parsed only the touched chunks.
    pub partial: usize,
    /// Updates that parsed the whole document.
    pub full: usize,
}

/// The cached top-level blocks of one document.
#[derive(Clone, Debug)]
pub struct IncrementalParser {
    chunks: Vec<Chunk>,
    /// How updates were made so far.
    pub stats: Stats,
    /// Texts longer than this (bytes) keep no blocks: each update parses them whole.
    keep_blocks_up_to: usize,
}

impl Default for IncrementalParser {
    /// A parser with no blocks that keeps the blocks of any text it parses next.
    fn default() -> IncrementalParser {
        IncrementalParser {
            chunks: Vec::new(),
            stats: Stats::default(),
            keep_blocks_up_to: usize::MAX,
        }
    }
}

/// True when a top-level block may start a chunk at `at`: column 0, not blank, and the
/// line before it is blank.
fn is_boundary(text: &str, at: usize) -> bool {
    let bytes = text.as_bytes();
    if at == 0
        || at >= bytes.len()
        || bytes[at - 1] != b'\n'
        || matches!(bytes[at], b' ' | b'\t' | b'\n' | b'\r')
    {
        return false;
    }
    let before = &text[..at - 1];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    before[line_start..].trim().is_empty() && line_start > 0
}

/// Groups top-level nodes (absolute positions) covering `range` into chunks.
fn chunk(text: &str, range: Range<usize>, nodes: Vec<Node>) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    let mut current = Chunk {
        range: range.start..range.start,
        nodes: Vec::new(),
    };
    for node in nodes {
        let start = span(&node).start;
        if !current.nodes.is_empty()
            && start - current.range.start >= MIN_CHUNK_BYTES
            && is_boundary(text, start)
        {
            current.range.end = start;
            let next = Chunk {
                range: start..start,
                nodes: Vec::new(),
            };
            chunks.push(std::mem::replace(&mut current, next));
        }
        current.nodes.push(node);
    }
    current.range.end = range.end;
    chunks.push(current);
    chunks
}

/// Lines that may hold a link reference or footnote definition, in any container. A
/// line starts after `\n` or after a lone `\r` (CommonMark 2.1 line endings).
fn may_define(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(?m)(?:^|\r)[ \t>*+\-0-9.)]*\[[^\]]*\]:").expect("valid regex"))
        .is_match(text)
}

/// The labels a document defines: link reference definitions' and footnote
/// definitions', normalised (CommonMark 4.7), each once.
fn labels(parsed: &Parsed) -> (BTreeSet<&str>, BTreeSet<&str>) {
    (
        parsed.definitions.iter().map(|d| d.key.as_str()).collect(),
        parsed
            .footnote_definitions
            .iter()
            .map(|(key, _)| key.as_str())
            .collect(),
    )
}

fn ends_with_blank_line(text: &str) -> bool {
    let trimmed = text.trim_end_matches([' ', '\t']);
    let Some(body) = trimmed.strip_suffix('\n') else {
        return false;
    };
    let body = body.strip_suffix('\r').unwrap_or(body);
    let last_line = body.rsplit('\n').next().unwrap_or(body);
    last_line.trim().is_empty()
}

/// True when a top-level node is a fence, math block or raw HTML block (CommonMark
/// types 1–5) whose closing line is missing, so it would swallow what follows.
fn is_unclosed(node: &Node, text: &str) -> bool {
    let source = &text[span(node)];
    let first = source.lines().next().unwrap_or("").trim_start();
    let last = source.lines().last().unwrap_or("").trim();
    let _ = first.len();
    match node {
        Node::Code(_) => {
            let fence: String = first
                .chars()
                .take_while(|&c| c == '`' || c == '~')
                .collect();
            if fence.len() < 3 {
                return false;
            }
            let fence_char = fence.chars().next().unwrap_or('`');
            source.lines().count() < 2
                || !(last.len() >= fence.len() && last.chars().all(|c| c == fence_char))
        }
        Node::Math(_) => source.lines().count() < 2 || !last.starts_with("$$"),
        Node::Html(_) => {
            let trimmed = source.trim_start();
            let lower = trimmed.to_ascii_lowercase();
            if ["<script", "<pre", "<style", "<textarea"]
                .iter()
                .any(|t| lower.starts_with(t))
            {
                return !["</script>", "</pre>", "</style>", "</textarea>"]
                    .iter()
                    .any(|e| lower.contains(e));
            }
            let (opener, end) = if trimmed.starts_with("<!--") {
                ("<!--", "-->")
            } else if trimmed.starts_with("<?") {
                ("<?", "?>")
            } else if trimmed.starts_with("<![CDATA[") {
                ("<![CDATA[", "]]>")
            } else if trimmed.starts_with("<!") {
                ("<!", ">")
            } else {
                return false;
            };
            !trimmed[opener.len()..].contains(end)
        }
        _ => false,
    }
}

impl IncrementalParser {
    /// Parses `text` whole and caches its top-level blocks.
    pub fn new(text: &str) -> (IncrementalParser, Parsed) {
        IncrementalParser::keeping_blocks_up_to(text, usize::MAX)
    }

    /// [`IncrementalParser::new`] for a parser that parses texts up to `limit` bytes only:
    /// a longer text gets its headings by a line scan ([`super::headings_only`]: no links,
    /// no other blocks) at every update, and nothing is cached. The language server's rule
    /// for very large buffers (the limit is `[index] max_file_size`), which a full parse
    /// would keep at about 11 times their size in memory and 1.6 s a keystroke at 50 MB.
    pub fn keeping_blocks_up_to(text: &str, limit: usize) -> (IncrementalParser, Parsed) {
        let bare = IncrementalParser {
            keep_blocks_up_to: limit,
            ..IncrementalParser::default()
        };
        if text.len() > limit {
            return (bare, super::headings_only(text));
        }
        if nesting_problem(text).is_some() {
            return (bare, parse(text));
        }
        match super::segmented::top_level_nodes(text) {
            Ok(nodes) => {
                let parsed = build(text, nodes.iter());
                let chunks = chunk(text, 0..text.len(), nodes);
                (IncrementalParser { chunks, ..bare }, parsed)
            }
            Err(_) => (bare, parse(text)),
        }
    }

    /// True when the parser's text is longer than its limit, so each update reads only
    /// its headings ([`IncrementalParser::keeping_blocks_up_to`]).
    pub fn over_limit(&self, text_len: usize) -> bool {
        text_len > self.keep_blocks_up_to
    }

    /// Number of cached chunks.
    pub fn n_chunks(&self) -> usize {
        self.chunks.len()
    }

    /// The parse of `new_text`, given the previous text and its parse (made by this parser).
    pub fn update(&mut self, old_text: &str, new_text: &str, previous: &Parsed) -> Parsed {
        let within_limit = new_text.len() <= self.keep_blocks_up_to;
        if let Some(parsed) = within_limit
            .then(|| self.try_update(old_text, new_text, previous))
            .flatten()
        {
            self.stats.partial += 1;
            return parsed;
        }
        let stats = self.stats;
        let (fresh, parsed) =
            IncrementalParser::keeping_blocks_up_to(new_text, self.keep_blocks_up_to);
        *self = fresh;
        self.stats = Stats {
            full: stats.full + 1,
            ..stats
        };
        parsed
    }

    fn try_update(&mut self, old_text: &str, new_text: &str, previous: &Parsed) -> Option<Parsed> {
        if self.chunks.is_empty() || self.chunks.last().map(|c| c.range.end) != Some(old_text.len())
        {
            return None;
        }
        let (old_b, new_b) = (old_text.as_bytes(), new_text.as_bytes());
        let prefix = old_b.iter().zip(new_b).take_while(|(a, b)| a == b).count();
        let max_suffix = old_b.len().min(new_b.len()) - prefix;
        let suffix = old_b
            .iter()
            .rev()
            .zip(new_b.iter().rev())
            .take(max_suffix)
            .take_while(|(a, b)| a == b)
            .count();
        let old_end = old_b.len() - suffix;
        let delta = new_b.len() as isize - old_b.len() as isize;

        let find = |at: usize| {
            self.chunks
                .iter()
                .position(|c| c.range.start <= at && at < c.range.end)
                .unwrap_or(self.chunks.len() - 1)
        };
        let mut first = find(prefix);
        if first > 0 && prefix == self.chunks[first].range.start {
            first -= 1;
        }
        let mut last = find(old_end).max(first);
        if last > first && old_end == self.chunks[last].range.start {
            last -= 1;
        }
        let region_start = self.chunks[first].range.start;
        let region_old_end = self.chunks[last].range.end;
        let region_new_end = (region_old_end as isize + delta) as usize;
        let region_old = old_text.get(region_start..region_old_end)?;
        let region_new = new_text.get(region_start..region_new_end)?;
        let is_last = last == self.chunks.len() - 1;
        // markdown-rs takes time in the square of what it parses at once: a region larger
        // than a segment (a whole-text replacement, a large paste) is parsed whole, which
        // cuts it in segments (`super::segmented`).
        // A region that is one block larger than a segment (a definition holding an image
        // as a data URI) and at most a segment besides, edited by at most a segment, is
        // parsed on its own: the whole-document parse would parse that block in one piece
        // too, and everything else besides.
        let one_large_block = || {
            let largest = self.chunks[first..=last]
                .iter()
                .flat_map(|c| c.nodes.iter())
                .map(|n| span(n).len())
                .max()
                .unwrap_or(0);
            region_old.len().saturating_sub(largest) <= super::segmented::SEGMENT_BYTES
                && region_new.len().abs_diff(region_old.len()) <= super::segmented::SEGMENT_BYTES
        };
        if (region_new.len() > super::segmented::SEGMENT_BYTES && !one_large_block())
            || nesting_problem(region_new).is_some()
        {
            return None;
        }
        // A definition in the edited text is parsed here too; whether the others need a
        // new parse is decided once the labels are known (below).
        let defines = may_define(region_old) || may_define(region_new);
        if !is_last && !ends_with_blank_line(region_new) {
            return None;
        }
        if !is_last && !is_boundary(new_text, region_new_end) {
            return None;
        }

        // The region alone, then a stub for every definition label of the rest of the document.
        let mut source = region_new.to_string();
        let mut stubs = String::new();
        for def in &previous.definitions {
            stubs.push_str(&format!(
                "[{}]: x\n\n",
                old_text.get(def.label_range.clone())?
            ));
        }
        for (_, range) in &previous.footnote_definitions {
            let written = old_text.get(range.clone())?;
            let close = written.find("]:")?;
            stubs.push_str(&format!("{}]: x\n\n", &written[..close]));
        }
        // In the document a column-0 block follows the region's closing blank line; a
        // stub (or a placeholder paragraph) takes its place so block ends come out the same.
        if !is_last && stubs.is_empty() {
            stubs.push_str("x\n");
        }
        if !stubs.is_empty() {
            if !ends_with_blank_line(&source) {
                source.push_str("\n\n");
            }
            source.push_str(&stubs);
        }
        let root = to_mdast(&source, region_start == 0).ok()?;
        let Node::Root(root) = root else { return None };
        let mut nodes: Vec<Node> = root
            .children
            .into_iter()
            .filter(|n| span(n).start < region_new.len())
            .collect();
        if nodes.iter().any(|n| span(n).end > region_new.len()) {
            return None;
        }
        if !is_last && nodes.last().is_some_and(|n| is_unclosed(n, region_new)) {
            return None;
        }
        for node in &mut nodes {
            shift(node, region_start as isize);
        }
        if delta != 0 {
            for chunk in &mut self.chunks[last + 1..] {
                chunk.range = (chunk.range.start as isize + delta) as usize
                    ..(chunk.range.end as isize + delta) as usize;
                for node in &mut chunk.nodes {
                    shift(node, delta);
                }
            }
        }
        let replacement = chunk(new_text, region_start..region_new_end, nodes);
        self.chunks.splice(first..=last, replacement);
        let parsed = build(new_text, self.chunks.iter().flat_map(|c| c.nodes.iter()));
        // The other chunks were parsed knowing which labels are defined: they still hold
        // when the edit kept the set of labels (a definition's destination or title
        // edited, text beside it); a label added or removed can turn `[x]` elsewhere into
        // a link or back, so the whole document is parsed again (the caller's fallback,
        // which also makes the chunks again).
        if defines && labels(&parsed) != labels(previous) {
            return None;
        }
        Some(parsed)
    }
}

/// A character a destination may gain or lose without changing how the rest of the
/// document parses: a letter or digit (any script) or `-`, `_`, `.`, `/`, `#`, `%`. None of
/// them starts or ends a construct inside a destination (brackets, parentheses, angle
/// brackets, white space, quotes, backslash escapes, entities, code, HTML), and a
/// destination made of them is the URL markdown-rs gives, as written.
fn is_plain_url_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '#' | '%')
}

/// The parse of `new_text` made from `previous`, the parse of `old_text`, without parsing
/// again, when the two texts differ only inside the destinations of inline links, images
/// and link reference definitions, each written before and after in letters, digits
/// (any script), `-`, `_`, `.`, `/`, `#` and `%` only — what a heading rename or a file
/// move does to the documents that link there. Such a change moves the ranges after it
/// and changes those links' targets, and nothing else: the block structure, the other
/// inline constructs and the scanner's findings stay. `None` (parse again) when the texts differ anywhere else, when a
/// changed destination is not on the line where its link starts (a line of `-` or `=`
/// would be a heading underline), is written in angle brackets or is inside a heading (a
/// heading that is one link to `#tab/…` takes its anchor from it), or when either text is
/// large enough to be parsed in segments or refused by [`nesting_problem`]. A test
/// compares the result with [`parse`] after destination edits of real files.
///
/// This serves documents without an [`IncrementalParser`] (closed in the editor, read
/// from disk): it needs only the parse the model keeps, not the block cache.
pub fn update_destinations(old_text: &str, new_text: &str, previous: &Parsed) -> Option<Parsed> {
    let limit = super::segmented::SEGMENT_BYTES;
    if old_text.len() > limit || new_text.len() > limit || old_text == new_text {
        return None;
    }
    // Align the texts link by link: equal between destinations, a changed destination a
    // run of plain characters in both.
    struct Change {
        link: usize,
        old: Range<usize>,
        new: Range<usize>,
    }
    let mut changes: Vec<Change> = Vec::new();
    let (mut i, mut j) = (0, 0);
    for (n, link) in previous.links.iter().enumerate() {
        let Some(dest) = &link.dest_range else {
            continue;
        };
        if !matches!(
            link.kind,
            LinkKind::Inline | LinkKind::Image | LinkKind::Definition
        ) || dest.start < i
            || dest.is_empty()
        {
            continue;
        }
        let old_dest = old_text.get(dest.clone())?;
        let after = old_text[dest.end..].chars().next();
        if !old_dest.chars().all(is_plain_url_char) || after.is_some_and(is_plain_url_char) {
            continue;
        }
        let before = old_text.get(i..dest.start)?;
        if new_text.get(j..j + before.len())? != before {
            return None;
        }
        j += before.len();
        let rest = &new_text[j..];
        let len = rest.find(|c| !is_plain_url_char(c)).unwrap_or(rest.len());
        if rest[..len] != *old_dest {
            changes.push(Change {
                link: n,
                old: dest.clone(),
                new: j..j + len,
            });
        }
        i = dest.end;
        j += len;
    }
    if changes.is_empty() || old_text.get(i..)? != new_text.get(j..)? {
        return None;
    }
    for change in &changes {
        let link = &previous.links[change.link];
        if change.new.is_empty()
            // `%%` opens or closes an Obsidian comment, which hides the links after it.
            || old_text[change.old.clone()].contains("%%")
            || new_text[change.new.clone()].contains("%%")
            || old_text[link.range.start..change.old.start].contains(['\n', '\r'])
            || old_text[..change.old.start].ends_with('<')
            || previous
                .headings
                .iter()
                .any(|h| h.range.start < link.range.end && link.range.start < h.range.end)
            // The link as the walk read it: its URL is its destination as written.
            || super::inline::link(
                old_text,
                link.kind,
                link.range.clone(),
                link.dest_range.clone(),
                &old_text[change.old.clone()],
                link.label.clone(),
            ) != *link
        {
            return None;
        }
    }
    if nesting_problem(new_text).is_some() {
        return None;
    }

    // Every range moves with the text: one holding a changed link grows, one after it
    // shifts; one that overlaps a changed destination otherwise cannot be placed.
    let map = |r: &Range<usize>| -> Option<Range<usize>> {
        let (mut start, mut end) = (r.start as isize, r.end as isize);
        for change in &changes {
            let link = &previous.links[change.link].range;
            let delta = change.new.len() as isize - change.old.len() as isize;
            if r.start <= link.start && link.end <= r.end {
                end += delta;
            } else if r.start >= change.old.end {
                start += delta;
                end += delta;
            } else if r.end > change.old.start {
                return None;
            }
        }
        Some(start as usize..end as usize)
    };
    let map_opt = |r: &Option<Range<usize>>| -> Option<Option<Range<usize>>> {
        match r {
            Some(r) => map(r).map(Some),
            None => Some(None),
        }
    };
    let mut parsed = previous.clone();
    let bytes = new_text.as_bytes();
    for el in &mut parsed.elements {
        el.range = map(&el.range)?;
        el.subtree = map(&el.subtree)?;
        el.self_hash = hash_bytes(bytes.get(el.range.clone())?);
        el.subtree_hash = hash_bytes(bytes.get(el.subtree.clone())?);
    }
    for h in &mut parsed.headings {
        h.range = map(&h.range)?;
        h.text_range = map(&h.text_range)?;
    }
    for a in &mut parsed.anchors {
        a.range = map(&a.range)?;
    }
    for (_, r) in &mut parsed.definition_terms {
        *r = map(r)?;
    }
    for d in &mut parsed.definitions {
        d.range = map(&d.range)?;
        d.label_range = map(&d.label_range)?;
    }
    for (_, r) in parsed
        .footnote_definitions
        .iter_mut()
        .chain(parsed.block_ids.iter_mut())
    {
        *r = map(r)?;
    }
    for t in &mut parsed.tags {
        t.range = map(&t.range)?;
    }
    for p in &mut parsed.problems {
        p.range = map(&p.range)?;
    }
    let mut next = changes.iter().peekable();
    for (n, link) in parsed.links.iter_mut().enumerate() {
        let range = map(&link.range)?;
        match next.next_if(|c| c.link == n) {
            Some(change) => {
                *link = super::inline::link(
                    new_text,
                    link.kind,
                    range,
                    Some(change.new.clone()),
                    &new_text[change.new.clone()],
                    link.label.clone(),
                );
            }
            None => {
                link.range = range;
                link.dest_range = map_opt(&link.dest_range)?;
                link.fragment_range = map_opt(&link.fragment_range)?;
            }
        }
    }
    parsed.lines = Some(LineIndex::new(new_text));
    Some(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small xorshift64* generator: seeded, reproducible.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    const SNIPPETS: &[&str] = &[
        "x",
        "\n",
        "\n\n",
        "# H\n",
        "- item\n",
        "    code\n",
        "```\n",
        "```rust\nfn x() {}\n```\n",
        "~~~\n",
        "$$\n",
        "<!--\n",
        "-->",
        "<div>\n",
        "[a](b.md#c)",
        "[[w]]",
        "[r][lbl]",
        "\n[lbl]: x.md\n",
        "[^n]",
        "> q\n",
        "| a |\n|---|\n",
        "😀",
        "---\n",
        "\t",
        "1. one\n",
        "*",
        "`",
        "[",
        "]",
    ];

    /// Real files with fences, lists, tables, HTML and definitions, edited at random;
    /// after every edit the incremental parse equals a whole-document parse.
    #[test]
    fn random_edits_of_real_files_match_a_full_parse() {
        let files = fixture_texts(&[
            "k8s-community/communication",
            "k8s-community",
            "rust-book",
            "mkdocs-material",
        ]);
        assert!(files.len() >= 5, "fixture files found: {}", files.len());
        let mut rng = Rng(0x1ce_b00c_f00d);
        let mut stats = Stats::default();
        for (n, original) in files.iter().enumerate() {
            // Every other file with CRLF line endings.
            let converted;
            let original = if n % 2 == 1 {
                converted = original.replace('\n', "\r\n");
                &converted
            } else {
                original
            };
            // Make every file large enough to hold several chunks: more copies of its body
            // (frontmatter only once, as markdown-rs panics on a second one; see `to_mdast`).
            let body = match original
                .strip_prefix("---\n")
                .and_then(|rest| rest.find("\n---\n").map(|i| &rest[i + 5..]))
            {
                Some(body) => body,
                None => match original
                    .strip_prefix("---\r\n")
                    .and_then(|rest| rest.find("\r\n---\r\n").map(|i| &rest[i + 7..]))
                {
                    Some(body) => body,
                    None => original.as_str(),
                },
            };
            let mut text = format!(
                "{original}\n\n{}",
                body.repeat(1 + 3 * MIN_CHUNK_BYTES / body.len().max(1))
            );
            let (mut parser, mut parsed) = IncrementalParser::new(&text);
            for step in 0..30 {
                let mut at = rng.below(text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                let mut end = (at + rng.below(40)).min(text.len());
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                let insert = if rng.below(3) == 0 {
                    ""
                } else {
                    SNIPPETS[rng.below(SNIPPETS.len())]
                };
                let mut next = text.clone();
                next.replace_range(at..end, insert);
                let incremental = parser.update(&text, &next, &parsed);
                let full = parse(&next);
                assert!(
                    incremental.same_content(&full),
                    "step {step}: edit {at}..{end} -> {insert:?} differs from a full parse"
                );
                text = next;
                parsed = incremental;
            }
            stats.partial += parser.stats.partial;
            stats.full += parser.stats.full;
        }
        // Many random edits touch a definition-like line or a chunk's closing blank line and
        // fall back to a full parse; a good share must still be partial.
        eprintln!("incremental parse stats: {stats:?}");
        assert!(stats.partial * 5 >= stats.full, "{stats:?}");
    }

    /// The texts of the Markdown files in these folders of `tests/fixtures`, sorted.
    fn fixture_texts(dirs: &[&str]) -> Vec<String> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
        let mut files = Vec::new();
        for dir in dirs {
            let entries = std::fs::read_dir(root.join(dir)).expect("a fixture folder");
            for entry in entries.flatten() {
                let path = entry.path();
                if path.extension().is_some_and(|e| e == "md") {
                    files.push(std::fs::read_to_string(&path).unwrap());
                }
            }
        }
        files.sort();
        files
    }

    /// What a heading rename does to a linking document: the fragment of a definition and
    /// of an inline link rewritten. The update reads the new targets and moves every
    /// range after them, exactly as a parse of the new text does.
    /// A whole-text replacement larger than a segment is parsed whole, in segments, not as
    /// one region (markdown-rs is quadratic in what it parses at once: a 17 MB buffer took
    /// 9.4 s that way, 3.1 s now); an edit inside the large text is still partial.
    #[test]
    fn a_region_larger_than_a_segment_is_parsed_whole() {
        let section = "## Section\n\nWords of a long document, repeated.\n\n";
        let big = section.repeat(2 * super::super::segmented::SEGMENT_BYTES / section.len());
        let (mut parser, small) = IncrementalParser::new("# A\n");
        let parsed = parser.update("# A\n", &big, &small);
        assert_eq!(
            parser.stats,
            Stats {
                partial: 0,
                full: 1
            }
        );
        assert!(parsed.same_content(&parse(&big)));
        let edited = big.replacen("Words", "Wards", 1);
        let again = parser.update(&big, &edited, &parsed);
        assert_eq!(
            parser.stats,
            Stats {
                partial: 1,
                full: 1
            }
        );
        assert!(again.same_content(&parse(&edited)));
    }

    /// A parser with a limit keeps the blocks of a text up to it; a longer text gets its
    /// headings only (the parse's headings, by a line scan) at every update and keeps no
    /// blocks; a text that grows over the limit by a small edit drops its blocks, and one
    /// that shrinks under it is parsed and keeps them again.
    #[test]
    fn a_text_over_the_limit_keeps_no_blocks_and_gets_its_headings_only() {
        let section = "## Section\n\nWords of a document, repeated.\n\n";
        // A setext heading and an ATX one with a closing sequence among them.
        let text = format!(
            "Setext title\n=====\n\n### Closed ###\n\n{}",
            section.repeat(40)
        );
        let limit = text.len() + 10;
        let (mut parser, parsed) = IncrementalParser::keeping_blocks_up_to(&text, limit);
        assert!(parser.n_chunks() > 0 && !parser.over_limit(text.len()));
        assert!(parsed.same_content(&parse(&text)));

        // One small edit takes it over the limit: only its headings are read, by a line
        // scan, and they are the parse's; no blocks kept.
        let over = text.replacen("Words", "Many, many more words", 1);
        let parsed = parser.update(&text, &over, &parsed);
        assert!(parsed.same_content(&super::super::headings_only(&over)));
        // The same headings as the parse's (whose elements also count the paragraphs).
        let without_element = |p: &Parsed| -> Vec<_> {
            let h = p.headings.iter();
            h.map(|h| {
                (
                    h.level,
                    h.text.clone(),
                    h.slug.clone(),
                    h.range.clone(),
                    h.text_range.clone(),
                )
            })
            .collect()
        };
        assert_eq!(without_element(&parsed), without_element(&parse(&over)));
        assert_eq!(parsed.elements.len(), 43);
        assert!(parsed.links.is_empty());
        assert_eq!(
            (parser.n_chunks(), parser.stats),
            (
                0,
                Stats {
                    partial: 0,
                    full: 1
                }
            )
        );
        assert!(parser.over_limit(over.len()));
        let edited = over.replacen("Section", "Part", 1);
        let parsed = parser.update(&over, &edited, &parsed);
        assert_eq!(without_element(&parsed), without_element(&parse(&edited)));
        assert_eq!(
            (parser.n_chunks(), parser.stats),
            (
                0,
                Stats {
                    partial: 0,
                    full: 2
                }
            )
        );

        // Under the limit again: its blocks are kept and the next edit parses only its own.
        let under = edited.replacen("Many, many more words", "Words", 1);
        let parsed = parser.update(&edited, &under, &parsed);
        assert!(parser.n_chunks() > 0);
        let last = under.replacen("Part", "Piece", 1);
        let parsed = parser.update(&under, &last, &parsed);
        assert!(parsed.same_content(&parse(&last)));
        assert_eq!(
            parser.stats,
            Stats {
                partial: 1,
                full: 3
            }
        );
    }

    #[test]
    fn a_renamed_fragment_updates_the_parse_without_parsing() {
        let old = "# Guide\n\nSign the [CLA][cla] or read [how](/CLA.md#how-do-i-sign).\n\n\
                   ## After\n\nText #tag ^block\n\n[cla]: /CLA.md#how-do-i-sign\n";
        let new = old.replace("#how-do-i-sign", "#how-do-i-sign-it");
        let previous = parse(old);
        let updated = update_destinations(old, &new, &previous).expect("only destinations changed");
        let full = parse(&new);
        assert!(updated.same_content(&full));
        assert_eq!(updated.lines, full.lines);
        let inline = &updated.links[1];
        assert_eq!(inline.kind, LinkKind::Inline);
        assert_eq!(inline.dest, "/CLA.md");
        assert_eq!(inline.fragment.as_deref(), Some("how-do-i-sign-it"));
        assert_eq!(
            &new[inline.fragment_range.clone().unwrap()],
            "how-do-i-sign-it"
        );
        let definition = updated.links.last().unwrap();
        assert_eq!(definition.kind, LinkKind::Definition);
        assert_eq!(
            &new[definition.range.clone()],
            "[cla]: /CLA.md#how-do-i-sign-it"
        );
        assert_eq!(updated.block_ids, [("block".to_string(), 91..97)]);
        assert_eq!(updated.elements[0].range, 0..new.len());
    }

    /// Changes the update must leave to a parse: text outside a destination, a
    /// destination that would stop being one, one on a line of its own, one in angle
    /// brackets, one in a heading.
    #[test]
    fn other_changes_are_parsed_again() {
        let cases = [
            ("[a](x.md) b\n", "[a](x.md) c\n"),
            ("[a](x.md)\n", "[a](x.md y)\n"),
            ("[a](x.md)\n", "[a](x\\.md)\n"),
            ("[a](x.md)\n", "[a](x&amp;.md)\n"),
            ("[a]:\n/x\n", "[a]:\n---\n"),
            ("[a]: <x.md>\n", "[a]: <y.md>\n"),
            ("# [Tab](#tab/one)\n", "# [Tab](#tab/two)\n"),
            ("[a](x.md)\n", "[a]()\n"),
            ("text\n", "text\n"),
        ];
        for (old, new) in cases {
            assert!(
                update_destinations(old, new, &parse(old)).is_none(),
                "{old:?} -> {new:?}"
            );
        }
    }

    /// Link reference definitions at the end of a long document (as k8s-community's large
    /// files keep their images): editing one's destination, or the text beside them,
    /// re-parses only that chunk; adding or removing a label, which can change what
    /// `[x]` is elsewhere, parses the whole document. A definition larger than a segment is
    /// re-parsed alone too. Each result equals a full parse.
    #[test]
    fn edits_near_definitions_reparse_the_chunk_unless_a_label_comes_or_goes() {
        let mut text = String::new();
        for i in 0..200 {
            text.push_str(&format!(
                "## Part {i}\n\nSee [logo][img{}] and [x] here.\n\n",
                i % 3
            ));
        }
        // One larger than a segment, alone in its chunk, then three small ones.
        let image = "A".repeat(2 * crate::parse::segmented::SEGMENT_BYTES);
        text.push_str(&format!("[big]: data:image/png;base64,{image}\n\n"));
        text.push_str("[img0]: a.png\n[img1]: b.png\n[img2]: c.png\n");
        let (mut parser, mut parsed) = IncrementalParser::new(&text);
        // Replaces `from` by `to`, checks the update against a full parse and whether it
        // was partial; returns the references of the new parse.
        let mut edit = |from: &str, to: &str, partial: bool| {
            let next = text.replacen(from, to, 1);
            let before = parser.stats;
            let updated = parser.update(&text, &next, &parsed);
            assert!(updated.same_content(&parse(&next)), "{from:?} -> {to:?}");
            assert_eq!(
                parser.stats.partial > before.partial,
                partial,
                "{from:?} -> {to:?}"
            );
            text = next;
            parsed = updated;
            parsed
                .links
                .iter()
                .filter(|l| l.kind == LinkKind::Reference)
                .count()
        };
        // A destination edited: the same labels.
        assert_eq!(edit("[img1]: b.png", "[img1]: bb.png", true), 200);
        // Text beside them.
        assert_eq!(
            edit("[img2]: c.png\n", "[img2]: c.png\n\nThe end.\n", true),
            200
        );
        // Inside the large one's destination.
        assert_eq!(edit("base64,AAAA", "base64,AxAA", true), 200);
        // A label that `[x]` above uses comes: every `[x]` becomes a link.
        assert_eq!(
            edit("[img0]: a.png", "[x]: x.md\n[img0]: a.png", false),
            400
        );
        // And goes again.
        assert_eq!(edit("[x]: x.md\n", "", false), 200);
    }

    /// Real files, the plain destinations of one to three of their links rewritten at
    /// random (as a rename or a move does, and then some); the update equals a
    /// whole-document parse every time it answers, and it answers for most of them. Random edits
    /// anywhere are either refused or equal a parse too.
    #[test]
    fn destination_edits_of_real_files_match_a_full_parse() {
        const PIECES: &[&str] = &[
            "-it", "_x", "a", "9", ".md", "/", "#", "#frag", "%20", "é", "日本", "../b", "-",
        ];
        let mut rng = Rng(0xdead_beef_cafe);
        let (mut updated, mut refused) = (0, 0);
        for text in fixture_texts(&[
            "k8s-community/communication",
            "k8s-community",
            "rust-book",
            "every-link",
        ]) {
            if text.len() > crate::parse::segmented::SEGMENT_BYTES {
                continue;
            }
            let parsed = parse(&text);
            let dests: Vec<std::ops::Range<usize>> = parsed
                .links
                .iter()
                .filter(|l| {
                    matches!(
                        l.kind,
                        LinkKind::Inline | LinkKind::Image | LinkKind::Definition
                    )
                })
                .filter_map(|l| l.dest_range.clone())
                .filter(|d| !d.is_empty() && text[d.clone()].chars().all(is_plain_url_char))
                .collect();
            for _ in 0..20 {
                if dests.is_empty() {
                    break;
                }
                let mut picked: Vec<_> = (0..1 + rng.below(3))
                    .map(|_| dests[rng.below(dests.len())].clone())
                    .collect();
                picked.sort_by_key(|d| std::cmp::Reverse(d.start));
                picked.dedup();
                let mut next = text.clone();
                for d in picked {
                    // Replace a tail of the destination (its fragment, say) or add to it.
                    let mut cut = d.start + rng.below(d.len() + 1);
                    while !next.is_char_boundary(cut) {
                        cut += 1;
                    }
                    let mut piece = String::new();
                    for _ in 0..1 + rng.below(3) {
                        piece.push_str(PIECES[rng.below(PIECES.len())]);
                    }
                    next.replace_range(cut..d.end, &piece);
                }
                if next == text {
                    continue;
                }
                let full = parse(&next);
                match update_destinations(&text, &next, &parsed) {
                    Some(p) => {
                        assert!(p.same_content(&full), "{next:?} differs from a full parse");
                        assert_eq!(p.lines, full.lines);
                        updated += 1;
                    }
                    None => refused += 1,
                }
            }
            for _ in 0..10 {
                let mut at = rng.below(text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                let mut next = text.clone();
                next.insert_str(at, SNIPPETS[rng.below(SNIPPETS.len())]);
                if let Some(p) = update_destinations(&text, &next, &parsed) {
                    assert!(p.same_content(&parse(&next)), "insert at {at} differs");
                }
            }
        }
        eprintln!("destination updates: {updated} made, {refused} refused");
        assert!(
            updated >= 200 && updated >= 10 * refused,
            "{updated} made, {refused} refused"
        );
    }
}
