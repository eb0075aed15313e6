//! Tests of kb_search: hits with their URIs, every filter, and argument errors.

use serde_json::json;

use super::{GUIDE, err, h, ok, pointer, setup};
use crate::host::search::SearchRequest;
use crate::host::{Host, Options};

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
    // The file's other chunk that matches ("Widget" in the price table) is listed on its
    // hit, below it, instead of taking a place of its own.
    let other = v["results"][0]["sections"][0]["score"].as_f64().unwrap();
    assert!(other > 0.0 && other < 1.0, "{other}");
    v["results"][0]["sections"][0]["score"] = json!(0.5);
    // The level-1 heading owns the rest of the document.
    let guide_section = GUIDE[GUIDE.find("# Guide").unwrap()..].trim_end();
    let guide_ptr = pointer("1", "# Guide", guide_section);
    let prices = GUIDE[GUIDE.find("## Prices").unwrap()..].trim_end();
    let prices_ptr = pointer("1.2", "## Prices", prices);
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
                "sections": [{
                    "pointer": prices_ptr,
                    "heading_path": ["Guide", "Prices"],
                    "start_line": 16,
                    "end_line": 21,
                    "score": 0.5
                }],
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
    // `per_file: 0`: every matching chunk of a file takes a place.
    let v = ok(kb.search(&SearchRequest {
        query: "widget".into(),
        fields: fields("title", "Guide"),
        per_file: Some(0),
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
    // `include_low_quality` drops the floor.
    let v = ok(kb.search(&SearchRequest {
        query: "widget".into(),
        min_quality: Some(0.99),
        include_low_quality: true,
        ..SearchRequest::default()
    }));
    assert!(!v["results"].as_array().unwrap().is_empty());
    assert_eq!(v["filter_applied"], json!([]));
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
        json!({"code": "NOT_CONFIGURED", "message": format!("rerank needs a cross-encoder and none is configured: set [rerank] provider (with model and endpoint) in the workspace's folio.toml or in your own config ({}), where provider = \"none\" turns it off (docs/configuration.md; folio mcp reads them when it starts), or search without rerank", crate::config::user::UserConfig::location())})
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

/// A host over `root` (not indexed yet) whose searches wait at most `wait` for the
/// first index.
fn unindexed_host(root: &std::path::Path, wait: std::time::Duration) -> std::sync::Arc<Host> {
    let mut kb = Host::open(crate::host::Options {
        root: root.to_path_buf(),
        db: None,
        allow_writes: false,
        embed: Err("embeddings are off in this test".into()),
        fetch: Default::default(),
        rerank: Ok(None),
    })
    .unwrap();
    kb.first_index_wait = wait;
    std::sync::Arc::new(kb)
}

#[test]
fn first_search_on_a_new_root_waits_for_the_first_index() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("docs")).unwrap();
    std::fs::write(dir.path().join("docs/guide.md"), GUIDE).unwrap();
    std::fs::write(dir.path().join("index.md"), "# Home\n\nNothing here.\n").unwrap();
    let kb = unindexed_host(dir.path(), std::time::Duration::from_secs(30));
    // Another writer holds the root's write lock, so the first pass reads every file and
    // then waits to commit: until the holder lets go, the index holds nothing.
    let (locked_tx, locked_rx) = std::sync::mpsc::channel();
    let root = kb.root().to_path_buf();
    let holder = std::thread::spawn(move || {
        let writer = crate::write::Writer::new(&root);
        let guard = writer.lock().unwrap();
        locked_tx.send(()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(400));
        drop(guard);
    });
    locked_rx.recv().unwrap();
    assert_eq!(ok(kb.start_reindex(false))["started"], json!(true));
    let v = ok(kb.search(&SearchRequest::new("widget")));
    holder.join().unwrap();
    let paths: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    // The guide once, its other matching chunk listed on its hit.
    assert_eq!(paths, ["docs/guide.md"]);
    assert_eq!(
        v["results"][0]["sections"].as_array().map(Vec::len),
        Some(1)
    );
    assert_eq!((v.get("partial"), v.get("index_progress")), (None, None));
}

#[test]
fn first_search_says_partial_when_the_first_index_takes_longer_than_the_wait() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("guide.md"), GUIDE).unwrap();
    let kb = unindexed_host(dir.path(), std::time::Duration::from_millis(50));
    kb.pretend_running(true);
    let v = ok(kb.search(&SearchRequest::new("widget")));
    assert_eq!(
        v,
        json!({
            "results": [], "low_confidence": true, "filter_applied": [], "mode": "lexical",
            "indexing": true, "embedding": false,
            "partial": true, "index_progress": {"done": 0, "total": 0, "pending_changes": 0}
        })
    );
    // No pass runs and none finished (it failed, say): the answer is not partial, and a
    // later pass still gets waited for.
    kb.pretend_running(false);
    let v = ok(kb.search(&SearchRequest::new("widget")));
    assert_eq!((v["results"].clone(), v.get("partial")), (json!([]), None));
    kb.reindex_blocking(false).unwrap();
    let v = ok(kb.search(&SearchRequest::new("widget")));
    assert_eq!(v["results"][0]["path"], json!("guide.md"));
}

