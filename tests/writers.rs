//! Several writers on one root, as processes: `folio mcp --allow-writes` servers driven
//! over stdio, and a plain program appending to a note. No acknowledged write may be
//! lost, every refusal must be `CONFLICT` or `BUSY` with nothing changed, and the index
//! must agree with the files at the end (docs/reliability.md).
//!
//! CI runs a small size; `FOLIO_WRITERS=8 FOLIO_WRITES=250` runs the full campaign
//! (the command and its figures are in docs/reliability.md).

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::editor::Editor;
use support::mcp::Mcp;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `folio index --root ROOT`: `(changed, unchanged)` from its summary line.
fn reindex(root: &Path) -> (usize, usize) {
    let out = Command::new(env!("CARGO_BIN_EXE_folio"))
        .args(["index", "--no-embed", "--root"])
        .arg(root)
        .env("FOLIO_EMBED_PROVIDER", "none")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let summary = text
        .lines()
        .find(|l| l.starts_with("indexed "))
        .unwrap_or_else(|| panic!("no summary in {text}"));
    let number = |after: &str| -> usize {
        let rest = &summary[summary.find(after).unwrap() + after.len()..];
        rest.split_whitespace().next().unwrap().parse().unwrap()
    };
    let changed: usize = summary
        .split('(')
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    (changed, number("changed, "))
}

/// The bug this fixes: four servers each append 40 lines to three files, with
/// `insert_after` on the `document` pointer. Before the writer lock, every call was
/// acknowledged and about a third of the lines were missing afterwards.
#[test]
fn four_servers_appending_to_three_files_lose_no_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let files = ["a.md", "b.md", "c.md"];
    for f in files {
        std::fs::write(root.join(f), format!("# {f}\n\nStart.\n")).unwrap();
    }
    let writes = env_usize("FOLIO_WRITES", 40);
    let servers = env_usize("FOLIO_WRITERS", 4);
    let threads: Vec<_> = (0..servers)
        .map(|p| {
            let root = root.clone();
            std::thread::spawn(move || {
                let mut mcp = Mcp::start(&root, &["--allow-writes"]);
                let mut acked = Vec::new();
                for i in 0..writes {
                    let path = files[(p + i) % files.len()];
                    let line = format!("Line from server {p}, write {i}.");
                    let result = mcp.call(
                        "kb_patch",
                        json!({"path": path, "operations": [
                            {"kind": "insert_after", "pointer": "document", "markdown": line}]}),
                    );
                    match result {
                        Ok(v) => {
                            assert_eq!(v["appliedTo"], "disk", "{v}");
                            acked.push((path, line));
                        }
                        Err(e) => panic!("server {p} write {i}: {e}"),
                    }
                }
                acked
            })
        })
        .collect();
    let acked: Vec<(&str, String)> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    assert_eq!(acked.len(), servers * writes);
    let texts: BTreeMap<&str, String> = files
        .iter()
        .map(|f| (*f, std::fs::read_to_string(root.join(f)).unwrap()))
        .collect();
    let lost: Vec<&(&str, String)> = acked
        .iter()
        .filter(|(path, line)| texts[path].matches(line.as_str()).count() != 1)
        .collect();
    assert!(
        lost.is_empty(),
        "{} of {} lines lost or doubled: {lost:?}",
        lost.len(),
        acked.len()
    );
    // Every file holds its start and exactly its lines, nothing else.
    for f in files {
        let lines = texts[f]
            .lines()
            .filter(|l| l.starts_with("Line from"))
            .count();
        let expected = acked.iter().filter(|(p, _)| *p == f).count();
        assert_eq!(lines, expected, "{f}");
    }
    // The index agrees with the files: a reindex finds nothing to change.
    assert_eq!(reindex(&root).0, 0);
}

/// A small deterministic generator (xorshift64), so a failing run can be repeated.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// What one server had acknowledged, and what it was refused.
#[derive(Default)]
struct Log {
    /// Appended lines by file.
    lines: Vec<(String, String)>,
    /// Table rows by file (their key).
    rows: Vec<(String, String)>,
    /// The last version of this server's own paragraph in `slots.md`.
    slot: Option<String>,
    /// Notes created and where each is now (`None`: deleted).
    notes: BTreeMap<String, Option<String>>,
    /// Links to moved notes that `links.md` must hold, and the old spellings it must not.
    links: Vec<(String, String)>,
    /// Refusals by code.
    refused: BTreeMap<String, usize>,
    /// Acknowledged writes.
    acked: usize,
    /// Acknowledged writes by where they landed (`appliedTo`).
    landed: BTreeMap<String, usize>,
    /// Appends to the note open in the editor that did not land in its buffer.
    open_on_disk: Vec<String>,
}

