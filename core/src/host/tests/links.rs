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

/// A reference link leads where its definition does; one without a definition is missing;
/// a footnote points at its definition in the same document.
#[test]
fn kb_links_resolves_references_through_their_definitions() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("b.md"), "# B\n").unwrap();
    std::fs::write(
        dir.path().join("a.md"),
        "[one][b] [two][gone] ![pic][img] [three][nowhere] note[^1]\n\n[b]: b.md#b\n[gone]: gone.md\n[img]: https://x.test/p.png\n\n[^1]: Text.\n",
    )
    .unwrap();
    let kb = super::open_at(dir.path(), false);
    let v = ok(kb.links(&LinksArgs {
        path: "a.md".into(),
        direction: Some("outgoing".into()),
        depth: None,
        include_external: true,
    }));
    let rows: Vec<String> = v["outgoing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            format!(
                "{} {} {} {}",
                l["kind"].as_str().unwrap(),
                l["status"].as_str().unwrap(),
                l["target"].as_str().unwrap_or("-"),
                l["fragment"].as_str().unwrap_or("-")
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            "reference document b.md b",
            "reference missing - -",
            "image_reference external - -",
            "undefined_reference missing - -",
            "footnote definition - -",
            "definition document b.md b",
            "definition missing - -",
            "definition external - -",
        ]
    );
}

#[test]
fn kb_links_orphans_are_the_documents_nothing_links_to() {
    let (dir, kb) = setup(false);
    let orphans = |path: &str| {
        kb.links(&LinksArgs {
            path: path.into(),
            direction: Some("orphans".into()),
            depth: None,
            include_external: false,
        })
    };
    // index.md links to docs/guide.md, docs/more/other.md to index.md; nothing to other.md.
    assert_eq!(
        ok(orphans("")),
        json!({"path": "", "outgoing": [], "incoming": [], "walk": [], "broken": [],
               "orphans": ["docs/more/other.md"]})
    );
    assert_eq!(
        ok(orphans("docs/more/"))["orphans"],
        json!(["docs/more/other.md"])
    );
    assert_eq!(ok(orphans("docs/more"))["path"], json!("docs/more"));
    assert_eq!(ok(orphans("."))["orphans"], json!(["docs/more/other.md"]));
    assert_eq!(ok(orphans("./docs/"))["path"], json!("docs"));
    // A folder with no note has no orphan.
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    assert_eq!(ok(orphans("empty"))["orphans"], json!([]));
    assert_eq!(super::err(orphans("/"))["code"], "INVALID_PATH");
    assert_eq!(super::err(orphans("docs//more"))["code"], "INVALID_PATH");
    assert_eq!(super::err(orphans("index.md"))["code"], "NOT_FOUND");
    assert_eq!(super::err(orphans("nowhere"))["code"], "NOT_FOUND");
    assert_eq!(super::err(orphans("../x"))["code"], "INVALID_PATH");
    // As a client sends them: `path` null or omitted is the whole knowledge base.
    for args in [
        json!({"path": null, "direction": "orphans"}),
        json!({"direction": "orphans"}),
    ] {
        let args: LinksArgs = serde_json::from_value(args).unwrap();
        assert_eq!(args.path, "");
        assert_eq!(
            ok(kb.links(&args))["orphans"],
            json!(["docs/more/other.md"])
        );
    }
}

#[test]
fn a_reference_link_shows_its_definitions_destination() {
    let (dir, kb) = setup(true);
    std::fs::write(
        dir.path().join("refs.md"),
        "# Refs\n\nThe [guide][g], the [gone][x] and [nothing][none].\n\n[g]: docs/guide.md#steps\n[x]: gone.md\n",
    )
    .unwrap();
    let v = ok(kb.links(&LinksArgs {
        path: "refs.md".into(),
        direction: Some("outgoing".into()),
        depth: None,
        include_external: false,
    }));
    assert_eq!(
        v["outgoing"],
        json!([
            {"line": 3, "kind": "reference", "status": "document", "target": "docs/guide.md", "fragment": "steps", "dest": "docs/guide.md"},
            {"line": 3, "kind": "reference", "status": "missing", "dest": "gone.md"},
            {"line": 3, "kind": "undefined_reference", "status": "missing", "dest": ""},
            {"line": 5, "kind": "definition", "status": "document", "target": "docs/guide.md", "fragment": "steps", "dest": "docs/guide.md"},
            {"line": 6, "kind": "definition", "status": "missing", "dest": "gone.md"}
        ])
    );
}
