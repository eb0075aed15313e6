//! Diagnostics pushed with `publishDiagnostics`, with every code's range, before and after
//! an edit; pulled with `textDocument/diagnostic` and `workspace/diagnostic` (result ids,
//! `unchanged` reports, recomputation after an edit); pushed for closed documents with
//! `[diagnostics].publish = "workspace"`.

use serde_json::{Value, json};

use crate::common::{Client, Enc, range, summarize};
use crate::{A, B, start};

both_encodings!(
    diagnostics_are_pushed_with_every_code_range,
    workspace_diagnostics_are_pulled,
    workspace_setting_pushes_closed_documents
);

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
    // The document silences that code on that line, after the link: the diagnostic goes.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [
            {"range": range(4, enc.col(19, 21), 4, enc.col(19, 21)), "text": "<!-- folio-ignore missing-heading --> "}
        ]}),
    )
    .await;
    let d = c.diagnostics("a.md").await;
    assert_eq!(
        summarize(&d)
            .into_iter()
            .map(|s| (s.0, s.1["start"]["line"].clone()))
            .collect::<Vec<_>>(),
        vec![
            ("missing-file".to_string(), json!(5)),
            ("missing-heading".to_string(), json!(5)),
        ]
    );
}

/// A closed document with a broken link after non-ASCII text: `é` is one UTF-16 unit and
/// two UTF-8 bytes, `😀` two units and four bytes.
const C: &str = "Café 😀 [x](nope.md)\n";

/// The diagnostics of a.md (open) and c.md (closed), as the client receives them.
fn a_items() -> Value {
    json!([
        {"range": range(5, 8, 5, 18), "severity": 1, "code": "missing-file", "source": "folio",
         "message": "file `missing.md` does not exist (resolved to `missing.md`)"},
        {"range": range(5, 33, 5, 41), "severity": 1, "code": "missing-heading", "source": "folio",
         "message": "no heading or anchor `#beta-tow` in `b.md`"},
    ])
}

fn c_items(enc: Enc) -> Value {
    json!([
        {"range": range(0, enc.col(12, 15), 0, enc.col(19, 22)), "severity": 1, "code": "missing-file", "source": "folio",
         "message": "file `nope.md` does not exist (resolved to `nope.md`)"},
    ])
}

async fn workspace_diagnostics_are_pulled(enc: Enc) {
    // A client that pulls and can be asked to pull again (VS Code).
    let caps = json!({"textDocument": {"diagnostic": {}}, "workspace": {"diagnostics": {"refreshSupport": true}}});
    let mut c = Client::start(&[("a.md", A), ("b.md", B), ("c.md", C)], enc, caps).await;
    c.open("a.md").await;
    let (a, cc) = (c.uri("a.md"), c.uri("c.md"));
    // Every document with problems, open (with its version) or not; b.md has none.
    let r = c
        .call("workspace/diagnostic", json!({"previousResultIds": []}))
        .await;
    let reports = r["items"].as_array().unwrap();
    assert_eq!(reports.len(), 2, "{r}");
    let (id_a, id_c) = (
        reports[0]["resultId"].clone(),
        reports[1]["resultId"].clone(),
    );
    assert!(id_a.is_string() && id_c.is_string() && id_a != id_c, "{r}");
    assert_eq!(
        r,
        json!({"items": [
            {"kind": "full", "uri": a.clone(), "version": 1, "resultId": id_a.clone(), "items": a_items()},
            {"kind": "full", "uri": cc.clone(), "version": null, "resultId": id_c.clone(), "items": c_items(enc)},
        ]})
    );
    // Asked again with those ids: nothing changed.
    let previous = json!({"previousResultIds": [{"uri": a.clone(), "value": id_a.clone()}, {"uri": cc.clone(), "value": id_c.clone()}]});
    let r = c.call("workspace/diagnostic", previous.clone()).await;
    assert_eq!(
        r,
        json!({"items": [
            {"kind": "unchanged", "uri": a.clone(), "version": 1, "resultId": id_a.clone()},
            {"kind": "unchanged", "uri": cc.clone(), "version": null, "resultId": id_c.clone()},
        ]})
    );
    let r = c
        .call(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": a.clone()}, "previousResultId": id_a.clone()}),
        )
        .await;
    assert_eq!(r, json!({"kind": "unchanged", "resultId": id_a.clone()}));
    // An edit in a.md fixes `missing.md`: a.md is recomputed (a new id, one problem left),
    // c.md is not affected and stays unchanged.
    c.change(
        "a.md",
        vec![json!({"range": range(5, 8, 5, 18), "text": "b.md"})],
    )
    .await;
    let r = c.call("workspace/diagnostic", previous.clone()).await;
    let id_a2 = r["items"][0]["resultId"].clone();
    assert!(id_a2.is_string() && id_a2 != id_a, "{r}");
    assert_eq!(
        r,
        json!({"items": [
            {"kind": "full", "uri": a.clone(), "version": 2, "resultId": id_a2.clone(), "items": [
                {"range": range(5, 27, 5, 35), "severity": 1, "code": "missing-heading", "source": "folio",
                 "message": "no heading or anchor `#beta-tow` in `b.md`"},
            ]},
            {"kind": "unchanged", "uri": cc.clone(), "version": null, "resultId": id_c.clone()},
        ]})
    );
    // A document pull gets the same full report.
    let r = c
        .call(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": a.clone()}, "previousResultId": id_a.clone()}),
        )
        .await;
    assert_eq!(r["kind"], "full");
    assert_eq!(r["resultId"], id_a2);
    // A pulling client is never pushed to: the same diagnostics do not arrive twice.
    c.call("workspace/symbol", json!({"query": ""})).await;
    assert_eq!(
        c.take("textDocument/publishDiagnostics"),
        Vec::<Value>::new()
    );
}

async fn workspace_setting_pushes_closed_documents(enc: Enc) {
    let toml = "[diagnostics]\npublish = \"workspace\"\n";
    let mut c = Client::start(
        &[("a.md", A), ("b.md", B), ("c.md", C), ("folio.toml", toml)],
        enc,
        json!({}),
    )
    .await;
    // Pushed after the initial scan for the closed documents that have problems.
    assert_eq!(c.diagnostics("c.md").await, c_items(enc));
    assert_eq!(c.diagnostics("a.md").await, a_items());
    // Opened and closed, c.md keeps its diagnostics (its disk copy's).
    c.open("c.md").await;
    assert_eq!(c.diagnostics("c.md").await, c_items(enc));
    let uri = c.uri("c.md");
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    )
    .await;
    assert_eq!(c.diagnostics("c.md").await, c_items(enc));
    // Back to open documents only (a client setting): the closed documents are cleared.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"folio": {"diagnostics": {"publish": "open"}}}}),
    )
    .await;
    assert_eq!(c.diagnostics("a.md").await, json!([]));
    assert_eq!(c.diagnostics("c.md").await, json!([]));
}
