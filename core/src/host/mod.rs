//! The host: the one entry point that owns a knowledge base root (its files and the
//! editors' buffers of them, the live model, the index, the writer, the embedder), and
//! every operation the front ends offer, as plain synchronous methods with serde request
//! and result types.
//!
//! The front ends are adapters: `folio mcp` runs a method on a blocking thread and turns
//! its result or [`HostError`] into a tool result; `folio lsp` and the CLI do the same
//! with their own wire. Every path argument goes through the core path policy before any
//! disk access; every write goes through [`crate::write`].

pub mod best_practice;
pub mod book;
pub mod doctor;
pub mod edit;
pub mod embedding;
pub mod error;
pub mod extracted;
pub mod files;
pub mod images;
pub mod knowledge;
pub mod links;
pub mod live;
pub mod model;
pub mod read;
pub mod registry;
pub mod resources;
pub mod schema;
pub mod search;
pub mod similarity;
pub mod status;
pub mod watch;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Condvar, Mutex};

use crate::config::user::UserConfig;
use crate::index::default_db_path;
use crate::store::Store;
pub use error::{ErrorCode, HostError, HostResult};
pub use schema::portable_schema;

use crate::path_policy::{check_syntax, resolve_existing};
use crate::workspace::{Config, SkipReason, WorkspaceError, is_markdown, read_markdown_in};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// How a host is opened.
#[derive(Clone, Debug)]
pub struct Options {
    /// The knowledge base root.
    pub root: PathBuf,
    /// The index database (default: `<root>/.folio/index.db`).
    pub db: Option<PathBuf>,
    /// Allow writing tools (patch, tables, create, move, delete).
    pub allow_writes: bool,
    /// Resolved embedding settings (`crate::embed::settings::EmbedSettings::resolve`),
    /// or why there are none; embeddings are then off with that reason.
    pub embed: Result<crate::embed::settings::EmbedSettings, String>,
    /// Resolved rerank settings (`crate::rerank::RerankSettings::resolve`; `None`: no
    /// reranker configured), or why they were refused; searches then say why
    /// (`crate::rerank::select`).
    pub rerank: Result<Option<crate::rerank::RerankSettings>, String>,
    /// Test-only download allowances for `kb_save_image` (see [`crate::fetch`]); the
    /// default allows none. Only the `folio` binary's environment sets them.
    pub fetch: crate::fetch::TestAllowances,
}

impl Options {
    /// The options of `root` with its embedding and rerank settings resolved from its
    /// `folio.toml` (`config`) under the user's configuration (`user`; `Err` is why that
    /// file could not be read, which leaves embeddings off with that reason, and a
    /// reranker the workspace names refused with it). This is the one place a front end
    /// resolves them ([`crate::embed::settings::EmbedSettings::resolve`],
    /// [`crate::rerank::RerankSettings::resolve`]). The database is the root's default,
    /// writes are off and no test download is allowed; callers set those fields.
    pub fn resolve(
        root: &Path,
        config: &Config,
        user: Result<&UserConfig, &str>,
        allow_remote_embeddings: bool,
    ) -> Options {
        let (embed, rerank) = match user {
            Ok(user) => (
                crate::embed::settings::EmbedSettings::resolve(
                    &config.embed,
                    &user.embed,
                    allow_remote_embeddings,
                ),
                crate::rerank::RerankSettings::resolve(&config.rerank, &user.rerank),
            ),
            Err(why) => (
                Err(why.to_owned()),
                if config.rerank == crate::config::RerankConfig::default() {
                    Ok(None)
                } else {
                    Err(why.to_owned())
                },
            ),
        };
        Options {
            root: root.to_path_buf(),
            db: None,
            allow_writes: false,
            embed,
            rerank,
            fetch: crate::fetch::TestAllowances::default(),
        }
    }
}

