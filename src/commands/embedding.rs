//! What a command does about embeddings, through its host: the embedder the settings
//! make (or why there is none), the embedding pass with its progress bar, and the
//! embedder of a search or an eval.

use std::sync::Arc;

use anyhow::{Context, Result, bail};
use folio_core::embed::Embedder;
use folio_core::embed::pass::{EmbedProgress, EmbedSummary};
use folio_core::embed::runner::EmbedderLoad;
use folio_core::embed::settings::ProviderKind;
use folio_core::host::Host;
use folio_core::search::pipeline::SearchMode;

use super::root::host_error;

/// What `folio index` does about embeddings.
pub enum EmbedPlan {
    /// `--no-embed`.
    Skipped,
    /// Provider `none`, or the provider cannot be built (the reason).
    Off {
        provider: ProviderKind,
        reason: String,
    },
    /// An embedder to run the pass with.
    Ready(Arc<dyn Embedder>),
}

/// The embedder of `host`, built now (a model may load), or why there is none.
///
/// Errors: the embedding settings were refused (a remote endpoint not allowed, the
/// user's configuration unreadable).
pub fn plan_embedding(host: &Host) -> Result<EmbedPlan> {
    Ok(match host.load_embedder() {
        EmbedderLoad::Refused(why) => bail!(why),
        EmbedderLoad::Off { provider, reason } => EmbedPlan::Off { provider, reason },
        EmbedderLoad::Ready(embedder) => EmbedPlan::Ready(embedder),
    })
}

/// Runs the embedding pass over `host`'s index (only what lacks a vector; with
/// `clear_first`, every vector is deleted first, under the pass's lock), with a progress
/// bar on a terminal. The embedder is the one [`plan_embedding`] built.
pub fn run_embed(host: &Host, clear_first: bool) -> Result<EmbedSummary> {
    let bar = super::progress::bar("embedding", "chunks");
    let listener_bar = bar.clone();
    let progress = EmbedProgress::with_listener(move |s| {
        super::progress::report(listener_bar.as_ref(), s.done, s.total);
        if let Some(bar) = &listener_bar {
            bar.set_message(
                s.eta_ms
                    .map_or_else(String::new, |ms| format!("ETA {}", format_duration(ms))),
            );
        }
    });
    let summary = host
        .embed_now(clear_first, &progress)
        .map_err(host_error)
        .with_context(|| format!("embedding the chunks of `{}`", host.root().display()))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(summary)
}

/// `ms` as the progress bar shows a time left: `42s`, `3m 05s`, `1h 02m`.
fn format_duration(ms: u64) -> String {
    let s = ms.div_ceil(1000);
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
    }
}

/// The embedder for a search or an eval in `mode`, built and kept by `host` (so its
/// searches use it), with the index's vectors brought up to date first when `refresh`
/// (only chunks that lack one are embedded).
///
/// `None` for `lexical`, and for `hybrid` when no embedder can be built or the index has
/// no vectors of its model yet (a first embedding of a whole folder is `folio index`'s job,
/// unless `embed_all`). Errors: `semantic` without an embedder.
pub fn search_embedder(
    host: &Host,
    mode: SearchMode,
    refresh: bool,
    embed_all: bool,
) -> Result<Option<Arc<dyn Embedder>>> {
    if mode == SearchMode::Lexical {
        return Ok(None);
    }
    let embedder = match plan_embedding(host)? {
        EmbedPlan::Ready(embedder) => embedder,
        EmbedPlan::Off { reason, .. } => {
            if mode == SearchMode::Semantic {
                bail!(
                    "not configured: semantic search needs embeddings ({reason}); use --mode lexical"
                );
            }
            return Ok(None);
        }
        EmbedPlan::Skipped => return Ok(None),
    };
    let has_vectors = host
        .has_vectors_of(embedder.as_ref())
        .map_err(host_error)
        .with_context(|| format!("opening the index `{}`", host.db_path().display()))?;
    if refresh && (has_vectors || embed_all || mode == SearchMode::Semantic) {
        let summary = run_embed(host, false)?;
        if let Some(reason) = &summary.unavailable {
            note!("folio: warning: embedding provider unavailable: {reason}");
        }
    } else if !has_vectors && mode == SearchMode::Hybrid {
        note!(
            "folio: note: the index has no vectors yet, so this search is lexical; `folio index` computes them"
        );
        return Ok(None);
    }
    Ok(Some(embedder))
}
