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
//! An unquoted term with a CJK run longer than [`CJK_PHRASE_MAX_CHARS`] (a Japanese
//! sentence, say) matches any of its pieces (words or bigrams) rather than the whole
//! phrase.
//!
//! CJK text goes through the index's analyser ([`Lexical`], the transform the index was
//! written with): with [`Lexical::Words`], a term with kana becomes its Japanese words
//! (particles and auxiliaries left out), and a Han-only term, which may be Chinese or
//! Japanese, matches its words or its bigrams.

use crate::store::cjk::{cjk_bigrams, is_cjk};
use crate::store::lexical::{Lexical, has_kana, runs};
use crate::store::synonyms::{Synonyms, word_bounds};

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
    /// The FTS5 expression matching this term in an index written by `lexical`: a
    /// quoted phrase of the term's transformed text ([`Lexical::fts_text`]), or a
    /// prefix query for a prefix term and for a term that is a single CJK character.
    /// With [`Lexical::Words`], a Han-only term is its words' phrase OR its bigrams'
    /// phrase (when they differ); a term whose words are all dropped (a lone particle)
    /// keeps its bigrams.
    pub fn fts_expr(&self, lexical: &Lexical) -> String {
        if !self.quoted
            && !self.prefix
            && !self.excluded
            && let Some(parts) = split_long_cjk(&self.text, lexical)
        {
            return format!("({})", parts.join(" OR "));
        }
        let mut chars = self.text.chars();
        let single_cjk = matches!((chars.next(), chars.next()), (Some(c), None) if is_cjk(c));
        let phrase = |text: &str| {
            let quoted = format!("\"{}\"", text.replace('"', "\"\""));
            if self.prefix || single_cjk {
                format!("{quoted} *")
            } else {
                quoted
            }
        };
        let bigrams = cjk_bigrams(&self.text);
        if matches!(lexical, Lexical::Bigrams) || single_cjk {
            return phrase(&bigrams);
        }
        let kana = has_kana(&self.text);
        let words = lexical.fts_text(&self.text, true);
        if words.trim().is_empty() || (kana && words == bigrams) {
            return phrase(&bigrams);
        }
        if kana || words == bigrams {
            phrase(&words)
        } else {
            format!("({} OR {})", phrase(&words), phrase(&bigrams))
        }
    }

    /// [`QueryTerm::fts_expr`] widened with `synonyms`: for an unquoted, included,
    /// non-prefix term, the term's expression OR each word
    /// [`Synonyms::expansions`] gives for it (as a quoted phrase in the same analyser), so
    /// `電池` also matches `バッテリー` and `battery`. A quoted term stays verbatim.
    pub fn search_expr(&self, lexical: &Lexical, synonyms: Option<&Synonyms>) -> String {
        let base = self.fts_expr(lexical);
        let Some(synonyms) = synonyms.filter(|_| !self.quoted && !self.excluded && !self.prefix)
        else {
            return base;
        };
        let words = synonyms.expansions(&self.text, &word_bounds(&self.text, lexical));
        let mut parts = vec![base];
        for text in words {
            let phrase = QueryTerm {
                text,
                excluded: false,
                quoted: true,
                prefix: false,
            }
            .fts_expr(lexical);
            if !parts.contains(&phrase) {
                parts.push(phrase);
            }
        }
        if parts.len() == 1 {
            parts.pop().expect("one part")
        } else {
            format!("({})", parts.join(" OR "))
        }
    }
}

/// True when more than half of the letters of `text` are CJK ([`is_cjk`]): a Japanese or
/// Chinese question, even with a Latin command name in it.
pub fn mostly_cjk(text: &str) -> bool {
    let (mut cjk, mut letters) = (0usize, 0usize);
    for c in text.chars().filter(|c| c.is_alphanumeric()) {
        letters += 1;
        if is_cjk(c) {
            cjk += 1;
        }
    }
    cjk * 2 > letters
}

/// An unquoted term whose longest CJK run is longer than this many characters is
/// searched as any of its pieces instead of as one phrase (see [`QueryTerm::fts_expr`]).
pub const CJK_PHRASE_MAX_CHARS: usize = 4;

/// Most pieces one split term yields (each is an FTS5 phrase BM25 must score); the
/// rest of a very long run is left out.
pub const CJK_MAX_PIECES: usize = 64;