/// The one entry point over a knowledge base root: its files, its live model, its index,
/// its writer and its embedder. Every front end's operation is a method here.
#[derive(Debug)]
pub struct Host {
    root: PathBuf,
    config: Config,
    /// Why the `[search]` numbers are refused, for a host opened without checking them
    /// ([`Host::open_for_indexing`]).
    search_error: Option<String>,
    db_path: PathBuf,
    allow_writes: bool,
    reindex: Arc<Mutex<status::ReindexState>>,
    /// Signalled (with `reindex`'s lock) whenever a background reindex stops running.
    reindex_stopped: Condvar,
    /// Set once the index holds a finished pass over this root (its `root` meta entry
    /// names it); until then a search waits for the first pass ([`search::FIRST_INDEX_WAIT`]).
    root_indexed: AtomicBool,
    /// How long a search on a root with no finished pass waits for the running one.
    first_index_wait: std::time::Duration,
    /// Serialises writes across every folio process on this root and checks each file
    /// against what its edit was planned on (core `write`).
    writer: crate::write::Writer,
    /// A connection kept open for reads (search, status, catalog).
    read_store: Mutex<Option<Store>>,
    /// The parsed workspace, for links and moves.
    model: Mutex<Option<model::Model>>,
    /// Where editors' `folio lsp` bridge endpoints are (core `bridge::base_dir`).
    bridge_dir: PathBuf,
    /// How long a bridge call may take ([`live::BRIDGE_TIMEOUT`]).
    bridge_timeout: std::time::Duration,
    /// The embedder and the background embedding pass.
    pub(crate) embedding: crate::embed::runner::EmbeddingRunner,
    /// The reranker of searches, or why there is none.
    reranker: crate::rerank::RerankSetup,
    /// Downloads for `kb_save_image`, or why the test allowances could not be used.
    fetcher: Result<crate::fetch::Fetcher, String>,
    /// Where `private` skills, units and their ledger live (outside the knowledge base).
    private_dir: PathBuf,
    /// The writer of the private folder.
    private_writer: crate::write::Writer,
    /// What `visibility: network` means here: nothing, this host is the registry, or
    /// a registry elsewhere ([`registry::KnowledgeNetwork`]).
    network: registry::KnowledgeNetwork,
    /// The file watcher over the root, once [`Host::start_watching`] ran.
    watcher: Mutex<Option<Arc<crate::watch::FolderWatcher>>>,
    /// Files this host wrote and indexed itself, with the content hash written (`None`:
    /// deleted), until the watcher reports them ([`watch`]).
    own_writes: Mutex<std::collections::HashMap<String, Option<String>>>,
    /// The editor this host runs inside (`folio lsp`), whose buffers are read in process.
    editor: Option<Arc<dyn live::EditorBuffers>>,
    /// Called at the points of a move that tests wait at ([`edit::MovePoint`]).
    #[cfg(test)]
    pub(crate) move_hook: edit::MoveHook,
}

/// Characters kept as they are in `kb://` URIs: unreserved ones and `/`.
const URI_KEEP: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// `kb://doc/<percent-encoded path>`.
pub fn doc_uri(path: &str) -> String {
    format!("kb://doc/{}", utf8_percent_encode(path, URI_KEEP))
}

/// `kb://topic/<percent-encoded prefix>`.
pub fn topic_uri(prefix: &str) -> String {
    format!("kb://topic/{}", utf8_percent_encode(prefix, URI_KEEP))
}

impl Host {
    /// Opens the knowledge base at `options.root` (the root must be a folder).
    ///
    /// Errors: the root is missing or `folio.toml` is invalid (a `[search]` number out of
    /// its range included).
    pub fn open(options: Options) -> Result<Host, WorkspaceError> {
        Host::open_checking(options, true)
    }

    /// [`Host::open`] without checking the numbers of `[search]`, which only a search
    /// reads (its request is refused with the number's error then): for `folio index`,
    /// which does not search, and `folio eval`, which checks them itself.
    ///
    /// Errors: the root is missing or `folio.toml` cannot be read.
    pub fn open_for_indexing(options: Options) -> Result<Host, WorkspaceError> {
        Host::open_checking(options, false)
    }

