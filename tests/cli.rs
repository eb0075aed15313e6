//! End-to-end tests of the `folio` binary on slices of real corpora (tests/fixtures)
//! and on bad input in temporary folders.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use support::{copy_dir, fixture};

fn folio(args: &[&str]) -> Output {
    // Lexical only: the pinned results must not depend on whether the built-in model is installed.
    Command::new(env!("CARGO_BIN_EXE_folio"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("FOLIO_EMBED_PROVIDER", "none")
        .output()
        .expect("folio runs")
}

/// Copies a fixture folder into a temporary folder so indexing writes nothing into the repository.
fn copy_fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(name), dir.path());
    dir
}

/// `(path, line, code)` of every diagnostic `folio check --format json` reports.
fn check_json(root: &Path) -> (Vec<(String, u64, String)>, i32) {
    let out = folio(&[
        "check",
        "--root",
        root.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let items: Vec<serde_json::Value> =
        serde_json::from_slice(&out.stdout).expect("check prints JSON");
    let rows = items
        .iter()
        .map(|d| {
            (
                d["path"].as_str().unwrap().to_string(),
                d["line"].as_u64().unwrap(),
                d["code"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (rows, out.status.code().unwrap())
}

fn row(path: &str, line: u64, code: &str) -> (String, u64, String) {
    (path.to_string(), line, code.to_string())
}

/// Diagnostics verified by hand against the upstream files (see the comments).
#[test]
fn pinned_diagnostics_in_k8s_community() {
    let (rows, code) = check_json(&fixture("k8s-community"));
    assert_eq!(code, 1, "errors make `folio check` exit 1");
    for pinned in [
        // The definition on line 63 follows a paragraph line without a blank line, so it is a lazy
        // continuation of the paragraph (a definition cannot interrupt a paragraph, CommonMark 4.7).
        row(
            "sig-network/annual-report-2025.md",
            57,
            "undefined-reference",
        ),
        // sig-list.md has "Special Interest Groups" and "Working Groups" headings, no "master" lists.
        row("communication/best-practices.md", 17, "missing-heading"),
        row("communication/best-practices.md", 18, "missing-heading"),
        // moderators.md has a "Discuss" heading, none whose slug is "discusskubernetesio".
        row(
            "communication/discuss-guidelines.md",
            208,
            "missing-heading",
        ),
        // Only one "Moderators Pro Tempore" heading exists, so `-1` names nothing.
        row("communication/moderators.md", 32, "missing-heading"),
        // `[Developer's Guide]: …` is defined and never used.
        row("README.md", 62, "unused-definition"),
    ] {
        assert!(rows.contains(&pinned), "missing {pinned:?} in {rows:#?}");
    }
    // The first "Moderators Pro Tempore" link is fine.
    assert!(!rows.contains(&row("communication/moderators.md", 20, "missing-heading")));
}

#[test]
fn pinned_diagnostics_in_rust_book() {
    let (rows, _) = check_json(&fixture("rust-book"));
    let not_missing_file: Vec<_> = rows
        .iter()
        .filter(|r| r.2 != "missing-file")
        .cloned()
        .collect();
    assert_eq!(
        not_missing_file,
        vec![
            // ch17-03 has no heading "Working with Any Number of Futures" (it was renamed upstream).
            row("ch17-05-traits-for-async.md", 540, "unused-definition"),
            row("ch17-05-traits-for-async.md", 541, "unused-definition"),
            row("ch17-05-traits-for-async.md", 541, "missing-heading"),
            row("ch17-06-futures-tasks-threads.md", 103, "unused-definition"),
            row("ch17-06-futures-tasks-threads.md", 104, "unused-definition"),
            // ch17-04 has no "Composing Streams" heading.
            row("ch17-06-futures-tasks-threads.md", 104, "missing-heading"),
        ]
    );
    // `ch04-01-what-is-ownership.html#the-stack-and-the-heap` names a heading inside a block quote
    // (`> ### The Stack and the Heap`) of the `.md` mdBook renders to that page: no diagnostic.
    assert!(
        !rows
            .iter()
            .any(|r| r.0 == "ch03-02-data-types.md" && r.1 == 383)
    );
    // `#wheres-the---operator`: "Where’s the `->` Operator?" (curly apostrophe) slugs to exactly that.
    assert!(
        !rows
            .iter()
            .any(|r| r.0 == "ch15-05-interior-mutability.md" && r.1 == 361)
    );
}

#[test]
fn pinned_diagnostics_in_foam_docs() {
    let (rows, _) = check_json(&fixture("foam-docs"));
    // No note is named cli-grep (the command's page is grep.md) and search.md has no definition for it.
    assert!(
        rows.contains(&row("user/tools/cli/search.md", 11, "missing-wiki-target")),
        "{rows:#?}"
    );
    // `[[daily|CLI daily command]]` uses Foam's `[daily]: ../tools/cli/daily.md` definition.
    assert!(
        !rows.iter().any(|r| r.0 == "user/features/daily-notes.md"),
        "{rows:#?}"
    );
}

#[test]
fn check_text_and_github_formats() {
    let root = fixture("rust-book");
    let out = folio(&["check", "--root", root.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines().any(|l| l
            == "ch17-06-futures-tasks-threads.md:104:33: missing-heading: no heading or anchor `#composing-streams` in `ch17-04-streams.md`"),
        "{text}"
    );
    let out = folio(&[
        "check",
        "--root",
        root.to_str().unwrap(),
        "--format",
        "github",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines().any(|l| l
            == "::warning file=ch17-05-traits-for-async.md,line=540,col=2,title=unused-definition::link reference definition `[first-async]` is not used"),
        "{text}"
    );
    // `,` and `:` end a workflow command's property, `%` starts an escape: a file name
    // with them is escaped.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a,b:c%.md"), "[x](nope.md)\n").unwrap();
    let out = folio(&[
        "check",
        "--root",
        dir.path().to_str().unwrap(),
        "--format",
        "github",
    ]);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "::error file=a%2Cb%3Ac%25.md,line=1,col=5,title=missing-file::file `nope.md` does not exist (resolved to `nope.md`)\n"
    );
}

/// `<!-- folio-ignore … -->` comments silence diagnostics in `folio check`, in every
/// format, as in the editor.
#[test]
fn check_obeys_the_documents_own_silencing_comments() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.md"),
        "# A\n\n[x](x.md) <!-- folio-ignore missing-file -->\n[y](y.md)\n\n<!-- folio-ignore-next-line -->\n[z](#nope)\n[w](#gone)\n",
    )
    .unwrap();
    let root = dir.path().to_str().unwrap();
    let out = folio(&["check", "--root", root]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let reported: Vec<&str> = text.lines().filter(|l| l.starts_with("a.md:")).collect();
    assert_eq!(
        reported,
        [
            "a.md:4:5: missing-file: file `y.md` does not exist (resolved to `y.md`)",
            "a.md:8:6: missing-heading: no heading or anchor `#gone` in this document"
        ],
        "{text}"
    );
    let out = folio(&["check", "--root", root, "--format", "github"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.lines().filter(|l| l.starts_with("::error")).count(),
        2,
        "{text}"
    );
}

#[test]
fn index_search_outline_and_status_on_a_corpus_slice() {
    let dir = copy_fixture("rust-book");
    let root = dir.path().to_str().unwrap();
    let out = folio(&["index", "--root", root, "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (
            summary["files"].as_u64(),
            summary["indexed"].as_u64(),
            summary["unchanged"].as_u64()
        ),
        (Some(9), Some(9), Some(0))
    );
    let again: serde_json::Value =
        serde_json::from_slice(&folio(&["index", "--root", root, "--json"]).stdout).unwrap();
    assert_eq!(
        (again["indexed"].as_u64(), again["unchanged"].as_u64()),
        (Some(0), Some(9))
    );

    // By default a file takes one place: the chapter's other matching chunks are listed
    // under its hit.
    let out = folio(&[
        "search",
        "interior mutability RefCell",
        "--root",
        root,
        "--limit",
        "3",
        "--json",
    ]);
    let grouped: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let paths: Vec<&str> = grouped["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths[0], "ch15-05-interior-mutability.md", "{grouped:#}");
    let distinct: std::collections::BTreeSet<&str> = paths.iter().copied().collect();
    assert_eq!(distinct.len(), paths.len(), "{grouped:#}");
    assert_eq!(
        grouped["results"][0]["sections"].as_array().map(Vec::len),
        Some(3)
    );
    // `--per-file 0`: every chunk in its own place.
    let out = folio(&[
        "search",
        "interior mutability RefCell",
        "--root",
        root,
        "--limit",
        "3",
        "--per-file",
        "0",
        "--json",
    ]);
    let results: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hits = results["results"].as_array().unwrap();
    assert_eq!(hits.len(), 3);
    assert!(
        hits.iter()
            .all(|h| h["path"] == "ch15-05-interior-mutability.md"),
        "{results:#}"
    );
    let first = &hits[0];
    for key in [
        "pointer",
        "heading_path",
        "start_line",
        "end_line",
        "score",
        "snippet",
        "indexedSourceHash",
    ] {
        assert!(first.get(key).is_some(), "hit lacks {key}: {first:#}");
    }
    let path_filtered: serde_json::Value = serde_json::from_slice(
        &folio(&[
            "search",
            "RefCell",
            "--root",
            root,
            "--path",
            "!ch15-*",
            "--json",
            "--no-reindex",
        ])
        .stdout,
    )
    .unwrap();
    assert!(
        path_filtered["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["path"] != "ch15-05-interior-mutability.md")
    );
    assert_eq!(
        path_filtered["filter_applied"],
        serde_json::json!(["path_globs"])
    );

    // The pointer of a hit is the pointer `folio outline` shows for that element.
    let outline: serde_json::Value = serde_json::from_slice(
        &folio(&[
            "outline",
            dir.path()
                .join("ch15-05-interior-mutability.md")
                .to_str()
                .unwrap(),
            "--json",
        ])
        .stdout,
    )
    .unwrap();
    let pointers: Vec<&str> = outline
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["pointer"].as_str().unwrap())
        .collect();
    assert!(pointers.contains(&first["pointer"].as_str().unwrap()));
    assert_eq!(outline[1]["kind"], "heading");
    assert_eq!(
        outline[1]["preview"],
        "## `RefCell<T>` and the Interior Mutability Pattern"
    );

    let status: serde_json::Value =
        serde_json::from_slice(&folio(&["status", "--root", root, "--json"]).stdout).unwrap();
    assert_eq!(status["index"]["documents"], 9);
    assert_eq!(
        status["index"]["schema_version"],
        folio_core::store::SCHEMA_VERSION
    );
    // The test suite installs the Japanese dictionary (scripts/test).
    assert_eq!(
        (
            &status["index"]["lexical_analyser"],
            &status["index"]["japanese_fallback"]
        ),
        (
            &serde_json::json!(folio_core::store::lexical::WORDS_ID),
            &serde_json::Value::Null
        )
    );
    // `folio status` text with the Japanese dictionary looked for in `dir`.
    let status_with_dictionary_in = |dir: &Path| -> String {
        let out = Command::new(env!("CARGO_BIN_EXE_folio"))
            .args(["status", "--root", root])
            .env("NO_COLOR", "1")
            .env("FOLIO_EMBED_PROVIDER", "none")
            .env("FOLIO_JA_DICT_DIR", dir)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // Without it, status says that Japanese text falls back to bigrams, and why.
    let empty = tempfile::tempdir().unwrap();
    let text = status_with_dictionary_in(empty.path());
    let line = format!(
        "lexical analyser: bigrams-2 (Japanese text is matched on character bigrams: the Japanese dictionary is not installed ({}); run scripts/fetch-ja-dict)",
        empty.path().join("ipadic.dic.gz").display()
    );
    assert!(text.lines().any(|l| l == line), "{text}");
    // A dictionary of the right size and ending with damage inside: status reads it and
    // says so (a search would fall back to bigrams).
    let installed = folio_core::store::japanese::default_dictionary_dir()
        .unwrap()
        .join("ipadic.dic.gz");
    let mut bytes = std::fs::read(&installed).expect("the Japanese dictionary is installed");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    let damaged = tempfile::tempdir().unwrap();
    std::fs::write(damaged.path().join("ipadic.dic.gz"), &bytes).unwrap();
    let text = status_with_dictionary_in(damaged.path());
    let prefix = format!(
        "lexical analyser: bigrams-2 (Japanese text is matched on character bigrams: cannot read the Japanese dictionary {}: ",
        damaged.path().join("ipadic.dic.gz").display()
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with(&prefix) && l.ends_with("(run scripts/fetch-ja-dict))")),
        "{text}"
    );
    // A `[search]` number out of range: index and check do not read it, status says so.
    std::fs::write(
        Path::new(root).join("folio.toml"),
        "[search]\ncorpus_centering = 2\n",
    )
    .unwrap();
    let text = String::from_utf8_lossy(&folio(&["status", "--root", root]).stdout).to_string();
    assert!(
        text.lines().any(|l| l
            == format!(
                "search settings: error: invalid {}: [search] corpus_centering must be between 0 and 1, got 2",
                Path::new(root).join("folio.toml").display()
            )),
        "{text}"
    );
}

#[test]
fn a_missing_root_is_a_clear_error() {
    let out = folio(&["check", "--root", "/definitely/not/here"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "folio: error: root `/definitely/not/here` does not exist or is not a folder\n"
    );
    let out = folio(&["outline", "/definitely/not/here.md"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "folio: error: cannot outline `/definitely/not/here.md`: unreadable: No such file or directory (os error 2)\n"
    );
    let pdf = fixture("formats/kb/manual.pdf");
    let out = folio(&["outline", pdf.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "folio: error: cannot outline `{}`: it is a pdf document, not Markdown (`folio search` finds its text, kb_read reads it)\n",
            pdf.display()
        )
    );
}

#[test]
fn bad_files_are_reported_and_the_rest_is_indexed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("good.md"), "# Good\n\nSearchable text.\n").unwrap();
    std::fs::write(root.join("latin1.md"), b"caf\xe9\n").unwrap();
    std::fs::write(root.join("image.md"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    std::fs::write(root.join("huge.md"), vec![b'a'; 20 * 1024 * 1024]).unwrap();
    std::fs::write(root.join("secret.md"), "# Secret\n").unwrap();
    let out = run_unprivileged_with_unreadable(
        root,
        "secret.md",
        &["index", "--root", root.to_str().unwrap()],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines,
        vec![
            "folio: skipped huge.md: too large (20971520 bytes; the cap is 16777216 bytes)",
            "folio: skipped image.md: binary content (NUL bytes)",
            "folio: skipped secret.md: unreadable: Permission denied (os error 13)",
            "folio: note: latin1.md is not valid UTF-8 (first invalid byte at offset 3); read with U+FFFD replacements, and folio will not write to it",
        ]
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with(
            "indexed 5 files (2 changed, 0 unchanged, 3 skipped, 0 removed, 2 chunks)"
        ),
        "{stdout}"
    );
    let out = folio(&[
        "search",
        "searchable",
        "--root",
        root.to_str().unwrap(),
        "--json",
        "--no-reindex",
    ]);
    let results: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(results["results"][0]["path"], "good.md");
}

/// Runs folio with `file` unreadable. As root, permission bits do not stop reads, so the
/// command runs as `nobody` through `setpriv` (util-linux) with the folder opened up for it.
fn run_unprivileged_with_unreadable(root: &Path, file: &str, args: &[&str]) -> Output {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(root.join(file), std::fs::Permissions::from_mode(0o000)).unwrap();
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout == b"0\n")
        .unwrap_or(false);
    if !is_root {
        return folio(args);
    }
    let mut dir = Some(root);
    while let Some(d) = dir {
        let mode = std::fs::metadata(d).unwrap().permissions().mode();
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(mode | 0o755)).unwrap();
        dir = d
            .parent()
            .filter(|p| p.starts_with(std::env::temp_dir()) && *p != std::env::temp_dir());
    }
    std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o777)).unwrap();
    for entry in std::fs::read_dir(root).unwrap() {
        let path = entry.unwrap().path();
        if !path.ends_with(file) {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
    }
    Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            env!("CARGO_BIN_EXE_folio"),
        ])
        .args(args)
        .env("HOME", root)
        .env("FOLIO_EMBED_PROVIDER", "none")
        .output()
        .expect("setpriv runs")
}

#[test]
fn a_file_that_is_not_an_index_is_never_used_as_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("note.md"), "# Note\n").unwrap();
    let db = dir.path().join("note.md");
    let out = folio(&[
        "index",
        "--root",
        dir.path().to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "folio: error: indexing `{}`: index database: `{}` is not a folio index (another file or database is there); refusing to overwrite it\n",
            dir.path().display(),
            db.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&db).unwrap(), "# Note\n");
    assert!(!dir.path().join(".gitignore").exists());
}

#[test]
fn search_reports_skipped_files_and_survives_a_closed_pipe() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("good.md"), "# Good\n\nalpha beta\n").unwrap();
    std::fs::write(dir.path().join("bad.md"), b"\xff\xfe").unwrap();
    let out = folio(&["search", "alpha", "--root", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    // `bad.md` is not UTF-8: indexed read-only with replacement characters, not skipped.
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    // The score as a person reads it: the hit's rank in the lexical leg (no vectors here).
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().next(),
        Some("good.md:1-3 — Good  (lexical rank 1)")
    );
    // The reader goes away before folio has written everything: no panic, no error.
    let mut child = Command::new(env!("CARGO_BIN_EXE_folio"))
        .args(["outline", dir.path().join("good.md").to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// `folio check` with its standard output, its standard error or both closed before it
/// writes (`folio check 2>&1 >/dev/null | true` closes both): no panic, no abort, and the
/// exit code is still the findings' (1: errors found), so a `pipefail` CI step fails.
#[test]
fn check_keeps_its_exit_code_when_its_pipes_are_closed() {
    let dir = tempfile::tempdir().unwrap();
    // Enough errors that the output outgrows any pipe buffer were the reader alive.
    let note: String = (0..3000).map(|i| format!("[x](gone-{i}.md)\n")).collect();
    std::fs::write(dir.path().join("a.md"), note).unwrap();
    let closed = || {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        std::process::Stdio::from(writer)
    };
    let root = dir.path().to_str().unwrap();
    for (which, stdout_closed, stderr_closed) in [
        ("stdout", true, false),
        ("stderr", false, true),
        ("both", true, true),
    ] {
        let mut command = Command::new(env!("CARGO_BIN_EXE_folio"));
        command
            .args(["check", "--root", root])
            .env("FOLIO_EMBED_PROVIDER", "none")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if stdout_closed {
            command.stdout(closed());
        }
        if stderr_closed {
            command.stderr(closed());
        }
        let status = command.status().unwrap();
        assert_eq!(status.code(), Some(1), "{which} closed: {status:?}");
    }
}

/// `folio status` says when the built-in model cannot be loaded (missing or damaged
/// weights file), without loading it; with the installed model it says nothing more.
#[test]
fn status_reports_a_missing_or_damaged_built_in_model() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("note.md"), "# Note\n").unwrap();
    let models = tempfile::tempdir().unwrap();
    let run_status = |model_dir: &Path, extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_folio"))
            .args(["status", "--root", dir.path().to_str().unwrap()])
            .args(extra)
            .env("FOLIO_EMBED_PROVIDER", "builtin")
            .env("FOLIO_MODEL_DIR", model_dir)
            .output()
            .unwrap()
    };
    let status = |model_dir: &Path| {
        let out = run_status(model_dir, &["--json"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        // A model that is not usable is `unavailable`, with why.
        match v["embedding"]["state"].as_str() {
            Some("unavailable") => v["embedding"]["reason"].clone(),
            _ => serde_json::Value::Null,
        }
    };
    let file = models.path().join("e5-small-q4.bin");
    assert_eq!(
        status(models.path()),
        serde_json::json!(format!(
            "embedding provider unavailable: built-in model file {} is missing; run `folio model install` to install multilingual-e5-small-q4",
            file.display()
        ))
    );
    std::fs::write(&file, b"not the weights").unwrap();
    let err = status(models.path());
    assert!(
        err.as_str()
            .unwrap()
            .contains("is not the multilingual-e5-small-q4 weights file"),
        "{err}"
    );
    // The installed model (scripts/fetch-model puts it in the default folder).
    let installed = folio_core::embed::builtin::default_model_dir().unwrap();
    assert_eq!(status(&installed), serde_json::Value::Null);
    // The text report says it in a line of its own.
    std::fs::remove_file(&file).unwrap();
    let text = String::from_utf8(run_status(models.path(), &[]).stdout).unwrap();
    assert!(
        text.contains(
            "built-in model: not usable: embedding provider unavailable: built-in model file"
        ),
        "{text}"
    );
}

/// `folio index` with the built-in model also embeds each document with the second
/// built-in model (the ensemble leg) and says so; without that model, or with a damaged
/// copy of it, it says that hybrid search runs without the leg, why, and how to mend it.
/// `folio status` says the same without building either model.
#[test]
fn index_and_status_report_the_ensemble_model_or_why_it_is_missing() {
    let model = folio_core::embed::builtin::default_model_dir().unwrap();
    let use_model = folio_core::embed::use_m3::default_use_model_dir().unwrap();
    let missing = tempfile::tempdir().unwrap();
    let damaged = tempfile::tempdir().unwrap();
    let weights = folio_core::embed::use_m3::USE_WEIGHTS_FILE;
    let head = std::fs::read(use_model.join(weights)).unwrap()[..1000].to_vec();
    std::fs::write(damaged.path().join(weights), head).unwrap();
    let run_with = |args: &[&str], use_dir: &Path| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("note.md"), "# Note\n\nSome words.\n").unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_folio"))
            .args(args)
            .args(["--root", dir.path().to_str().unwrap()])
            .env("FOLIO_EMBED_PROVIDER", "builtin")
            .env("FOLIO_MODEL_DIR", &model)
            .env("FOLIO_USE_MODEL_DIR", use_dir)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let run = |command: &str, use_dir: &Path| run_with(&[command], use_dir);
    let index_json = |use_dir: &Path| -> serde_json::Value {
        serde_json::from_str(&run_with(&["index", "--json"], use_dir).0).unwrap()
    };
    let ensemble_line = |stdout: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with("ensemble leg: "))
            .map(str::to_owned)
    };
    let (stdout, stderr) = run("index", &use_model);
    assert_eq!(
        stdout.lines().last(),
        Some("embedded 1 document with the ensemble model (hybrid search's second model)")
    );
    assert_eq!(stderr, "");
    assert_eq!(
        ensemble_line(&run("status", &use_model).0).as_deref(),
        Some("ensemble leg: on (second model builtin:use-multilingual-v3)")
    );
    let embed = &index_json(&use_model)["embed"];
    assert_eq!(embed["ensemble_model"], "builtin:use-multilingual-v3");
    assert_eq!(embed["ensemble_missing"], serde_json::Value::Null);
    assert_eq!(embed["ensemble_documents_embedded"], 1);

    let not_installed = format!(
        "the second built-in model (USE-Multilingual v3) is not installed in {}; run `folio model install` to install it",
        missing.path().display()
    );
    let (stdout, stderr) = run("index", missing.path());
    assert!(!stdout.contains("ensemble"), "{stdout}");
    assert_eq!(
        stderr,
        format!("folio: note: hybrid search runs without its ensemble leg: {not_installed}\n")
    );
    assert_eq!(
        ensemble_line(&run("status", missing.path()).0),
        Some(format!("ensemble leg: off: {not_installed}"))
    );
    let embed = &index_json(missing.path())["embed"];
    assert_eq!(embed["ensemble_model"], serde_json::Value::Null);
    assert_eq!(embed["ensemble_missing"], not_installed.as_str());

    let unusable = format!(
        "{} is not a usable use-multilingual-v3 file (truncated at byte 1000 (failed to fill whole buffer)); run `folio model install`",
        damaged.path().join(weights).display()
    );
    let (stdout, stderr) = run("index", damaged.path());
    assert!(!stdout.contains("ensemble"), "{stdout}");
    assert_eq!(
        stderr,
        format!("folio: note: hybrid search runs without its ensemble leg: {unusable}\n")
    );
    assert_eq!(
        ensemble_line(&run("status", damaged.path()).0),
        Some(format!("ensemble leg: off: {unusable}"))
    );
}

/// The note under a hybrid search that ran lexically gives the right reason: no words
/// to embed, or no vectors.
#[test]
fn search_says_why_hybrid_ran_lexically() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("note.md"), "# Note\n\nSome words.\n").unwrap();
    let root = dir.path().to_str().unwrap();
    let out = folio(&["search", "--root", root, "!!!"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "no results for `!!!`\nnote: searched in lexical mode (the query has no words to embed)\n"
    );
    let out = folio(&["search", "--root", root, "nothing-matches-this"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "no results for `nothing-matches-this`\nnote: searched in lexical mode (hybrid needs vectors; see `folio status`)\n"
    );
    // A query may start with an excluded word (not read as an option).
    let out = folio(&["search", "--root", root, "-absent words"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("note.md"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Semantic without a provider says which setting turned it off.
    let out = folio(&["search", "--root", root, "--mode", "semantic", "words"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "folio: error: not configured: semantic search needs embeddings (provider `none`, set by FOLIO_EMBED_PROVIDER); use --mode lexical\n"
    );
}

/// What a newcomer sees on a first run: `folio index` without the built-in model says
/// that embeddings were skipped and why; counts take the noun in its number; `folio
/// outline` warns about a file that is not Markdown; `folio mcp` says when its input ends
/// before an initialize request.
#[test]
fn first_run_messages_say_what_happened() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("note.md"), "# Note\n").unwrap();
    let root = dir.path().to_str().unwrap();
    let run = |args: &[&str], stdin: &[u8]| {
        use std::io::Write;
        let mut child = Command::new(env!("CARGO_BIN_EXE_folio"))
            .args(args)
            .env_remove("FOLIO_EMBED_PROVIDER")
            .env_remove("FOLIO_MODEL_DIR")
            .env_remove("XDG_DATA_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .env("HOME", home.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (code, stdout, stderr) = run(&["index", "--root", root], b"");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.starts_with(
            "indexed 1 file (1 changed, 0 unchanged, 0 skipped, 0 removed, 1 chunk) in "
        ),
        "{stdout}"
    );
    let model = home
        .path()
        .join(".local/share/folio/models/multilingual-e5-small-q4/e5-small-q4.bin");
    assert_eq!(
        stderr,
        format!(
            "folio: note: embeddings skipped (embedding provider unavailable: built-in model file {} \
             is missing; run `folio model install` to install multilingual-e5-small-q4); the index \
             is lexical only, and search is lexical until they are computed\n",
            model.display()
        )
    );
    let (code, _, stderr) = run(&["check", "--root", root], b"");
    assert_eq!(
        (code, stderr.as_str()),
        (
            Some(0),
            "folio: checked 1 document: 0 errors, 0 warnings in 0 files\n"
        )
    );
    let toml = dir.path().join("folio.toml");
    std::fs::write(&toml, "# a comment\n[index]\n").unwrap();
    let (code, _, stderr) = run(&["outline", toml.to_str().unwrap()], b"");
    assert_eq!(
        (code, stderr),
        (
            Some(0),
            format!(
                "folio: warning: `{}` is not a Markdown file (.md, .markdown); outlining it as Markdown\n",
                toml.display()
            )
        )
    );
    let (code, stdout, stderr) = run(&["mcp", "--root", root], b"garbage\n");
    assert_eq!(code, Some(2));
    assert_eq!(
        stdout,
        "{\"error\":{\"code\":-32700,\"message\":\"Parse error: expected value at line 1 column 1\"},\"id\":null,\"jsonrpc\":\"2.0\"}\n"
    );
    assert!(
        stderr.ends_with(
            "folio: error: the input ended before an MCP initialize request arrived (an MCP client \
             sends one first; docs/mcp.md shows how to start folio mcp from a client)\n"
        ),
        "{stderr}"
    );
}

/// `folio check` names a note that is not valid UTF-8: it is checked with U+FFFD
/// replacements (its broken link reported), read-only, and not counted as skipped.
#[test]
fn check_names_a_note_that_is_not_utf8() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("good.md"), "# Good\n").unwrap();
    std::fs::write(dir.path().join("cp1252.md"), b"# Caf\xe9\n\n[x](gone.md)\n").unwrap();
    let out = folio(&["check", "--root", dir.path().to_str().unwrap()]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "folio: note: cp1252.md is not valid UTF-8 (first invalid byte at offset 5); read with U+FFFD replacements, and folio will not write to it\n\
         folio: checked 2 documents: 1 error, 0 warnings in 1 file\n"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "cp1252.md:3:5: missing-file: file `gone.md` does not exist (resolved to `gone.md`)\n"
    );
    assert_eq!(out.status.code(), Some(1));
}

/// With `--mmr` every hit reports the MMR value it was picked with (the first pick is
/// `λ × 1`, the most relevant candidate with nothing picked before it; λ is 0.7 by
/// default and `--mmr-lambda` sets it); without MMR no hit carries one.
#[test]
fn search_reports_the_mmr_score_of_each_pick() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.md"), "# Alpha\n\nalpha alpha beta\n").unwrap();
    std::fs::write(dir.path().join("b.md"), "# Other\n\nalpha gamma\n").unwrap();
    let root = dir.path().to_str().unwrap();
    let hits = |extra: &[&str]| -> Vec<serde_json::Value> {
        let mut args = vec!["search", "alpha", "--root", root, "--json"];
        args.extend_from_slice(extra);
        let out = folio(&args);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["results"].as_array().unwrap().clone()
    };
    let plain = hits(&[]);
    assert_eq!(plain.len(), 2);
    assert!(
        plain.iter().all(|h| h.get("mmr_score").is_none()),
        "{plain:?}"
    );
    let mmr = hits(&["--mmr"]);
    assert_eq!(mmr.len(), 2);
    assert_eq!(mmr[0]["mmr_score"].as_f64(), Some(0.7));
    assert!(mmr[1]["mmr_score"].as_f64().unwrap() < 0.7, "{mmr:?}");
    let lambda = hits(&["--mmr", "--mmr-lambda", "0.5"]);
    assert_eq!(lambda[0]["mmr_score"].as_f64(), Some(0.5));
}

/// The score a person reads: in hybrid mode a hit only the vector leg found says "no
/// lexical match"; in semantic mode, where no lexical leg ran, it gives the similarity
/// alone.
#[test]
fn semantic_hits_do_not_claim_a_lexical_miss() {
    let model = folio_core::embed::builtin::default_model_dir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("note.md"), "# Note\n\nSome words.\n").unwrap();
    let root = dir.path().to_str().unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_folio"))
            .args(args)
            .env("FOLIO_EMBED_PROVIDER", "builtin")
            .env("FOLIO_MODEL_DIR", &model)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    run(&["index", "--root", root]);
    let first_line = |mode: &str| {
        run(&["search", "zebra", "--root", root, "--mode", mode])
            .lines()
            .next()
            .unwrap()
            .to_owned()
    };
    let hybrid = first_line("hybrid");
    assert!(
        hybrid.starts_with("note.md:1-3 — Note  (similarity 0.")
            && hybrid.ends_with(", no lexical match)"),
        "{hybrid}"
    );
    let semantic = first_line("semantic");
    assert!(
        semantic.starts_with("note.md:1-3 — Note  (similarity 0.") && !semantic.contains("lexical"),
        "{semantic}"
    );
}

