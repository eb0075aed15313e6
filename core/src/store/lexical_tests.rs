//! Tests of the two analysers through the store: what each indexes and finds, the
//! fallback without a dictionary, and the rewrite of the full-text table when an index
//! is opened with the other analyser. They need the installed dictionary
//! (`scripts/fetch-ja-dict`) and fail, naming it, without it.

use super::japanese::installed_for_tests;
use super::lexical::{BIGRAMS_ID, LEXICAL_KEY, Lexical, WORDS_FELL_BACK_ID, WORDS_ID};
use super::tests::{index, search_paths};
use super::*;

fn words() -> Lexical {
    Lexical::Words(installed_for_tests())
}

/// Tokyo Metropolis and Kyoto: `京都` is a bigram of `東京都`, not one of its words.
const KYOTO_DOCS: [(&str, &[&str]); 2] = [
    ("tokyo.md", &["東京都の地下鉄の路線図です。"]),
    ("kyoto.md", &["京都の寺を巡る散歩道です。"]),
];

#[test]
fn words_of_japanese_text_and_bigrams_of_the_rest() {
    let lexical = words();
    let cases = [
        // Japanese: words, without particles (を, に, で, の) and auxiliaries (たい, ます).
        ("tarでアーカイブを展開したい", "tar アーカイブ 展開 し"),
        (
            "全文検索エンジンの仕組みを説明します。",
            "全文 検索 エンジン 仕組み 説明 し 。",
        ),
        // Han only: Chinese or Japanese cannot be told apart, so bigrams.
        ("中文分词", "中文 文分 分词"),
        ("名前解決", "名前 前解 解決"),
        // Hangul stays bigrams.
        ("한국어 검색", "한국 국어 검색"),
        ("plain text", "plain text"),
    ];
    for (text, expected) in cases {
        let japanese = lexical::has_kana(text);
        assert_eq!(lexical.fts_text(text, japanese), expected, "text {text:?}");
    }
    // A Han-only heading of a chunk with kana is Japanese.
    assert_eq!(lexical.fts_text("名前解決", true), "名前 解決");
}

#[test]
fn a_query_only_words_find_right() {
    // Bigrams find `京都` inside `東京都`; words do not.
    let mut bigrams = Store::open_in_memory_with_lexical(Lexical::Bigrams).expect("open");
    index(&mut bigrams, &KYOTO_DOCS);
    assert_eq!(search_paths(&bigrams, "京都"), ["kyoto.md", "tokyo.md"]);
    assert_eq!(
        search_paths(&bigrams, "京都の寺に行きたい"),
        ["kyoto.md", "tokyo.md"]
    );

    let mut words = Store::open_in_memory_with_lexical(words()).expect("open");
    index(&mut words, &KYOTO_DOCS);
    assert_eq!(search_paths(&words, "京都"), ["kyoto.md"]);
    assert_eq!(search_paths(&words, "京都の寺に行きたい"), ["kyoto.md"]);
    assert_eq!(search_paths(&words, "東京都"), ["tokyo.md"]);
    // Particles alone match nothing; a single character is a prefix of words.
    assert_eq!(search_paths(&words, "の"), Vec::<String>::new());
    assert_eq!(search_paths(&words, "寺"), ["kyoto.md"]);
}

#[test]
fn without_a_dictionary_text_falls_back_to_bigrams() {
    let empty = tempfile::tempdir().expect("tempdir");
    let lexical = Lexical::with_dictionary_in(empty.path());
    assert!(matches!(lexical, Lexical::Bigrams));
    assert_eq!(lexical.id(), BIGRAMS_ID);
    assert_eq!(
        lexical.fts_text("京都の寺を巡る", true),
        "京都 都の の寺 寺を を巡 巡る"
    );

    // A dictionary file that is not the expected one (here, too short): bigrams, and the
    // index says so, rather than words that fall back to bigrams once read.
    std::fs::write(empty.path().join(japanese::DICTIONARY_FILE), b"broken").expect("write");
    let broken = Lexical::with_dictionary_in(empty.path());
    assert!(matches!(broken, Lexical::Bigrams));
    assert_eq!(broken.id(), BIGRAMS_ID);
    assert_eq!(broken.fts_text("京都の寺", true), "京都 都の の寺");
    // The right size with another ending (a file replaced by another gzip): the same.
    let installed = japanese::installed_for_tests();
    let mut bytes = std::fs::read(installed.path()).expect("read the dictionary");
    let n = bytes.len();
    bytes[n - 5] ^= 1;
    std::fs::write(empty.path().join(japanese::DICTIONARY_FILE), &bytes).expect("write");
    assert!(matches!(
        Lexical::with_dictionary_in(empty.path()),
        Lexical::Bigrams
    ));
    bytes[n - 5] ^= 1;
    std::fs::write(empty.path().join(japanese::DICTIONARY_FILE), &bytes).expect("write");
    assert_eq!(Lexical::with_dictionary_in(empty.path()).id(), WORDS_ID);
}

