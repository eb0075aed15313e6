//! The background embedding of a long-running server (`folio mcp`, `folio lsp`).
//!
//! One [`EmbeddingRunner`] per server: it owns the embedder slot (filled by a
//! background thread, so `initialize` never waits for a model), the shared
//! progress, and at most one pass at a time. [`EmbeddingRunner::start`] is called
//! after every lexical reindex; a call while a pass runs makes the runner go
//! once more when that pass ends, so edits made meanwhile are embedded too.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::Embedder;
use super::pass::{
    EmbedProgress, EmbedProgressSnapshot, EmbedState, EmbedderSlot, spawn_load_and_embed,
};
use super::settings::EmbedSettings;

/// What [`EmbeddingRunner::load_now`] found.
pub enum EmbedderLoad {
    /// The embedding settings were refused (a remote endpoint not allowed, the user's
    /// configuration unreadable): why.
    Refused(String),
    /// No embedder: provider `none` (the reason names who set it), or the configured one
    /// cannot be built (the built-in model is not installed, ...).
    Off {
        /// The configured provider.
        provider: super::settings::ProviderKind,
        /// Why there is no embedder.
        reason: String,
    },
    /// The embedder, built.
    Ready(Arc<dyn Embedder>),
}

/// See the module documentation.
pub struct EmbeddingRunner {
    settings: Option<EmbedSettings>,
    /// Why the settings were refused, when they were.
    refused: Option<String>,
    slot: EmbedderSlot,
    progress: Arc<EmbedProgress>,
    cancel: Arc<AtomicBool>,
    running: Arc<AtomicBool>,
    again: Arc<AtomicBool>,
    start_lock: Mutex<()>,
}

impl std::fmt::Debug for EmbeddingRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddingRunner")
            .field("settings", &self.settings)
            .field("progress", &self.progress)
            .finish_non_exhaustive()
    }
}

impl EmbeddingRunner {
    /// A runner for `settings`; `Err(reason)` (settings that could not be
    /// resolved, e.g. a refused remote endpoint) leaves embeddings off with that
    /// reason, and so does `Ok` of provider `none` once started.
    pub fn new(settings: Result<EmbedSettings, String>) -> EmbeddingRunner {
        let progress = Arc::new(EmbedProgress::new());
        let (settings, refused) = match settings {
            Ok(settings) => (Some(settings), None),
            Err(reason) => {
                progress.set_off(&reason);
                (None, Some(reason))
            }
        };
        EmbeddingRunner {
            settings,
            refused,
            slot: Arc::new(std::sync::OnceLock::new()),
            progress,
            cancel: Arc::new(AtomicBool::new(false)),
            running: Arc::new(AtomicBool::new(false)),
            again: Arc::new(AtomicBool::new(false)),
            start_lock: Mutex::new(()),
        }
    }

    /// The resolved settings, when they could be resolved.
    pub fn settings(&self) -> Option<&EmbedSettings> {
        self.settings.as_ref()
    }

    /// The loaded embedder, once the background thread has built it.
    pub fn embedder(&self) -> Option<Arc<dyn Embedder>> {
        self.slot.get().cloned()
    }

    /// The progress of the running or last pass.
    pub fn snapshot(&self) -> EmbedProgressSnapshot {
        self.progress.snapshot()
    }

    /// Why a search may have no vector leg, in this runner's own terms: embeddings
    /// off (with the reason), the provider unavailable (with its error), or a pass
    /// still running (with its progress); `None` when no pass has started or the last
    /// one finished. Front ends put it in their "semantic search is not available"
    /// messages instead of a guess.
    pub fn not_ready_reason(&self) -> Option<String> {
        let p = self.snapshot();
        let reason = p.reason.as_deref().unwrap_or("no reason given");
        match p.state {
            EmbedState::Off => Some(format!("embeddings are off: {reason}")),
            EmbedState::Unavailable => {
                let reason = reason
                    .strip_prefix("embedding provider unavailable: ")
                    .unwrap_or(reason);
                Some(format!("the embedding provider is unavailable: {reason}"))
            }
            EmbedState::Running => Some(format!(
                "embedding is still running ({} of {} chunk texts embedded)",
                p.done, p.total
            )),
            // Started (or about to be) but the model is not built yet.
            EmbedState::Idle if self.settings.is_some() && self.slot.get().is_none() => {
                Some("the embedding model is loading (in the background)".to_owned())
            }
            EmbedState::Idle | EmbedState::Done => None,
        }
    }

    /// Embeds what the index at `db_path` lacks, on a background thread (loading
    /// the model first if needed). Returns at once; a call while a pass runs
    /// schedules one more pass.
    pub fn start(&self, db_path: PathBuf) {
        let Some(settings) = self.settings.clone() else {
            return;
        };
        let _guard = self.start_lock.lock().unwrap_or_else(|e| e.into_inner());
        if self.running.load(Ordering::SeqCst) {
            self.again.store(true, Ordering::SeqCst);
            return;
        }
        self.running.store(true, Ordering::SeqCst);
        let (slot, progress, cancel, running, again) = (
            Arc::clone(&self.slot),
            Arc::clone(&self.progress),
            Arc::clone(&self.cancel),
            Arc::clone(&self.running),
            Arc::clone(&self.again),
        );
        let spawned = std::thread::Builder::new()
            .name("folio-embed-runner".to_owned())
            .spawn(move || {
                loop {
                    again.store(false, Ordering::SeqCst);
                    let pass = spawn_load_and_embed(
                        db_path.clone(),
                        settings.clone(),
                        Arc::clone(&slot),
                        Arc::clone(&progress),
                        Arc::clone(&cancel),
                    );
                    match pass.map(std::thread::JoinHandle::join) {
                        Ok(Ok(_)) => {}
                        Ok(Err(_)) => progress.set_unavailable(
                            "the embedding pass panicked (this is a bug in folio)",
                        ),
                        Err(err) => progress
                            .set_unavailable(&format!("cannot start the embedding thread: {err}")),
                    }
                    if cancel.load(Ordering::SeqCst) || !again.load(Ordering::SeqCst) {
                        running.store(false, Ordering::SeqCst);
                        // A `start` between the check and the store above found `running`
                        // still set and only raised `again`: go once more for it.
                        if again.swap(false, Ordering::SeqCst)
                            && !cancel.load(Ordering::SeqCst)
                            && !running.swap(true, Ordering::SeqCst)
                        {
                            continue;
                        }
                        return;
                    }
                }
            });
        if let Err(err) = spawned {
            self.running.store(false, Ordering::SeqCst);
            self.progress
                .set_unavailable(&format!("cannot start the embedding thread: {err}"));
        }
    }

