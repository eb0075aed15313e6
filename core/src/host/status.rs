//! `kb_status` and `kb_reindex`: the one background reindex and what the index holds.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::index::{Changed, IndexSummary, index_changes, index_root, records};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Host, HostError, HostResult};

/// The background reindex: at most one runs at a time.
#[derive(Clone, Debug, Default)]
pub struct ReindexState {
    running: bool,
    force: bool,
    started_at_ms: u64,
    done: usize,
    total: usize,
    /// Another run was asked for while this one ran (a write landed meanwhile).
    rerun: bool,
    /// Whether the running pass is an incremental one over watched changes.
    changes_pass: bool,
    /// Paths the watcher reported changed that no pass has taken yet.
    pub(crate) pending: Changed,
    /// Incremental passes over watched changes since the host opened.
    changes_passes: u64,
    /// Passes over the whole root since the host opened.
    full_passes: u64,
    /// Paths the running pass over watched changes took.
    in_pass: usize,
    last: Option<LastRun>,
    /// What the last pass that completed left out of the index: the files it skipped
    /// and the files whose parser is off (every pass walks the whole root, so either
    /// kind of pass gives both whole).
    pub(crate) walked_out: Option<(Vec<crate::workspace::Skipped>, Vec<String>)>,
}

/// What a pass of [`Host::run_reindex`] covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pass {
    /// The whole root (`force`: every file re-parsed).
    Full { force: bool },
    /// The paths the watcher reported ([`ReindexState::pending`]).
    Changes,
}

/// How long an incremental pass waits for the watcher's reports to stop growing before
/// it starts (a `git checkout` arrives as several debounced batches), and at most.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(200);
const SETTLE_MAX: std::time::Duration = std::time::Duration::from_secs(2);

/// The outcome of the last finished reindex.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LastRun {
    /// True when the run completed.
    pub ok: bool,
    /// When it finished (milliseconds since the Unix epoch).
    pub finished_at_ms: u64,
    /// Wall-clock time of the run in milliseconds.
    pub elapsed_ms: u64,
    /// Markdown files found.
    pub files: usize,
    /// Documents parsed and written.
    pub indexed: usize,
    /// Documents whose content hash matched (not written).
    pub unchanged: usize,
    /// Documents removed from the index.
    pub removed: usize,
    /// Files skipped (too large, binary, symbolic links, text not extracted).
    pub skipped: usize,
    /// Indexed notes whose frontmatter did not parse (`folio index` names them).
    pub frontmatter_unparsed: usize,
    /// The error, when the run failed; or, with `[index].fail_on_frontmatter_error`, that
    /// notes' frontmatter did not parse (the pass completed: `ok` stays true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `full` (the whole root: at start, kb_reindex, `folio index`) or `changes` (only
    /// what the file watcher reported, plus files that appeared or went).
    pub kind: String,
}

/// Progress and last result of indexing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Indexing {
    /// `running` or `idle`.
    pub state: String,
    /// Whether the running pass re-parses everything.
    pub force: bool,
    /// Files read so far by the running pass.
    pub done: usize,
    /// Files the running pass will read.
    pub total: usize,
    /// When the running pass started (milliseconds since the Unix epoch), 0 when idle.
    pub started_at_ms: u64,
    /// The last finished pass, if any.
    pub last: Option<LastRun>,
    /// Paths the file watcher reported changed that are not indexed yet (the running
    /// pass's and the queue's).
    pub pending_changes: usize,
    /// Incremental passes over watched changes since the server started (a burst of
    /// changes, such as a `git checkout` of thousands of files, is one or a few).
    pub changes_passes: u64,
    /// Passes over the whole root since the server started (the one at start,
    /// kb_reindex, `folio/reindex`): a search never runs one.
    pub full_passes: u64,
}

