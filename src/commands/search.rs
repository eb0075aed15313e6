//! `folio search`: one search request through the same contract as kb_search and
//! folio/search, after an incremental reindex, printed as text or JSON.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use folio_core::host::search::SearchRequest;
use folio_core::search::pipeline::SearchMode;

use super::embedding::search_embedder;
use super::index::{report_skipped_briefly, run_index};
use super::root::{host_error, open_host, resolve_root};
use crate::cli::SearchArgs;

/// The search request the command line asks for.
fn request(args: &SearchArgs) -> SearchRequest {
    SearchRequest {
        query: args.query.clone(),
        limit: Some(usize::from(args.limit)),
        path_globs: args.path_globs.clone(),
        category: args.category.clone(),
        topic: args.topic.clone(),
        min_quality: args.min_quality,
        mode: args.mode.map(|m| SearchMode::from(m).as_str().to_string()),
        mmr: Some(args.mmr),
        mmr_lambda: args.mmr_lambda,
        mmr_same_doc_penalty: args.mmr_same_doc_penalty,
        parent_retriever: Some(args.parent_retriever),
        per_file: args.per_file,
        min_confidence_ratio: args.min_confidence_ratio,
        rerank: args.rerank.requested(),
        ..SearchRequest::default()
    }
}

/// Searches the root `args` names and prints the hits.
pub fn run(args: &SearchArgs) -> Result<ExitCode> {
    let request = request(args);
    let (no_reindex, json) = (args.no_reindex, args.json);
    let r = resolve_root(&args.root)?;
    // A bad `[search]` number in folio.toml is refused here (naming the file); a bad
    // tuning flag, argument or reranker before the index is touched.
    let host = open_host(&r, args.embed.allow_remote_embeddings, true)?;
    let flags = args.tuning.to_config();
    let mode = host.check_search(&request, &flags).map_err(host_error)?;
    if !no_reindex || !r.db.exists() {
        let summary = run_index(&host, false, true)?;
        report_skipped_briefly(&summary);
    }
    search_embedder(&host, mode, !no_reindex, false)?;
    let results = host.search_tuned(&request, &flags).map_err(host_error)?;
    let mut out = crate::output::stdout();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&results)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if results.results.is_empty() {
        let shown: String = request.query.chars().take(80).collect();
        let ellipsis = if shown.len() < request.query.len() {
            "…"
        } else {
            ""
        };
        writeln!(out, "no results for `{shown}{ellipsis}`")?;
    }
    for hit in &results.results {
        let heading = if hit.heading_path.is_empty() {
            String::new()
        } else {
            format!(" — {}", hit.heading_path.join(" > "))
        };
        // Where in a PDF or a source file: the page, the definition.
        let mut cited = String::new();
        if let Some(page) = hit.citation.page {
            cited.push_str(&format!(" (page {page})"));
        }
        if let (Some(kind), Some(symbol)) = (&hit.citation.symbol_kind, &hit.citation.symbol) {
            cited.push_str(&format!(" ({kind} {symbol})"));
        }
        writeln!(
            out,
            "{}:{}-{}{}{}  ({})",
            hit.path,
            hit.start_line,
            hit.end_line,
            cited,
            heading,
            readable_score(hit, results.reranked, results.mode == "hybrid")
        )?;
        writeln!(out, "    {}", hit.snippet)?;
        writeln!(out, "    {}", hit.pointer)?;
        if let Some(expanded_from) = &hit.expanded_from {
            writeln!(out, "    (section: {} hits collapsed)", expanded_from.len())?;
        }
        for section in hit.sections.iter().flatten() {
            let heading = if section.heading_path.is_empty() {
                String::new()
            } else {
                format!(" — {}", section.heading_path.join(" > "))
            };
            writeln!(
                out,
                "    also {}-{}{heading}",
                section.start_line, section.end_line
            )?;
        }
    }
    if results.mode != mode.as_str() {
        if folio_core::search::semantic::query_embedding_text(&request.query)
            .trim()
            .is_empty()
        {
            // Nothing to embed (no letters or digits, or only -excluded terms): vectors are not the reason.
            writeln!(
                out,
                "note: searched in {} mode (the query has no words to embed)",
                results.mode
            )?;
        } else {
            writeln!(
                out,
                "note: searched in {} mode ({} needs vectors; see `folio status`)",
                results.mode, mode
            )?;
        }
    }
    if results.low_confidence && !results.results.is_empty() {
        writeln!(
            out,
            "note: low confidence — these hits may not answer the query (docs/search.md, `low_confidence`)"
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What a person can read of a hit's score: the reranker's score when one rescored the
/// hits, the cosine similarity of its vector to the query and its rank in the lexical
/// (BM25) leg, as far as each leg found it (`hybrid`: whether the lexical leg ran, so that
/// its silence means "no lexical match"); the fused score only when none is known.
fn readable_score(
    hit: &folio_core::host::search::SearchHit,
    reranked: bool,
    hybrid: bool,
) -> String {
    let mut parts = Vec::new();
    if reranked {
        parts.push(format!("rerank {:.3}", hit.score));
    }
    if let Some(similarity) = hit.similarity {
        parts.push(format!("similarity {similarity:.2}"));
    }
    if let Some(rank) = hit.lexical_rank {
        parts.push(format!("lexical rank {rank}"));
    } else if hybrid && hit.similarity.is_some() {
        parts.push("no lexical match".to_string());
    }
    if parts.is_empty() {
        parts.push(format!("score {:.4}", hit.score));
    }
    parts.join(", ")
}