#[test]
fn an_index_is_written_again_when_opened_with_the_other_analyser() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db_path = dir.path().join(".folio/index.db");
    let n_fts = |store: &Store| -> i64 {
        store
            .conn()
            .query_row("SELECT count(*) FROM chunks_fts", [], |row| row.get(0))
            .expect("count")
    };
    {
        let mut store = Store::open_with_lexical(&db_path, Lexical::Bigrams).expect("open");
        index(&mut store, &KYOTO_DOCS);
        assert_eq!(
            store.meta(LEXICAL_KEY).unwrap().as_deref(),
            Some(BIGRAMS_ID)
        );
        assert_eq!(search_paths(&store, "京都"), ["kyoto.md", "tokyo.md"]);
    }
    {
        let store = Store::open_with_lexical(&db_path, words()).expect("reopen");
        assert!(!store.was_rebuilt());
        assert_eq!(store.meta(LEXICAL_KEY).unwrap().as_deref(), Some(WORDS_ID));
        assert_eq!(n_fts(&store), 2);
        assert_eq!(search_paths(&store, "京都"), ["kyoto.md"]);
        assert_eq!(store.documents().expect("documents").len(), 2);
    }
    {
        // The same analyser again: nothing is written.
        let store = Store::open_with_lexical(&db_path, words()).expect("reopen");
        assert_eq!(store.conn().total_changes(), 0);
    }
    {
        let store = Store::open_with_lexical(&db_path, Lexical::Bigrams).expect("reopen");
        assert_eq!(
            store.meta(LEXICAL_KEY).unwrap().as_deref(),
            Some(BIGRAMS_ID)
        );
        assert_eq!(n_fts(&store), 2);
        assert_eq!(search_paths(&store, "京都"), ["kyoto.md", "tokyo.md"]);
    }
}

/// A store that stays open (a server) keeps the table its own: another process that
/// opens the file with the other analyser writes the table again, and the open store's
/// next search, write or status writes it back before it reads or adds to it.
#[test]
fn an_open_store_writes_the_table_back_after_another_analyser_rewrote_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db_path = dir.path().join(".folio/index.db");
    let mut server = Store::open_with_lexical(&db_path, words()).expect("open");
    index(&mut server, &KYOTO_DOCS);
    assert_eq!(search_paths(&server, "京都"), ["kyoto.md"]);
    let bigrams = Store::open_with_lexical(&db_path, Lexical::Bigrams).expect("open");
    assert_eq!(
        bigrams.meta(LEXICAL_KEY).unwrap().as_deref(),
        Some(BIGRAMS_ID)
    );
    drop(bigrams);
    // Words against a table of bigrams would find nothing; the search writes it back.
    assert_eq!(search_paths(&server, "京都"), ["kyoto.md"]);
    assert_eq!(server.meta(LEXICAL_KEY).unwrap().as_deref(), Some(WORDS_ID));
    // The same before a write and before a status report.
    drop(Store::open_with_lexical(&db_path, Lexical::Bigrams).expect("open"));
    assert_eq!(server.status().unwrap().lexical_analyser, WORDS_ID);
    assert_eq!(server.meta(LEXICAL_KEY).unwrap().as_deref(), Some(WORDS_ID));
    drop(Store::open_with_lexical(&db_path, Lexical::Bigrams).expect("open"));
    drop(server.batch().expect("batch"));
    assert_eq!(server.meta(LEXICAL_KEY).unwrap().as_deref(), Some(WORDS_ID));
    assert_eq!(search_paths(&server, "京都"), ["kyoto.md"]);
}

/// A dictionary of the right size and ending, damaged inside, fails when first read:
/// what the store then writes goes in as bigrams and the index records that, so a later
/// process whose dictionary loads writes the table again with words (no `--force`), and
/// the failing process does not rewrite it at every search.
#[test]
fn text_indexed_while_the_dictionary_fails_is_recorded_as_fallen_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut bytes = std::fs::read(installed_for_tests().path()).expect("read");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(dir.path().join(japanese::DICTIONARY_FILE), &bytes).expect("write");
    let damaged = Lexical::with_dictionary_in(dir.path());
    assert_eq!((damaged.id(), damaged.recorded_id()), (WORDS_ID, WORDS_ID));

    let db_path = dir.path().join(".folio/index.db");
    {
        let mut store = Store::open_with_lexical(&db_path, damaged).expect("open");
        index(&mut store, &KYOTO_DOCS);
        assert_eq!(
            store.meta(LEXICAL_KEY).unwrap().as_deref(),
            Some(WORDS_FELL_BACK_ID)
        );
        let status = store.status().unwrap();
        assert_eq!(status.lexical_analyser, BIGRAMS_ID);
        assert!(status.japanese_fallback.is_some());
        // Bigrams: 京都 is also in 東京都. Searching again writes nothing.
        assert_eq!(search_paths(&store, "京都"), ["kyoto.md", "tokyo.md"]);
        let before = store.conn().total_changes();
        assert_eq!(search_paths(&store, "京都"), ["kyoto.md", "tokyo.md"]);
        assert_eq!(store.conn().total_changes(), before);
    }
    // The dictionary restored: the next open writes the table with words.
    let store = Store::open_with_lexical(&db_path, words()).expect("reopen");
    assert_eq!(store.meta(LEXICAL_KEY).unwrap().as_deref(), Some(WORDS_ID));
    assert_eq!(search_paths(&store, "京都"), ["kyoto.md"]);
}