/// What the index holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct IndexCounts {
    /// Indexed documents.
    pub documents: u64,
    /// Indexed chunks.
    pub chunks: u64,
    /// Database size in bytes.
    pub db_size_bytes: u64,
    /// Schema version of the database.
    pub schema_version: u32,
    /// Whether the index database exists; until a first pass builds it, the counts are
    /// 0 and `lexical_analyser` is empty.
    pub exists: bool,
    /// Present when the database records another folder as its root (`--db`): the
    /// error searches and index passes give (core `index::foreign_index`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_root_error: Option<String>,
    /// How the full-text index analyses Japanese, Chinese and Korean text:
    /// `ipadic-words-3` (Japanese words from the IPADIC dictionary, bigrams for the rest)
    /// or `bigrams-2` (character bigrams for all of it).
    pub lexical_analyser: String,
    /// Present when Japanese text is matched on character bigrams instead of words: why
    /// (the dictionary is not installed, not the expected file, or failed to load) and
    /// what restores it. Japanese lexical search is less precise meanwhile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub japanese_fallback: Option<String>,
    /// Present when lexical queries are not widened with synonyms (`電池` also finding
    /// `battery`): why (the synonym dictionary is not installed, has the wrong size or
    /// does not load) and what restores it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synonyms_missing: Option<String>,
}

/// Embeddings: provider, model and the background pass.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct EmbeddingStatus {
    /// `builtin`, `none`, `ollama` or `openai`; absent when the settings were refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// `idle`, `running`, `done`, `unavailable` (the provider failed; see `reason`) or `off`.
    pub state: String,
    /// Model id of the loaded embedder or of the stored vectors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The model name the settings give (`[embed] model`), when they give one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    /// The endpoint of an HTTP provider (`ollama`, `openai`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// Dimensions of the stored vectors, once any are stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dims: Option<usize>,
    /// Stored vectors: one per distinct chunk text (a vector whose text no chunk has any
    /// more stays until the next embedding pass removes it).
    pub vectors: u64,
    /// Why the last embedding pass, in any folio process, stopped early because the
    /// provider was unavailable; absent once a pass completes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_unavailable: Option<String>,
    /// Model id of the second model whose whole-document vectors make hybrid search's
    /// ensemble leg (docs/search.md, "Ensemble leg"), when the loaded embedder carries
    /// one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ensemble_model: Option<String>,
    /// Present when the loaded embedder's second model is not (the built-in provider
    /// without USE-Multilingual v3, or with an unusable copy): why, and what restores it.
    /// Hybrid search runs without its ensemble leg meanwhile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ensemble_missing: Option<String>,
    /// Distinct chunk texts embedded by the running or last pass.
    pub done: u64,
    /// Distinct chunk texts the running or last pass had to embed.
    pub total: u64,
    /// Chunks of the index that have a vector of the stored model.
    pub embedded_chunks: u64,
    /// All chunks of the index.
    pub total_chunks: u64,
    /// Files the provider refused in the last pass (they stay lexical-only).
    pub skipped_files: u64,
    /// Why embeddings are off or unavailable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// While a pass runs and has embedded its first batch: the estimated time left in
    /// milliseconds (the time so far scaled by the text left over the text done, each
    /// text counted up to 2 KiB); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eta_ms: Option<u64>,
}

/// Reranking ([`crate::rerank`]): the configured cross-encoder, or why there is none.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RerankStatus {
    /// `off` (none configured: `rerank: true` answers `NOT_CONFIGURED`), `on` (searches
    /// rerank unless they say `rerank: false`) or `refused` (the settings were refused,
    /// see `reason`; searches fail until they say `rerank: false`).
    pub state: String,
    /// `cohere` or `tei` when `on`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The URL requests go to, when `on`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The model name sent, when one is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Why the settings were refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl RerankStatus {
    /// The status of a [`crate::rerank::RerankSetup`].
    pub fn of(setup: &crate::rerank::RerankSetup) -> RerankStatus {
        let off = RerankStatus {
            state: "off".into(),
            provider: None,
            url: None,
            model: None,
            reason: None,
        };
        match setup {
            Ok(None) => off,
            Ok(Some(r)) => RerankStatus {
                state: "on".into(),
                provider: Some(r.provider().as_str().to_owned()),
                url: Some(r.url().to_owned()),
                model: r.model().map(str::to_owned),
                ..off
            },
            Err(why) => RerankStatus {
                state: "refused".into(),
                reason: Some(why.clone()),
                ..off
            },
        }
    }
}

