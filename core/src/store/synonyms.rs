//! Synonyms that widen a lexical query: Sudachi's synonym dictionary.
//!
//! `scripts/fetch-ja-dict` installs the dictionary ([`SYNONYM_FILE`], 3,857,381 bytes:
//! SudachiDict's synonym groups by Works Applications, Apache-2.0, compiled by the PyPI
//! package `chikkarpy` 0.1.0, which carries it) next to the Japanese dictionary, in
//! [`crate::store::japanese::default_dictionary_dir`]. It holds 22,731 groups of words
//! with one meaning: Japanese synonyms (`宛先` / `送り先`), spelling variants (`サーバ` /
//! `サーバー`), and the English form of a loanword or technical term (`パーティション` /
//! `partition`, `ウィンドウズ` / `Windows`, `電池` / `battery`). A query word found in the
//! dictionary also matches the other words of its groups ([`Synonyms::expansions`]), so a
//! question that says `電池` finds a page that says `バッテリー` or `battery`, in either
//! language. The index is not changed: only the query is.
//!
//! The file format is Sudachi's (read here, not through a library): a 272-byte header
//! (version, creation time, description), a double-array trie and its id table (skipped:
//! the words are indexed again in a sorted table), then the group list — a count, a
//! `(group id, byte offset)` pair per group, and at each offset a group: its word count
//! (u16) and per word its head word (UTF-16, a one- or two-byte length), its lexeme
//! numbers (i16), its flags (u16) and its category (UTF-16). Everything little-endian.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::le_reader::LeReader;
use crate::store::cjk::is_cjk;
use crate::store::lexical::{Lexical, normalize};

/// The dictionary's file name in the dictionary folder (as `scripts/fetch-ja-dict`
/// installs it).
pub const SYNONYM_FILE: &str = "system_synonym.dic";

/// The size in bytes of the file `scripts/fetch-ja-dict` installs (it pins the SHA-256);
/// a file of another size is refused.
pub const SYNONYM_FILE_LEN: u64 = 3_857_381;

/// XxHash64 (seed 0) of that file: a file of the right size with another content (a
/// flipped byte inside a word) is refused when it is read.
pub const SYNONYM_XXH64: u64 = 0x393c_5b3d_5d97_0219;

/// The version word at the start of a Sudachi synonym dictionary.
const SYNONYM_VERSION: u64 = 0xeb5b_87cc_8b3f_406c;

/// Size of the file header: version (u64), creation time (u64), description (256 bytes).
const HEADER_LEN: usize = 272;

/// Most words one matched word adds to the query: the words of its own lexeme (spelling
/// variants, the English form) first, then its synonyms, in the dictionary's order.
pub const MAX_EXPANSIONS: usize = 8;

/// Most words one query term gains in all ([`Synonyms::expansions`]): a long Japanese
/// question written without spaces stays a bounded FTS5 expression.
pub const MAX_TERM_EXPANSIONS: usize = 64;

/// The longest head word matched or added, in characters. The dictionary has 40 longer
/// entries (slogans and full organisation names, up to 133 characters) out of 60,866;
/// bounding the span also keeps the scan of a long query linear in its length.
pub const MAX_WORD_CHARS: usize = 32;

/// The shortest Latin word that is expanded, in characters: `PC` or `OS` would bring in
/// katakana spellings of two letters that match far too much.
pub const MIN_LATIN_CHARS: usize = 3;

/// English function words that are never expanded: the dictionary lists `and`
/// (アンパサンド, ＆) and `one` (ワン) as loanwords, which a question uses as grammar.
pub const LATIN_STOP_WORDS: [&str; 24] = [
    "and", "the", "for", "with", "from", "that", "this", "one", "not", "but", "all", "any", "out",
    "into", "over", "way", "pass", "keep", "get", "set", "let", "new", "old", "last",
];

/// Flag bit of a word that is ambiguous: it is not expanded (it may mean something else
/// than its group), though other words of the group may expand to it.
const FLAG_AMBIGUOUS: u16 = 0x0001;

/// Flag bit of a noun (体言); only nouns are expanded and added: verbs and adjectives
/// change with conjugation, which the query does not undo.
const FLAG_NOUN: u16 = 0x0002;

/// A run of an arena: its start and length, in the arena's units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: u32,
    len: u32,
}

