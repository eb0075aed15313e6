//! In-process tests of every host operation against a small knowledge base on disk, with
//! exact expected JSON. This file holds the knowledge base and the helpers; the tests are
//! in one file per group of operations.

mod best_practice;
#[cfg(feature = "pdf-book")]
mod book;
mod edit;
mod embeddings;
mod files;
mod images;
mod knowledge;
mod links;
mod moves;
mod paths;
mod read;
mod resources;
mod search;
mod status;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::{Host, HostResult, Options};
use crate::pointer::{hash_bytes, hex};

const GUIDE: &str = "---\ntitle: Guide\ntags: [setup]\ndate: 2026-01-15\n---\n# Guide\n\nInstall the widget first.\n\n## Steps\n\n- one\n  - one.a\n- two\n\n## Prices\n\n| Item | Price |\n|:-----|------:|\n| Widget | 10 |\n| Gadget | 20 |\n";
const INDEX: &str = "# Home\n\nSee the [guide](docs/guide.md#steps) and [missing](nope.md).\n";
const OTHER: &str = "# Other\n\nBack [home](../../index.md), [guide](../guide.md).\n";

/// The hash of `s` as a pointer or `sourceHash` shows it.
fn h(s: &str) -> String {
    hex(hash_bytes(s.as_bytes()))
}

/// A host on `root` (not indexed), with writes allowed or not and embeddings off.
fn open_at(root: &Path, allow_writes: bool) -> Host {
    Host::open(Options {
        root: root.to_path_buf(),
        db: None,
        allow_writes,
        embed: Err("embeddings are off in this test".into()),
        fetch: Default::default(),
        rerank: Ok(None),
    })
    .unwrap()
}

/// The fixture knowledge base in a temporary folder, indexed, with writes allowed or not.
fn setup(allow_writes: bool) -> (tempfile::TempDir, Arc<Host>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("docs/more")).unwrap();
    std::fs::write(root.join("index.md"), INDEX).unwrap();
    std::fs::write(root.join("docs/guide.md"), GUIDE).unwrap();
    std::fs::write(root.join("docs/more/other.md"), OTHER).unwrap();
    std::fs::write(root.join("docs/logo.png"), b"\x89PNG\r\n\x1a\nfake").unwrap();
    let kb = Arc::new(open_at(root, allow_writes));
    let last = kb.reindex_blocking(false).unwrap();
    assert!(last.ok, "{last:?}");
    (dir, kb)
}

/// The error of a failed operation as JSON.
fn err<T: std::fmt::Debug>(r: HostResult<T>) -> Value {
    serde_json::to_value(r.unwrap_err()).unwrap()
}

/// The result of a successful operation as JSON.
fn ok<T: serde::Serialize>(r: HostResult<T>) -> Value {
    match r {
        Ok(v) => serde_json::to_value(v).unwrap(),
        Err(e) => panic!("tool failed: {e:?}"),
    }
}

/// Every file under `root` (except the index) with its bytes.
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().to_string();
            if rel.starts_with(".folio") {
                continue;
            }
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p);
                out.insert(format!("{rel}/"), Vec::new());
            } else {
                out.insert(rel, std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

/// The current pointer of the element at `logical` in `path`, read from disk.
fn ptr_of(kb: &Host, path: &str, logical: &str) -> String {
    let text = std::fs::read_to_string(kb.root().join(path)).unwrap();
    crate::parse::parse(&text)
        .elements
        .iter()
        .find(|e| e.logical == logical)
        .unwrap()
        .pointer()
        .to_string()
}

/// The pointer `logical~selfHash~subtreeHash` of an element whose own bytes are `own` and
/// whose owned bytes (a heading's section, a list item with its nested lists) are `owned`.
fn pointer(logical: &str, own: &str, owned: &str) -> String {
    format!("{logical}~{}~{}", h(own), h(owned))
}
