//! Tests of patch operations and table edits against exact expected text.

use super::table::{
    Alignment, ColumnSelector, RowSelector, TableAction, ValueFormat, edit_table, read_table,
};
use super::*;
use crate::parse::parse;

fn ptr(text: &str, logical: &str) -> String {
    parse(text)
        .elements
        .iter()
        .find(|e| e.logical == logical)
        .unwrap_or_else(|| panic!("no {logical}"))
        .pointer()
        .to_string()
}

fn op(kind: PatchKind, pointer: &str, markdown: Option<&str>) -> PatchOp {
    PatchOp {
        kind,
        pointer: pointer.to_string(),
        markdown: markdown.map(str::to_string),
        key: None,
        value: None,
    }
}

fn patch(text: &str, ops: &[PatchOp]) -> Result<String, EditError> {
    apply_patch(text, ops).map(|o| o.text)
}

#[test]
fn replace_element_keeps_everything_else_byte_for_byte() {
    let text = "\u{feff}# T\r\n\r\nold para\r\n\r\ntail  \r\n";
    let out = apply_patch(
        text,
        &[op(
            PatchKind::ReplaceElement,
            &ptr(text, "1.p1"),
            Some("new\npara\n"),
        )],
    )
    .unwrap();
    assert_eq!(out.text, "\u{feff}# T\r\n\r\nnew\r\npara\r\n\r\ntail  \r\n");
    assert_eq!(out.new_pointers, vec![Some(ptr(&out.text, "1.p1"))]);
    assert_eq!(out.reanchored, vec![false]);
    // The `replace` alias deserialises to replace_element.
    let kind: PatchKind = serde_json::from_str("\"replace\"").unwrap();
    assert_eq!(kind, PatchKind::ReplaceElement);
}

#[test]
fn conflict_when_the_element_changed() {
    let before = "# T\n\nalpha\n";
    let p = ptr(before, "1.p1");
    let now = "# T\n\nalpha, edited elsewhere\n";
    let err = apply_patch(now, &[op(PatchKind::ReplaceElement, &p, Some("beta"))]).unwrap_err();
    assert_eq!(err.code(), "CONFLICT");
    assert!(
        err.to_string().contains("changed or no longer exists"),
        "{err}"
    );
}

#[test]
fn reanchors_after_an_insertion_above() {
    let before = "# T\n\nalpha\n\nbeta\n";
    let p = ptr(before, "1.p2");
    let now = "# T\n\ninserted\n\nalpha\n\nbeta\n";
    let out = apply_patch(now, &[op(PatchKind::ReplaceElement, &p, Some("BETA"))]).unwrap();
    assert_eq!(out.text, "# T\n\ninserted\n\nalpha\n\nBETA\n");
    assert_eq!(out.reanchored, vec![true]);
    assert!(out.new_pointers[0].as_deref().unwrap().starts_with("1.p3~"));
}

#[test]
fn multi_op_request_fails_atomically() {
    let text = "# T\n\nalpha\n\nbeta\n";
    let good = op(PatchKind::ReplaceElement, &ptr(text, "1.p1"), Some("ALPHA"));
    // The second operation's replacement is two paragraphs: the whole request fails.
    let bad = op(
        PatchKind::ReplaceElement,
        &ptr(text, "1.p2"),
        Some("one\n\ntwo"),
    );
    let err = apply_patch(text, &[good.clone(), bad]).unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    assert!(err.to_string().contains("exactly one paragraph"), "{err}");
    // Overlapping operations fail too.
    let overlap = op(PatchKind::ReplaceSection, &ptr(text, "1"), Some("# X"));
    assert_eq!(
        apply_patch(text, &[good.clone(), overlap])
            .unwrap_err()
            .code(),
        "INVALID_ARGUMENT"
    );
    // And both good ones together succeed.
    let good2 = op(PatchKind::InsertAfter, &ptr(text, "1.p2"), Some("gamma"));
    assert_eq!(
        patch(text, &[good, good2]).unwrap(),
        "# T\n\nALPHA\n\nbeta\n\ngamma\n"
    );
}

