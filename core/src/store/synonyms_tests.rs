//! Tests of the synonym dictionary: the format on a dictionary written here, and the
//! installed dictionary's expansions of real questions.

use super::*;

/// Writes a dictionary in Sudachi's synonym format with `groups`, each a list of
/// `(head word, lexeme numbers, flags)`; the trie and id table are empty (not read).
fn dictionary(groups: &[&[(&str, &[i16], u16)]]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&SYNONYM_VERSION.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(&[0u8; 256]);
    out.extend_from_slice(&0u32.to_le_bytes()); // trie: no units
    out.extend_from_slice(&0u32.to_le_bytes()); // id table: no bytes
    out.extend_from_slice(&(groups.len() as u32).to_le_bytes());
    let mut bodies = Vec::new();
    for group in groups {
        let mut body = Vec::new();
        body.extend_from_slice(&(group.len() as u16).to_le_bytes());
        for (word, lexemes, flags) in group.iter() {
            let units: Vec<u16> = word.encode_utf16().collect();
            body.push(units.len() as u8);
            for u in units {
                body.extend_from_slice(&u.to_le_bytes());
            }
            body.push(lexemes.len() as u8);
            for l in lexemes.iter() {
                body.extend_from_slice(&l.to_le_bytes());
            }
            body.extend_from_slice(&flags.to_le_bytes());
            body.push(0); // category: ""
        }
        bodies.push(body);
    }
    let mut offset = out.len() + 8 * groups.len();
    for (i, body) in bodies.iter().enumerate() {
        out.extend_from_slice(&(i as u32 + 1).to_le_bytes());
        out.extend_from_slice(&(offset as u32).to_le_bytes());
        offset += body.len();
    }
    for body in bodies {
        out.extend_from_slice(&body);
    }
    out
}

const NOUN: u16 = FLAG_NOUN;

fn expand(synonyms: &Synonyms, text: &str) -> Vec<String> {
    synonyms.expansions(text, &word_bounds(text, &Lexical::Bigrams))
}

#[test]
fn a_word_expands_to_its_lexeme_first_then_its_synonyms() {
    let bytes = dictionary(&[
        &[
            ("電池", &[1], NOUN),
            ("バッテリー", &[2], NOUN),
            ("battery", &[2], NOUN),
        ],
        &[
            ("ルーター", &[1], NOUN),
            ("router", &[1], NOUN),
            ("ルータ", &[1], NOUN),
        ],
    ]);
    let synonyms = Synonyms::parse(&bytes).unwrap();
    assert_eq!(synonyms.group_count(), 2);
    assert_eq!(expand(&synonyms, "電池"), ["バッテリー", "battery"]);
    assert_eq!(expand(&synonyms, "battery"), ["バッテリー", "電池"]);
    // Case and width are folded (NFKC, lower case).
    assert_eq!(expand(&synonyms, "ＲＯＵＴＥＲ"), ["ルーター", "ルータ"]);
    // Two words of one term, each expanded, without repeats.
    assert_eq!(
        expand(&synonyms, "router/battery"),
        Vec::<String>::new(),
        "joined by a slash: a path, not words"
    );
    assert_eq!(
        expand(&synonyms, "router, battery."),
        ["ルーター", "ルータ", "バッテリー", "電池"]
    );
}

#[test]
fn a_key_in_several_groups_expands_to_each_in_dictionary_order() {
    let bytes = dictionary(&[
        &[("Router", &[1], NOUN), ("ルーター", &[1], NOUN)],
        &[("経路", &[1], NOUN), ("ルート", &[2], NOUN)],
        &[
            ("router", &[1], NOUN),
            ("ルータ", &[1], NOUN),
            ("ルーター", &[1], NOUN),
        ],
        &[
            ("ルート", &[1, 2], NOUN),
            ("root", &[2], NOUN),
            ("根", &[1], NOUN),
        ],
    ]);
    let synonyms = Synonyms::parse(&bytes).unwrap();
    assert_eq!(synonyms.group_count(), 4);
    // `Router` and `router` share a key: both groups, in order, ルーター once.
    assert_eq!(expand(&synonyms, "router"), ["ルーター", "ルータ"]);
    assert_eq!(expand(&synonyms, "ROUTER"), ["ルーター", "ルータ"]);
    // ルート: group 2 (no other word of its lexeme, so its synonym), then group 4, where
    // it has two lexemes and both other words share one.
    assert_eq!(expand(&synonyms, "ルート"), ["経路", "root", "根"]);
    // 根 shares a lexeme with ルート only: ルート first, then the group's other word.
    assert_eq!(expand(&synonyms, "根"), ["ルート", "root"]);
}

