//! The lexical analyser: the one text transform shared by indexing and querying.
//!
//! FTS5's `unicode61` tokenizer splits on spaces and punctuation, which Japanese,
//! Chinese and Korean do not use between words. Before text reaches FTS5 every run of
//! CJK characters ([`is_cjk`]) is rewritten into space-separated tokens, by one of two
//! analysers:
//!
//! - [`Lexical::Bigrams`]: every run becomes its overlapping character bigrams
//!   ([`cjk_bigrams`]). Used when no Japanese dictionary is installed.
//! - [`Lexical::Words`]: in Japanese text (text with at least one Hiragana or Katakana
//!   character, [`has_kana`]) a run of Han and Kana becomes its words, segmented with
//!   IPADIC ([`JapaneseDictionary::words`]) without particles, auxiliary verbs and
//!   symbols. Runs with Hangul, and Han-only text (Chinese, or a Japanese heading
//!   without kana, which cannot be told apart), stay bigrams.
//!
//! The index records which analyser wrote it (`meta` key [`LEXICAL_KEY`], value
//! [`Lexical::id`]); opening it with the other analyser rewrites the full-text table
//! (`Store::open`), so one index never holds both.

use std::borrow::Cow;
use std::sync::Arc;

use super::cjk::{cjk_bigrams, is_cjk, is_hangul, is_kana};
use super::japanese::JapaneseDictionary;

/// The `meta` key holding the [`Lexical::id`] of the analyser that wrote `chunks_fts`.
pub const LEXICAL_KEY: &str = "lexical_analyser";

/// [`Lexical::id`] of [`Lexical::Bigrams`] (texts [`normalize`]d first; an index that
/// records plain `bigrams`, or nothing, was written without that and is written again).
pub const BIGRAMS_ID: &str = "bigrams-2";

/// [`Lexical::id`] of [`Lexical::Words`]; the number changes with any change to the
/// words kept (dictionary, dropped parts of speech, the choice of runs).
pub const WORDS_ID: &str = "ipadic-words-3";

/// What the index records when [`Lexical::Words`] wrote it while its dictionary failed to
/// load ([`Lexical::recorded_id`]): its Japanese text may be bigrams. It matches no
/// analyser's [`Lexical::id`], so a process whose dictionary loads writes the table again
/// with words when it opens the index.
pub const WORDS_FELL_BACK_ID: &str = "ipadic-words-3-fell-back-to-bigrams";

/// `text` in Unicode normalization form NFKC (UAX #15), the one normalization of the
/// index's texts and of queries: half-width Katakana and full-width Latin letters and
/// digits take their usual forms (`ｶﾀｶﾅ` → `カタカナ`, `ＰＤＦ` → `PDF`), decomposed kana
/// (text from macOS) is composed, and compatibility characters (`①`, `㎏`, `ﬁ`) become
/// what they stand for. Text already in NFKC (all ASCII text) is returned unallocated.
pub fn normalize(text: &str) -> Cow<'_, str> {
    use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};
    if text.is_ascii() || is_nfkc_quick(text.chars()) == IsNormalized::Yes {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.nfkc().collect())
}

/// Which analyser turns CJK runs into tokens (see the module documentation).
#[derive(Debug, Clone)]
pub enum Lexical {
    /// Character bigrams for every CJK run.
    Bigrams,
    /// IPADIC words for Japanese runs, bigrams for the rest.
    Words(Arc<JapaneseDictionary>),
}

/// True when `text` has a [`is_kana`] character: Japanese, analysed into words by
/// [`Lexical::Words`].
pub fn has_kana(text: &str) -> bool {
    text.chars().any(is_kana)
}

/// The text split into maximal runs, each marked CJK or not.
pub(crate) fn runs(text: &str) -> Vec<(bool, &str)> {
    let mut out: Vec<(bool, &str)> = Vec::new();
    let mut start = 0;
    let mut current: Option<bool> = None;
    for (i, c) in text.char_indices() {
        let cjk = is_cjk(c);
        match current {
            Some(kind) if kind == cjk => {}
            Some(kind) => {
                out.push((kind, &text[start..i]));
                start = i;
                current = Some(cjk);
            }
            None => current = Some(cjk),
        }
    }
    if let Some(kind) = current {
        out.push((kind, &text[start..]));
    }
    out
}

impl Lexical {
    /// [`Lexical::Words`] when the Japanese dictionary is installed
    /// ([`JapaneseDictionary::installed`]; not read until needed), else
    /// [`Lexical::Bigrams`].
    pub fn from_environment() -> Lexical {
        match JapaneseDictionary::installed() {
            Some(dict) => Lexical::Words(dict),
            None => Lexical::Bigrams,
        }
    }

    /// [`Lexical::Words`] with the dictionary of `dir` when it holds one (not read until
    /// needed), else [`Lexical::Bigrams`]: the fallback when no dictionary is installed.
    pub fn with_dictionary_in(dir: &std::path::Path) -> Lexical {
        match JapaneseDictionary::in_dir(dir) {
            Some(dict) => Lexical::Words(Arc::new(dict)),
            None => Lexical::Bigrams,
        }
    }

