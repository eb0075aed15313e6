//! Tests of the writer: the cross-writer lock, compare-before-rename with re-planning,
//! and the journal of multi-file operations with its recovery.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::*;

fn root() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

fn append(line: &str) -> impl FnMut(&str) -> Result<(String, ()), WriteError> + '_ {
    move |old: &str| Ok((format!("{old}{line}\n"), ()))
}

#[test]
fn two_writers_appending_to_one_file_lose_nothing() {
    let dir = root();
    let file = dir.path().join("log.md");
    std::fs::write(&file, "# Log\n").unwrap();
    // Two writers with their own lock file handles, as two processes have: flock(2)
    // locks belong to the open file, so they exclude each other within one process too.
    let writers: Vec<Arc<Writer>> = (0..2).map(|_| Arc::new(Writer::new(dir.path()))).collect();
    let threads: Vec<_> = writers
        .iter()
        .enumerate()
        .map(|(w, writer)| {
            let (writer, file) = (Arc::clone(writer), file.clone());
            std::thread::spawn(move || {
                for i in 0..50 {
                    let guard = writer.lock().unwrap();
                    let line = format!("- writer {w} line {i}");
                    guard
                        .update("log.md", || Ok::<_, WriteError>(read(&file)), append(&line))
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let text = read(&file);
    assert_eq!(text.lines().count(), 101, "{text}");
    for w in 0..2 {
        for i in 0..50 {
            assert!(text.contains(&format!("- writer {w} line {i}\n")));
        }
    }
}

#[test]
fn a_change_by_another_program_while_planning_is_planned_again() {
    let dir = root();
    let file = dir.path().join("a.md");
    std::fs::write(&file, "one\n").unwrap();
    let writer = Writer::new(dir.path());
    let guard = writer.lock().unwrap();
    let mut plans = 0;
    let updated = guard
        .update(
            "a.md",
            || Ok::<_, WriteError>(read(&file)),
            |old: &str| {
                plans += 1;
                if plans == 1 {
                    // An editor saves the file while folio plans its edit.
                    std::fs::write(&file, "one\nsaved by an editor\n").unwrap();
                }
                Ok((format!("{old}folio's line\n"), ()))
            },
        )
        .unwrap();
    assert_eq!(updated.replans, 1);
    assert_eq!(updated.old, "one\nsaved by an editor\n");
    assert_eq!(read(&file), "one\nsaved by an editor\nfolio's line\n");
    // No temporary file is left next to it.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.iter().filter(|n| n.starts_with(".folio")).count(), 1); // .folio/
    assert!(names.contains(&"a.md".to_string()));
}

#[test]
fn a_plan_that_no_longer_applies_fails_and_writes_nothing() {
    let dir = root();
    let file = dir.path().join("a.md");
    std::fs::write(&file, "keep me\n").unwrap();
    let writer = Writer::new(dir.path());
    let guard = writer.lock().unwrap();
    let err = guard
        .update(
            "a.md",
            || Ok::<_, WriteError>(read(&file)),
            |old: &str| {
                if old.contains("keep me") {
                    std::fs::write(&file, "rewritten elsewhere\n").unwrap();
                    Ok((old.replace("keep me", "patched"), ()))
                } else {
                    // The element the plan pointed at is gone: the plan's own conflict.
                    Err(WriteError::Changed {
                        path: "a.md".into(),
                    })
                }
            },
        )
        .unwrap_err();
    assert!(matches!(err, WriteError::Changed { .. }), "{err}");
    assert_eq!(read(&file), "rewritten elsewhere\n");
}

#[test]
fn a_file_that_keeps_changing_is_a_conflict_after_the_last_replan() {
    let dir = root();
    let file = dir.path().join("a.md");
    std::fs::write(&file, "0\n").unwrap();
    let writer = Writer::new(dir.path());
    let guard = writer.lock().unwrap();
    let mut n = 0;
    let err = guard
        .update(
            "a.md",
            || Ok::<_, WriteError>(read(&file)),
            |old: &str| {
                n += 1;
                std::fs::write(&file, format!("changed {n}\n")).unwrap();
                Ok((format!("{old}mine\n"), ()))
            },
        )
        .unwrap_err();
    assert!(
        matches!(err, WriteError::Changed { ref path } if path == "a.md"),
        "{err}"
    );
    assert_eq!(n, MAX_REPLANS + 1);
    assert_eq!(read(&file), format!("changed {n}\n"));
}

#[test]
fn a_held_lock_makes_the_next_writer_busy() {
    let dir = root();
    let first = Writer::new(dir.path());
    let second = Writer::new(dir.path()).with_timeout(Duration::from_millis(50));
    let held = first.lock().unwrap();
    match second.lock() {
        Err(WriteError::Busy { waited_ms }) => assert!(waited_ms >= 50, "{waited_ms}"),
        other => panic!("expected Busy, got {other:?}"),
    }
    drop(held);
    assert!(second.lock().is_ok());
    // The state folder hides itself from git.
    assert_eq!(read(&dir.path().join(".folio/.gitignore")), "*\n");
}

#[test]
fn replace_remove_and_rename_check_the_file_first() {
    let dir = root();
    let (a, b) = (dir.path().join("a.md"), dir.path().join("sub/b.md"));
    std::fs::write(&a, "A\n").unwrap();
    let writer = Writer::new(dir.path());
    let guard = writer.lock().unwrap();
    assert!(matches!(
        guard.replace("a.md", b"stale\n", b"new\n"),
        Err(WriteError::Changed { .. })
    ));
    assert!(matches!(
        guard.remove("a.md", b"stale\n"),
        Err(WriteError::Changed { .. })
    ));
    assert!(matches!(
        guard.rename("a.md", "sub/b.md", b"stale\n"),
        Err(WriteError::Changed { .. })
    ));
    assert_eq!(read(&a), "A\n");
    guard.rename("a.md", "sub/b.md", b"A\n").unwrap();
    assert_eq!((a.exists(), read(&b).as_str()), (false, "A\n"));
    assert!(matches!(
        guard.create("sub/b.md", b"again"),
        Err(WriteError::AlreadyExists { ref path }) if path == "sub/b.md"
    ));
    guard.remove("sub/b.md", b"A\n").unwrap();
    assert!(!b.exists());
}

fn moving_with_links() -> Vec<Step> {
    vec![
        Step::Replace {
            path: "index.md".into(),
            old: "[t](task.md)\n".into(),
            new: "[t](archive/task.md)\n".into(),
        },
        Step::Move {
            from: "task.md".into(),
            to: "archive/task.md".into(),
            old: "[home](index.md)\n".into(),
            new: "[home](../index.md)\n".into(),
        },
    ]
}

fn write_files(dir: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let abs = dir.join(path);
        std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
        std::fs::write(abs, text).unwrap();
    }
}

#[test]
fn a_journaled_move_rewrites_every_file_and_leaves_no_journal() {
    let dir = root();
    write_files(
        dir.path(),
        &[
            ("index.md", "[t](task.md)\n"),
            ("task.md", "[home](index.md)\n"),
        ],
    );
    let writer = Writer::new(dir.path());
    writer
        .lock()
        .unwrap()
        .run_journaled(&moving_with_links())
        .unwrap();
    assert_eq!(read(&dir.path().join("index.md")), "[t](archive/task.md)\n");
    assert_eq!(
        read(&dir.path().join("archive/task.md")),
        "[home](../index.md)\n"
    );
    assert!(!dir.path().join("task.md").exists());
    let journal: Vec<_> = std::fs::read_dir(dir.path().join(".folio/journal"))
        .unwrap()
        .collect();
    assert!(journal.is_empty());
}

#[test]
fn a_journaled_move_whose_file_changed_writes_nothing() {
    let dir = root();
    write_files(
        dir.path(),
        &[
            ("index.md", "[t](task.md)\nedited\n"),
            ("task.md", "[home](index.md)\n"),
        ],
    );
    let writer = Writer::new(dir.path());
    let err = writer
        .lock()
        .unwrap()
        .run_journaled(&moving_with_links())
        .unwrap_err();
    assert!(
        matches!(err, WriteError::Changed { ref path } if path == "index.md"),
        "{err}"
    );
    assert_eq!(read(&dir.path().join("task.md")), "[home](index.md)\n");
    assert!(!dir.path().join("archive").exists());
}

/// Every file under `dir` (the state folder left out), with its bytes.
fn files(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".folio" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((rel, read(&path)));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn steps_staged_before_the_lock_are_renamed_under_it() {
    let dir = root();
    write_files(
        dir.path(),
        &[
            ("index.md", "[t](task.md)\n"),
            ("task.md", "[home](index.md)\n"),
            ("notes/a.md", "[t](../task.md)\n"),
            ("notes/b.md", "[t](../task.md) again\n"),
        ],
    );
    let writer = Writer::new(dir.path());
    let mut steps = vec![
        Step::Replace {
            path: "notes/a.md".into(),
            old: "[t](../task.md)\n".into(),
            new: "[t](../archive/task.md)\n".into(),
        },
        Step::Replace {
            path: "notes/b.md".into(),
            old: "[t](../task.md) again\n".into(),
            new: "[t](../archive/task.md) again\n".into(),
        },
    ];
    steps.extend(moving_with_links());
    let staged = writer.stage(steps.clone()).unwrap();
    assert_eq!(staged.steps(), steps.as_slice());
    // Staged: a temporary file next to each replaced file, the files as they were.
    let temp = |folder: &str| {
        std::fs::read_dir(dir.path().join(folder))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with(atomic::TEMP_PREFIX)
            })
            .count()
    };
    assert_eq!((temp("."), temp("notes")), (1, 2));
    assert_eq!(read(&dir.path().join("notes/a.md")), "[t](../task.md)\n");
    writer.lock().unwrap().run_staged(staged).unwrap();
    assert_eq!(
        files(dir.path()),
        [
            ("archive/task.md", "[home](../index.md)\n"),
            ("index.md", "[t](archive/task.md)\n"),
            ("notes/a.md", "[t](../archive/task.md)\n"),
            ("notes/b.md", "[t](../archive/task.md) again\n"),
        ]
        .map(|(p, t)| (p.to_string(), t.to_string()))
    );
    assert_eq!(
        std::fs::read_dir(dir.path().join(".folio/journal"))
            .unwrap()
            .count(),
        0
    );
}

#[test]
fn a_file_changed_between_staging_and_the_lock_fails_the_staged_steps() {
    let dir = root();
    write_files(
        dir.path(),
        &[
            ("index.md", "[t](task.md)\n"),
            ("task.md", "[home](index.md)\n"),
            ("notes/a.md", "[t](../task.md)\n"),
        ],
    );
    let writer = Writer::new(dir.path());
    let mut steps = vec![Step::Replace {
        path: "notes/a.md".into(),
        old: "[t](../task.md)\n".into(),
        new: "[t](../archive/task.md)\n".into(),
    }];
    steps.extend(moving_with_links());
    let staged = writer.stage(steps).unwrap();
    // Another program writes one of the files after the staging.
    std::fs::write(dir.path().join("index.md"), "[t](task.md)\nmine\n").unwrap();
    let err = writer.lock().unwrap().run_staged(staged).unwrap_err();
    assert!(
        matches!(err, WriteError::Changed { ref path } if path == "index.md"),
        "{err}"
    );
    // Nothing written, the other program's text kept, no temporary file left.
    assert_eq!(
        files(dir.path()),
        [
            ("index.md", "[t](task.md)\nmine\n"),
            ("notes/a.md", "[t](../task.md)\n"),
            ("task.md", "[home](index.md)\n"),
        ]
        .map(|(p, t)| (p.to_string(), t.to_string()))
    );
}

/// Leaves a journal entry as a writer killed after writing it would.
fn crashed_entry(dir: &Path, steps: &[Step]) {
    let journal = dir.join(".folio/journal");
    std::fs::create_dir_all(&journal).unwrap();
    let entry = serde_json::json!({ "steps": steps });
    std::fs::write(journal.join("4242-1.json"), entry.to_string()).unwrap();
}

#[test]
fn the_next_lock_finishes_a_move_interrupted_at_any_step() {
    // Killed before the first change, after the first file, between the hard link and
    // the unlink of the move, and after the move but before its own links were rewritten.
    let states: [&[(&str, &str)]; 4] = [
        &[
            ("index.md", "[t](task.md)\n"),
            ("task.md", "[home](index.md)\n"),
        ],
        &[
            ("index.md", "[t](archive/task.md)\n"),
            ("task.md", "[home](index.md)\n"),
        ],
        &[
            ("index.md", "[t](archive/task.md)\n"),
            ("task.md", "[home](index.md)\n"),
            ("archive/task.md", "[home](index.md)\n"),
        ],
        &[
            ("index.md", "[t](archive/task.md)\n"),
            ("archive/task.md", "[home](index.md)\n"),
        ],
    ];
    for files in states {
        let dir = root();
        write_files(dir.path(), files);
        crashed_entry(dir.path(), &moving_with_links());
        let writer = Writer::new(dir.path());
        let guard = writer.lock().unwrap();
        assert_eq!(
            read(&dir.path().join("index.md")),
            "[t](archive/task.md)\n",
            "{files:?}"
        );
        assert_eq!(
            read(&dir.path().join("archive/task.md")),
            "[home](../index.md)\n",
            "{files:?}"
        );
        assert!(!dir.path().join("task.md").exists(), "{files:?}");
        drop(guard);
        let left: Vec<_> = std::fs::read_dir(dir.path().join(".folio/journal"))
            .unwrap()
            .collect();
        assert!(left.is_empty(), "{files:?}");
    }
}

#[test]
fn recovery_leaves_a_file_someone_changed_after_the_crash() {
    let dir = root();
    write_files(
        dir.path(),
        &[
            ("index.md", "rewritten by hand\n"),
            ("task.md", "[home](index.md)\n"),
        ],
    );
    crashed_entry(dir.path(), &moving_with_links());
    let writer = Writer::new(dir.path());
    let guard = writer.lock().unwrap();
    let report = journal::recover(&guard);
    assert!(report.is_empty(), "the lock already recovered: {report:?}");
    assert_eq!(read(&dir.path().join("index.md")), "rewritten by hand\n");
    // The move itself is finished.
    assert_eq!(
        read(&dir.path().join("archive/task.md")),
        "[home](../index.md)\n"
    );
    drop(guard);
    // An unreadable entry is kept aside and reported.
    let journal = dir.path().join(".folio/journal");
    std::fs::write(journal.join("1-1.json"), "{not json").unwrap();
    let guard = writer.lock().unwrap();
    drop(guard);
    assert!(journal.join("1-1.json.failed").exists());
    assert!(!journal.join("1-1.json").exists());
}

fn moving_an_image_with_links() -> Vec<Step> {
    vec![
        Step::Replace {
            path: "index.md".into(),
            old: "![c](images/cover.png)\n".into(),
            new: "![c](art/cover.png)\n".into(),
        },
        Step::MoveBinary {
            from: "images/cover.png".into(),
            to: "art/cover.png".into(),
            sha256: crate::digest::sha256_hex(b"\x89PNG bytes"),
        },
    ]
}

#[test]
fn a_journaled_binary_move_checks_its_hash_and_recovers() {
    let dir = root();
    write_files(dir.path(), &[("index.md", "![c](images/cover.png)\n")]);
    std::fs::create_dir_all(dir.path().join("images")).unwrap();
    // Another image under the same name: the hash does not match, nothing changes.
    std::fs::write(dir.path().join("images/cover.png"), b"\x89PNG other").unwrap();
    let writer = Writer::new(dir.path());
    let err = writer
        .lock()
        .unwrap()
        .run_journaled(&moving_an_image_with_links())
        .unwrap_err();
    assert!(
        matches!(err, WriteError::Changed { ref path } if path == "images/cover.png"),
        "{err}"
    );
    assert_eq!(
        read(&dir.path().join("index.md")),
        "![c](images/cover.png)\n"
    );
    std::fs::write(dir.path().join("images/cover.png"), b"\x89PNG bytes").unwrap();
    writer
        .lock()
        .unwrap()
        .run_journaled(&moving_an_image_with_links())
        .unwrap();
    assert_eq!(read(&dir.path().join("index.md")), "![c](art/cover.png)\n");
    assert_eq!(
        std::fs::read(dir.path().join("art/cover.png")).unwrap(),
        b"\x89PNG bytes"
    );
    assert!(!dir.path().join("images/cover.png").exists());

    // Killed before the move, and between the hard link and the unlink: the next lock
    // finishes both.
    for both in [false, true] {
        let dir = root();
        write_files(dir.path(), &[("index.md", "![c](art/cover.png)\n")]);
        std::fs::create_dir_all(dir.path().join("images")).unwrap();
        std::fs::write(dir.path().join("images/cover.png"), b"\x89PNG bytes").unwrap();
        if both {
            std::fs::create_dir_all(dir.path().join("art")).unwrap();
            std::fs::hard_link(
                dir.path().join("images/cover.png"),
                dir.path().join("art/cover.png"),
            )
            .unwrap();
        }
        crashed_entry(dir.path(), &moving_an_image_with_links());
        let writer = Writer::new(dir.path());
        drop(writer.lock().unwrap());
        assert!(!dir.path().join("images/cover.png").exists(), "{both}");
        assert_eq!(
            std::fs::read(dir.path().join("art/cover.png")).unwrap(),
            b"\x89PNG bytes"
        );
        assert_eq!(read(&dir.path().join("index.md")), "![c](art/cover.png)\n");
    }
}

#[test]
fn a_program_saving_in_place_is_waited_for_and_nothing_is_lost() {
    // A program that saves in place empties the file, then writes it through the
    // descriptor it keeps open (a shell's `>`, Python's `open(path, "w")`). A write that
    // read the empty file and renamed its plan over it would lose the whole note, and the
    // program's bytes would go to the replaced file.
    let dir = root();
    let file = dir.path().join("note.md");
    std::fs::write(&file, "# Note\n\nFirst.\n").unwrap();
    assert_eq!(atomic::being_written(dir.path(), "note.md"), Some(false));
    let mut saving = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&file)
        .unwrap();
    assert_eq!(atomic::being_written(dir.path(), "note.md"), Some(true));
    let saver = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        use std::io::Write;
        saving
            .write_all(b"# Note\n\nFirst.\n\nSaved by the editor.\n")
            .unwrap();
        drop(saving);
    });
    let writer = Writer::new(dir.path());
    let guard = writer.lock().unwrap();
    let done = guard
        .update(
            "note.md",
            || Ok::<_, WriteError>(read(&file)),
            append("Agent line."),
        )
        .unwrap();
    saver.join().unwrap();
    assert_eq!(done.old, "# Note\n\nFirst.\n\nSaved by the editor.\n");
    assert_eq!(
        read(&file),
        "# Note\n\nFirst.\n\nSaved by the editor.\nAgent line.\n"
    );
}