impl Span {
    fn range(self) -> Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// One word of a group; its strings and lexemes are spans of [`Synonyms`]' arenas.
#[derive(Debug, Clone, Copy)]
struct Word {
    /// The head word as written in the dictionary (bytes of `Synonyms::strings`).
    text: Span,
    /// [`key`] of the head word, how query text is compared with it (bytes of
    /// `Synonyms::strings`; the same span as `text` when the two are equal).
    key: Span,
    /// The lexeme numbers within the group (items of `Synonyms::lexemes`): words sharing
    /// one are one word in two spellings or languages.
    lexemes: Span,
    /// The dictionary's flags ([`FLAG_AMBIGUOUS`], [`FLAG_NOUN`], and others not read).
    flags: u16,
}

/// The parsed dictionary: groups of words, and each word's groups. Strings, lexemes and
/// group lists live in flat arenas (about 4 MB for the installed file, against 20 MB as
/// one allocation per string).
#[derive(Debug)]
pub struct Synonyms {
    /// Every head word's text and, where it differs, its key.
    strings: String,
    /// Every word's lexeme numbers.
    lexemes: Vec<i16>,
    /// Every word, group after group.
    words: Vec<Word>,
    /// The words of group `g` are `words[groups[g]..groups[g + 1]]` (one more entry than
    /// there are groups).
    groups: Vec<u32>,
    /// One entry per distinct key, sorted by key: the key (bytes of `strings`) and its
    /// groups (items of `group_lists`), looked up by binary search.
    index: Vec<(Span, Span)>,
    /// The groups of each key, in dictionary order, without repeats.
    group_lists: Vec<u32>,
    /// The longest key, in characters.
    max_chars: usize,
}

/// How query text and head words are compared: NFKC ([`normalize`], as the index is)
/// and lower case.
fn key(text: &str) -> String {
    normalize(text).to_lowercase()
}

/// A string at the reader's offset: its length in UTF-16 code units (one byte below 128,
/// else two with the high bit of the first cleared), then the code units.
fn read_string(r: &mut LeReader) -> Result<String, String> {
    let first = usize::from(r.u8()?);
    let len = if first < 128 {
        first
    } else {
        ((first & 0x7f) << 8) | usize::from(r.u8()?)
    };
    let units: Vec<u16> = r
        .take(2 * len)?
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    String::from_utf16(&units).map_err(|e| format!("a word is not UTF-16: {e}"))
}

impl Synonyms {
    /// Parses a dictionary in Sudachi's synonym format (see the module documentation).
    ///
    /// Errors: a message naming what is wrong — another version word, a length or
    /// offset past the end of `bytes`, a word that is not UTF-16.
    pub fn parse(bytes: &[u8]) -> Result<Synonyms, String> {
        let mut r = LeReader::new(bytes, 0);
        let header = r.take(HEADER_LEN)?;
        let version = u64::from_le_bytes(header[..8].try_into().expect("8 bytes"));
        if version != SYNONYM_VERSION {
            return Err(format!(
                "not a Sudachi synonym dictionary (version {version:#018x})"
            ));
        }
        let trie_units = r.u32()? as usize;
        r.take(trie_units.saturating_mul(4))?;
        let id_table = r.u32()? as usize;
        r.take(id_table)?;
        let count = r.u32()? as usize;
        let mut offsets = Vec::with_capacity(count.min(1 << 20));
        for _ in 0..count {
            let group_id = r.u32()?;
            let offset = r.u32()? as usize;
            if offset >= bytes.len() {
                return Err(format!(
                    "group {group_id} starts at byte {offset}, past the end of the file ({} bytes)",
                    bytes.len()
                ));
            }
            offsets.push(offset);
        }
        let too_big = |what: &str| format!("too many {what} for this reader");
        let mut strings = String::new();
        let mut lexemes: Vec<i16> = Vec::new();
        let mut words: Vec<Word> = Vec::new();
        let mut groups: Vec<u32> = Vec::with_capacity(offsets.len() + 1);
        // (key, group) of every word, sorted and gathered into the index below.
        let mut keyed: Vec<(Span, u32)> = Vec::new();
        let mut max_chars = 0;
        let push_str = |strings: &mut String, text: &str| -> Result<Span, String> {
            let start = u32::try_from(strings.len()).map_err(|_| too_big("bytes of words"))?;
            strings.push_str(text);
            let len = u32::try_from(text.len()).map_err(|_| too_big("bytes of words"))?;
            Ok(Span { start, len })
        };
        for offset in offsets {
            let group = u32::try_from(groups.len()).map_err(|_| too_big("groups"))?;
            groups.push(u32::try_from(words.len()).map_err(|_| too_big("words"))?);
            let mut g = LeReader::new(bytes, offset);
            let n = g.u16()?;
            for _ in 0..n {
                let text = read_string(&mut g)?;
                let lexeme_count = usize::from(g.u8()?);
                let lexeme_start = u32::try_from(lexemes.len()).map_err(|_| too_big("lexemes"))?;
                lexemes.extend(
                    g.take(2 * lexeme_count)?
                        .chunks_exact(2)
                        .map(|c| i16::from_le_bytes([c[0], c[1]])),
                );
                let flags = g.u16()?;
                let _category = read_string(&mut g)?;
                let word_key = key(&text);
                let chars = word_key.chars().count();
                if chars > MAX_WORD_CHARS {
                    lexemes.truncate(lexeme_start as usize);
                    continue;
                }
                max_chars = max_chars.max(chars);
                let text_span = push_str(&mut strings, &text)?;
                let key_span = if word_key == text {
                    text_span
                } else {
                    push_str(&mut strings, &word_key)?
                };
                keyed.push((key_span, group));
                words.push(Word {
                    text: text_span,
                    key: key_span,
                    lexemes: Span {
                        start: lexeme_start,
                        len: lexeme_count as u32,
                    },
                    flags,
                });
            }
        }
        groups.push(u32::try_from(words.len()).map_err(|_| too_big("words"))?);
        // Stable: a key's groups stay in dictionary order.
        keyed.sort_by(|a, b| strings[a.0.range()].cmp(&strings[b.0.range()]));
        let mut index: Vec<(Span, Span)> = Vec::new();
        let mut group_lists: Vec<u32> = Vec::with_capacity(keyed.len());
        for (key_span, group) in keyed {
            let start = group_lists.len() as u32;
            match index.last_mut() {
                Some((last, list)) if strings[last.range()] == strings[key_span.range()] => {
                    if !group_lists[list.range()].contains(&group) {
                        group_lists.push(group);
                        list.len += 1;
                    }
                }
                _ => {
                    group_lists.push(group);
                    index.push((key_span, Span { start, len: 1 }));
                }
            }
        }
        strings.shrink_to_fit();
        lexemes.shrink_to_fit();
        words.shrink_to_fit();
        index.shrink_to_fit();
        group_lists.shrink_to_fit();
        Ok(Synonyms {
            strings,
            lexemes,
            words,
            groups,
            index,
            group_lists,
            max_chars,
        })
    }