#[test]
fn section_replace_keeps_nested_headings_and_checks_the_subtree() {
    let text = "# A\n\nintro\n\n## B\n\nb body\n\n### B1\n\nb1 body\n\n## C\n\nc body\n";
    let b = ptr(text, "1.1");
    let out = patch(
        text,
        &[op(
            PatchKind::ReplaceSection,
            &b,
            Some("## B\n\nnew body\n\n### B1\n\nnew b1\n\n### B2\n\nmore"),
        )],
    )
    .unwrap();
    assert_eq!(
        out,
        "# A\n\nintro\n\n## B\n\nnew body\n\n### B1\n\nnew b1\n\n### B2\n\nmore\n\n## C\n\nc body\n"
    );
    // A replacement that starts with a different level, or lifts a heading, is refused.
    let err = patch(text, &[op(PatchKind::ReplaceSection, &b, Some("### B"))]).unwrap_err();
    assert!(err.to_string().contains("level-2 heading"), "{err}");
    let err = patch(
        text,
        &[op(PatchKind::ReplaceSection, &b, Some("## B\n\n## D"))],
    )
    .unwrap_err();
    assert!(err.to_string().contains("deeper"), "{err}");
    // An edit inside the section since the read: the subtreeHash no longer matches.
    let edited = text.replace("b1 body", "b1 body, changed");
    assert_eq!(
        patch(&edited, &[op(PatchKind::ReplaceSection, &b, Some("## B"))])
            .unwrap_err()
            .code(),
        "CONFLICT"
    );
    // delete_section removes the heading and everything it owns.
    assert_eq!(
        patch(text, &[op(PatchKind::DeleteSection, &b, None)]).unwrap(),
        "# A\n\nintro\n\n## C\n\nc body\n"
    );
    // Replacing only the heading keeps the body; a level change is refused.
    assert_eq!(
        patch(text, &[op(PatchKind::ReplaceElement, &b, Some("## Bee"))]).unwrap(),
        "# A\n\nintro\n\n## Bee\n\nb body\n\n### B1\n\nb1 body\n\n## C\n\nc body\n"
    );
    assert!(
        patch(text, &[op(PatchKind::ReplaceElement, &b, Some("# Bee"))])
            .unwrap_err()
            .to_string()
            .contains("heading level 2")
    );
}

#[test]
fn list_item_replace_keeps_children() {
    let text = "# L\n\n- one\n  - one.a\n  - one.b\n- two\n";
    let one = ptr(text, "1.li1");
    let out = apply_patch(text, &[op(PatchKind::ReplaceElement, &one, Some("- ONE"))]).unwrap();
    assert_eq!(out.text, "# L\n\n- ONE\n  - one.a\n  - one.b\n- two\n");
    assert!(
        out.new_pointers[0]
            .as_deref()
            .unwrap()
            .starts_with("1.li1~")
    );
    // replace_subtree replaces the item with its children (checks subtreeHash).
    assert_eq!(
        patch(
            text,
            &[op(
                PatchKind::ReplaceSubtree,
                &one,
                Some("- ONE\n  - only child")
            )]
        )
        .unwrap(),
        "# L\n\n- ONE\n  - only child\n- two\n"
    );
    // Inserting a sibling after an item goes after its children; a nested item keeps its indentation.
    assert_eq!(
        patch(
            text,
            &[op(PatchKind::InsertAfter, &one, Some("- one and a half"))]
        )
        .unwrap(),
        "# L\n\n- one\n  - one.a\n  - one.b\n- one and a half\n- two\n"
    );
    let a = ptr(text, "1.li1.li1");
    assert_eq!(
        patch(text, &[op(PatchKind::InsertBefore, &a, Some("- one.0"))]).unwrap(),
        "# L\n\n- one\n  - one.0\n  - one.a\n  - one.b\n- two\n"
    );
    // Lines after the first are written as given: they carry the file's indentation, as kb_read shows it.
    let nested = "- a\n  - b first line\n    b second line\n- c\n";
    let b = ptr(nested, "li1.li1");
    assert_eq!(
        patch(
            nested,
            &[op(
                PatchKind::ReplaceElement,
                &b,
                Some("- b first line\n    b second line")
            )]
        )
        .unwrap(),
        nested
    );
    assert_eq!(
        patch(
            nested,
            &[op(PatchKind::InsertAfter, &b, Some("- b2\n    more"))]
        )
        .unwrap(),
        "- a\n  - b first line\n    b second line\n  - b2\n    more\n- c\n"
    );
    // Deleting an item takes its children and its line.
    assert_eq!(
        patch(text, &[op(PatchKind::Delete, &one, None)]).unwrap(),
        "# L\n\n- two\n"
    );
    // A paragraph where an item was is refused: it would change the list around it (the
    // Markdown given is the cause, not another writer).
    let two = ptr(text, "1.li2");
    assert_eq!(
        patch(text, &[op(PatchKind::ReplaceElement, &two, Some("plain"))])
            .unwrap_err()
            .code(),
        "INVALID_ARGUMENT"
    );
}