/// `kb_status` output; also the language server's `folio/status` and
/// `folio status --json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct StatusOutput {
    /// Absolute path of the knowledge base root.
    pub root: String,
    /// Absolute path of the index database.
    pub db_path: String,
    /// Present when the `[search]` numbers of `folio.toml` are refused (a process that
    /// does not search, such as `folio status`, still starts): the error every search
    /// gives until they are fixed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search_settings_error: Option<String>,
    /// Whether writing tools are enabled.
    pub allow_writes: bool,
    /// Search modes available now: `lexical`, plus `semantic` and `hybrid` once the index holds vectors of the loaded model.
    pub search_modes: Vec<String>,
    /// Embedding provider and progress (semantic search).
    pub embedding: EmbeddingStatus,
    /// The reranker of searches, if any.
    pub rerank: RerankStatus,
    /// Index contents.
    pub index: IndexCounts,
    /// Reindex progress and last result.
    pub indexing: Indexing,
    /// How changes made by other programs reach the index (`[index].watch`).
    pub watch: crate::watch::WatchStatus,
    /// What the index leaves out and why (the report of `folio doctor`): files skipped
    /// and files whose parser is off as of the last pass this process ran (empty
    /// before one), the rest as the index holds it now.
    pub left_out: super::doctor::LeftOut,
    /// Multi-file operations (moves) a killed folio writer left unfinished: their links
    /// are half rewritten until a writer finishes them (a server started with writes
    /// allowed does on start; `folio index` does too). Absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub interrupted_writes: Vec<InterruptedWrite>,
}

/// An unfinished multi-file operation, as `kb_status` reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct InterruptedWrite {
    /// What it is and how far it got, in one line.
    pub message: String,
    /// How to finish it.
    pub finish: String,
    /// The operation.
    #[serde(flatten)]
    pub operation: crate::write::Interrupted,
}

/// How to finish an interrupted operation, for a process that cannot itself.
pub const FINISH_INTERRUPTED: &str = "run `folio index` in the root, or start `folio lsp` or \
     `folio mcp --allow-writes` on it: a folio process that can write finishes it on start";

impl InterruptedWrite {
    /// The report of `operation`.
    pub fn of(operation: crate::write::Interrupted) -> InterruptedWrite {
        InterruptedWrite {
            message: operation.describe(),
            finish: FINISH_INTERRUPTED.to_owned(),
            operation,
        }
    }
}

/// `kb_reindex` arguments.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct ReindexArgs {
    /// Re-parse and rewrite every document instead of only changed ones (default false).
    #[serde(default)]
    pub force: bool,
}

/// `kb_reindex` output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ReindexOutput {
    /// True when this call started a new pass; false when it joined the running one.
    pub started: bool,
    /// Progress right now; poll `kb_status` for the result.
    pub indexing: Indexing,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl ReindexState {
    fn view(&self) -> Indexing {
        Indexing {
            state: if self.running { "running" } else { "idle" }.into(),
            force: self.running && self.force,
            done: if self.running { self.done } else { 0 },
            total: if self.running { self.total } else { 0 },
            started_at_ms: if self.running { self.started_at_ms } else { 0 },
            last: self.last.clone(),
            pending_changes: self.progress().pending_changes,
            changes_passes: self.changes_passes,
            full_passes: self.full_passes,
        }
    }

    /// How far the running pass is, and what the watcher reported that is not indexed
    /// yet (the running pass's paths and the queue's).
    fn progress(&self) -> super::search::IndexProgress {
        super::search::IndexProgress {
            done: self.done,
            total: self.total,
            pending_changes: self.pending.len() + self.in_pass,
        }
    }
}

impl Host {
    /// `kb_status`. Reads the index (never creates it) and what this host has loaded.
    pub fn status(&self) -> HostResult<StatusOutput> {
        self.status_with(false)
    }

    /// [`Host::status`] for a process that has not loaded the embedder (`folio
    /// status`), with what can be checked without loading it: whether the built-in
    /// model's files are in place and intact (read and hashed: `state` `unavailable`
    /// with the reason when not), whether its second model loads (`ensemble_model` or
    /// `ensemble_missing`), whether the Japanese dictionary the index uses reads, and,
    /// when this host does not watch the root, how a server would watch it (the watch
    /// is set up and let go: [`crate::watch::probe`]).
    pub fn status_checked(&self) -> HostResult<StatusOutput> {
        self.status_with(true)
    }