/// `folio search` indexes on the way and counts the files it could not index in one
/// line; `folio index` names them.
#[test]
fn search_counts_skipped_files_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("good.md"), "# Good\n\nSearchable text.\n").unwrap();
    std::fs::write(
        dir.path().join("image.md"),
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
    )
    .unwrap();
    let root = dir.path().to_str().unwrap();
    for _ in 0..2 {
        let out = folio(&["search", "searchable", "--root", root]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "folio: note: 1 file not indexed; `folio index` lists them with the reason\n"
        );
    }
    let out = folio(&["index", "--root", root]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "folio: skipped image.md: binary content (NUL bytes)\n"
    );
}

/// `folio outline` reads a note that is not valid UTF-8 as indexing does, with U+FFFD
/// for each invalid sequence, and says so.
#[test]
fn outline_reads_a_note_that_is_not_utf8_as_indexing_does() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("latin1.md");
    std::fs::write(&file, b"# Caf\xe9\n\nText.\n").unwrap();
    let out = folio(&["outline", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "folio: note: {} is not valid UTF-8 (first invalid byte at offset 5); read with U+FFFD replacements\n",
            file.display()
        )
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let heading = stdout.lines().nth(1).unwrap();
    assert!(
        heading.starts_with("    1-1     heading          1~")
            && heading.ends_with("  # Caf\u{FFFD}"),
        "{stdout}"
    );
}