#[test]
fn a_search_after_the_index_file_was_built_again_reads_the_new_file() {
    let (dir, kb) = setup(false);
    let paths = |v: &serde_json::Value| -> Vec<String> {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        paths(&ok(kb.search(&SearchRequest::new("widget")))),
        ["docs/guide.md"]
    );
    // The index is deleted (`rm -rf .folio`) and a pass builds it again with a new file.
    let folder = kb.db_path().parent().unwrap().to_path_buf();
    std::fs::remove_dir_all(&folder).unwrap();
    std::fs::write(dir.path().join("zebra.md"), "# Zebra\n\nStripes.\n").unwrap();
    let last = kb.reindex_blocking(false).unwrap();
    assert!(last.ok, "{last:?}");
    assert_eq!(
        paths(&ok(kb.search(&SearchRequest::new("zebra")))),
        ["zebra.md"]
    );
}

/// A `[search]` number out of its range stops the host at start-up, naming the file and
/// the key, rather than failing every search later.
#[test]
fn a_bad_search_table_stops_the_host_at_start_up() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("folio.toml"),
        "[search]\nsemantic_only_floor = 1.5\n",
    )
    .unwrap();
    let Err(err) = Host::open(Options {
        root: dir.path().to_path_buf(),
        db: None,
        allow_writes: false,
        embed: Err("embeddings are off in this test".into()),
        fetch: Default::default(),
        rerank: Ok(None),
    }) else {
        panic!("a bad [search] table was accepted");
    };
    assert_eq!(
        err.to_string(),
        format!(
            "invalid {}: [search] semantic_only_floor must be between 0 and 1, got 1.5",
            dir.path()
                .canonicalize()
                .unwrap()
                .join("folio.toml")
                .display()
        )
    );
}

#[test]
fn a_host_for_indexing_opens_with_a_bad_search_table_and_its_searches_say_why() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("folio.toml"),
        "[search]\nsemantic_only_floor = 1.5\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("index.md"), "# Home\n\nwidget\n").unwrap();
    let kb = Host::open_for_indexing(Options {
        root: dir.path().to_path_buf(),
        db: None,
        allow_writes: false,
        embed: Err("embeddings are off in this test".into()),
        fetch: Default::default(),
        rerank: Ok(None),
    })
    .unwrap();
    assert_eq!(kb.index_now(false, None).unwrap().indexed, 1);
    assert_eq!(
        err(kb.search(&SearchRequest {
            query: "widget".into(),
            ..SearchRequest::default()
        })),
        json!({"code": "INVALID_ARGUMENT", "message": "[search] semantic_only_floor must be between 0 and 1, got 1.5"})
    );
    // A flag stands over the table's number: the search runs.
    let flag = crate::config::SearchConfig {
        semantic_only_floor: Some(0.5),
        ..Default::default()
    };
    let hits = ok(kb.search_tuned(
        &SearchRequest {
            query: "widget".into(),
            ..SearchRequest::default()
        },
        &flag,
    ));
    assert_eq!(hits["results"][0]["path"], "index.md");
}

