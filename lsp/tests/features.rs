//! In-process end-to-end tests of every feature, through the real server loop, with
//! exact ranges and edits in UTF-16 and UTF-8. Line 4 of `a.md` has an emoji (two
//! UTF-16 code units, four UTF-8 bytes) before its links, so the two encodings differ.

mod common;

use common::{Client, Enc, pos, range, summarize};
use serde_json::{Value, json};

const A: &str = "# Alpha

## Set Up

Emoji 😀 then [b](b.md#beta-two) and [self](#set-up).
Bad [x](missing.md) and [h](b.md#beta-tow).
Ref [r][lbl] and [[b]] and [[b#Beta Two]].

[lbl]: b.md
";

const B: &str = "# Beta

## Beta Two

Back to [a](a.md#set-up).
";

/// Runs an async check once per encoding.
macro_rules! both_encodings {
    ($($name:ident),* $(,)?) => {
        mod utf16 {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() { super::$name(super::Enc::Utf16).await; })*
        }
        mod utf8 {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() { super::$name(super::Enc::Utf8).await; })*
        }
    };
}

both_encodings!(
    document_symbols,
    diagnostics_are_pushed_with_every_code_range,
    definition,
    references,
    hover,
    completion_after_incremental_change,
    rename_heading,
    rename_reference_label,
    will_rename_files,
    document_links,
    folding_ranges,
    code_actions,
    workspace_symbols,
    configuration_silences_codes,
    watched_files_update_dependents,
);

async fn start(enc: Enc) -> Client {
    let mut c = Client::start(&[("a.md", A), ("b.md", B)], enc, json!({})).await;
    c.open("a.md").await;
    c
}

fn at(c: &Client, rel: &str, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": c.uri(rel)}, "position": pos(line, character)})
}

async fn document_symbols(enc: Enc) {
    let mut c = start(enc).await;
    let result = c
        .call(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": c.uri("a.md")}}),
        )
        .await;
    assert_eq!(
        result,
        json!([{
            "name": "Alpha", "detail": "# #alpha", "kind": 15,
            "range": range(0, 0, 8, 11), "selectionRange": range(0, 0, 0, 7),
            "children": [{
                "name": "Set Up", "detail": "## #set-up", "kind": 15,
                "range": range(2, 0, 8, 11), "selectionRange": range(2, 0, 2, 9)
            }]
        }])
    );
}

async fn diagnostics_are_pushed_with_every_code_range(enc: Enc) {
    let mut c = start(enc).await;
    let d = c.diagnostics("a.md").await;
    assert_eq!(
        summarize(&d),
        vec![
            (
                "missing-file".to_string(),
                range(5, 8, 5, 18),
                "file `missing.md` does not exist (resolved to `missing.md`)".to_string()
            ),
            (
                "missing-heading".to_string(),
                range(5, 33, 5, 41),
                "no heading or anchor `#beta-tow` in `b.md`".to_string()
            ),
        ]
    );
    assert_eq!(d[0]["severity"], 1);
    assert_eq!(d[0]["source"], "folio");
    // An edit on the emoji line: a broken own-file anchor right after the emoji.
    let uri = c.uri("a.md");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
            {"range": range(4, enc.col(8, 10), 4, enc.col(8, 10)), "text": "[n](#nope) "}
        ]}),
    )
    .await;
    let d = c.diagnostics("a.md").await;
    assert_eq!(
        summarize(&d)[0],
        (
            "missing-heading".to_string(),
            range(4, enc.col(13, 15), 4, enc.col(17, 19)),
            "no heading or anchor `#nope` in this document".to_string()
        )
    );
    assert_eq!(d.as_array().unwrap().len(), 3);
}

