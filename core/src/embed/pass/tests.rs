//! Embedding pass tests on a real folder, a real index file and the
//! deterministic test embedder.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::*;
use crate::embed::testing::VocabEmbedder;
use crate::index::index_root;
use crate::search::SearchQuery;
use crate::workspace::Config;

const VOCAB: &[&str] = &["install", "linux", "deploy", "search"];

fn write(root: &Path, path: &str, text: &str) {
    let abs = root.join(path);
    std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
    std::fs::write(abs, text).unwrap();
}

/// Three files, six chunks, five distinct embedded texts: the "Shared"
/// section (same heading path, same text) is in guide.md and ops.md.
fn corpus(root: &Path) {
    write(
        root,
        "guide.md",
        "# Install\n\nRun the installer.\n\n## Linux\n\nUse the package manager.\n\n# Shared\n\nThe same words.\n",
    );
    write(
        root,
        "ops.md",
        "# Deploy\n\nShip it carefully.\n\n# Shared\n\nThe same words.\n",
    );
    write(root, "search.md", "# Search\n\nFind things.\n");
}

fn setup() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    corpus(&root);
    let db = root.join(".folio/index.db");
    index_root(&root, &Config::default(), &db, false, None).unwrap();
    (dir, root, db)
}

fn pass(db: &Path, e: &dyn Embedder) -> EmbedSummary {
    let mut store = Store::open(db).unwrap();
    embed_pending(
        &mut store,
        e,
        &EmbedProgress::new(),
        &AtomicBool::new(false),
    )
    .unwrap()
}

fn counts(db: &Path) -> (u64, u64, u64) {
    let s = Store::open(db).unwrap().vector_status().unwrap();
    (s.embedded_chunks, s.total_chunks, s.vectors)
}

#[test]
fn only_changed_chunks_are_reembedded() {
    let (_dir, root, db) = setup();
    let e = VocabEmbedder::new("test:vocab", VOCAB);
    let first = pass(&db, &e);
    assert_eq!(
        (
            first.embedded,
            first.documents_embedded,
            first.reused,
            first.removed,
            first.recreated
        ),
        (5, 3, 0, 0, true)
    );
    // Each distinct chunk text once, and each of the 3 documents once (whole-document vectors).
    assert_eq!(
        e.embedded.load(Ordering::SeqCst),
        8,
        "the embedder saw each distinct text once"
    );
    assert_eq!(counts(&db), (6, 6, 5));

    // Nothing changed: no provider call, nothing written.
    let before = std::fs::read(&db).unwrap();
    let again = pass(&db, &e);
    assert_eq!(
        (
            again.embedded,
            again.documents_embedded,
            again.reused,
            again.removed,
            again.recreated
        ),
        (0, 0, 6, 0, false)
    );
    assert_eq!(e.embedded.load(Ordering::SeqCst), 8);
    assert_eq!(std::fs::read(&db).unwrap(), before);

    // Edit one chunk of one file: exactly that chunk is embedded again, and
    // the old text's vector is removed.
    write(
        &root,
        "guide.md",
        "# Install\n\nRun the installer.\n\n## Linux\n\nUse apt on Linux.\n\n# Shared\n\nThe same words.\n",
    );
    let reindex = index_root(&root, &Config::default(), &db, false, None).unwrap();
    assert_eq!(reindex.indexed, 1);
    // Before the pass, the old text's vector (nearest to "linux") is stale: a search for 5
    // still gets the 5 current chunks that have vectors, not 4.
    {
        let store = Store::open(&db).unwrap();
        let q = e.embed_query("linux").unwrap();
        let hits = store
            .vector_search("test:vocab", &q, 5, &SearchQuery::default())
            .unwrap()
            .results;
        assert_eq!(hits.len(), 5, "{hits:?}");
        assert!(
            hits.iter()
                .all(|h| h.start_line != 5 || h.path != "guide.md"),
            "{hits:?}"
        );
    }
    let third = pass(&db, &e);
    assert_eq!(
        (
            third.embedded,
            third.documents_embedded,
            third.reused,
            third.removed,
            third.recreated
        ),
        (1, 1, 5, 1, false)
    );
    // The changed chunk and its document's new whole-document vector.
    assert_eq!(e.embedded.load(Ordering::SeqCst), 10);
    assert_eq!(counts(&db), (6, 6, 5));

    // The new text is what was embedded: heading path, blank line, text.
    let store = Store::open(&db).unwrap();
    // "Install > Linux\n\n## Linux\n\nUse apt on Linux.": install 1, linux 3,
    // other words 3, so the query "linux" scores 3/√19.
    let q = e.embed_query("linux").unwrap();
    let hits = store
        .vector_search("test:vocab", &q, 1, &SearchQuery::default())
        .unwrap()
        .results;
    assert_eq!((hits[0].path.as_str(), hits[0].start_line), ("guide.md", 5));
    assert!(
        (hits[0].score - 3.0 / 19f64.sqrt()).abs() < 1e-6,
        "{}",
        hits[0].score
    );
}

