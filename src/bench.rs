//! `folio bench`: cold index, no-op reindex and search latency, printed as a table.
//!
//! Each root is indexed into a fresh temporary database, so the corpus folder is only
//! read. Search latency is measured in-process over a fixed query list (English,
//! Japanese, Chinese and Korean terms, phrases and exclusions), `repeat` times each.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use folio_core::index::index_root;
use folio_core::search::SearchQuery;
use folio_core::store::Store;
use folio_core::workspace::Config;

/// The fixed query list.
pub const QUERIES: [&str; 12] = [
    "kubernetes",
    "release notes",
    "pull request review",
    "\"code of conduct\"",
    "test -flaky",
    "git commit",
    "list files in a directory",
    "compress archive",
    "ファイル",
    "圧縮",
    "下载",
    "파일",
];

#[derive(serde::Serialize)]
struct Figures {
    root: String,
    files: usize,
    chunks: usize,
    cold_index_ms: u64,
    noop_reindex_ms: u64,
    search_p50_us: u64,
    search_p95_us: u64,
    searches: usize,
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

/// Runs the benchmark over `roots`.
pub fn run(roots: &[PathBuf], repeat: usize, json: bool) -> Result<ExitCode> {
    let mut all = Vec::new();
    for root in roots {
        let root = root.canonicalize().with_context(|| format!("root `{}` does not exist", root.display()))?;
        let config = Config::load(&root)?;
        let tmp = tempfile::tempdir().context("creating a temporary folder")?;
        let db = tmp.path().join("index.db");
        let t = Instant::now();
        let cold = index_root(&root, &config, &db, false, None)?;
        let cold_ms = t.elapsed().as_millis() as u64;
        let t = Instant::now();
        index_root(&root, &config, &db, false, None)?;
        let noop_ms = t.elapsed().as_millis() as u64;
        let store = Store::open(&db)?;
        let mut times = Vec::new();
        for _ in 0..repeat.max(1) {
            for q in QUERIES {
                let t = Instant::now();
                store.search_lexical(&SearchQuery::new(q))?;
                times.push(t.elapsed().as_micros() as u64);
            }
        }
        times.sort_unstable();
        all.push(Figures {
            root: root.display().to_string(),
            files: cold.files,
            chunks: cold.chunks,
            cold_index_ms: cold_ms,
            noop_reindex_ms: noop_ms,
            search_p50_us: percentile(&times, 0.50),
            search_p95_us: percentile(&times, 0.95),
            searches: times.len(),
        });
    }
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&all)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(out, "| root | files | chunks | cold index | no-op reindex | search p50 | search p95 |")?;
    writeln!(out, "|---|---:|---:|---:|---:|---:|---:|")?;
    for f in &all {
        writeln!(
            out,
            "| {} | {} | {} | {} ms | {} ms | {:.2} ms | {:.2} ms |",
            f.root,
            f.files,
            f.chunks,
            f.cold_index_ms,
            f.noop_reindex_ms,
            f.search_p50_us as f64 / 1000.0,
            f.search_p95_us as f64 / 1000.0
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