/// An index of another folder named with `--db` is refused by search too, with
/// `--no-reindex` (nothing else would check it): its text would come back under this
/// root's paths.
#[test]
fn search_refuses_an_index_of_another_folder() {
    let dir = tempfile::tempdir().unwrap();
    let (p, q) = (dir.path().join("p"), dir.path().join("q"));
    std::fs::create_dir_all(&p).unwrap();
    std::fs::create_dir_all(&q).unwrap();
    std::fs::write(q.join("w.md"), "# Walrus\n").unwrap();
    let (p_str, q_str) = (p.to_str().unwrap(), q.to_str().unwrap());
    assert_eq!(folio(&["index", "--root", q_str]).status.code(), Some(0));
    let db = q.join(".folio/index.db");
    let message = format!(
        "folio: error: `{}` is the index of `{q_str}`, not of `{p_str}`; use another index file (`--db`), or reindex with force (`folio index --force`, kb_reindex `force: true`) to take it over\n",
        db.display()
    );
    let status = folio(&["status", "--root", p_str, "--db", db.to_str().unwrap()]);
    let status = String::from_utf8(status.stdout).unwrap();
    assert!(
        status.contains(&format!(
            "\nindex: error: {}",
            message.strip_prefix("folio: error: ").unwrap()
        )),
        "{status}"
    );
    let out = folio(&[
        "search",
        "walrus",
        "--root",
        p_str,
        "--db",
        db.to_str().unwrap(),
        "--no-reindex",
    ]);
    assert_eq!(out.status.code(), Some(2));
    // The host's NOT_CONFIGURED, as kb_search and folio/search answer it.
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        message.replacen("folio: error: ", "folio: error: not configured: ", 1)
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn notes_whose_frontmatter_does_not_parse_are_named_and_fail_the_index_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("good.md"), "---\ntags: [a]\n---\n# Good\n").unwrap();
    std::fs::write(root.join("bad.md"), "---\ntags: [a\n---\n# Bad\n").unwrap();
    let root_arg = root.to_str().unwrap();
    let out = folio(&["index", "--root", root_arg]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("folio: note: bad.md: frontmatter is not valid YAML: ")
            && stderr.contains("its title, tags, aliases and date are not read"),
        "{stderr}"
    );
    assert!(!stderr.contains("good.md"), "{stderr}");

    // With the setting, the same notes (unchanged, not read again) fail the run; the index
    // is written either way.
    std::fs::write(
        root.join("folio.toml"),
        "[index]\nfail_on_frontmatter_error = true\n",
    )
    .unwrap();
    let out = folio(&["index", "--root", root_arg, "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "folio: error: the frontmatter of 1 note did not parse ([index].fail_on_frontmatter_error), the first `bad.md`: "
        ),
        "{stderr}"
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["frontmatter_unparsed"][0][0], "bad.md");
    assert_eq!(summary["unchanged"], 2);
}