    fn status_with(&self, checked: bool) -> HostResult<StatusOutput> {
        self.require_root()?;
        let embedder = self.embedding.embedder();
        // The pass's state before the counts: a pass that ends in between then reads as
        // running (the caller asks again), never as finished beside counts from before it
        // (the counts can take a while: the first status reads the synonym dictionary).
        let indexing = self.reindex.lock().map_err(HostError::internal)?.view();
        let exists = self.db_path.exists();
        let read = exists.then(|| {
            self.with_store(|store| {
                let japanese_fallback = checked
                    .then(|| store.lexical().bigrams_reason_checked())
                    .flatten();
                let recorded = store.meta("root").map_err(HostError::internal)?;
                Ok((
                    store.status().map_err(HostError::internal)?,
                    japanese_fallback,
                    store.vector_status().map_err(HostError::internal)?,
                    crate::search::semantic::vectors_unavailable(store, embedder.as_deref())
                        .map_err(HostError::internal)?,
                    crate::index::foreign_index(&self.root, &self.db_path, recorded.as_deref())
                        .map(|e| e.to_string()),
                ))
            })
        });
        let (index, vectors, unavailable) = match read.transpose()? {
            Some((s, checked_fallback, vectors, unavailable, other_root_error)) => (
                IndexCounts {
                    documents: s.n_documents,
                    chunks: s.n_chunks,
                    db_size_bytes: s.db_size_bytes,
                    schema_version: s.schema_version,
                    exists: true,
                    other_root_error,
                    lexical_analyser: s.lexical_analyser.to_owned(),
                    japanese_fallback: checked_fallback.or(s.japanese_fallback),
                    synonyms_missing: s.synonyms_missing,
                },
                vectors,
                unavailable,
            ),
            None => (
                IndexCounts {
                    documents: 0,
                    chunks: 0,
                    db_size_bytes: 0,
                    schema_version: crate::store::SCHEMA_VERSION,
                    exists: false,
                    other_root_error: None,
                    lexical_analyser: String::new(),
                    japanese_fallback: None,
                    synonyms_missing: None,
                },
                crate::store::VectorStatus::default(),
                Some(String::new()),
            ),
        };
        let mut search_modes = vec!["lexical".to_owned()];
        if unavailable.is_none() {
            search_modes.extend(["semantic".to_owned(), "hybrid".to_owned()]);
        }
        Ok(StatusOutput {
            root: self.root.display().to_string(),
            db_path: self.db_path.display().to_string(),
            search_settings_error: self.search_error.clone(),
            allow_writes: self.allow_writes,
            search_modes,
            embedding: self.embedding_status(embedder.as_deref(), vectors, checked),
            rerank: RerankStatus::of(&self.reranker),
            index,
            indexing,
            left_out: self.left_out()?,
            watch: if checked && !self.is_watching() {
                crate::watch::probe(&self.root, &self.config)
            } else {
                self.watch_status()
            },
            interrupted_writes: self
                .writer
                .interrupted()
                .into_iter()
                .map(InterruptedWrite::of)
                .collect(),
        })
    }

    /// The embedding part of a status: the settings, the loaded embedder (or, when
    /// `checked` and none is loaded, what its files say), the pass's progress and the
    /// stored vectors.
    fn embedding_status(
        &self,
        embedder: Option<&dyn crate::embed::Embedder>,
        vectors: crate::store::VectorStatus,
        checked: bool,
    ) -> EmbeddingStatus {
        let progress = self.embedding.snapshot();
        let settings = self.embedding.settings();
        let mut state = serde_json::to_value(progress.state)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let mut reason = progress.reason;
        // Provider `none` is off from the start, not only once a pass has looked.
        if let Some(settings) = settings
            && settings.provider == crate::embed::settings::ProviderKind::None
            && state == "idle"
        {
            state = "off".to_owned();
            reason = Some(crate::embed::pass::provider_none_reason(settings));
        }
        let (mut ensemble_model, mut ensemble_missing) = (
            embedder
                .and_then(|e| e.ensemble())
                .map(|e| e.model_id().to_owned()),
            embedder
                .and_then(|e| e.ensemble_missing())
                .map(str::to_owned),
        );
        if checked
            && embedder.is_none()
            && let Some(settings) = settings
            && settings.provider == crate::embed::settings::ProviderKind::Builtin
        {
            match crate::embed::settings::check_builtin(settings) {
                Err(why) => {
                    state = "unavailable".to_owned();
                    reason = Some(why);
                }
                Ok(()) => match crate::embed::settings::load_ensemble() {
                    Ok(_) => ensemble_model = Some(crate::embed::use_m3::USE_MODEL_ID.to_owned()),
                    Err(why) => ensemble_missing = Some(why),
                },
            }
        }
        EmbeddingStatus {
            provider: settings.map(|s| s.provider.as_str().to_owned()),
            state,
            model: progress
                .model_id
                .or_else(|| vectors.model.as_ref().map(|m| m.model_id.clone())),
            model_name: settings.and_then(|s| s.model.clone()),
            endpoint: settings.and_then(|s| s.endpoint.clone()),
            dims: vectors.model.as_ref().map(|m| m.dims),
            vectors: vectors.vectors,
            last_unavailable: vectors.last_unavailable,
            ensemble_model,
            ensemble_missing,
            done: progress.done,
            total: progress.total,
            embedded_chunks: vectors.embedded_chunks,
            total_chunks: vectors.total_chunks,
            skipped_files: progress.skipped_files,
            reason,
            eta_ms: progress.eta_ms,
        }
    }

