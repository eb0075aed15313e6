//! Tests of a move with many linking notes: it is planned before the root's write lock is
//! taken and indexed after it is released, so another writer gets the lock meanwhile; a
//! note changed between the plan and the lock is planned again, never overwritten; and a
//! note another writer changes once the lock is released keeps that writer's index rows.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use super::{h, ok, open_at, snapshot};
use crate::host::Host;
use crate::host::edit::*;

/// How many notes link to the hub.
const LINKERS: usize = 120;

const HUB: &str = "# Hub\n\nThe hub links [the first note](notes/n000.md).\n";
const MOVED_HUB: &str = "# Hub\n\nThe hub links [the first note](../notes/n000.md).\n";

fn linker(i: usize) -> String {
    format!("# Note {i}\n\nSee [the hub](../hub.md) and [[hub]].\n")
}

fn linker_after(i: usize) -> String {
    format!("# Note {i}\n\nSee [the hub](../archive/hub.md) and [[hub]].\n")
}

/// `hub.md` and [`LINKERS`] notes `notes/nNNN.md` that link to it, indexed.
fn hub_root() -> (tempfile::TempDir, Arc<Host>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("notes")).unwrap();
    std::fs::write(root.join("hub.md"), HUB).unwrap();
    for i in 0..LINKERS {
        std::fs::write(root.join(format!("notes/n{i:03}.md")), linker(i)).unwrap();
    }
    let kb = Arc::new(open_at(root, true));
    assert!(kb.reindex_blocking(false).unwrap().ok);
    (dir, kb)
}

fn move_hub() -> MoveArgs {
    MoveArgs {
        source_path: "hub.md".into(),
        target_path: "archive/hub.md".into(),
        expected_source_hash: None,
        update_links: None,
    }
}

/// The `updated_links` of the hub's move: every note with one link, and the hub's own.
fn updated_links(extra: &[(&str, usize)]) -> Vec<serde_json::Value> {
    let mut links: BTreeMap<String, usize> = (0..LINKERS)
        .map(|i| (format!("notes/n{i:03}.md"), 1))
        .collect();
    links.insert("archive/hub.md".into(), 1);
    for (path, n) in extra {
        links.insert(path.to_string(), *n);
    }
    links
        .into_iter()
        .map(|(path, links)| json!({"path": path, "links": links, "appliedTo": "disk"}))
        .collect()
}

/// The index's documents (path → source hash) and the Markdown files on disk with the
/// hashes of their bytes: equal when the index matches the disk.
fn index_and_disk(kb: &Host, root: &Path) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let store = crate::store::Store::open(kb.db_path()).unwrap();
    let index = store.documents().unwrap().into_iter().collect();
    let disk = snapshot(root)
        .into_iter()
        .filter(|(path, _)| path.ends_with(".md"))
        .map(|(path, bytes)| (path, h(std::str::from_utf8(&bytes).unwrap())))
        .collect();
    (index, disk)
}

/// Sets the move hook of `kb`.
fn on_move(kb: &Host, hook: impl Fn(MovePoint) + Send + Sync + 'static) {
    *kb.move_hook.0.lock().unwrap() = Some(Box::new(hook));
}

#[test]
fn another_writer_takes_the_lock_while_a_big_move_updates_the_index() {
    let (dir, kb) = hub_root();
    let root = dir.path().to_path_buf();
    let seen: Arc<Mutex<Vec<(MovePoint, bool, usize)>>> = Arc::default();
    let record = Arc::clone(&seen);
    on_move(&kb, move |point| {
        // Another writer (another process would do the same) asks for the lock and does
        // not wait: it gets it at once, or fails with BUSY.
        let other = crate::write::Writer::new(&root).with_timeout(Duration::ZERO);
        let got_it = other.lock().is_ok();
        // The new texts staged next to the notes, not yet renamed.
        let staged = std::fs::read_dir(root.join("notes"))
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                name.to_string_lossy()
                    .starts_with(crate::write::atomic::TEMP_PREFIX)
            })
            .count();
        record.lock().unwrap().push((point, got_it, staged));
    });
    let v = ok(kb.move_document(&move_hub()));
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (MovePoint::Planned, true, LINKERS),
            (MovePoint::Unlocked, true, 0)
        ]
    );
    assert_eq!(
        v,
        json!({
            "previousPath": "hub.md",
            "path": "archive/hub.md",
            "sourceHash": h(MOVED_HUB),
            "updated_links": updated_links(&[]),
            "indexSynchronized": true,
            "appliedTo": "disk"
        })
    );
    let mut expected: BTreeMap<String, Vec<u8>> = (0..LINKERS)
        .map(|i| (format!("notes/n{i:03}.md"), linker_after(i).into_bytes()))
        .collect();
    expected.insert("notes/".into(), Vec::new());
    expected.insert("archive/".into(), Vec::new());
    expected.insert("archive/hub.md".into(), MOVED_HUB.as_bytes().to_vec());
    assert_eq!(snapshot(dir.path()), expected);
    let (index, disk) = index_and_disk(&kb, dir.path());
    assert_eq!(index.len(), LINKERS + 1);
    assert_eq!(index, disk);
}