const NOTES: [&str; 3] = ["alpha.md", "beta.md", "gamma.md"];

fn table_pointer(mcp: &mut Mcp, path: &str) -> Result<String, Value> {
    let read = mcp.call("kb_read", json!({"path": path}))?;
    read["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "table")
        .unwrap()["pointer"]
        .as_str()
        .map(str::to_string)
        .ok_or(Value::Null)
}

fn slot_pointer(mcp: &mut Mcp, p: usize) -> Result<String, Value> {
    let read = mcp.call("kb_read", json!({"path": "slots.md"}))?;
    let text = read["text"].as_str().unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mine = format!("Slot of server {p}");
    read["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| {
            e["kind"] == "paragraph"
                && lines[e["start_line"].as_u64().unwrap() as usize - 1].starts_with(&mine)
        })
        .unwrap()["pointer"]
        .as_str()
        .map(str::to_string)
        .ok_or(Value::Null)
}

/// Runs one write, retrying a refusal (`CONFLICT` after a stale pointer, `BUSY`) up to
/// three times with a fresh read; any other error fails the test.
fn attempt(log: &mut Log, what: &str, mut call: impl FnMut() -> Result<Value, Value>) -> bool {
    for _ in 0..4 {
        match call() {
            Ok(v) => {
                log.acked += 1;
                if let Some(landed) = v["appliedTo"].as_str() {
                    *log.landed.entry(landed.to_string()).or_default() += 1;
                }
                return true;
            }
            Err(e) => {
                let code = e["code"].as_str().unwrap_or("?").to_string();
                assert!(
                    code == "CONFLICT" || code == "BUSY",
                    "{what}: refused with {e}"
                );
                *log.refused.entry(code).or_default() += 1;
            }
        }
    }
    false
}

fn run_server(root: &Path, runtime: &Path, p: usize, writes: usize) -> Log {
    let mut mcp = Mcp::start_with_env(root, &["--allow-writes"], &[("XDG_RUNTIME_DIR", runtime)]);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (p as u64 + 1));
    let mut log = Log::default();
    for i in 0..writes {
        match i % 6 {
            // Appends to any note, the one open in the editor included.
            0 | 3 => {
                let path =
                    ["alpha.md", "beta.md", "gamma.md", "open.md", "shared.md"][rng.below(5)];
                let line = format!("Line {i} of server {p}.");
                let mut landed = String::new();
                let ok = attempt(&mut log, "append", || {
                    let result = mcp.call(
                        "kb_patch",
                        json!({"path": path, "operations": [
                        {"kind": "insert_after", "pointer": "document", "markdown": line}]}),
                    );
                    if let Ok(v) = &result {
                        landed = v["appliedTo"].as_str().unwrap_or("").to_string();
                    }
                    result
                });
                if ok && path == "open.md" && landed != "editor" {
                    log.open_on_disk.push(line.clone());
                }
                if ok {
                    log.lines.push((path.to_string(), line));
                }
            }
            // A row in a table that every server edits.
            1 => {
                let path = NOTES[rng.below(NOTES.len())];
                let key = format!("s{p}w{i}");
                let ok = attempt(&mut log, "table", || {
                    let pointer = table_pointer(&mut mcp, path)?;
                    mcp.call(
                        "kb_edit_table",
                        json!({"path": path, "pointer": pointer, "action": "insert_row",
                               "cells": {"Key": key, "Value": "v"}}),
                    )
                });
                if ok {
                    log.rows.push((path.to_string(), key));
                }
            }
            // This server's own paragraph of a file every server edits.
            2 => {
                let text = format!("Slot of server {p}, version {i}.");
                let ok = attempt(&mut log, "slot", || {
                    let pointer = slot_pointer(&mut mcp, p)?;
                    mcp.call(
                        "kb_patch",
                        json!({"path": "slots.md", "operations": [
                        {"kind": "replace_element", "pointer": pointer, "markdown": text}]}),
                    )
                });
                if ok {
                    log.slot = Some(text);
                }
            }
            // A new note, linked from links.md.
            4 => {
                let path = format!("new/s{p}w{i}.md");
                let ok = attempt(&mut log, "create", || {
                    mcp.call(
                        "kb_create",
                        json!({"path": path,
                        "markdown": format!("# Note {p}-{i}\n\nBack to [links](../links.md).\n")}),
                    )
                });
                if ok {
                    log.notes.insert(path.clone(), Some(path.clone()));
                    let line = format!("See [note {p}-{i}]({path}).");
                    if attempt(&mut log, "link", || {
                        mcp.call(
                            "kb_patch",
                            json!({"path": "links.md", "operations": [
                            {"kind": "insert_after", "pointer": "document", "markdown": line}]}),
                        )
                    }) {
                        log.links.push((path.clone(), path));
                    }
                }
            }
            // Moves the newest note (its link in links.md follows), or deletes an older one.
            _ => {
                let Some(newest) = log
                    .notes
                    .iter()
                    .rev()
                    .find_map(|(k, v)| v.as_ref().map(|v| (k.clone(), v.clone())))
                else {
                    continue;
                };
                let (key, at) = newest;
                if at.starts_with("new/") {
                    let target = at.replacen("new/", "moved/", 1);
                    if attempt(&mut log, "move", || {
                        mcp.call("kb_move", json!({"sourcePath": at, "targetPath": target}))
                    }) {
                        log.notes.insert(key.clone(), Some(target.clone()));
                        for link in log.links.iter_mut().filter(|(k, _)| *k == key) {
                            link.1 = target.clone();
                        }
                    }
                } else if rng.below(2) == 0
                    && attempt(&mut log, "delete", || {
                        mcp.call("kb_delete", json!({"path": at}))
                    })
                {
                    log.notes.insert(key, None);
                }
            }
        }
    }
    log
}