#[test]
fn orphans_lists_the_notes_nothing_links_to() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("notes")).unwrap();
    std::fs::write(
        root.join("index.md"),
        "# Home\n\n[[Linked]] and [b](notes/b.md).\n",
    )
    .unwrap();
    std::fs::write(root.join("Linked.md"), "# Linked\n").unwrap();
    std::fs::write(
        root.join("notes/b.md"),
        "# B\n\nBack [home](../index.md).\n",
    )
    .unwrap();
    std::fs::write(root.join("notes/lonely.md"), "# Lonely\n").unwrap();
    let r = root.to_str().unwrap();
    let out = folio(&["orphans", "--root", r]);
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).as_ref()
        ),
        (Some(0), "notes/lonely.md\n")
    );
    let out = folio(&["orphans", "--root", r, "--json", "notes"]);
    let found: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(found, serde_json::json!(["notes/lonely.md"]));
    let out = folio(&["orphans", "--root", r, "nowhere"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("`nowhere` is not a folder of the knowledge base"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn doctor_names_what_the_index_leaves_out_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let bad = fixture("formats/bad");
    std::fs::copy(bad.join("locked.pdf"), root.join("locked.pdf")).unwrap();
    // A page tree that lists itself: indexed, no page found, so no text.
    std::fs::copy(bad.join("page-loop.pdf"), root.join("page-loop.pdf")).unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.py"), "x = 1\n").unwrap();
    std::fs::write(root.join("src/b.py"), "y = 2\n").unwrap();
    std::fs::write(root.join("notes.txt"), "Plain words.\n").unwrap();
    std::fs::write(root.join("bad.md"), "---\ntags: [a\n---\n# Bad\n").unwrap();
    std::fs::write(root.join("ok.md"), "# Ok\n").unwrap();
    let out = folio(&["doctor", "--root", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "not indexed (1):\n  locked.pdf: text not extracted: encrypted: folio reads no password-protected document\n\
         not read: their parser is off (add the extension to [parsers].enabled in folio.toml):\n  .py (2 files): src/a.py, src/b.py\n\
         indexed, but no text found (a scanned PDF has only pictures of its pages; folio does no OCR):\n  page-loop.pdf\n\
         frontmatter that does not parse (title, tags, aliases and date not read):\n  bad.md: frontmatter is not valid YAML: \
         did not find expected ',' or ']' at line 2 column 1, while parsing a flow sequence at line 1 column 7 \
         (lines counted from the one after the opening `---`)\n"
    );

    std::fs::remove_file(root.join("locked.pdf")).unwrap();
    std::fs::remove_file(root.join("page-loop.pdf")).unwrap();
    std::fs::write(root.join("bad.md"), "---\ntags: [a]\n---\n# Bad\n").unwrap();
    // One byte over what a resource read returns: indexed, and read in pages.
    let mut big = "# Big\n\n".to_string();
    big.push_str(&"a".repeat(4 * 1024 * 1024 + 1 - big.len()));
    std::fs::write(root.join("big.md"), big).unwrap();
    // Files whose parser is off and documents read only in pages are listed; neither is
    // left out of search, so the exit code stays 0.
    let out = folio(&["doctor", "--root", root.to_str().unwrap()]);
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).as_ref()
        ),
        (
            Some(0),
            "not read: their parser is off (add the extension to [parsers].enabled in folio.toml):\n  .py (2 files): src/a.py, src/b.py\n\
             indexed and found by search, but not returned whole by a read:\n  \
             big.md: larger-than-a-read-returns: over 4 MiB, kb://doc/ refuses it; kb_read pages through it\n"
        )
    );
    std::fs::remove_file(root.join("big.md")).unwrap();
    std::fs::write(
        root.join("folio.toml"),
        "[parsers]\nenabled = [\"txt\", \"py\"]\n",
    )
    .unwrap();
    let out = folio(&["doctor", "--root", root.to_str().unwrap()]);
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).as_ref()
        ),
        (Some(0), "nothing left out: every document is indexed\n")
    );
}