/// The pieces of a term holding a CJK run longer than [`CJK_PHRASE_MAX_CHARS`]: the
/// tokens of every CJK run (its bigrams, a one-character run as a prefix query; with
/// [`Lexical::Words`], the words of a term with kana, and the words then the bigrams of
/// a Han-only term) and each other run with a letter or digit as a phrase,
/// deduplicated, at most [`CJK_MAX_PIECES`]; `None` for a term without such a run.
///
/// Japanese and Chinese write a sentence without spaces, so a question like
/// `本番に出した変更を前のバージョンへ戻したい` is one term; as a phrase it only finds
/// that exact sentence. Searched as any of its bigrams, BM25 ranks the chunks sharing
/// the most (and rarest) of them first — the way a space-separated English query
/// already works. A short run (a word such as `仕組み`) stays a phrase, and quoting a
/// term keeps it verbatim.
fn split_long_cjk(text: &str, lexical: &Lexical) -> Option<Vec<String>> {
    let runs = runs(text);
    let longest = runs
        .iter()
        .filter(|(cjk, _)| *cjk)
        .map(|(_, r)| r.chars().count())
        .max()?;
    if longest <= CJK_PHRASE_MAX_CHARS {
        return None;
    }
    let mut parts: Vec<String> = Vec::new();
    let mut push = |p: String| {
        if !parts.contains(&p) && parts.len() < CJK_MAX_PIECES {
            parts.push(p);
        }
    };
    if matches!(lexical, Lexical::Words(_)) {
        // The term's words (and the other runs, as FTS5 will split them), then, for a
        // Han-only term, the bigrams below too.
        for piece in lexical.fts_text(text, true).split_whitespace() {
            if piece.chars().any(char::is_alphanumeric) {
                push(format!("\"{}\"", piece.replace('"', "\"\"")));
            }
        }
        if has_kana(text) {
            return Some(parts);
        }
    }
    for (cjk, run) in &runs {
        if *cjk {
            let chars: Vec<char> = run.chars().collect();
            if chars.len() == 1 {
                push(format!("\"{}\" *", chars[0]));
            }
            for pair in chars.windows(2) {
                push(format!("\"{}\"", pair.iter().collect::<String>()));
            }
        } else if run.chars().any(char::is_alphanumeric) {
            push(format!("\"{}\"", run.trim().replace('"', "\"\"")));
        }
    }
    Some(parts)
}

