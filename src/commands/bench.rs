//! `folio bench`: cold index, no-op reindex and search latency, printed as a table.
//!
//! Each root is indexed into a fresh temporary database, so the corpus folder is only
//! read (`--db FILE` keeps the database, and a later run reuses it: a quick way to
//! re-measure search latency over a large semantic index without embedding it again).
//! Search latency is measured in-process over a fixed query list (English,
//! Japanese, Chinese and Korean terms, phrases and exclusions), `repeat` times each.
//! With `--semantic`, every chunk is also embedded with the configured embedder (cold
//! semantic index: wall time and chunks/s), hybrid search is timed end to end (query
//! embedding, both legs, fusion), and the process's peak resident memory is read from
//! `/proc/self/status` (`VmHWM`, so it includes the model).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use folio_core::index::index_root;
use folio_core::search::SearchQuery;
use folio_core::search::pipeline::{PipelineOptions, SearchMode};
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
    /// False when `--db` named an existing index: the index and embedding times are
    /// then of an incremental run.
    cold: bool,
    cold_index_ms: u64,
    noop_reindex_ms: u64,
    search_p50_us: u64,
    search_p95_us: u64,
    searches: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    semantic: Option<SemanticFigures>,
}

#[derive(serde::Serialize)]
struct SemanticFigures {
    model: String,
    model_load_ms: u64,
    embedded_texts: usize,
    embed_ms: u64,
    chunks_per_s: f64,
    hybrid_p50_us: u64,
    hybrid_p95_us: u64,
    peak_rss_mib: u64,
}

/// Peak resident set size of this process in MiB (`VmHWM`), 0 when unknown.
fn peak_rss_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb / 1024)
}