#[test]
fn ambiguous_words_verbs_stop_words_and_short_latin_words_are_not_expanded() {
    let bytes = dictionary(&[
        &[("手", &[1], NOUN | FLAG_AMBIGUOUS), ("手段", &[2], NOUN)],
        &[("走る", &[1], 0), ("駆ける", &[2], 0)],
        &[("and", &[1], NOUN), ("アンド", &[1], NOUN)],
        &[("pc", &[1], NOUN), ("パソコン", &[1], NOUN)],
        &[
            ("方法", &[1], NOUN),
            ("やり方", &[2], NOUN),
            ("走法", &[3], 0),
        ],
    ]);
    let synonyms = Synonyms::parse(&bytes).unwrap();
    assert!(expand(&synonyms, "手").is_empty());
    assert!(expand(&synonyms, "走る").is_empty());
    assert!(expand(&synonyms, "and").is_empty());
    assert!(expand(&synonyms, "PC").is_empty());
    // Only nouns are added.
    assert_eq!(expand(&synonyms, "方法"), ["やり方"]);
    // The non-ambiguous word of a group with an ambiguous one still expands.
    assert_eq!(expand(&synonyms, "手段"), ["手"]);
}

#[test]
fn at_most_max_expansions_words_per_group() {
    let words: Vec<String> = (0..20).map(|i| format!("word{i:02}")).collect();
    let group: Vec<(&str, &[i16], u16)> = words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            (
                w.as_str(),
                if i == 15 { &[1i16][..] } else { &[2i16][..] },
                NOUN,
            )
        })
        .collect();
    let bytes = dictionary(&[&group]);
    let synonyms = Synonyms::parse(&bytes).unwrap();
    let got = expand(&synonyms, "word00");
    assert_eq!(got.len(), MAX_EXPANSIONS);
    assert_eq!(
        got,
        [
            "word01", "word02", "word03", "word04", "word05", "word06", "word07", "word08"
        ]
    );
    // word15 is alone in its lexeme: its synonyms come in the dictionary's order.
    assert_eq!(expand(&synonyms, "word15")[0], "word00");
}