async fn definition(enc: Enc) {
    let mut c = start(enc).await;
    let b = c.uri("b.md");
    let a = c.uri("a.md");
    // `[b](b.md#beta-two)` after the emoji.
    let r = c
        .call(
            "textDocument/definition",
            at(&c, "a.md", 4, enc.col(15, 17)),
        )
        .await;
    assert_eq!(r, json!({"uri": b, "range": range(2, 0, 2, 11)}));
    // `[self](#set-up)`.
    let r = c
        .call(
            "textDocument/definition",
            at(&c, "a.md", 4, enc.col(40, 42)),
        )
        .await;
    assert_eq!(r, json!({"uri": a, "range": range(2, 0, 2, 9)}));
    // `[[b#Beta Two]]`, `[[b]]`, `[r][lbl]`.
    let r = c
        .call("textDocument/definition", at(&c, "a.md", 6, 33))
        .await;
    assert_eq!(r, json!({"uri": b, "range": range(2, 0, 2, 11)}));
    let r = c
        .call("textDocument/definition", at(&c, "a.md", 6, 19))
        .await;
    assert_eq!(r, json!({"uri": b, "range": range(0, 0, 0, 0)}));
    let r = c
        .call("textDocument/definition", at(&c, "a.md", 6, 5))
        .await;
    assert_eq!(r, json!({"uri": a, "range": range(8, 0, 8, 11)}));
    // Plain text: nothing.
    let r = c
        .call("textDocument/definition", at(&c, "a.md", 4, 2))
        .await;
    assert_eq!(r, Value::Null);
}

async fn references(enc: Enc) {
    let mut c = start(enc).await;
    let (a, b) = (c.uri("a.md"), c.uri("b.md"));
    // From the heading `## Set Up`.
    let mut params = at(&c, "a.md", 2, 4);
    params["context"] = json!({"includeDeclaration": true});
    let r = c.call("textDocument/references", params).await;
    assert_eq!(
        r,
        json!([
            {"uri": a, "range": range(2, 0, 2, 9)},
            {"uri": a, "range": range(4, enc.col(37, 39), 4, enc.col(52, 54))},
            {"uri": b, "range": range(4, 8, 4, 24)},
        ])
    );
    // A position past the last line names nothing.
    let mut params = at(&c, "a.md", 99_999, 0);
    params["context"] = json!({"includeDeclaration": true});
    assert_eq!(c.call("textDocument/references", params).await, Value::Null);
    // From the reference definition `[lbl]`.
    let mut params = at(&c, "a.md", 8, 2);
    params["context"] = json!({"includeDeclaration": false});
    let r = c.call("textDocument/references", params).await;
    assert_eq!(r, json!([{"uri": a, "range": range(6, 4, 6, 12)}]));
    // From the file (cursor on plain text of b.md): every link to b.md.
    c.open("b.md").await;
    let mut params = at(&c, "b.md", 4, 2);
    params["context"] = json!({"includeDeclaration": false});
    let r = c.call("textDocument/references", params).await;
    assert_eq!(
        r,
        json!([
            {"uri": a, "range": range(4, enc.col(14, 16), 4, enc.col(32, 34))},
            {"uri": a, "range": range(5, 24, 5, 42)},
            {"uri": a, "range": range(6, 17, 6, 22)},
            {"uri": a, "range": range(6, 27, 6, 41)},
            {"uri": a, "range": range(8, 0, 8, 11)},
        ])
    );
}

async fn hover(enc: Enc) {
    let mut c = start(enc).await;
    let r = c
        .call("textDocument/hover", at(&c, "a.md", 4, enc.col(20, 22)))
        .await;
    assert_eq!(
        r,
        json!({
            "contents": {"kind": "markdown", "value": "`b.md`\n\n---\n\n## Beta Two\n\nBack to [a](a.md#set-up)."},
            "range": range(4, enc.col(14, 16), 4, enc.col(32, 34))
        })
    );
}

