//! `folio mcp` killed with `SIGKILL` at random moments while it writes (appends, creates,
//! deletes, moves that rewrite links in several notes) and while it reindexes. After
//! every kill no note may be torn or empty; after the next start no temporary file and
//! no journal entry may be left, every acknowledged write must be there, every link must
//! resolve (interrupted moves are finished) and the index must match the files.
//!
//! CI runs 16 rounds; `FOLIO_CRASH_ROUNDS=300` is the full campaign of
//! docs/reliability.md (over 1,000 acknowledged writes).

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::json;
use support::mcp::Mcp;

const NOTES: usize = 5;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A small deterministic generator (xorshift64).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Every file under `dir`, KB-relative, `.folio/` included.
fn files(dir: &Path, prefix: &str, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
        if entry.file_type().unwrap().is_dir() {
            files(&entry.path(), &format!("{name}/"), out);
        } else {
            out.push(name);
        }
    }
}

fn all_files(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    files(root, "", &mut out);
    out.sort();
    out
}

/// Where note `k` is now (`notes/` or `archive/`), checked to be whole.
fn locate_note(root: &Path, k: usize) -> Vec<String> {
    let mut found = Vec::new();
    for folder in ["notes", "archive"] {
        let path = format!("{folder}/n{k}.md");
        if let Ok(bytes) = std::fs::read(root.join(&path)) {
            let text = String::from_utf8(bytes).unwrap_or_else(|_| panic!("{path}: not UTF-8"));
            assert!(
                text.starts_with(&format!("# Note {k}\n")) && text.ends_with(".\n"),
                "{path} is torn: {text:?}"
            );
            found.push(path);
        }
    }
    assert!(!found.is_empty(), "note {k} is gone");
    found
}

fn setup(root: &Path) {
    let hub: String = (0..NOTES)
        .map(|k| format!("- [Note {k}](notes/n{k}.md).\n"))
        .collect();
    std::fs::write(root.join("hub.md"), format!("# Hub\n\n{hub}")).unwrap();
    std::fs::create_dir_all(root.join("notes")).unwrap();
    for k in 0..NOTES {
        let next = (k + 1) % NOTES;
        std::fs::write(
            root.join(format!("notes/n{k}.md")),
            format!("# Note {k}\n\nSee [the hub](../hub.md) and [the next note](n{next}.md).\n"),
        )
        .unwrap();
    }
}

/// What one server saw acknowledged before it was killed.
#[derive(Default)]
struct Acked {
    /// Lines appended to hub.md.
    lines: Vec<String>,
    /// Writes of every kind.
    writes: usize,
}

/// One server's writes until it is killed.
fn write_until_killed(
    mut mcp: Mcp,
    root: PathBuf,
    round: usize,
    writes: usize,
    reindex: bool,
) -> Acked {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D ^ (round as u64 + 1));
    let mut acked = Acked::default();
    let mut extras: Vec<String> = Vec::new();
    if reindex && mcp.try_call("kb_reindex", json!({"force": true})).is_none() {
        return acked;
    }
    for i in 0..writes {
        let result = match i % 4 {
            0 => {
                let line = format!("Line {round}-{i}.");
                let r = mcp.try_call(
                    "kb_patch",
                    json!({"path": "hub.md", "operations": [
                    {"kind": "insert_after", "pointer": "document", "markdown": line}]}),
                );
                if matches!(r, Some(Ok(_))) {
                    acked.lines.push(line);
                }
                r
            }
            1 | 3 => {
                let k = rng.below(NOTES);
                let at = if root.join(format!("notes/n{k}.md")).is_file() {
                    "notes"
                } else {
                    "archive"
                };
                let to = if at == "notes" { "archive" } else { "notes" };
                mcp.try_call("kb_move", json!({"sourcePath": format!("{at}/n{k}.md"), "targetPath": format!("{to}/n{k}.md")}))
            }
            _ if extras.is_empty() || rng.below(2) == 0 => {
                let path = format!("extra/r{round}-{i}.md");
                let r = mcp.try_call(
                    "kb_create",
                    json!({"path": path, "markdown": "# Extra\n\nBack to [the hub](../hub.md).\n"}),
                );
                if matches!(r, Some(Ok(_))) {
                    extras.push(path);
                }
                r
            }
            _ => mcp.try_call("kb_delete", json!({"path": extras.pop().unwrap()})),
        };
        match result {
            None => return acked,
            Some(Ok(_)) => acked.writes += 1,
            Some(Err(e)) => panic!("round {round} write {i}: {e}"),
        }
    }
    acked
}

