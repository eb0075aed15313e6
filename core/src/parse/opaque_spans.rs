//! Spans of text that markdown-rs reads as text but the reader never sees as links or
//! tags: Obsidian comments (`%%hidden%%`, also over several lines and blank lines) and
//! inline math (`$x$`, `$$x$$` within a line). A wiki link, tag or Markdown link inside
//! one is commented out or is math (`$[[a, b]]$`), so it is no link and no diagnostic.
//!
//! Rules (Obsidian's reading view; the inline-math rule is Pandoc's `tex_math_dollars`,
//! which Obsidian and GitHub follow): a `%%` pairs with the next `%%`, and an unpaired last
//! `%%` is text. An inline-math `$` opens only when followed by a non-space character and
//! closes at the next `$` on the line (in a GFM table: in the cell) preceded by a
//! non-space character and not followed by a digit, so prices (`$5 and $10`) stay text.
//! A `$` or `%%` inside code, HTML, math blocks, frontmatter or a link (`[[A$AP Rocky]]`,
//! a URL's `?$top=5`, `[[Note|$x$]]`'s math stays inside its link) or escaped with `\`
//! counts for nothing.

use std::ops::Range;

use super::link_text::is_escaped;

/// The byte ranges of the Obsidian comments and inline math of `text`, sorted by start,
/// each from its first delimiter to the end of its last. `is_excluded(at)` says whether
/// byte `at` is inside code, HTML, a math block, the frontmatter or a link; `tables` are
/// the byte ranges of the GFM tables, whose cells bound inline math.
pub(super) fn opaque_spans(
    text: &str,
    is_excluded: &dyn Fn(usize) -> bool,
    tables: &[Range<usize>],
) -> Vec<Range<usize>> {
    let mut spans = comments(text, is_excluded);
    let mut math = Vec::new();
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let range = line_start..line_start + line.len();
        line_start = range.end;
        if !line.contains('$') {
            continue;
        }
        if tables
            .iter()
            .any(|t| t.start <= range.start && range.start < t.end)
        {
            for cell in cells(text, range, is_excluded) {
                inline_math(text, cell, is_excluded, &spans, &mut math);
            }
        } else {
            inline_math(text, range, is_excluded, &spans, &mut math);
        }
    }
    spans.extend(math);
    spans.sort_by_key(|r| r.start);
    spans
}

/// The cells of a table row at `line`: split at each `|` not escaped and not in code
/// (GFM 4.10 splits cells before inline parsing).
fn cells(text: &str, line: Range<usize>, is_excluded: &dyn Fn(usize) -> bool) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut cells = Vec::new();
    let mut start = line.start;
    for at in line.clone() {
        if bytes[at] == b'|' && !is_escaped(text, at) && !is_excluded(at) {
            cells.push(start..at);
            start = at + 1;
        }
    }
    cells.push(start..line.end);
    cells
}

/// Obsidian comments: each `%%` outside `is_excluded` pairs with the next one.
fn comments(text: &str, is_excluded: &dyn Fn(usize) -> bool) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut open: Option<usize> = None;
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'%' && bytes[i + 1] == b'%' && !is_excluded(i) && !is_escaped(text, i) {
            match open.take() {
                None => open = Some(i),
                Some(start) => spans.push(start..i + 2),
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    spans
}

/// The inline math spans of one line (`line` is its byte range in `text`), outside
/// `is_excluded` and the `comments` (sorted, disjoint). Linear in the line's length
/// but for a binary search per opening `$`.
fn inline_math(
    text: &str,
    line: Range<usize>,
    is_excluded: &dyn Fn(usize) -> bool,
    comments: &[Range<usize>],
    out: &mut Vec<Range<usize>>,
) {
    let bytes = text.as_bytes();
    let in_comment = |at: usize| {
        let n = comments.partition_point(|c| c.start <= at);
        n > 0 && at < comments[n - 1].end
    };
    let dollars: Vec<usize> = (line.start..line.end)
        .filter(|&at| {
            bytes[at] == b'$' && !is_excluded(at) && !is_escaped(text, at) && !in_comment(at)
        })
        .collect();
    let is_space = |at: usize| at >= line.end || bytes[at].is_ascii_whitespace();
    let is_dollar = |at: usize| dollars.binary_search(&at).is_ok();
    // Where a span may close: after a non-space character; `$x$` not before a digit and
    // not at half of a `$$`.
    let single_closers: Vec<usize> = dollars
        .iter()
        .copied()
        .filter(|&at| at > line.start && !is_space(at - 1))
        .filter(|&at| !bytes.get(at + 1).is_some_and(u8::is_ascii_digit))
        .filter(|&at| !is_dollar(at - 1) && !is_dollar(at + 1))
        .collect();
    let double_closers: Vec<usize> = dollars
        .iter()
        .copied()
        .filter(|&at| at > line.start && !is_space(at - 1) && is_dollar(at + 1))
        .collect();
    let mut next = 0; // the first `$` not yet inside a span
    while next < dollars.len() {
        let open = dollars[next];
        let double = is_dollar(open + 1);
        let body = if double { open + 2 } else { open + 1 };
        let closers = if double {
            &double_closers
        } else {
            &single_closers
        };
        let close = closers
            .get(closers.partition_point(|&c| c <= body))
            .filter(|_| !is_space(body));
        match close {
            Some(&close) => {
                let end = if double { close + 2 } else { close + 1 };
                out.push(open..end);
                next = dollars.partition_point(|&d| d < end);
            }
            None => next += if double { 2 } else { 1 },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::opaque_spans;

    fn spans(text: &str) -> Vec<&str> {
        opaque_spans(text, &|_| false, &[])
            .into_iter()
            .map(|r| &text[r])
            .collect()
    }

    #[test]
    fn comments_pair_across_lines_and_an_unpaired_one_is_text() {
        assert_eq!(
            spans("a %%one%% b\n\n%%\ntwo\n\nlines\n%%\nc %% open"),
            ["%%one%%", "%%\ntwo\n\nlines\n%%"]
        );
    }

    #[test]
    fn inline_math_follows_the_dollar_rule() {
        assert_eq!(
            spans("$[[x]]$ and $$a + b$$ or $#tag$"),
            ["$[[x]]$", "$$a + b$$", "$#tag$"]
        );
        for text in ["$ no$", "\\$no$", "$no $", "$5 and $10", "$a$1"] {
            assert_eq!(spans(text), Vec::<&str>::new(), "{text}");
        }
        assert_eq!(
            spans("from $20,000 to $30,000; $HOME and $PATH"),
            Vec::<&str>::new()
        );
        assert_eq!(spans("costs $5 and\nthen $6"), Vec::<&str>::new());
        let row = "| $10 | [[x]] | 12$ |\n| $a$ | b |\n";
        let table = 0..row.len();
        let found: Vec<&str> = opaque_spans(row, &|_| false, &[table])
            .into_iter()
            .map(|r| &row[r])
            .collect();
        assert_eq!(found, ["$a$"]);
    }

    #[test]
    fn delimiters_inside_excluded_ranges_count_for_nothing() {
        let text = "`%%` [[a]] %% [[b]] %% `$` [[c]] $";
        let in_code = |at: usize| at < 4 || (23..26).contains(&at);
        let found: Vec<&str> = opaque_spans(text, &in_code, &[])
            .into_iter()
            .map(|r| &text[r])
            .collect();
        assert_eq!(found, ["%% [[b]] %%"]);
    }
}
