//! Tests of kb_status and kb_reindex: the counts, and a background reindex started or
//! joined.

use serde_json::json;

use super::{ok, setup};

#[test]
fn kb_status_reports_counts_and_the_last_reindex() {
    let (_dir, kb) = setup(false);
    let mut v = ok(kb.status());
    v["index"]["db_size_bytes"] = json!(0);
    for volatile in ["finished_at_ms", "elapsed_ms"] {
        v["indexing"]["last"][volatile] = json!(0);
    }
    v["root"] = json!("ROOT");
    assert_eq!(v["db_path"], json!(kb.db_path().display().to_string()));
    v["db_path"] = json!("DB");
    assert_eq!(
        v,
        json!({
            "root": "ROOT",
            "db_path": "DB",
            "allow_writes": false,
            "search_modes": ["lexical"],
            "embedding": {
                "state": "off", "done": 0, "total": 0, "embedded_chunks": 0, "total_chunks": 5, "vectors": 0,
                "skipped_files": 0, "reason": "embeddings are off in this test"
            },
            "rerank": {"state": "off"},
            "index": {
                "documents": 3, "chunks": 5, "db_size_bytes": 0, "schema_version": crate::store::SCHEMA_VERSION, "exists": true,
                "lexical_analyser": crate::store::lexical::WORDS_ID
            },
            "indexing": {
                "state": "idle", "force": false, "done": 0, "total": 0, "started_at_ms": 0,
                "last": {"ok": true, "finished_at_ms": 0, "elapsed_ms": 0, "files": 3, "indexed": 3, "unchanged": 0, "removed": 0, "skipped": 0, "frontmatter_unparsed": 0, "kind": "full"},
                "pending_changes": 0, "changes_passes": 0, "full_passes": 1
            },
            "left_out": {"skipped": [], "not_enabled": [], "frontmatter_unparsed": [], "without_text": [], "withheld": []},
            "watch": {
                "configured": "auto", "mode": "off", "reason": "this process does not watch the root", "changes_seen": 0
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
        json!({"started": true, "indexing": {"state": "running", "force": true, "done": 0, "total": 0, "started_at_ms": 0, "last": null, "pending_changes": 0, "changes_passes": 0, "full_passes": 1}})
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
fn index_now_reports_progress_counts_a_full_pass_and_starts_no_embedding() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.md", "b.md", "c.md"] {
        std::fs::write(dir.path().join(name), format!("# {name}\n\ntext\n")).unwrap();
    }
    let kb = super::open_at(dir.path(), false);
    let seen = std::sync::Mutex::new(Vec::new());
    let report = |done: usize, total: usize| seen.lock().unwrap().push((done, total));
    let summary = kb.index_now(false, Some(&report)).unwrap();
    assert_eq!(
        (summary.files, summary.indexed, summary.unchanged),
        (3, 3, 0)
    );
    assert_eq!(seen.lock().unwrap().last(), Some(&(3, 3)));
    let v = ok(kb.status());
    assert_eq!(v["indexing"]["state"], "idle");
    assert_eq!(v["indexing"]["full_passes"], 1);
    assert_eq!(v["indexing"]["last"]["indexed"], 3);
    assert!(!kb.embedding.is_running());
    let again = kb.index_now(false, None).unwrap();
    assert_eq!((again.indexed, again.unchanged), (0, 3));
    assert_eq!(ok(kb.status())["indexing"]["full_passes"], 2);
}

#[test]
fn index_now_of_another_folders_index_fails_with_the_indexers_message() {
    let dir = tempfile::tempdir().unwrap();
    let (p, q) = (dir.path().join("p"), dir.path().join("q"));
    for root in [&p, &q] {
        std::fs::create_dir(root).unwrap();
        std::fs::write(root.join("a.md"), "# A\n").unwrap();
    }
    let q_host = super::open_at(&q, false);
    q_host.index_now(false, None).unwrap();
    let mut options = crate::host::Options::resolve(
        &p,
        &crate::workspace::Config::default(),
        Err("no user configuration in this test"),
        false,
    );
    options.db = Some(q_host.db_path().to_path_buf());
    let p_host = crate::host::Host::open(options).unwrap();
    let e = p_host.index_now(false, None).unwrap_err();
    assert_eq!(e.code, crate::host::ErrorCode::Internal);
    assert!(e.message.contains("is the index of"), "{}", e.message);
    // The failed pass is recorded, and no pass is left running.
    let v = ok(p_host.status());
    assert_eq!(v["indexing"]["state"], "idle");
    assert_eq!(v["indexing"]["last"]["ok"], false);
}

#[test]
fn status_of_a_root_never_indexed_creates_no_index() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.md"), "# A\n").unwrap();
    let kb = super::open_at(dir.path(), false);
    let v = ok(kb.status_checked());
    assert_eq!(
        (
            &v["index"]["exists"],
            &v["index"]["documents"],
            &v["search_modes"]
        ),
        (&json!(false), &json!(0), &json!(["lexical"]))
    );
    assert!(!kb.db_path().exists());
    // A host that does not watch says how a server would (Linux: inotify), where
    // `kb_status` of the same host says it does not watch.
    assert_eq!(v["watch"]["mode"], "native");
    assert_eq!(ok(kb.status())["watch"]["mode"], "off");
}

#[test]
fn provider_none_is_off_with_its_reason_before_any_pass() {
    use crate::config::EmbedConfig;
    use crate::embed::settings::{EmbedSettings, ProviderKind};
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.md"), "# A\n").unwrap();
    let settings = EmbedSettings::resolve(
        &EmbedConfig {
            provider: Some(ProviderKind::None),
            ..EmbedConfig::default()
        },
        &Default::default(),
        false,
    )
    .unwrap();
    let kb = crate::host::Host::open(crate::host::Options {
        root: dir.path().to_path_buf(),
        db: None,
        allow_writes: false,
        embed: Ok(settings),
        fetch: Default::default(),
        rerank: Ok(None),
    })
    .unwrap();
    let v = ok(kb.status_checked());
    assert_eq!(
        (&v["embedding"]["state"], &v["embedding"]["reason"]),
        (
            &json!("off"),
            &json!(
                "embedding provider `none` (from the workspace's folio.toml): search is lexical"
            )
        )
    );
}

#[test]
fn kb_status_names_what_the_index_leaves_out_as_of_the_last_pass() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("ok.md"), "# Ok\n").unwrap();
    std::fs::write(root.join("bad.md"), "---\ntags: [a\n---\n# Bad\n").unwrap();
    std::fs::write(root.join("table.csv"), "name,size\nwidget,3\n").unwrap();
    std::fs::write(root.join("lib.rs"), "fn main() {}\n").unwrap();
    std::fs::write(root.join("empty.md"), [0xff, 0xfe, 0x00]).unwrap();
    let kb = super::open_at(root, false);
    assert_eq!(
        ok(kb.status())["left_out"],
        json!({"skipped": [], "not_enabled": [], "frontmatter_unparsed": [], "without_text": [], "withheld": []}),
        "nothing is known before the first pass"
    );
    assert!(kb.reindex_blocking(false).unwrap().ok);
    let left = ok(kb.status())["left_out"].clone();
    assert_eq!(left["skipped"][0]["path"], "empty.md", "{left}");
    assert_eq!(left["skipped"].as_array().unwrap().len(), 1, "{left}");
    assert_eq!(
        left["not_enabled"],
        json!([{"extension": "rs", "files": 1, "examples": ["lib.rs"]}])
    );
    assert_eq!(left["frontmatter_unparsed"][0]["path"], "bad.md");
    assert_eq!(left["withheld"], json!([]));
    // The CSV parser turned off: until a pass removes its rows, search still finds the
    // CSV, and a read refuses it.
    std::fs::write(root.join("folio.toml"), "[parsers]\nenabled = [\"txt\"]\n").unwrap();
    let narrowed = super::open_at(root, false);
    assert_eq!(
        ok(narrowed.status())["left_out"]["withheld"],
        json!([{"path": "table.csv", "reason": "extension-not-registered"}])
    );
    assert!(narrowed.reindex_blocking(false).unwrap().ok);
    let left = ok(narrowed.status())["left_out"].clone();
    assert_eq!(left["withheld"], json!([]));
    assert_eq!(
        left["not_enabled"],
        json!([
            {"extension": "csv", "files": 1, "examples": ["table.csv"]},
            {"extension": "rs", "files": 1, "examples": ["lib.rs"]}
        ])
    );
}
