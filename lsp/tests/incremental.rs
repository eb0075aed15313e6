//! The incremental model against a full rebuild: a few hundred random edits (through
//! the same `didChange` path and UTF-16 conversions the server uses) and file events,
//! then every document's parse, pointers, diagnostics and the reverse link index must
//! equal those of a workspace built from scratch from the final texts.

use std::path::Path;

use folio_core::links::diagnostics;
use folio_core::links::graph::LinkGraph;
use folio_core::workspace::{Config, Workspace};
use folio_lsp::session::{Change, Session};
use tower_lsp_server::ls_types::{Position, Range, TextDocumentContentChangeEvent};

/// A small xorshift64* generator: seeded, reproducible, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const SNIPPETS: &[&str] = &[
    "\n# Heading\n",
    "\n## Sub 😀 heading\n",
    "[b](b.md)",
    "[b](b.md#beta)",
    "[x](c.md#nope)",
    "[own](#heading)",
    "[[b]]",
    "[[c#Gamma]]",
    "[[nowhere]]",
    "[r][lbl]",
    "\n[lbl]: b.md\n",
    "\n[lbl]: c.md\n",
    "😀",
    "é",
    "\n",
    "\n\n",
    "- item\n",
    "```\ncode [z](z.md)\n```\n",
    " text ",
    "`[q](q.md)`",
    "> quote [b](b.md)\n",
    "[^f]\n\n[^f]: note\n",
];

const FILES: &[(&str, &str)] = &[
    (
        "a.md",
        "# Alpha\n\nSee [b](b.md#beta) and [[c]].\n\n## Heading\n\n[r][lbl]\n\n[lbl]: b.md\n",
    ),
    ("b.md", "# Beta\n\nBack to [a](a.md#alpha).\n"),
    ("c.md", "# Gamma\n\n😀 [a](a.md#heading) [[b#Beta]]\n"),
];

fn write(dir: &Path, path: &str, text: &str) {
    std::fs::write(dir.join(path), text).unwrap();
}

/// A UTF-16 position inside the document text (clamped by the server if it lands in a pair).
fn random_position(rng: &mut Rng, text: &str) -> Position {
    let lines: Vec<&str> = text.split('\n').collect();
    let line = rng.below(lines.len());
    let units = lines[line].encode_utf16().count();
    Position {
        line: line as u32,
        character: rng.below(units + 1) as u32,
    }
}