#[test]
fn tuning_flags_are_checked_before_a_search_and_override_the_search_table() {
    let (_dir, kb) = setup(false);
    let widget = SearchRequest {
        query: "widget".into(),
        mode: Some("lexical".into()),
        ..SearchRequest::default()
    };
    let bad = crate::config::SearchConfig {
        writing_system_centering: Some(3.0),
        ..Default::default()
    };
    // A flag's error names the parameter, not a `[search]` table.
    let expected = json!({"code": "INVALID_ARGUMENT", "message": "writing_system_centering must be between 0 and 1, got 3"});
    assert_eq!(err(kb.check_search(&widget, &bad)), expected);
    assert_eq!(err(kb.search_tuned(&widget, &bad)), expected);
    let good = crate::config::SearchConfig {
        lexical_weight: Some(2.0),
        ..Default::default()
    };
    assert_eq!(
        kb.check_search(&widget, &good).unwrap(),
        crate::search::pipeline::SearchMode::Lexical
    );
    let paths = |v: serde_json::Value| -> Vec<String> {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["path"].as_str().unwrap().to_owned())
            .collect()
    };
    let (tuned, plain) = (ok(kb.search_tuned(&widget, &good)), ok(kb.search(&widget)));
    assert_eq!(paths(tuned), paths(plain.clone()));
    assert_eq!(paths(plain), ["docs/guide.md"]);
    // An empty query is refused before any index pass a front end would run first.
    assert_eq!(
        err(kb.check_search(
            &SearchRequest {
                query: " ".into(),
                ..SearchRequest::default()
            },
            &Default::default()
        )),
        json!({"code": "INVALID_ARGUMENT", "message": "`query` must not be empty"})
    );
}

/// One row of a long table is found by its value and the table's column names: the
/// table is cut between rows, every part carries the header, and the hit cites the
/// part's lines.
#[test]
fn a_row_of_a_long_table_is_found_with_its_column_names() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut rows: Vec<String> = (1..=120)
        .map(|i| {
            format!(
                "| Station {i} | {} | {:02}:{:02} |",
                i % 9 + 1,
                6 + i % 12,
                (i * 7) % 60
            )
        })
        .collect();
    rows[89] = "| Kyoto | 7 | 08:15 |".to_string();
    let timetable = format!(
        "# Timetable\n\nThe weekday trains.\n\n| Station | Platform | Departure |\n|---|---|---|\n{}\n",
        rows.join("\n")
    );
    std::fs::write(root.join("timetable.md"), &timetable).unwrap();
    std::fs::write(
        root.join("travel.md"),
        "# Travel\n\nAsk at the platform about the departure of the next train.\n",
    )
    .unwrap();
    let kb = super::open_at(root, false);
    assert!(kb.reindex_blocking(false).unwrap().ok);
    let v = ok(kb.search(&SearchRequest {
        query: "Kyoto platform departure".into(),
        limit: Some(2),
        ..SearchRequest::default()
    }));
    let hits: Vec<(&str, u64, u64)> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["path"].as_str().unwrap(),
                h["start_line"].as_u64().unwrap(),
                h["end_line"].as_u64().unwrap(),
            )
        })
        .collect();
    // Lines 5-60 are the table's first part (header, delimiter, 54 rows under the
    // 1,500-byte budget), 61-113 the second, which holds Kyoto (line 96).
    assert_eq!(hits, [("timetable.md", 61, 113), ("travel.md", 1, 3)]);
    let table = timetable.find("| Station |").unwrap();
    let table_text = timetable[table..].trim_end();
    let table_pointer = pointer("1.t1", table_text, table_text);
    assert_eq!(v["results"][0]["pointer"], table_pointer);
    assert_eq!(v["results"][0]["heading_path"], json!(["Timetable"]));
    // A line added above the table since the pass: the hit is checked against the file
    // chunked again and keeps its own part, one line lower.
    std::fs::write(
        root.join("timetable.md"),
        timetable.replace("weekday trains.\n", "weekday trains.\nMonday to Friday.\n"),
    )
    .unwrap();
    let v = ok(kb.search(&SearchRequest {
        query: "Kyoto platform departure".into(),
        limit: Some(1),
        ..SearchRequest::default()
    }));
    let lines = (&v["results"][0]["start_line"], &v["results"][0]["end_line"]);
    assert_eq!(lines, (&json!(62), &json!(114)));
}

