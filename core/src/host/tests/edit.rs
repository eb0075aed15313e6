//! Tests of the writing operations: kb_patch, kb_edit_table, kb_create, kb_move and
//! kb_delete, and their refusal on a read-only server.

use std::collections::BTreeMap;

use serde_json::json;

use super::{GUIDE, INDEX, err, h, ok, ptr_of, setup, snapshot};
use crate::host::edit::*;
use crate::host::search::SearchRequest;

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
            key: None,
            value: None,
        }],
    };
    let denied = json!({"code": "PERMISSION_DENIED", "message": format!("this server is read-only; start it with `folio mcp --allow-writes` or set `[mcp] allow_writes = true` in {}", crate::config::user::UserConfig::location())});
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
            key: None,
            value: None,
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
            key: None,
            value: None,
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
            key: None,
            value: None,
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
            key: None,
            value: None,
        },
        // A level-3 heading where a level-2 heading was: refused, so nothing is written.
        PatchOperation {
            kind: PatchKindArg::ReplaceElement,
            pointer: ptr_of(&kb, "docs/guide.md", "1.1"),
            markdown: Some("### Steps".into()),
            key: None,
            value: None,
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
                key: None,
                value: None,
            },
            PatchOperation {
                kind: PatchKindArg::InsertAfter,
                pointer: ptr_of(&kb, "docs/guide.md", "1.2.t1"),
                markdown: Some("Prices change.".into()),
                key: None,
                value: None,
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
            key: None,
            value: None,
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
            key: None,
            value: None,
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
    // Something that is not a sourceHash at all is a bad argument, not a conflict.
    assert_eq!(
        err(kb.delete(&DeleteArgs {
            path: "index.md".into(),
            expected_source_hash: Some("nothex".into())
        })),
        json!({"code": "INVALID_ARGUMENT", "message": "`expectedSourceHash` must be a sourceHash: 16 hexadecimal digits (got `nothex`)"})
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
fn a_note_that_is_not_utf8_is_read_indexed_and_never_written() {
    let (dir, kb) = setup(true);
    // Windows-1252: `\xe9` is é there, an invalid byte in UTF-8.
    let bytes = b"# Caf\xe9 notes\n\nThe caf\xe9 menu, see [x](nope.md).\n";
    std::fs::write(dir.path().join("latin1.md"), bytes).unwrap();
    let note = "`latin1.md` is not valid UTF-8 (first invalid byte at offset 5): it is shown with U+FFFD for \
                each invalid sequence and is read-only; convert it to UTF-8 to edit it";
    let read = ok(kb.read(&crate::host::read::ReadArgs {
        path: "latin1.md".into(),
        ..Default::default()
    }));
    assert_eq!(
        (&read["text"], &read["readOnly"]),
        (
            &json!("# Caf\u{FFFD} notes\n\nThe caf\u{FFFD} menu, see [x](nope.md).\n"),
            &json!(note)
        )
    );
    let outline = ok(kb.outline(&crate::host::read::OutlineArgs {
        path: "latin1.md".into(),
    }));
    assert_eq!(
        (&outline["headings"][0]["text"], &outline["readOnly"]),
        (&json!("Caf\u{FFFD} notes"), &json!(note))
    );
    // A valid note says nothing of the kind.
    let guide = ok(kb.read(&crate::host::read::ReadArgs {
        path: "docs/guide.md".into(),
        ..Default::default()
    }));
    assert_eq!(guide.get("readOnly"), None);
    // Indexed and searchable.
    let last = kb.reindex_blocking(false).unwrap();
    assert!(last.ok, "{last:?}");
    let hits = ok(kb.search(&SearchRequest {
        query: "menu".into(),
        ..SearchRequest::default()
    }));
    assert_eq!(hits["results"][0]["path"], json!("latin1.md"));
    // Every write is refused and leaves the bytes as they were.
    let refused = json!({"code": "UNSUPPORTED_FORMAT", "message": "`latin1.md` is not valid UTF-8 (first invalid \
        byte at offset 5); folio reads it with replacement characters but never writes it, so that its bytes stay as \
        they are: convert it to UTF-8 to edit it"});
    let before = snapshot(dir.path());
    assert_eq!(
        err(kb.patch(&PatchArgs {
            path: "latin1.md".into(),
            operations: vec![PatchOperation {
                kind: PatchKindArg::InsertAfter,
                pointer: "document".into(),
                markdown: Some("More.".into()),
                key: None,
                value: None,
            }],
        })),
        refused
    );
    assert_eq!(
        err(kb.delete(&DeleteArgs {
            path: "latin1.md".into(),
            expected_source_hash: None,
        })),
        refused
    );
    assert_eq!(snapshot(dir.path()), before);
    assert_eq!(std::fs::read(dir.path().join("latin1.md")).unwrap(), bytes);
}

#[test]
fn writes_that_folio_could_not_read_back_are_refused() {
    // A NUL byte or a note over the size cap would be written, then refused by every
    // read, patch, move and delete, and dropped by the next reindex.
    let (dir, kb) = setup(true);
    let before = snapshot(dir.path());
    let nul = err(kb.create(&CreateArgs {
        path: "n.md".into(),
        markdown: Some("# N\n\u{0}\n".into()),
    }));
    assert_eq!(
        nul,
        json!({"code": "INVALID_ARGUMENT", "message": "the edit would make `n.md` a file folio cannot read as a note (binary content (NUL bytes)); nothing was changed"})
    );
    let append = |markdown: String| PatchArgs {
        path: "index.md".into(),
        operations: vec![PatchOperation {
            kind: PatchKindArg::InsertAfter,
            pointer: "document".into(),
            markdown: Some(markdown),
            key: None,
            value: None,
        }],
    };
    assert_eq!(
        err(kb.patch(&append("tail\u{0}".into())))["code"],
        "INVALID_ARGUMENT"
    );
    let cap = 16 * 1024 * 1024;
    let too_large = err(kb.patch(&append("x".repeat(cap))));
    assert_eq!(
        too_large["message"],
        format!(
            "the edit would make `index.md` a file folio cannot read as a note (too large ({} bytes; the cap is {cap} bytes)); nothing was changed",
            INDEX.len() + 2 + cap
        )
    );
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn kb_move_reads_again_a_note_the_live_model_missed() {
    // A same-size edit that puts the file's modification time back (`cp -p`, `rsync -t`)
    // changes its status-change time, which the live model's stamps hold: the move reads
    // the note again and rewrites the link it now has (before, it moved the file and
    // rewrote nothing, leaving the link broken).
    let (dir, kb) = setup(true);
    let root = dir.path();
    std::fs::write(root.join("target.md"), "# T\n").unwrap();
    std::fs::write(root.join("targex.md"), "# X\n").unwrap();
    std::fs::write(root.join("linking.md"), "[t](target.md)\n").unwrap();
    let links = |path: &str| {
        ok(kb.links(&crate::host::links::LinksArgs {
            path: path.into(),
            direction: Some("outgoing".into()),
            depth: None,
            include_external: false,
        }))
    };
    assert_eq!(links("linking.md")["outgoing"][0]["target"], "target.md");
    let file = std::fs::File::options()
        .write(true)
        .open(root.join("linking.md"))
        .unwrap();
    let time = file.metadata().unwrap().modified().unwrap();
    drop(file);
    std::fs::write(root.join("linking.md"), "[t](targex.md)\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(root.join("linking.md"))
        .unwrap()
        .set_modified(time)
        .unwrap();
    let move_args = MoveArgs {
        source_path: "targex.md".into(),
        target_path: "moved.md".into(),
        expected_source_hash: None,
        update_links: None,
    };
    let moved = ok(kb.move_document(&move_args));
    assert_eq!(moved["updated_links"][0]["path"], "linking.md");
    assert_eq!(
        std::fs::read_to_string(root.join("linking.md")).unwrap(),
        "[t](moved.md)\n"
    );
}

#[test]
fn kb_move_refuses_link_rewrites_that_would_grow_a_note_past_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("folio.toml"), "[index]\nmax_file_size = 400\n").unwrap();
    std::fs::write(root.join("t.md"), "# T\n").unwrap();
    std::fs::write(root.join("link.md"), "[t](t.md) ".repeat(38)).unwrap();
    let kb = super::open_at(root, true);
    let before = snapshot(root);
    let refused = err(kb.move_document(&MoveArgs {
        source_path: "t.md".into(),
        target_path: "sub/very-long-target-name.md".into(),
        expected_source_hash: None,
        update_links: None,
    }));
    assert_eq!(
        refused,
        json!({"code": "INVALID_ARGUMENT", "message": "the edit would make `link.md` a file folio cannot read as a note (too large (1292 bytes; the cap is 400 bytes)); nothing was changed"})
    );
    assert_eq!(snapshot(root), before);
}

#[test]
fn kb_move_refuses_a_name_no_wiki_link_can_hold() {
    // `[[Task #1]]` reads as note `Task`, heading `1`: a move that must rewrite a wiki link
    // to such a name is refused, and one without updated links is not.
    let (dir, kb) = setup(true);
    let root = dir.path();
    std::fs::write(root.join("Task.md"), "# Task\n").unwrap();
    std::fs::write(root.join("a.md"), "[[Task]] and [[Task|the task]]\n").unwrap();
    std::fs::write(root.join("b.md"), "[t](Task.md)\n").unwrap();
    let before = snapshot(root);
    let mut args = MoveArgs {
        source_path: "Task.md".into(),
        target_path: "Task #1.md".into(),
        expected_source_hash: None,
        update_links: None,
    };
    assert_eq!(
        err(kb.move_document(&args)),
        json!({"code": "INVALID_ARGUMENT", "message": "no wiki link can name `Task #1.md`: `#` starts a heading, `|` an alias, and `[` or `]` end the link; 2 wiki links in 1 document (first in `a.md`) would break. Choose a name without these characters, or move with `update_links: false`; nothing was changed"})
    );
    assert_eq!(snapshot(root), before);
    args.update_links = Some(false);
    ok(kb.move_document(&args));
    assert!(root.join("Task #1.md").is_file());
    assert_eq!(
        std::fs::read_to_string(root.join("a.md")).unwrap(),
        "[[Task]] and [[Task|the task]]\n"
    );
}

/// set_field and delete_field from an agent's JSON: no pointer (or `document`),
/// `null` as a value.
#[test]
fn kb_patch_sets_and_deletes_frontmatter_fields() {
    let (dir, kb) = setup(true);
    let args: PatchArgs = serde_json::from_value(json!({
        "path": "docs/guide.md",
        "operations": [
            {"kind": "set_field", "key": "status", "value": "draft"},
            {"kind": "set_field", "pointer": "document", "key": "tags", "value": ["setup", "howto"]},
            {"kind": "delete_field", "key": "date"},
            {"kind": "set_field", "key": "title", "value": null}
        ]
    }))
    .unwrap();
    let v = ok(kb.patch(&args));
    let new_text = GUIDE.replace(
        "---\ntitle: Guide\ntags: [setup]\ndate: 2026-01-15\n---\n",
        "---\ntitle: null\ntags:\n  - setup\n  - howto\nstatus: draft\n---\n",
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("docs/guide.md")).unwrap(),
        new_text
    );
    assert_eq!(
        v,
        json!({
            "path": "docs/guide.md",
            "sourceHash": h(&new_text),
            "operations": [
                {"kind": "set_field", "pointer": null, "reanchored": false},
                {"kind": "set_field", "pointer": null, "reanchored": false},
                {"kind": "delete_field", "pointer": null, "reanchored": false},
                {"kind": "set_field", "pointer": null, "reanchored": false},
            ],
            "indexSynchronized": true,
            "appliedTo": "disk"
        })
    );
    // A missing key, and a pointer other operations still need.
    let args: PatchArgs = serde_json::from_value(json!({
        "path": "docs/guide.md",
        "operations": [{"kind": "delete_field", "key": "date"}]
    }))
    .unwrap();
    assert_eq!(
        err(kb.patch(&args)),
        json!({"code": "INVALID_ARGUMENT", "message": "operation 0 (delete_field): the frontmatter has no key `date`; nothing was written"})
    );
    let args: PatchArgs = serde_json::from_value(json!({
        "path": "docs/guide.md",
        "operations": [{"kind": "delete"}]
    }))
    .unwrap();
    assert_eq!(
        err(kb.patch(&args)),
        json!({"code": "INVALID_ARGUMENT", "message": "operation 0 (delete): `pointer` is required"})
    );
    // The published schema lists the operations and their fields.
    let schema = serde_json::to_value(schemars::schema_for!(PatchArgs)).unwrap();
    let op = &schema["$defs"]["PatchOperation"];
    assert_eq!(op["required"], json!(["kind"]));
    assert_eq!(op["properties"]["key"]["type"], json!("string"));
    let kinds: Vec<&serde_json::Value> = schema["$defs"]["PatchKindArg"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| &k["const"])
        .collect();
    assert_eq!(
        kinds,
        [
            "replace_element",
            "replace",
            "replace_section",
            "delete_section",
            "replace_subtree",
            "insert_before",
            "insert_after",
            "delete",
            "set_field",
            "delete_field"
        ]
    );
}