    /// The groups whose words include the key `span_key`, in dictionary order.
    fn groups_of(&self, span_key: &str) -> Option<&[u32]> {
        let i = self
            .index
            .binary_search_by(|(k, _)| self.strings[k.range()].cmp(span_key))
            .ok()?;
        Some(&self.group_lists[self.index[i].1.range()])
    }

    /// The words of group `group`.
    fn group(&self, group: u32) -> &[Word] {
        let g = group as usize;
        &self.words[self.groups[g] as usize..self.groups[g + 1] as usize]
    }

    fn text(&self, span: Span) -> &str {
        &self.strings[span.range()]
    }

    /// The number of groups.
    pub fn group_count(&self) -> usize {
        self.groups.len() - 1
    }

    /// The words that widen a query term `text`, in order, without repeats: for each
    /// longest span of `text` between two of `bounds` (byte offsets into `text`, sorted;
    /// [`word_bounds`]) that is a head word, the other words of its groups, at most
    /// [`MAX_EXPANSIONS`] per group, the same lexeme first, and at most
    /// [`MAX_TERM_EXPANSIONS`] in all. Multi-word head words (`personal computer`) are not
    /// found from a query, whose terms are single words.
    ///
    /// A span is not expanded when it is an ambiguous word or not a noun (dictionary
    /// flags), has no letter or digit, or is a Latin word shorter than
    /// [`MIN_LATIN_CHARS`], one of [`LATIN_STOP_WORDS`], or joined to more by `/`, `\`,
    /// `_`, `-`, `.`, `@`, `#` or `=` (a path or an identifier: `scripts/bootstrap` is
    /// not about booting). Only nouns are added.
    pub fn expansions(&self, text: &str, bounds: &[usize]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut i = 0;
        while i < bounds.len() && out.len() < MAX_TERM_EXPANSIONS {
            let start = bounds[i];
            // The longest span from `start` that is a head word; spans grow one bound at a
            // time and stop past the longest key, so a long query is scanned in linear time.
            let mut found = None;
            let mut chars = 0;
            for j in i + 1..bounds.len() {
                chars += text[bounds[j - 1]..bounds[j]].chars().count();
                if chars > self.max_chars {
                    break;
                }
                let span_key = key(&text[start..bounds[j]]);
                if let Some(groups) = self.groups_of(&span_key) {
                    found = Some((j, span_key, groups));
                }
            }
            let Some((end, span_key, groups)) = found else {
                i += 1;
                continue;
            };
            i = end;
            if !expandable(text, start..bounds[end], &span_key) {
                continue;
            }
            for &group in groups {
                self.add_group(self.group(group), &span_key, &mut out);
            }
        }
        out.truncate(MAX_TERM_EXPANSIONS);
        out
    }

