//! One link-rewrite engine (core `links::rewrite`): moving a file with MCP `kb_move` and
//! with LSP `workspace/willRenameFiles` (the edit applied as an editor applies it, then the
//! file renamed) leaves byte-identical trees, wiki links included.

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};
use support::lsp::Lsp;
use support::mcp::Mcp;
use support::{copy_dir, fixture};

/// Every file under `dir` (but folio's own state) with its bytes.
fn tree(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Vec<u8>>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
        if name == ".folio" {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            tree(&entry.path(), &format!("{name}/"), out);
        } else {
            out.insert(name, std::fs::read(entry.path()).unwrap());
        }
    }
}

/// Byte offset of an LSP position (UTF-16 columns; the fixture is ASCII).
fn offset(text: &str, pos: &Value) -> usize {
    let line = pos["line"].as_u64().unwrap() as usize;
    let character = pos["character"].as_u64().unwrap() as usize;
    let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    start + character
}

/// Applies a `WorkspaceEdit`'s `changes` to the files under `root`, as an editor would.
fn apply(root: &Path, edit: &Value) {
    for (uri, edits) in edit["changes"].as_object().expect("a `changes` map") {
        let path = uri.strip_prefix("file://").unwrap();
        let mut text = std::fs::read_to_string(path).unwrap();
        let mut list: Vec<(usize, usize, String)> = edits
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    offset(&text, &e["range"]["start"]),
                    offset(&text, &e["range"]["end"]),
                    e["newText"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        list.sort();
        for (start, end, new) in list.into_iter().rev() {
            text.replace_range(start..end, &new);
        }
        assert!(Path::new(path).starts_with(root));
        std::fs::write(path, text).unwrap();
    }
}

#[test]
fn kb_move_and_will_rename_files_give_the_same_files() {
    let work = tempfile::tempdir().unwrap();
    let (by_mcp, by_lsp) = (work.path().join("mcp"), work.path().join("lsp"));
    for root in [&by_mcp, &by_lsp] {
        std::fs::create_dir_all(root).unwrap();
        copy_dir(&fixture("every-link"), root);
    }
    let (by_mcp, by_lsp) = (
        by_mcp.canonicalize().unwrap(),
        by_lsp.canonicalize().unwrap(),
    );
    let (from, to) = ("Projects/Task.md", "Archive/2024/Task.md");

    let mut mcp = Mcp::start(&by_mcp, &["--allow-writes"]);
    let moved = mcp
        .call("kb_move", json!({"sourcePath": from, "targetPath": to}))
        .unwrap();
    assert_eq!(moved["path"], to);

    let mut lsp = Lsp::start(&by_lsp);
    let uri = |p: &str| format!("file://{}/{p}", by_lsp.display());
    let response = lsp.request(
        "workspace/willRenameFiles",
        json!({"files": [{"oldUri": uri(from), "newUri": uri(to)}]}),
    );
    apply(&by_lsp, &response["result"]);
    std::fs::create_dir_all(by_lsp.join("Archive/2024")).unwrap();
    std::fs::rename(by_lsp.join(from), by_lsp.join(to)).unwrap();

    let (mut a, mut b) = (BTreeMap::new(), BTreeMap::new());
    tree(&by_mcp, "", &mut a);
    tree(&by_lsp, "", &mut b);
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        [
            "Archive/2024/Task.md",
            "Projects/icon.png",
            "README.txt",
            "index.md"
        ]
    );
    for (path, bytes) in &a {
        assert_eq!(
            String::from_utf8_lossy(bytes),
            String::from_utf8_lossy(&b[path]),
            "{path}"
        );
    }
    // And the wiki links point at the new place.
    let index = String::from_utf8_lossy(&a["index.md"]).into_owned();
    assert!(
        index.starts_with(
            "# Index\n\n[[Archive/2024/Task]] and [[Archive/2024/Task#Steps|the steps]]"
        ),
        "{index}"
    );
}