    fn open_checking(options: Options, check_search: bool) -> Result<Host, WorkspaceError> {
        let root = options
            .root
            .canonicalize()
            .ok()
            .filter(|r| r.is_dir())
            .ok_or_else(|| WorkspaceError::NoRoot(options.root.display().to_string()))?;
        let config = Config::load(&root)?;
        // A bad `[search]` number stops the server here rather than failing every search.
        let search_check = crate::search::pipeline::PipelineOptions::for_root(
            crate::search::pipeline::SearchMode::Hybrid,
            &root,
            &config.search,
        );
        let search_error = match search_check {
            Err(e) if check_search => return Err(e.into()),
            Err(e) => Some(e.to_string()),
            Ok(_) => None,
        };
        let db_path = options.db.clone().unwrap_or_else(|| default_db_path(&root));
        let writer = crate::write::Writer::new(&root);
        if !options.fetch.is_empty() {
            tracing::warn!("test-only download allowances are set for kb_save_image");
        }
        let fetcher = crate::fetch::Fetcher::new(crate::fetch::FetchConfig {
            test: options.fetch.clone(),
            ..Default::default()
        });
        if options.allow_writes {
            // Finishes any move a killed writer left half done, before the first request.
            if let Err(e) = writer.lock() {
                tracing::warn!("could not check for interrupted writes: {e}");
            }
        }
        let private_dir = crate::knowledge::place::private_dir(&root);
        let private_writer =
            crate::write::Writer::with_state_dir(&private_dir, &private_dir.join(".folio"));
        Ok(Host {
            private_dir,
            private_writer,
            network: registry::KnowledgeNetwork::None,
            root,
            config,
            search_error,
            db_path,
            allow_writes: options.allow_writes,
            reindex: Arc::new(Mutex::new(status::ReindexState::default())),
            reindex_stopped: Condvar::new(),
            root_indexed: AtomicBool::new(false),
            first_index_wait: search::FIRST_INDEX_WAIT,
            writer,
            read_store: Mutex::new(None),
            model: Mutex::new(None),
            bridge_dir: crate::bridge::base_dir(),
            bridge_timeout: live::BRIDGE_TIMEOUT,
            embedding: crate::embed::runner::EmbeddingRunner::new(options.embed),
            reranker: crate::rerank::setup_of(options.rerank),
            fetcher,
            watcher: Mutex::new(None),
            own_writes: Mutex::new(std::collections::HashMap::new()),
            #[cfg(test)]
            move_hook: edit::MoveHook::default(),
            editor: None,
        })
    }

    /// The root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The index database file.
    pub fn db_path(&self) -> &Path {
        &self.db_path
    }

    /// Whether the root is an Obsidian vault ([`crate::workspace::is_vault`]).
    pub(crate) fn is_vault(&self) -> bool {
        crate::workspace::is_vault(&self.root, &self.config)
    }

    /// Whether writes are allowed.
    pub fn allow_writes(&self) -> bool {
        self.allow_writes
    }

    /// Errors (`NOT_FOUND`) when the root folder is gone (deleted, or moved away) while
    /// the host runs: nothing is read or written then, and the index is not made again
    /// where the root was.
    pub(crate) fn require_root(&self) -> HostResult<()> {
        if self.root.is_dir() {
            return Ok(());
        }
        Err(HostError::new(
            ErrorCode::NotFound,
            format!(
                "the knowledge base root `{}` is gone (deleted or moved away); put it back, or restart folio on its new place",
                self.root.display()
            ),
        ))
    }

    fn require_writes(&self) -> HostResult<()> {
        if self.allow_writes {
            Ok(())
        } else {
            Err(HostError::new(
                ErrorCode::PermissionDenied,
                format!(
                    "this server is read-only; start it with `folio mcp --allow-writes` or set `[mcp] allow_writes = true` in {}",
                    UserConfig::location()
                ),
            ))
        }
    }

    /// Runs `f` on the kept-open read connection: opened on first use, and again after
    /// an error or when the index file is no longer the one it opened (deleted and built
    /// again, or replaced by a copy: the connection would go on reading the old file).
    pub(crate) fn with_store<T>(&self, f: impl FnOnce(&Store) -> HostResult<T>) -> HostResult<T> {
        self.require_root()?;
        let mut guard = self.read_store.lock().map_err(HostError::internal)?;
        let now = crate::store::FileIdentity::of(&self.db_path);
        if guard
            .as_ref()
            .is_some_and(|store| store.file_identity() != now)
        {
            *guard = None;
        }
        if guard.is_none() {
            *guard = Some(Store::open(&self.db_path).map_err(HostError::internal)?);
        }
        let res = f(guard.as_ref().expect("opened above"));
        if matches!(&res, Err(e) if e.code == ErrorCode::Internal) {
            *guard = None;
        }
        res
    }

    /// Resolves an existing Markdown document and reads it: from the editor's buffer
    /// when an editor has it open (unsaved changes included), else from disk.
    ///
    /// A file that is not valid UTF-8 is read with U+FFFD in place of each invalid
    /// sequence; [`Host::read_document_noted`] says so.
    pub fn read_document(&self, path: &str) -> HostResult<(PathBuf, String)> {
        let (abs, text, _) = self.read_document_noted(path)?;
        Ok((abs, text))
    }