#[test]
fn incremental_model_equals_full_rebuild_after_random_edits() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for (path, text) in FILES {
        write(&root, path, text);
    }
    // a.md is long enough for several chunks, so most edits re-parse only part of it.
    let filler: String = (0..600)
        .map(|i| format!("Paragraph {i} [b](b.md#beta) and text.\n\n"))
        .collect();
    let a_text = format!("{}{filler}", FILES[0].1);
    write(&root, "a.md", &a_text);
    let mut session = Session::default();
    let root_idx = session.add_root(&root).unwrap();
    for (path, text) in [("a.md", a_text.as_str()), ("c.md", FILES[2].1)] {
        let opened = session.did_open(&root.join(path), text, 1);
        assert!(matches!(opened, Change::Applied(_)), "{path} is small");
    }
    let mut rng = Rng(0x5eed_f011_0a11_cafe);
    let mut version = 1;
    for step in 0..400 {
        version += 1;
        match rng.below(20) {
            // A file created, rewritten or deleted on disk (b.md, not open in the editor).
            0 => {
                let exists = rng.below(3) > 0;
                if exists {
                    write(
                        &root,
                        "b.md",
                        &format!("# Beta\n\n{}\n", rng.pick(SNIPPETS)),
                    );
                } else {
                    let _ = std::fs::remove_file(root.join("b.md"));
                }
                session.file_event(&root.join("b.md"), exists);
            }
            1 => {
                let exists = rng.below(2) == 0;
                if exists {
                    write(&root, "d.md", "# Delta\n");
                } else {
                    let _ = std::fs::remove_file(root.join("d.md"));
                }
                session.file_event(&root.join("d.md"), exists);
            }
            _ => {
                let file = if rng.below(2) == 0 { "a.md" } else { "c.md" };
                let abs = root.join(file);
                let text = session
                    .entry(&session.locate(&abs).unwrap())
                    .unwrap()
                    .doc
                    .text();
                let start = random_position(&mut rng, &text);
                let end = if rng.below(3) == 0 {
                    random_position(&mut rng, &text)
                } else {
                    start
                };
                let (start, end) = if (start.line, start.character) <= (end.line, end.character) {
                    (start, end)
                } else {
                    (end, start)
                };
                let new_text = if rng.below(4) == 0 {
                    String::new()
                } else {
                    rng.pick(SNIPPETS).to_string()
                };
                let change = TextDocumentContentChangeEvent {
                    range: Some(Range { start, end }),
                    range_length: None,
                    text: new_text,
                };
                match session
                    .did_change(&abs, version, &[change])
                    .unwrap_or_else(|e| panic!("step {step}: {e}"))
                {
                    Change::Applied(_) => {}
                    Change::Parse(large) => {
                        session.finish_change(large.parse());
                    }
                }
            }
        }
    }

    // The full rebuild: every document from its final text (buffers for open ones).
    let live = &session.roots[root_idx];
    let mut rebuilt = Workspace::new(root.clone(), Config::default());
    rebuilt.add_other("");
    for path in live.ws().document_paths() {
        let entry = live.ws().get(path).unwrap();
        rebuilt.insert(
            path.to_string(),
            folio_core::workspace::DocEntry::new(&entry.doc.text(), 0, entry.origin),
        );
    }
    let (from_disk, _) = Workspace::load(&root, Config::default()).unwrap();
    let disk_docs: Vec<&str> = from_disk.document_paths().collect();
    let live_docs: Vec<&str> = live.ws().document_paths().collect();
    assert_eq!(live_docs, disk_docs, "the same documents exist");
    let graph = LinkGraph::build(
        rebuilt
            .document_paths()
            .map(|p| (p, rebuilt.get(p).unwrap().parsed.as_ref())),
    );
    assert_eq!(live.graph(), &graph, "reverse link index");
    for path in live.ws().document_paths() {
        let a = live.ws().get(path).unwrap();
        let b = rebuilt.get(path).unwrap();
        assert_eq!(a.source_hash, b.source_hash, "{path}: text");
        assert_eq!(a.parsed.elements, b.parsed.elements, "{path}: elements");
        let pointers = |p: &folio_core::parse::Parsed| {
            p.elements
                .iter()
                .map(|e| e.pointer().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(pointers(&a.parsed), pointers(&b.parsed), "{path}: pointers");
        assert_eq!(a.parsed.headings, b.parsed.headings, "{path}: headings");
        assert_eq!(a.parsed.anchors, b.parsed.anchors, "{path}: anchors");
        assert_eq!(
            a.parsed.definitions, b.parsed.definitions,
            "{path}: definitions"
        );
        assert_eq!(a.parsed.links, b.parsed.links, "{path}: links");
        assert_eq!(a.parsed.block_ids, b.parsed.block_ids, "{path}: block ids");
        assert_eq!(
            diagnostics(live.ws(), path),
            diagnostics(&rebuilt, path),
            "{path}: diagnostics"
        );
        // Closed documents equal their disk copy.
        if !session.is_open(&session.locate(&root.join(path)).unwrap()) {
            assert_eq!(
                a.doc.text(),
                std::fs::read_to_string(root.join(path)).unwrap(),
                "{path}: disk copy"
            );
        }
    }
    // The edits did something: both open documents changed.
    assert_ne!(live.ws().get("a.md").unwrap().doc.text(), a_text);
    let stats = live.model.incremental_stats("a.md").unwrap();
    // Edits in the first chunk (it holds a definition) and edits that add definitions fall
    // back to a full parse; the others are partial.
    assert!(stats.partial > 30, "{stats:?}");
    assert_ne!(live.ws().get("c.md").unwrap().doc.text(), FILES[2].1);
}

/// The paths of a set of documents, for comparing with a literal.
fn paths(docs: &std::collections::BTreeSet<folio_lsp::session::DocRef>) -> Vec<&str> {
    docs.iter().map(|d| d.path.as_str()).collect()
}

#[test]
fn a_batch_of_watched_file_events_is_the_events_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    write(&root, "a.md", "# A\n\n## Old\n");
    write(&root, "b.md", "[x](a.md#old)\n");
    write(&root, "c.md", "[y](a.md#old)\n");
    write(&root, "d.md", "[z](a.md#old)\n");
    let mut one_by_one = Session::default();
    let mut batched = Session::default();
    for s in [&mut one_by_one, &mut batched] {
        s.add_root(&root).unwrap();
        let opened = s.did_open(&root.join("d.md"), "[z](a.md#old)\n", 1);
        assert!(matches!(opened, Change::Applied(_)));
    }
    // On disk: the heading and two links renamed, the open d.md too (its buffer wins), a
    // new e.md, and between them a folio.toml whose size cap the later events must see.
    write(&root, "a.md", "# A\n\n## New\n");
    write(&root, "b.md", "[x](a.md#new)\n");
    write(&root, "d.md", "[z](a.md#new)\n");
    write(&root, "folio.toml", "[index]\nmax_file_size = 16\n");
    write(&root, "c.md", "[y](a.md#new) and more\n");
    write(&root, "e.md", "# E\n");
    let events: Vec<(std::path::PathBuf, bool)> =
        ["a.md", "b.md", "d.md", "folio.toml", "c.md", "e.md"]
            .iter()
            .map(|p| (root.join(p), true))
            .collect();

    let mut expected = std::collections::BTreeSet::new();
    for (abs, exists) in &events {
        expected.extend(one_by_one.file_event(abs, *exists));
    }
    let affected = batched.file_events(&events);
    // Every document there was when folio.toml changed, and e.md, created after it.
    assert_eq!(paths(&affected), ["a.md", "b.md", "c.md", "d.md", "e.md"]);
    assert_eq!(affected, expected);
    let docs = |s: &Session| -> Vec<(String, String)> {
        let ws = s.roots[0].ws();
        ws.document_paths()
            .map(|p| (p.to_string(), ws.get(p).unwrap().doc.text()))
            .collect()
    };
    // c.md is now over the 16-byte cap: a file, not a document; a.md (12 bytes) and e.md
    // (4 bytes) are read; d.md keeps its buffer.
    let expected_docs: Vec<(String, String)> = [
        ("a.md", "# A\n\n## New\n"),
        ("b.md", "[x](a.md#new)\n"),
        ("d.md", "[z](a.md#old)\n"),
        ("e.md", "# E\n"),
    ]
    .iter()
    .map(|(p, t)| (p.to_string(), t.to_string()))
    .collect();
    assert_eq!(docs(&batched), expected_docs);
    assert_eq!(docs(&one_by_one), expected_docs);
    assert_eq!(batched.roots[0].graph(), one_by_one.roots[0].graph());
    for path in ["a.md", "b.md", "d.md", "e.md"] {
        assert_eq!(
            diagnostics(batched.roots[0].ws(), path),
            diagnostics(one_by_one.roots[0].ws(), path),
            "{path}: diagnostics"
        );
    }
}
