//! The server's state: the negotiated encoding, the client's capabilities, one core live
//! model ([`Model`], with core's update rules) per root, and which documents the editor
//! has open at which version.
//!
//! Every mutation (open, change, close, file events, configuration) runs to completion
//! synchronously under the session lock before the handler's first `.await`, so
//! changes apply strictly in the order received. Each mutation returns the documents
//! whose diagnostics may have changed (the model's answer, with the root added).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use folio_core::config::{Config, DiagnosticsConfig, PublishScope, WikiConfig};
use folio_core::document::{Document, Encoding};
use folio_core::host::model::{Model, ParsedChange, ParsedOpen, PendingChange, PendingOpen};
use folio_core::links::graph::LinkGraph;
use folio_core::links::{Severity, diagnostics};
use folio_core::path_policy::check_syntax;
use folio_core::workspace::{DocEntry, Origin, Preread, Workspace, find_root};
use tower_lsp_server::ls_types::{Diagnostic, TextDocumentContentChangeEvent, Uri};

use crate::convert;

/// What the client said it can do, reduced to the flags the server uses.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClientFlags {
    /// `textDocument/diagnostic` is supported: diagnostics are pulled, not pushed.
    pub pull_diagnostics: bool,
    /// `workspace/diagnostic/refresh` is supported.
    pub diagnostic_refresh: bool,
    /// `workspace/codeLens/refresh` is supported.
    pub code_lens_refresh: bool,
    /// `codeAction/resolve` can fill in a code action's `edit`.
    pub code_action_resolve_edit: bool,
    /// `window/showDocument` is supported.
    pub show_document: bool,
    /// `workspace/didChangeWatchedFiles` may be registered dynamically.
    pub watched_files_dynamic: bool,
    /// Workspace edits may create files (`resourceOperations` has `create`).
    pub create_files: bool,
    /// Workspace edits may use `documentChanges`.
    pub document_changes: bool,
    /// Workspace edits may delete files (`resourceOperations` has `delete`).
    pub delete_files: bool,
    /// Workspace edits may rename files (`resourceOperations` has `rename`).
    pub rename_files: bool,
    /// The client shows server-initiated progress (`window.workDoneProgress`).
    pub work_done_progress: bool,
    /// The client wants `folio/status` notifications (`experimental.folioStatus`).
    pub status_notification: bool,
}

/// One workspace root and its model.
#[derive(Debug)]
pub struct Root {
    /// The root folder (absolute).
    pub folder: PathBuf,
    /// The live model of its documents (core's).
    pub model: Model,
    /// The configuration read from `folio.toml`, before client settings.
    pub file_config: Config,
    /// True for the folder of a lone file opened without a workspace: only that folder's
    /// own entries are known and the root goes away when its last document closes.
    pub single_file: bool,
    /// Per document (KB-relative path) with broken links: how many (error diagnostics).
    pub broken: HashMap<String, usize>,
    /// The LSP diagnostics of documents as last computed (KB-relative path), dropped for
    /// every document a mutation affects ([`Session::invalidate`]), so a pull or a push
    /// recomputes only those.
    pub diagnostics: HashMap<String, CachedDiagnostics>,
    /// Closed documents whose last pushed diagnostics were not empty (with
    /// `[diagnostics].publish = "workspace"`), to clear them when that setting goes away.
    pub pushed: BTreeSet<String>,
}

/// The diagnostics of one document and their result id (a hash of the items, so a
/// recomputation that finds the same diagnostics keeps the id and a pull answers `unchanged`).
#[derive(Clone, Debug)]
pub struct CachedDiagnostics {
    /// The result id of `items`.
    pub result_id: String,
    /// The diagnostics in the negotiated encoding.
    pub items: Vec<Diagnostic>,
}

/// A workspace folder walked and read, not parsed yet ([`Session::read_root`]).
#[derive(Debug)]
pub struct ReadRoot {
    /// The root folder (absolute, canonical).
    pub folder: PathBuf,
    /// Its `folio.toml`.
    file_config: Config,
    /// That with the client's settings.
    config: Config,
    /// The walk and the Markdown texts (shared with the start-up outlines).
    pub texts: Arc<Preread>,
    /// Whether the folder is an Obsidian vault ([`folio_core::workspace::is_vault`]).
    pub vault: bool,
    /// When reading began (for the log).
    started: std::time::Instant,
    /// What is wrong with its `folio.toml`, to show the user ([`config_problem`]).
    config_problem: Option<String>,
}