    /// `kb_reindex`: starts a background pass, or joins the running one; returns at once.
    pub fn start_reindex(self: &Arc<Self>, force: bool) -> HostResult<ReindexOutput> {
        let mut state = self.reindex.lock().map_err(HostError::internal)?;
        if state.running {
            // A pass over watched changes reads only what was reported; a pass asked for
            // reads everything, so it follows.
            if state.changes_pass && !state.rerun {
                state.rerun = true;
                state.force = force;
            } else if force && !state.force {
                // The running pass skips unchanged files; a forced pass follows it.
                state.rerun = true;
                state.force = true;
            }
            return Ok(ReindexOutput {
                started: false,
                indexing: state.view(),
            });
        }
        state.running = true;
        state.force = force;
        state.done = 0;
        state.total = 0;
        state.started_at_ms = now_ms();
        let view = state.view();
        drop(state);
        let kb = Arc::clone(self);
        std::thread::Builder::new()
            .name("folio-reindex".into())
            .spawn(move || kb.run_reindex(Pass::Full { force }))
            .map_err(HostError::internal)?;
        Ok(ReindexOutput {
            started: true,
            indexing: view,
        })
    }

    /// Runs a pass on this thread, then any pass requested meanwhile: a full one asked
    /// for, else one over the changes the watcher reported; then starts the background
    /// embedding pass. Returns the first pass's outcome.
    pub(crate) fn run_reindex(&self, pass: Pass) -> Option<LastRun> {
        self.run_passes(pass, None, true).map(|(last, _)| last)
    }

    /// [`Host::run_reindex`] with `report` told each pass's progress (files done, files
    /// in all), and the background embedding pass started at the end only when
    /// `embed_after`. Returns the first pass's outcome and its summary (or error).
    fn run_passes(
        &self,
        mut pass: Pass,
        report: Option<crate::index::ProgressFn<'_>>,
        embed_after: bool,
    ) -> Option<(LastRun, Result<IndexSummary, String>)> {
        let mut first: Option<(LastRun, Result<IndexSummary, String>)> = None;
        loop {
            let changed = match pass {
                // A full pass reads every file: what was reported so far is in it.
                Pass::Full { .. } => {
                    if let Ok(mut s) = self.reindex.lock() {
                        s.pending = Changed::default();
                    }
                    None
                }
                Pass::Changes => Some(self.take_settled_changes()),
            };
            let (last, result) = self.run_pass(pass, changed.as_ref(), report);
            let Ok(mut s) = self.reindex.lock() else {
                return first.or(Some((last, result)));
            };
            let ok = last.ok;
            s.last = Some(last.clone());
            if let Ok(summary) = &result {
                s.walked_out = Some((summary.skipped.clone(), summary.not_enabled.clone()));
            }
            first.get_or_insert((last, result));
            if let Some(changed) = changed.filter(|_| !ok) {
                // Not indexed: tried again with the next pass.
                s.pending.extend(changed);
            }
            if pass == Pass::Changes {
                s.changes_passes += 1;
                s.in_pass = 0;
            } else {
                s.full_passes += 1;
            }
            s.started_at_ms = now_ms();
            if s.rerun {
                s.rerun = false;
                s.changes_pass = false;
                pass = Pass::Full { force: s.force };
                continue;
            }
            if ok && !s.pending.is_empty() {
                s.changes_pass = true;
                s.force = false;
                pass = Pass::Changes;
                continue;
            }
            s.running = false;
            s.changes_pass = false;
            drop(s);
            self.reindex_stopped.notify_all();
            if embed_after {
                self.embedding.start(self.db_path.clone());
            }
            return first;
        }
    }