    /// The loaded embedder, waiting up to `max` while it is being loaded: returns at once
    /// with `None` when there is nothing to wait for (no settings, provider `none`, or the
    /// runner is off or found the provider unavailable), and with `None` after `max` when
    /// the model is still not built (the caller then searches without it). Checks every
    /// 10 ms.
    pub fn await_embedder(&self, max: std::time::Duration) -> Option<Arc<dyn Embedder>> {
        let deadline = std::time::Instant::now() + max;
        loop {
            if let Some(embedder) = self.embedder() {
                return Some(embedder);
            }
            let waiting = self
                .settings
                .as_ref()
                .is_some_and(|s| s.provider != super::settings::ProviderKind::None)
                && !matches!(
                    self.snapshot().state,
                    EmbedState::Off | EmbedState::Unavailable
                );
            if !waiting || std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Builds the embedder on the calling thread unless it is built already, and keeps
    /// it for searches: for a one-shot front end (`folio index`, `folio search`), which
    /// waits for the model instead of searching without it. Nothing else runs: the
    /// embedding pass is [`EmbeddingRunner::embed_now`].
    pub fn load_now(&self) -> EmbedderLoad {
        if let Some(embedder) = self.embedder() {
            return EmbedderLoad::Ready(embedder);
        }
        let Some(settings) = &self.settings else {
            let reason = self.refused.clone().unwrap_or_default();
            return EmbedderLoad::Refused(reason);
        };
        match super::settings::make_embedder(settings) {
            Ok(Some(embedder)) => EmbedderLoad::Ready(self.slot.get_or_init(|| embedder).clone()),
            Ok(None) => EmbedderLoad::Off {
                provider: settings.provider,
                reason: format!(
                    "provider `none`, set by {}",
                    settings.provider_source.describe()
                ),
            },
            Err(reason) => EmbedderLoad::Off {
                provider: settings.provider,
                reason,
            },
        }
    }

    /// Runs one embedding pass over the index at `db_path` on the calling thread, with
    /// the embedder [`EmbeddingRunner::load_now`] built, reporting to `progress` (whose
    /// listener may drive a progress bar; this runner's own progress is not touched).
    /// With `clear_first`, every stored vector is deleted first, once the pass holds the
    /// embedding lock ([`super::pass::embed_db_after_clearing`]).
    ///
    /// Errors: `None` when no embedder is built; else the pass's database or lock error.
    pub fn embed_now(
        &self,
        db_path: &std::path::Path,
        clear_first: bool,
        progress: &EmbedProgress,
    ) -> Option<Result<super::pass::EmbedSummary, super::pass::EmbedPassError>> {
        let embedder = self.embedder()?;
        let pass = if clear_first {
            super::pass::embed_db_after_clearing
        } else {
            super::pass::embed_db
        };
        Some(pass(db_path, embedder.as_ref(), progress, &self.cancel))
    }

    /// Whether a pass is running or scheduled.
    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::SeqCst)
    }

    /// Asks the running pass to stop between batches (server shutdown).
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::pass::EmbedState;
    use crate::embed::settings::ProviderKind;

    #[test]
    fn refused_settings_and_provider_none_leave_embeddings_off_with_the_reason() {
        let e = EmbeddingRunner::new(Err("the embedding endpoint is not on this machine".into()));
        e.start(PathBuf::from("/nonexistent/index.db"));
        let s = e.snapshot();
        assert_eq!(s.state, EmbedState::Off);
        assert_eq!(
            s.reason.as_deref(),
            Some("the embedding endpoint is not on this machine")
        );
        assert!(e.embedder().is_none());

        let dir = tempfile::tempdir().unwrap();
        let settings = EmbedSettings::resolve(
            &crate::config::EmbedConfig {
                provider: Some(ProviderKind::None),
                ..Default::default()
            },
            &Default::default(),
            false,
        )
        .unwrap();
        let e = EmbeddingRunner::new(Ok(settings));
        // Before the background thread has built (or refused) the embedder.
        assert_eq!(
            e.not_ready_reason().as_deref(),
            Some("the embedding model is loading (in the background)")
        );
        e.start(dir.path().join("index.db"));
        while e.is_running() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let s = e.snapshot();
        assert_eq!(s.state, EmbedState::Off);
        assert_eq!(
            s.reason.as_deref(),
            Some("embedding provider `none` (from the workspace's folio.toml): search is lexical")
        );
        assert_eq!(
            e.not_ready_reason().as_deref(),
            Some(
                "embeddings are off: embedding provider `none` (from the workspace's folio.toml): search is lexical"
            )
        );
    }
}
