//! The writing system of a text: what the vector leg groups chunks by when it centres
//! their similarities (`store::vectors::centering`, docs/search.md, "Centring").
//!
//! A multilingual embedding model places texts of one language near each other whatever
//! they say, so a query is more similar to every page in its own language than to the
//! page in another language that answers it. Telling languages apart by their writing
//! system is exact where that offset is largest (Japanese, Chinese, Korean, Cyrillic,
//! Arabic … against Latin) and costs a scan of the characters; languages that share a
//! script (English and German) form one group.

use unicode_script::{Script, UnicodeScript};

use super::cjk::{is_cjk, is_hangul, is_kana};

/// At most this many characters of a text are read to tell its writing system.
pub const SAMPLE_CHARS: usize = 2048;

/// The writing system of a text ([`writing_system`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WritingSystem {
    /// Text with at least one Hiragana or Katakana character: the rule by which the
    /// full-text index treats a text as Japanese ([`has_kana`](super::lexical::has_kana)), whatever else it holds.
    Japanese,
    /// Any other text: the script (Unicode's Script property, UAX #24) of most of its
    /// letters — `Latin`, `Han` (Chinese), `Hangul`, `Cyrillic` …; `Common` when it has
    /// no letter of any script (digits, punctuation, emoji only, or empty).
    Script(Script),
}

/// The writing system of the first [`SAMPLE_CHARS`] characters of `text`.
///
/// Japanese when the sample has a kana character (the full-text index reads the whole
/// text, so kana only after the sample makes a text Japanese to it and not here);
/// otherwise the script with the most characters in the sample, not counting `Common`
/// and `Inherited` characters (digits, punctuation, spaces, combining marks); a tie goes
/// to the script met first ([`most_common`]). ASCII letters count as Latin, and Han and
/// Hangul characters as theirs, without a table lookup, so English, Chinese and Korean
/// text is read at the speed of a range check.
pub fn writing_system(text: &str) -> WritingSystem {
    script_profile(text).main
}

/// The writing systems of a text: the one it is written in ([`writing_system`]) and every
/// one it has at least one character of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptProfile {
    /// [`writing_system`] of the text.
    pub main: WritingSystem,
    /// `Japanese` when the sample has kana, then the script of every letter it has, in
    /// the order first met (`Common` never: a text without letters has none).
    pub present: Vec<WritingSystem>,
}

/// [`ScriptProfile`] of the first [`SAMPLE_CHARS`] characters of `text`, in one pass.
pub fn script_profile(text: &str) -> ScriptProfile {
    let mut japanese = false;
    // (script, letters) in the order first met, and the index of the last one counted
    // (runs of one script are the common case).
    let mut counts: Vec<(Script, usize)> = Vec::new();
    let mut last = 0;
    for c in text.chars().take(SAMPLE_CHARS) {
        let Some(script) = letter_script(c) else {
            continue;
        };
        if !c.is_ascii() && is_kana(c) {
            japanese = true;
        }
        if counts.get(last).is_some_and(|(s, _)| *s == script) {
            counts[last].1 += 1;
        } else if let Some(k) = counts.iter().position(|(s, _)| *s == script) {
            counts[k].1 += 1;
            last = k;
        } else {
            counts.push((script, 1));
            last = counts.len() - 1;
        }
    }
    let mut present: Vec<WritingSystem> = Vec::with_capacity(counts.len() + 1);
    if japanese {
        present.push(WritingSystem::Japanese);
    }
    present.extend(counts.iter().map(|(s, _)| WritingSystem::Script(*s)));
    let main = if japanese {
        WritingSystem::Japanese
    } else {
        first_of_most(&counts).map_or(WritingSystem::Script(Script::Common), WritingSystem::Script)
    };
    ScriptProfile { main, present }
}

/// The script of `c` when it is a letter of one (`None` for `Common` and `Inherited`
/// characters). Kana count as `Hiragana` / `Katakana` here; [`script_profile`] reads
/// them as Japanese before.
fn letter_script(c: char) -> Option<Script> {
    if c.is_ascii() {
        c.is_ascii_alphabetic().then_some(Script::Latin)
    } else if is_hangul(c) {
        Some(Script::Hangul)
    } else if is_cjk(c) && c > '\u{3007}' && !is_kana(c) {
        // Not Hangul, not kana, not the marks 々 〆 〇 (〆 is `Common`): a Han
        // ideograph.
        Some(Script::Han)
    } else {
        match c.script() {
            Script::Common | Script::Inherited | Script::Unknown => None,
            s => Some(s),
        }
    }
}

/// How many times each value occurs in `items`: `(value, count)` in the order first met.
/// Linear in the items times the distinct values (a text mixes few scripts, a document few
/// writing systems).
pub fn tally<T: PartialEq + Copy>(items: impl IntoIterator<Item = T>) -> Vec<(T, usize)> {
    let mut counts: Vec<(T, usize)> = Vec::new();
    for item in items {
        match counts.iter_mut().find(|(v, _)| *v == item) {
            Some((_, n)) => *n += 1,
            None => counts.push((item, 1)),
        }
    }
    counts
}

