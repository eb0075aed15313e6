//! The live bridge under real Neovim 0.11 (headless): `folio lsp` runs in Neovim on a
//! temp copy of tests/fixtures/k8s-community, and a bridge client (core `BridgeClient`,
//! what `folio mcp` uses) reads the unsaved buffer and edits it. The test drives and
//! inspects Neovim through its RPC socket (`nvim --server … --remote-expr`) with the
//! helpers of tests/nvim/bridge.lua.

mod support;

use folio_core::bridge::{
    ApplyEditParams, BridgeClient, BridgeError, ByteEdit, ERR_UNCONFIRMED, ERR_VERSION_CONFLICT,
};
use serde_json::json;
use support::editor::{Editor, wait_for};

/// Waits until the server's copy of the buffer is the editor's (Neovim debounces `didChange`).
fn synced(editor: &Editor, bridge: &mut BridgeClient, path: &str) -> (i32, String) {
    let want = editor.state();
    wait_for("the server to see the buffer", || {
        let read = bridge.read(path).unwrap();
        (read.text == want["text"].as_str().unwrap()).then_some((read.version, read.text))
    })
}

fn replace(path: &str, version: i32, text: &str, old: &str, new: &str) -> ApplyEditParams {
    let start = text
        .find(old)
        .unwrap_or_else(|| panic!("`{old}` not in the buffer"));
    ApplyEditParams {
        path: path.to_string(),
        version,
        edits: vec![ByteEdit {
            start,
            end: start + old.len(),
            new_text: new.to_string(),
        }],
        label: None,
    }
}

const FILE: &str = "communication/moderators.md";

#[test]
fn a_bridge_edit_lands_in_the_neovim_buffer_and_undo_reverts_it() {
    let editor = Editor::start(FILE);
    let on_disk = editor.disk(FILE);
    let mut bridge = editor.bridge();
    assert_eq!(bridge.hello.editor, "Neovim");
    // The user changes a line and does not save.
    editor.run(
        json!({"op": "set_line", "line": 12, "text": "Unsaved: moderating Kubernetes channels."}),
    );
    let (version, text) = synced(&editor, &mut bridge, FILE);
    assert!(text.contains("Unsaved: moderating Kubernetes channels.\n"));
    assert_eq!(bridge.open_documents().unwrap()[0].path, FILE);

    let result = bridge
        .apply_edit(&replace(
            FILE,
            version,
            &text,
            "Community Moderators",
            "Channel Moderators",
        ))
        .unwrap();
    assert!(result.applied, "{result:?}");
    let state = editor.state();
    let patched = text.replace("# Community Moderators", "# Channel Moderators");
    assert_eq!(state["text"], patched.as_str());
    // The result's version is the buffer's, as Neovim reported it.
    assert_eq!(i64::from(result.version), state["tick"].as_i64().unwrap());
    assert_eq!(state["modified"], true);
    assert_eq!(
        editor.disk(FILE),
        on_disk,
        "the disk copy is the editor's business"
    );

    // Undo reverts the patch, and only the patch.
    assert_eq!(editor.run(json!({"op": "undo"}))["text"], text.as_str());
    // Writing is the editor's decision.
    editor.run(json!({"op": "write"}));
    assert_eq!(editor.disk(FILE), text);
}

#[test]
fn an_edit_against_a_buffer_that_moved_is_refused_and_nothing_changes() {
    let editor = Editor::start(FILE);
    let on_disk = editor.disk(FILE);
    let mut bridge = editor.bridge();
    let (version, text) = synced(&editor, &mut bridge, FILE);
    editor.run(json!({"op": "set_line", "line": 12, "text": "Typed by the user."}));
    let (_, moved) = synced(&editor, &mut bridge, FILE);
    let conflict = |result: Result<_, BridgeError>, expected: i64| match result {
        Err(BridgeError::Remote { code, message, .. }) => {
            assert_eq!(code, expected, "{message}");
        }
        other => panic!("expected error {expected}, got {other:?}"),
    };
    // The server already knows the buffer moved.
    conflict(
        bridge.apply_edit(&replace(
            FILE,
            version,
            &text,
            "Community Moderators",
            "Channel Moderators",
        )),
        ERR_VERSION_CONFLICT,
    );
    assert_eq!(editor.text(), moved);
    // The buffer moves while the edit is on its way (after the server checked the
    // version): Neovim skips the edit for the newer buffer, yet answers `applied`; the
    // server sees its buffer does not hold the result and says the edit is unconfirmed.
    let (version, text) = synced(&editor, &mut bridge, FILE);
    editor.run(json!({"op": "arm_race", "line": 12, "text": "Typed again."}));
    conflict(
        bridge.apply_edit(&replace(
            FILE,
            version,
            &text,
            "Community Moderators",
            "Channel Moderators",
        )),
        ERR_UNCONFIRMED,
    );
    let now = editor.text();
    assert!(
        now.contains("Typed again.\n") && now.contains("# Community Moderators\n"),
        "{now}"
    );
    assert_eq!(editor.disk(FILE), on_disk);
}

/// An append after the last line (what `kb_patch` `insert_after` `document` sends) lands
/// exactly: Neovim applies an edit that starts past the final line break with an extra
/// empty line, so the server sends it as an insertion at the end of the last line.
#[test]
fn an_append_at_the_end_of_the_buffer_lands_exactly() {
    let editor = Editor::start(FILE);
    let mut bridge = editor.bridge();
    let (version, text) = synced(&editor, &mut bridge, FILE);
    assert!(text.ends_with('\n'));
    let result = bridge
        .apply_edit(&ApplyEditParams {
            path: FILE.to_string(),
            version,
            edits: vec![ByteEdit {
                start: text.len(),
                end: text.len(),
                new_text: "\nAppended by an agent.\n".into(),
            }],
            label: None,
        })
        .unwrap();
    assert!(result.applied, "{result:?}");
    assert_eq!(editor.text(), format!("{text}\nAppended by an agent.\n"));
}