#[test]
fn a_document_whose_parser_aborts_ends_its_worker_not_folio() {
    // Two cells, A1 and XFD1048576: calamine sizes a dense grid by the addresses and asks
    // for 512 GiB, which aborts the process that asks. The worker is that process.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::copy(fixture("formats/bad/sparse.xlsx"), root.join("sparse.xlsx")).unwrap();
    std::fs::write(root.join("a.md"), "# A\n\nA note.\n").unwrap();
    let out = folio(&["index", "--root", root.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(
            "folio: skipped sparse.xlsx: text not extracted: the spreadsheet parser failed on this file: \
             the parser ran out of its 2048 MiB of memory or overflowed its stack"
        ),
        "{stderr}"
    );
    let search = folio(&["search", "--root", root.to_str().unwrap(), "note"]);
    assert_eq!(search.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&search.stdout).contains("a.md"));
}

#[test]
fn search_names_the_page_and_the_definition_of_a_hit() {
    let dir = copy_fixture("formats/kb");
    let root = dir.path();
    std::fs::write(
        root.join("folio.toml"),
        "[parsers]\nenabled = [\"pdf\", \"rs\"]\n",
    )
    .unwrap();
    let first_line = |query: &str| {
        let out = folio(&["search", "--root", root.to_str().unwrap(), query]);
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(
        first_line("earthworms"),
        "src/lib.rs:24-27 (function_item count_earthworms)  (lexical rank 1)"
    );
    assert_eq!(
        first_line("zephyrometer"),
        "manual.pdf:1-2 (page 1)  (lexical rank 1)"
    );
}

/// A loopback HTTP server for `folio check --external`: `/ok` answers 200, `/moved`
/// redirects to `/ok`, anything else 404; one connection per request. It records the
/// requests (`METHOD /path`) and runs until the test process ends.
fn link_server() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = std::sync::Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(5)));
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && head.len() < 16 * 1024 {
                match stream.read(&mut byte) {
                    Ok(1) => head.push(byte[0]),
                    _ => break,
                }
            }
            let head = String::from_utf8_lossy(&head).to_string();
            let request: Vec<&str> = head.split_whitespace().take(2).collect();
            log.lock().unwrap().push(request.join(" "));
            let answer = match request.get(1).copied() {
                Some("/ok") => "200 OK\r\n".to_string(),
                Some("/moved") => "301 Moved Permanently\r\nLocation: /ok\r\n".to_string(),
                _ => "404 Not Found\r\n".to_string(),
            };
            let _ = stream.write_all(
                format!("HTTP/1.1 {answer}Content-Length: 0\r\nConnection: close\r\n\r\n")
                    .as_bytes(),
            );
        }
    });
    (base, seen)
}

