//! `kb://` resources: documents, topic groups and files.

use super::{GUIDE, setup};
use crate::host::resources::Contents;
use crate::host::{Host, doc_uri};

/// The Markdown of a `kb://doc/` or `kb://topic/` resource.
fn markdown(kb: &Host, uri: &str) -> String {
    match kb.read_resource(uri).unwrap() {
        Contents::Markdown(text) => text,
        Contents::Blob(..) | Contents::Text(_) => panic!("{uri} is not Markdown"),
    }
}

#[test]
fn resources_serve_indexed_documents_and_topic_groups() {
    let (dir, kb) = setup(false);
    assert_eq!(markdown(&kb, "kb://doc/docs/guide.md"), GUIDE);
    assert_eq!(
        markdown(&kb, "kb://topic/docs"),
        "# Documents in `docs`\n\n- [Guide](kb://doc/docs/guide.md) — `docs/guide.md`\n- [Other](kb://doc/docs/more/other.md) — `docs/more/other.md`\n"
    );
    let groups: Vec<(String, usize)> = kb
        .topic_groups()
        .unwrap()
        .into_iter()
        .map(|g| (g.prefix, g.count))
        .collect();
    assert_eq!(
        groups,
        vec![("".into(), 3), ("docs".into(), 2), ("docs/more".into(), 1)]
    );
    // Only indexed documents: a new file is not served until it is indexed.
    std::fs::write(dir.path().join("late.md"), "# Late\n").unwrap();
    assert_eq!(
        serde_json::to_value(kb.read_resource("kb://doc/late.md").unwrap_err()).unwrap()["code"],
        "NOT_FOUND"
    );
    assert_eq!(
        serde_json::to_value(kb.read_resource("kb://doc/..%2Findex.md").unwrap_err()).unwrap()["code"],
        "INVALID_PATH"
    );
    // `kb://file/` is the URI of kb_download_file's embedded resource: any file's bytes.
    std::fs::write(dir.path().join("docs/logo.png"), b"\x89PNG\r\n\x1a\nrest").unwrap();
    match kb.read_resource("kb://file/docs/logo.png").unwrap() {
        Contents::Blob(data, mime_type) => {
            assert_eq!(data, b"\x89PNG\r\n\x1a\nrest");
            assert_eq!(mime_type, "image/png");
        }
        Contents::Markdown(_) | Contents::Text(_) => panic!("a PNG read as text"),
    }
    assert_eq!(
        serde_json::to_value(kb.read_resource("kb://file/..%2Fx.png").unwrap_err()).unwrap()["code"],
        "INVALID_PATH"
    );
    // Percent-encoding keeps `/` and encodes the rest.
    assert_eq!(
        doc_uri("a b/日本.md"),
        "kb://doc/a%20b/%E6%97%A5%E6%9C%AC.md"
    );
}
