//! What a command does about embeddings: the settings (folio.toml, the user's config and
//! the flag), the embedder they make, the embedding pass with its progress bar, and the
//! embedder for a search or an eval.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result, bail};
use folio_core::config::user::UserConfig;
use folio_core::embed::Embedder;
use folio_core::embed::pass::{EmbedProgress, EmbedSummary, embed_db, embed_db_after_clearing};
use folio_core::embed::settings::{EmbedSettings, ProviderKind, make_embedder};
use folio_core::search::pipeline::SearchMode;
use folio_core::store::Store;

use super::root::Resolved;
use crate::cli::EmbedArgs;

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

/// The embedding settings of `r`: its folio.toml, the user's config and the flag.
pub fn embed_settings(r: &Resolved, embed: EmbedArgs) -> Result<EmbedSettings> {
    let user = UserConfig::load().map_err(anyhow::Error::msg)?;
    folio_core::host::Options::resolve(&r.root, &r.config, Ok(&user), embed.allow_remote_embeddings)
        .embed
        .map_err(anyhow::Error::msg)
}

/// The embedder the settings of `r` make, or why there is none.
pub fn plan_embedding(r: &Resolved, embed: EmbedArgs) -> Result<EmbedPlan> {
    let settings = embed_settings(r, embed)?;
    Ok(match make_embedder(&settings) {
        Ok(Some(embedder)) => EmbedPlan::Ready(embedder),
        Ok(None) => EmbedPlan::Off {
            provider: settings.provider,
            reason: format!(
                "provider `none`, set by {}",
                settings.provider_source.describe()
            ),
        },
        Err(reason) => EmbedPlan::Off {
            provider: settings.provider,
            reason,
        },
    })
}

/// Runs the embedding pass over `r`'s index (only what lacks a vector; with
/// `clear_first`, every vector is deleted first, under the pass's lock:
/// [`embed_db_after_clearing`]), with a progress bar on a terminal.
pub fn run_embed(r: &Resolved, embedder: &dyn Embedder, clear_first: bool) -> Result<EmbedSummary> {
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} embedding {pos}/{len} chunks [{bar:30}] {elapsed} {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar
    });
    let listener_bar = bar.clone();
    let progress = EmbedProgress::with_listener(move |s| {
        if let Some(bar) = &listener_bar {
            bar.set_length(s.total);
            bar.set_position(s.done);
            bar.set_message(
                s.eta_ms
                    .map_or_else(String::new, |ms| format!("ETA {}", format_duration(ms))),
            );
        }
    });
    let pass = if clear_first {
        embed_db_after_clearing
    } else {
        embed_db
    };
    let summary = pass(&r.db, embedder, &progress, &AtomicBool::new(false))
        .with_context(|| format!("embedding the chunks of `{}`", r.root.display()))?;
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

/// The embedder for a search or an eval in `mode`, with the index's vectors brought
/// up to date first (only chunks that lack one are embedded).
///
/// `None` for `lexical`, and for `hybrid` when no embedder can be built or the index has
/// no vectors of its model yet (a first embedding of a whole folder is `folio index`'s job,
/// unless `embed_all`). Errors: `semantic` without an embedder.
pub fn search_embedder(
    r: &Resolved,
    embed: EmbedArgs,
    mode: SearchMode,
    refresh: bool,
    embed_all: bool,
) -> Result<Option<Arc<dyn Embedder>>> {
    if mode == SearchMode::Lexical {
        return Ok(None);
    }
    let embedder = match plan_embedding(r, embed)? {
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
    let store =
        Store::open(&r.db).with_context(|| format!("opening the index `{}`", r.db.display()))?;
    let has_vectors = store
        .vector_status()?
        .model
        .is_some_and(|m| m.model_id == embedder.model_id());
    drop(store);
    if refresh && (has_vectors || embed_all || mode == SearchMode::Semantic) {
        let summary = run_embed(r, embedder.as_ref(), false)?;
        if let Some(reason) = &summary.unavailable {
            eprintln!("folio: warning: embedding provider unavailable: {reason}");
        }
    } else if !has_vectors && mode == SearchMode::Hybrid {
        eprintln!(
            "folio: note: the index has no vectors yet, so this search is lexical; `folio index` computes them"
        );
        return Ok(None);
    }
    Ok(Some(embedder))
}
