//! CJK bigrams: the one text transform shared by indexing and querying.
//!
//! FTS5's `unicode61` tokenizer keeps a run of Han, Kana or Hangul characters
//! as one token, so a word inside a Japanese or Chinese sentence could not be
//! found. Before text reaches FTS5, every such run is replaced by its
//! overlapping bigrams separated by spaces (`東京都に` → `東京 京都 都に`).
//! A query run goes through the same function and becomes a phrase of its
//! bigrams, so any substring of two or more characters is found.

use std::borrow::Cow;

/// True for characters indexed as bigrams: Han ideographs (with the iteration
/// marks `々`, `〆`, `〇`), Hiragana, Katakana (with the prolonged sound mark
/// `ー` and half-width forms) and Hangul.
///
/// Punctuation inside these blocks (`・`, `゠`, `｡`, `｢`) is not included: the
/// tokenizer treats it as a separator.
pub fn is_cjk(c: char) -> bool {
    is_kana(c)
        || is_hangul(c)
        || matches!(c,
            '\u{3005}'..='\u{3007}'     // 々 〆 〇
            | '\u{3400}'..='\u{4DBF}'   // CJK extension A
            | '\u{4E00}'..='\u{9FFF}'   // CJK unified ideographs
            | '\u{F900}'..='\u{FAFF}'   // CJK compatibility ideographs
            | '\u{20000}'..='\u{323AF}' // CJK extensions B to H
        )
}

/// True for Hiragana and Katakana letters (full- and half-width) and the prolonged
/// sound mark: the characters that mark text as Japanese rather than Chinese.
pub fn is_kana(c: char) -> bool {
    matches!(c,
        '\u{3041}'..='\u{309F}'     // Hiragana
        | '\u{30A1}'..='\u{30FA}'   // Katakana letters
        | '\u{30FC}'..='\u{30FF}'   // ー ヽ ヾ ヿ
        | '\u{31F0}'..='\u{31FF}'   // Katakana phonetic extensions
        | '\u{FF66}'..='\u{FF9F}'   // Half-width Katakana
    )
}

/// True for Hangul syllables and Jamo.
pub fn is_hangul(c: char) -> bool {
    matches!(c,
        '\u{1100}'..='\u{11FF}'     // Hangul Jamo
        | '\u{3131}'..='\u{318E}'   // Hangul compatibility Jamo
        | '\u{A960}'..='\u{A97F}'   // Hangul Jamo extended A
        | '\u{AC00}'..='\u{D7A3}'   // Hangul syllables
        | '\u{D7B0}'..='\u{D7FF}'   // Hangul Jamo extended B
    )
}

/// Replaces every run of CJK characters (see [`is_cjk`]) by its overlapping
/// bigrams separated by single spaces; a run of one character stays as it is.
///
/// A run is also separated by a space from a non-space character next to it,
/// so `Rust東京` becomes `Rust 東京`. Text without CJK is returned unchanged
/// and unallocated.
///
/// ```
/// # use folio_core::store::cjk::cjk_bigrams;
/// assert_eq!(cjk_bigrams("東京都に"), "東京 京都 都に");
/// assert_eq!(cjk_bigrams("plain text"), "plain text");
/// ```
pub fn cjk_bigrams(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_cjk) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() * 2);
    let mut run: Vec<char> = Vec::new();
    for c in text.chars() {
        if is_cjk(c) {
            run.push(c);
            continue;
        }
        if !run.is_empty() {
            push_run(&mut out, &run);
            run.clear();
            if !c.is_whitespace() {
                out.push(' ');
            }
        }
        out.push(c);
    }
    if !run.is_empty() {
        push_run(&mut out, &run);
    }
    Cow::Owned(out)
}

/// Appends the bigrams of `run` (non-empty) to `out`, after a space if `out`
/// ends with a non-space character.
fn push_run(out: &mut String, run: &[char]) {
    if out.chars().next_back().is_some_and(|c| !c.is_whitespace()) {
        out.push(' ');
    }
    if let [only] = run {
        out.push(*only);
        return;
    }
    for (idx, pair) in run.windows(2).enumerate() {
        if idx > 0 {
            out.push(' ');
        }
        out.push(pair[0]);
        out.push(pair[1]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bigram_outputs() {
        let cases = [
            ("東京都に", "東京 京都 都に"),
            ("全文検索", "全文 文検 検索"),
            ("中文分词", "中文 文分 分词"),
            ("한국어 검색", "한국 국어 검색"),
            ("カーソル", "カー ーソ ソル"),
            ("Rust東京です", "Rust 東京 京で です"),
            ("Rustの本 and more", "Rust の本 and more"),
            ("a東b", "a 東 b"),
            ("東", "東"),
            ("検索。次", "検索 。 次"),
            ("第1章", "第 1 章"),
            ("ナカグロ・テスト", "ナカ カグ グロ ・ テス スト"),
            ("plain text", "plain text"),
            ("", ""),
        ];
        for (input, expected) in cases {
            assert_eq!(cjk_bigrams(input), expected, "input {input:?}");
        }
    }

    #[test]
    fn unchanged_text_is_borrowed() {
        assert!(matches!(cjk_bigrams("no cjk here"), Cow::Borrowed(_)));
    }
}