#[test]
fn killed_servers_leave_whole_notes_and_finished_moves() {
    let rounds = env_usize("FOLIO_CRASH_ROUNDS", 16);
    let writes = env_usize("FOLIO_CRASH_WRITES", 25);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    setup(&root);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut acked: Vec<String> = Vec::new();
    let mut figures: BTreeMap<&str, usize> = BTreeMap::new();
    for round in 0..rounds {
        let mcp = Mcp::start(&root, &["--allow-writes"]);
        let pid = mcp.pid();
        let thread_root = root.clone();
        let writer = std::thread::spawn(move || {
            write_until_killed(mcp, thread_root, round, writes, round % 4 == 3)
        });
        std::thread::sleep(Duration::from_millis(20 + rng.below(400) as u64));
        Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();
        let done = writer.join().unwrap();
        *figures.entry("acknowledged writes").or_default() += done.writes;
        if done.writes < writes {
            *figures.entry("kills during writes").or_default() += 1;
        }
        if round % 4 == 3 {
            *figures.entry("kills during a forced reindex").or_default() += 1;
        }
        acked.extend(done.lines);
        // Right after the kill: notes are whole (the old or the new bytes).
        for k in 0..NOTES {
            if locate_note(&root, k).len() > 1 {
                *figures
                    .entry("kills between a move's link and unlink")
                    .or_default() += 1;
            }
        }
        let left = all_files(&root);
        *figures.entry("temporary files left by a kill").or_default() +=
            left.iter().filter(|f| f.contains(".folio-write-")).count();
        *figures
            .entry("kills that left a journaled move")
            .or_default() += left
            .iter()
            .filter(|f| f.starts_with(".folio/journal/") && f.ends_with(".json"))
            .count();
    }
    // The next start: its first index pass removes temporary files and, under the write
    // lock, finishes journaled moves.
    let mut mcp = Mcp::start(&root, &["--allow-writes"]);
    for _ in 0..400 {
        let status = mcp.call("kb_status", json!({})).unwrap();
        if status["indexing"]["running"] == json!(false) && status["indexing"]["last"].is_object() {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    mcp.call(
        "kb_patch",
        json!({"path": "hub.md", "operations": [
        {"kind": "insert_after", "pointer": "document", "markdown": "After the crashes."}]}),
    )
    .unwrap();
    drop(mcp);
    let left = all_files(&root);
    let leftovers: Vec<&String> = left
        .iter()
        .filter(|f| f.contains(".folio-write-") || f.starts_with(".folio/journal/"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    for k in 0..NOTES {
        assert_eq!(locate_note(&root, k).len(), 1, "note {k}");
    }
    let hub = std::fs::read_to_string(root.join("hub.md")).unwrap();
    for line in &acked {
        assert_eq!(hub.matches(line.as_str()).count(), 1, "{line}");
    }
    // Every link resolves: moves cut short were finished.
    let check = Command::new(env!("CARGO_BIN_EXE_folio"))
        .args(["check", "--format", "json", "--root"])
        .arg(&root)
        .env("FOLIO_EMBED_PROVIDER", "none")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "folio check: {report}");
    // The index opens and matches the files.
    let db = folio_core::index::default_db_path(&root);
    let indexed = folio_core::store::Store::open(&db)
        .unwrap()
        .documents()
        .unwrap();
    for path in left.iter().filter(|f| f.ends_with(".md")) {
        let now = folio_core::pointer::hex(folio_core::pointer::hash_bytes(
            &std::fs::read(root.join(path)).unwrap(),
        ));
        let hash = indexed.get(path);
        let expected_stale = false;
        assert_eq!(
            hash != Some(&now),
            expected_stale,
            "{path}: index {hash:?}, disk {now}"
        );
    }
    println!("crashes: {rounds} rounds of up to {writes} writes: {figures:?}");
}
