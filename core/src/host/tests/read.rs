//! Tests of kb_read and kb_outline: whole documents, elements by pointer, tables, pages and
//! the heading tree.

use serde_json::json;

use super::{GUIDE, INDEX, err, h, ok, pointer, setup};
use crate::host::read::{OutlineArgs, ReadArgs};

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
            "start_line": 1,
            "end_line": 3,
            "elements": [
                {"pointer": format!("1~{}~{}", h("# Home"), h(INDEX.trim_end())), "kind": "heading", "level": 1, "start_line": 1, "end_line": 1},
                {"pointer": format!("1.p1~{0}~{0}", h("See the [guide](docs/guide.md#steps) and [missing](nope.md).")), "kind": "paragraph", "start_line": 3, "end_line": 3}
            ]
        })
    );
    // A table pointer: the table's text plus columns and rows.
    let table_src = "| Item | Price |\n|:-----|------:|\n| Widget | 10 |\n| Gadget | 20 |";
    let t = pointer("1.2.t1", table_src, table_src);
    let v = ok(kb.read(&ReadArgs {
        path: "docs/guide.md".into(),
        pointer: Some(t.clone()),
        ..ReadArgs::default()
    }));
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
            "start_line": 18,
            "end_line": 21,
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
    assert_eq!((&p1["start_line"], &p1["end_line"]), (&json!(1), &json!(3)));
    let p2 = ok(kb.read(&ReadArgs {
        path: "docs/guide.md".into(),
        offset: Some(31),
        max_bytes: Some(17),
        ..ReadArgs::default()
    }));
    assert_eq!(p2["text"], json!("date: 2026-01-15\n"));
    assert_eq!((&p2["start_line"], &p2["end_line"]), (&json!(4), &json!(4)));
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
    // Each heading owns its section: `# Guide` the rest of the document, `## Steps` and
    // `## Prices` up to the next level-2 heading and the end.
    let guide_section = GUIDE[GUIDE.find("# Guide").unwrap()..].trim_end();
    let steps_section = "## Steps\n\n- one\n  - one.a\n- two";
    let prices_section =
        "## Prices\n\n| Item | Price |\n|:-----|------:|\n| Widget | 10 |\n| Gadget | 20 |";
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
                "pointer": pointer("1", "# Guide", guide_section), "level": 1, "text": "Guide", "slug": "guide", "start_line": 6, "end_line": 21,
                "children": [
                    {"pointer": pointer("1.1", "## Steps", steps_section), "level": 2, "text": "Steps", "slug": "steps", "start_line": 10, "end_line": 14, "children": []},
                    {"pointer": pointer("1.2", "## Prices", prices_section), "level": 2, "text": "Prices", "slug": "prices", "start_line": 16, "end_line": 21, "children": []}
                ]
            }]
        })
    );
}

#[test]
fn kb_read_pages_end_at_character_boundaries() {
    let (dir, kb) = setup(false);
    // One line of 3-byte characters: no line break to end a page at, so a page ends at the
    // last whole character, and pages chained by next_offset give the text back exactly.
    let text = format!("# 日本語\n\n{}", "検索".repeat(20));
    std::fs::write(dir.path().join("ja.md"), &text).unwrap();
    let mut offset = 0;
    let mut pages = Vec::new();
    loop {
        let page = ok(kb.read(&ReadArgs {
            path: "ja.md".into(),
            offset: Some(offset),
            max_bytes: Some(20),
            ..ReadArgs::default()
        }));
        pages.push(page["text"].as_str().unwrap().to_owned());
        match page["next_offset"].as_u64() {
            Some(next) => offset = usize::try_from(next).unwrap(),
            None => break,
        }
    }
    assert_eq!(pages[0], "# 日本語\n\n");
    assert_eq!(pages[1], "検索検索検索");
    assert_eq!(pages.len(), 8);
    assert_eq!(pages.concat(), text);
    // A page smaller than one character still moves on by one character.
    let one = ok(kb.read(&ReadArgs {
        path: "ja.md".into(),
        offset: Some(13),
        max_bytes: Some(1),
        ..ReadArgs::default()
    }));
    assert_eq!(
        (&one["text"], &one["next_offset"]),
        (&json!("検"), &json!(16))
    );
    // An offset inside a character, or past the end, is refused with the reason.
    let inside = err(kb.read(&ReadArgs {
        path: "ja.md".into(),
        offset: Some(14),
        ..ReadArgs::default()
    }));
    assert_eq!(
        inside["message"],
        "offset 14 is inside a character; pass the `next_offset` of the previous page"
    );
    let past = err(kb.read(&ReadArgs {
        path: "ja.md".into(),
        offset: Some(1_000_000_000_000_000),
        ..ReadArgs::default()
    }));
    assert_eq!(
        past["message"],
        format!(
            "offset 1000000000000000 is past the end ({} bytes)",
            text.len()
        )
    );
}