async fn completion_after_incremental_change(enc: Enc) {
    let mut c = start(enc).await;
    let uri = c.uri("a.md");
    // Type ` [c](b.md#` at the end of the emoji line, in two changes applied in order.
    let end = enc.col(53, 55);
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
            {"range": range(4, end, 4, end), "text": " [c](b.md"},
            {"range": range(4, end + 9, 4, end + 9), "text": "#"},
        ]}),
    )
    .await;
    let r = c
        .call("textDocument/completion", at(&c, "a.md", 4, end + 10))
        .await;
    let edit_range = range(4, end + 10, 4, end + 10);
    assert_eq!(
        r,
        json!([
            {"label": "beta", "kind": 18, "detail": "Beta", "filterText": "beta", "textEdit": {"range": edit_range, "newText": "beta"}},
            {"label": "beta-two", "kind": 18, "detail": "Beta Two", "filterText": "beta-two", "textEdit": {"range": edit_range, "newText": "beta-two"}},
        ])
    );
    // Paths: after `](` on a new line.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [
            {"range": range(9, 0, 9, 0), "text": "😀 [z]("}
        ]}),
    )
    .await;
    let r = c
        .call("textDocument/completion", at(&c, "a.md", 9, enc.col(7, 9)))
        .await;
    let labels: Vec<&str> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["b.md"]);
    assert_eq!(
        r[0]["textEdit"]["range"],
        range(9, enc.col(7, 9), 9, enc.col(7, 9))
    );
    // Wiki targets and reference labels.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 4}, "contentChanges": [
            {"range": range(9, enc.col(7, 9), 9, enc.col(7, 9)), "text": ") [[b"}
        ]}),
    )
    .await;
    let r = c
        .call(
            "textDocument/completion",
            at(&c, "a.md", 9, enc.col(12, 14)),
        )
        .await;
    assert_eq!(
        r.as_array()
            .unwrap()
            .iter()
            .map(|i| i["label"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert_eq!(
        r[0]["textEdit"]["range"],
        range(9, enc.col(11, 13), 9, enc.col(12, 14))
    );
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 5}, "contentChanges": [
            {"range": range(9, enc.col(12, 14), 9, enc.col(12, 14)), "text": "]] [q][l"}
        ]}),
    )
    .await;
    let r = c
        .call(
            "textDocument/completion",
            at(&c, "a.md", 9, enc.col(20, 22)),
        )
        .await;
    assert_eq!(r[0]["label"], "lbl");
    assert_eq!(
        r[0]["textEdit"]["range"],
        range(9, enc.col(19, 21), 9, enc.col(20, 22))
    );
    // Anchors of this document after `](#`, with a partly typed anchor replaced.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 6}, "contentChanges": [
            {"range": range(9, enc.col(20, 22), 9, enc.col(20, 22)), "text": "] [s](#se"}
        ]}),
    )
    .await;
    let r = c
        .call(
            "textDocument/completion",
            at(&c, "a.md", 9, enc.col(29, 31)),
        )
        .await;
    assert_eq!(
        r.as_array()
            .unwrap()
            .iter()
            .map(|i| i["label"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["alpha", "set-up"]
    );
    assert_eq!(
        r[1]["textEdit"],
        json!({"range": range(9, enc.col(27, 29), 9, enc.col(29, 31)), "newText": "set-up"})
    );
}

async fn rename_heading(enc: Enc) {
    let mut c = start(enc).await;
    let (a, b) = (c.uri("a.md"), c.uri("b.md"));
    // prepareRename on the anchor after the emoji names the heading.
    let r = c
        .call(
            "textDocument/prepareRename",
            at(&c, "a.md", 4, enc.col(46, 48)),
        )
        .await;
    assert_eq!(
        r,
        json!({"range": range(4, enc.col(45, 47), 4, enc.col(51, 53)), "placeholder": "Set Up"})
    );
    let r = c
        .call("textDocument/prepareRename", at(&c, "a.md", 2, 5))
        .await;
    assert_eq!(
        r,
        json!({"range": range(2, 3, 2, 9), "placeholder": "Set Up"})
    );
    let mut params = at(&c, "a.md", 4, enc.col(46, 48));
    params["newName"] = json!("Getting Started");
    let r = c.call("textDocument/rename", params).await;
    assert_eq!(
        r,
        json!({"changes": {
            a.clone(): [
                {"range": range(2, 3, 2, 9), "newText": "Getting Started"},
                {"range": range(4, enc.col(45, 47), 4, enc.col(51, 53)), "newText": "getting-started"},
            ],
            b.clone(): [{"range": range(4, 17, 4, 23), "newText": "getting-started"}],
        }})
    );
    // Renaming `# Alpha` to "Set Up" would turn the later `## Set Up` (#set-up, which links
    // use) into #set-up-1: refused with the reason.
    let mut params = at(&c, "a.md", 0, 3);
    params["newName"] = json!("Set Up");
    let r = c.request("textDocument/rename", params).await;
    assert_eq!(
        r["error"]["message"],
        "textDocument/rename: renaming to `Set Up` would change the anchor of heading `Set Up` from #set-up to #set-up-1; choose a name no other heading has",
        "{r}"
    );
    // Renaming the later heading to an earlier one's name is safe: it becomes #alpha-1.
    let mut params = at(&c, "a.md", 2, 5);
    params["newName"] = json!("Alpha");
    let r = c.call("textDocument/rename", params).await;
    assert_eq!(
        r["changes"][b.clone()],
        json!([{"range": range(4, 17, 4, 23), "newText": "alpha-1"}])
    );
    // Nothing to rename on plain text: an error for this request only.
    let mut params = at(&c, "a.md", 4, 1);
    params["newName"] = json!("x");
    let r = c.request("textDocument/rename", params).await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert_eq!(
        c.call("textDocument/prepareRename", at(&c, "a.md", 4, 1))
            .await,
        Value::Null
    );
}

async fn rename_reference_label(enc: Enc) {
    let mut c = start(enc).await;
    let a = c.uri("a.md");
    let mut params = at(&c, "a.md", 6, 9);
    params["newName"] = json!("label");
    let r = c.call("textDocument/rename", params).await;
    assert_eq!(
        r,
        json!({"changes": {a: [
            {"range": range(6, 8, 6, 11), "newText": "label"},
            {"range": range(8, 1, 8, 4), "newText": "label"},
        ]}})
    );
}

async fn will_rename_files(enc: Enc) {
    let mut c = start(enc).await;
    let (a, b) = (c.uri("a.md"), c.uri("b.md"));
    let new = c.uri("sub/bee.md");
    let r = c
        .call(
            "workspace/willRenameFiles",
            json!({"files": [{"oldUri": b, "newUri": new}]}),
        )
        .await;
    assert_eq!(
        r,
        json!({"changes": {
            a.clone(): [
                {"range": range(4, enc.col(18, 20), 4, enc.col(22, 24)), "newText": "sub/bee.md"},
                {"range": range(5, 28, 5, 32), "newText": "sub/bee.md"},
                {"range": range(6, 19, 6, 20), "newText": "bee"},
                {"range": range(6, 29, 6, 30), "newText": "bee"},
                {"range": range(8, 7, 8, 11), "newText": "sub/bee.md"},
            ],
            b.clone(): [{"range": range(4, 12, 4, 16), "newText": "../a.md"}],
        }})
    );
}

async fn document_links(enc: Enc) {
    let mut c = start(enc).await;
    let b = c.uri("b.md");
    let r = c
        .call(
            "textDocument/documentLink",
            json!({"textDocument": {"uri": c.uri("a.md")}}),
        )
        .await;
    let link =
        |l1, c1, l2, c2| json!({"range": range(l1, c1, l2, c2), "target": b, "tooltip": "b.md"});
    assert_eq!(
        r,
        json!([
            link(4, enc.col(18, 20), 4, enc.col(31, 33)),
            link(5, 28, 5, 41),
            link(6, 19, 6, 20),
            link(6, 29, 6, 30),
            link(8, 7, 8, 11),
        ])
    );
}

async fn folding_ranges(enc: Enc) {
    let mut c = start(enc).await;
    let r = c
        .call(
            "textDocument/foldingRange",
            json!({"textDocument": {"uri": c.uri("a.md")}}),
        )
        .await;
    assert_eq!(
        r,
        json!([{"startLine": 0, "endLine": 8}, {"startLine": 2, "endLine": 8}])
    );
}

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
                "edit": {"documentChanges": [{"kind": "create", "uri": missing, "options": {"overwrite": false, "ignoreIfExists": true}}]}
            },
            {
                "title": "Change anchor to `#beta-two`", "kind": "quickfix", "diagnostics": [d[1]], "isPreferred": true,
                "edit": {"changes": {a: [{"range": range(5, 33, 5, 41), "newText": "beta-two"}]}}
            },
        ])
    );
    // A client that cannot create files gets only the anchor fix.
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
        ["Change anchor to `#beta-two`"]
    );
}