    /// Adds to `out` the words of `group` that `matched` (a key of the group) expands to.
    fn add_group(&self, group: &[Word], matched: &str, out: &mut Vec<String>) {
        let own: Vec<&Word> = group
            .iter()
            .filter(|w| self.text(w.key) == matched)
            .collect();
        if own
            .iter()
            .any(|w| w.flags & FLAG_AMBIGUOUS != 0 || w.flags & FLAG_NOUN == 0)
        {
            return;
        }
        let lexemes = |w: &Word| &self.lexemes[w.lexemes.range()];
        let same_lexeme = |w: &Word| {
            lexemes(w)
                .iter()
                .any(|l| own.iter().any(|o| lexemes(o).contains(l)))
        };
        let ordered = group
            .iter()
            .filter(|w| same_lexeme(w))
            .chain(group.iter().filter(|w| !same_lexeme(w)));
        let mut added = 0;
        for word in ordered {
            if added == MAX_EXPANSIONS {
                break;
            }
            if self.text(word.key) == matched || word.flags & FLAG_NOUN == 0 {
                continue;
            }
            let text = self.text(word.text);
            if !out.iter().any(|o| o == text) {
                out.push(text.to_owned());
                added += 1;
            }
        }
    }
}

/// Whether the span `range` of `text` (whose [`key`] is `span_key`) may be expanded: see
/// [`Synonyms::expansions`].
fn expandable(text: &str, range: Range<usize>, span_key: &str) -> bool {
    if !span_key.chars().any(char::is_alphanumeric) {
        return false;
    }
    if !span_key.is_ascii() {
        return true;
    }
    if span_key.chars().count() < MIN_LATIN_CHARS || LATIN_STOP_WORDS.contains(&span_key) {
        return false;
    }
    let joins = |c: Option<char>| matches!(c, Some('/' | '\\' | '_' | '-' | '.' | '@' | '#' | '='));
    let before = text[..range.start].chars().next_back();
    let mut after = text[range.end..].chars();
    let next = after.next();
    // A full stop that ends the sentence does not join.
    let full_stop = next == Some('.') && after.next().is_none_or(char::is_whitespace);
    !joins(before) && (!joins(next) || full_stop)
}

/// The byte offsets of `text` where a dictionary word may start or end, sorted: the
/// start and end of `text`, every change between a letter or digit, a CJK character and
/// anything else, both sides of every character that is neither; and, with
/// [`Lexical::Words`] and CJK in `text`, the edges of the Japanese dictionary's tokens,
/// so that `ばか` is not found inside `ばかり` (without it, a CJK run is matched only as a
/// whole).
pub fn word_bounds(text: &str, lexical: &Lexical) -> Vec<usize> {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Word,
        Cjk,
        Other,
    }
    let class = |c: char| {
        if is_cjk(c) {
            Class::Cjk
        } else if c.is_alphanumeric() {
            Class::Word
        } else {
            Class::Other
        }
    };
    let mut bounds = vec![0, text.len()];
    let mut previous = None;
    for (i, c) in text.char_indices() {
        let this = class(c);
        if previous != Some(this) || this == Class::Other {
            bounds.push(i);
        }
        if this == Class::Other {
            bounds.push(i + c.len_utf8());
        }
        previous = Some(this);
    }
    if let Lexical::Words(dictionary) = lexical
        && text.chars().any(is_cjk)
        && let Some(tokens) = dictionary.tokens(text)
    {
        for (range, _) in tokens {
            bounds.push(range.start);
            bounds.push(range.end);
        }
    }
    bounds.sort_unstable();
    bounds.dedup();
    bounds
}

