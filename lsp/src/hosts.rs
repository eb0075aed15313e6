//! The core host of each searched workspace folder: `folio/search`, `folio/reindex` and
//! `folio/status` are calls into it, as `kb_search`, `kb_reindex` and `kb_status` are
//! in `folio mcp`. A folder's host opens on the first of those requests (an editor that
//! never searches opens no index and loads no model) and follows the root's changes
//! from then on; the first search starts a pass over the root (core `Host::start_watching`), so a search never
//! reindexes. It reads the editor's open documents from the session in process
//! ([`SessionBuffers`]), so hits in them carry the buffer's text, unsaved edits included.
//!
//! A host is made again when what it was opened from changes: the folder's `folio.toml`
//! or the embedding and rerank settings resolved from it and the user's configuration
//! (both are read at each request, a small file each).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use folio_core::config::user::UserConfig;
use folio_core::host::live::EditorBuffers;
use folio_core::host::{Host, Options};
use folio_core::workspace::Config;

use crate::state::ServerState;

/// Why a server started with `Options::no_embeddings` has no embeddings.
const NO_EMBEDDINGS: &str = "this language server runs without embeddings (Options::no_embeddings)";

/// The hosts of the searched folders, by folder.
#[derive(Default)]
pub(crate) struct Hosts {
    open: Mutex<HashMap<PathBuf, Opened>>,
}

/// A folder's host and what it was opened from.
struct Opened {
    /// The folder's `folio.toml` as it was read (`None`: there was none).
    folio_toml: Option<Vec<u8>>,
    /// The options it was opened with (their embedding and rerank settings).
    options: Options,
    host: Arc<Host>,
}

/// Whether two options resolve to the same host.
fn same_settings(a: &Options, b: &Options) -> bool {
    a.embed == b.embed && a.rerank == b.rerank
}

impl Hosts {
    /// The host of `folder` (a root of the session, with `config`, its `folio.toml`),
    /// opened now when there is none or what it was opened from changed, and whether it
    /// was. A new host watches the root (the caller starts a first pass when it needs
    /// one); one whose embedding settings were refused adds the reason to the problems
    /// shown to the user.
    ///
    /// `no_embeddings` (tests that pin results) turns embeddings off.
    ///
    /// Errors: the folder or its `folio.toml` cannot be used (core `Host::open`).
    pub(crate) fn of(
        &self,
        shared: &ServerState,
        folder: &Path,
        config: &Config,
        endpoint: Option<PathBuf>,
        no_embeddings: bool,
    ) -> anyhow::Result<(Arc<Host>, bool)> {
        let folio_toml = std::fs::read(folder.join("folio.toml")).ok();
        let user = UserConfig::load();
        let user = user.as_ref().map_err(String::as_str);
        let mut options = Options::resolve(folder, config, user, false);
        if no_embeddings {
            options.embed = Err(NO_EMBEDDINGS.to_owned());
        }
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(opened) = open.get(folder)
            && opened.folio_toml == folio_toml
            && same_settings(&opened.options, &options)
        {
            return Ok((Arc::clone(&opened.host), false));
        }
        let editor = SessionBuffers {
            shared: shared.clone(),
            folder: folder.to_path_buf(),
            endpoint: endpoint.unwrap_or_default(),
        };
        let host = Arc::new(Host::open(options.clone())?.with_editor(Arc::new(editor)));
        host.start_watching();
        let problem = options.embed.as_ref().err().filter(|_| !no_embeddings).map(|reason| {
            tracing::warn!(%reason, "embeddings are off");
            format!("folio: {reason}; embeddings are off, so folio/search matches words only until it is fixed")
        });
        open.insert(
            folder.to_path_buf(),
            Opened {
                folio_toml,
                options,
                host: Arc::clone(&host),
            },
        );
        drop(open);
        // The session's lock is taken only once the hosts' is released.
        shared.lock().warnings.extend(problem);
        Ok((host, true))
    }

    /// Closes the hosts of folders that are no longer roots.
    pub(crate) fn retain(&self, folders: &[PathBuf]) {
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|folder, _| folders.contains(folder));
    }
}

/// The editor's open documents under one folder, read from the session (core
/// `EditorBuffers`).
struct SessionBuffers {
    shared: ServerState,
    folder: PathBuf,
    endpoint: PathBuf,
}

impl std::fmt::Debug for SessionBuffers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionBuffers")
            .field("folder", &self.folder)
            .finish_non_exhaustive()
    }
}

impl EditorBuffers for SessionBuffers {
    fn editor(&self) -> String {
        let session = self.shared.lock();
        session
            .client_info
            .as_ref()
            .map_or_else(|| "unknown editor".to_owned(), |(name, _)| name.clone())
    }

    fn endpoint(&self) -> PathBuf {
        self.endpoint.clone()
    }

    fn open_buffer(&self, path: &str) -> Option<(i32, String)> {
        let session = self.shared.lock();
        let (_, version, text) = crate::bridge::open_buffer(&session, &self.folder, path).ok()?;
        Some((version, text.text()))
    }

    fn open_buffers(&self) -> HashMap<String, (i32, String)> {
        let session = self.shared.lock();
        crate::bridge::open_documents(&session, &self.folder)
            .into_iter()
            .filter_map(|doc| {
                let (_, version, text) =
                    crate::bridge::open_buffer(&session, &self.folder, &doc.path).ok()?;
                Some((doc.path, (version, text.text())))
            })
            .collect()
    }
}
