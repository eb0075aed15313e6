//! `folio status`: the embedding settings and what the index holds, as text or JSON,
//! without loading a model or calling an endpoint.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use folio_core::embed::settings::{EmbedSettings, ProviderKind};
use folio_core::host::status::{InterruptedWrite, RerankStatus};
use folio_core::search::pipeline::{PipelineOptions, SearchMode};
use folio_core::store::Store;
use folio_core::watch::WatchStatus;

use super::root::resolve_root;
use crate::cli::StatusArgs;
use crate::error::error_chain;

/// Prints the status of the root `args` names.
pub fn run(args: &StatusArgs) -> Result<ExitCode> {
    let (embed, json) = (args.embed, args.json);
    let r = resolve_root(&args.root)?;
    // Never builds a model or calls an endpoint: it reports the settings, whether the built-in
    // models' files are in place (the second one's vocabulary and network are read to
    // check it), and what the index holds.
    let user = folio_core::config::user::UserConfig::load();
    let options = folio_core::host::Options::resolve(
        &r.root,
        &r.config,
        user.as_ref().map_err(String::as_str),
        embed.allow_remote_embeddings,
    );
    let settings = options.embed.map_err(anyhow::Error::msg);
    // For the built-in model: are its files installed and intact (read and hashed, not loaded)?
    let model_error = settings
        .as_ref()
        .ok()
        .and_then(|s| folio_core::embed::settings::check_builtin(s).err());
    // The built-in provider's second model (hybrid search's ensemble leg), when the first is
    // usable: `Some(Ok(model id))` or `Some(Err(why not))`.
    let ensemble = match &settings {
        Ok(s) if s.provider == ProviderKind::Builtin && model_error.is_none() => Some(
            folio_core::embed::settings::load_ensemble()
                .map(|_| folio_core::embed::use_m3::USE_MODEL_ID.to_owned()),
        ),
        _ => None,
    };
    let (ensemble_model, ensemble_missing) = match &ensemble {
        Some(Ok(id)) => (Some(id.as_str()), None),
        Some(Err(why)) => (None, Some(why.as_str())),
        None => (None, None),
    };
    let settings_json = match &settings {
        Ok(s) => serde_json::json!({
            "provider": s.provider, "model": s.model, "endpoint": s.endpoint, "settings_error": null,
            "model_error": model_error,
            "ensemble_model": ensemble_model, "ensemble_missing": ensemble_missing,
        }),
        Err(err) => serde_json::json!({"settings_error": error_chain(err)}),
    };
    let rerank = RerankStatus::of(&folio_core::rerank::setup_of(options.rerank));
    let watch = folio_core::watch::probe(&r.root, &r.config);
    let interrupted: Vec<InterruptedWrite> = folio_core::write::Writer::new(&r.root)
        .interrupted()
        .into_iter()
        .map(InterruptedWrite::of)
        .collect();
    let mut out = std::io::stdout().lock();
    if !r.db.exists() {
        if json {
            writeln!(
                out,
                "{}",
                serde_json::json!({"root": r.root, "db_path": r.db, "indexed": false, "embed": settings_json, "rerank": rerank,
                    "watch": watch, "interrupted_writes": interrupted})
            )?;
        } else {
            writeln!(
                out,
                "root: {}\nindex: none yet (run `folio index`)",
                r.root.display()
            )?;
            write_embed_settings(&mut out, &settings)?;
            if let Some(err) = &model_error {
                writeln!(out, "built-in model: not usable: {err}")?;
            }
            write_ensemble(&mut out, &ensemble)?;
            write_rerank(&mut out, &rerank)?;
            write_watch(&mut out, &watch, &interrupted)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let store =
        Store::open(&r.db).with_context(|| format!("opening the index `{}`", r.db.display()))?;
    // Read the Japanese dictionary if words are in use, so damage inside it shows here
    // (before the counts, which then report the analyser that matches).
    let japanese_fallback = store.lexical().bigrams_reason_checked();
    let st = store.status()?;
    let vs = store.vector_status()?;
    // An index of another folder (`--db`), which index and search refuse.
    let other_root =
        folio_core::index::foreign_index(&r.root, &r.db, store.meta("root")?.as_deref())
            .map(|e| e.to_string());
    // The `[search]` numbers only matter to search, so a bad one fails `folio mcp` and
    // `folio search` but not `folio index`: say so here.
    let search_error = PipelineOptions::for_root(SearchMode::Hybrid, &r.root, &r.config.search)
        .err()
        .map(|e| e.to_string());
    if json {
        let mut embed_json = settings_json;
        embed_json["model_id"] = serde_json::json!(vs.model.as_ref().map(|m| &m.model_id));
        embed_json["dims"] = serde_json::json!(vs.model.as_ref().map(|m| m.dims));
        embed_json["embedded_chunks"] = serde_json::json!(vs.embedded_chunks);
        embed_json["total_chunks"] = serde_json::json!(vs.total_chunks);
        embed_json["vectors"] = serde_json::json!(vs.vectors);
        embed_json["last_unavailable"] = serde_json::json!(vs.last_unavailable);
        writeln!(
            out,
            "{}",
            serde_json::json!({
                "root": r.root, "db_path": r.db, "indexed": true, "documents": st.n_documents,
                "chunks": st.n_chunks, "db_size_bytes": st.db_size_bytes, "schema_version": st.schema_version,
                "lexical_analyser": st.lexical_analyser, "japanese_fallback": japanese_fallback,
                "synonyms_missing": st.synonyms_missing,
                "search_settings_error": search_error, "other_root_error": other_root,
                "embed": embed_json,
                "rerank": rerank,
                "watch": watch,
                "interrupted_writes": interrupted,
            })
        )?;
    } else {
        writeln!(
            out,
            "root: {}\nindex: {}\ndocuments: {}\nchunks: {}\nsize: {} bytes\nschema version: {}",
            r.root.display(),
            r.db.display(),
            st.n_documents,
            st.n_chunks,
            st.db_size_bytes,
            st.schema_version
        )?;
        if let Some(err) = &other_root {
            writeln!(out, "index: error: {err}")?;
        }
        if let Some(err) = &search_error {
            writeln!(out, "search settings: error: {err}")?;
        }
        match &japanese_fallback {
            None => writeln!(out, "lexical analyser: {}", st.lexical_analyser)?,
            Some(why) => writeln!(
                out,
                "lexical analyser: {} (Japanese text is matched on character bigrams: {why})",
                st.lexical_analyser
            )?,
        }
        match &st.synonyms_missing {
            None => writeln!(out, "synonyms: in use (lexical queries are widened)")?,
            Some(why) => writeln!(out, "synonyms: not in use: {why}")?,
        }
        write_embed_settings(&mut out, &settings)?;
        if let Some(err) = &model_error {
            writeln!(out, "built-in model: not usable: {err} (search is lexical)")?;
        }
        match &vs.model {
            Some(m) => writeln!(
                out,
                "embedded: {} of {} chunks ({} vectors, model {}, {} dimensions)",
                vs.embedded_chunks, vs.total_chunks, vs.vectors, m.model_id, m.dims
            )?,
            None => writeln!(out, "embedded: none yet")?,
        }
        if let Some(reason) = &vs.last_unavailable {
            writeln!(out, "last embedding pass stopped early: {reason}")?;
        }
        write_ensemble(&mut out, &ensemble)?;
        write_rerank(&mut out, &rerank)?;
        write_watch(&mut out, &watch, &interrupted)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The lines on how a server follows outside changes, and on writes a killed folio
/// process left unfinished.
fn write_watch(
    out: &mut impl Write,
    watch: &WatchStatus,
    interrupted: &[InterruptedWrite],
) -> Result<()> {
    match (watch.mode.as_str(), watch.poll_interval_ms, &watch.reason) {
        ("native", _, _) => writeln!(
            out,
            "watch: native (a running server sees other programs' changes as they happen)"
        )?,
        (_, Some(ms), Some(why)) => writeln!(out, "watch: poll every {ms} ms ({why})")?,
        (_, Some(ms), None) => {
            writeln!(out, "watch: poll every {ms} ms ([index] watch = \"poll\")")?
        }
        (mode, _, Some(why)) => writeln!(out, "watch: {mode} ({why})")?,
        (mode, _, None) => writeln!(out, "watch: {mode}")?,
    }
    for w in interrupted {
        writeln!(
            out,
            "interrupted write: {}; to finish it, {}",
            w.message, w.finish
        )?;
    }
    Ok(())
}

/// The line about the built-in provider's second model (`ensemble`: its model id or why it
/// cannot be used; `None` for another provider, or when the first model is not usable).
fn write_ensemble(out: &mut impl Write, ensemble: &Option<Result<String, String>>) -> Result<()> {
    match ensemble {
        Some(Ok(id)) => writeln!(out, "ensemble leg: on (second model {id})")?,
        Some(Err(why)) => writeln!(out, "ensemble leg: off: {why}")?,
        None => {}
    }
    Ok(())
}

/// The reranker line of the text status.
fn write_rerank(out: &mut impl Write, rerank: &RerankStatus) -> Result<()> {
    match (&rerank.url, &rerank.reason) {
        (Some(url), _) => {
            let mut line = format!("reranker: {}", rerank.provider.as_deref().unwrap_or(""));
            if let Some(model) = &rerank.model {
                line.push_str(&format!(", model {model}"));
            }
            writeln!(out, "{line} at {url}")?;
        }
        (None, Some(why)) => writeln!(out, "rerank settings: error: {why}")?,
        (None, None) => writeln!(out, "reranker: none")?,
    }
    Ok(())
}

/// The embedding settings line of the text status, or the settings error.
fn write_embed_settings(out: &mut impl Write, settings: &Result<EmbedSettings>) -> Result<()> {
    match settings {
        Ok(s) => {
            let mut line = format!("embedding provider: {}", s.provider.as_str());
            if let Some(model) = &s.model {
                line.push_str(&format!(", model {model}"));
            }
            if let Some(endpoint) = &s.endpoint {
                line.push_str(&format!(" at {endpoint}"));
            }
            writeln!(out, "{line}")?;
        }
        Err(err) => writeln!(out, "embedding settings: error: {}", error_chain(err))?,
    }
    Ok(())
}