/// What is wrong with a `folio.toml` that loads but that only a request reads: a
/// `[search]` number out of its range (`folio/search` refuses until it is fixed).
fn config_problem(folder: &Path, config: &Config) -> Option<String> {
    use folio_core::search::pipeline::{PipelineOptions, SearchMode};
    let error = PipelineOptions::for_root(SearchMode::Hybrid, folder, &config.search).err()?;
    Some(format!(
        "folio: {error}; folio/search refuses until it is fixed"
    ))
}

/// A document named by its root and KB-relative path.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DocRef {
    /// Index into [`Session::roots`].
    pub root: usize,
    /// KB-relative path.
    pub path: String,
}

/// The whole server state.
#[derive(Debug, Default)]
pub struct Session {
    /// The negotiated position encoding.
    pub encoding: Encoding,
    /// The client's capabilities.
    pub flags: ClientFlags,
    /// The roots, in the order they were added.
    pub roots: Vec<Root>,
    /// Documents open in the editor (absolute paths) and their versions.
    pub open: HashMap<PathBuf, i32>,
    /// Open documents the client names through a symbolic link inside a root (`link/a.md`
    /// for `real/a.md`): the document's own path → the path the client uses. Requests
    /// under either path reach one document, and answers use the client's path.
    pub client_paths: HashMap<PathBuf, PathBuf>,
    /// The `folio` section of the client's settings, applied over each `folio.toml`.
    pub settings: Option<serde_json::Value>,
    /// The editor's name and version from `initialize` (`clientInfo`).
    pub client_info: Option<(String, Option<String>)>,
    /// The last `folio/status` sent: documents and broken links.
    pub last_status: Option<(usize, usize)>,
    /// Warnings not shown to the user yet ([`Session::take_warnings`]; the server shows
    /// each with `window/showMessage`): problems with a root's `folio.toml`, single-file
    /// mode, embeddings turned off, a buffer over the limit for incremental parsing.
    pub warnings: Vec<String>,
    /// Open documents (absolute paths) over the model's limit for incremental parsing
    /// (core `Model::keep_blocks_up_to`) whose warning was given.
    pub parsed_whole: BTreeSet<PathBuf>,
    /// An edit changed where a document's links lead (their destinations or labels):
    /// other documents' reference counts (code lenses) may have changed. Taken by the
    /// next mutation's outcome.
    pub links_edited: bool,
    /// Outline caches being written after a root's load (core
    /// `workspace::outline_cache`), waited for at shutdown ([`Session::take_outline_saves`]).
    pub outline_saves: Vec<std::thread::JoinHandle<()>>,
}

/// Documents this large (in bytes, UTF-8) or larger are parsed outside the session's
/// lock when they change ([`Session::did_change`]): at about 3 MB/s, a quarter of a MiB
/// is a tenth of a second that other documents' requests would otherwise wait.
pub const PARSE_ELSEWHERE_BYTES: usize = 256 * 1024;

/// What [`Session::did_change`] or [`Session::did_open`] did: applied the change, or
/// made the new text and left its parse to the caller.
#[must_use = "a large document's parse is left to the caller"]
pub enum Change {
    /// Applied; the documents whose diagnostics may have changed.
    Applied(BTreeSet<DocRef>),
    /// To parse ([`ChangeToParse::parse`], on any thread) and then install with
    /// [`Session::finish_change`].
    Parse(Box<ChangeToParse>),
}

/// A large document's change whose text is made and whose parse is not, or a large
/// document opened and not parsed yet.
pub struct ChangeToParse {
    abs: PathBuf,
    version: i32,
    /// Where the document's links led before a change (`Session::link_targets`); `None`
    /// for an open, which edits no link.
    links_before: Option<u64>,
    pending: Pending,
}

/// What is left to parse.
enum Pending {
    Change(PendingChange),
    Open(PendingOpen),
}

/// A parsed change, for [`Session::finish_change`].
pub struct ParsedDocChange {
    abs: PathBuf,
    version: i32,
    links_before: Option<u64>,
    parsed: Parsed,
}

/// What was parsed.
enum Parsed {
    Change(ParsedChange),
    Open(ParsedOpen),
}

