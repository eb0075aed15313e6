//! Tests of kb_links: outgoing and incoming links, the walk, broken links, and edits made
//! by other programs.

use serde_json::{Value, json};

use super::{ok, setup};
use crate::host::links::LinksArgs;

#[test]
fn kb_links_outgoing_incoming_walk_and_broken() {
    let (_dir, kb) = setup(false);
    let v = ok(kb.links(&LinksArgs {
        path: "index.md".into(),
        direction: None,
        depth: Some(2),
        include_external: false,
    }));
    assert_eq!(
        v,
        json!({
            "path": "index.md",
            "outgoing": [
                {"line": 3, "kind": "inline", "status": "document", "target": "docs/guide.md", "fragment": "steps", "dest": "docs/guide.md"},
                {"line": 3, "kind": "inline", "status": "missing", "dest": "nope.md"}
            ],
            "incoming": [{"source": "docs/more/other.md", "line": 3, "kind": "inline"}],
            "walk": [
                {"path": "docs/guide.md", "depth": 1, "via": "index.md", "direction": "outgoing"},
                {"path": "docs/more/other.md", "depth": 1, "via": "index.md", "direction": "incoming"}
            ],
            "broken": [{"code": "missing-file", "severity": "error", "line": 3, "message": "file `nope.md` does not exist (resolved to `nope.md`)"}]
        })
    );
}

#[test]
fn kb_links_sees_edits_made_by_other_programs() {
    let (dir, kb) = setup(false);
    let args = LinksArgs {
        path: "index.md".into(),
        direction: Some("incoming".into()),
        depth: None,
        include_external: false,
    };
    let sources = |v: Value| -> Vec<String> {
        v["incoming"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["source"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(sources(ok(kb.links(&args))), ["docs/more/other.md"]);
    std::fs::write(dir.path().join("new.md"), "# New\n\n[home](index.md)\n").unwrap();
    assert_eq!(
        sources(ok(kb.links(&args))),
        ["docs/more/other.md", "new.md"]
    );
    std::fs::write(
        dir.path().join("new.md"),
        "# New\n\nno link any more, and longer\n",
    )
    .unwrap();
    assert_eq!(sources(ok(kb.links(&args))), ["docs/more/other.md"]);
    std::fs::remove_file(dir.path().join("docs/more/other.md")).unwrap();
    assert!(sources(ok(kb.links(&args))).is_empty());
}
