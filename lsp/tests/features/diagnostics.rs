//! Diagnostics pushed with `publishDiagnostics`, with every code's range, before and after
//! an edit.

use serde_json::json;

use crate::common::{Enc, range, summarize};
use crate::start;

both_encodings!(diagnostics_are_pushed_with_every_code_range);

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
