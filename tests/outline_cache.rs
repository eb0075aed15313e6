//! `folio lsp` reopening a workspace from its outline cache (core
//! `workspace::outline_cache`): the first session parses and writes the cache, the next
//! takes every unchanged file's outline from it and answers exactly as the first did; a
//! file changed in between is parsed again.

use std::path::Path;

use serde_json::{Value, json};

mod support;
use support::lsp::Lsp;

/// A `folio lsp` on `root` with its outline cache under `cache`, its log in `log`, and
/// pulled diagnostics.
fn start(root: &Path, cache: &Path, log: &Path) -> Lsp {
    Lsp::start_logged_with(
        root,
        log,
        &[("XDG_CACHE_HOME", cache), ("XDG_RUNTIME_DIR", cache)],
        json!({"textDocument": {"diagnostic": {"dynamicRegistration": false}}}),
    )
}

/// The result of a request, which must not fail.
fn result(lsp: &mut Lsp, method: &str, params: Value) -> Value {
    let answer = lsp.request(method, params);
    assert!(answer.get("error").is_none(), "{method}: {answer}");
    answer["result"].clone()
}

/// What the test compares between sessions: the symbols of `symbols` and the
/// diagnostics (code and range) of every file of `diagnosed`.
fn answers(lsp: &mut Lsp, root: &Path, symbols: &str, diagnosed: &[&str]) -> Value {
    let uri = |p: &str| format!("file://{}/{p}", root.display());
    let outline = result(
        lsp,
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri(symbols)}}),
    );
    let mut diagnostics = Vec::new();
    for path in diagnosed {
        let report = result(
            lsp,
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": uri(path)}}),
        );
        let items: Vec<Value> = report["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| json!([d["code"], d["range"]]))
            .collect();
        diagnostics.push(json!([path, items]));
    }
    json!({"symbols": outline, "diagnostics": diagnostics})
}

/// 320 notes of about 3.5 KB (1.1 MB: over the cache's 1 MiB floor), each linking to
/// the next by a heading, the last to a missing note and a missing heading.
fn write_workspace(root: &Path) {
    std::fs::write(root.join("folio.toml"), "").unwrap();
    let filler = "Words about the topic of this note, one sentence after another. ".repeat(50);
    for i in 0..320 {
        let next = if i == 319 {
            "[gone](gone.md) and [nowhere](n000.md#no-such-heading)".to_owned()
        } else {
            format!("[next](n{:03}.md#part-{})", i + 1, i + 1)
        };
        let text =
            format!("# Note {i}\n\n{filler}\n\n## Part {i}\n\n{next}\n\n### Details\n\n{filler}\n");
        std::fs::write(root.join(format!("n{i:03}.md")), text).unwrap();
    }
}

/// The number of outlines a session's log says came from the cache.
fn from_cache(log: &Path) -> usize {
    let text = std::fs::read_to_string(log).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("outlines from the cache"))
        .unwrap_or_else(|| panic!("no load line in the log:\n{text}"));
    let count = line.split("; ").last().unwrap().split(' ').next().unwrap();
    count.parse().unwrap()
}

#[test]
fn a_reopened_workspace_loads_from_the_outline_cache_and_answers_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    std::fs::create_dir(&root).unwrap();
    let root = root.canonicalize().unwrap();
    write_workspace(&root);
    let cache = dir.path().join("cache");
    let logs = dir.path();
    let diagnosed = ["n000.md", "n100.md", "n319.md"];

    let mut first = start(&root, &cache, &logs.join("1.log"));
    let parsed = answers(&mut first, &root, "n100.md", &diagnosed);
    assert_eq!(first.stop(), Some(0));
    assert_eq!(from_cache(&logs.join("1.log")), 0);
    let files: Vec<_> = std::fs::read_dir(cache.join("folio/outlines"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].ends_with(".bin"), "{files:?}");
    // The last note's two broken links, found in the parse.
    assert_eq!(
        parsed["diagnostics"][2][1]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d[0].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["missing-file", "missing-heading"]
    );

    let mut second = start(&root, &cache, &logs.join("2.log"));
    let cached = answers(&mut second, &root, "n100.md", &diagnosed);
    assert_eq!(second.stop(), Some(0));
    assert_eq!(from_cache(&logs.join("2.log")), 320);
    assert_eq!(cached, parsed);

    // n100.md changed: parsed again, its new heading is there and n099.md's link to
    // `#part-100` is broken now; the other 319 come from the cache.
    let changed = std::fs::read_to_string(root.join("n100.md"))
        .unwrap()
        .replace("## Part 100", "## Section 100");
    std::fs::write(root.join("n100.md"), changed).unwrap();
    let mut third = start(&root, &cache, &logs.join("3.log"));
    let after = answers(&mut third, &root, "n100.md", &["n099.md"]);
    assert_eq!(third.stop(), Some(0));
    assert_eq!(from_cache(&logs.join("3.log")), 319);
    assert_eq!(after["symbols"][0]["children"][0]["name"], "Section 100");
    assert_eq!(after["diagnostics"][0][1][0][0], "missing-heading");

    // The executable's file changed (here only its status-change time, as a rebuild or a
    // reinstall also changes it): its outlines are another build's, none is used.
    let exe = Path::new(env!("CARGO_BIN_EXE_folio"));
    let permissions = std::fs::metadata(exe).unwrap().permissions();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::set_permissions(exe, permissions).unwrap();
    let fourth = start(&root, &cache, &logs.join("4.log"));
    assert_eq!(fourth.stop(), Some(0));
    assert_eq!(from_cache(&logs.join("4.log")), 0);
}