/// The dictionary file, read and parsed on first use and kept; a file that fails to
/// parse is reported once with `tracing::error!` and expands nothing.
#[derive(Debug)]
pub struct SynonymDictionary {
    path: PathBuf,
    loaded: OnceLock<Result<Synonyms, String>>,
}

impl SynonymDictionary {
    /// The dictionary `dir/`[`SYNONYM_FILE`], not read yet; `None` when the file does not
    /// exist or is not [`SYNONYM_FILE_LEN`] bytes (logged as an error).
    pub fn in_dir(dir: &Path) -> Option<SynonymDictionary> {
        let path = dir.join(SYNONYM_FILE);
        if !path.is_file() {
            return None;
        }
        if let Some(why) = file_problem(&path) {
            tracing::error!("{why}; queries are not widened with synonyms");
            return None;
        }
        Some(SynonymDictionary {
            path,
            loaded: OnceLock::new(),
        })
    }

    /// The dictionary in [`crate::store::japanese::default_dictionary_dir`], shared by the
    /// whole process; `None` when it is not installed (checked once per process).
    pub fn installed() -> Option<Arc<SynonymDictionary>> {
        static INSTALLED: OnceLock<Option<Arc<SynonymDictionary>>> = OnceLock::new();
        INSTALLED
            .get_or_init(|| {
                crate::store::japanese::default_dictionary_dir()
                    .and_then(|dir| SynonymDictionary::in_dir(&dir))
                    .map(Arc::new)
            })
            .clone()
    }

    /// The dictionary file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why the dictionary does not widen queries, for status reports: it failed to read
    /// or parse (it is read now if it has not been). `None` when it loaded.
    pub fn load_error(&self) -> Option<String> {
        if self.synonyms().is_some() {
            return None;
        }
        let why = self.loaded.get()?.as_ref().err()?;
        Some(format!(
            "the synonym dictionary {} does not load: {why}; run scripts/fetch-ja-dict",
            self.path.display()
        ))
    }

    /// Why [`SynonymDictionary::installed`] finds no dictionary, for status reports: the
    /// file is missing or has the wrong size, or no folder is known. `None` when a file of
    /// the right size is there.
    pub fn missing_reason() -> Option<String> {
        let Some(dir) = crate::store::japanese::default_dictionary_dir() else {
            return Some(
                "no folder for the synonym dictionary (set FOLIO_JA_DICT_DIR, XDG_DATA_HOME or HOME)"
                    .into(),
            );
        };
        file_problem(&dir.join(SYNONYM_FILE))
    }

    /// The parsed dictionary, reading it on the first call (about 0.05 s and 4 MB in a
    /// release build); `None` when it failed to read, is not the file
    /// [`SYNONYM_XXH64`] pins, or does not parse.
    pub fn synonyms(&self) -> Option<&Synonyms> {
        self.loaded
            .get_or_init(|| {
                let parsed = std::fs::read(&self.path)
                    .map_err(|e| e.to_string())
                    .and_then(|bytes| {
                        let got = xxhash_rust::xxh64::xxh64(&bytes, 0);
                        if got != SYNONYM_XXH64 {
                            return Err(format!(
                                "not the expected file (XxHash64 {got:016x}, expected {SYNONYM_XXH64:016x})"
                            ));
                        }
                        Synonyms::parse(&bytes)
                    });
                if let Err(why) = &parsed {
                    tracing::error!(
                        "cannot read the synonym dictionary {}: {why}; queries are not widened with synonyms; run scripts/fetch-ja-dict",
                        self.path.display()
                    );
                }
                parsed
            })
            .as_ref()
            .ok()
    }
}

/// Why the file at `path` is not the installed dictionary by what its metadata shows: it
/// is missing (or not a file), or its size is not [`SYNONYM_FILE_LEN`]; `None` when it
/// looks right.
fn file_problem(path: &Path) -> Option<String> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() && m.len() == SYNONYM_FILE_LEN => None,
        Ok(m) if m.is_file() => Some(format!(
            "the synonym dictionary {} has {} bytes, expected {SYNONYM_FILE_LEN}; run scripts/fetch-ja-dict",
            path.display(),
            m.len()
        )),
        _ => Some(format!(
            "the synonym dictionary is not installed ({}); run scripts/fetch-ja-dict",
            path.display()
        )),
    }
}

#[cfg(test)]
#[path = "synonyms_tests.rs"]
mod tests;