#[test]
fn model_change_reembeds_all_and_keeps_lexical_rows() {
    let (_dir, _root, db) = setup();
    pass(&db, &VocabEmbedder::new("test:a", VOCAB));
    let lexical = |db: &Path| {
        Store::open(db)
            .unwrap()
            .search_lexical(&SearchQuery::new("same words"))
            .unwrap()
    };
    let before = lexical(&db);
    assert_eq!(before.results.len(), 2);
    let b = VocabEmbedder::new("test:b", &["install"]);
    let summary = pass(&db, &b);
    assert_eq!(
        (
            summary.embedded,
            summary.documents_embedded,
            summary.reused,
            summary.recreated
        ),
        (5, 3, 0, true)
    );
    assert_eq!(b.embedded.load(Ordering::SeqCst), 8);
    assert_eq!(counts(&db), (6, 6, 5));
    assert_eq!(lexical(&db), before);
    assert_eq!(
        Store::open(&db).unwrap().vector_model().unwrap(),
        Some(VectorModel {
            model_id: "test:b".to_owned(),
            dims: 2
        })
    );
}

#[test]
fn a_refused_file_is_skipped_alone() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    write(&root, "a.md", "# A\n\nOne.\n\n## A2\n\nTwo.\n");
    write(&root, "b.md", "# B\n\nThis holds FORBIDDEN words.\n");
    write(&root, "c.md", "# C\n\nThree.\n\n## C2\n\nFour.\n");
    let db = root.join(".folio/index.db");
    index_root(&root, &Config::default(), &db, false, None).unwrap();
    // Batches of 4: [a, a, b, c] is refused and retried file by file; [c] passes.
    let e = VocabEmbedder::new("test:vocab", VOCAB)
        .refusing("FORBIDDEN")
        .with_batch(4);
    let summary = pass(&db, &e);
    assert_eq!(
        summary.skipped_files,
        vec![SkippedFile {
            path: "b.md".to_owned(),
            reason: "input refused: input contains FORBIDDEN".to_owned()
        }]
    );
    assert_eq!(
        (summary.embedded, summary.unavailable.as_deref()),
        (4, None)
    );
    assert_eq!(counts(&db), (4, 5, 4));
    // The next pass tries b.md again (and only b.md).
    let again = pass(&db, &e);
    assert_eq!(
        (again.embedded, again.reused, again.skipped_files.len()),
        (0, 4, 1)
    );
}

#[test]
fn an_unavailable_provider_stops_the_pass_and_says_why() {
    let (_dir, _root, db) = setup();
    let lexical_before = Store::open(&db)
        .unwrap()
        .search_lexical(&SearchQuery::new("installer"))
        .unwrap();
    let e = VocabEmbedder::new("test:vocab", VOCAB);
    e.down.store(true, Ordering::SeqCst);
    let progress = EmbedProgress::new();
    let mut store = Store::open(&db).unwrap();
    let summary = embed_pending(&mut store, &e, &progress, &AtomicBool::new(false)).unwrap();
    assert_eq!(
        summary.unavailable.as_deref(),
        Some("embedding provider unavailable: test embedder is down")
    );
    assert_eq!(summary.embedded, 0);
    let snap = progress.snapshot();
    assert_eq!(
        (snap.state, snap.reason.as_deref(), snap.model_id.as_deref()),
        (
            EmbedState::Unavailable,
            Some("embedding provider unavailable: test embedder is down"),
            Some("test:vocab")
        )
    );
    let status = store.vector_status().unwrap();
    assert_eq!(
        status.last_unavailable.as_deref(),
        Some("embedding provider unavailable: test embedder is down")
    );
    assert_eq!(status.embedded_chunks, 0);
    assert_eq!(
        store
            .search_lexical(&SearchQuery::new("installer"))
            .unwrap(),
        lexical_before
    );

    // Back up: the pass completes and the recorded reason is cleared.
    e.down.store(false, Ordering::SeqCst);
    let summary = embed_pending(&mut store, &e, &progress, &AtomicBool::new(false)).unwrap();
    assert_eq!((summary.embedded, summary.unavailable), (5, None));
    assert_eq!(store.vector_status().unwrap().last_unavailable, None);
    let snap = progress.snapshot();
    // Progress counts the 5 chunk texts and the 3 whole-document texts.
    assert_eq!(
        (snap.state, snap.done, snap.total, snap.reason),
        (EmbedState::Done, 8, 8, None)
    );
}