async fn workspace_symbols(enc: Enc) {
    let mut c = start(enc).await;
    let b = c.uri("b.md");
    let r = c
        .call("workspace/symbol", json!({"query": "betatwo"}))
        .await;
    assert_eq!(
        r,
        json!([{"name": "Beta Two", "kind": 15, "location": {"uri": b, "range": range(2, 0, 2, 11)}, "containerName": "b.md"}])
    );
    let r = c.call("workspace/symbol", json!({"query": "alpha"})).await;
    let names: Vec<(&str, i64)> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["kind"].as_i64().unwrap()))
        .collect();
    assert_eq!(names, [("Alpha", 1), ("Alpha", 15)]);
}

async fn configuration_silences_codes(enc: Enc) {
    let mut c = start(enc).await;
    assert_eq!(c.diagnostics("a.md").await.as_array().unwrap().len(), 2);
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"folio": {"diagnostics": {"silence": ["missing-file"]}}}}),
    )
    .await;
    let d = c.diagnostics("a.md").await;
    assert_eq!(
        summarize(&d).into_iter().map(|d| d.0).collect::<Vec<_>>(),
        ["missing-heading"]
    );
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"folio": {"diagnostics": {"silence_targets": ["b.md#*"], "fragment_case_sensitive": true}}}}),
    )
    .await;
    let d = c.diagnostics("a.md").await;
    assert_eq!(
        summarize(&d).into_iter().map(|d| d.0).collect::<Vec<_>>(),
        ["missing-file"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configuration_sets_the_wiki_style() {
    let mut c = Client::start(
        &[("a.md", "[[Beta Two]]\n"), ("b.md", "# Beta Two\n")],
        Enc::Utf16,
        json!({}),
    )
    .await;
    c.open("a.md").await;
    assert_eq!(
        summarize(&c.diagnostics("a.md").await)[0].0,
        "missing-wiki-target"
    );
    // With the title style, `[[Beta Two]]` names the document titled "Beta Two".
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"folio": {"wiki": {"style": "title"}}}}),
    )
    .await;
    assert_eq!(c.diagnostics("a.md").await, json!([]));
    let r = c
        .call("textDocument/definition", at(&c, "a.md", 0, 4))
        .await;
    assert_eq!(r, json!({"uri": c.uri("b.md"), "range": range(0, 0, 0, 0)}));
    // Retitling b.md in the editor breaks the link; the linking document is re-checked.
    c.open("b.md").await;
    let b = c.uri("b.md");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": b, "version": 2}, "contentChanges": [{"range": range(0, 2, 0, 10), "text": "Gamma"}]}),
    )
    .await;
    assert_eq!(
        summarize(&c.diagnostics("a.md").await)[0].0,
        "missing-wiki-target"
    );
}

