//! `workspace/didChangeConfiguration`: silenced codes and targets, and the wiki link style.

use serde_json::json;

use crate::common::{Client, Enc, range, summarize};
use crate::{at, start};

both_encodings!(configuration_silences_codes);

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
