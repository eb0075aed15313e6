//! In-process tests of every tool against a small knowledge base on disk, with exact
//! expected JSON.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::pointer::{hash_bytes, hex};
use serde_json::{Value, json};

use super::edit::*;
use super::files::*;
use super::links::LinksArgs;
use super::read::*;
use super::search::SearchRequest;
use super::*;

const GUIDE: &str = "---\ntitle: Guide\ntags: [setup]\ndate: 2026-01-15\n---\n# Guide\n\nInstall the widget first.\n\n## Steps\n\n- one\n  - one.a\n- two\n\n## Prices\n\n| Item | Price |\n|:-----|------:|\n| Widget | 10 |\n| Gadget | 20 |\n";
const INDEX: &str = "# Home\n\nSee the [guide](docs/guide.md#steps) and [missing](nope.md).\n";
const OTHER: &str = "# Other\n\nBack [home](../../index.md), [guide](../guide.md).\n";

fn h(s: &str) -> String {
    hex(hash_bytes(s.as_bytes()))
}

fn setup(allow_writes: bool) -> (tempfile::TempDir, Arc<Host>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("docs/more")).unwrap();
    std::fs::write(root.join("index.md"), INDEX).unwrap();
    std::fs::write(root.join("docs/guide.md"), GUIDE).unwrap();
    std::fs::write(root.join("docs/more/other.md"), OTHER).unwrap();
    std::fs::write(root.join("docs/logo.png"), b"\x89PNG\r\n\x1a\nfake").unwrap();
    let kb = Arc::new(
        Host::open(Options {
            root: root.to_path_buf(),
            db: None,
            allow_writes,
            embed: Err("embeddings are off in this test".into()),
        })
        .unwrap(),
    );
    let last = kb.reindex_blocking(false).unwrap();
    assert!(last.ok, "{last:?}");
    (dir, kb)
}

fn err<T: std::fmt::Debug>(r: HostResult<T>) -> Value {
    serde_json::to_value(r.unwrap_err()).unwrap()
}

fn ok<T: serde::Serialize>(r: HostResult<T>) -> Value {
    match r {
        Ok(v) => serde_json::to_value(v).unwrap(),
        Err(e) => panic!("tool failed: {e:?}"),
    }
}

