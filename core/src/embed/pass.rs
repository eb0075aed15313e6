//! The incremental embedding pass: embed the chunks that lack a vector of the
//! current model, and report progress to whoever asks.
//!
//! The text given to the model for a chunk is its heading path, a blank line,
//! then its Markdown text ([`crate::store::embedding_text`]); vectors are keyed
//! by the hash of that text and the model id, so only new or changed chunks are
//! embedded and identical chunks are embedded once.
//!
//! Failures (docs/configuration.md, `[embed]`): a batch the provider refuses (or answers
//! with an invalid embedding) is retried file by file, so only the offending
//! file is skipped, counted and reported with the reason; an unavailable
//! provider stops the pass, and the reason is kept in the index (`meta`) and in
//! [`EmbedProgress`] so that `folio status` and `kb_status` can say it. Skipped
//! chunks are tried again by the next pass.
//!
//! Servers run the pass in the background with [`spawn_embed_pass`]; lexical
//! search keeps answering meanwhile (every write is a short transaction).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{EmbedError, Embedder};
use crate::store::{PendingChunk, PendingDocument, Store, StoreError, VectorModel};

/// The text [`probe`] embeds.
pub const PROBE_TEXT: &str = "folio embedding probe";

/// A failure that stops the pass other than the provider's (the database).
#[derive(Debug, thiserror::Error)]
pub enum EmbedPassError {
    /// The index database failed.
    #[error("index database: {0}")]
    Store(#[from] StoreError),
    /// The lock file next to the database could not be taken.
    #[error("cannot lock `{path}`: {source}")]
    Lock {
        /// The lock file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// A file whose chunks were not embedded, and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SkippedFile {
    /// KB-relative path.
    pub path: String,
    /// The provider's refusal, e.g. `input refused: HTTP 400 from …: …`.
    pub reason: String,
}

/// What one embedding pass did.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct EmbedSummary {
    /// The embedder's model id.
    pub model_id: String,
    /// Vectors computed and stored (one per distinct chunk text).
    pub embedded: usize,
    /// Whole-document vectors computed and stored (for hybrid search's document leg).
    pub documents_embedded: usize,
    /// Whole-document vectors of the ensemble model ([`Embedder::ensemble`]) computed and
    /// stored (for hybrid search's ensemble leg).
    pub ensemble_documents_embedded: usize,
    /// Chunks that already had a vector of this model when the pass began.
    pub reused: usize,
    /// Vectors deleted because no chunk has their text any more.
    pub removed: usize,
    /// True when the vector table was (re)created for this model: on the
    /// first pass, or when the stored vectors belonged to another model (or
    /// dimension) and were dropped.
    pub recreated: bool,
    /// Files with at least one chunk the provider refused, sorted by path.
    pub skipped_files: Vec<SkippedFile>,
    /// Why the pass stopped early because the provider is unavailable.
    pub unavailable: Option<String>,
    /// True when the pass stopped because it was cancelled.
    pub cancelled: bool,
    /// Wall-clock time in milliseconds.
    pub elapsed_ms: u64,
}

/// The state of the embedding pass, as status reports show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EmbedState {
    /// No pass has run yet.
    Idle,
    /// A pass is running (or waiting for another process's pass to finish).
    Running,
    /// The last pass finished (some files may have been skipped).
    Done,
    /// The provider is unavailable; `reason` says why.
    Unavailable,
    /// Embeddings are off (provider `none`, or the built-in model is not
    /// installed); `reason` says why. Search is lexical only.
    Off,
}

impl EmbedState {
    fn from_u8(v: u8) -> EmbedState {
        match v {
            1 => EmbedState::Running,
            2 => EmbedState::Done,
            3 => EmbedState::Unavailable,
            4 => EmbedState::Off,
            _ => EmbedState::Idle,
        }
    }
}

/// A copy of [`EmbedProgress`] at one moment.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct EmbedProgressSnapshot {
    /// The state.
    pub state: EmbedState,
    /// Distinct chunk texts handled by the running or last pass.
    pub done: u64,
    /// Distinct chunk texts the running or last pass had to embed.
    pub total: u64,
    /// Files skipped by the running or last pass.
    pub skipped_files: u64,
    /// The embedder's model id, once a pass started.
    pub model_id: Option<String>,
    /// Why embeddings are off or unavailable, or the last pass's database error.
    pub reason: Option<String>,
    /// While a pass runs, the estimated time left in milliseconds ([`estimate_eta_ms`]);
    /// `None` before its first batch is done and when no pass runs.
    pub eta_ms: Option<u64>,
}