    /// The name recorded in the index: [`BIGRAMS_ID`] or [`WORDS_ID`].
    pub fn id(&self) -> &'static str {
        match self {
            Lexical::Bigrams => BIGRAMS_ID,
            Lexical::Words(_) => WORDS_ID,
        }
    }

    /// How Japanese text is matched now, for status reports: [`BIGRAMS_ID`] for
    /// [`Lexical::Bigrams`] and for [`Lexical::Words`] whose dictionary failed to load,
    /// else [`WORDS_ID`].
    pub fn matching_id(&self) -> &'static str {
        match self.recorded_id() {
            WORDS_FELL_BACK_ID => BIGRAMS_ID,
            id => id,
        }
    }

    /// The id the index records for what this analyser wrote: [`Lexical::id`], except
    /// for [`Lexical::Words`] whose dictionary failed to load ([`WORDS_FELL_BACK_ID`]: its
    /// Japanese text went in as bigrams). Before the dictionary is read it is the id.
    pub fn recorded_id(&self) -> &'static str {
        match self {
            Lexical::Words(dictionary) if dictionary.load_error().is_some() => WORDS_FELL_BACK_ID,
            other => other.id(),
        }
    }

    /// Why Japanese text is matched on character bigrams rather than words: the
    /// dictionary of the default folder is not installed or not the expected file
    /// ([`JapaneseDictionary::missing_reason`]), or it failed to load when first read
    /// ([`JapaneseDictionary::load_error`]). `None` when Japanese text is analysed into
    /// words (or the dictionary has not been needed yet and looks right).
    pub fn bigrams_reason(&self) -> Option<String> {
        match self {
            Lexical::Bigrams => Some(JapaneseDictionary::missing_reason().unwrap_or_else(|| {
                "the Japanese dictionary was installed after this process started; start folio again".into()
            })),
            Lexical::Words(dictionary) => dictionary.load_error(),
        }
    }

    /// [`Lexical::bigrams_reason`] after reading the dictionary if it has not been read
    /// ([`JapaneseDictionary::load_now`]), so damage inside a file of the right size and
    /// trailer is seen too: what `folio status` reports.
    pub fn bigrams_reason_checked(&self) -> Option<String> {
        match self {
            Lexical::Words(dictionary) => dictionary.load_now(),
            Lexical::Bigrams => self.bigrams_reason(),
        }
    }

    /// `text` with every CJK run replaced by space-separated tokens, each separated by a
    /// space from the characters next to it; text without CJK is returned unchanged and
    /// unallocated. `japanese` says whether the text is Japanese (normally
    /// [`has_kana`] of the text, or of the chunk it belongs to).
    ///
    /// - [`Lexical::Bigrams`], or text that is not Japanese: [`cjk_bigrams`].
    /// - [`Lexical::Words`] and Japanese text: the whole text is segmented
    ///   ([`JapaneseDictionary::tokens`]; the Latin words and punctuation around a run
    ///   decide how it starts, as in `tarでアーカイブを` where で is a particle); a token
    ///   of Han and Kana is kept as a word or dropped by its part of speech, a token with
    ///   Hangul becomes bigrams, and everything else is copied as it is (FTS5 splits it
    ///   as before). A dictionary that failed to load gives bigrams.
    ///
    /// ```
    /// # use folio_core::store::lexical::Lexical;
    /// assert_eq!(Lexical::Bigrams.fts_text("Rust東京です", true), "Rust 東京 京で です");
    /// ```
    pub fn fts_text<'a>(&self, text: &'a str, japanese: bool) -> Cow<'a, str> {
        if !text.chars().any(is_cjk) {
            return Cow::Borrowed(text);
        }
        let tokens = match self {
            Lexical::Words(dict) if japanese => dict.tokens(text),
            _ => None,
        };
        let Some(tokens) = tokens else {
            return cjk_bigrams(text);
        };
        let mut out = String::with_capacity(text.len() * 2);
        // A word was just written or dropped: the next non-space character is a new token.
        let mut boundary = false;
        let ends_in_text =
            |out: &String| out.chars().next_back().is_some_and(|c| !c.is_whitespace());
        for (range, kept) in tokens {
            let token = &text[range];
            if !token.chars().any(is_cjk) {
                if boundary && ends_in_text(&out) && !token.starts_with(char::is_whitespace) {
                    out.push(' ');
                }
                out.push_str(token);
                boundary = false;
                continue;
            }
            boundary = true;
            let word: Cow<'_, str> = if token.chars().any(is_hangul) {
                cjk_bigrams(token)
            } else if kept {
                Cow::Borrowed(token)
            } else {
                continue;
            };
            if ends_in_text(&out) {
                out.push(' ');
            }
            out.push_str(word.trim());
        }
        Cow::Owned(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_split_cjk_from_the_rest() {
        assert_eq!(
            runs("v2の設定, ok"),
            [(false, "v2"), (true, "の設定"), (false, ", ok")]
        );
        assert_eq!(runs(""), []);
    }

    #[test]
    fn kana_marks_japanese() {
        assert!(has_kana("名前解決をしたい"));
        assert!(has_kana("ｶﾀｶﾅ"));
        assert!(!has_kana("名前解決"));
        assert!(!has_kana("中文分词"));
        assert!(!has_kana("한국어"));
    }

    #[test]
    fn bigrams_ignore_the_language() {
        assert_eq!(
            Lexical::Bigrams.fts_text("東京都に", true),
            "東京 京都 都に"
        );
        assert_eq!(
            Lexical::Bigrams.fts_text("東京都に", false),
            "東京 京都 都に"
        );
        assert!(matches!(
            Lexical::Bigrams.fts_text("plain", true),
            Cow::Borrowed("plain")
        ));
    }
}