#[test]
fn cancel_stops_between_batches() {
    let (_dir, _root, db) = setup();
    let e = VocabEmbedder::new("test:vocab", VOCAB);
    let mut store = Store::open(&db).unwrap();
    let summary = embed_pending(
        &mut store,
        &e,
        &EmbedProgress::new(),
        &AtomicBool::new(true),
    )
    .unwrap();
    assert_eq!((summary.cancelled, summary.embedded), (true, 0));
    assert_eq!(e.embedded.load(Ordering::SeqCst), 0);
}

#[test]
fn spawned_pass_reports_progress() {
    let (_dir, _root, db) = setup();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen_in = seen.clone();
    let progress = Arc::new(EmbedProgress::with_listener(move |s| {
        seen_in.lock().unwrap().push((s.done, s.total))
    }));
    assert_eq!(progress.snapshot().state, EmbedState::Idle);
    let e: Arc<dyn Embedder> = Arc::new(VocabEmbedder::new("test:vocab", VOCAB).with_batch(4));
    let handle = spawn_embed_pass(
        db.clone(),
        e,
        progress.clone(),
        Arc::new(AtomicBool::new(false)),
    )
    .unwrap();
    let summary = handle.join().unwrap().unwrap();
    assert_eq!((summary.embedded, summary.reused), (5, 0));
    let snap = progress.snapshot();
    // Batches of 4: chunk texts 4 + 1, then the 3 documents.
    assert_eq!(
        (snap.state, snap.done, snap.total, snap.skipped_files),
        (EmbedState::Done, 8, 8, 0)
    );
    assert_eq!(*seen.lock().unwrap(), vec![(0, 8), (4, 8), (5, 8), (8, 8)]);
    assert_eq!(counts(&db), (6, 6, 5));
}

#[test]
fn probe_learns_the_dimension() {
    let e = VocabEmbedder::new("test:vocab", VOCAB);
    assert_eq!(probe(&e).unwrap(), 5);
    e.down.store(true, Ordering::SeqCst);
    assert_eq!(
        probe(&e).unwrap_err().to_string(),
        "embedding provider unavailable: test embedder is down"
    );
}

#[test]
fn background_loader_reports_why_embeddings_are_off() {
    use crate::config::user::UserEmbedConfig;
    use crate::embed::settings::EmbedSettings;
    let (_dir, _root, db) = setup();
    for (toml, reason) in [
        (
            "[embed]\nprovider = \"none\"\n",
            "embedding provider `none` (from the workspace's folio.toml): search is lexical",
        ),
        (
            "[embed]\nmodel = \"/nonexistent/folio-model\"\n",
            "embedding provider unavailable: built-in model file /nonexistent/folio-model/e5-small-q4.bin is missing; run `folio model install` to install multilingual-e5-small-q4",
        ),
    ] {
        let config = Config::from_toml(toml).unwrap();
        let settings =
            EmbedSettings::resolve(&config.embed, &UserEmbedConfig::default(), false).unwrap();
        let progress = Arc::new(EmbedProgress::new());
        let slot = EmbedderSlot::default();
        let handle = spawn_load_and_embed(
            db.clone(),
            settings,
            slot.clone(),
            progress.clone(),
            Arc::new(AtomicBool::new(false)),
        )
        .unwrap();
        assert_eq!(handle.join().unwrap(), None);
        let snap = progress.snapshot();
        assert_eq!(
            (snap.state, snap.reason.as_deref()),
            (EmbedState::Off, Some(reason))
        );
        assert!(slot.get().is_none());
    }
    // An embedder already in the slot is used as it is.
    let settings =
        EmbedSettings::resolve(&Default::default(), &UserEmbedConfig::default(), false).unwrap();
    let slot = EmbedderSlot::default();
    let e: Arc<dyn Embedder> = Arc::new(VocabEmbedder::new("test:vocab", VOCAB));
    assert!(slot.set(e).is_ok());
    let progress = Arc::new(EmbedProgress::new());
    let handle = spawn_load_and_embed(
        db.clone(),
        settings,
        slot,
        progress.clone(),
        Arc::new(AtomicBool::new(false)),
    )
    .unwrap();
    assert_eq!(
        handle.join().unwrap().map(|s| (s.embedded, s.reused)),
        Some((5, 0))
    );
    assert_eq!(progress.snapshot().state, EmbedState::Done);
}