#[test]
fn items_whose_range_starts_at_the_line_start_keep_their_indentation() {
    // After a paragraph, markdown-rs starts this indented item at the line start.
    let text = "1. Q\n\n  Para\n  - a\n  - b\n";
    let a = ptr(text, "li2");
    let a_el = parse(text)
        .elements
        .into_iter()
        .find(|e| e.logical == "li2")
        .unwrap();
    assert_eq!(
        &text[a_el.range.clone()],
        "  - a",
        "the shape this test is about"
    );
    assert_eq!(
        patch(text, &[op(PatchKind::InsertAfter, &a, Some("- a2"))]).unwrap(),
        "1. Q\n\n  Para\n  - a\n  - a2\n  - b\n"
    );
    assert_eq!(
        patch(text, &[op(PatchKind::InsertBefore, &a, Some("- a0"))]).unwrap(),
        "1. Q\n\n  Para\n  - a0\n  - a\n  - b\n"
    );
    // As written, or as kb_read shows it (with the indentation): the same result.
    for md in ["- A", "  - A"] {
        let out = apply_patch(text, &[op(PatchKind::ReplaceElement, &a, Some(md))]).unwrap();
        assert_eq!(out.text, "1. Q\n\n  Para\n  - A\n  - b\n");
        assert!(out.new_pointers[0].is_some());
    }
}

#[test]
fn untouched_structure_is_protected() {
    let text = "# T\n\npara\n\n- a\n- b\n";
    // An unclosed fence would swallow the list.
    let err = patch(
        text,
        &[op(PatchKind::InsertAfter, &ptr(text, "1.p1"), Some("```"))],
    )
    .unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    assert!(err.to_string().contains("does not target"), "{err}");
}

#[test]
fn document_pointer_inserts_at_start_and_end() {
    let text = "---\ntitle: x\n---\n# T\n\nbody";
    assert_eq!(
        patch(
            text,
            &[op(PatchKind::InsertBefore, "document", Some("lead"))]
        )
        .unwrap(),
        "---\ntitle: x\n---\n\nlead\n\n# T\n\nbody"
    );
    assert_eq!(
        patch(text, &[op(PatchKind::InsertAfter, "document", Some("end"))]).unwrap(),
        "---\ntitle: x\n---\n# T\n\nbody\n\nend\n"
    );
    assert_eq!(
        patch("", &[op(PatchKind::InsertAfter, "document", Some("# New"))]).unwrap(),
        "# New\n"
    );
    assert_eq!(
        patch("a\n", &[op(PatchKind::InsertBefore, "document", Some("b"))]).unwrap(),
        "b\n\na\n"
    );
    // The operation is refused for what it is, whether or not `markdown` came with it.
    for markdown in [None, Some("x")] {
        assert_eq!(
            patch("a\n", &[op(PatchKind::Delete, "document", markdown)])
                .unwrap_err()
                .to_string(),
            "operation 0 (delete): the `document` pointer only takes insert_before (start of file), insert_after (end of file), set_field and delete_field (frontmatter)"
        );
    }
}

#[test]
fn delete_heading_keeps_its_body_and_end_of_file_deletes_tidy() {
    let text = "# A\n\nbody\n\n## B\n\nlast\n";
    assert_eq!(
        patch(text, &[op(PatchKind::Delete, &ptr(text, "1.1"), None)]).unwrap(),
        "# A\n\nbody\n\nlast\n"
    );
    assert_eq!(
        patch(text, &[op(PatchKind::Delete, &ptr(text, "1.1.p1"), None)]).unwrap(),
        "# A\n\nbody\n\n## B\n"
    );
}

fn table_text() -> &'static str {
    "# Prices\n\n| Product | Price |\n|:--------|------:|\n| Chicken | 10 |\n| Beef | 20 |\n\nafter\n"
}

#[test]
fn table_read_and_update_cells() {
    let text = table_text();
    let t = ptr(text, "1.t1");
    let el = parse(text)
        .elements
        .into_iter()
        .find(|e| e.logical == "1.t1")
        .unwrap();
    let view = read_table(&text[el.range.clone()]);
    assert_eq!(
        serde_json::to_value(&view).unwrap(),
        serde_json::json!({
            "columns": [
                {"name": "Product", "index": 0, "alignment": "left"},
                {"name": "Price", "index": 1, "alignment": "right"}
            ],
            "rows": [
                {"index": 0, "cells": ["Chicken", "10"]},
                {"index": 1, "cells": ["Beef", "20"]}
            ]
        })
    );
    let sel = |c: &str, v: &str| RowSelector {
        where_eq: Some((c.into(), v.into())),
        index: None,
    };
    let col = |n: &str| ColumnSelector {
        name: Some(n.into()),
        index: None,
    };
    let out = edit_table(
        text,
        &t,
        &TableAction::UpdateCells(vec![(
            sel("Product", "Chicken"),
            col("Price"),
            "12 | *cheap*".into(),
        )]),
        ValueFormat::Text,
    )
    .unwrap();
    assert_eq!(
        out.text,
        "# Prices\n\n| Product | Price |\n|:--------|------:|\n| Chicken | 12 \\| \\*cheap\\* |\n| Beef | 20 |\n\nafter\n"
    );
    assert_eq!(out.table.rows[0].cells, vec!["Chicken", "12 | *cheap*"]);
    let out = edit_table(
        text,
        &t,
        &TableAction::UpdateCells(vec![(
            RowSelector {
                where_eq: None,
                index: Some(1),
            },
            col("Price"),
            "*21*".into(),
        )]),
        ValueFormat::Markdown,
    )
    .unwrap();
    assert!(out.text.contains("| Beef | *21* |"));
    // Unknown rows fail without changes.
    let err = edit_table(
        text,
        &t,
        &TableAction::UpdateCells(vec![(sel("Product", "Fish"), col("Price"), "1".into())]),
        ValueFormat::Text,
    )
    .unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
}