async fn watched_files_update_dependents(enc: Enc) {
    let mut c = Client::start(
        &[("a.md", A), ("b.md", B)],
        enc,
        json!({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}}),
    )
    .await;
    c.open("a.md").await;
    assert_eq!(c.diagnostics("a.md").await.as_array().unwrap().len(), 2);
    // Creating `missing.md` fixes the missing-file diagnostic of a.md, which links to it.
    common::write_files(c.dir.path(), &[("missing.md", "# M\n")]);
    let uri = c.uri("missing.md");
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri, "type": 1}]}),
    )
    .await;
    let d = c.diagnostics("a.md").await;
    assert_eq!(
        summarize(&d).into_iter().map(|d| d.0).collect::<Vec<_>>(),
        ["missing-heading"]
    );
    // Changing b.md's headings on disk fixes the anchor; deleting b.md breaks every link to it.
    common::write_files(c.dir.path(), &[("b.md", "# Beta\n## Beta Tow\n")]);
    let b = c.uri("b.md");
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": b, "type": 2}]}),
    )
    .await;
    let d = c.diagnostics("a.md").await;
    let found: Vec<(String, Value)> = summarize(&d).into_iter().map(|d| (d.0, d.1)).collect();
    assert_eq!(
        found,
        [
            (
                "missing-heading".to_string(),
                range(4, enc.col(23, 25), 4, enc.col(31, 33))
            ),
            ("missing-heading".to_string(), range(6, 31, 6, 39)),
        ]
    );
    std::fs::remove_file(c.path("b.md")).unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": b, "type": 3}]}),
    )
    .await;
    let d = c.diagnostics("a.md").await;
    let codes: Vec<String> = summarize(&d).into_iter().map(|d| d.0).collect();
    assert_eq!(
        codes,
        [
            "missing-file",
            "missing-file",
            "missing-wiki-target",
            "missing-wiki-target",
            "missing-file"
        ]
    );
    assert!(
        c.server_requests
            .iter()
            .any(|(m, _)| m == "client/registerCapability")
    );
}
