//! The plain-text view on real snippets: a tldr page in English and in Japanese, a note
//! with links, emphasis and code, and the whole-document text.

use super::*;

/// The start of tldr's `pages/common/tar.md` (CC BY 4.0, tldr-pages contributors).
const TAR: &str = "# tar

> Archiving utility.
> Often combined with a compression method, such as `gzip` or `bzip2`.
> More information: <https://www.gnu.org/software/tar/manual/tar.html>.

- [c]reate an archive and write it to a [f]ile:

`tar cf {{path/to/target.tar}} {{path/to/file1 path/to/file2 ...}}`

- [c]reate a g[z]ipped archive from a directory using relative paths:

`tar czf {{path/to/target.tar.gz}} {{[-C|--directory]}} {{path/to/directory}} .`

- E[x]tract a (compressed) archive [f]ile into the current directory [v]erbosely:

`tar xvf {{path/to/source.tar[.gz|.bz2|.xz]}}`
";

/// The start of tldr's `pages.ja/common/tar.md` (CC BY 4.0, tldr-pages contributors).
const TAR_JA: &str = "# tar

> アーカイブ(複数のファイルやフォルダを 1 つのファイルに纏める)の為のユーティリティー。
> gzip や bzip2 などの圧縮方法と組み合わせることが多いです。
> 詳細情報: <https://www.gnu.org/software/tar/manual/tar.html>。

- アーカイブを作成し、それをファイルに書き込む:

`tar cf {{出力ファイル名.tar}} {{ファイル1 ファイル2 ...}}`
";

#[test]
fn a_tldr_page_is_its_words_without_markup_urls_or_commands() {
    assert_eq!(
        embedding_text("tar", TAR),
        "tar\n\n\
         Archiving utility. Often combined with a compression method, such as gzip or bzip2. \
         More information:.\n\
         create an archive and write it to a file:\n\
         create a gzipped archive from a directory using relative paths:\n\
         Extract a (compressed) archive file into the current directory verbosely:"
    );
}

#[test]
fn a_japanese_tldr_page_keeps_its_sentences() {
    assert_eq!(
        embedding_text("tar", TAR_JA),
        "tar\n\n\
         アーカイブ(複数のファイルやフォルダを 1 つのファイルに纏める)の為のユーティリティー。 \
         gzip や bzip2 などの圧縮方法と組み合わせることが多いです。 詳細情報:。\n\
         アーカイブを作成し、それをファイルに書き込む:"
    );
}

#[test]
fn links_emphasis_and_code_keep_their_words() {
    let text = "## Backups\n\n\
        Run the *nightly* job with **`restic backup`**, see [the runbook](https://ops.example/runbook) \
        and [[ops/restore|Restoring]] or [[ops/database-backup]].\n\n\
        ![Backup flow](flow.png) <span>html</span>\n\n\
        | tool | when |\n|---|---|\n| restic | nightly |\n\n\
        ```sh\nrestic backup {{path/to/dir}}\n```\n";
    assert_eq!(
        embedding_text("Operations > Backups", text),
        "Operations > Backups\n\n\
         Run the nightly job with restic backup, see the runbook and Restoring or ops/database-backup.\n\
         Backup flow html\n\
         tool, when\n\
         restic, nightly"
    );
}

#[test]
fn code_is_kept_as_its_words_when_the_chunk_has_nothing_else() {
    let text = "```sh\nrestic   backup {{path/to/dir}}\n    --tag {{[-n|--dry-run]}}\n```";
    assert_eq!(
        embedding_text("Backups", text),
        "Backups\n\nrestic backup path/to/dir --tag -n|--dry-run"
    );
    assert_eq!(
        embedding_text("", "`tar xf {{path/to/source.tar}}`"),
        "tar xf path/to/source.tar"
    );
}

#[test]
fn only_the_opening_heading_is_left_out_and_a_heading_alone_is_its_path() {
    assert_eq!(embedding_text("Guide > Install", "## Install"), "Guide > Install");
    assert_eq!(embedding_text("", "Lead.\n\n- a\n  - a1\n- b"), "Lead.\na\na1\nb");
    // Without a heading path nothing is taken for the path's own heading.
    assert_eq!(embedding_text("", "# Title\n\nText."), "Title\nText.");
}

#[test]
fn brackets_standing_alone_are_kept() {
    assert_eq!(
        chunk_plain_text(false, "Use [wW] or [x] and [a]b and arr[0]."),
        "Use [wW] or [x] and ab and arr0."
    );
}

#[test]
fn a_document_is_its_title_once_its_terms_and_its_sections() {
    let chunks = [
        ("tar", TAR),
        ("tar > Notes", "## Notes\n\nSee [[gzip]]."),
        ("tar > Notes", "More *notes*."),
    ];
    assert_eq!(
        document_embedding_text("tar", "tar\narchive\nunix", chunks),
        "tar\narchive, unix\n\
         Archiving utility. Often combined with a compression method, such as gzip or bzip2. \
         More information:.\n\
         create an archive and write it to a file:\n\
         create a gzipped archive from a directory using relative paths:\n\
         Extract a (compressed) archive file into the current directory verbosely:\n\
         Notes\nSee gzip.\n\
         More notes."
    );
}

#[test]
fn a_document_text_is_cut_at_the_cap_on_a_character_boundary() {
    let long = "語".repeat(DOCUMENT_TEXT_BYTES);
    let text = document_embedding_text("T", "", [("", long.as_str())]);
    assert!(text.len() <= DOCUMENT_TEXT_BYTES && text.len() > DOCUMENT_TEXT_BYTES - 4);
    assert!(text.starts_with("T\n語語"));
}