    /// [`Host::read_document`] with, for a file that is not valid UTF-8, the sentence that
    /// says it is shown with replacement characters and is read-only.
    pub fn read_document_noted(&self, path: &str) -> HostResult<(PathBuf, String, Option<String>)> {
        let abs = self.resolve_markdown(path)?;
        if let Some(buffer) = self.buffer(path)? {
            return Ok((abs, buffer.text.clone(), None));
        }
        let (text, invalid_at) = crate::workspace::read_markdown_lossy_in(
            &self.root,
            path,
            self.config.index.max_file_size,
        )
        .map_err(|reason| skip_error(path, reason))?;
        let note = invalid_at.map(|at| {
            format!(
                "`{path}` is not valid UTF-8 (first invalid byte at offset {at}): it is shown with U+FFFD for each \
                 invalid sequence and is read-only; convert it to UTF-8 to edit it"
            )
        });
        Ok((abs, text, note))
    }

    /// [`Host::read_document`], also returning the editor buffer the text came from.
    pub(crate) fn read_live(
        &self,
        path: &str,
    ) -> HostResult<(PathBuf, String, Option<live::Buffer>)> {
        let abs = self.resolve_markdown(path)?;
        if let Some(buffer) = self.buffer(path)? {
            return Ok((abs, buffer.text.clone(), Some(buffer)));
        }
        let text = self.read_disk(path)?;
        Ok((abs, text, None))
    }

    /// Resolves an existing Markdown document (path policy, then the file must exist).
    pub(crate) fn resolve_markdown(&self, path: &str) -> HostResult<PathBuf> {
        let abs = resolve_existing(&self.root, path)?;
        if !is_markdown(path)
            && let Some(format) = crate::formats::Format::of_path(path)
        {
            let ext = path
                .rsplit('.')
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase();
            return Err(HostError::new(
                ErrorCode::UnsupportedFormat,
                format!(
                    "`{path}` is a {} file, which folio reads only when `{ext}` is in [parsers].enabled of folio.toml",
                    format.name()
                ),
            ));
        }
        if !is_markdown(path) {
            return Err(HostError::new(
                ErrorCode::UnsupportedFormat,
                format!("`{path}` is not a Markdown file (.md, .markdown)"),
            ));
        }
        Ok(abs)
    }

    /// The text of a document on disk.
    ///
    /// Errors: a file that is not valid UTF-8 is `UNSUPPORTED_FORMAT` saying it is
    /// read-only (writes read through here, so its bytes are never rewritten).
    pub(crate) fn read_disk(&self, path: &str) -> HostResult<String> {
        read_markdown_in(&self.root, path, self.config.index.max_file_size)
            .map_err(|reason| skip_error(path, reason))
    }

    /// Refuses (`INVALID_ARGUMENT`, nothing written) a new text of `path` that folio could
    /// not read back as a note ([`crate::workspace::check_writable_markdown`]): over the
    /// size cap, with a NUL byte, or nested too deeply to parse.
    pub(crate) fn check_writable(&self, path: &str, text: &str) -> HostResult<()> {
        crate::workspace::check_writable_markdown(text, self.config.index.max_file_size).map_err(
            |reason| {
                HostError::invalid(format!(
                    "the edit would make `{path}` a file folio cannot read as a note ({reason}); nothing was changed"
                ))
            },
        )
    }

    /// Checks that `path` names a Markdown file, syntax only.
    pub(crate) fn check_markdown_name(path: &str) -> HostResult<()> {
        check_syntax(path)?;
        if !is_markdown(path) {
            return Err(HostError::new(
                ErrorCode::UnsupportedFormat,
                format!("`{path}` is not a Markdown file (.md, .markdown)"),
            ));
        }
        Ok(())
    }
}

/// The error for a file that cannot be read as a note.
pub(crate) fn skip_error(path: &str, reason: SkipReason) -> HostError {
    match reason {
        SkipReason::TooLarge { .. } => HostError::invalid(format!("`{path}`: {reason}")),
        SkipReason::Unreadable { .. } => HostError::internal(format!("`{path}`: {reason}")),
        SkipReason::InvalidUtf8 { at } => HostError::new(
            ErrorCode::UnsupportedFormat,
            format!(
                "`{path}` is not valid UTF-8 (first invalid byte at offset {at}); folio reads it with replacement \
                 characters but never writes it, so that its bytes stay as they are: convert it to UTF-8 to edit it"
            ),
        ),
        _ => HostError::new(ErrorCode::UnsupportedFormat, format!("`{path}`: {reason}")),
    }
}

#[cfg(test)]
mod tests;