#[test]
fn a_file_kept_open_for_writing_is_refused_and_left_alone() {
    let dir = root();
    let file = dir.path().join("note.md");
    std::fs::write(&file, "# Note\n").unwrap();
    let held = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    let writer = Writer::new(dir.path());
    let guard = writer.lock().unwrap();
    let started = std::time::Instant::now();
    let err = guard
        .update("note.md", || Ok::<_, WriteError>(read(&file)), append("x"))
        .unwrap_err();
    assert!(started.elapsed() >= IN_USE_WAIT, "{:?}", started.elapsed());
    assert_eq!(
        err.to_string(),
        "`note.md` is open for writing in another program (it is being saved); nothing was changed, try again once it is closed"
    );
    // A replace, a remove and a rename wait the same way, then refuse.
    assert!(matches!(
        guard.replace("note.md", b"# Note\n", b"# Other\n"),
        Err(WriteError::InUse { .. })
    ));
    assert!(matches!(
        guard.remove("note.md", b"# Note\n"),
        Err(WriteError::InUse { .. })
    ));
    assert!(matches!(
        guard.rename("note.md", "moved.md", b"# Note\n"),
        Err(WriteError::InUse { .. })
    ));
    drop(held);
    assert_eq!(read(&file), "# Note\n");
    guard.replace("note.md", b"# Note\n", b"# Other\n").unwrap();
    assert_eq!(read(&file), "# Other\n");
}