/// `folio check --external`: the http(s) links' diagnostics in the text and JSON
/// outputs, the exit code, the summary on stderr, and the cache of successes, against a
/// loopback server (never the internet).
#[test]
fn check_external_reports_broken_links_and_caches_successes() {
    let (base, seen) = link_server();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("folio.toml"),
        "[links.external]\nper_host_per_second = 50\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("a.md"),
        format!(
            "# A\n\n[ok]({base}/ok) [moved]({base}/moved#part)\n[gone]({base}/gone)\n[local](missing.md)\n\n<!-- folio-ignore-next-line broken-external-link -->\n[known]({base}/known-gone)\n"
        ),
    )
    .unwrap();
    let root = dir.path().to_str().unwrap();
    let out = folio(&[
        "check",
        "--root",
        root,
        "--external",
        "--external-include-local",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a broken link is an error: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!(
            "a.md:4:8: broken-external-link: `{base}/gone` answers HTTP 404 Not Found\n\
             a.md:5:9: missing-file: file `missing.md` does not exist (resolved to `missing.md`)\n"
        )
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(
            "folio: external links: 4 checked (0 from cache), 2 broken, 0 rate-limited\n"
        ),
        "{stderr}"
    );
    let mut first: Vec<String> = seen.lock().unwrap().clone();
    first.sort();
    assert_eq!(
        first,
        [
            "GET /gone",
            "GET /known-gone",
            "HEAD /gone",
            "HEAD /known-gone",
            "HEAD /moved",
            "HEAD /ok",
            "HEAD /ok"
        ]
    );
    // Again, as JSON and without the links inside the workspace: the two successes come
    // from the cache, the failures are asked again.
    let out = folio(&[
        "check",
        "--root",
        root,
        "--external-only",
        "--external-include-local",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let items: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        items,
        serde_json::json!([{
            "path": "a.md", "line": 4, "column": 8, "code": "broken-external-link",
            "severity": "error", "message": format!("`{base}/gone` answers HTTP 404 Not Found"),
        }])
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(
            "folio: external links: 4 checked (2 from cache), 2 broken, 0 rate-limited\n"
        ),
        "{stderr}"
    );
    let second: Vec<String> = seen.lock().unwrap()[first.len()..].to_vec();
    assert!(
        second.iter().all(|r| r.ends_with("gone")),
        "cached successes are not asked again: {second:?}"
    );
    assert_eq!(second.len(), 4);
}

/// A workspace's folio.toml cannot turn on checking this machine's and its networks'
/// addresses: only the user's flag can.
#[test]
fn a_workspace_cannot_make_the_external_check_probe_local_addresses() {
    let (base, seen) = link_server();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("folio.toml"),
        "[links.external]\ninclude_local = true\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("a.md"), format!("[ok]({base}/ok)\n")).unwrap();
    let root = dir.path().to_str().unwrap();
    let out = folio(&["check", "--root", root, "--external"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("pass `folio check --external --external-include-local` yourself"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_file(dir.path().join("folio.toml")).unwrap();
    let out = folio(&["check", "--root", root, "--external"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(seen.lock().unwrap().len(), 0, "a local address was asked");
}