/// Texts count for at most this many bytes in the work [`estimate_eta_ms`] measures: the
/// built-in model reads at most 512 tokens, about 2 KiB of English.
pub const ETA_TEXT_CAP: usize = 2048;

/// The work of embedding `text`, in the units [`estimate_eta_ms`] takes: its length in
/// bytes up to [`ETA_TEXT_CAP`] (an encoder's time grows with the tokens it reads, and
/// whole documents are truncated), plus 64 for the per-text overhead.
pub fn text_work(text: &str) -> u64 {
    text.len().min(ETA_TEXT_CAP) as u64 + 64
}

/// The time left of a pass, in milliseconds: the `elapsed_ms` the `done` units of work
/// took, scaled to the `total − done` left (work as [`text_work`] counts it). `None` when
/// nothing is done yet (no rate to go by); `Some(0)` when nothing is left.
pub fn estimate_eta_ms(done: u64, total: u64, elapsed_ms: u64) -> Option<u64> {
    if done == 0 {
        return None;
    }
    let left = u128::from(total.saturating_sub(done));
    Some((u128::from(elapsed_ms) * left / u128::from(done)).min(u128::from(u64::MAX)) as u64)
}

type Listener = Box<dyn Fn(&EmbedProgressSnapshot) + Send + Sync>;

/// Progress of the embedding pass, shared between the pass (which writes it)
/// and status readers (`kb_status`, `folio status`, a progress bar).
/// Cheap to read: atomics and one short lock.
pub struct EmbedProgress {
    state: AtomicU8,
    done: AtomicU64,
    total: AtomicU64,
    skipped: AtomicU64,
    work_done: AtomicU64,
    work_total: AtomicU64,
    /// When the running pass began embedding (set with its total).
    started: Mutex<Option<Instant>>,
    text: Mutex<(Option<String>, Option<String>)>,
    listener: Option<Listener>,
}

impl std::fmt::Debug for EmbedProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbedProgress")
            .field("snapshot", &self.snapshot())
            .finish()
    }
}

impl Default for EmbedProgress {
    fn default() -> Self {
        EmbedProgress::new()
    }
}

impl EmbedProgress {
    /// Idle progress.
    pub fn new() -> EmbedProgress {
        EmbedProgress {
            state: AtomicU8::new(0),
            done: AtomicU64::new(0),
            total: AtomicU64::new(0),
            skipped: AtomicU64::new(0),
            work_done: AtomicU64::new(0),
            work_total: AtomicU64::new(0),
            started: Mutex::new(None),
            text: Mutex::new((None, None)),
            listener: None,
        }
    }

    /// Idle progress that also calls `listener` with a snapshot whenever the pass
    /// advances (for a progress bar: `done`, `total` and `eta_ms`).
    pub fn with_listener(
        listener: impl Fn(&EmbedProgressSnapshot) + Send + Sync + 'static,
    ) -> EmbedProgress {
        EmbedProgress {
            listener: Some(Box::new(listener)),
            ..EmbedProgress::new()
        }
    }

    /// The current state.
    pub fn snapshot(&self) -> EmbedProgressSnapshot {
        let (model_id, reason) = self.text.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let state = EmbedState::from_u8(self.state.load(Ordering::SeqCst));
        let started = *self.started.lock().unwrap_or_else(|e| e.into_inner());
        let eta_ms = match (state, started) {
            (EmbedState::Running, Some(started)) => estimate_eta_ms(
                self.work_done.load(Ordering::SeqCst),
                self.work_total.load(Ordering::SeqCst),
                started.elapsed().as_millis() as u64,
            ),
            _ => None,
        };
        EmbedProgressSnapshot {
            state,
            done: self.done.load(Ordering::SeqCst),
            total: self.total.load(Ordering::SeqCst),
            skipped_files: self.skipped.load(Ordering::SeqCst),
            model_id,
            reason,
            eta_ms,
        }
    }

