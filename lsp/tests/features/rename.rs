//! `textDocument/prepareRename`, `textDocument/rename` (headings and reference labels) and
//! `workspace/willRenameFiles`.

use serde_json::{Value, json};

use crate::common::{Enc, range};
use crate::{at, start};

both_encodings!(rename_heading, rename_reference_label, will_rename_files);

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
