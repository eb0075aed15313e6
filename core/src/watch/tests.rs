use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::*;

/// A watcher whose batches arrive on the returned channel.
fn watcher() -> (FolderWatcher, mpsc::Receiver<Batch>) {
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let sink: Sink = Arc::new(move |batch| {
        let _ = tx.lock().unwrap().send(batch);
    });
    (FolderWatcher::new(sink), rx)
}

/// The changes received until `want` is among them (or 5 s pass), merged in order.
fn changes_until(rx: &mpsc::Receiver<Batch>, want: &(PathBuf, bool)) -> Vec<(PathBuf, bool)> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut seen = Vec::new();
    while !seen.contains(want) {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(batch) => seen.extend(batch.changes),
            Err(_) => break,
        }
    }
    seen
}

fn config(toml: &str) -> Config {
    Config::from_toml(toml).unwrap()
}

fn root() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("a.md"), "# A\n").unwrap();
    std::fs::write(root.join("b.md"), "# B\n").unwrap();
    (dir, root)
}

fn quiet(rx: &mpsc::Receiver<Batch>, for_: Duration) -> Vec<(PathBuf, bool)> {
    let mut seen = Vec::new();
    while let Ok(batch) = rx.recv_timeout(for_) {
        seen.extend(batch.changes);
    }
    seen
}

#[test]
fn native_watch_reports_creates_changes_deletes_and_renames_but_not_reads_or_state() {
    let (_dir, root) = root();
    let (w, rx) = watcher();
    let status = w.watch(&root, &Config::default());
    assert_eq!(
        (status.configured.as_str(), status.mode.as_str()),
        ("auto", "native")
    );

    // Reads, and folio's own state folder, are not changes.
    let _ = std::fs::read_to_string(root.join("a.md")).unwrap();
    std::fs::create_dir(root.join(".folio")).unwrap();
    std::fs::write(root.join(".folio/index.db"), "x").unwrap();
    assert_eq!(quiet(&rx, Duration::from_millis(600)), vec![]);

    std::fs::write(root.join("c.md"), "# C\n").unwrap();
    assert!(changes_until(&rx, &(root.join("c.md"), true)).contains(&(root.join("c.md"), true)));
    std::fs::remove_file(root.join("a.md")).unwrap();
    assert!(changes_until(&rx, &(root.join("a.md"), false)).contains(&(root.join("a.md"), false)));
    std::fs::rename(root.join("b.md"), root.join("d.md")).unwrap();
    let seen = changes_until(&rx, &(root.join("d.md"), true));
    assert!(seen.contains(&(root.join("b.md"), false)), "{seen:?}");
    assert!(seen.contains(&(root.join("d.md"), true)), "{seen:?}");

    let status = w.status();
    assert_eq!(status.mode, "native");
    assert!(status.changes_seen >= 3, "{status:?}");
    assert!(status.last_change_ms.is_some());
}

#[test]
fn poll_mode_reports_changes_by_walking_and_applies_ignore_files() {
    let (_dir, root) = root();
    std::fs::write(root.join(".folioignore"), "drafts/\n").unwrap();
    std::fs::create_dir(root.join("drafts")).unwrap();
    let (w, rx) = watcher();
    let status = w.watch(
        &root,
        &config("[index]\nwatch = \"poll\"\npoll_interval_ms = 200\n"),
    );
    assert_eq!(
        (
            status.configured.as_str(),
            status.mode.as_str(),
            status.poll_interval_ms,
            status.reason
        ),
        ("poll", "poll", Some(200), None)
    );
    std::fs::write(root.join("drafts/x.md"), "ignored").unwrap();
    std::fs::write(root.join("a.md"), "# A changed, longer\n").unwrap();
    std::fs::remove_file(root.join("b.md")).unwrap();
    std::fs::write(root.join("c.md"), "# C\n").unwrap();
    let mut seen = changes_until(&rx, &(root.join("c.md"), true));
    seen.extend(quiet(&rx, Duration::from_millis(500)));
    seen.sort();
    assert_eq!(
        seen,
        vec![
            (root.join("a.md"), true),
            (root.join("b.md"), false),
            (root.join("c.md"), true),
        ]
    );
}

#[test]
fn off_watches_nothing_and_says_so() {
    let (_dir, root) = root();
    let (w, rx) = watcher();
    let status = w.watch(&root, &config("[index]\nwatch = \"off\"\n"));
    assert_eq!(
        (status.configured.as_str(), status.mode.as_str()),
        ("off", "off")
    );
    assert!(status.reason.unwrap().contains("kb_reindex"));
    std::fs::write(root.join("c.md"), "# C\n").unwrap();
    assert_eq!(quiet(&rx, Duration::from_millis(500)), vec![]);
}

#[test]
fn where_native_watching_is_refused_auto_polls_and_says_why() {
    let (_dir, root) = root();
    let (w, rx) = watcher();
    let why = "the system's limit on watched folders is reached (test)".to_owned();
    *w.native_refusal.lock().unwrap() = Some(why.clone());
    let status = w.watch(&root, &config("[index]\npoll_interval_ms = 200\n"));
    assert_eq!(
        (
            status.configured.as_str(),
            status.mode.as_str(),
            status.reason,
            status.poll_interval_ms
        ),
        ("auto", "poll", Some(why), Some(200))
    );
    std::fs::write(root.join("c.md"), "# C\n").unwrap();
    assert!(changes_until(&rx, &(root.join("c.md"), true)).contains(&(root.join("c.md"), true)));
}

#[test]
fn a_watched_folder_that_goes_away_is_lost_and_says_so() {
    let (dir, root) = root();
    let (w, _rx) = watcher();
    assert_eq!(w.watch(&root, &Config::default()).mode, "native");
    std::fs::remove_dir_all(&root).unwrap();
    let status = w.status();
    assert_eq!(status.mode, "lost");
    assert_eq!(
        status.reason.unwrap(),
        format!(
            "{} is gone (deleted or moved away): nothing under it is followed; restart folio once it is back",
            root.display()
        )
    );
    // Made again at the same path: the native watch followed the old folder.
    std::fs::create_dir(&root).unwrap();
    let status = w.status();
    assert_eq!(status.mode, "lost");
    assert_eq!(
        status.reason.unwrap(),
        format!(
            "{} was deleted and made again: the watch followed the old folder, so nothing in the new one is followed; restart folio to follow it",
            root.display()
        )
    );
    drop(dir);
}

#[test]
fn state_folders_are_private() {
    let root = Path::new("/kb");
    assert!(is_private(root, Path::new("/kb/.folio/index.db")));
    assert!(is_private(root, Path::new("/kb/.git/HEAD")));
    assert!(!is_private(root, Path::new("/kb/notes/.folio.md")));
    assert!(!is_private(root, Path::new("/other/.folio/x")));
}