    /// Records that embeddings are off, and why (provider `none`, or
    /// [`super::settings::make_embedder`]'s error).
    pub fn set_off(&self, reason: &str) {
        self.set_text(None, Some(reason.to_owned()));
        self.state.store(EmbedState::Off as u8, Ordering::SeqCst);
    }

    /// Records that the provider is unavailable, and why.
    pub fn set_unavailable(&self, reason: &str) {
        self.text.lock().unwrap_or_else(|e| e.into_inner()).1 = Some(reason.to_owned());
        self.state
            .store(EmbedState::Unavailable as u8, Ordering::SeqCst);
    }

    fn set_text(&self, model_id: Option<String>, reason: Option<String>) {
        *self.text.lock().unwrap_or_else(|e| e.into_inner()) = (model_id, reason);
    }

    fn begin(&self, model_id: &str) {
        self.set_text(Some(model_id.to_owned()), None);
        self.done.store(0, Ordering::SeqCst);
        self.total.store(0, Ordering::SeqCst);
        self.skipped.store(0, Ordering::SeqCst);
        self.work_done.store(0, Ordering::SeqCst);
        self.work_total.store(0, Ordering::SeqCst);
        *self.started.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.state
            .store(EmbedState::Running as u8, Ordering::SeqCst);
    }

    /// The pass has `total` texts to embed, `work` units of work ([`text_work`]); the
    /// clock of the estimate starts now.
    fn set_total(&self, total: u64, work: u64) {
        self.total.store(total, Ordering::SeqCst);
        self.work_total.store(work, Ordering::SeqCst);
        *self.started.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        self.notify();
    }

    fn advance(&self, n: u64, work: u64, skipped_files: u64) {
        self.done.fetch_add(n, Ordering::SeqCst);
        self.work_done.fetch_add(work, Ordering::SeqCst);
        self.skipped.store(skipped_files, Ordering::SeqCst);
        self.notify();
    }

    fn notify(&self) {
        if let Some(listener) = &self.listener {
            listener(&self.snapshot());
        }
    }

    fn finish(&self, result: &Result<EmbedSummary, EmbedPassError>) {
        match result {
            Ok(summary) => {
                self.skipped
                    .store(summary.skipped_files.len() as u64, Ordering::SeqCst);
                match &summary.unavailable {
                    Some(reason) => self.set_unavailable(reason),
                    None => self.state.store(EmbedState::Done as u8, Ordering::SeqCst),
                }
            }
            Err(err) => self.fail(&err.to_string()),
        }
    }

    fn fail(&self, reason: &str) {
        self.text.lock().unwrap_or_else(|e| e.into_inner()).1 = Some(reason.to_owned());
        self.state.store(EmbedState::Done as u8, Ordering::SeqCst);
    }
}

/// Embeds one short text ([`PROBE_TEXT`]) to check that the provider answers,
/// and returns the dimension of its vectors.
///
/// `folio index --force` calls this before it changes anything.
/// Errors: the provider's error; [`EmbedError::Invalid`] when the vector is
/// empty or its dimension differs from [`Embedder::dimensions`].
pub fn probe(embedder: &dyn Embedder) -> Result<usize, EmbedError> {
    let vectors = embedder.embed_passages(&[PROBE_TEXT])?;
    let [vector] = vectors.as_slice() else {
        return Err(EmbedError::Invalid(format!(
            "the probe returned {} vectors for 1 input",
            vectors.len()
        )));
    };
    let known = embedder.dimensions();
    if vector.is_empty() || (known != 0 && known != vector.len()) {
        return Err(EmbedError::Invalid(format!(
            "the probe returned a vector of {} dimensions; the embedder declares {known}",
            vector.len()
        )));
    }
    Ok(vector.len())
}

/// Embeds `items` in one call and checks the answer's shape.
fn embed_items(
    embedder: &dyn Embedder,
    items: &[&PendingChunk],
    dims: usize,
) -> Result<Vec<Vec<f32>>, EmbedError> {
    let texts: Vec<&str> = items.iter().map(|p| p.text.as_str()).collect();
    embed_checked(embedder, &texts, dims)
}

