//! `folio status`: the host's status (`kb_status`'s [`StatusOutput`]) of a root, as text
//! or JSON, without loading a model or calling an endpoint.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use folio_core::host::status::{EmbeddingStatus, InterruptedWrite, RerankStatus, StatusOutput};
use folio_core::watch::WatchStatus;

use super::root::{host_error, open_host, resolve_root};
use crate::cli::StatusArgs;

/// Prints the status of the root `args` names.
pub fn run(args: &StatusArgs) -> Result<ExitCode> {
    let r = resolve_root(&args.root)?;
    // A bad `[search]` number is reported, not refused: status is where to read it.
    let host = open_host(&r, args.embed.allow_remote_embeddings, false)?;
    // Never builds a model or calls an endpoint: it reports the settings, whether the
    // built-in models' files are in place (read and hashed, not loaded), and what the
    // index holds; it never creates the index.
    let status = host.status_checked().map_err(host_error)?;
    let mut out = crate::output::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&status)?)?;
    } else {
        write_text(&mut out, &status)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The text report of `s`.
fn write_text(out: &mut impl Write, s: &StatusOutput) -> Result<()> {
    writeln!(out, "root: {}", s.root)?;
    let index = &s.index;
    if !index.exists {
        writeln!(out, "index: none yet (run `folio index`)")?;
    } else {
        writeln!(
            out,
            "index: {}\ndocuments: {}\nchunks: {}\nsize: {} bytes\nschema version: {}",
            s.db_path, index.documents, index.chunks, index.db_size_bytes, index.schema_version
        )?;
        if let Some(err) = &index.other_root_error {
            writeln!(out, "index: error: {err}")?;
        }
        if let Some(err) = &s.search_settings_error {
            writeln!(out, "search settings: error: {err}")?;
        }
        match &index.japanese_fallback {
            None => writeln!(out, "lexical analyser: {}", index.lexical_analyser)?,
            Some(why) => writeln!(
                out,
                "lexical analyser: {} (Japanese text is matched on character bigrams: {why})",
                index.lexical_analyser
            )?,
        }
        match &index.synonyms_missing {
            None => writeln!(out, "synonyms: in use (lexical queries are widened)")?,
            Some(why) => writeln!(out, "synonyms: not in use: {why}")?,
        }
        let left = &s.left_out;
        let (unparsed, no_text, withheld) = (
            left.frontmatter_unparsed.len(),
            left.without_text.len(),
            left.withheld.len(),
        );
        if unparsed + no_text + withheld > 0 {
            writeln!(
                out,
                "left out: frontmatter unparsed {unparsed}, no text {no_text}, not read whole {withheld} (`folio doctor` names them)"
            )?;
        }
    }
    write_embedding(out, &s.embedding, index.exists)?;
    write_rerank(out, &s.rerank)?;
    write_watch(out, &s.watch, &s.interrupted_writes)?;
    Ok(())
}

/// The embedding lines: the settings (or why they were refused), a built-in model that
/// is not usable, what the index holds of vectors (`indexed`: whether there is an index),
/// and the second built-in model.
fn write_embedding(out: &mut impl Write, e: &EmbeddingStatus, indexed: bool) -> Result<()> {
    match &e.provider {
        Some(provider) => {
            let mut line = format!("embedding provider: {provider}");
            if let Some(model) = &e.model_name {
                line.push_str(&format!(", model {model}"));
            }
            if let Some(endpoint) = &e.endpoint {
                line.push_str(&format!(" at {endpoint}"));
            }
            writeln!(out, "{line}")?;
        }
        None => writeln!(
            out,
            "embedding settings: error: {}",
            e.reason.as_deref().unwrap_or("refused")
        )?,
    }
    if e.provider.is_some()
        && e.state == "unavailable"
        && let Some(err) = &e.reason
    {
        let lexical = if indexed { " (search is lexical)" } else { "" };
        writeln!(out, "built-in model: not usable: {err}{lexical}")?;
    }
    if indexed {
        match (&e.model, e.dims) {
            (Some(model), Some(dims)) => writeln!(
                out,
                "embedded: {} of {} chunks ({} vectors, model {model}, {dims} dimensions)",
                e.embedded_chunks, e.total_chunks, e.vectors
            )?,
            _ => writeln!(out, "embedded: none yet")?,
        }
        if let Some(reason) = &e.last_unavailable {
            writeln!(out, "last embedding pass stopped early: {reason}")?;
        }
    }
    match (&e.ensemble_model, &e.ensemble_missing) {
        (Some(id), _) => writeln!(out, "ensemble leg: on (second model {id})")?,
        (None, Some(why)) => writeln!(out, "ensemble leg: off: {why}")?,
        (None, None) => {}
    }
    Ok(())
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
