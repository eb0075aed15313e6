//! `folio index`: the incremental index of a root, then the embedding pass, with a
//! summary as text or JSON; also the indexing step that search and eval run first.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use folio_core::embed::pass::probe;
use folio_core::embed::settings::ProviderKind;
use folio_core::host::Host;
use folio_core::index::IndexSummary;

use super::counted;
use super::embedding::{EmbedPlan, plan_embedding, run_embed};
use super::root::{Resolved, host_error, open_host, resolve_root};
use crate::cli::IndexArgs;

/// Indexes the root `args` names, then embeds what changed.
pub fn run(args: &IndexArgs) -> Result<ExitCode> {
    let (force, json) = (args.force, args.json);
    let r = resolve_root(&args.root)?;
    let host = open_host(&r, args.embed.allow_remote_embeddings, false)?;
    let plan = if args.no_embed {
        EmbedPlan::Skipped
    } else {
        plan_embedding(&host)?
    };
    if force && let EmbedPlan::Ready(embedder) = &plan {
        // A rebuild must not throw away vectors it cannot compute again.
        probe(embedder.as_ref()).map_err(|err| {
            anyhow::anyhow!(
                "the embedding provider did not answer the probe before `--force` ({err}); nothing was changed \
                 (fix the provider, or use --no-embed to rebuild the lexical index only)"
            )
        })?;
    }
    finish_interrupted_writes(&r);
    let summary = run_index(&host, force, true)?;
    report_skipped(&summary);
    super::report_replaced(&summary.replaced);
    let embed_summary = match &plan {
        // `--force` deletes the vectors once it holds the embedding pass's lock, so that a
        // pass another process runs keeps its vectors until it is done.
        EmbedPlan::Ready(_) => Some(run_embed(&host, force)?),
        _ => None,
    };
    if let Some(es) = &embed_summary {
        for s in &es.skipped_files {
            note!("folio: skipped {} (embedding): {}", s.path, s.reason);
        }
        if let Some(reason) = &es.unavailable {
            note!("folio: warning: embeddings incomplete, the provider is unavailable: {reason}");
        }
    }
    // The built-in provider without its second model still works, with hybrid search's
    // ensemble leg off; say so, as a partial install is easy to miss.
    if let EmbedPlan::Ready(embedder) = &plan
        && let Some(reason) = embedder.ensemble_missing()
    {
        note!("folio: note: hybrid search runs without its ensemble leg: {reason}");
    }
    // Provider `none` is a choice; any other provider that cannot be built means the
    // embedding pass was skipped, which is said whether or not a config chose it.
    if let EmbedPlan::Off {
        provider, reason, ..
    } = &plan
        && *provider != ProviderKind::None
    {
        note!(
            "folio: note: embeddings skipped ({reason}); the index is lexical only, and search \
             is lexical until they are computed"
        );
    }
    let mut out = crate::output::stdout();
    if json {
        let mut value = serde_json::to_value(&summary)?;
        let embed_json = match (&plan, &embed_summary) {
            (EmbedPlan::Skipped, _) => serde_json::json!({"state": "skipped"}),
            (
                EmbedPlan::Off {
                    provider, reason, ..
                },
                _,
            ) => {
                serde_json::json!({"state": "off", "provider": provider, "reason": reason})
            }
            (EmbedPlan::Ready(embedder), Some(es)) => {
                let mut v = serde_json::to_value(es)?;
                v["state"] = serde_json::json!(if es.unavailable.is_some() {
                    "unavailable"
                } else {
                    "done"
                });
                v["ensemble_model"] =
                    serde_json::json!(embedder.ensemble().map(|e| e.model_id().to_owned()));
                v["ensemble_missing"] = serde_json::json!(embedder.ensemble_missing());
                v
            }
            (EmbedPlan::Ready(_), None) => serde_json::Value::Null,
        };
        value["embed"] = embed_json;
        writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
    } else {
        writeln!(
            out,
            "indexed {} ({} changed, {} unchanged, {} skipped, {} removed, {}) in {} ms\nindex: {}",
            counted(summary.files, "file", "files"),
            summary.indexed,
            summary.unchanged,
            summary.skipped.len(),
            summary.removed,
            counted(summary.chunks, "chunk", "chunks"),
            summary.elapsed_ms,
            summary.db_path.display()
        )?;
        if summary.rebuilt {
            writeln!(
                out,
                "note: the index had an incompatible schema and was rebuilt"
            )?;
        }
        if let Some(es) = &embed_summary {
            writeln!(
                out,
                "embedded {} ({} reused, {} skipped) with {} in {} ms",
                counted(es.embedded, "chunk", "chunks"),
                es.reused,
                counted(es.skipped_files.len(), "file", "files"),
                es.model_id,
                es.elapsed_ms
            )?;
            if es.ensemble_documents_embedded > 0 {
                writeln!(
                    out,
                    "embedded {} with the ensemble model (hybrid search's second model)",
                    counted(es.ensemble_documents_embedded, "document", "documents")
                )?;
            }
        }
    }
    let any_skipped = !summary.skipped.is_empty()
        || embed_summary
            .as_ref()
            .is_some_and(|es| !es.skipped_files.is_empty());
    if let Some(failure) = host.frontmatter_failure(&summary) {
        note!("folio: error: {failure}");
        return Ok(ExitCode::from(1));
    }
    Ok(if any_skipped {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}

/// Finishes the multi-file writes (moves) a killed folio process left half done in `r`,
/// before the index reads the files, and says what it did on stderr.
fn finish_interrupted_writes(r: &Resolved) {
    match folio_core::write::Writer::new(&r.root).finish_interrupted() {
        Ok((found, report)) => {
            for op in &found {
                note!("folio: finished an interrupted write: {}", op.describe());
            }
            for path in &report.left {
                note!(
                    "folio: warning: {path} was changed after a folio write was interrupted; \
                     left as it is (check its links)"
                );
            }
        }
        Err(e) => note!("folio: warning: could not finish an interrupted write: {e}"),
    }
}

/// Indexes `host`'s root (every file with `force`), with a progress bar on a terminal.
pub fn run_index(host: &Host, force: bool, show_progress: bool) -> Result<IndexSummary> {
    let bar = show_progress
        .then(|| super::progress::bar("indexing", "files"))
        .flatten();
    let progress = |done: usize, total: usize| {
        super::progress::report(bar.as_ref(), done as u64, total as u64);
    };
    let summary = host
        .index_now(force, Some(&progress))
        .map_err(host_error)
        .with_context(|| format!("indexing `{}`", host.root().display()))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(summary)
}

/// Lists the skipped files and the notes whose frontmatter did not parse on stderr, and
/// warns when the root has no Markdown at all.
pub fn report_skipped(summary: &IndexSummary) {
    for s in &summary.skipped {
        note!("folio: skipped {}: {}", s.path, s.reason);
    }
    for (path, why) in &summary.frontmatter_unparsed {
        note!("folio: note: {path}: {why}; its title, tags, aliases and date are not read");
    }
    warn_if_empty(summary);
}

/// [`report_skipped`] for a command that indexes on the way to something else (`folio
/// search`, `folio eval`), which would repeat the list on every run: one line counting
/// the skipped files, and the same warning for a root without Markdown.
pub fn report_skipped_briefly(summary: &IndexSummary) {
    if !summary.skipped.is_empty() {
        note!(
            "folio: note: {} not indexed; `folio index` lists them with the reason",
            super::counted(summary.skipped.len(), "file", "files")
        );
    }
    warn_if_empty(summary);
}

/// Warns on stderr when the root has no Markdown file at all.
fn warn_if_empty(summary: &IndexSummary) {
    if summary.files == 0 {
        note!(
            "folio: warning: no Markdown files (.md, .markdown) found; check .gitignore, .ignore, .folioignore and [index].exclude"
        );
    }
}