#[test]
fn a_note_changed_between_the_unlocked_plan_and_the_lock_is_planned_again() {
    let (dir, kb) = hub_root();
    let root = dir.path().to_path_buf();
    let changed = "# Note 3\n\nSee [the hub](../hub.md), [again](../hub.md#hub).\n";
    let late = "# Late\n\n[The hub](../hub.md) from a note made meanwhile.\n";
    on_move(&kb, move |point| {
        if point == MovePoint::Planned {
            // Another program edits a linking note and adds one once the move is planned
            // and staged, before it takes the lock.
            std::fs::write(root.join("notes/n003.md"), changed).unwrap();
            std::fs::write(root.join("notes/late.md"), late).unwrap();
        }
    });
    let v = ok(kb.move_document(&move_hub()));
    assert_eq!(
        v["updated_links"],
        json!(updated_links(&[("notes/n003.md", 2), ("notes/late.md", 1)]))
    );
    assert_eq!(v["indexSynchronized"], true);
    let files = snapshot(dir.path());
    assert_eq!(
        files["notes/n003.md"],
        b"# Note 3\n\nSee [the hub](../archive/hub.md), [again](../archive/hub.md#hub).\n"
    );
    assert_eq!(
        files["notes/late.md"],
        b"# Late\n\n[The hub](../archive/hub.md) from a note made meanwhile.\n"
    );
    for i in (0..LINKERS).filter(|i| *i != 3) {
        assert_eq!(
            files[&format!("notes/n{i:03}.md")],
            linker_after(i).into_bytes()
        );
    }
    // The staged files of the first plan are gone with it.
    assert_eq!(files.len(), LINKERS + 4, "{:?}", files.keys());
    let (index, disk) = index_and_disk(&kb, dir.path());
    assert_eq!(index, disk);
}

#[test]
fn a_note_written_after_the_move_released_the_lock_keeps_its_index_rows() {
    let (dir, kb) = hub_root();
    // Another folio process on the same root.
    let other = Arc::new(open_at(dir.path(), true));
    let patched: Arc<Mutex<Option<serde_json::Value>>> = Arc::default();
    let (writer, result) = (Arc::clone(&other), Arc::clone(&patched));
    on_move(&kb, move |point| {
        if point == MovePoint::Unlocked {
            let out = writer.patch(&PatchArgs {
                path: "notes/n007.md".into(),
                operations: vec![PatchOperation {
                    kind: PatchKindArg::InsertAfter,
                    pointer: "document".into(),
                    markdown: Some("Added by another writer.".into()),
                    key: None,
                    value: None,
                }],
            });
            *result.lock().unwrap() = Some(ok(out));
        }
    });
    let v = ok(kb.move_document(&move_hub()));
    let n007 =
        "# Note 7\n\nSee [the hub](../archive/hub.md) and [[hub]].\n\nAdded by another writer.\n";
    let patched = patched.lock().unwrap().take().unwrap();
    assert_eq!(
        (&patched["sourceHash"], &patched["indexSynchronized"]),
        (&json!(h(n007)), &json!(true))
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes/n007.md")).unwrap(),
        n007
    );
    // The move's index update left that note to its writer, and says so.
    assert_eq!(v["updated_links"], json!(updated_links(&[])));
    assert_eq!(v["indexSynchronized"], false);
    let (index, disk) = index_and_disk(&kb, dir.path());
    assert_eq!(index["notes/n007.md"], h(n007));
    assert_eq!(index, disk);
}