/// Embeds `texts` as passages and checks the answer: one vector per text, each of
/// `dims` finite values ([`EmbedError::Invalid`] otherwise).
fn embed_checked(
    embedder: &dyn Embedder,
    texts: &[&str],
    dims: usize,
) -> Result<Vec<Vec<f32>>, EmbedError> {
    let vectors = embedder.embed_passages(texts)?;
    if vectors.len() != texts.len() {
        return Err(EmbedError::Invalid(format!(
            "{} vectors for {} inputs",
            vectors.len(),
            texts.len()
        )));
    }
    if let Some(v) = vectors
        .iter()
        .find(|v| v.len() != dims || v.iter().any(|x| !x.is_finite()))
    {
        return Err(EmbedError::Invalid(format!(
            "a vector of {} dimensions (expected {dims}) or with a non-finite value",
            v.len()
        )));
    }
    Ok(vectors)
}

/// Embeds every chunk of the index that lacks a vector of `embedder`'s model.
///
/// Steps: delete orphan vectors; list the distinct chunk texts lacking a vector;
/// when there are any, learn the dimension (from [`Embedder::dimensions`], else
/// a [`probe`]), make the store hold this model's vectors (dropping another
/// model's, see [`Store::ensure_vector_model`]), then embed in batches of
/// [`Embedder::batch_size`], storing each batch in its own short transaction.
/// `cancel` is checked between batches. A pass with nothing to embed makes no
/// provider call and writes nothing.
///
/// Provider failures do not make this an error: they are in the summary.
/// Errors: only the database's.
pub fn embed_pending(
    store: &mut Store,
    embedder: &dyn Embedder,
    progress: &EmbedProgress,
    cancel: &AtomicBool,
) -> Result<EmbedSummary, EmbedPassError> {
    progress.begin(embedder.model_id());
    let result = run_pass(store, embedder, progress, cancel);
    progress.finish(&result);
    result
}