#[test]
fn table_rows_columns_and_alignment() {
    let text = table_text();
    let t = ptr(text, "1.t1");
    let col = |n: &str| ColumnSelector {
        name: Some(n.into()),
        index: None,
    };
    let run = |a: TableAction| edit_table(text, &t, &a, ValueFormat::Text).unwrap().text;
    assert_eq!(
        run(TableAction::InsertRow {
            at: Some(1),
            by_name: vec![("Product".into(), "Lamb".into())],
            in_order: vec![]
        }),
        "# Prices\n\n| Product | Price |\n|:--------|------:|\n| Chicken | 10 |\n| Lamb |  |\n| Beef | 20 |\n\nafter\n"
    );
    assert_eq!(
        run(TableAction::DeleteRow(RowSelector {
            where_eq: Some(("Product".into(), "Beef".into())),
            index: None
        })),
        "# Prices\n\n| Product | Price |\n|:--------|------:|\n| Chicken | 10 |\n\nafter\n"
    );
    assert_eq!(
        run(TableAction::InsertColumn {
            name: "Unit".into(),
            at: Some(1),
            alignment: Alignment::Center,
            default: "kg".into()
        }),
        "# Prices\n\n| Product | Unit | Price |\n| :-------- | :---: | ------: |\n| Chicken | kg | 10 |\n| Beef | kg | 20 |\n\nafter\n"
    );
    assert_eq!(
        run(TableAction::DeleteColumn(col("Price"))),
        "# Prices\n\n| Product |\n| :-------- |\n| Chicken |\n| Beef |\n\nafter\n"
    );
    assert_eq!(
        run(TableAction::RenameColumn(col("Price"), "Cost".into())),
        "# Prices\n\n| Product | Cost |\n|:--------|------:|\n| Chicken | 10 |\n| Beef | 20 |\n\nafter\n"
    );
    assert_eq!(
        run(TableAction::SetAlignment(col("Product"), Alignment::None)),
        "# Prices\n\n| Product | Price |\n| --- | ------: |\n| Chicken | 10 |\n| Beef | 20 |\n\nafter\n"
    );
    // Two updates of one cell, or a column renamed to another column's name, are refused.
    let sel = |c: &str, v: &str| RowSelector {
        where_eq: Some((c.into(), v.into())),
        index: None,
    };
    let refused = |action: TableAction| {
        edit_table(text, &t, &action, ValueFormat::Text)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refused(TableAction::UpdateCells(vec![
            (sel("Product", "Beef"), col("Price"), "1".into()),
            (sel("Product", "Beef"), col("Price"), "2".into()),
        ])),
        "two updates name the same cell (row 1, column 1); give each cell once"
    );
    assert_eq!(
        refused(TableAction::RenameColumn(col("Price"), "Product".into())),
        "another column is already named `Product`; column names must stay unique"
    );
    // A stale table pointer is a conflict.
    let edited = text.replace("| Beef | 20 |", "| Beef | 25 |");
    assert_eq!(
        edit_table(
            &edited,
            &t,
            &TableAction::DeleteColumn(col("Price")),
            ValueFormat::Text
        )
        .unwrap_err()
        .code(),
        "CONFLICT"
    );
}

