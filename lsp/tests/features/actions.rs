//! `textDocument/codeAction`: creating a missing file, fixing a broken anchor, the
//! repair core attaches to a link whose file exists under another letter case, and the
//! table of contents (insert, update, idempotence, list styles), and linking a note's
//! unlinked mentions.

use serde_json::json;

use crate::common::{Client, Enc, range};
use crate::{A, B, start};

both_encodings!(
    code_actions,
    case_mismatch_fix,
    table_of_contents,
    site_generator_anchors,
    link_mentions
);

async fn code_actions(enc: Enc) {
    let mut c = Client::start(
        &[("a.md", A), ("b.md", B)],
        enc,
        json!({"workspace": {"workspaceEdit": {"documentChanges": true, "resourceOperations": ["create"]}}}),
    )
    .await;
    c.open("a.md").await;
    let d = c.diagnostics("a.md").await;
    let (a, missing) = (c.uri("a.md"), c.uri("missing.md"));
    let r = c
        .call(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": a}, "range": range(5, 0, 5, 43), "context": {"diagnostics": d}}),
        )
        .await;
    assert_eq!(
        r,
        json!([
            {
                "title": "Create `missing.md`", "kind": "quickfix", "diagnostics": [d[0]],
                "command": {"title": "Create `missing.md`", "command": "folio.createNote", "arguments": [missing, "# missing\n"]}
            },
            {
                "title": "Change anchor to `#beta-two`", "kind": "quickfix", "diagnostics": [d[1]], "isPreferred": true,
                "edit": {"changes": {a.clone(): [{"range": range(5, 33, 5, 41), "newText": "beta-two"}]}}
            },
            {
                "title": "Insert table of contents", "kind": "source.toc",
                "edit": {"changes": {a: [{"range": range(1, 0, 1, 0), "newText": "\n<!-- toc -->\n- [Set Up](#set-up)\n<!-- tocstop -->\n"}]}}
            },
        ])
    );
    // The server creates the note (so a client that applies no `CreateFile` gets it too),
    // once: the link is no longer broken.
    let create = json!({"command": "folio.createNote", "arguments": [missing, "# missing\n"]});
    let made = c.call("workspace/executeCommand", create.clone()).await;
    assert_eq!(made, json!(missing));
    assert_eq!(
        std::fs::read_to_string(c.path("missing.md")).unwrap(),
        "# missing\n"
    );
    // Only Markdown notes, only on this machine.
    for (uri, why) in [
        (
            c.uri("run.sh"),
            "`run.sh` is not a Markdown note (.md, .markdown)",
        ),
        (
            "file://otherhost/x.md".to_string(),
            "`file://otherhost/x.md` is not a file on this machine",
        ),
    ] {
        let refused = c
            .request(
                "workspace/executeCommand",
                json!({"command": "folio.createNote", "arguments": [uri, "x"]}),
            )
            .await;
        assert!(
            refused["error"]["message"].as_str().unwrap().contains(why),
            "{refused}"
        );
        // A refusal, not a failure of the server: LSP's RequestFailed.
        assert_eq!(refused["error"]["code"], -32803, "{refused}");
    }
    assert!(!c.path("run.sh").exists());
    let again = c.request("workspace/executeCommand", create).await;
    assert!(
        again["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cannot create `missing.md`"),
        "{again}"
    );
    assert_eq!(again["error"]["code"], -32803, "{again}");
    // Today's note: made from the default (`journal/`, `# date`), then shown as it is.
    let today = json!({"command": "folio.today", "arguments": [{"now": "2026-12-06T09:05"}]});
    let note = c.call("workspace/executeCommand", today.clone()).await;
    assert_eq!(note, json!(c.uri("journal/2026-12-06.md")));
    assert_eq!(
        std::fs::read_to_string(c.path("journal/2026-12-06.md")).unwrap(),
        "# 2026-12-06\n"
    );
    assert_eq!(c.call("workspace/executeCommand", today).await, note);
    // Arguments a command cannot take are invalid params (-32602), not internal errors.
    for (command, arguments, message) in [
        (
            "folio.createNote",
            json!([missing]),
            "workspace/executeCommand: folio.createNote takes [uri, text] (two strings)",
        ),
        (
            "folio.today",
            json!([{"now": "tomorrow"}]),
            "workspace/executeCommand: `now` must be YYYY-MM-DDTHH:MM, not `tomorrow`",
        ),
        (
            "folio.today",
            json!(["x"]),
            "workspace/executeCommand: folio.today takes no arguments or [{\"uri\": …, \"now\": …}]",
        ),
    ] {
        let refused = c
            .request(
                "workspace/executeCommand",
                json!({"command": command, "arguments": arguments}),
            )
            .await;
        assert_eq!(
            refused["error"],
            json!({"code": -32602, "message": message}),
            "{refused}"
        );
    }

    // A client that cannot create files still gets the note, which the server creates.
    let mut c = start(enc).await;
    let d = c.diagnostics("a.md").await;
    let a = c.uri("a.md");
    let r = c
        .call("textDocument/codeAction", json!({"textDocument": {"uri": a}, "range": range(5, 0, 5, 43), "context": {"diagnostics": d}}))
        .await;
    assert_eq!(
        r.as_array()
            .unwrap()
            .iter()
            .map(|x| x["title"].as_str().unwrap())
            .collect::<Vec<_>>(),
        [
            "Create `missing.md`",
            "Change anchor to `#beta-two`",
            "Insert table of contents"
        ]
    );
}