/// A file takes one place, so when its best chunk changed on disk since the pass, the
/// first of its other sections the file still holds stands in for it (the file is not
/// lost from the hits), with its own score and no leg ranks (they were the old chunk's);
/// the sections still there stay listed, at their lines now.
#[test]
fn a_section_stands_in_for_a_changed_chunk_of_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let garden = "# Garden\n\nTomatoes and basil grow here; tomatoes need sun.\n\n## Water\n\nWater the tomatoes each morning.\n\n## Soil\n\nTomatoes like rich soil.\n";
    std::fs::write(root.join("garden.md"), garden).unwrap();
    std::fs::write(root.join("other.md"), "# Other\n\nNothing to see.\n").unwrap();
    let kb = super::open_at(root, false);
    assert!(kb.reindex_blocking(false).unwrap().ok);
    let search = || {
        ok(kb.search(&SearchRequest {
            query: "tomatoes".into(),
            mode: Some("lexical".into()),
            ..SearchRequest::default()
        }))
    };
    let v = search();
    let first = |v: &serde_json::Value| {
        let h = &v["results"][0];
        let sections: Vec<(String, u64)> = h["sections"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| {
                (
                    s["heading_path"].to_string(),
                    s["start_line"].as_u64().unwrap(),
                )
            })
            .collect();
        (
            h["path"].clone(),
            h["heading_path"].clone(),
            h["start_line"].clone(),
            h["end_line"].clone(),
            h["lexical_rank"].clone(),
            sections,
        )
    };
    let listed = |lines: &[(&str, u64)]| -> Vec<(String, u64)> {
        lines.iter().map(|(h, l)| (h.to_string(), *l)).collect()
    };
    assert_eq!(
        first(&v),
        (
            json!("garden.md"),
            json!(["Garden"]),
            json!(1),
            json!(3),
            json!(1),
            // BM25 ranks the shorter Soil chunk first.
            listed(&[(r#"["Garden","Soil"]"#, 9), (r#"["Garden","Water"]"#, 5)])
        )
    );
    // The first paragraph no longer says it, and takes a line more.
    std::fs::write(
        root.join("garden.md"),
        garden.replace(
            "Tomatoes and basil grow here; tomatoes",
            "Peppers and basil grow here;\nthey",
        ),
    )
    .unwrap();
    let v = search();
    let soil_score = v["results"][0]["score"].clone();
    assert_eq!(
        first(&v),
        (
            json!("garden.md"),
            json!(["Garden", "Soil"]),
            json!(10),
            json!(12),
            serde_json::Value::Null,
            listed(&[(r#"["Garden","Water"]"#, 6)])
        )
    );
    assert!(soil_score.as_f64().unwrap() > 0.0, "{v}");
    assert_eq!(
        v["results"][0]["snippet"],
        "## Soil Tomatoes like rich soil."
    );
    assert_eq!(v["results"].as_array().map(Vec::len), Some(1));
}

/// Hits of a file gone since the pass are dropped and the spares fill the list up to
/// `limit`; when the legs' best answer was that file, the answer is low confidence.
#[test]
fn hits_of_a_file_gone_since_the_pass_are_replaced_and_the_answer_is_low_confidence() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for (name, text) in [
        ("a.md", "# A\n\nOrchids orchids orchids.\n"),
        ("b.md", "# B\n\nOrchids twice: orchids.\n"),
        ("c.md", "# C\n\nOne orchids here.\n"),
    ] {
        std::fs::write(root.join(name), text).unwrap();
    }
    let kb = super::open_at(root, false);
    assert!(kb.reindex_blocking(false).unwrap().ok);
    let search = || {
        ok(kb.search(&SearchRequest {
            query: "orchids".into(),
            mode: Some("lexical".into()),
            limit: Some(2),
            ..SearchRequest::default()
        }))
    };
    let paths = |v: &serde_json::Value| -> Vec<String> {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["path"].as_str().unwrap().to_owned())
            .collect()
    };
    let v = search();
    assert_eq!(paths(&v), ["a.md", "b.md"]);
    assert_eq!(
        (&v["low_confidence"], v.get("partial")),
        (&json!(false), None)
    );
    std::fs::remove_file(root.join("a.md")).unwrap();
    let v = search();
    assert_eq!(paths(&v), ["b.md", "c.md"]);
    assert_eq!(
        (
            &v["low_confidence"],
            &v["partial"],
            &v["stale_hits_dropped"]
        ),
        (&json!(true), &json!(true), &json!(1))
    );
}