/// Appends a line to `path` now and then with `O_APPEND`, as a logging script or a sync
/// client would, until `stop`; returns the lines it wrote.
fn other_program(path: PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        let mut lines = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            let line = format!("External line {}.", lines.len());
            let mut file = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap();
            file.write_all(format!("\n{line}\n").as_bytes()).unwrap();
            lines.push(line);
            std::thread::sleep(Duration::from_millis(40));
        }
        lines
    })
}

/// The campaign: servers writing every kind of edit at once, a note open in a real
/// Neovim with `folio lsp` (edits to it land in the buffer), and another program
/// appending to a note. Prints its figures (docs/reliability.md).
#[test]
fn mixed_writers_with_an_editor_and_another_program_lose_no_acknowledged_write() {
    let servers = env_usize("FOLIO_WRITERS", 4);
    let writes = env_usize("FOLIO_WRITES", 36);
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("kb");
    let table = "| Key | Value |\n|---|---|\n| seed | 0 |\n";
    for note in NOTES {
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join(note), format!("# {note}\n\n{table}\nStart.\n")).unwrap();
    }
    let slots: String = (0..servers)
        .map(|p| format!("Slot of server {p}, version none.\n\n"))
        .collect();
    std::fs::write(root.join("slots.md"), format!("# Slots\n\n{slots}")).unwrap();
    std::fs::write(root.join("links.md"), "# Links\n").unwrap();
    std::fs::write(root.join("open.md"), "# Open in an editor\n\nStart.\n").unwrap();
    std::fs::write(root.join("shared.md"), "# Shared with another program\n").unwrap();
    let runtime_work = tempfile::tempdir().unwrap();
    let editor = Editor::start_in(runtime_work, &root, "open.md");
    let root = root.canonicalize().unwrap();
    let runtime = editor.runtime().to_path_buf();

    let started = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let external = other_program(root.join("shared.md"), Arc::clone(&stop));
    let threads: Vec<_> = (0..servers)
        .map(|p| {
            let (root, runtime) = (root.clone(), runtime.clone());
            std::thread::spawn(move || run_server(&root, &runtime, p, writes))
        })
        .collect();
    let logs: Vec<Log> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    stop.store(true, Ordering::Relaxed);
    let external = external.join().unwrap();
    let elapsed = started.elapsed();
    // Every edit of the open note went into the editor's buffer, none to its file.
    let open_on_disk: Vec<&String> = logs.iter().flat_map(|l| &l.open_on_disk).collect();
    assert!(
        open_on_disk.is_empty(),
        "written to disk while open in the editor: {open_on_disk:?}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("open.md")).unwrap(),
        "# Open in an editor\n\nStart.\n"
    );
    // The editor saves what the agents put into its buffer.
    let in_buffer = editor.text();
    editor.run(json!({"op": "write"}));
    assert_eq!(
        std::fs::read_to_string(root.join("open.md")).unwrap(),
        in_buffer
    );

    let read = |path: &str| std::fs::read_to_string(root.join(path)).unwrap();
    let mut lost = Vec::new();
    for log in &logs {
        for (path, line) in &log.lines {
            if read(path).matches(line.as_str()).count() != 1 {
                lost.push(format!("{path}: {line}"));
            }
        }
        for (path, key) in &log.rows {
            if read(path).matches(&format!("| {key} |")).count() != 1 {
                lost.push(format!("{path}: row {key}"));
            }
        }
        for (key, at) in &log.notes {
            match at {
                Some(at) if !root.join(at).is_file() => lost.push(format!("note {key} at {at}")),
                None if root.join(key).exists()
                    || root.join(key.replacen("new/", "moved/", 1)).exists() =>
                {
                    lost.push(format!("deleted note {key}"))
                }
                _ => {}
            }
        }
        for (key, at) in &log.links {
            let links = read("links.md");
            if !links.contains(&format!("]({at})"))
                || (key != at && links.contains(&format!("]({key})")))
            {
                lost.push(format!("link to {key} (now {at})"));
            }
        }
    }
    let slots = read("slots.md");
    for (p, log) in logs.iter().enumerate() {
        let want = log
            .slot
            .clone()
            .unwrap_or_else(|| format!("Slot of server {p}, version none."));
        if !slots.contains(&want) {
            lost.push(format!("slot of server {p}: {want}"));
        }
    }
    let acked: usize = logs.iter().map(|l| l.acked).sum();
    let mut landed: BTreeMap<String, usize> = BTreeMap::new();
    for log in &logs {
        for (to, n) in &log.landed {
            *landed.entry(to.clone()).or_default() += n;
        }
    }
    let mut refused: BTreeMap<String, usize> = BTreeMap::new();
    for log in &logs {
        for (code, n) in &log.refused {
            *refused.entry(code.clone()).or_default() += n;
        }
    }
    let shared = read("shared.md");
    let external_lost = external
        .iter()
        .filter(|l| !shared.contains(l.as_str()))
        .count();
    println!(
        "writers: {servers} servers x {writes} writes in {:.1} s: {acked} acknowledged ({landed:?}), {} lost; refused {refused:?}; another program's {} appends, {external_lost} lost",
        elapsed.as_secs_f64(),
        lost.len(),
        external.len()
    );
    assert!(lost.is_empty(), "lost acknowledged writes: {lost:#?}");
    // Each document parses into the elements it should: the tables kept every row.
    for note in NOTES {
        let rows = read(note)
            .lines()
            .filter(|l| l.starts_with("| s") && !l.starts_with("| seed"))
            .count();
        let expected: usize = logs
            .iter()
            .map(|l| l.rows.iter().filter(|(p, _)| p == note).count())
            .sum();
        assert_eq!(rows, expected, "{note}");
    }
    // The index agrees with every file folio wrote last: only the note the editor saved
    // differs, and the other program's note may if its append came last (whether a
    // server's watcher indexed that append before the server stopped is timing).
    let db = folio_core::index::default_db_path(&root);
    let indexed = folio_core::store::Store::open(&db)
        .unwrap()
        .documents()
        .unwrap();
    let mut stale = BTreeSet::new();
    for (path, hash) in &indexed {
        let now = folio_core::pointer::hex(folio_core::pointer::hash_bytes(read(path).as_bytes()));
        if &now != hash {
            stale.insert(path.clone());
        }
    }
    let external_came_last = shared
        .trim_end()
        .lines()
        .last()
        .is_some_and(|l| l.starts_with("External line"));
    if external_came_last {
        stale.remove("shared.md");
    }
    assert_eq!(stale, BTreeSet::from(["open.md".to_string()]));
    let _ = external_lost;
}