/// The estimate scales the time taken by the work left over the work done: exact values.
#[test]
fn eta_scales_elapsed_time_by_work_left() {
    assert_eq!(estimate_eta_ms(0, 1000, 5000), None);
    assert_eq!(estimate_eta_ms(250, 1000, 5000), Some(15_000));
    assert_eq!(estimate_eta_ms(1000, 1000, 5000), Some(0));
    assert_eq!(estimate_eta_ms(3, 10, 1), Some(2)); // 7/3 ms, rounded down
    assert_eq!(estimate_eta_ms(1, u64::MAX, u64::MAX), Some(u64::MAX));
    // A text counts its bytes up to the cap, plus 64.
    assert_eq!(text_work(""), 64);
    assert_eq!(text_work("héllo"), 6 + 64);
    assert_eq!(text_work(&"x".repeat(10_000)), ETA_TEXT_CAP as u64 + 64);
}

/// A running pass reports an estimate once a batch is done; idle and finished ones none.
#[test]
fn eta_is_reported_while_a_pass_runs() {
    let (_dir, _root, db) = setup();
    let etas = Arc::new(std::sync::Mutex::new(Vec::new()));
    let etas_in = etas.clone();
    let progress = EmbedProgress::with_listener(move |s| {
        etas_in.lock().unwrap().push((s.state, s.done, s.eta_ms))
    });
    assert_eq!(progress.snapshot().eta_ms, None);
    let e = VocabEmbedder::new("test:vocab", VOCAB).with_batch(1);
    let summary = embed_db(&db, &e, &progress, &AtomicBool::new(false)).unwrap();
    assert!(summary.embedded > 1);
    let etas = etas.lock().unwrap();
    // The first notification (the total is known, nothing done) has no estimate; every
    // later one of the running pass has one.
    assert_eq!(etas[0], (EmbedState::Running, 0, None));
    assert!(
        etas[1..]
            .iter()
            .all(|(state, done, eta)| *state == EmbedState::Running && *done > 0 && eta.is_some())
    );
    // The last batch leaves no work: the estimate is 0.
    assert_eq!(etas.last().unwrap().2, Some(0));
    assert_eq!(progress.snapshot().state, EmbedState::Done);
    assert_eq!(progress.snapshot().eta_ms, None);
}

/// `folio index --force` deletes the vectors only once it holds the pass's lock: while
/// another process's pass holds it, every vector stays (that pass's next batch would
/// otherwise fail on an index with vectors of no model); once it is free, the vectors
/// are deleted and all embedded again.
#[test]
fn clearing_waits_for_the_running_pass() {
    let (_dir, _root, db) = setup();
    let e = VocabEmbedder::new("test:vocab", VOCAB);
    let first = pass(&db, &e);
    assert!(first.embedded > 1);
    let (embedded, total, _) = counts(&db);
    assert_eq!(embedded, total);
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(db.with_extension("embed.lock"))
        .unwrap();
    lock.lock().unwrap();
    let db_in = db.clone();
    let rebuild = std::thread::spawn(move || {
        let e = VocabEmbedder::new("test:vocab", VOCAB);
        embed_db_after_clearing(&db_in, &e, &EmbedProgress::new(), &AtomicBool::new(false))
    });
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(
        counts(&db).0,
        embedded,
        "vectors deleted while another pass held the lock"
    );
    drop(lock);
    let summary = rebuild.join().unwrap().unwrap();
    assert_eq!(summary.embedded, first.embedded);
    assert_eq!(summary.reused, 0);
    assert_eq!(counts(&db).0, total);
}