impl ChangeToParse {
    /// Parses the new text (linear in its length; needs no session).
    pub fn parse(self) -> ParsedDocChange {
        ParsedDocChange {
            abs: self.abs,
            version: self.version,
            links_before: self.links_before,
            parsed: match self.pending {
                Pending::Change(change) => Parsed::Change(change.parse()),
                Pending::Open(open) => Parsed::Open(open.parse()),
            },
        }
    }

    fn len(&self) -> usize {
        match &self.pending {
            Pending::Change(change) => change.len(),
            Pending::Open(open) => open.len(),
        }
    }
}

impl Root {
    /// The documents and files of the root.
    pub fn ws(&self) -> &Workspace {
        self.model.workspace()
    }

    /// Which documents link to which targets.
    pub fn graph(&self) -> &LinkGraph {
        self.model.graph()
    }
}

/// The absolute path of a KB-relative `path` under the root `folder`.
pub fn kb_abs_path(folder: &Path, path: &str) -> PathBuf {
    let mut abs = folder.to_path_buf();
    abs.extend(path.split('/').filter(|s| !s.is_empty()));
    abs
}

/// The paths the model says were affected, as documents of root `root`.
/// `bytes` for a message: in MiB from 1 MiB on, else in KiB, one decimal.
fn size_text(bytes: usize) -> String {
    let kib = bytes as f64 / 1024.0;
    if kib >= 1024.0 {
        format!("{:.1} MiB", kib / 1024.0)
    } else {
        format!("{kib:.1} KiB")
    }
}

fn refs(root: usize, paths: BTreeSet<String>) -> BTreeSet<DocRef> {
    paths
        .into_iter()
        .map(|path| DocRef { root, path })
        .collect()
}

/// Applies the client's settings (`{"folio": {"diagnostics": {…}, "wiki": {…}}}`, the
/// `folio` key optional) over a configuration read from `folio.toml`.
pub fn effective_config(file: &Config, settings: Option<&serde_json::Value>) -> Result<Config> {
    let mut config = file.clone();
    let Some(settings) = settings else {
        return Ok(config);
    };
    let section = settings.get("folio").unwrap_or(settings);
    if let Some(d) = section.get("diagnostics") {
        let mut diagnostics: DiagnosticsConfig =
            serde_json::from_value(d.clone()).context("invalid folio.diagnostics settings")?;
        diagnostics.compile().map_err(anyhow::Error::msg)?;
        config.diagnostics = diagnostics;
    }
    if let Some(w) = section.get("wiki") {
        config.wiki = serde_json::from_value::<WikiConfig>(w.clone())
            .context("invalid folio.wiki settings")?;
    }
    Ok(config)
}

impl Session {
    /// The root and KB-relative path of an absolute path: the innermost root holding
    /// it, and only when the relative path passes the path policy.
    pub fn locate(&self, abs: &Path) -> Option<DocRef> {
        self.locate_exact(&self.document_path(abs))
    }

    /// The path of the document the client means by `abs`: `abs` itself for a document of
    /// the model, else the path it names through symbolic links (`link/a.md` where `link`
    /// links to `real/`: the walk never follows links, so the document is `real/a.md`),
    /// when that path is inside a root. A path that does not exist stays as it is.
    pub fn document_path(&self, abs: &Path) -> PathBuf {
        if self
            .locate_exact(abs)
            .is_some_and(|doc| self.entry(&doc).is_some())
        {
            return abs.to_path_buf();
        }
        if let Some((own, _)) = self.client_paths.iter().find(|(_, c)| c.as_path() == abs) {
            return own.clone();
        }
        match abs.canonicalize() {
            Ok(real) if real != abs && self.locate_exact(&real).is_some() => real,
            _ => abs.to_path_buf(),
        }
    }

    /// The document at exactly `abs` (no symbolic link resolved).
    fn locate_exact(&self, abs: &Path) -> Option<DocRef> {
        let (idx, root) = self
            .roots
            .iter()
            .enumerate()
            .filter(|(_, r)| abs.starts_with(&r.folder))
            .max_by_key(|(_, r)| r.folder.as_os_str().len())?;
        let rel = abs.strip_prefix(&root.folder).ok()?;
        let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
        let path = parts?.join("/");
        if path.is_empty() || check_syntax(&path).is_err() {
            return None;
        }
        if path.split('/').any(|seg| seg == ".git" || seg == ".folio") {
            return None;
        }
        Some(DocRef { root: idx, path })
    }