    /// Runs one index pass on this thread (`changed`: the paths of a [`Pass::Changes`]),
    /// keeping the state's progress and telling `report`; a panic in the indexer is a
    /// failed pass, never a state left "running".
    fn run_pass(
        &self,
        pass: Pass,
        changed: Option<&Changed>,
        report: Option<crate::index::ProgressFn<'_>>,
    ) -> (LastRun, Result<IndexSummary, String>) {
        let state = Arc::clone(&self.reindex);
        let progress = move |done: usize, total: usize| {
            if let Ok(mut s) = state.lock() {
                s.done = done;
                s.total = total;
            }
            if let Some(report) = report {
                report(done, total);
            }
        };
        let started = std::time::Instant::now();
        let result =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match (pass, changed) {
                (Pass::Full { force }, _) => index_root(
                    &self.root,
                    &self.config,
                    &self.db_path,
                    force,
                    Some(&progress),
                ),
                (Pass::Changes, changed) => index_changes(
                    &self.root,
                    &self.config,
                    &self.db_path,
                    changed.unwrap_or(&Changed::default()),
                    Some(&progress),
                ),
            }));
        let kind = match pass {
            Pass::Full { .. } => "full",
            Pass::Changes => "changes",
        };
        let result = match result {
            Ok(Ok(summary)) => {
                tracing::info!(
                    kind,
                    indexed = summary.indexed,
                    unchanged = summary.unchanged,
                    removed = summary.removed,
                    ms = summary.elapsed_ms,
                    "reindex finished"
                );
                Ok(summary)
            }
            Ok(Err(err)) => Err(err.to_string()),
            Err(_) => Err("the indexer panicked".to_owned()),
        };
        let last = match &result {
            Ok(summary) => LastRun {
                ok: true,
                finished_at_ms: now_ms(),
                elapsed_ms: summary.elapsed_ms,
                files: summary.files,
                indexed: summary.indexed,
                unchanged: summary.unchanged,
                removed: summary.removed,
                skipped: summary.skipped.len(),
                frontmatter_unparsed: summary.frontmatter_unparsed.len(),
                error: frontmatter_failure(summary, &self.config),
                kind: kind.to_owned(),
            },
            Err(error) => failed(started, error.clone(), kind),
        };
        (last, result)
    }

    /// Waits until the watcher's reports stop growing (for [`SETTLE`], at most
    /// [`SETTLE_MAX`]), then takes them all.
    fn take_settled_changes(&self) -> Changed {
        let started = std::time::Instant::now();
        let pending = || self.reindex.lock().map(|s| s.pending.len()).unwrap_or(0);
        let mut before = pending();
        while started.elapsed() < SETTLE_MAX {
            std::thread::sleep(SETTLE);
            let now = pending();
            if now == before {
                break;
            }
            before = now;
        }
        self.reindex
            .lock()
            .map(|mut s| {
                let taken = std::mem::take(&mut s.pending);
                s.in_pass = taken.len();
                taken
            })
            .unwrap_or_default()
    }

    /// Queues paths the watcher reported changed, and starts a pass over them unless one
    /// runs (the running pass takes them next).
    pub(crate) fn queue_changes(self: &Arc<Self>, changed: Changed) {
        if changed.is_empty() {
            return;
        }
        let Ok(mut s) = self.reindex.lock() else {
            return;
        };
        s.pending.extend(changed);
        if s.running {
            return;
        }
        s.running = true;
        s.force = false;
        s.changes_pass = true;
        s.done = 0;
        s.total = 0;
        s.started_at_ms = now_ms();
        drop(s);
        let kb = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("folio-reindex".into())
            .spawn(move || kb.run_reindex(Pass::Changes));
        if let Err(e) = spawned {
            tracing::warn!("cannot start an index pass over changed files: {e}");
            if let Ok(mut s) = self.reindex.lock() {
                s.running = false;
                s.changes_pass = false;
            }
            self.reindex_stopped.notify_all();
        }
    }

    /// Waits up to `limit` while changes the watcher reported are not indexed yet;
    /// returns how far indexing is when some still are after that, `None` when the
    /// index holds every reported change.
    pub(crate) fn wait_for_changes(
        &self,
        limit: std::time::Duration,
    ) -> Option<super::search::IndexProgress> {
        let catching_up = |s: &ReindexState| s.running && (s.changes_pass || !s.pending.is_empty());
        let guard = self.reindex.lock().ok()?;
        if !catching_up(&guard) {
            return None;
        }
        let (guard, _) = self
            .reindex_stopped
            .wait_timeout_while(guard, limit, |s| catching_up(s))
            .ok()?;
        catching_up(&guard).then(|| guard.progress())
    }

    /// Marks a pass as running without starting one (tests of joining).
    #[cfg(test)]
    pub(crate) fn pretend_running(&self, running: bool) {
        let mut s = self.reindex.lock().expect("reindex state");
        s.running = running;
        s.rerun = false;
        drop(s);
        self.reindex_stopped.notify_all();
    }

    /// Whether a background pass is running.
    pub(crate) fn reindex_running(&self) -> bool {
        self.reindex.lock().map(|s| s.running).unwrap_or(false)
    }

    /// Waits up to `limit` for the running pass to stop; returns its progress when it
    /// still runs after that, `None` when no pass runs.
    pub(crate) fn wait_for_reindex(
        &self,
        limit: std::time::Duration,
    ) -> Option<super::search::IndexProgress> {
        let guard = self.reindex.lock().ok()?;
        let (guard, _) = self
            .reindex_stopped
            .wait_timeout_while(guard, limit, |s| s.running)
            .ok()?;
        guard.running.then(|| guard.progress())
    }

    /// Runs a pass over the whole root and waits for it (`folio/reindex`, tests); a pass
    /// already running is waited for first, so the pass this runs reads the files as
    /// they are once it starts. The background embedding pass starts after it.
    pub fn reindex_blocking(&self, force: bool) -> HostResult<LastRun> {
        self.begin_blocking_pass(force)?;
        // Its own pass's result, not that of a pass over changes that followed it.
        self.run_passes(Pass::Full { force }, None, true)
            .map(|(last, _)| last)
            .ok_or_else(|| HostError::internal("reindex left no result"))
    }

    /// `folio index`: a pass over the whole root on this thread, as
    /// [`Host::reindex_blocking`], with `report` told its progress (files done, files in
    /// all) and its whole summary returned (the skipped files with their reasons
    /// included). No embedding starts after it: a one-shot front end runs that pass
    /// itself ([`Host::embed_now`]).
    ///
    /// Errors (`INTERNAL`): the pass failed (the index database cannot be written, it
    /// is another folder's index, ...); the message is the indexer's.
    pub fn index_now(
        &self,
        force: bool,
        report: Option<crate::index::ProgressFn<'_>>,
    ) -> HostResult<IndexSummary> {
        self.require_root()?;
        self.begin_blocking_pass(force)?;
        match self.run_passes(Pass::Full { force }, report, false) {
            Some((_, Ok(summary))) => Ok(summary),
            Some((_, Err(error))) => Err(HostError::internal(error)),
            None => Err(HostError::internal("reindex left no result")),
        }
    }

    /// Waits for a running pass to stop, then marks a pass over the whole root as running.
    fn begin_blocking_pass(&self, force: bool) -> HostResult<()> {
        let guard = self.reindex.lock().map_err(HostError::internal)?;
        let mut s = self
            .reindex_stopped
            .wait_while(guard, |s| s.running)
            .map_err(HostError::internal)?;
        s.running = true;
        s.force = force;
        s.started_at_ms = now_ms();
        Ok(())
    }

    /// Writes the index rows of one document after an edit, under the root's write lock
    /// (the caller holds it). Returns whether the index now matches the file.
    ///
    /// A background pass running meanwhile does not undo this: it commits under the same
    /// lock and leaves out every file whose bytes changed since it read them (core
    /// `index::index_root`).
    pub(crate) fn sync_document(&self, path: &str, text: Option<&str>) -> bool {
        self.invalidate(path);
        self.note_own_write(path, text);
        let result = (|| -> Result<(), crate::store::StoreError> {
            let mut store = crate::store::Store::open(&self.db_path)?;
            let mut batch = store.batch()?;
            match text {
                Some(text) => {
                    let (doc, chunks) = records(
                        path,
                        text,
                        text.len() as u64,
                        now_ms() as i64,
                        self.config.index.chunk_budget(),
                        self.is_vault(),
                    );
                    batch.upsert_document(&doc, &chunks)?;
                }
                None => {
                    batch.remove_document(path)?;
                }
            }
            batch.commit()
        })();
        match result {
            Ok(()) => {
                self.embedding.start(self.db_path.clone());
                true
            }
            Err(err) => {
                tracing::warn!(error = %err, "index update after an edit failed");
                false
            }
        }
    }
}