/// Every element of the repository's real fixture files can be replaced by itself
/// (identity edits must pass verification and change nothing), and inserting or deleting
/// around any element never panics.
#[test]
fn identity_patches_on_real_files_change_nothing() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut files = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                files.push(p);
            }
        }
    }
    assert!(files.len() > 20, "fixtures found: {}", files.len());
    let (mut n_ok, mut n_refused) = (0, 0);
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        if text.len() > 40_000 {
            continue;
        }
        let parsed = parse(&text);
        // About 12 elements per file, spread over it (each patch parses the file four times).
        let stride = (parsed.elements.len() / 12).max(1);
        for (i, e) in parsed.elements.iter().enumerate().filter(|(i, e)| {
            i % stride == 0 && !matches!(e.kind, crate::parse::ElementKind::Document)
        }) {
            let own = text[e.range.clone()].to_string();
            let p = e.pointer().to_string();
            let res = apply_patch(&text, &[op(PatchKind::ReplaceElement, &p, Some(&own))]);
            match res {
                Ok(out) => {
                    assert_eq!(out.text, text, "{} {}", path.display(), e.logical);
                    n_ok += 1;
                }
                // Elements whose bytes do not stand alone (an item's text continued by a lazy line) may be refused, never damaged.
                Err(err) => {
                    n_refused += 1;
                    assert!(
                        matches!(err, EditError::InvalidArgument(_) | EditError::Conflict(_)),
                        "{err}"
                    );
                }
            }
            let whole = match e.kind {
                crate::parse::ElementKind::Heading => Some(PatchKind::ReplaceSection),
                crate::parse::ElementKind::ListItem => Some(PatchKind::ReplaceSubtree),
                _ => None,
            };
            if let Some(kind) = whole {
                let sub = text[e.subtree.clone()].to_string();
                match apply_patch(&text, &[op(kind, &p, Some(&sub))]) {
                    Ok(out) => {
                        assert_eq!(out.text, text, "{} {} {kind:?}", path.display(), e.logical)
                    }
                    Err(_) => n_refused += 1,
                }
            }
            if i % (3 * stride) == 0 {
                for kind in [
                    PatchKind::InsertAfter,
                    PatchKind::InsertBefore,
                    PatchKind::Delete,
                ] {
                    let _ = apply_patch(&text, &[op(kind, &p, Some("Inserted paragraph."))]);
                }
            }
        }
    }
    // Nearly everything round-trips.
    assert!(
        n_refused * 50 < n_ok,
        "{n_refused} refused of {}",
        n_ok + n_refused
    );
}

#[test]
fn inserted_blocks_do_not_join_adjacent_text() {
    let text = "[a]: https://a.example\n[b]: https://b.example\n";
    let a = ptr(text, "def1");
    assert_eq!(
        patch(
            text,
            &[op(PatchKind::InsertAfter, &a, Some("New paragraph."))]
        )
        .unwrap(),
        "[a]: https://a.example\n\nNew paragraph.\n\n[b]: https://b.example\n"
    );
    let b = ptr(text, "def2");
    assert_eq!(
        patch(
            text,
            &[op(PatchKind::InsertBefore, &b, Some("New paragraph."))]
        )
        .unwrap(),
        "[a]: https://a.example\n\nNew paragraph.\n\n[b]: https://b.example\n"
    );
}

/// markdown-rs 1.0 panics (list_item.rs, a subtraction overflow) on the text this
/// replacement would make; found by `core/tests/properties.rs`. The edit is refused and
/// the panic stays inside the parser's guard.
#[test]
fn a_result_markdown_rs_cannot_parse_is_refused() {
    let text = "- title: T\n- <div>";
    let li1 = ptr(text, "li1");
    assert_eq!(
        patch(text, &[op(PatchKind::ReplaceElement, &li1, Some("---\n- "))]),
        Err(EditError::InvalidArgument(
            "the Markdown given would change element li2 (list_item), which the operation does not target (it would join or split it); separate it with a blank line or give other Markdown; nothing was written"
                .into()
        ))
    );
}

#[test]
fn an_edit_that_nests_too_deeply_is_refused_for_that() {
    let err = patch(
        "# T\n\ntext\n",
        &[op(
            PatchKind::InsertAfter,
            "document",
            Some(&">".repeat(150)),
        )],
    )
    .unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    assert_eq!(
        err.to_string(),
        "the edit would make the document too deeply nested or crowded to parse safely (line 5 opens more than 100 nested block quotes or lists); nothing was written"
    );
}

