//! Silencing diagnostics in the document itself, with HTML comments (invisible in the
//! rendered page) that every front end reads the same way, since they filter
//! [`super::diagnostics`]:
//!
//! - `<!-- folio-ignore CODE ... -->` on a line with other text silences those codes on
//!   that line; alone on its line, on the block below it (the following lines up to the
//!   next blank line).
//! - `<!-- folio-ignore-next-line CODE ... -->` silences them on the next line.
//! - `<!-- folio-ignore-file CODE ... -->` silences them in the whole document.
//!
//! Without a code a comment silences every code. Codes are the stable names of
//! [`DiagnosticCode`], separated by spaces or commas; a word that is not one makes the
//! comment silence nothing, so that a misspelt code does not widen it to every code.
//! Only HTML comments as CommonMark reads them count ([`html_comments`]): a `<!--` in
//! code, math, a link title, the frontmatter or escaped is text, not a directive.

use std::collections::HashSet;
use std::ops::Range;

use crate::codes::DiagnosticCode;
use crate::parse::html_comments::html_comments;

/// What a comment silences: the codes (`None`: every code).
type Codes = Option<HashSet<DiagnosticCode>>;

/// The silences of one document: line ranges (0-based, end exclusive) with their codes.
#[derive(Debug, Default)]
pub(crate) struct Silences {
    spans: Vec<(Range<usize>, Codes)>,
}

impl Silences {
    /// The directives of `text`. Cheap when it has none (one substring search); else the
    /// text's HTML comments are read from a parse ([`html_comments`]).
    pub(crate) fn of(text: &str) -> Silences {
        let mut spans = Vec::new();
        if !text.contains("folio-ignore") {
            return Silences { spans };
        }
        let lines: Vec<&str> = text.split('\n').collect();
        let mut starts = Vec::with_capacity(lines.len());
        let mut at = 0;
        for line in &lines {
            starts.push(at);
            at += line.len() + 1;
        }
        let line_of = |offset: usize| starts.partition_point(|s| *s <= offset).saturating_sub(1);
        for comment in html_comments(text) {
            let Some(source) = text.get(comment.range.clone()) else {
                continue;
            };
            if !source.contains("folio-ignore") {
                continue;
            }
            let last_line = line_of(comment.range.end.saturating_sub(1));
            // An HTML block that is only comments stands before the block it silences;
            // one with text after its comment (raw HTML to Markdown) acts on its lines.
            let alone = comment.block && without_comments(source).trim().is_empty();
            for (offset, directive, codes) in directives(source) {
                let line = line_of(comment.range.start + offset);
                let span = match directive {
                    Directive::File => 0..lines.len(),
                    Directive::NextLine => line + 1..line + 2,
                    Directive::Here if !alone => line..last_line + 1,
                    Directive::Here => {
                        let first = last_line + 1;
                        let end = lines
                            .get(first..)
                            .and_then(|rest| rest.iter().position(|l| l.trim().is_empty()))
                            .map_or(lines.len(), |n| first + n);
                        first..end
                    }
                };
                spans.push((span, codes));
            }
        }
        Silences { spans }
    }

    /// Whether `code` is silenced on `line` (0-based).
    pub(crate) fn covers(&self, line: usize, code: DiagnosticCode) -> bool {
        self.spans.iter().any(|(span, codes)| {
            span.contains(&line) && codes.as_ref().is_none_or(|c| c.contains(&code))
        })
    }