/// Every file under `root` (except the index) with its bytes.
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().to_string();
            if rel.starts_with(".folio") {
                continue;
            }
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p);
                out.insert(format!("{rel}/"), Vec::new());
            } else {
                out.insert(rel, std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

fn ptr_of(kb: &Host, path: &str, logical: &str) -> String {
    let text = std::fs::read_to_string(kb.root().join(path)).unwrap();
    crate::parse::parse(&text)
        .elements
        .iter()
        .find(|e| e.logical == logical)
        .unwrap()
        .pointer()
        .to_string()
}

#[test]
fn kb_status_reports_counts_and_the_last_reindex() {
    let (_dir, kb) = setup(false);
    let mut v = ok(kb.status());
    v["index"]["db_size_bytes"] = json!(0);
    for volatile in ["finished_at_ms", "elapsed_ms"] {
        v["indexing"]["last"][volatile] = json!(0);
    }
    v["root"] = json!("ROOT");
    assert_eq!(
        v,
        json!({
            "root": "ROOT",
            "allow_writes": false,
            "search_modes": ["lexical"],
            "embedding": {
                "state": "off", "done": 0, "total": 0, "embedded_chunks": 0, "total_chunks": 5,
                "skipped_files": 0, "reason": "embeddings are off in this test"
            },
            "index": {"documents": 3, "chunks": 5, "db_size_bytes": 0, "schema_version": crate::store::SCHEMA_VERSION},
            "indexing": {
                "state": "idle", "force": false, "done": 0, "total": 0, "started_at_ms": 0,
                "last": {"ok": true, "finished_at_ms": 0, "elapsed_ms": 0, "files": 3, "indexed": 3, "unchanged": 0, "removed": 0, "skipped": 0}
            }
        })
    );
}

#[test]
fn kb_reindex_starts_or_joins_and_reports_in_status() {
    let (_dir, kb) = setup(false);
    // While a pass runs, a call joins it instead of starting another.
    kb.pretend_running(true);
    let joined = ok(kb.start_reindex(true));
    assert_eq!(
        (&joined["started"], &joined["indexing"]["state"]),
        (&json!(false), &json!("running"))
    );
    kb.pretend_running(false);

    let mut first = ok(kb.start_reindex(true));
    assert!(first["indexing"]["started_at_ms"].as_u64().unwrap() > 0);
    first["indexing"]["started_at_ms"] = json!(0);
    assert_eq!(first["indexing"]["last"]["ok"], json!(true));
    first["indexing"]["last"] = json!(null);
    assert_eq!(
        first,
        json!({"started": true, "indexing": {"state": "running", "force": true, "done": 0, "total": 0, "started_at_ms": 0, "last": null}})
    );
    // Wait for the background pass; its result lands in kb_status.
    for _ in 0..500 {
        if kb.status().unwrap().indexing.state == "idle" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let last = kb.status().unwrap().indexing.last.unwrap();
    assert_eq!(
        (last.ok, last.files, last.indexed, last.unchanged),
        (true, 3, 3, 0)
    );
}

#[test]
fn kb_search_returns_hits_with_uri_and_filters() {
    let (_dir, kb) = setup(false);
    let mut v = ok(kb.search(&SearchRequest {
        query: "widget".into(),
        tags_any: vec!["setup".into()],
        limit: Some(1),
        ..SearchRequest::default()
    }));
    assert!(v["results"][0]["score"].as_f64().unwrap() > 0.0);
    v["results"][0]["score"] = json!(1.0);
    let guide_ptr = ptr_of(&kb, "docs/guide.md", "1");
    assert_eq!(
        v,
        json!({
            "results": [{
                "path": "docs/guide.md",
                "pointer": guide_ptr,
                "heading_path": ["Guide"],
                "start_line": 6,
                "end_line": 8,
                "score": 1.0,
                "lexical_rank": 1,
                "snippet": "# Guide Install the widget first.",
                "indexedSourceHash": h(GUIDE),
                "uri": "kb://doc/docs/guide.md",
                "file_uri": format!("file://{}/docs/guide.md", kb.root().display())
            }],
            "low_confidence": false,
            "filter_applied": ["tags_any"],
            "mode": "lexical",
            "indexing": false,
            "embedding": false
        })
    );
    // Nothing found: low confidence, not an error.
    let v = ok(kb.search(&SearchRequest {
        query: "zebra".into(),
        category: Some("docs".into()),
        ..SearchRequest::default()
    }));
    assert_eq!(
        v,
        json!({"results": [], "low_confidence": true, "filter_applied": ["category"], "mode": "lexical", "indexing": false, "embedding": false})
    );
    // Frontmatter fields, required and excluded.
    let fields = |key: &str, v: &str| {
        std::collections::BTreeMap::from([(key.to_string(), vec![v.to_string()])])
    };
    let v = ok(kb.search(&SearchRequest {
        query: "widget".into(),
        fields: fields("title", "Guide"),
        ..SearchRequest::default()
    }));
    let paths: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        (paths, &v["filter_applied"]),
        (vec!["docs/guide.md", "docs/guide.md"], &json!(["fields"]))
    );
    let v = ok(kb.search(&SearchRequest {
        query: "widget".into(),
        fields: fields("tags", "setup"),
        fields_not: fields("title", "Guide"),
        ..SearchRequest::default()
    }));
    assert_eq!(
        (v["results"].as_array().unwrap().len(), &v["filter_applied"]),
        (0, &json!(["fields", "fields_not"]))
    );
    let v = ok(kb.search(&SearchRequest {
        query: "home".into(),
        fields_not: fields("title", "Guide"),
        ..SearchRequest::default()
    }));
    assert_eq!(
        v["results"][0]["path"],
        json!("index.md"),
        "documents without the key stay"
    );
    assert_eq!(
        err(kb.search(&SearchRequest {
            query: "x".into(),
            fields: fields("a\"b", "1"),
            ..SearchRequest::default()
        }))["code"],
        "INVALID_ARGUMENT"
    );
    // Quality: every fixture document is short, so a high floor leaves nothing; an
    // out-of-range floor is an argument error.
    let v = ok(kb.search(&SearchRequest {
        query: "widget".into(),
        min_quality: Some(0.99),
        ..SearchRequest::default()
    }));
    assert_eq!(
        (v["results"].as_array().unwrap().len(), &v["filter_applied"]),
        (0, &json!(["min_quality"]))
    );
    assert_eq!(
        err(kb.search(&SearchRequest {
            query: "x".into(),
            min_quality: Some(1.5),
            ..SearchRequest::default()
        })),
        json!({"code": "INVALID_ARGUMENT", "message": "min_quality 1.5 is not between 0 and 1"})
    );
    // Bad dates and modes.
    assert_eq!(
        err(kb.search(&SearchRequest {
            query: "x".into(),
            date_from: Some("2026-1-1".into()),
            ..SearchRequest::default()
        }))["code"],
        "INVALID_ARGUMENT"
    );
    // Without vectors, hybrid runs lexical and says so; semantic and rerank are NOT_CONFIGURED.
    let v = ok(kb.search(&SearchRequest {
        query: "widget".into(),
        mode: Some("hybrid".into()),
        ..SearchRequest::default()
    }));
    assert_eq!(v["mode"], "lexical");
    assert_eq!(
        err(kb.search(&SearchRequest {
            query: "x".into(),
            mode: Some("semantic".into()),
            ..SearchRequest::default()
        })),
        json!({"code": "NOT_CONFIGURED", "message": "semantic search is not available: embeddings are off: embeddings are off in this test; use mode lexical"})
    );
    assert_eq!(
        err(kb.search(&SearchRequest {
            query: "x".into(),
            rerank: Some(true),
            ..SearchRequest::default()
        })),
        json!({"code": "NOT_CONFIGURED", "message": "rerank needs a cross-encoder model and none is available; search without rerank"})
    );
    assert_eq!(
        err(kb.search(&SearchRequest {
            query: "x".into(),
            mode: Some("fuzzy".into()),
            ..SearchRequest::default()
        })),
        json!({"code": "INVALID_ARGUMENT", "message": "unknown search mode `fuzzy` (expected lexical, semantic or hybrid)"})
    );
    assert_eq!(
        err(kb.search(&SearchRequest {
            query: "x".into(),
            mmr: Some(true),
            mmr_lambda: Some(1.5),
            ..SearchRequest::default()
        }))["code"],
        "INVALID_ARGUMENT"
    );
}

#[test]
fn kb_read_whole_document_by_pointer_and_paged() {
    let (_dir, kb) = setup(false);
    let v = ok(kb.read(&ReadArgs {
        path: "index.md".into(),
        ..ReadArgs::default()
    }));
    assert_eq!(
        v,
        json!({
            "path": "index.md",
            "sourceHash": h(INDEX),
            "reanchored": false,
            "text": INDEX,
            "offset": 0,
            "total_bytes": INDEX.len(),
            "elements": [
                {"pointer": format!("1~{}~{}", h("# Home"), h(INDEX.trim_end())), "kind": "heading", "level": 1, "start_line": 1, "end_line": 1},
                {"pointer": format!("1.p1~{0}~{0}", h("See the [guide](docs/guide.md#steps) and [missing](nope.md).")), "kind": "paragraph", "start_line": 3, "end_line": 3}
            ]
        })
    );
    // A table pointer: the table's text plus columns and rows.
    let t = ptr_of(&kb, "docs/guide.md", "1.2.t1");
    let v = ok(kb.read(&ReadArgs {
        path: "docs/guide.md".into(),
        pointer: Some(t.clone()),
        ..ReadArgs::default()
    }));
    let table_src = "| Item | Price |\n|:-----|------:|\n| Widget | 10 |\n| Gadget | 20 |";
    assert_eq!(
        v,
        json!({
            "path": "docs/guide.md",
            "sourceHash": h(GUIDE),
            "pointer": t,
            "reanchored": false,
            "text": table_src,
            "offset": 0,
            "total_bytes": table_src.len(),
            "elements": [{"pointer": t, "kind": "table", "start_line": 18, "end_line": 21}],
            "table": {
                "columns": [{"name": "Item", "index": 0, "alignment": "left"}, {"name": "Price", "index": 1, "alignment": "right"}],
                "rows": [{"index": 0, "cells": ["Widget", "10"]}, {"index": 1, "cells": ["Gadget", "20"]}]
            }
        })
    );
    // Pages end at line breaks and chain by next_offset.
    let p1 = ok(kb.read(&ReadArgs {
        path: "docs/guide.md".into(),
        max_bytes: Some(40),
        ..ReadArgs::default()
    }));
    assert_eq!(p1["text"], json!("---\ntitle: Guide\ntags: [setup]\n"));
    assert_eq!(p1["next_offset"], json!(31));
    let p2 = ok(kb.read(&ReadArgs {
        path: "docs/guide.md".into(),
        offset: Some(31),
        max_bytes: Some(17),
        ..ReadArgs::default()
    }));
    assert_eq!(p2["text"], json!("date: 2026-01-15\n"));
    // A stale pointer is a conflict; a malformed one an invalid argument; a non-Markdown file unsupported.
    let stale = format!("1.p1~{0}~{0}", h("nothing like this"));
    assert_eq!(
        err(kb.read(&ReadArgs {
            path: "index.md".into(),
            pointer: Some(stale),
            ..ReadArgs::default()
        }))["code"],
        "CONFLICT"
    );
    assert_eq!(
        err(kb.read(&ReadArgs {
            path: "index.md".into(),
            pointer: Some("1.p1".into()),
            ..ReadArgs::default()
        }))["code"],
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        err(kb.read(&ReadArgs {
            path: "docs/logo.png".into(),
            ..ReadArgs::default()
        }))["code"],
        "UNSUPPORTED_FORMAT"
    );
}

#[test]
fn kb_outline_nests_headings() {
    let (_dir, kb) = setup(false);
    let v = ok(kb.outline(&OutlineArgs {
        path: "docs/guide.md".into(),
    }));
    assert_eq!(
        v,
        json!({
            "path": "docs/guide.md",
            "sourceHash": h(GUIDE),
            "title": "Guide",
            "headings": [{
                "pointer": ptr_of(&kb, "docs/guide.md", "1"), "level": 1, "text": "Guide", "slug": "guide", "start_line": 6, "end_line": 21,
                "children": [
                    {"pointer": ptr_of(&kb, "docs/guide.md", "1.1"), "level": 2, "text": "Steps", "slug": "steps", "start_line": 10, "end_line": 14, "children": []},
                    {"pointer": ptr_of(&kb, "docs/guide.md", "1.2"), "level": 2, "text": "Prices", "slug": "prices", "start_line": 16, "end_line": 21, "children": []}
                ]
            }]
        })
    );
}

#[test]
fn kb_list_files_prefix_is_a_folder_or_one_file() {
    let (_dir, kb) = setup(false);
    let list = |prefix: Option<&str>, glob: Option<&str>| {
        let v = ok(kb.list_files(&ListFilesArgs {
            path_prefix: prefix.map(String::from),
            include_glob: glob.map(String::from),
            limit: None,
        }));
        v["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                format!(
                    "{}:{}",
                    f["kind"].as_str().unwrap(),
                    f["path"].as_str().unwrap()
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        list(Some("docs/"), None),
        [
            "markdown:docs/guide.md",
            "asset:docs/logo.png",
            "markdown:docs/more/other.md"
        ]
    );
    assert_eq!(
        list(Some("docs/guide.md"), None),
        ["markdown:docs/guide.md"]
    );
    assert!(
        list(Some("docs/gui"), None).is_empty(),
        "a partial name is not a prefix"
    );
    assert_eq!(
        list(None, Some("*.md")),
        [
            "markdown:docs/guide.md",
            "markdown:docs/more/other.md",
            "markdown:index.md"
        ]
    );
    assert_eq!(
        list(Some("docs"), Some("other.md")),
        ["markdown:docs/more/other.md"]
    );
    let v = ok(kb.list_files(&ListFilesArgs {
        path_prefix: Some("docs/guide.md".into()),
        include_glob: None,
        limit: None,
    }));
    assert_eq!(
        v,
        json!({"files": [{"path": "docs/guide.md", "kind": "markdown", "bytes": GUIDE.len()}], "truncated": false})
    );
    assert_eq!(
        err(kb.list_files(&ListFilesArgs {
            path_prefix: Some("../".into()),
            ..ListFilesArgs::default()
        }))["code"],
        "INVALID_PATH"
    );
    // Limits of zero are argument errors, as for kb_search.
    assert_eq!(
        err(kb.list_files(&ListFilesArgs {
            limit: Some(0),
            ..ListFilesArgs::default()
        })),
        json!({"code": "INVALID_ARGUMENT", "message": "`limit` must be between 1 and 10000"})
    );
    assert_eq!(
        err(kb.read(&ReadArgs {
            path: "index.md".into(),
            max_bytes: Some(0),
            ..ReadArgs::default()
        })),
        json!({"code": "INVALID_ARGUMENT", "message": "`max_bytes` must be at least 1"})
    );
}

#[test]
fn kb_list_topics_counts_and_tree() {
    let (_dir, kb) = setup(false);
    assert_eq!(
        ok(kb.list_topics()),
        json!({
            "topics": [
                {"kind": "root", "category": "", "document_count": 1, "uri": "kb://topic/", "children": []},
                {"kind": "category", "category": "docs", "document_count": 2, "uri": "kb://topic/docs", "children": []},
                {"kind": "topic", "category": "docs", "topic": "docs/more", "document_count": 1, "uri": "kb://topic/docs/more", "children": []}
            ],
            "total_documents": 3
        })
    );
}

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
fn writes_are_refused_when_read_only_without_touching_disk() {
    let (dir, kb) = setup(false);
    let before = snapshot(dir.path());
    let p = ptr_of(&kb, "index.md", "1.p1");
    let patch = PatchArgs {
        path: "index.md".into(),
        operations: vec![PatchOperation {
            kind: PatchKindArg::Delete,
            pointer: p,
            markdown: None,
        }],
    };
    let denied = json!({"code": "PERMISSION_DENIED", "message": "this server is read-only; start it with `folio mcp --allow-writes` or set `[mcp] allow_writes = true` in ~/.config/folio/config.toml"});
    assert_eq!(err(kb.patch(&patch)), denied);
    assert_eq!(
        err(kb.create(&CreateArgs {
            path: "new.md".into(),
            markdown: None
        })),
        denied
    );
    assert_eq!(
        err(kb.delete(&DeleteArgs {
            path: "index.md".into(),
            expected_source_hash: None
        })),
        denied
    );
    assert_eq!(
        err(kb.move_document(&MoveArgs {
            source_path: "index.md".into(),
            target_path: "x.md".into(),
            expected_source_hash: None,
            update_links: None
        })),
        denied
    );
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn kb_patch_replaces_and_reports_new_pointers() {
    let (dir, kb) = setup(true);
    let p = ptr_of(&kb, "docs/guide.md", "1.p1");
    let v = ok(kb.patch(&PatchArgs {
        path: "docs/guide.md".into(),
        operations: vec![PatchOperation {
            kind: PatchKindArg::Replace,
            pointer: p,
            markdown: Some("Install the widget *second*.".into()),
        }],
    }));
    let new_text = GUIDE.replace("Install the widget first.", "Install the widget *second*.");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("docs/guide.md")).unwrap(),
        new_text
    );
    assert_eq!(
        v,
        json!({
            "path": "docs/guide.md",
            "sourceHash": h(&new_text),
            "operations": [{"kind": "replace_element", "pointer": format!("1.p1~{0}~{0}", h("Install the widget *second*.")), "reanchored": false}],
            "indexSynchronized": true,
            "appliedTo": "disk"
        })
    );
    // The index already has the new text.
    let hits = ok(kb.search(&SearchRequest {
        query: "second".into(),
        ..SearchRequest::default()
    }));
    assert_eq!(hits["results"][0]["indexedSourceHash"], json!(h(&new_text)));
}

#[test]
fn kb_patch_conflict_when_the_element_changed_leaves_the_file() {
    let (dir, kb) = setup(true);
    let p = ptr_of(&kb, "index.md", "1.p1");
    std::fs::write(
        dir.path().join("index.md"),
        INDEX.replace("See the", "Read the"),
    )
    .unwrap();
    let before = snapshot(dir.path());
    let e = err(kb.patch(&PatchArgs {
        path: "index.md".into(),
        operations: vec![PatchOperation {
            kind: PatchKindArg::ReplaceElement,
            pointer: p.clone(),
            markdown: Some("x".into()),
        }],
    }));
    assert_eq!(e["code"], "CONFLICT");
    assert_eq!(
        e["message"],
        json!(format!(
            "operation 0 (replace_element): element {p} changed or no longer exists (no paragraph with selfHash {})",
            &p[5..21]
        ))
    );
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn kb_patch_reanchors_after_an_insertion_above() {
    let (dir, kb) = setup(true);
    let p = ptr_of(&kb, "docs/guide.md", "1.p1");
    let moved = GUIDE.replace("# Guide\n\n", "# Guide\n\nA new first paragraph.\n\n");
    std::fs::write(dir.path().join("docs/guide.md"), &moved).unwrap();
    let v = ok(kb.patch(&PatchArgs {
        path: "docs/guide.md".into(),
        operations: vec![PatchOperation {
            kind: PatchKindArg::Delete,
            pointer: p,
            markdown: None,
        }],
    }));
    assert_eq!(
        v["operations"],
        json!([{"kind": "delete", "pointer": null, "reanchored": true}])
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("docs/guide.md")).unwrap(),
        GUIDE.replace(
            "Install the widget first.\n\n",
            "A new first paragraph.\n\n"
        )
    );
}

#[test]
fn kb_patch_multi_op_request_fails_atomically() {
    let (dir, kb) = setup(true);
    let before = snapshot(dir.path());
    let ops = vec![
        PatchOperation {
            kind: PatchKindArg::ReplaceElement,
            pointer: ptr_of(&kb, "docs/guide.md", "1.p1"),
            markdown: Some("Fine.".into()),
        },
        // A level-3 heading where a level-2 heading was: refused, so nothing is written.
        PatchOperation {
            kind: PatchKindArg::ReplaceElement,
            pointer: ptr_of(&kb, "docs/guide.md", "1.1"),
            markdown: Some("### Steps".into()),
        },
    ];
    let e = err(kb.patch(&PatchArgs {
        path: "docs/guide.md".into(),
        operations: ops,
    }));
    assert_eq!(
        e,
        json!({"code": "INVALID_ARGUMENT", "message": "the replacement must be exactly one heading level 2, but it parses as [heading level 3]; nothing was written"})
    );
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn kb_patch_section_replace_keeps_nested_headings_and_list_item_keeps_children() {
    let (dir, kb) = setup(true);
    let steps = ptr_of(&kb, "docs/guide.md", "1.1");
    let one = ptr_of(&kb, "docs/guide.md", "1.1.li1");
    // Two operations on disjoint parts in one request.
    let v = ok(kb.patch(&PatchArgs {
        path: "docs/guide.md".into(),
        operations: vec![
            PatchOperation {
                kind: PatchKindArg::ReplaceElement,
                pointer: one,
                markdown: Some("- ONE".into()),
            },
            PatchOperation {
                kind: PatchKindArg::InsertAfter,
                pointer: ptr_of(&kb, "docs/guide.md", "1.2.t1"),
                markdown: Some("Prices change.".into()),
            },
        ],
    }));
    let text = std::fs::read_to_string(dir.path().join("docs/guide.md")).unwrap();
    assert_eq!(
        text,
        GUIDE
            .replace("- one\n", "- ONE\n")
            .replace("| Gadget | 20 |\n", "| Gadget | 20 |\n\nPrices change.\n")
    );
    assert_eq!(
        v["operations"][1]["pointer"],
        json!(format!("1.2.p1~{0}~{0}", h("Prices change.")))
    );
    // The old section pointer is stale now (its subtree changed): CONFLICT.
    let e = err(kb.patch(&PatchArgs {
        path: "docs/guide.md".into(),
        operations: vec![PatchOperation {
            kind: PatchKindArg::ReplaceSection,
            pointer: steps,
            markdown: Some("## Steps".into()),
        }],
    }));
    assert_eq!(e["code"], "CONFLICT");
    let steps = ptr_of(&kb, "docs/guide.md", "1.1");
    ok(kb.patch(&PatchArgs {
        path: "docs/guide.md".into(),
        operations: vec![PatchOperation {
            kind: PatchKindArg::ReplaceSection,
            pointer: steps,
            markdown: Some("## Steps\n\nJust one.\n\n### Detail\n\nNested.".into()),
        }],
    }));
    let text = std::fs::read_to_string(dir.path().join("docs/guide.md")).unwrap();
    assert!(
        text.contains("## Steps\n\nJust one.\n\n### Detail\n\nNested.\n\n## Prices\n"),
        "{text}"
    );
}

#[test]
fn kb_edit_table_updates_cells_and_columns() {
    let (dir, kb) = setup(true);
    let t = ptr_of(&kb, "docs/guide.md", "1.2.t1");
    let args = EditTableArgs {
        path: "docs/guide.md".into(),
        pointer: t,
        action: "update_cells".into(),
        updates: vec![CellUpdate {
            where_eq: Some(WhereEq {
                column: "Item".into(),
                equals: "Gadget".into(),
            }),
            row_index: None,
            column: Some("Price".into()),
            column_index: None,
            value: "25 | sale".into(),
        }],
        where_eq: None,
        row_index: None,
        column: None,
        column_index: None,
        cells: BTreeMap::new(),
        values: vec![],
        name: None,
        default: None,
        alignment: None,
        value_format: None,
    };
    let v = ok(kb.edit_table(&args));
    let new_text = GUIDE.replace("| Gadget | 20 |", "| Gadget | 25 \\| sale |");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("docs/guide.md")).unwrap(),
        new_text
    );
    let table_src = "| Item | Price |\n|:-----|------:|\n| Widget | 10 |\n| Gadget | 25 \\| sale |";
    assert_eq!(
        v,
        json!({
            "path": "docs/guide.md",
            "pointer": format!("1.2.t1~{0}~{0}", h(table_src)),
            "sourceHash": h(&new_text),
            "reanchored": false,
            "table": {
                "columns": [{"name": "Item", "index": 0, "alignment": "left"}, {"name": "Price", "index": 1, "alignment": "right"}],
                "rows": [{"index": 0, "cells": ["Widget", "10"]}, {"index": 1, "cells": ["Gadget", "25 | sale"]}]
            },
            "indexSynchronized": true,
            "appliedTo": "disk"
        })
    );
    // Insert a column with the returned pointer, then the old pointer conflicts.
    let insert = EditTableArgs {
        pointer: v["pointer"].as_str().unwrap().into(),
        action: "insert_column".into(),
        name: Some("Unit".into()),
        default: Some("pc".into()),
        alignment: Some(AlignmentArg::Center),
        column_index: Some(1),
        updates: vec![],
        ..args.clone()
    };
    ok(kb.edit_table(&insert));
    assert!(
        std::fs::read_to_string(dir.path().join("docs/guide.md"))
            .unwrap()
            .contains(
                "| Item | Unit | Price |\n| :----- | :---: | ------: |\n| Widget | pc | 10 |\n"
            )
    );
    assert_eq!(err(kb.edit_table(&insert))["code"], "CONFLICT");
    assert_eq!(
        err(kb.edit_table(&EditTableArgs {
            action: "explode".into(),
            ..args
        }))["code"],
        "INVALID_ARGUMENT"
    );
}

#[test]
fn kb_create_move_updates_links_and_delete() {
    let (dir, kb) = setup(true);
    let v = ok(kb.create(&CreateArgs {
        path: "notes/new.md".into(),
        markdown: Some("# New\n\nSee [guide](../docs/guide.md).\n".into()),
    }));
    assert_eq!(
        v,
        json!({"path": "notes/new.md", "sourceHash": h("# New\n\nSee [guide](../docs/guide.md).\n"), "bytes": 38, "indexSynchronized": true, "appliedTo": "disk"})
    );
    assert_eq!(
        err(kb.create(&CreateArgs {
            path: "notes/new.md".into(),
            markdown: None
        })),
        json!({"code": "ALREADY_EXISTS", "message": "`notes/new.md` already exists"})
    );
    assert_eq!(
        err(kb.create(&CreateArgs {
            path: "notes/new.txt".into(),
            markdown: None
        }))["code"],
        "UNSUPPORTED_FORMAT"
    );

    let v = ok(kb.move_document(&MoveArgs {
        source_path: "docs/guide.md".into(),
        target_path: "manual/guide.md".into(),
        expected_source_hash: Some(h(GUIDE)),
        update_links: None,
    }));
    assert_eq!(
        v,
        json!({
            "previousPath": "docs/guide.md",
            "path": "manual/guide.md",
            "sourceHash": h(GUIDE),
            "updated_links": [
                {"path": "docs/more/other.md", "links": 1, "appliedTo": "disk"},
                {"path": "index.md", "links": 1, "appliedTo": "disk"},
                {"path": "notes/new.md", "links": 1, "appliedTo": "disk"}
            ],
            "indexSynchronized": true,
            "appliedTo": "disk"
        })
    );
    let read = |p: &str| std::fs::read_to_string(dir.path().join(p)).unwrap();
    assert_eq!(
        read("index.md"),
        "# Home\n\nSee the [guide](manual/guide.md#steps) and [missing](nope.md).\n"
    );
    assert_eq!(
        read("docs/more/other.md"),
        "# Other\n\nBack [home](../../index.md), [guide](../../manual/guide.md).\n"
    );
    assert_eq!(
        read("notes/new.md"),
        "# New\n\nSee [guide](../manual/guide.md).\n"
    );
    assert!(!dir.path().join("docs/guide.md").exists());
    // The index follows: the old path is gone, the new one is there.
    let hits = ok(kb.search(&SearchRequest {
        query: "widget".into(),
        ..SearchRequest::default()
    }));
    assert_eq!(hits["results"][0]["path"], json!("manual/guide.md"));

    assert_eq!(
        err(kb.delete(&DeleteArgs {
            path: "index.md".into(),
            expected_source_hash: Some(h("stale"))
        }))["code"],
        "CONFLICT"
    );
    assert_eq!(
        ok(kb.delete(&DeleteArgs {
            path: "notes/new.md".into(),
            expected_source_hash: None
        })),
        json!({"path": "notes/new.md", "deleted": true, "indexSynchronized": true, "appliedTo": "disk"})
    );
    assert!(!dir.path().join("notes/new.md").exists());
    assert_eq!(
        err(kb.move_document(&MoveArgs {
            source_path: "index.md".into(),
            target_path: "docs/more/other.md".into(),
            expected_source_hash: None,
            update_links: None
        }))["code"],
        "ALREADY_EXISTS"
    );
}

#[test]
fn kb_download_file_returns_bytes_and_sha256() {
    let (_dir, kb) = setup(false);
    let d = kb
        .download(&DownloadArgs {
            path: "docs/logo.png".into(),
        })
        .unwrap();
    assert_eq!(d.data, b"\x89PNG\r\n\x1a\nfake");
    assert_eq!(
        serde_json::to_value(&d.meta).unwrap(),
        json!({"path": "docs/logo.png", "mimeType": "image/png", "bytes": 12, "sha256": "68ee4598e64cd28eed508c333dfb14c745677f41e2b012e6256c9b138b304270"})
    );
}

#[test]
fn every_path_policy_rejection_is_invalid_path_or_not_found_and_touches_nothing() {
    let (dir, kb) = setup(true);
    let root = dir.path();
    std::fs::write(root.join("outside.md"), "# Out\n").unwrap();
    std::os::unix::fs::symlink(root.join("docs"), root.join("linkdir")).unwrap();
    std::os::unix::fs::symlink(root.join("index.md"), root.join("link.md")).unwrap();
    std::fs::hard_link(root.join("outside.md"), root.join("hard.md")).unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/config.md"), "x").unwrap();
    let invalid = [
        "",
        "/etc/passwd",
        "a\\b.md",
        "a\u{0}.md",
        "a\n.md",
        "c:/x.md",
        "note.md:secret",
        "a/../index.md",
        "./index.md",
        "docs//guide.md",
        "docs/",
        "CON",
        "docs/nul.md",
        "com1.md",
        "docs./guide.md",
        "docs /guide.md",
        "a?.md",
        "a*.md",
        ".git/config.md",
        ".folio/index.db",
    ];
    let not_found = [
        "INDEX.md",
        "docs/Guide.md",
        "linkdir/guide.md",
        "link.md",
        "hard.md",
        "missing.md",
        "docs",
    ];
    let before = snapshot(root);
    let codes = |path: &str| -> Vec<String> {
        let p = path.to_string();
        let pointer = ptr_of(&kb, "index.md", "1.p1");
        let results = vec![
            err(kb.read(&ReadArgs {
                path: p.clone(),
                ..ReadArgs::default()
            })),
            err(kb.outline(&OutlineArgs { path: p.clone() })),
            err(kb.links(&LinksArgs {
                path: p.clone(),
                direction: None,
                depth: None,
                include_external: false,
            })),
            err(kb
                .download(&DownloadArgs { path: p.clone() })
                .map(|d| d.meta)),
            err(kb.patch(&PatchArgs {
                path: p.clone(),
                operations: vec![PatchOperation {
                    kind: PatchKindArg::Delete,
                    pointer,
                    markdown: None,
                }],
            })),
            err(kb.delete(&DeleteArgs {
                path: p.clone(),
                expected_source_hash: None,
            })),
            err(kb.move_document(&MoveArgs {
                source_path: p.clone(),
                target_path: "moved.md".into(),
                expected_source_hash: None,
                update_links: None,
            })),
        ];
        results
            .into_iter()
            .map(|v| v["code"].as_str().unwrap().to_string())
            .collect()
    };
    for path in invalid {
        assert!(
            codes(path).iter().all(|c| c == "INVALID_PATH"),
            "{path:?}: {:?}",
            codes(path)
        );
        // Targets of create and move go through the same policy.
        assert_eq!(
            err(kb.create(&CreateArgs {
                path: path.into(),
                markdown: Some("x".into())
            }))["code"],
            "INVALID_PATH",
            "{path:?}"
        );
        let mv = MoveArgs {
            source_path: "index.md".into(),
            target_path: path.into(),
            expected_source_hash: None,
            update_links: None,
        };
        assert_eq!(
            err(kb.move_document(&mv))["code"],
            "INVALID_PATH",
            "{path:?}"
        );
    }
    for path in not_found {
        assert!(
            codes(path).iter().all(|c| c == "NOT_FOUND"),
            "{path:?}: {:?}",
            codes(path)
        );
    }
    // New files are not created through a symbolic link to a folder.
    assert_eq!(
        err(kb.create(&CreateArgs {
            path: "linkdir/new.md".into(),
            markdown: None
        }))["code"],
        "NOT_FOUND"
    );
    assert_eq!(snapshot(root), before);
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

#[test]
fn kb_list_topics_builds_the_folder_tree_below_a_topic() {
    let (dir, kb) = setup(false);
    std::fs::create_dir_all(dir.path().join("docs/more/deep/er")).unwrap();
    std::fs::write(dir.path().join("docs/more/deep/a.md"), "# A\n").unwrap();
    std::fs::write(dir.path().join("docs/more/deep/er/b.md"), "# B\n").unwrap();
    kb.reindex_blocking(false).unwrap();
    let v = ok(kb.list_topics());
    assert_eq!(
        v["topics"][2],
        json!({"kind": "topic", "category": "docs", "topic": "docs/more", "document_count": 3, "uri": "kb://topic/docs/more",
               "children": [{"segment": "deep", "file_count": 2, "children": [{"segment": "er", "file_count": 1, "children": []}]}]})
    );
}

#[test]
fn kb_graph_needs_embeddings_and_checks_its_arguments() {
    let (_dir, kb) = setup(false);
    use crate::host::similarity::GraphArgs;
    assert_eq!(
        err(kb.graph(&GraphArgs {
            start: "index.md".into(),
            ..GraphArgs::default()
        })),
        json!({"code": "NOT_CONFIGURED", "message": "kb_graph needs embeddings: embeddings are off: embeddings are off in this test; see kb_status `embedding`"})
    );
    assert_eq!(
        err(kb.graph(&GraphArgs {
            start: "index.md".into(),
            depth: Some(4),
            ..GraphArgs::default()
        })),
        json!({"code": "INVALID_ARGUMENT", "message": "depth must be 0..=3, got 4"})
    );
    assert_eq!(
        err(kb.graph(&GraphArgs {
            start: "index.md".into(),
            seed_strategy: Some("mean".into()),
            ..GraphArgs::default()
        })),
        json!({"code": "INVALID_ARGUMENT", "message": "unknown seed_strategy `mean`; use all_chunks or centroid"})
    );
    assert_eq!(
        err(kb.graph(&GraphArgs {
            start: "nope.md".into(),
            ..GraphArgs::default()
        }))["code"],
        "NOT_FOUND"
    );
    assert_eq!(
        err(kb.graph(&GraphArgs {
            start: "../etc/passwd".into(),
            ..GraphArgs::default()
        }))["code"],
        "INVALID_PATH"
    );
}

/// An embedding provider that cannot be reached: after the background pass gives up,
/// `semantic` kb_search and kb_graph say so with the provider's error (not "still
/// running"), and `hybrid` runs lexical.
#[test]
fn an_unavailable_provider_is_named_in_not_configured() {
    use crate::config::EmbedConfig;
    use crate::embed::pass::EmbedState;
    use crate::embed::settings::{EmbedSettings, ProviderKind};
    // A port that nothing listens on: bind, read the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let workspace = EmbedConfig {
        provider: Some(ProviderKind::Ollama),
        model: Some("m".into()),
        endpoint: Some(endpoint.clone()),
        timeout_ms: Some(2_000),
        ..EmbedConfig::default()
    };
    let settings = EmbedSettings::resolve(&workspace, &Default::default(), false).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.md"), INDEX).unwrap();
    let kb = Host::open(Options {
        root: dir.path().to_path_buf(),
        db: None,
        allow_writes: false,
        embed: Ok(settings),
    })
    .unwrap();
    assert!(kb.reindex_blocking(false).unwrap().ok);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while kb.embedding.snapshot().state != EmbedState::Unavailable {
        assert!(
            std::time::Instant::now() < deadline,
            "still {:?}",
            kb.embedding.snapshot()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let reason = kb.embedding.snapshot().reason.unwrap();
    let reason = reason
        .strip_prefix("embedding provider unavailable: ")
        .unwrap()
        .to_owned();
    assert!(reason.contains(&format!("127.0.0.1:{port}")), "{reason}");
    assert_eq!(
        err(kb.search(&SearchRequest {
            query: "widget".into(),
            mode: Some("semantic".into()),
            ..SearchRequest::default()
        })),
        json!({"code": "NOT_CONFIGURED", "message": format!("semantic search is not available: the embedding provider is unavailable: {reason}; use mode lexical")})
    );
    assert_eq!(
        err(kb.graph(&crate::host::similarity::GraphArgs {
            start: "index.md".into(),
            ..Default::default()
        })),
        json!({"code": "NOT_CONFIGURED", "message": format!("kb_graph needs embeddings: the embedding provider is unavailable: {reason}; see kb_status `embedding`")})
    );
    let v = ok(kb.search(&SearchRequest {
        query: "widget".into(),
        ..SearchRequest::default()
    }));
    assert_eq!(
        (&v["mode"], &v["embedding"]),
        (&json!("lexical"), &json!(false))
    );
}