/// A blank line is added only next to a text line: before a block that already has a
/// blank line above it, the inserted block takes that one and adds one below itself.
#[test]
fn insert_before_adds_no_blank_line_where_there_is_one() {
    for (text, expected) in [
        (
            "first para\n\nsecond para\n",
            "first para\n\nbetween\n\nsecond para\n",
        ),
        (
            "# T\n\nfirst para\n\nsecond para\n",
            "# T\n\nfirst para\n\nbetween\n\nsecond para\n",
        ),
        (
            "# T\r\n\r\nfirst para\r\n\r\nsecond para\r\n",
            "# T\r\n\r\nfirst para\r\n\r\nbetween\r\n\r\nsecond para\r\n",
        ),
        // Two blank lines above stay two: nothing is added or taken.
        (
            "first para\n\n\nsecond para\n",
            "first para\n\n\nbetween\n\nsecond para\n",
        ),
        // A text line right above (no blank line): one is added, LF and CRLF.
        (
            "[a]: https://a.example\n[b]: https://b.example\n",
            "[a]: https://a.example\n\nbetween\n\n[b]: https://b.example\n",
        ),
        (
            "[a]: https://a.example\r\n[b]: https://b.example\r\n",
            "[a]: https://a.example\r\n\r\nbetween\r\n\r\n[b]: https://b.example\r\n",
        ),
    ] {
        let parsed = parse(text);
        let last = parsed.elements.last().unwrap().pointer().to_string();
        let out =
            apply_patch(text, &[op(PatchKind::InsertBefore, &last, Some("between"))]).unwrap();
        assert_eq!(out.text, expected, "{text:?}");
        let inserted = parse(&out.text)
            .elements
            .iter()
            .find(|e| out.text[e.range.clone()] == *"between")
            .unwrap()
            .pointer()
            .to_string();
        assert_eq!(out.new_pointers, vec![Some(inserted)]);
    }
}

fn set(key: &str, value: serde_json::Value) -> PatchOp {
    PatchOp {
        kind: PatchKind::SetField,
        pointer: "document".to_string(),
        markdown: None,
        key: Some(key.to_string()),
        value: Some(value),
    }
}

fn unset(key: &str) -> PatchOp {
    PatchOp {
        kind: PatchKind::DeleteField,
        pointer: String::new(),
        markdown: None,
        key: Some(key.to_string()),
        value: None,
    }
}

/// set_field changes the key's lines only: comments, quoting, order and the comment on
/// the key's own line stay.
#[test]
fn set_field_keeps_every_other_byte_of_the_frontmatter() {
    let text = "---\n# The page's state\ntitle: \"Hello: world\"   # quoted\n'status': draft # todo\ntags: ['a', \"b # c\"] # two\n---\n# T\n";
    let out = apply_patch(text, &[set("status", serde_json::json!("done"))]).unwrap();
    assert_eq!(
        out.text,
        "---\n# The page's state\ntitle: \"Hello: world\"   # quoted\n'status': done # todo\ntags: ['a', \"b # c\"] # two\n---\n# T\n"
    );
    // One edit: the key's line.
    let line = text.find("'status'").unwrap();
    assert_eq!(line, 56);
    assert_eq!(
        out.edits,
        vec![TextEdit {
            range: 56..79,
            new_text: "'status': done # todo\n".to_string()
        }]
    );
    assert_eq!(out.new_pointers, vec![None]);
    // A value with a comment sign inside quotes keeps the comment after it, with the white
    // space before it; a string replacing a quoted one keeps its quote.
    assert_eq!(
        patch(
            text,
            &[
                set("tags", serde_json::json!(["x"])),
                set("title", serde_json::json!("yes: no"))
            ]
        )
        .unwrap(),
        "---\n# The page's state\ntitle: \"yes: no\"   # quoted\n'status': draft # todo\ntags: # two\n  - x\n---\n# T\n"
    );
    assert_eq!(
        patch(
            "---\n'single': 'x'\nplain: y\n---\n",
            &[
                set("single", serde_json::json!("it's")),
                set("plain", serde_json::json!("z"))
            ]
        )
        .unwrap(),
        "---\n'single': 'it''s'\nplain: z\n---\n"
    );
}

#[test]
fn set_field_on_a_crlf_file_writes_crlf() {
    let text = "---\r\ntitle: T\r\nstatus: draft\r\n---\r\n\r\nbody\r\n";
    assert_eq!(
        patch(
            text,
            &[
                set(
                    "status",
                    serde_json::json!({"phase": 2, "by": ["ann", "bo"]})
                ),
                set("owner", serde_json::json!("me")),
            ]
        )
        .unwrap(),
        "---\r\ntitle: T\r\nstatus:\r\n  by:\r\n  - ann\r\n  - bo\r\n  phase: 2\r\nowner: me\r\n---\r\n\r\nbody\r\n"
    );
    assert_eq!(
        patch(text, &[unset("title")]).unwrap(),
        "---\r\nstatus: draft\r\n---\r\n\r\nbody\r\n"
    );
}