/// The value of a [`tally`] with the highest count; of equal counts, the one met first.
/// `None` for an empty tally.
pub fn first_of_most<T: Copy>(counts: &[(T, usize)]) -> Option<T> {
    // `max_by_key` keeps the last of equal maxima; scanning in reverse keeps the first.
    counts.iter().rev().max_by_key(|(_, n)| *n).map(|(v, _)| *v)
}

/// The value met most often in `items`; of equal counts, the one met first. `None` for
/// no items.
pub fn most_common<T: PartialEq + Copy>(items: impl IntoIterator<Item = T>) -> Option<T> {
    first_of_most(&tally(items))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kana_makes_a_text_japanese_and_otherwise_the_most_letters_win() {
        assert_eq!(
            writing_system("tar でアーカイブを展開"),
            WritingSystem::Japanese
        );
        // One kana among Latin letters is enough: the full-text index's rule.
        assert_eq!(
            writing_system("`tar xf archive.tar` extracts it (展開する)"),
            WritingSystem::Japanese
        );
        assert_eq!(
            writing_system("# tar\n\n> Archiving utility."),
            WritingSystem::Script(Script::Latin)
        );
        assert_eq!(
            writing_system("归档实用程序 tar"),
            WritingSystem::Script(Script::Han)
        );
        assert_eq!(
            writing_system("압축 파일 tar"),
            WritingSystem::Script(Script::Hangul)
        );
        assert_eq!(
            writing_system("Утилита для архивации (tar)"),
            WritingSystem::Script(Script::Cyrillic)
        );
        // Digits, punctuation, emoji and combining marks belong to no script.
        assert_eq!(
            writing_system("123 — 🙂 ...\u{301}"),
            WritingSystem::Script(Script::Common)
        );
        assert_eq!(writing_system(""), WritingSystem::Script(Script::Common));
    }

    #[test]
    fn the_fast_paths_agree_with_the_script_property() {
        for c in ['漢', '々', '〆', '〇', '𠮷', '한', 'ᄀ', 'a', 'Z'] {
            let expected = c.script();
            assert_eq!(
                writing_system(&c.to_string()),
                WritingSystem::Script(expected),
                "{c}"
            );
        }
    }

    #[test]
    fn a_profile_lists_every_writing_system_with_a_letter() {
        let han = WritingSystem::Script(Script::Han);
        let latin = WritingSystem::Script(Script::Latin);
        // A Chinese page of shell examples: mostly Latin letters, Han present.
        let page = "解压 `tar xzvf archive.tar.gz`";
        assert_eq!(
            script_profile(page),
            ScriptProfile {
                main: latin,
                present: vec![han, latin],
            }
        );
        // Kana make it Japanese and come first; the kanji and kana scripts follow.
        let ja = script_profile("tar で展開");
        assert_eq!(ja.main, WritingSystem::Japanese);
        assert_eq!(
            ja.present,
            vec![
                WritingSystem::Japanese,
                latin,
                WritingSystem::Script(Script::Hiragana),
                han
            ]
        );
        // No letters: no writing system at all.
        assert_eq!(
            script_profile("123 🙂 ---"),
            ScriptProfile {
                main: WritingSystem::Script(Script::Common),
                present: vec![],
            }
        );
    }

    #[test]
    fn most_common_counts_and_breaks_ties_by_first_met() {
        assert_eq!(most_common([1, 2, 2, 1, 3, 2]), Some(2));
        assert_eq!(most_common([3, 1, 1, 3]), Some(3));
        assert_eq!(most_common(['b', 'a']), Some('b'));
        assert_eq!(most_common(Vec::<u8>::new()), None);
    }

    #[test]
    fn a_tie_goes_to_the_script_met_first_and_only_the_sample_is_read() {
        assert_eq!(
            writing_system("ab αβ"),
            WritingSystem::Script(Script::Latin)
        );
        assert_eq!(
            writing_system("αβ ab"),
            WritingSystem::Script(Script::Greek)
        );
        // Kana after the first SAMPLE_CHARS characters is not seen.
        let late_kana = format!("{}かな", "a".repeat(SAMPLE_CHARS));
        assert_eq!(
            writing_system(&late_kana),
            WritingSystem::Script(Script::Latin)
        );
        let early_kana = format!("{}かな", "a".repeat(SAMPLE_CHARS - 2));
        assert_eq!(writing_system(&early_kana), WritingSystem::Japanese);
        // Cyrillic outnumbers Latin past the sample's end, but only the sample counts.
        let text = format!("{}{}", "a".repeat(SAMPLE_CHARS), "я".repeat(SAMPLE_CHARS));
        assert_eq!(writing_system(&text), WritingSystem::Script(Script::Latin));
    }
}