/// An index that records no analyser (written by a folio before it did, with bigrams
/// and without normalization) is written again, and searches as a new one.
#[test]
fn an_index_without_a_recorded_analyser_is_written_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db_path = dir.path().join(".folio/index.db");
    {
        let mut store = Store::open_with_lexical(&db_path, Lexical::Bigrams).expect("open");
        index(&mut store, &KYOTO_DOCS);
        // What a folio before the analyser was recorded left.
        store
            .conn()
            .execute("DELETE FROM meta WHERE key = ?1", [LEXICAL_KEY])
            .expect("delete");
    }
    {
        let store = Store::open_with_lexical(&db_path, Lexical::Bigrams).expect("reopen");
        assert_eq!(
            store.meta(LEXICAL_KEY).unwrap().as_deref(),
            Some(BIGRAMS_ID)
        );
        assert_eq!(search_paths(&store, "京都"), ["kyoto.md", "tokyo.md"]);
        store
            .conn()
            .execute("DELETE FROM meta WHERE key = ?1", [LEXICAL_KEY])
            .expect("delete");
    }
    let store = Store::open_with_lexical(&db_path, words()).expect("reopen");
    assert_eq!(store.meta(LEXICAL_KEY).unwrap().as_deref(), Some(WORDS_ID));
    assert_eq!(search_paths(&store, "京都"), ["kyoto.md"]);
}

#[test]
fn the_rest_of_a_japanese_chunk_is_kept_as_it_is() {
    // A tldr-like chunk: Markdown, code, Latin with diacritics, half-width Katakana,
    // Hangul and full-width Latin. The tokens cover the text without a gap, so nothing
    // but particles, auxiliaries and symbols between CJK words is lost.
    let text = "# tar\n\n> アーカイブ(複数のファイル)の為の\tユーティリティー。\n- `tar cf {{出力ファイル名.tar}}` héllo  wörld\r\nfoo-bar.baz ｶﾀｶﾅ 한국어 검색 Ｔシャツ 2024年";
    let tokens = installed_for_tests().tokens(text).expect("loaded");
    let mut at = 0;
    for (range, _) in &tokens {
        assert_eq!(range.start, at, "gap before {:?}", &text[range.clone()]);
        at = range.end;
    }
    assert_eq!(at, text.len());
    assert_eq!(
        words().fts_text(text, true),
        "# tar\n\n> アーカイブ ( 複数 ファイル ) 為\tユーティリティー 。\n- `tar cf {{ 出力 ファイル 名 .tar}}` héllo  wörld\r\nfoo-bar.baz ｶﾀｶﾅ 한국 국어 검색 Ｔシャツ 2024 年"
    );
}

/// Texts and queries are both in NFKC: half-width Katakana, full-width Latin and
/// decomposed kana find their usual forms, with either analyser.
#[test]
fn text_and_queries_are_normalized_alike() {
    let docs: [(&str, &[&str]); 2] = [
        ("manual.md", &["ＰＤＦをｶﾀｶﾅで保存する。"]),
        ("mac.md", &["ハ\u{309a}スホ\u{309a}ートを更新する。"]),
    ];
    for lexical in [Lexical::Bigrams, words()] {
        let mut store = Store::open_in_memory_with_lexical(lexical.clone()).expect("open");
        index(&mut store, &docs);
        let id = lexical.id();
        assert_eq!(search_paths(&store, "PDF"), ["manual.md"], "{id}");
        assert_eq!(search_paths(&store, "ｐｄｆ"), ["manual.md"], "{id}");
        assert_eq!(search_paths(&store, "カタカナ"), ["manual.md"], "{id}");
        assert_eq!(search_paths(&store, "パスポート"), ["mac.md"], "{id}");
    }
    assert_eq!(super::lexical::normalize("plain ascii"), "plain ascii");
    assert!(matches!(
        super::lexical::normalize("plain ascii"),
        std::borrow::Cow::Borrowed(_)
    ));
    assert_eq!(super::lexical::normalize("ｶﾀｶﾅ ＰＤＦ ①"), "カタカナ PDF 1");
}