/// A document a write changed, for [`Host::sync_written`].
pub(crate) struct Written<'a> {
    /// KB-relative path.
    pub path: &'a str,
    /// Its text now; `None` when it was removed or moved away.
    pub text: Option<&'a str>,
    /// Index it only while its file still holds `text` (is still gone): for a change
    /// written to disk, which another writer may change again once the lock is released.
    pub checked: bool,
}

impl Host {
    /// Writes the index rows of the documents a multi-file write changed, in one
    /// transaction, after the root's write lock was released, so that other writers do
    /// not wait for it. Returns whether the index now matches every file.
    ///
    /// A document marked `checked` whose file no longer holds the written text when the
    /// transaction runs (another writer changed it after the lock was released) is left
    /// out, and the result is false: that writer indexes its own text, before this
    /// transaction or after it (its index update waits for this one), so the newer text
    /// is never replaced by this older one. The caller has told the live model and the
    /// watcher about the write already ([`Host::invalidate`], [`Host::note_own_write`]).
    pub(crate) fn sync_written(&self, written: &[Written<'_>]) -> bool {
        let chunk_budget = self.config.index.chunk_budget();
        let vault = self.is_vault();
        let rows: Vec<_> = written
            .iter()
            .map(|w| {
                w.text.map(|text| {
                    records(
                        w.path,
                        text,
                        text.len() as u64,
                        now_ms() as i64,
                        chunk_budget,
                        vault,
                    )
                })
            })
            .collect();
        let result = (|| -> Result<bool, crate::store::StoreError> {
            let mut store = crate::store::Store::open(&self.db_path)?;
            let mut batch = store.batch()?;
            let mut all = true;
            for (w, rows) in written.iter().zip(&rows) {
                if w.checked && !self.holds(w.path, w.text) {
                    tracing::info!(
                        path = w.path,
                        "changed by another writer once written; its index rows are left to that writer"
                    );
                    all = false;
                    continue;
                }
                match rows {
                    Some((doc, chunks)) => batch.upsert_document(doc, chunks)?,
                    None => {
                        batch.remove_document(w.path)?;
                    }
                }
            }
            batch.commit()?;
            Ok(all)
        })();
        match result {
            Ok(all) => {
                self.embedding.start(self.db_path.clone());
                all
            }
            Err(err) => {
                tracing::warn!(error = %err, "index update after an edit failed");
                false
            }
        }
    }

    /// Whether the file at KB-relative `path` holds exactly `text` (`None`: there is no
    /// file there).
    fn holds(&self, path: &str, text: Option<&str>) -> bool {
        match crate::write::atomic::read(&self.root, path) {
            Ok(Some(bytes)) => text.is_some_and(|t| t.as_bytes() == bytes),
            Ok(None) => text.is_none(),
            Err(_) => false,
        }
    }
}

fn failed(started: std::time::Instant, error: String, kind: &str) -> LastRun {
    tracing::warn!(%error, "reindex failed");
    LastRun {
        ok: false,
        finished_at_ms: now_ms(),
        elapsed_ms: started.elapsed().as_millis() as u64,
        files: 0,
        indexed: 0,
        unchanged: 0,
        removed: 0,
        skipped: 0,
        frontmatter_unparsed: 0,
        error: Some(error),
        kind: kind.to_owned(),
    }
}

impl Host {
    /// The error of a completed pass under `[index].fail_on_frontmatter_error`: how many
    /// notes' frontmatter did not parse, the first of them named; `None` when none, or
    /// when the setting is off.
    pub fn frontmatter_failure(&self, summary: &IndexSummary) -> Option<String> {
        frontmatter_failure(summary, &self.config)
    }
}

/// The error of a completed pass under `[index].fail_on_frontmatter_error`: how many
/// notes' frontmatter did not parse, the first of them named; `None` when none, or when
/// the setting is off.
fn frontmatter_failure(summary: &IndexSummary, config: &crate::config::Config) -> Option<String> {
    let (first, why) = summary.frontmatter_unparsed.first()?;
    config.index.fail_on_frontmatter_error.then(|| {
        format!(
            "the frontmatter of {} did not parse ([index].fail_on_frontmatter_error), the first `{first}`: {why}",
            match summary.frontmatter_unparsed.len() {
                1 => "1 note".to_string(),
                n => format!("{n} notes"),
            }
        )
    })
}