async fn case_mismatch_fix(enc: Enc) {
    // `é` is one UTF-16 unit and two UTF-8 bytes, `☕` one unit and three bytes.
    let mut c = Client::start(
        &[
            ("a.md", "Café ☕ [t](Sub/Topic.md)\n"),
            ("sub/topic.md", "# Topic\n"),
        ],
        enc,
        json!({}),
    )
    .await;
    c.open("a.md").await;
    let d = c.diagnostics("a.md").await;
    let dest = range(0, enc.col(11, 14), 0, enc.col(23, 26));
    assert_eq!(d.as_array().unwrap().len(), 1);
    assert_eq!(d[0]["code"], "case-mismatch");
    assert_eq!(d[0]["range"], dest);
    let a = c.uri("a.md");
    let r = c
        .call(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": a}, "range": range(0, 0, 0, 5), "context": {"diagnostics": d}}),
        )
        .await;
    assert_eq!(r, json!([]));
    let r = c
        .call(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": a}, "range": dest, "context": {"diagnostics": d}}),
        )
        .await;
    assert_eq!(
        r,
        json!([{
            "title": "Change link to `sub/topic.md`", "kind": "quickfix", "diagnostics": [d[0]], "isPreferred": true,
            "edit": {"changes": {a: [{"range": dest, "newText": "sub/topic.md"}]}}
        }])
    );
}

const TOC: &str = "# Guide

Intro 😀 with *emphasis*.

## Set Up

### On Linux

## Café déjà

## Set Up
";

const STAR: &str = "# Guide

