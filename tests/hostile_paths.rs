//! Hostile paths against every tool and resource of `folio mcp` that takes a path: 0
//! reads outside the root and 0 writes outside it, whatever the spelling (traversal,
//! absolute, percent-encoded, backslash, drive and UNC forms, NUL and control characters,
//! device names, trailing dots and spaces, letter case and Unicode normalisation, lookalike
//! dots and slashes, very long names, `.git`, `.folio`), through symbolic and hard links
//! pointing outside, and while a folder is swapped for a link to outside again and again
//! (docs/reliability.md).

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};
use support::mcp::Mcp;

const CANARY: &str = "CANARY-7f3a-outside-the-root";

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                out.insert(entry.path(), std::fs::read(entry.path()).unwrap());
            }
        }
    }
    out
}

/// The spellings: at least 80, each a way to reach outside the root, or a name the path
/// policy refuses, or another spelling of a name that exists.
fn spellings(outside: &Path) -> Vec<String> {
    let abs = format!("{}/secret.md", outside.display());
    let mut s: Vec<String> = [
        // Traversal.
        "../outside/secret.md",
        "../../etc/passwd",
        "sub/../../outside/secret.md",
        "./../outside/secret.md",
        "sub/./a.md",
        "..",
        ".",
        "",
        "/",
        "sub/",
        "sub//a.md",
        "sub/../notes.md",
        "../root/notes.md",
        // Absolute.
        "/etc/passwd",
        "//server/share/x.md",
        "~/.ssh/id_rsa",
        "/proc/self/environ",
        // Percent-encoded.
        "..%2Foutside%2Fsecret.md",
        "%2e%2e/outside/secret.md",
        "..%2f..%2fetc%2fpasswd",
        "%2Fetc%2Fpasswd",
        "..%252Foutside%252Fsecret.md",
        "notes%2Emd",
        // Backslashes, drives, UNC.
        "..\\outside\\secret.md",
        "sub\\a.md",
        "\\\\server\\share\\x.md",
        "C:\\Windows\\win.ini",
        "C:/Windows/win.ini",
        "c:notes.md",
        "C:",
        "\\\\?\\C:\\x.md",
        "//?/C:/x.md",
        "notes.md:stream",
        "notes.md::$DATA",
        // NUL and control characters.
        "notes.md\0.txt",
        "notes\0.md",
        "no\ntes.md",
        "notes.md\r",
        "\u{7f}.md",
        "\u{1b}[31m.md",
        "tab\there.md",
        // Windows device names.
        "CON",
        "con.md",
        "NUL.md",
        "aux",
        "COM1.md",
        "LPT9.txt",
        "sub/prn.md",
        "CONIN$",
        // Trailing dots and spaces.
        "notes.md.",
        "notes.md ",
        "sub./a.md",
        "sub /a.md",
        // Other spellings of existing names.
        "NOTES.md",
        "Notes.MD",
        "SUB/a.md",
        "sub/A.md",
        "cafe\u{301}.md",
        "\u{ff4e}otes.md",
        // Lookalike dots and slashes.
        "notes\u{2024}md",
        "sub\u{2215}a.md",
        "sub\u{ff0f}a.md",
        "..\u{2215}outside\u{2215}secret.md",
        "\u{2025}/outside/secret.md",
        "\u{ff0e}\u{ff0e}/outside/secret.md",
        "sub\u{2044}a.md",
        // folio's own and git's folders.
        ".git/config",
        ".folio/index.db",
        ".folio/write.lock",
        "sub/.git/x.md",
        ".GIT/config",
        ".Folio/index.db",
        // Links inside the root that point outside.
        "link.md",
        "linkdir/secret.md",
        "linkdir",
        "hard.md",
        // URLs, globs and fragments.
        "notes.md#frag",
        "notes.md?x=1",
        "*.md",
        "sub/*",
        "file:///etc/passwd",
        "kb://doc/notes.md",
        "http://example.com/x.md",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    s.push(abs);
    s.push(format!("{}.md", "a".repeat(300)));
    s.push(format!("{}x.md", "d/".repeat(2000)));
    s.push("x".repeat(5000));
    s
}

fn setup(dir: &Path) -> (PathBuf, PathBuf) {
    let (root, outside) = (dir.join("root"), dir.join("outside"));
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(
        root.join("notes.md"),
        "# Notes\n\n| A | B |\n|---|---|\n| 1 | 2 |\n",
    )
    .unwrap();
    std::fs::write(root.join("sub/a.md"), "# A\n\nInside.\n").unwrap();
    std::fs::write(root.join("caf\u{e9}.md"), "# Caf\u{e9}\n").unwrap();
    for name in ["secret.md", "hard-secret.md", "a.md"] {
        std::fs::write(outside.join(name), format!("# Secret\n\n{CANARY}\n")).unwrap();
    }
    std::os::unix::fs::symlink(outside.join("secret.md"), root.join("link.md")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("linkdir")).unwrap();
    std::fs::hard_link(outside.join("hard-secret.md"), root.join("hard.md")).unwrap();
    (
        root.canonicalize().unwrap(),
        outside.canonicalize().unwrap(),
    )
}

/// The calls that take a path, with `path` in the path's place.
fn calls(path: &str) -> Vec<(&'static str, Value)> {
    let patch = json!([{"kind": "insert_after", "pointer": "document", "markdown": "x"}]);
    vec![
        ("kb_read", json!({"path": path})),
        ("kb_outline", json!({"path": path})),
        ("kb_links", json!({"path": path})),
        ("kb_download_file", json!({"path": path})),
        ("kb_list_files", json!({"pathPrefix": path})),
        ("kb_patch", json!({"path": path, "operations": patch})),
        (
            "kb_edit_table",
            json!({"path": path, "pointer": "1.t1~0000000000000000~0000000000000000", "action": "delete_row", "rowIndex": 0}),
        ),
        ("kb_create", json!({"path": path, "markdown": "x"})),
        ("kb_delete", json!({"path": path})),
        (
            "kb_move",
            json!({"sourcePath": path, "targetPath": "moved-here.md"}),
        ),
        (
            "kb_move",
            json!({"sourcePath": "sub/a.md", "targetPath": path}),
        ),
        ("kb_load_image", json!({"path": path})),
        ("kb_delete_image", json!({"path": path})),
        (
            "kb_move_image",
            json!({"sourcePath": path, "targetPath": "moved-here.png"}),
        ),
        (
            "kb_move_image",
            json!({"sourcePath": "pic.png", "targetPath": path}),
        ),
        (
            "kb_save_image",
            json!({"image": {"data": PNG_1X1, "mimeType": "image/png"}, "targetPath": path}),
        ),
        (
            "kb_create_pdf_book",
            json!({"path": path, "outputPath": "book-out.pdf"}),
        ),
        (
            "kb_create_pdf_book",
            json!({"path": "sub/a.md", "outputPath": path}),
        ),
    ]
}

/// A 1×1 PNG, base64, for `kb_save_image`.
const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

const REFUSALS: [&str; 6] = [
    "INVALID_PATH",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "UNSUPPORTED_FORMAT",
    "INVALID_ARGUMENT",
    "CONFLICT",
];

#[test]
fn no_spelling_reads_or_writes_outside_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let (root, outside) = setup(dir.path());
    let before = snapshot(&outside);
    let mut mcp = Mcp::start(&root, &["--allow-writes"]);
    let spellings = spellings(&outside);
    assert!(spellings.len() >= 80, "{}", spellings.len());
    let mut figures: BTreeMap<String, usize> = BTreeMap::new();
    for path in &spellings {
        for (tool, args) in calls(path) {
            let response = mcp.request("tools/call", json!({"name": tool, "arguments": args}));
            let text = response.to_string();
            assert!(
                !text.contains(CANARY),
                "{tool} {path:?} read outside the root: {text}"
            );
            let result = &response["result"];
            if result["isError"] == json!(true) {
                let body: Value =
                    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
                let code = body["code"].as_str().unwrap().to_string();
                assert!(REFUSALS.contains(&code.as_str()), "{tool} {path:?}: {body}");
                *figures.entry(format!("refused {code}")).or_default() += 1;
            } else if response.get("error").is_some() {
                // Arguments the schema refuses (a path that is not a string never occurs here).
                *figures.entry("protocol error".into()).or_default() += 1;
            } else {
                *figures.entry(format!("accepted by {tool}")).or_default() += 1;
                // A move of sub/a.md to an odd but valid name inside the root: move it back.
                if tool == "kb_move" && args["sourcePath"] == "sub/a.md" {
                    mcp.call(
                        "kb_move",
                        json!({"sourcePath": path, "targetPath": "sub/a.md"}),
                    )
                    .unwrap();
                }
            }
        }
        // The resources read documents by their `kb://doc/` URI.
        let encoded: String = path
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"/._-".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        for uri in [
            format!("kb://doc/{path}"),
            format!("kb://doc/{encoded}"),
            format!("kb://topic/{encoded}"),
        ] {
            let response = mcp.request("resources/read", json!({"uri": uri}));
            assert!(!response.to_string().contains(CANARY), "{uri}: {response}");
        }
    }
    assert_eq!(
        snapshot(&outside),
        before,
        "a write reached outside the root"
    );
    // The links inside the root are still links: nothing wrote through them.
    assert!(
        std::fs::symlink_metadata(root.join("link.md"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    println!(
        "hostile paths: {} spellings x {} calls and 3 resource reads: {figures:?}",
        spellings.len(),
        calls("").len()
    );
}

#[test]
fn another_spelling_of_an_existing_name_is_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let (root, _) = setup(dir.path());
    let mut mcp = Mcp::start(&root, &["--allow-writes"]);
    for (path, existing) in [
        ("NOTES.md", "notes.md"),
        ("SUB/b.md", "sub"),
        ("Caf\u{c9}.md", "caf\u{e9}.md"),
        ("cafe\u{301}.md", "caf\u{e9}.md"),
    ] {
        let err = mcp
            .call("kb_create", json!({"path": path, "markdown": "x"}))
            .unwrap_err();
        assert_eq!(
            err,
            json!({"code": "ALREADY_EXISTS", "message": format!("`{path}` would collide with the existing `{existing}`: the names differ only in letter case or Unicode normalisation, which Windows and macOS treat as the same file")})
        );
        let err = mcp
            .call(
                "kb_move",
                json!({"sourcePath": "sub/a.md", "targetPath": path}),
            )
            .unwrap_err();
        assert_eq!(err["code"], "ALREADY_EXISTS", "{path}");
    }
    assert!(!root.join("NOTES.md").exists() && root.join("sub/a.md").exists());
}

#[test]
fn a_folder_swapped_for_a_link_never_leads_outside() {
    let dir = tempfile::tempdir().unwrap();
    let (root, outside) = setup(dir.path());
    std::fs::create_dir_all(root.join("swap")).unwrap();
    std::fs::write(root.join("swap/a.md"), "# Inside\n").unwrap();
    let parked = dir.path().join("parked");
    let before = snapshot(&outside);
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (root, outside, parked, stop) = (
            root.clone(),
            outside.clone(),
            parked.clone(),
            Arc::clone(&stop),
        );
        std::thread::spawn(move || {
            let mut swaps = 0;
            let mut aside = 0;
            // kb_create may make a new `swap/` folder (inside the root) whenever the name
            // is free: such a folder is moved aside.
            let mut make_room = |root: &Path| {
                aside += 1;
                let _ = std::fs::rename(root.join("swap"), root.join(format!("swap-made-{aside}")));
            };
            while !stop.load(Ordering::Relaxed) {
                // The real folder goes away and a link to outside takes its name, then back.
                std::fs::rename(root.join("swap"), &parked).unwrap();
                if std::os::unix::fs::symlink(&outside, root.join("swap")).is_ok() {
                    std::fs::remove_file(root.join("swap")).unwrap();
                    swaps += 1;
                } else {
                    make_room(&root);
                }
                while std::fs::rename(&parked, root.join("swap")).is_err() {
                    make_room(&root);
                }
            }
            swaps
        })
    };
    let mut mcp = Mcp::start(&root, &["--allow-writes"]);
    let mut answers: BTreeMap<&str, usize> = BTreeMap::new();
    for i in 0..300 {
        let calls = [
            ("kb_read", json!({"path": "swap/a.md"})),
            (
                "kb_patch",
                json!({"path": "swap/a.md", "operations": [{"kind": "insert_after", "pointer": "document", "markdown": format!("Line {i}.")}]}),
            ),
            (
                "kb_create",
                json!({"path": format!("swap/new-{i}.md"), "markdown": "x"}),
            ),
            ("kb_download_file", json!({"path": "swap/a.md"})),
        ];
        for (tool, args) in calls {
            let response = mcp.request("tools/call", json!({"name": tool, "arguments": args}));
            assert!(!response.to_string().contains(CANARY), "{tool}: {response}");
            let ok = response["result"]["isError"] != json!(true);
            *answers
                .entry(if ok { "answered" } else { "refused" })
                .or_default() += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert_eq!(
        snapshot(&outside),
        before,
        "a write reached outside the root"
    );
    println!("folder swap: {swaps} swaps during 1,200 calls: {answers:?}");
}