    /// [`Session::locate`] for a `file:` URI.
    pub fn locate_uri(&self, uri: &Uri) -> Option<DocRef> {
        self.locate(&convert::uri_to_path(uri)?)
    }

    /// The entry of a document.
    pub fn entry(&self, doc: &DocRef) -> Option<&DocEntry> {
        self.roots.get(doc.root)?.ws().get(&doc.path)
    }

    /// The absolute path of a KB-relative path of a root.
    pub fn abs_path(&self, root: usize, path: &str) -> PathBuf {
        kb_abs_path(&self.roots[root].folder, path)
    }

    /// The root (not single-file) whose folder is `folder`.
    fn workspace_root(&self, folder: &Path) -> Option<usize> {
        self.roots
            .iter()
            .position(|r| r.folder == folder && !r.single_file)
    }

    /// The URI of a KB-relative path of a root.
    pub fn uri(&self, root: usize, path: &str) -> Option<Uri> {
        self.client_uri(&self.abs_path(root, path))
    }

    /// The URI of the file at `abs` as the client names it (through a symbolic link when it
    /// opened the document so, [`Session::client_paths`]).
    pub fn client_uri(&self, abs: &Path) -> Option<Uri> {
        convert::path_to_uri(self.client_paths.get(abs).map_or(abs, PathBuf::as_path))
    }

    /// True when the editor has the document open.
    pub fn is_open(&self, doc: &DocRef) -> bool {
        self.open.contains_key(&self.abs_path(doc.root, &doc.path))
    }

    /// Adds a root folder (loading every document under it); returns its index.
    /// Adding a folder twice returns the existing root.
    pub fn add_root(&mut self, folder: &Path) -> Result<usize> {
        match self.read_root(folder)? {
            Ok(read) => self.add_read_root(read),
            Err(existing) => Ok(existing),
        }
    }

    /// The first half of [`Session::add_root`]: walks the folder and reads its Markdown
    /// (no parse), or names the root that already holds it.
    pub fn read_root(&self, folder: &Path) -> Result<std::result::Result<ReadRoot, usize>> {
        let folder = folder
            .canonicalize()
            .unwrap_or_else(|_| folder.to_path_buf());
        if let Some(i) = self.workspace_root(&folder) {
            return Ok(Err(i));
        }
        let (file_config, config_problem) = match Config::load(&folder) {
            Ok(config) => {
                let problem = config_problem(&folder, &config);
                (config, problem)
            }
            Err(e) => {
                let problem = format!("folio: {e}; using the default configuration");
                tracing::warn!("{problem}");
                (Config::default(), Some(problem))
            }
        };
        let config = effective_config(&file_config, self.settings.as_ref())?;
        let started = std::time::Instant::now();
        let texts = Preread::read(&folder, &config)
            .with_context(|| format!("cannot load {}", folder.display()))?;
        Ok(Ok(ReadRoot {
            vault: folio_core::workspace::is_vault(&folder, &config),
            folder,
            file_config,
            config,
            texts: Arc::new(texts),
            started,
            config_problem,
        }))
    }

    /// The second half of [`Session::add_root`]: parses what [`Session::read_root`] read,
    /// links it and adds the root; returns its index.
    pub fn add_read_root(&mut self, read: ReadRoot) -> Result<usize> {
        let ReadRoot {
            folder,
            file_config,
            config,
            texts,
            started,
            config_problem,
            vault: _,
        } = read;
        if let Some(i) = self.workspace_root(&folder) {
            return Ok(i);
        }
        self.warnings.extend(config_problem);
        // Closed documents keep their headings and links, not every block element: a
        // quarter of the heap on a docs site; a request that needs them parses again.
        // Unchanged ones come from the outline cache of the last session.
        let (model, report, save) = Model::for_editor(&folder, config, &texts);
        drop(texts);
        for skipped in &report.skipped {
            tracing::info!("skipped {}: {}", skipped.path, skipped.reason);
        }
        tracing::info!(
            "loaded {} documents under {} in {} ms (walk, read, parse, link index; {} outlines from the cache)",
            report.loaded,
            folder.display(),
            started.elapsed().as_millis(),
            report.from_cache,
        );
        self.outline_saves.retain(|h| !h.is_finished());
        if let Some(save) = save {
            let handle = std::thread::spawn(move || {
                let count = save.len();
                match save.write() {
                    Ok(()) => tracing::debug!("outline cache: {count} outlines written"),
                    Err(e) => tracing::warn!("outline cache not written: {e}"),
                }
            });
            self.outline_saves.push(handle);
        }
        self.roots.push(Root {
            folder,
            model,
            file_config,
            single_file: false,
            broken: HashMap::new(),
            diagnostics: HashMap::new(),
            pushed: BTreeSet::new(),
        });
        let idx = self.roots.len() - 1;
        self.overlay_open_documents(idx);
        let docs = self.roots[idx]
            .ws()
            .document_paths()
            .map(|path| DocRef {
                root: idx,
                path: path.to_string(),
            })
            .collect();
        self.recount(&docs, &HashMap::new(), false);
        Ok(idx)
    }