<!-- toc -->
* [Set Up](#set-up)
<!-- tocstop -->

## Set Up

### On Linux
";

const ORDERED: &str = "# Guide

<!-- toc -->
1. [Old](#old)
2. [Older](#older)
<!-- tocstop -->

## One

### One A

## Two
";

const PLUS: &str = "## One

+ item

## Two
";

/// The table-of-contents actions for `rel` (every action, no filter).
async fn toc_actions(c: &mut Client, rel: &str) -> serde_json::Value {
    let uri = c.uri(rel);
    c.call(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range(0, 0, 0, 0), "context": {"diagnostics": []}}),
    )
    .await
}

async fn table_of_contents(enc: Enc) {
    let mut c = Client::start(
        &[
            ("toc.md", TOC),
            ("star.md", STAR),
            ("ordered.md", ORDERED),
            ("plus.md", PLUS),
        ],
        enc,
        json!({}),
    )
    .await;
    c.open("toc.md").await;
    let uri = c.uri("toc.md");
    // No table yet: inserted after the title, which it does not list; the repeated
    // heading gets GitHub's `-1`, the accented one keeps its letters.
    let inserted = "\n<!-- toc -->\n- [Set Up](#set-up)\n  - [On Linux](#on-linux)\n- [Café déjà](#café-déjà)\n- [Set Up](#set-up-1)\n<!-- tocstop -->\n";
    assert_eq!(
        toc_actions(&mut c, "toc.md").await,
        json!([{
            "title": "Insert table of contents", "kind": "source.toc",
            "edit": {"changes": {uri.clone(): [{"range": range(1, 0, 1, 0), "newText": inserted}]}}
        }])
    );
    // A client that asks for quick fixes only does not get it.
    let r = c
        .call(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": range(0, 0, 0, 0), "context": {"diagnostics": [], "only": ["quickfix"]}}),
        )
        .await;
    assert_eq!(r, json!([]));
    // Applied, the table is up to date: no action.
    c.change(
        "toc.md",
        vec![json!({"range": range(1, 0, 1, 0), "text": inserted})],
    )
    .await;
    assert_eq!(toc_actions(&mut c, "toc.md").await, json!([]));
    // A heading renamed on the line after the emoji's (the table moved everything down by
    // seven lines): only the lines between the markers are replaced.
    c.change(
        "toc.md",
        vec![json!({"range": range(13, 4, 13, 12), "text": "On macOS"})],
    )
    .await;
    assert_eq!(
        toc_actions(&mut c, "toc.md").await,
        json!([{
            "title": "Update table of contents", "kind": "source.toc",
            "edit": {"changes": {uri.clone(): [{"range": range(3, 0, 7, 0), "newText": "- [Set Up](#set-up)\n  - [On macOS](#on-macos)\n- [Café déjà](#café-déjà)\n- [Set Up](#set-up-1)\n"}]}}
        }])
    );
    // The user's list style is kept: `*` bullets, ordered items counting up (nested under
    // the width of `1. `), and a new table takes the document's own bullet.
    assert_eq!(
        toc_actions(&mut c, "star.md").await[0]["edit"]["changes"][c.uri("star.md")],
        json!([{"range": range(3, 0, 4, 0), "newText": "* [Set Up](#set-up)\n  * [On Linux](#on-linux)\n"}])
    );
    assert_eq!(
        toc_actions(&mut c, "ordered.md").await[0]["edit"]["changes"][c.uri("ordered.md")],
        json!([{"range": range(3, 0, 5, 0), "newText": "1. [One](#one)\n   1. [One A](#one-a)\n2. [Two](#two)\n"}])
    );
    assert_eq!(
        toc_actions(&mut c, "plus.md").await[0]["edit"]["changes"][c.uri("plus.md")],
        json!([{"range": range(0, 0, 0, 0), "newText": "<!-- toc -->\n+ [One](#one)\n+ [Two](#two)\n<!-- tocstop -->\n\n"}])
    );
}

/// On a VitePress site (`[links] generator = "vitepress"`) what folio writes links to a
/// heading with VitePress's id: the anchor fix, the table of contents and completion.
async fn site_generator_anchors(enc: Enc) {
    let text = "# Guide\n\n## build.assetsInlineLimit\n\nSee [x](#build-assetsinlinelimt) and [ok](#build-assetsinlinelimit).\n";
    let mut c = Client::start(
        &[
            ("folio.toml", "[links]\ngenerator = \"vitepress\"\n"),
            ("a.md", text),
        ],
        enc,
        json!({}),
    )
    .await;
    c.open("a.md").await;
    let d = c.diagnostics("a.md").await;
    assert_eq!(
        d.as_array()
            .unwrap()
            .iter()
            .map(|x| x["message"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["no heading or anchor `#build-assetsinlinelimt` in this document"]
    );
    let a = c.uri("a.md");
    let r = c
        .call(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": a}, "range": range(4, 0, 4, 10), "context": {"diagnostics": d}}),
        )
        .await;
    assert_eq!(
        r,
        json!([
            {
                "title": "Change anchor to `#build-assetsinlinelimit`", "kind": "quickfix", "diagnostics": [d[0]], "isPreferred": true,
                "edit": {"changes": {a.clone(): [{"range": range(4, 9, 4, 31), "newText": "build-assetsinlinelimit"}]}}
            },
            {
                "title": "Insert table of contents", "kind": "source.toc",
                "edit": {"changes": {a.clone(): [{"range": range(1, 0, 1, 0), "newText": "\n<!-- toc -->\n- [build.assetsInlineLimit](#build-assetsinlinelimit)\n<!-- tocstop -->\n"}]}}
            },
        ])
    );
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": a, "version": 2}, "contentChanges": [
            {"range": range(5, 0, 5, 0), "text": "[y](#"}
        ]}),
    )
    .await;
    let r = c
        .call("textDocument/completion", crate::at(&c, "a.md", 5, 5))
        .await;
    assert_eq!(
        r.as_array()
            .unwrap()
            .iter()
            .map(|i| i["label"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["build-assetsinlinelimit", "guide"]
    );
}

async fn link_mentions(enc: Enc) {
    let mut c = Client::start(
        &[
            ("Solar Panels.md", "# Solar Panels\n\nAbout them.\n"),
            (
                "a.md",
                "# A\n\nÉté: we fitted solar panels, `solar panels` in code.\n",
            ),
        ],
        enc,
        json!({}),
    )
    .await;
    c.open("Solar Panels.md").await;
    let note = c.uri("Solar Panels.md");
    let ask = |line: u32, only: serde_json::Value| {
        json!({"textDocument": {"uri": note}, "range": range(line, 0, line, 0),
               "context": {"diagnostics": [], "only": only}})
    };
    let r = c
        .call("textDocument/codeAction", ask(0, json!(["refactor"])))
        .await;
    // `Été: we fitted ` is 15 UTF-16 code units and 17 UTF-8 bytes.
    let start = if enc == Enc::Utf8 { 17 } else { 15 };
    assert_eq!(
        r,
        json!([{
            "title": "Link 1 unlinked mention of this note (in 1 note)",
            "kind": "refactor.rewrite.linkMentions",
            "edit": {"changes": {c.uri("a.md"): [{
                "range": range(2, start, 2, start + 12),
                "newText": "[solar panels](Solar%20Panels.md)"
            }]}}
        }])
    );
    // Off the title line, or when the client asks for quick fixes only: not offered.
    let off = c
        .call("textDocument/codeAction", ask(2, json!(["refactor"])))
        .await;
    assert_eq!(off, json!([]));
    let fixes = c
        .call("textDocument/codeAction", ask(0, json!(["quickfix"])))
        .await;
    assert_eq!(fixes, json!([]));

    // A client that resolves edits gets the action at once (a scan finds the name), its
    // edit on `codeAction/resolve`.
    let mut c = Client::start(
        &[
            ("Solar Panels.md", "# Solar Panels\n\nAbout them.\n"),
            (
                "a.md",
                "# A\n\nÉté: we fitted solar panels, `solar panels` in code.\n",
            ),
            ("b.md", "# B\n\nOnly in code: `Solar Panels`.\n"),
        ],
        enc,
        json!({"textDocument": {"codeAction": {"resolveSupport": {"properties": ["edit"]}}}}),
    )
    .await;
    c.open("Solar Panels.md").await;
    let note = c.uri("Solar Panels.md");
    let offered = c
        .call(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": note}, "range": range(0, 0, 0, 0),
                   "context": {"diagnostics": [], "only": ["refactor"]}}),
        )
        .await;
    assert_eq!(
        offered,
        json!([{
            "title": "Link the unlinked mentions of this note",
            "kind": "refactor.rewrite.linkMentions",
            "data": {"linkMentionsOf": note}
        }])
    );
    let resolved = c.call("codeAction/resolve", offered[0].clone()).await;
    assert_eq!(
        resolved["edit"],
        json!({"changes": {c.uri("a.md"): [{
            "range": range(2, start, 2, start + 12),
            "newText": "[solar panels](Solar%20Panels.md)"
        }]}})
    );
}