/// The whole value of the key goes: a block scalar, a list at the key's column, an
/// indented map; blank and comment lines after it stay.
#[test]
fn set_field_replaces_a_multi_line_value_whole() {
    let text = "---\nsummary: |\n  line one\n\n  line two\n\ntags:\n- a\n# between\n- b\n# about x\nx: 1\nmeta:\n  a: 1\n  b: >\n    folded\n    text\nlast: true\n---\n";
    assert_eq!(
        patch(text, &[set("summary", serde_json::json!("short"))]).unwrap(),
        "---\nsummary: short\n\ntags:\n- a\n# between\n- b\n# about x\nx: 1\nmeta:\n  a: 1\n  b: >\n    folded\n    text\nlast: true\n---\n"
    );
    assert_eq!(
        patch(text, &[set("tags", serde_json::json!(["c"]))]).unwrap(),
        "---\nsummary: |\n  line one\n\n  line two\n\ntags:\n  - c\n# about x\nx: 1\nmeta:\n  a: 1\n  b: >\n    folded\n    text\nlast: true\n---\n"
    );
    assert_eq!(
        patch(text, &[set("meta", serde_json::json!("two\nlines"))]).unwrap(),
        "---\nsummary: |\n  line one\n\n  line two\n\ntags:\n- a\n# between\n- b\n# about x\nx: 1\nmeta: |-\n  two\n  lines\nlast: true\n---\n"
    );
    assert_eq!(
        patch(text, &[unset("tags"), unset("meta")]).unwrap(),
        "---\nsummary: |\n  line one\n\n  line two\n\n# about x\nx: 1\nlast: true\n---\n"
    );
    assert_eq!(
        patch(
            text,
            &[
                set("x", serde_json::Value::Null),
                set("last", serde_json::json!([]))
            ]
        )
        .unwrap(),
        "---\nsummary: |\n  line one\n\n  line two\n\ntags:\n- a\n# between\n- b\n# about x\nx: null\nmeta:\n  a: 1\n  b: >\n    folded\n    text\nlast: []\n---\n"
    );
}

#[test]
fn set_field_adds_a_missing_key_or_the_frontmatter() {
    assert_eq!(
        patch(
            "---\ntitle: T\n---\n# T\n",
            &[set("status", serde_json::json!("draft"))]
        )
        .unwrap(),
        "---\ntitle: T\nstatus: draft\n---\n# T\n"
    );
    assert_eq!(
        patch("---\n---\n# T\n", &[set("n", serde_json::json!(3))]).unwrap(),
        "---\nn: 3\n---\n# T\n"
    );
    assert_eq!(
        patch(
            "# T\n\nbody\n",
            &[set("status", serde_json::json!("draft"))]
        )
        .unwrap(),
        "---\nstatus: draft\n---\n# T\n\nbody\n"
    );
    // After a BOM; two keys in one new block; a key YAML must quote.
    assert_eq!(
        patch(
            "\u{feff}# T\r\n",
            &[
                set("status", serde_json::json!("draft")),
                set("a: b", serde_json::json!(true))
            ]
        )
        .unwrap(),
        "\u{feff}---\r\nstatus: draft\r\n'a: b': true\r\n---\r\n# T\r\n"
    );
    assert_eq!(
        patch("", &[set("status", serde_json::json!("draft"))]).unwrap(),
        "---\nstatus: draft\n---\n"
    );
    // A new block stays first, before what insert_before puts at the start of the file.
    assert_eq!(
        patch(
            "# T\n",
            &[
                op(PatchKind::InsertBefore, "document", Some("Lead.")),
                set("status", serde_json::json!("draft"))
            ]
        )
        .unwrap(),
        "---\nstatus: draft\n---\nLead.\n\n# T\n"
    );
    // With another operation of the same request.
    assert_eq!(
        patch(
            "---\na: 1\n---\n# T\n",
            &[
                op(PatchKind::InsertAfter, "document", Some("End.")),
                set("a", serde_json::json!(2))
            ]
        )
        .unwrap(),
        "---\na: 2\n---\n# T\n\nEnd.\n"
    );
}