    /// Re-applies the buffers of open documents that now fall under root `idx`.
    fn overlay_open_documents(&mut self, idx: usize) {
        let open: Vec<PathBuf> = self.open.keys().cloned().collect();
        for abs in open {
            let Some(doc) = self.locate(&abs) else {
                continue;
            };
            if doc.root != idx {
                continue;
            }
            // The buffer is kept in whichever root held it before; copy it over.
            let buffer = self
                .roots
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != idx)
                .find_map(|(_, r)| {
                    let rel = abs
                        .strip_prefix(&r.folder)
                        .ok()?
                        .to_str()?
                        .replace('\\', "/");
                    r.ws()
                        .get(&rel)
                        .filter(|e| e.origin == Origin::Editor)
                        .map(|e| e.doc.clone())
                });
            if let Some(buffer) = buffer {
                self.roots[idx]
                    .model
                    .open_document(&doc.path, &buffer.text(), buffer.version());
            }
        }
    }

    /// Removes the root at `folder`, if any.
    pub fn remove_root(&mut self, folder: &Path) {
        let folder = folder
            .canonicalize()
            .unwrap_or_else(|_| folder.to_path_buf());
        self.roots.retain(|r| r.folder != folder);
    }

    /// Recomputes every root's configuration from its `folio.toml` and the client settings.
    pub fn apply_settings(&mut self, settings: Option<serde_json::Value>) -> Result<()> {
        let mut configs = Vec::new();
        for root in &self.roots {
            configs.push(effective_config(&root.file_config, settings.as_ref())?);
        }
        for (root, config) in self.roots.iter_mut().zip(configs) {
            root.model.set_config(config);
        }
        self.settings = settings;
        Ok(())
    }

    /// The problems with a root's `folio.toml` found since the last call, each once.
    /// The outline caches still being written, for the server to wait for at shutdown.
    pub fn take_outline_saves(&mut self) -> Vec<std::thread::JoinHandle<()>> {
        std::mem::take(&mut self.outline_saves)
    }

    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// Re-reads `folio.toml` of the root at `idx`. A file that does not load leaves the
    /// previous configuration in place; either way a problem goes to
    /// [`Session::take_warnings`].
    pub fn reload_file_config(&mut self, idx: usize) -> Result<()> {
        let root = &mut self.roots[idx];
        let loaded = Config::load(&root.folder).map_err(|e| {
            let problem = format!("folio: {e}; keeping the previous configuration");
            self.warnings.push(problem.clone());
            anyhow::anyhow!(problem)
        })?;
        self.warnings.extend(config_problem(&root.folder, &loaded));
        root.file_config = loaded;
        let config = effective_config(&root.file_config, self.settings.as_ref())?;
        self.roots[idx].model.set_config(config);
        Ok(())
    }

    /// Replaces a document's text, reparses it and updates the link graph. Returns the
    /// documents whose diagnostics may have changed (core [`Model::set_document`]).
    pub fn set_document(
        &mut self,
        doc: &DocRef,
        text: Document,
        origin: Origin,
    ) -> BTreeSet<DocRef> {
        let affected = self.roots[doc.root]
            .model
            .set_document(&doc.path, text, origin);
        refs(doc.root, affected)
    }

    /// Removes a document (deleted on disk); returns the documents that linked to it.
    pub fn remove_document(&mut self, doc: &DocRef) -> BTreeSet<DocRef> {
        let affected = self.roots[doc.root].model.remove_document(&doc.path);
        refs(doc.root, affected)
    }

    /// Opens a document in the editor: its buffer overrides the disk copy. A text of
    /// [`PARSE_ELSEWHERE_BYTES`] or more is not parsed here: its parse is left to the
    /// caller ([`Change::Parse`]), as for [`Session::did_change`].
    pub fn did_open(&mut self, client: &Path, text: &str, version: i32) -> Change {
        let abs = self.document_path(client);
        if abs != client {
            self.client_paths.insert(abs.clone(), client.to_path_buf());
        }
        self.open.insert(abs.clone(), version);
        let doc = match self.locate(&abs) {
            Some(doc) => doc,
            None => match self.add_root_for_file(&abs) {
                Some(doc) => doc,
                None => return Change::Applied(BTreeSet::new()),
            },
        };
        let change = ChangeToParse {
            links_before: None,
            abs,
            version,
            pending: Pending::Open(
                self.roots[doc.root]
                    .model
                    .prepare_open(&doc.path, text, version),
            ),
        };
        self.parse_here_unless_large(change)
    }

    /// Finds or makes a root for a file opened outside every root: the nearest folder
    /// with `folio.toml` or `.git`, else the file's own folder in single-file mode.
    fn add_root_for_file(&mut self, abs: &Path) -> Option<DocRef> {
        let folder = abs.parent()?.to_path_buf();
        let found = find_root(&folder);
        let has_marker =
            found.join(folio_core::config::CONFIG_FILE).is_file() || found.join(".git").exists();
        if has_marker {
            if let Err(e) = self.add_root(&found) {
                tracing::warn!("{e:#}");
            }
        } else {
            let folder = folder.canonicalize().unwrap_or(folder);
            let config =
                effective_config(&Config::default(), self.settings.as_ref()).unwrap_or_default();
            tracing::info!("single-file mode in {}", folder.display());
            // Said once per folder, as a warning: links to notes elsewhere go unchecked.
            self.warnings.push(format!(
                "folio: no folio.toml or .git in {} or above it, so folio serves the files of that folder alone \
                 (single-file mode); create folio.toml, even empty, at the root of your notes",
                folder.display()
            ));
            self.roots.push(Root {
                model: {
                    let mut model = Model::single_folder(&folder, config);
                    model.keep_closed_as_outlines();
                    model
                },
                folder,
                file_config: Config::default(),
                single_file: true,
                broken: HashMap::new(),
                diagnostics: HashMap::new(),
                pushed: BTreeSet::new(),
            });
        }
        self.locate(abs)
    }

    /// Applies `didChange` content changes in order, each against the previous result.
    /// A document of [`PARSE_ELSEWHERE_BYTES`] or more is not parsed here: its new text is
    /// made and the parse left to the caller ([`Change::Parse`]), to run without the
    /// session's lock and come back through [`Session::finish_change`].
    ///
    /// Errors: the document is not open, or a range is outside it.
    pub fn did_change(
        &mut self,
        abs: &Path,
        version: i32,
        changes: &[TextDocumentContentChangeEvent],
    ) -> Result<Change> {
        let abs = self.document_path(abs);
        let doc = self
            .locate(&abs)
            .context("change to a document that is not open")?;
        let changes: Vec<_> = changes.iter().map(|c| (c.range, c.text.clone())).collect();
        let encoding = self.encoding;
        let links_before = self.link_targets(&doc);
        let pending = self.roots[doc.root].model.prepare_change(
            &doc.path,
            version,
            &changes,
            |text: &Document, range| convert::byte_range(text, *range, encoding),
        )?;
        let change = ChangeToParse {
            abs,
            version,
            links_before: Some(links_before),
            pending: Pending::Change(pending),
        };
        Ok(self.parse_here_unless_large(change))
    }

    /// Parses `change` and installs it now when its text is smaller than
    /// [`PARSE_ELSEWHERE_BYTES`]; else leaves it to the caller.
    fn parse_here_unless_large(&mut self, change: ChangeToParse) -> Change {
        if change.len() >= PARSE_ELSEWHERE_BYTES {
            return Change::Parse(Box::new(change));
        }
        Change::Applied(self.finish_change(change.parse()))
    }

    /// Installs a change parsed outside the lock ([`Change::Parse`]); returns the
    /// documents whose diagnostics may have changed. A document gone meanwhile is left
    /// as it is.
    pub fn finish_change(&mut self, change: ParsedDocChange) -> BTreeSet<DocRef> {
        let ParsedDocChange {
            abs,
            version,
            links_before,
            parsed,
        } = change;
        let Some(doc) = self.locate(&abs) else {
            return BTreeSet::new();
        };
        let path = match &parsed {
            Parsed::Change(change) => change.path(),
            Parsed::Open(open) => open.path(),
        };
        if doc.path != path {
            return BTreeSet::new();
        }
        let model = &mut self.roots[doc.root].model;
        let affected = match parsed {
            Parsed::Change(change) => model.finish_change(change),
            Parsed::Open(open) => model.finish_open(open),
        };
        if let Some(before) = links_before {
            self.links_edited |= self.link_targets(&doc) != before;
        }
        self.warn_if_parsed_whole(&doc, &abs);
        self.open.insert(abs, version);
        refs(doc.root, affected)
    }

    /// Warns once when the open document `doc` (at `abs`) has become longer than the
    /// model's limit for parsing (core `Model::keep_blocks_up_to`), so only its headings
    /// are read; again if it goes under and over once more.
    fn warn_if_parsed_whole(&mut self, doc: &DocRef, abs: &Path) {
        let model = &self.roots[doc.root].model;
        if !model.parses_whole_at_each_change(&doc.path) {
            self.parsed_whole.remove(abs);
            return;
        }
        if self.parsed_whole.insert(abs.to_path_buf()) {
            let size = model
                .workspace()
                .get(&doc.path)
                .map_or(0, |e| e.doc.len_bytes());
            self.warnings.push(format!(
                "folio: {} is {}, over [index] max_file_size ({}): while it is this large, folio reads \
                 only its headings (a line scan), so its links are not checked and requests about it \
                 see no other content; raise max_file_size in folio.toml to have it parsed in full",
                doc.path,
                size_text(size),
                size_text(model.keep_blocks_up_to()),
            ));
        }
    }

    /// A hash of where document `doc`'s links lead: each link's kind, destination,
    /// fragment and label, in order (not where they stand).
    fn link_targets(&self, doc: &DocRef) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        if let Some(parsed) = self.roots[doc.root].ws().parsed(&doc.path) {
            for link in &parsed.links {
                (link.kind, &link.dest, &link.fragment, &link.label).hash(&mut hasher);
            }
        }
        hasher.finish()
    }

    /// Closes a document: the disk copy is current again (or the document is gone).
    pub fn did_close(&mut self, abs: &Path) -> BTreeSet<DocRef> {
        let abs = &self.document_path(abs);
        self.client_paths.remove(abs);
        self.open.remove(abs);
        self.parsed_whole.remove(abs);
        let Some(doc) = self.locate(abs) else {
            return BTreeSet::new();
        };
        let affected = refs(
            doc.root,
            self.roots[doc.root].model.close_document(&doc.path),
        );
        let root = &self.roots[doc.root];
        if root.single_file && !self.open.keys().any(|p| p.starts_with(&root.folder)) {
            let folder = root.folder.clone();
            self.roots.retain(|r| r.folder != folder || !r.single_file);
            return BTreeSet::new();
        }
        affected
    }

    /// A file changed on disk (created, modified or deleted; `exists` says which).
    /// Open documents keep their buffer.
    pub fn file_event(&mut self, abs: &Path, exists: bool) -> BTreeSet<DocRef> {
        let Some(doc) = self.locate(abs) else {
            return BTreeSet::new();
        };
        if doc.path == folio_core::config::CONFIG_FILE {
            if let Err(e) = self.reload_file_config(doc.root) {
                tracing::warn!("{e:#}");
            }
            return self.all_documents();
        }
        if self.open.contains_key(abs) {
            return BTreeSet::new();
        }
        refs(
            doc.root,
            self.roots[doc.root].model.file_event(&doc.path, exists),
        )
    }

    /// Files changed on disk, in order: the same as [`Session::file_event`] for each, but
    /// each run of events for one root's files goes to its model in one batch
    /// ([`Model::file_events`], which reads and parses the Markdown files in parallel).
    /// A change of `folio.toml` ends a run, so the events after it see the new settings.
    pub fn file_events(&mut self, events: &[(PathBuf, bool)]) -> BTreeSet<DocRef> {
        let mut affected = BTreeSet::new();
        let mut run: Option<(usize, Vec<(String, bool)>)> = None;
        for (abs, exists) in events {
            let Some(doc) = self.locate(abs) else {
                continue;
            };
            if doc.path == folio_core::config::CONFIG_FILE || self.open.contains_key(abs) {
                if let Some((root, batch)) = run.take() {
                    affected.extend(self.model_file_events(root, &batch));
                }
                affected.extend(self.file_event(abs, *exists));
                continue;
            }
            match &mut run {
                Some((root, batch)) if *root == doc.root => batch.push((doc.path, *exists)),
                _ => {
                    if let Some((root, batch)) = run.take() {
                        affected.extend(self.model_file_events(root, &batch));
                    }
                    run = Some((doc.root, vec![(doc.path, *exists)]));
                }
            }
        }
        if let Some((root, batch)) = run {
            affected.extend(self.model_file_events(root, &batch));
        }
        affected
    }

    fn model_file_events(&mut self, root: usize, events: &[(String, bool)]) -> BTreeSet<DocRef> {
        refs(root, self.roots[root].model.file_events(events))
    }

    /// The folders of every root (the live bridge opens one endpoint per folder).
    pub fn root_folders(&self) -> Vec<PathBuf> {
        let mut folders: Vec<PathBuf> = self.roots.iter().map(|r| r.folder.clone()).collect();
        folders.dedup();
        folders
    }

    /// Every document of every root.
    pub fn all_documents(&self) -> BTreeSet<DocRef> {
        let mut out = BTreeSet::new();
        for (i, root) in self.roots.iter().enumerate() {
            out.extend(root.ws().document_paths().map(|p| DocRef {
                root: i,
                path: p.to_string(),
            }));
        }
        out
    }

    /// Recounts the broken links (error diagnostics) of `docs`, taking those already
    /// counted from `counted`; with `prune`, also forgets the counts of documents that no
    /// longer exist.
    /// Counting costs a diagnostics pass over the documents, so it is done only for a
    /// client that asked for `folio/status`.
    pub fn recount(
        &mut self,
        docs: &BTreeSet<DocRef>,
        counted: &HashMap<DocRef, usize>,
        prune: bool,
    ) {
        if !self.flags.status_notification {
            return;
        }
        for doc in docs {
            let Some(root) = self.roots.get(doc.root) else {
                continue;
            };
            let n = if let Some(n) = counted.get(doc) {
                *n
            } else if root.ws().get(&doc.path).is_some() {
                diagnostics(root.ws(), &doc.path)
                    .iter()
                    .filter(|d| d.severity == Severity::Error)
                    .count()
            } else {
                0
            };
            let broken = &mut self.roots[doc.root].broken;
            if n == 0 {
                broken.remove(&doc.path);
            } else {
                broken.insert(doc.path.clone(), n);
            }
        }
        if prune {
            for root in &mut self.roots {
                let ws = root.model.workspace();
                root.broken.retain(|path, _| ws.get(path).is_some());
            }
        }
    }

    /// Documents and broken links over every root (broken links are counted only for a
    /// client that asked for `folio/status`, see [`Session::recount`]).
    pub fn status(&self) -> (usize, usize) {
        let documents = self.roots.iter().map(|r| r.ws().len()).sum();
        let broken = self.roots.iter().flat_map(|r| r.broken.values()).sum();
        (documents, broken)
    }

    /// The open documents among `docs`.
    pub fn open_among(&self, docs: &BTreeSet<DocRef>) -> Vec<DocRef> {
        docs.iter().filter(|d| self.is_open(d)).cloned().collect()
    }

    /// True when root `root` pushes diagnostics for every document, open or not
    /// (`[diagnostics].publish = "workspace"`), to a client that does not pull them.
    pub fn publishes_workspace(&self, root: usize) -> bool {
        !self.flags.pull_diagnostics
            && self
                .roots
                .get(root)
                .is_some_and(|r| r.ws().config().diagnostics.publish == PublishScope::Workspace)
    }

    /// The documents among `docs` whose diagnostics are pushed: the open ones, and every
    /// one of a root that publishes for the whole workspace.
    pub fn pushed_among(&self, docs: &BTreeSet<DocRef>) -> Vec<DocRef> {
        docs.iter()
            .filter(|d| self.is_open(d) || self.publishes_workspace(d.root))
            .cloned()
            .collect()
    }

    /// Forgets the cached diagnostics of `docs` (a mutation may have changed them).
    pub fn invalidate(&mut self, docs: &BTreeSet<DocRef>) {
        for doc in docs {
            if let Some(root) = self.roots.get_mut(doc.root) {
                root.diagnostics.remove(&doc.path);
            }
        }
    }
}