#[test]
fn bad_files_are_refused_with_a_reason() {
    assert_eq!(
        Synonyms::parse(&[0u8; 10]).unwrap_err(),
        "truncated at byte 0 (wanted 272 more of 10)"
    );
    assert_eq!(
        Synonyms::parse(&[0u8; 400]).unwrap_err(),
        "not a Sudachi synonym dictionary (version 0x0000000000000000)"
    );
    let mut bytes = dictionary(&[&[("電池", &[1], NOUN), ("battery", &[1], NOUN)]]);
    bytes.truncate(bytes.len() - 3);
    assert!(
        Synonyms::parse(&bytes)
            .unwrap_err()
            .starts_with("truncated at byte"),
        "a cut group is an error, not a panic"
    );
    // An offset past the end.
    let mut bytes = dictionary(&[&[("電池", &[1], NOUN)]]);
    let at = HEADER_LEN + 4 + 4 + 4 + 4;
    bytes[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(
        Synonyms::parse(&bytes).unwrap_err(),
        format!(
            "group 1 starts at byte 4294967295, past the end of the file ({} bytes)",
            bytes.len()
        )
    );
}

#[test]
fn japanese_words_match_only_on_token_edges() {
    let bytes = dictionary(&[
        &[("ばか", &[1], NOUN), ("馬鹿", &[1], NOUN)],
        &[("意味", &[1], NOUN), ("意義", &[2], NOUN)],
    ]);
    let synonyms = Synonyms::parse(&bytes).unwrap();
    let words = Lexical::Words(crate::store::japanese::installed_for_tests());
    let text = "入ったばかりの人が意味を知りたい";
    assert_eq!(
        synonyms.expansions(text, &word_bounds(text, &words)),
        ["意義"]
    );
    // Without the Japanese dictionary a CJK run is matched only as a whole.
    assert!(expand(&synonyms, text).is_empty());
    assert_eq!(expand(&synonyms, "意味"), ["意義"]);
}

/// The installed dictionary, for tests that need it: they fail, naming
/// `scripts/fetch-ja-dict`, when it is missing (`scripts/test` installs it).
fn installed_for_tests() -> Arc<SynonymDictionary> {
    SynonymDictionary::installed().unwrap_or_else(|| {
        panic!(
            "the synonym dictionary is not installed in {:?}: run scripts/fetch-ja-dict",
            crate::store::japanese::default_dictionary_dir()
        )
    })
}

#[test]
fn the_installed_dictionary_links_loanwords_and_their_english_forms() {
    let dictionary = installed_for_tests();
    let synonyms = dictionary
        .synonyms()
        .expect("the installed dictionary parses");
    assert_eq!(synonyms.group_count(), 22_731);
    let words = Lexical::Words(crate::store::japanese::installed_for_tests());
    let expand = |text: &str| synonyms.expansions(text, &word_bounds(text, &words));
    assert_eq!(expand("ウィンドウズ"), ["Windows"]);
    assert_eq!(expand("Windows"), ["ウィンドウズ"]);
    // Questions of benchmarks/tldr-bilingual/golden.yml.
    assert_eq!(
        expand("Mac の電池残量と、いま何から給電されているかを確認したい"),
        [
            "マッキントッシュ",
            "Macintosh",
            "マック",
            "バッテリー",
            "バッテリ",
            "battery",
            "チェック"
        ]
    );
    assert_eq!(
        expand("すでに動いているプロセスの優先度を下げたい"),
        [
            "優先順位",
            "優先順",
            "重要度",
            "プライオリティー",
            "プライオリティ",
            "priority"
        ]
    );
    assert_eq!(expand("scripts/bootstrap"), Vec::<String>::new());
}

#[test]
fn a_long_query_is_scanned_in_bounded_time_and_gains_a_bounded_number_of_words() {
    let bytes = dictionary(&[
        &[
            ("電池", &[1], NOUN),
            ("バッテリー", &[1], NOUN),
            ("battery", &[1], NOUN),
        ],
        &[("ルーター", &[1], NOUN), ("router", &[1], NOUN)],
    ]);
    let synonyms = Synonyms::parse(&bytes).unwrap();
    // 16,000 characters without a space: every bound is a place a word may start (the
    // slowest case); the words found stop at the first two, repeats being dropped.
    let text = "電池ルーター".repeat(2_700);
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    assert_eq!(
        synonyms.expansions(&text, &bounds),
        ["バッテリー", "battery", "router"]
    );
}

#[test]
fn head_words_longer_than_the_limit_are_left_out() {
    let long = "あ".repeat(MAX_WORD_CHARS + 1);
    let bytes = dictionary(&[&[("電池", &[1], NOUN), (long.as_str(), &[1], NOUN)]]);
    let synonyms = Synonyms::parse(&bytes).unwrap();
    assert!(expand(&synonyms, "電池").is_empty());
    assert!(expand(&synonyms, &long).is_empty());
}

#[test]
fn a_file_of_the_right_size_with_other_bytes_is_refused_when_read() {
    let installed = installed_for_tests();
    let mut bytes = std::fs::read(installed.path()).unwrap();
    bytes[3_000_001] ^= 0x01;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(SYNONYM_FILE), &bytes).unwrap();
    let damaged = SynonymDictionary::in_dir(dir.path()).expect("the size is right");
    assert!(damaged.synonyms().is_none());
    let why = damaged.load_error().unwrap();
    assert!(
        why.contains("does not load: not the expected file (XxHash64 "),
        "{why}"
    );
}