/// The words of `terms` that a query asks for, in order and joined by single spaces:
/// the text of each term but the `-excluded` ones, without quotes. What the query's
/// embedding and a reranker are given.
pub fn included_text(terms: &[QueryTerm]) -> String {
    terms
        .iter()
        .filter(|t| !t.excluded)
        .map(|t| t.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Splits `input` into terms; terms without a letter or digit, and repeats of a term
/// (compared case-insensitively), are dropped. Control characters (NUL included, which
/// SQLite would take as the end of a string) separate terms like spaces. The input is
/// normalized first as the index's texts are ([`crate::store::lexical::normalize`],
/// NFKC), so `ＰＤＦ` finds `PDF` and `ｶﾀｶﾅ` finds `カタカナ`.
pub fn parse_query(input: &str) -> Vec<QueryTerm> {
    let mut terms = Vec::new();
    let input: String = crate::store::lexical::normalize(input)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
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
            t.text.to_lowercase() == text.to_lowercase()
                && t.excluded == excluded
                && t.prefix == prefix
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

/// The expressions of the included terms of `terms`, in order
/// ([`QueryTerm::search_expr`]).
pub fn included_exprs(
    terms: &[QueryTerm],
    lexical: &Lexical,
    synonyms: Option<&Synonyms>,
) -> Vec<String> {
    terms
        .iter()
        .filter(|t| !t.excluded)
        .map(|t| t.search_expr(lexical, synonyms))
        .collect()
}

/// The `MATCH` expression of already built `included` expressions (OR-combined) and the
/// `-excluded` terms of `terms` (each appended with `NOT`, never widened); `None` when
/// `included` is empty.
pub fn match_expr_of(
    included: &[String],
    terms: &[QueryTerm],
    lexical: &Lexical,
) -> Option<String> {
    if included.is_empty() {
        return None;
    }
    let mut expr = format!("({})", included.join(" OR "));
    for term in terms.iter().filter(|t| t.excluded) {
        expr.push_str(" NOT ");
        expr.push_str(&term.fts_expr(lexical));
    }
    Some(expr)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds the FTS5 `MATCH` expression for `terms` in an index written by `lexical`, each
    /// included term widened with `synonyms` ([`included_exprs`]), or `None` when no term is
    /// included (an empty query, or one made only of exclusions, matches nothing).
    fn fts_match_expr(
        terms: &[QueryTerm],
        lexical: &Lexical,
        synonyms: Option<&Synonyms>,
    ) -> Option<String> {
        match_expr_of(&included_exprs(terms, lexical, synonyms), terms, lexical)
    }

    fn expr(input: &str) -> Option<String> {
        fts_match_expr(&parse_query(input), &Lexical::Bigrams, None)
    }

    #[test]
    fn expressions_with_japanese_words() {
        let lexical = Lexical::Words(crate::store::japanese::installed_for_tests());
        let expr = |input: &str| fts_match_expr(&parse_query(input), &lexical, None);
        let cases: &[(&str, &str)] = &[
            // A long term with kana: any of its words (particles and auxiliaries left out).
            (
                "本番に出した変更を戻したい",
                r#"(("本番" OR "出し" OR "変更" OR "戻し"))"#,
            ),
            ("v2の設定を戻したい", r#"(("v2" OR "設定" OR "戻し"))"#),
            // A short term with kana: the phrase of its words.
            ("仕組み", r#"("仕組み")"#),
            ("使い方", r#"("使い方")"#),
            // Han only: its words or its bigrams (Chinese is indexed as bigrams).
            ("名前解決", r#"(("名前 解決" OR "名前 前解 解決"))"#),
            ("検索", r#"("検索")"#),
            (
                "名前解決の一時保存",
                r#"(("名前" OR "解決" OR "一時" OR "保存"))"#,
            ),
            // IPADIC cuts Chinese into its own words, single characters here; the
            // bigrams that a Chinese (kana-less) page is indexed with follow.
            (
                "中文分词技术",
                r#"(("中" OR "文" OR "分" OR "词技" OR "术" OR "中文" OR "文分" OR "分词" OR "技术"))"#,
            ),
            // One character: a prefix; a term of particles only keeps its bigrams.
            ("寺", r#"("寺" *)"#),
            ("には", r#"("には")"#),
            // Quoted, excluded and prefix terms are phrases of words.
            (r#""本番に戻したい""#, r#"("本番 戻し")"#),
            ("x -本番に戻したい", r#"("x") NOT "本番 戻し""#),
            ("한국어", r#"("한국 국어")"#),
        ];
        for (input, expected) in cases {
            assert_eq!(expr(input).as_deref(), Some(*expected), "input {input:?}");
        }
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
            ("foo\0bar", Some(r#"("foo" OR "bar")"#)),
            ("\"a\0b\"\u{7}", Some(r#"("a b")"#)),
            (r#""unterminated"#, Some(r#"("unterminated")"#)),
            ("a*b(", Some(r#"("a*b(")"#)),
            ("NEAR(", Some(r#"("NEAR(")"#)),
            (r#"say"hi"#, Some(r#"("say""hi")"#)),
            ("inde*", Some(r#"("inde" *)"#)),
            ("検索", Some(r#"("検索")"#)),
            ("東京都", Some(r#"("東京 京都")"#)),
            ("東", Some(r#"("東" *)"#)),
            ("Rust東京", Some(r#"("Rust 東京")"#)),
            // A CJK run over 4 characters: any of its bigrams (and other runs as phrases).
            (
                "本番に戻したい",
                Some(r#"(("本番" OR "番に" OR "に戻" OR "戻し" OR "した" OR "たい"))"#),
            ),
            (
                "v2の設定を戻したい",
                Some(
                    r#"(("v2" OR "の設" OR "設定" OR "定を" OR "を戻" OR "戻し" OR "した" OR "たい"))"#,
                ),
            ),
            ("仕組み", Some(r#"("仕組 組み")"#)),
            // Quoted, excluded and prefix terms stay phrases.
            (
                r#""本番に戻したい""#,
                Some(r#"("本番 番に に戻 戻し した たい")"#),
            ),
            (
                "x -本番に戻したい",
                Some(r#"("x") NOT "本番 番に に戻 戻し した たい""#),
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(expr(input).as_deref(), *expected, "input {input:?}");
        }
    }

    #[test]
    fn long_cjk_runs_are_capped() {
        let long: String = (0..200u32)
            .map(|i| char::from_u32(0x4E00 + i).unwrap())
            .collect();
        let e = expr(&long).unwrap();
        assert_eq!(e.matches(" OR ").count(), CJK_MAX_PIECES - 1);
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