    /// Whether the document has no directive.
    pub(crate) fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

/// `source` with every `<!-- … -->` taken out.
fn without_comments(source: &str) -> String {
    let mut out = String::new();
    let mut rest = source;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        match rest[start + 4..].find("-->") {
            Some(len) => rest = &rest[start + 4 + len + 3..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// The three forms of a directive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Directive {
    Here,
    NextLine,
    File,
}

/// The directives among the comments of `source` (an HTML node's text), each with the
/// byte offset of its `<!--` in `source` and its codes. A comment whose codes do not all
/// parse silences nothing and is left out.
fn directives(source: &str) -> Vec<(usize, Directive, Codes)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(start) = source[from..].find("<!--").map(|s| from + s) {
        let Some(len) = source[start + 4..].find("-->") else {
            break;
        };
        let body = source[start + 4..start + 4 + len].trim();
        from = start + 4 + len + 3;
        let (directive, args) = if let Some(a) = body.strip_prefix("folio-ignore-next-line") {
            (Directive::NextLine, a)
        } else if let Some(a) = body.strip_prefix("folio-ignore-file") {
            (Directive::File, a)
        } else if let Some(a) = body.strip_prefix("folio-ignore") {
            (Directive::Here, a)
        } else {
            continue;
        };
        if !args.is_empty() && !args.starts_with([' ', ',', '\t', '\n', '\r']) {
            continue;
        }
        let codes: Result<HashSet<DiagnosticCode>, _> = args
            .split([' ', ',', '\t', '\n', '\r'])
            .filter(|w| !w.is_empty())
            .map(str::parse)
            .collect();
        let Ok(codes) = codes else {
            continue;
        };
        out.push((start, directive, (!codes.is_empty()).then_some(codes)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use DiagnosticCode::{MissingFile, MissingHeading};

    /// The lines (0-based) on which `code` is silenced, of the first `n`.
    fn silenced(text: &str, code: DiagnosticCode, n: usize) -> Vec<usize> {
        let s = Silences::of(text);
        (0..n).filter(|l| s.covers(*l, code)).collect()
    }

    #[test]
    fn a_comment_on_a_line_silences_that_line_alone_on_a_line_the_block_below() {
        let text = "[a](x.md) <!-- folio-ignore missing-file -->\n[b](y.md)\n\n<!-- folio-ignore -->\n[c](z.md)\n[d](w.md#h)\n\n[e](v.md)\n";
        assert_eq!(silenced(text, MissingFile, 9), [0, 4, 5]);
        // Without codes: every code.
        assert_eq!(silenced(text, MissingHeading, 9), [4, 5]);
        // At the start of a line with text after it, the comment opens an HTML block (its
        // line is raw HTML to Markdown): it acts on that line, not on the lines below.
        let text = "<!-- folio-ignore --> [a](x.md)\n[b](y.md)\n";
        assert_eq!(silenced(text, MissingFile, 3), [0]);
    }

    #[test]
    fn next_line_and_file_forms() {
        let text =
            "<!-- folio-ignore-next-line missing-heading, missing-file -->\n[a](x.md)\n[b](y.md)\n";
        assert_eq!(silenced(text, MissingFile, 4), [1]);
        assert_eq!(silenced(text, MissingHeading, 4), [1]);
        let text = "# T\n\n<!-- folio-ignore-file missing-heading -->\n\n[a](#x)\n";
        assert_eq!(silenced(text, MissingHeading, 6), [0, 1, 2, 3, 4, 5]);
        assert!(silenced(text, MissingFile, 6).is_empty());
    }

    #[test]
    fn a_misspelt_code_a_longer_word_or_a_comment_markdown_reads_as_text_silences_nothing() {
        for text in [
            "[a](x.md) <!-- folio-ignore missing-fil -->\n",
            "[a](x.md) <!-- folio-ignored -->\n",
            "```\n<!-- folio-ignore-file -->\n```\n[a](x.md)\n",
            "~~~~\n```\n<!-- folio-ignore-file -->\n~~~~\n[a](x.md)\n",
            "To silence a file, write `<!-- folio-ignore-file -->` at the top. [a](x.md)\n",
            "[a](x.md \"<!-- folio-ignore missing-file -->\")\n",
            "Text.\n\n    <!-- folio-ignore-file missing-file -->\n\n[a](x.md)\n",
            "$$\n<!-- folio-ignore-file missing-file -->\n$$\n\n[a](x.md)\n",
            "[a](x.md) \\<!-- folio-ignore missing-file -->\n",
            "---\nx: \"<!-- folio-ignore-file missing-file -->\"\n---\n[a](x.md)\n",
        ] {
            let s = Silences::of(text);
            assert!((0..6).all(|l| !s.covers(l, MissingFile)), "{text:?}: {s:?}");
        }
        assert!(Silences::of("no directives here\n").is_empty());
    }
}
