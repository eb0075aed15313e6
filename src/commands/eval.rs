//! `folio eval`: runs a golden file through the search pipeline and reports
//! recall@k, MRR and nDCG, with the difference from the previous run.
//!
//! The previous run per golden file and mode is kept in `eval-last.json` next to the
//! index database (`<root>/.folio/eval-last.json` by default); `--baseline FILE`
//! compares with a saved `--json` output instead, and `--no-save` leaves the history alone.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Result, bail};
use folio_core::config::SearchConfig;
use folio_core::eval::{self, EvalHistory};
use folio_core::rerank::select;
use folio_core::search::SearchQuery;
use folio_core::search::pipeline::{PipelineError, PipelineOptions, Reranker, SearchMode};

use super::embedding::search_embedder;
use super::index::{report_skipped_briefly, run_index};
use super::rerank::rerank_setup;
use super::root::{open_host, open_index, resolve_root};
use crate::cli::EvalArgs;

/// The pipeline options of a run in `mode`: the mode's defaults, the numbers of the
/// workspace's `[search]` table, then each flag `args` gives.
///
/// Errors: a bad flag (`invalid argument: …`), a bad `[search]` number (naming
/// `folio.toml`).
fn pipeline_options(
    args: &EvalArgs,
    mode: SearchMode,
    workspace: &SearchConfig,
    root: &Path,
) -> Result<PipelineOptions> {
    let flags = args.tuning.to_config();
    let invalid = |message: String| anyhow::anyhow!("invalid argument: {message}");
    PipelineOptions::tuned(mode, &flags).map_err(invalid)?;
    let tuned = PipelineOptions::for_root(mode, root, &workspace.overlaid(&flags))?;
    let options = PipelineOptions {
        mmr: args.mmr,
        min_confidence_ratio: args
            .min_confidence_ratio
            .unwrap_or(tuned.min_confidence_ratio),
        ..tuned
    };
    options.validate().map_err(invalid)?;
    Ok(options)
}

/// Evaluates the golden file `args` names and prints the report with its diff.
pub fn run(args: &EvalArgs) -> Result<ExitCode> {
    let golden = eval::load_golden(&args.golden)?;
    if args.k.contains(&0) {
        bail!("--k values must be at least 1");
    }
    let r = resolve_root(&args.root)?;
    // Bad numbers are refused before the index is touched.
    let asked: SearchMode = args.mode.map_or(SearchMode::Hybrid, SearchMode::from);
    pipeline_options(args, asked, &r.config.search, &r.root)?;
    let rerank_setup = rerank_setup(&r.root, &r.config)?;
    let reranker = match select(args.rerank.requested(), &rerank_setup) {
        Ok(reranker) => reranker,
        Err(PipelineError::NotConfigured(reason)) => bail!("not configured: {reason}"),
        Err(other) => return Err(other.into()),
    };
    let host = open_host(&r, args.embed.allow_remote_embeddings, false)?;
    if !args.no_reindex || !r.db.exists() {
        let summary = run_index(&host, false, true)?;
        report_skipped_briefly(&summary);
    }
    // An eval measures the mode asked for: it embeds whatever the index lacks first.
    let embedder = search_embedder(&host, asked, !args.no_reindex, true)?;
    let mode = if args.mode.is_none() && embedder.is_none() {
        SearchMode::Lexical
    } else {
        asked
    };
    let store = open_index(&r)?;
    let options = pipeline_options(args, mode, &r.config.search, &r.root)?;
    let mut label = mode.to_string();
    if args.mmr {
        label.push_str("+mmr");
    }
    if reranker.is_some() {
        label.push_str("+rerank");
    }
    let max_k = args.k.iter().max().copied().unwrap_or(10);
    // Enough chunks to fill the top `max_k` documents even when documents repeat.
    let chunk_limit = (max_k * 5).max(50);
    let documents = store.documents()?;
    let search_at = |text: &str,
                     limit: usize|
     -> Result<folio_core::search::pipeline::PipelineResults> {
        let query = SearchQuery {
            limit,
            ..SearchQuery::new(text)
        };
        let res = match folio_core::search::semantic::search(
            &store,
            embedder.as_deref(),
            reranker.map(|r| r as &dyn Reranker),
            &query,
            &options,
        ) {
            Ok(res) => res,
            Err(PipelineError::NotConfigured(reason)) => bail!("not configured: {reason}"),
            Err(PipelineError::Unavailable(reason)) => {
                bail!("unavailable: {reason} (searching `{text}`)")
            }
            Err(PipelineError::Search(err)) => return Err(err.into()),
        };
        if res.mode != mode {
            bail!("{mode} search needs embeddings and the index has none yet; use --mode lexical");
        }
        Ok(res)
    };
    let mut search = |text: &str| -> Result<eval::SearchOutcome> {
        let ranked = search_at(text, chunk_limit)?;
        // `low_confidence` is judged on the hits returned, so it is taken from a search
        // with kb_search's default limit: the flag a user or an agent would see.
        let flagged = search_at(text, folio_core::search::DEFAULT_LIMIT)?;
        Ok(eval::SearchOutcome {
            low_confidence: flagged.low_confidence,
            paths: ranked.results.into_iter().map(|h| h.hit.path).collect(),
        })
    };
    let golden_label = args.golden.display().to_string();
    let report = eval::run_eval(
        &golden,
        &golden_label,
        &label,
        &args.k,
        &|p| documents.contains_key(p),
        &mut search,
    )?;

    let history_path = history_path(&r.db);
    let key = eval::history_key(&args.golden, &label);
    let mut history = EvalHistory::default();
    let previous = match &args.baseline {
        Some(path) => Some(eval::load_report(path)?),
        None => {
            history = EvalHistory::load(&history_path)?;
            history.runs.get(&key).cloned()
        }
    };
    let diff = previous.as_ref().map(|p| eval::diff(p, &report));
    for path in &report.missing_expected {
        note!("folio: warning: expected document `{path}` is not in the index");
    }
    let mut out = crate::output::stdout();
    if args.json {
        let json = serde_json::json!({ "report": report, "diff": diff });
        writeln!(out, "{}", serde_json::to_string_pretty(&json)?)?;
    } else {
        write!(out, "{}", eval::format_text(&report, diff.as_ref()))?;
    }
    if !args.no_save {
        if args.baseline.is_some() {
            history = EvalHistory::load(&history_path)?;
        }
        history.runs.insert(key, report);
        if let Err(err) = history.save(&history_path) {
            note!("folio: warning: could not record this run: {err}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `eval-last.json` next to the index database.
fn history_path(db: &Path) -> PathBuf {
    db.parent().unwrap_or(Path::new(".")).join("eval-last.json")
}