#[test]
fn an_interrupted_move_is_reported_without_changing_anything_until_a_writer_finishes_it() {
    let dir = root();
    // Killed after the first file: index.md rewritten, task.md not moved yet.
    let files = [
        ("index.md", "[t](archive/task.md)\n"),
        ("task.md", "[home](index.md)\n"),
    ];
    write_files(dir.path(), &files);
    crashed_entry(dir.path(), &moving_with_links());
    let writer = Writer::new(dir.path());
    let found = writer.interrupted();
    assert_eq!(
        found,
        vec![Interrupted {
            entry: "4242-1.json".into(),
            moves: vec![MovedPath {
                from: "task.md".into(),
                to: "archive/task.md".into()
            }],
            files: 2,
            done: 1,
        }]
    );
    assert_eq!(
        found[0].describe(),
        "a move of task.md → archive/task.md was interrupted with 1 of 2 files not yet changed"
    );
    // Reporting changed nothing.
    assert_eq!(read(&dir.path().join("task.md")), "[home](index.md)\n");
    assert!(dir.path().join(".folio/journal/4242-1.json").exists());
    // While a writer holds the lock, its entry is an operation in progress.
    {
        let held = std::fs::File::create(writer.lock_path()).unwrap();
        held.lock().unwrap();
        assert_eq!(writer.interrupted(), vec![]);
    }
    let (finished, report) = writer.finish_interrupted().unwrap();
    assert_eq!(
        (finished.len(), report.finished, report.left.len()),
        (1, 1, 0)
    );
    assert_eq!(
        read(&dir.path().join("archive/task.md")),
        "[home](../index.md)\n"
    );
    assert_eq!(writer.interrupted(), vec![]);
    assert_eq!(
        writer.finish_interrupted().unwrap().1,
        RecoveryReport::default()
    );
}
