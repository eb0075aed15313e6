//! The user query language and its translation to FTS5 `MATCH` expressions.
//!
//! A query is whitespace-separated terms. `"quoted text"` is one phrase term
//! (an unterminated quote runs to the end), a term prefixed with `-` is
//! excluded, and a term ending in `*` is a prefix term.
//! Included terms are OR-combined so BM25 ranks chunks matching more of them
//! higher; excluded terms are appended with `NOT`.
//! Every term is emitted as a quoted FTS5 string, so no user input can be read
//! as FTS5 syntax (`NEAR(`, `:`, `*`, `(`, `AND`) or cause a syntax error.
//! A term without any letter or digit is dropped.

use super::cjk::{cjk_bigrams, is_cjk};

/// One term of a parsed query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryTerm {
    /// The term as typed, without quotes, `-` or trailing `*`.
    pub text: String,
    /// True for a `-term`: chunks matching it are excluded.
    pub excluded: bool,
    /// True for a term written as `"quoted text"`.
    pub quoted: bool,
    /// True for an unquoted term ending in `*`.
    pub prefix: bool,
}

impl QueryTerm {
    /// The FTS5 expression matching this term: a quoted phrase of the term's
    /// (CJK-bigram-transformed) text, or a prefix query for a prefix term and
    /// for a term that is a single CJK character.
    pub fn fts_expr(&self) -> String {
        let transformed = cjk_bigrams(&self.text);
        let quoted = format!("\"{}\"", transformed.replace('"', "\"\""));
        let mut chars = self.text.chars();
        let single_cjk = matches!((chars.next(), chars.next()), (Some(c), None) if is_cjk(c));
        if self.prefix || single_cjk {
            format!("{quoted} *")
        } else {
            quoted
        }
    }
}

/// Splits `input` into terms; terms without a letter or digit, and repeats of a term
/// (compared case-insensitively), are dropped.
pub fn parse_query(input: &str) -> Vec<QueryTerm> {
    let mut terms = Vec::new();
    let mut chars = input.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let Some(&first) = chars.peek() else {
            break;
        };
        let mut excluded = false;
        if first == '-' {
            chars.next();
            excluded = true;
        }
        let mut text = String::new();
        let mut quoted = false;
        if chars.next_if_eq(&'"').is_some() {
            quoted = true;
            for c in chars.by_ref() {
                if c == '"' {
                    break;
                }
                text.push(c);
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                text.push(c);
            }
        }
        let mut prefix = false;
        if !quoted && text.ends_with('*') {
            text.truncate(text.trim_end_matches('*').len());
            prefix = true;
        }
        let text = text.trim().to_owned();
        let duplicate = terms.iter().any(|t: &QueryTerm| {
            t.text.to_lowercase() == text.to_lowercase() && t.excluded == excluded && t.prefix == prefix
        });
        if text.chars().any(char::is_alphanumeric) && !duplicate {
            terms.push(QueryTerm {
                text,
                excluded,
                quoted,
                prefix,
            });
        }
    }
    terms
}

/// Builds the FTS5 `MATCH` expression for `terms`, or `None` when no term is
/// included (an empty query, or one made only of exclusions, matches nothing).
pub fn fts_match_expr(terms: &[QueryTerm]) -> Option<String> {
    let included: Vec<String> = terms
        .iter()
        .filter(|t| !t.excluded)
        .map(QueryTerm::fts_expr)
        .collect();
    if included.is_empty() {
        return None;
    }
    let mut expr = format!("({})", included.join(" OR "));
    for term in terms.iter().filter(|t| t.excluded) {
        expr.push_str(" NOT ");
        expr.push_str(&term.fts_expr());
    }
    Some(expr)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(input: &str) -> Option<String> {
        fts_match_expr(&parse_query(input))
    }

    #[test]
    fn expressions() {
        let cases: &[(&str, Option<&str>)] = &[
            ("rust search", Some(r#"("rust" OR "search")"#)),
            (
                r#""exact phrase" other"#,
                Some(r#"("exact phrase" OR "other")"#),
            ),
            ("rust -python", Some(r#"("rust") NOT "python""#)),
            ("-python", None),
            ("", None),
            ("  -  ( * : ", None),
            ("foo:bar", Some(r#"("foo:bar")"#)),
            (r#""unterminated"#, Some(r#"("unterminated")"#)),
            ("a*b(", Some(r#"("a*b(")"#)),
            ("NEAR(", Some(r#"("NEAR(")"#)),
            (r#"say"hi"#, Some(r#"("say""hi")"#)),
            ("inde*", Some(r#"("inde" *)"#)),
            ("検索", Some(r#"("検索")"#)),
            ("東京都", Some(r#"("東京 京都")"#)),
            ("東", Some(r#"("東" *)"#)),
            ("Rust東京", Some(r#"("Rust 東京")"#)),
        ];
        for (input, expected) in cases {
            assert_eq!(expr(input).as_deref(), *expected, "input {input:?}");
        }
    }

    #[test]
    fn parsed_terms() {
        assert_eq!(
            parse_query(r#"-"two words" x*"#),
            vec![
                QueryTerm {
                    text: "two words".into(),
                    excluded: true,
                    quoted: true,
                    prefix: false
                },
                QueryTerm {
                    text: "x".into(),
                    excluded: false,
                    quoted: false,
                    prefix: true
                },
            ]
        );
    }
}
