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
//! Comments inside fenced code blocks are text, not directives.

use std::collections::HashSet;
use std::ops::Range;

use crate::codes::DiagnosticCode;

/// What a comment silences: the codes (`None`: every code).
type Codes = Option<HashSet<DiagnosticCode>>;

/// The silences of one document: line ranges (0-based, end exclusive) with their codes.
#[derive(Debug, Default)]
pub(crate) struct Silences {
    spans: Vec<(Range<usize>, Codes)>,
}

impl Silences {
    /// The directives of `text`. Cheap when it has none (one substring search).
    pub(crate) fn of(text: &str) -> Silences {
        let mut spans = Vec::new();
        if !text.contains("folio-ignore") {
            return Silences { spans };
        }
        let lines: Vec<&str> = text.split('\n').collect();
        let mut fence: Option<(char, usize)> = None;
        for (i, line) in lines.iter().enumerate() {
            let trimmed = line.trim_start();
            if let Some(open) = fence_of(trimmed) {
                match fence {
                    None => fence = Some(open),
                    Some((c, n))
                        if open.0 == c
                            && open.1 >= n
                            && trimmed.trim_end().chars().all(|x| x == c) =>
                    {
                        fence = None
                    }
                    Some(_) => {}
                }
                continue;
            }
            if fence.is_some() || !line.contains("folio-ignore") {
                continue;
            }
            for (directive, codes, alone) in directives(line) {
                let span = match directive {
                    Directive::File => 0..lines.len(),
                    Directive::NextLine => i + 1..i + 2,
                    Directive::Here if !alone => i..i + 1,
                    Directive::Here => {
                        let end = lines[i + 1..]
                            .iter()
                            .position(|l| l.trim().is_empty())
                            .map_or(lines.len(), |n| i + 1 + n);
                        i + 1..end
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

/// The three forms of a directive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Directive {
    Here,
    NextLine,
    File,
}

/// A fence opening or closing line: its character and length (CommonMark 4.5: three or
/// more backticks or tildes).
fn fence_of(trimmed: &str) -> Option<(char, usize)> {
    let c = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = trimmed.chars().take_while(|x| *x == c).count();
    (n >= 3).then_some((c, n))
}

/// The directives in the comments of `line`, each with its codes and whether the comment
/// is alone on the line (nothing but spaces around it). A comment whose codes do not all
/// parse silences nothing and is left out.
fn directives(line: &str) -> Vec<(Directive, Codes, bool)> {
    let mut out = Vec::new();
    let mut rest = line;
    let mut outside = String::new();
    while let Some(start) = rest.find("<!--") {
        outside.push_str(&rest[..start]);
        let Some(len) = rest[start + 4..].find("-->") else {
            outside.push_str(&rest[start..]);
            rest = "";
            break;
        };
        let body = rest[start + 4..start + 4 + len].trim();
        rest = &rest[start + 4 + len + 3..];
        let (directive, args) = if let Some(a) = body.strip_prefix("folio-ignore-next-line") {
            (Directive::NextLine, a)
        } else if let Some(a) = body.strip_prefix("folio-ignore-file") {
            (Directive::File, a)
        } else if let Some(a) = body.strip_prefix("folio-ignore") {
            (Directive::Here, a)
        } else {
            continue;
        };
        if !args.is_empty() && !args.starts_with([' ', ',', '\t']) {
            continue;
        }
        let words: Vec<&str> = args
            .split([' ', ',', '\t'])
            .filter(|w| !w.is_empty())
            .collect();
        let codes: Result<HashSet<DiagnosticCode>, _> = words.iter().map(|w| w.parse()).collect();
        let Ok(codes) = codes else {
            continue;
        };
        out.push((directive, (!codes.is_empty()).then_some(codes), false));
    }
    outside.push_str(rest);
    let alone = outside.trim().is_empty();
    for d in &mut out {
        d.2 = alone;
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
    fn a_misspelt_code_a_longer_word_or_a_comment_in_code_silences_nothing() {
        for text in [
            "[a](x.md) <!-- folio-ignore missing-fil -->\n",
            "[a](x.md) <!-- folio-ignored -->\n",
            "```\n<!-- folio-ignore-file -->\n```\n[a](x.md)\n",
            "~~~~\n```\n<!-- folio-ignore-file -->\n~~~~\n[a](x.md)\n",
        ] {
            let s = Silences::of(text);
            assert!((0..6).all(|l| !s.covers(l, MissingFile)), "{text:?}: {s:?}");
        }
        assert!(Silences::of("no directives here\n").is_empty());
    }
}