fn semantic_figures(
    root: &std::path::Path,
    config: &Config,
    options: &PipelineOptions,
    db: &std::path::Path,
    repeat: usize,
) -> Result<SemanticFigures> {
    use folio_core::embed::pass::{EmbedProgress, embed_db};
    use folio_core::embed::settings::{EmbedSettings, make_embedder};
    let user = folio_core::config::user::UserConfig::load().map_err(anyhow::Error::msg)?;
    let settings =
        EmbedSettings::resolve(&config.embed, &user.embed, false).map_err(anyhow::Error::msg)?;
    let t = Instant::now();
    let embedder = make_embedder(&settings)
        .map_err(anyhow::Error::msg)?
        .with_context(|| format!("no embedder for `{}` (provider none)", root.display()))?;
    let model_load_ms = t.elapsed().as_millis() as u64;
    let t = Instant::now();
    let summary = embed_db(
        db,
        embedder.as_ref(),
        &EmbedProgress::new(),
        &std::sync::atomic::AtomicBool::new(false),
    )?;
    let embed_ms = t.elapsed().as_millis() as u64;
    if let Some(reason) = summary.unavailable {
        anyhow::bail!("the embedder stopped: {reason}");
    }
    let store = Store::open(db)?;
    let mut times = Vec::new();
    for _ in 0..repeat.max(1) {
        for q in QUERIES {
            let t = Instant::now();
            let res = folio_core::search::semantic::search(
                &store,
                Some(embedder.as_ref()),
                None,
                &SearchQuery::new(q),
                options,
            )?;
            times.push(t.elapsed().as_micros() as u64);
            anyhow::ensure!(
                res.mode == SearchMode::Hybrid,
                "hybrid search ran as {}",
                res.mode
            );
        }
    }
    times.sort_unstable();
    Ok(SemanticFigures {
        model: embedder.model_id().to_owned(),
        model_load_ms,
        embedded_texts: summary.embedded,
        embed_ms,
        chunks_per_s: summary.embedded as f64 / (embed_ms.max(1) as f64 / 1000.0),
        hybrid_p50_us: percentile(&times, 0.50),
        hybrid_p95_us: percentile(&times, 0.95),
        peak_rss_mib: peak_rss_mib(),
    })
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

/// Runs the benchmark over `roots`, each indexed into a temporary database, or with
/// `keep_db` (one root only) into that file, which is kept: a later run reuses it, so its
/// index and embedding figures are then incremental, not cold (`cold: false`).
pub fn run(
    roots: &[PathBuf],
    repeat: usize,
    semantic: bool,
    json: bool,
    keep_db: Option<&std::path::Path>,
) -> Result<ExitCode> {
    anyhow::ensure!(
        keep_db.is_none() || roots.len() == 1,
        "--db takes one root, not {}",
        roots.len()
    );
    // Every root's `[search]` is checked before any is indexed.
    for root in roots {
        PipelineOptions::for_root(SearchMode::Hybrid, root, &Config::load(root)?.search)?;
    }
    let mut all = Vec::new();
    for root in roots {
        let root = root
            .canonicalize()
            .with_context(|| format!("root `{}` does not exist", root.display()))?;
        let config = Config::load(&root)?;
        // The hybrid search a user of this root gets: its `[search]` numbers apply.
        let options = PipelineOptions::for_root(SearchMode::Hybrid, &root, &config.search)?;
        let tmp = tempfile::tempdir().context("creating a temporary folder")?;
        let db = keep_db.map_or_else(|| tmp.path().join("index.db"), std::path::Path::to_path_buf);
        let cold = std::fs::metadata(&db).map_or(true, |m| m.len() == 0);
        let t = Instant::now();
        let first = index_root(&root, &config, &db, false, None)?;
        let cold_ms = t.elapsed().as_millis() as u64;
        let t = Instant::now();
        index_root(&root, &config, &db, false, None)?;
        let noop_ms = t.elapsed().as_millis() as u64;
        let store = Store::open(&db)?;
        let n_chunks = store.status()?.n_chunks as usize;
        let mut times = Vec::new();
        for _ in 0..repeat.max(1) {
            for q in QUERIES {
                let t = Instant::now();
                store.search_lexical(&SearchQuery::new(q))?;
                times.push(t.elapsed().as_micros() as u64);
            }
        }
        times.sort_unstable();
        let semantic = if semantic {
            Some(semantic_figures(&root, &config, &options, &db, repeat)?)
        } else {
            None
        };
        all.push(Figures {
            root: root.display().to_string(),
            files: first.files,
            // Chunks in the index (a reused index's pass writes none).
            chunks: n_chunks,
            cold,
            cold_index_ms: cold_ms,
            noop_reindex_ms: noop_ms,
            search_p50_us: percentile(&times, 0.50),
            search_p95_us: percentile(&times, 0.95),
            searches: times.len(),
            semantic,
        });
    }
    let mut out = crate::output::stdout();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&all)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "| root | files | chunks | cold index | no-op reindex | search p50 | search p95 |"
    )?;
    writeln!(out, "|---|---:|---:|---:|---:|---:|---:|")?;
    for f in &all {
        writeln!(
            out,
            "| {} | {} | {} | {} ms{} | {} ms | {:.2} ms | {:.2} ms |",
            f.root,
            f.files,
            f.chunks,
            f.cold_index_ms,
            if f.cold { "" } else { " (reused index)" },
            f.noop_reindex_ms,
            f.search_p50_us as f64 / 1000.0,
            f.search_p95_us as f64 / 1000.0
        )?;
    }
    if all.iter().any(|f| f.semantic.is_some()) {
        writeln!(out)?;
        writeln!(
            out,
            "| root | model | load | texts embedded | cold semantic index | chunks/s | hybrid p50 | hybrid p95 | peak RSS |"
        )?;
        writeln!(out, "|---|---|---:|---:|---:|---:|---:|---:|---:|")?;
        for f in &all {
            if let Some(s) = &f.semantic {
                writeln!(
                    out,
                    "| {} | {} | {} ms | {} | {:.1} s{} | {:.1} | {:.1} ms | {:.1} ms | {} MiB |",
                    f.root,
                    s.model,
                    s.model_load_ms,
                    s.embedded_texts,
                    s.embed_ms as f64 / 1000.0,
                    if f.cold { "" } else { " (reused index)" },
                    s.chunks_per_s,
                    s.hybrid_p50_us as f64 / 1000.0,
                    s.hybrid_p95_us as f64 / 1000.0,
                    s.peak_rss_mib
                )?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