fn run_pass(
    store: &mut Store,
    embedder: &dyn Embedder,
    progress: &EmbedProgress,
    cancel: &AtomicBool,
) -> Result<EmbedSummary, EmbedPassError> {
    let started = Instant::now();
    let model_id = embedder.model_id().to_owned();
    let mut summary = EmbedSummary {
        model_id: model_id.clone(),
        ..EmbedSummary::default()
    };
    summary.removed = store.delete_orphan_vectors()?;
    store.delete_orphan_document_vectors()?;
    let mut pending = store.chunks_lacking_vectors(&model_id)?;
    let mut pending_docs = store.documents_lacking_vectors(&model_id)?;
    let ensemble = embedder.ensemble();
    let pending_ensemble = match ensemble {
        Some(e) => {
            store.delete_stale_ensemble_vectors(e.model_id())?;
            store.documents_lacking_ensemble_vectors(e.model_id())?
        }
        None => Vec::new(),
    };
    let stored = store.vector_model()?;
    let reused_now = |store: &Store| -> Result<usize, StoreError> {
        let status = store.vector_status()?;
        Ok(match &status.model {
            Some(m) if m.model_id == model_id => status.embedded_chunks as usize,
            _ => 0,
        })
    };
    summary.reused = reused_now(store)?;
    if pending.is_empty() && pending_docs.is_empty() && pending_ensemble.is_empty() {
        store.record_embed_unavailable(None)?;
        summary.elapsed_ms = started.elapsed().as_millis() as u64;
        return Ok(summary);
    }
    let known = embedder.dimensions();
    let dims = if known > 0 {
        known
    } else {
        match probe(embedder) {
            Ok(dims) => dims,
            Err(err) => {
                let reason = err.to_string();
                store.record_embed_unavailable(Some(&reason))?;
                summary.unavailable = Some(reason);
                summary.elapsed_ms = started.elapsed().as_millis() as u64;
                return Ok(summary);
            }
        }
    };
    let model = VectorModel {
        model_id: model_id.clone(),
        dims,
    };
    summary.recreated = store.ensure_vector_model(&model)?;
    if summary.recreated && stored.as_ref().is_some_and(|m| m.model_id == model_id) {
        // Same id, other dimension: this model's vectors were dropped too.
        pending = store.chunks_lacking_vectors(&model_id)?;
        summary.reused = reused_now(store)?;
    }
    if summary.recreated {
        pending_docs = store.documents_lacking_vectors(&model_id)?;
    }
    let work = pending.iter().map(|p| text_work(&p.text)).sum::<u64>()
        + pending_docs.iter().map(|d| text_work(&d.text)).sum::<u64>()
        + pending_ensemble
            .iter()
            .map(|d| text_work(&d.text))
            .sum::<u64>();
    progress.set_total(
        (pending.len() + pending_docs.len() + pending_ensemble.len()) as u64,
        work,
    );

    let mut skipped_paths: HashSet<String> = HashSet::new();
    let batch_size = embedder.batch_size().max(1);
    'batches: for batch in pending.chunks(batch_size) {
        if cancel.load(Ordering::SeqCst) {
            summary.cancelled = true;
            break;
        }
        let items: Vec<&PendingChunk> = batch.iter().collect();
        match embed_items(embedder, &items, dims) {
            Ok(vectors) => {
                summary.embedded += store_vectors(store, &model_id, &items, vectors)?;
            }
            Err(EmbedError::Unavailable(why)) => {
                summary.unavailable = Some(EmbedError::Unavailable(why).to_string());
                break;
            }
            Err(_) => {
                // Retry file by file (by the first file holding each text), so
                // that only the file with the refused input is skipped.
                let mut groups: Vec<(&str, Vec<&PendingChunk>)> = Vec::new();
                for item in batch {
                    let owner = item.paths[0].as_str();
                    match groups.iter_mut().find(|(p, _)| *p == owner) {
                        Some((_, group)) => group.push(item),
                        None => groups.push((owner, vec![item])),
                    }
                }
                for (_, group) in groups {
                    match embed_items(embedder, &group, dims) {
                        Ok(vectors) => {
                            summary.embedded += store_vectors(store, &model_id, &group, vectors)?
                        }
                        Err(EmbedError::Unavailable(why)) => {
                            summary.unavailable = Some(EmbedError::Unavailable(why).to_string());
                            break 'batches;
                        }
                        Err(err) => {
                            let reason = err.to_string();
                            for path in group.iter().flat_map(|item| item.paths.iter()) {
                                if skipped_paths.insert(path.clone()) {
                                    summary.skipped_files.push(SkippedFile {
                                        path: path.clone(),
                                        reason: reason.clone(),
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
        let work = batch.iter().map(|p| text_work(&p.text)).sum();
        progress.advance(batch.len() as u64, work, summary.skipped_files.len() as u64);
    }
    // Whole-document vectors (the document leg of hybrid search), after the chunks.
    if summary.unavailable.is_none() && !summary.cancelled {
        for batch in pending_docs.chunks(batch_size) {
            if cancel.load(Ordering::SeqCst) {
                summary.cancelled = true;
                break;
            }
            // A refused document keeps its chunk vectors only (its file is reported when
            // its chunks are refused).
            let (stored, unavailable) = embed_documents(embedder, batch, dims, |rows| {
                store.insert_document_vectors(&model_id, rows)
            })?;
            summary.documents_embedded += stored;
            if unavailable.is_some() {
                summary.unavailable = unavailable;
                break;
            }
            let work = batch.iter().map(|d| text_work(&d.text)).sum();
            progress.advance(batch.len() as u64, work, summary.skipped_files.len() as u64);
        }
    }
    // The ensemble model's whole-document vectors (the ensemble leg), last.
    if let Some(ensemble) = ensemble.filter(|_| summary.unavailable.is_none() && !summary.cancelled)
    {
        summary.ensemble_documents_embedded = embed_ensemble(
            store,
            ensemble,
            &pending_ensemble,
            progress,
            cancel,
            &mut summary,
        )?;
    }
    summary.skipped_files.sort_by(|a, b| a.path.cmp(&b.path));
    store.record_embed_unavailable(summary.unavailable.as_deref())?;
    summary.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(summary)
}

/// Embeds `pending` documents with the ensemble model and stores their vectors; returns
/// how many were stored. A refused batch is retried document by document and a refused
/// document goes without (the ensemble leg then does not rank it). When the model fails
/// otherwise the pass goes on without it: the ensemble leg is an addition, and the main
/// model's vectors are whole.
///
/// Errors: only the database's.
fn embed_ensemble(
    store: &mut Store,
    ensemble: &dyn Embedder,
    pending: &[PendingDocument],
    progress: &EmbedProgress,
    cancel: &AtomicBool,
    summary: &mut EmbedSummary,
) -> Result<usize, StoreError> {
    let model_id = ensemble.model_id().to_owned();
    let dims = ensemble.dimensions();
    let mut stored = 0;
    for batch in pending.chunks(ensemble.batch_size().max(1)) {
        if cancel.load(Ordering::SeqCst) {
            summary.cancelled = true;
            break;
        }
        let (n, unavailable) = embed_documents(ensemble, batch, dims, |rows| {
            store.insert_ensemble_vectors(&model_id, rows)
        })?;
        stored += n;
        if let Some(why) = unavailable {
            tracing::warn!(%why, "the ensemble model failed; its leg stays incomplete");
            break;
        }
        let work = batch.iter().map(|d| text_work(&d.text)).sum();
        progress.advance(batch.len() as u64, work, summary.skipped_files.len() as u64);
    }
    Ok(stored)
}

/// Embeds the whole-document texts of `batch` with `embedder` and hands each embedded
/// group's `(source hash, vector)` rows to `store_rows`; a refused batch is retried
/// document by document, and a refused document goes without a vector. Returns the
/// rows stored and, when the provider became unavailable (which stops the batch), the
/// reason as [`EmbedError::Unavailable`] words it.
///
/// Errors: only `store_rows`'s.
fn embed_documents(
    embedder: &dyn Embedder,
    batch: &[PendingDocument],
    dims: usize,
    mut store_rows: impl FnMut(&[(String, Vec<f32>)]) -> Result<usize, StoreError>,
) -> Result<(usize, Option<String>), StoreError> {
    let mut stored = 0;
    let mut groups: Vec<&[PendingDocument]> = vec![batch];
    let mut i = 0;
    while i < groups.len() {
        let group = groups[i];
        i += 1;
        let texts: Vec<&str> = group.iter().map(|d| d.text.as_str()).collect();
        match embed_checked(embedder, &texts, dims) {
            Ok(vectors) => {
                let rows: Vec<(String, Vec<f32>)> = group
                    .iter()
                    .map(|d| d.source_hash.clone())
                    .zip(vectors)
                    .collect();
                stored += store_rows(&rows)?;
            }
            Err(e @ EmbedError::Unavailable(_)) => return Ok((stored, Some(e.to_string()))),
            Err(_) if group.len() > 1 => groups.extend(group.chunks(1)),
            Err(err) => {
                // Tried again by the next pass, as the document still lacks a vector.
                tracing::warn!(
                    model = embedder.model_id(),
                    path = group[0].path.as_str(),
                    %err,
                    "no whole-document vector for this document"
                );
            }
        }
    }
    Ok((stored, None))
}

fn store_vectors(
    store: &mut Store,
    model_id: &str,
    items: &[&PendingChunk],
    vectors: Vec<Vec<f32>>,
) -> Result<usize, StoreError> {
    let rows: Vec<(String, Vec<f32>)> = items
        .iter()
        .map(|p| p.content_hash.clone())
        .zip(vectors)
        .collect();
    store.insert_vectors(model_id, &rows)
}

/// Runs [`embed_pending`] on the index at `db_path`, one pass per database at
/// a time: a pass already running (in this or another process) is waited for,
/// and then this one usually finds nothing left to do. The lock file is
/// `<db_path without extension>.embed.lock`. `cancel` also ends the wait.
pub fn embed_db(
    db_path: &Path,
    embedder: &dyn Embedder,
    progress: &EmbedProgress,
    cancel: &AtomicBool,
) -> Result<EmbedSummary, EmbedPassError> {
    embed_db_locked(db_path, embedder, progress, cancel, false)
}

/// [`embed_db`] after deleting every stored vector ([`Store::clear_vectors`]), which
/// happens once this process holds the pass's lock: a rebuild (`folio index --force`)
/// never pulls the vectors from under a pass that another process is running (that
/// pass's next batch found "vectors of no model" and failed). So every chunk and
/// document is embedded again by this pass.
///
/// Errors: as [`embed_db`]; the vectors cannot be deleted.
pub fn embed_db_after_clearing(
    db_path: &Path,
    embedder: &dyn Embedder,
    progress: &EmbedProgress,
    cancel: &AtomicBool,
) -> Result<EmbedSummary, EmbedPassError> {
    embed_db_locked(db_path, embedder, progress, cancel, true)
}

/// [`embed_db`], deleting every stored vector first when `clear` is set.
fn embed_db_locked(
    db_path: &Path,
    embedder: &dyn Embedder,
    progress: &EmbedProgress,
    cancel: &AtomicBool,
    clear: bool,
) -> Result<EmbedSummary, EmbedPassError> {
    progress.begin(embedder.model_id());
    let lock_path = db_path.with_extension("embed.lock");
    let lock_err = |source| EmbedPassError::Lock {
        path: lock_path.display().to_string(),
        source,
    };
    if let Some(parent) = db_path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(lock_err)?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(lock_err)?;
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(std::fs::TryLockError::WouldBlock) => {
                if cancel.load(Ordering::SeqCst) {
                    let summary = EmbedSummary {
                        model_id: embedder.model_id().to_owned(),
                        cancelled: true,
                        ..EmbedSummary::default()
                    };
                    let result = Ok(summary);
                    progress.finish(&result);
                    return result;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(std::fs::TryLockError::Error(err)) => return Err(lock_err(err)),
        }
    }
    let opened = Store::open(db_path).and_then(|mut store| {
        if clear {
            store.clear_vectors()?;
        }
        Ok(store)
    });
    let mut store = match opened {
        Ok(store) => store,
        Err(err) => {
            let err = EmbedPassError::from(err);
            progress.fail(&err.to_string());
            return Err(err);
        }
    };
    let result = embed_pending(&mut store, embedder, progress, cancel);
    drop(file);
    result
}

/// Starts [`embed_db`] on a new thread named `folio-embed` and returns its
/// handle; `progress` is updated as it runs, and setting `cancel` stops it
/// between batches. For servers: call it after each (re)index; lexical search
/// answers meanwhile.
///
/// Errors: the thread could not be spawned.
pub fn spawn_embed_pass(
    db_path: PathBuf,
    embedder: Arc<dyn Embedder>,
    progress: Arc<EmbedProgress>,
    cancel: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<Result<EmbedSummary, EmbedPassError>>> {
    std::thread::Builder::new()
        .name("folio-embed".to_owned())
        .spawn(move || embed_db(&db_path, embedder.as_ref(), &progress, &cancel))
}

/// Where a background loader puts the embedder once it is built, so that
/// search can embed queries as soon as the model is ready (before the pass ends).
pub type EmbedderSlot = Arc<std::sync::OnceLock<Arc<dyn Embedder>>>;

/// Why embeddings are off with provider `none`, naming who set it: what `kb_status` and
/// `folio status` say.
pub fn provider_none_reason(settings: &super::settings::EmbedSettings) -> String {
    format!(
        "embedding provider `none` (from {}): search is lexical",
        settings.provider_source.describe()
    )
}

/// For servers: on one new thread named `folio-embed`, builds the embedder
/// that `settings` describe ([`super::settings::make_embedder`], which may load
/// a model — never on the thread answering `initialize`), puts it in `slot`,
/// then runs [`embed_db`] on `db_path`.
///
/// When there is no embedder (provider `none`, or it cannot be built),
/// `progress` is set to [`EmbedState::Off`] with the reason and the thread ends
/// with `None`. When `slot` already holds an embedder (a later reindex), that
/// one is used and nothing is loaded again. The thread returns the pass's
/// summary; a database error is logged and recorded in `progress`.
///
/// Errors: the thread could not be spawned.
pub fn spawn_load_and_embed(
    db_path: PathBuf,
    settings: super::settings::EmbedSettings,
    slot: EmbedderSlot,
    progress: Arc<EmbedProgress>,
    cancel: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<Option<EmbedSummary>>> {
    std::thread::Builder::new()
        .name("folio-embed".to_owned())
        .spawn(move || {
            let embedder = match slot.get() {
                Some(embedder) => embedder.clone(),
                None => match super::settings::make_embedder(&settings) {
                    Ok(Some(embedder)) => slot.get_or_init(|| embedder).clone(),
                    Ok(None) => {
                        progress.set_off(&provider_none_reason(&settings));
                        return None;
                    }
                    Err(reason) => {
                        progress.set_off(&reason);
                        return None;
                    }
                },
            };
            match embed_db(&db_path, embedder.as_ref(), &progress, &cancel) {
                Ok(summary) => Some(summary),
                Err(err) => {
                    tracing::warn!(%err, "embedding pass failed");
                    None
                }
            }
        })
}

#[cfg(test)]
mod tests;