#[test]
fn field_operations_refuse_what_they_cannot_do() {
    let text = "---\ntitle: T\ndup: 1\ndup: 2\n---\n# T\n";
    let err = |ops: &[PatchOp]| apply_patch(text, ops).unwrap_err();
    assert_eq!(
        err(&[set("", serde_json::json!(1))]),
        EditError::InvalidArgument(
            "operation 0 (set_field): `key` must be a frontmatter key on one line, not blank and without control characters (got \"\")".into()
        )
    );
    assert_eq!(
        err(&[unset("a\nb: 2")]),
        EditError::InvalidArgument(
            "operation 0 (delete_field): `key` must be a frontmatter key on one line, not blank and without control characters (got \"a\\nb: 2\")".into()
        )
    );
    assert_eq!(
        err(&[unset("status")]),
        EditError::InvalidArgument(
            "operation 0 (delete_field): the frontmatter has no key `status`; nothing was written"
                .into()
        )
    );
    assert_eq!(
        err(&[set("dup", serde_json::json!(3))]),
        EditError::InvalidArgument(
            "operation 0 (set_field): the frontmatter has key `dup` 2 times; delete_field removes them all, then set_field it once".into()
        )
    );
    // A block folio does not read as frontmatter (closed by `...`, or never closed) gets
    // no second block above it.
    for unread in ["---\ntitle: x\n...\n# Body\n", "---\ntitle: x\n# Body\n"] {
        assert_eq!(
            apply_patch(unread, &[set("k", serde_json::json!(1))]).unwrap_err(),
            EditError::InvalidArgument(
                "operation 0 (set_field): the file starts with `---` but has no frontmatter folio reads (a block closed by `---` on a line of its own); nothing was written".into()
            ),
            "{unread:?}"
        );
    }
    // A thematic break first is no block: the frontmatter goes above it.
    assert_eq!(
        patch("---\n\nText.\n", &[set("k", serde_json::json!(1))]).unwrap(),
        "---\nk: 1\n---\n---\n\nText.\n"
    );
    // delete_field removes every entry of a repeated key.
    assert_eq!(
        patch(text, &[unset("dup")]).unwrap(),
        "---\ntitle: T\n---\n# T\n"
    );
    let mut no_value = set("title", serde_json::Value::Null);
    no_value.value = None;
    assert_eq!(
        err(&[no_value]),
        EditError::InvalidArgument(
            "operation 0 (set_field): `value` is required (JSON null is a value)".into()
        )
    );
    let mut on_element = set("title", serde_json::json!("U"));
    on_element.pointer = ptr(text, "1");
    assert_eq!(
        err(&[on_element]),
        EditError::InvalidArgument(
            "operation 0 (set_field): set_field and delete_field edit the document's frontmatter: give the pointer `document` or none".into()
        )
    );
    assert_eq!(
        apply_patch("+++\na = 1\n+++\n", &[set("a", serde_json::json!(2))]).unwrap_err(),
        EditError::InvalidArgument(
            "operation 0 (set_field): the frontmatter is TOML (`+++`); set_field and delete_field edit YAML frontmatter (`---`)".into()
        )
    );
    assert_eq!(
        apply_patch("---\na: [\n---\n", &[set("a", serde_json::json!(2))]).unwrap_err(),
        EditError::InvalidArgument(
            "operation 0 (set_field): the frontmatter is not valid YAML (did not find expected node content at line 2 column 1, while parsing a flow node); fix it first".into()
        )
    );
    // A key in YAML's explicit form is not found by its line: setting it would add it twice.
    assert_eq!(
        apply_patch(
            "---\ntitle: T\n? complex\n: value\n---\n",
            &[set("complex", serde_json::json!("v2"))]
        )
        .unwrap_err(),
        EditError::InvalidArgument(
            "operation 0 (set_field): the frontmatter writes a key in YAML's explicit form (`? key`), which set_field and delete_field do not edit; replace the frontmatter instead; nothing was written".into()
        )
    );
    let mut with_key = op(PatchKind::Delete, &ptr(text, "1"), None);
    with_key.key = Some("title".into());
    assert_eq!(
        err(&[with_key]),
        EditError::InvalidArgument(
            "operation 0 (delete): `key` and `value` belong to set_field and delete_field; this operation takes `markdown`".into()
        )
    );
}

/// A string a YAML 1.1 reader (PyYAML, Jekyll) would read as a boolean, a date or a
/// number is written quoted; other strings stay plain.
#[test]
fn set_field_quotes_strings_yaml_1_1_reads_otherwise() {
    let text = "---\ntitle: T\n---\n";
    for (value, written) in [
        ("yes", "'yes'"),
        ("off", "'off'"),
        ("N", "N"),
        ("2024-01-01", "'2024-01-01'"),
        ("1_000", "'1_000'"),
        ("1:30", "'1:30'"),
        ("hello", "hello"),
        ("yes please", "yes please"),
        ("it's", "it's"),
    ] {
        assert_eq!(
            patch(text, &[set("k", serde_json::json!(value))]).unwrap(),
            format!("---\ntitle: T\nk: {written}\n---\n"),
            "{value:?}"
        );
    }
    assert_eq!(
        patch(text, &[set("<<", serde_json::json!(1))]).unwrap(),
        "---\ntitle: T\n'<<': 1\n---\n"
    );
    assert_eq!(
        patch(text, &[set("on", serde_json::json!("x"))]).unwrap(),
        "---\ntitle: T\n'on': x\n---\n"
    );
}
