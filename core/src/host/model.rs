//! The live model of one root: every Markdown document parsed (from disk, or from an
//! editor's buffer while it is open there), the other files and folders links can name,
//! and the link graph — with the one set of update rules every front end uses.
//!
//! Each update returns the documents whose diagnostics may have changed: the document
//! itself, plus the documents that link to what changed when it is new or gone or what
//! links can name in it (headings, anchors, block ids, title) changed. The reverse link
//! index keeps that set small: a keystroke that does not touch a heading affects one
//! document.
//!
//! Two ways keep it current: events (`folio lsp` feeds the editor's changes and the
//! file watcher's events in the order received) or [`Model::refresh_from_disk`], which
//! walks the root again (no reads) and re-reads only files whose size or modification
//! time changed (`folio mcp`, between tool calls).

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use crate::config::{Config, WikiStyle};
use crate::document::{Document, EditError, TextEdit};
use crate::links::graph::{LinkGraph, TargetKey, wiki_key};
use crate::parse::incremental::IncrementalParser;
use crate::parse::{Parsed, parse};
use crate::pointer::hash_bytes;
use crate::workspace::{
    DocEntry, LoadReport, Origin, Preread, Workspace, WorkspaceError, is_markdown,
    read_markdown_lossy_in, scan,
};

/// A file's size and modification time, to notice changes without reading it.
type Stamp = (u64, Option<SystemTime>);

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()))
}

/// What links into a document can name: headings (slug, text, custom id), anchor ids,
/// block ids and the title.
#[derive(PartialEq, Eq)]
struct Surface(
    Vec<(String, String, Option<String>)>,
    Vec<String>,
    Vec<String>,
    Option<String>,
);

fn surface(parsed: &Parsed) -> Surface {
    Surface(
        parsed
            .headings
            .iter()
            .map(|h| (h.slug.clone(), h.text.clone(), h.custom_id.clone()))
            .collect(),
        parsed.anchors.iter().map(|a| a.id.clone()).collect(),
        parsed.block_ids.iter().map(|(id, _)| id.clone()).collect(),
        parsed.title(),
    )
}

/// The live model of one root.
#[derive(Debug)]
pub struct Model {
    ws: Workspace,
    graph: LinkGraph,
    /// Documents open in an editor: the parser that re-parses only the blocks an edit
    /// touched.
    parsers: HashMap<String, IncrementalParser>,
    /// Size and modification time of the documents read from disk.
    stamps: HashMap<String, Stamp>,
    /// The other files and folders as the last walk found them.
    others: Vec<String>,
}

impl Model {
    /// Walks `root`, reads and parses every Markdown file (in parallel) and links them.
    ///
    /// Errors: the root is missing. Unreadable files are skipped and reported.
    pub fn load(root: &Path, config: Config) -> Result<(Model, LoadReport), WorkspaceError> {
        let pre = Preread::read(root, &config)?;
        Ok(Model::from_preread(root, config, &pre))
    }

    /// Parses the texts of `pre` and links them: the second half of [`Model::load`].
    pub fn from_preread(root: &Path, config: Config, pre: &Preread) -> (Model, LoadReport) {
        let scanned = &pre.scan;
        let (mut ws, report) = Workspace::from_preread(root, config, pre);
        ws.add_other("");
        let mut graph = LinkGraph::default();
        for path in ws.document_paths() {
            if let Some(parsed) = ws.parsed(path) {
                graph.update(path, &parsed);
            }
        }
        let stamps = scanned
            .markdown
            .iter()
            .filter_map(|p| Some((p.clone(), stamp(&root.join(p))?)))
            .collect();
        let model = Model {
            ws,
            graph,
            parsers: HashMap::new(),
            stamps,
            others: scanned.other.clone(),
        };
        (model, report)
    }

    /// A model of a lone file's folder (single-file mode): no document read yet, the
    /// folder's own entries known as files links may name.
    pub fn single_folder(folder: &Path, config: Config) -> Model {
        let mut ws = Workspace::new(folder.to_path_buf(), config);
        ws.add_other("");
        if let Ok(entries) = std::fs::read_dir(folder) {
            for entry in entries.flatten() {
                if let Some(name) = entry.file_name().to_str() {
                    ws.add_other(name);
                }
            }
        }
        Model {
            ws,
            graph: LinkGraph::default(),
            parsers: HashMap::new(),
            stamps: HashMap::new(),
            others: Vec::new(),
        }
    }

    /// The documents and files.
    pub fn workspace(&self) -> &Workspace {
        &self.ws
    }

    /// Which documents link to which targets.
    pub fn graph(&self) -> &LinkGraph {
        &self.graph
    }

    /// The root folder.
    pub fn root(&self) -> &Path {
        self.ws.root()
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        self.ws.config()
    }

    /// Replaces the configuration (the caller re-publishes every document's diagnostics).
    pub fn set_config(&mut self, config: Config) {
        self.ws.set_config(config);
    }

    /// How the incremental parser of an open document has re-parsed it so far (partial
    /// and full parses); `None` when the document is not open.
    pub fn incremental_stats(&self, path: &str) -> Option<crate::parse::incremental::Stats> {
        self.parsers.get(path).map(|p| p.stats)
    }

    /// True when the document is open in an editor (its text is the buffer's).
    pub fn is_open(&self, path: &str) -> bool {
        self.parsers.contains_key(path)
    }

    /// Replaces a document's text, parses it and updates the link graph; returns the
    /// documents whose diagnostics may have changed.
    pub fn set_document(&mut self, path: &str, text: Document, origin: Origin) -> BTreeSet<String> {
        let source = text.text();
        let parsed = parse(&source);
        self.set_parsed(path, text, &source, parsed, origin)
    }

    fn set_parsed(
        &mut self,
        path: &str,
        text: Document,
        source: &str,
        parsed: Parsed,
        origin: Origin,
    ) -> BTreeSet<String> {
        let parsed = Arc::new(parsed);
        let old_surface = self.ws.parsed(path).map(|p| surface(&p));
        let entry = DocEntry {
            doc: text,
            parsed: Arc::clone(&parsed),
            source_hash: hash_bytes(source.as_bytes()),
            origin,
        };
        self.ws.insert(path.to_string(), entry);
        self.graph.update(path, &parsed);
        let mut affected = BTreeSet::from([path.to_string()]);
        let new_surface = surface(&parsed);
        if old_surface.as_ref() != Some(&new_surface) {
            affected.extend(self.graph.affected_by(path));
            // With the `title` wiki style, `[[Old Title]]` and `[[New Title]]` links depend on the title too.
            let old_title = old_surface.and_then(|s| s.3);
            if self.ws.config().wiki.style == WikiStyle::Title && old_title != new_surface.3 {
                for title in old_title.iter().chain(new_surface.3.iter()) {
                    let key = TargetKey::Wiki(wiki_key(title));
                    affected.extend(self.graph.dependents(&key).map(str::to_string));
                }
            }
        }
        affected
    }

    /// Removes a document (gone from disk); returns the documents that linked to it.
    pub fn remove_document(&mut self, path: &str) -> BTreeSet<String> {
        self.ws.remove(path);
        self.graph.remove(path);
        self.parsers.remove(path);
        self.stamps.remove(path);
        self.graph.affected_by(path)
    }

    /// A document opened in an editor: its buffer (`text` at `version`) overrides the
    /// disk copy until [`Model::close_document`].
    pub fn open_document(&mut self, path: &str, text: &str, version: i32) -> BTreeSet<String> {
        let (parser, parsed) = IncrementalParser::new(text);
        self.parsers.insert(path.to_string(), parser);
        self.stamps.remove(path);
        self.set_parsed(
            path,
            Document::new(text, version),
            text,
            parsed,
            Origin::Editor,
        )
    }

    /// Applies an editor's changes in order, each against the result of the one before
    /// (LSP `didChange`), then re-parses only the top-level blocks they touched. A change
    /// is a replacement of a range (`Some`) or of the whole text (`None`); `to_bytes` turns
    /// a front end's range into a byte range of the text as it is at that change (the
    /// language server's position converter).
    ///
    /// Errors: the document is not in the model, or a byte range is outside it.
    pub fn change_document<R>(
        &mut self,
        path: &str,
        version: i32,
        changes: &[(Option<R>, String)],
        to_bytes: impl Fn(&Document, &R) -> std::ops::Range<usize>,
    ) -> Result<BTreeSet<String>, ChangeError> {
        let entry = self
            .ws
            .get(path)
            .ok_or_else(|| ChangeError::NotOpen(path.to_string()))?;
        let mut text = entry.doc.clone();
        let previous = Arc::clone(&entry.parsed);
        let old_source = text.text();
        for (range, new_text) in changes {
            match range {
                None => text = Document::new(new_text, version),
                Some(range) => {
                    let bytes = to_bytes(&text, range);
                    text.apply_edits(&[TextEdit {
                        range: bytes,
                        new_text: new_text.clone(),
                    }])?;
                }
            }
        }
        text.set_version(version);
        let source = text.text();
        let parsed = match self.parsers.get_mut(path) {
            Some(parser) => parser.update(&old_source, &source, &previous),
            None => parse(&source),
        };
        Ok(self.set_parsed(path, text, &source, parsed, Origin::Editor))
    }

    /// A document closed in the editor: the disk copy is current again, or the document
    /// is gone when there is none.
    pub fn close_document(&mut self, path: &str) -> BTreeSet<String> {
        self.parsers.remove(path);
        let abs = self.root().join(path);
        match read_markdown_lossy_in(self.root(), path, self.config().index.max_file_size) {
            Ok((text, _)) => {
                if let Some(s) = stamp(&abs) {
                    self.stamps.insert(path.to_string(), s);
                }
                self.set_document(path, Document::new(&text, 0), Origin::Disk)
            }
            Err(_) => self.remove_document(path),
        }
    }

    /// A file or folder changed on disk: created, modified or deleted (`exists` says
    /// which). A document open in an editor keeps its buffer. Returns the documents whose
    /// diagnostics may have changed.
    pub fn file_event(&mut self, path: &str, exists: bool) -> BTreeSet<String> {
        if self.parsers.contains_key(path) {
            return BTreeSet::new();
        }
        let abs = self.root().join(path);
        let mut affected = BTreeSet::new();
        if exists && abs.is_dir() {
            self.ws.add_other(path);
            affected.extend(self.graph.affected_by(path));
            return affected;
        }
        if is_markdown(path) && exists {
            match read_markdown_lossy_in(self.root(), path, self.config().index.max_file_size) {
                Ok((text, _)) => {
                    let unchanged = self
                        .ws
                        .get(path)
                        .is_some_and(|e| e.source_hash == hash_bytes(text.as_bytes()));
                    if !unchanged {
                        affected.extend(self.set_document(
                            path,
                            Document::new(&text, 0),
                            Origin::Disk,
                        ));
                    }
                    if let Some(s) = stamp(&abs) {
                        self.stamps.insert(path.to_string(), s);
                    }
                }
                Err(reason) => {
                    tracing::info!("skipped {path}: {reason}");
                    affected.extend(self.remove_document(path));
                    self.ws.add_other(path);
                }
            }
            self.add_parent_folders(path);
        } else if exists {
            if !self.ws.contains_other_path(path) {
                self.ws.add_other(path);
                affected.extend(self.graph.affected_by(path));
            }
            self.add_parent_folders(path);
        } else {
            // Deleted: a document, another file, or a folder with everything under it.
            let prefix = format!("{path}/");
            let under: Vec<String> = self
                .ws
                .document_paths()
                .filter(|p| *p == path || p.starts_with(&prefix))
                .map(str::to_string)
                .collect();
            for doc in under {
                affected.extend(self.remove_document(&doc));
            }
            if self.ws.remove_other(path) {
                affected.extend(self.graph.affected_by(path));
            }
        }
        affected.retain(|d| self.ws.get(d).is_some());
        affected
    }

    fn add_parent_folders(&mut self, path: &str) {
        let mut rest = path;
        while let Some((parent, _)) = rest.rsplit_once('/') {
            self.ws.add_other(parent);
            rest = parent;
        }
    }

    /// Brings the model up to date with the disk without watching it: walks the root
    /// again (no file is read), re-reads the documents whose size or modification time
    /// changed, drops the ones that are gone, and reloads everything when the set of other
    /// files and folders changed (links to them resolve differently). Documents open in an
    /// editor keep their buffer.
    ///
    /// Errors: the root is gone.
    pub fn refresh_from_disk(&mut self) -> Result<(), WorkspaceError> {
        let root = self.root().to_path_buf();
        let scanned = scan(&root, self.config())?;
        if self.others != scanned.other {
            let (fresh, _) = Model::load(&root, self.config().clone())?;
            let open: Vec<(String, Document)> = self
                .parsers
                .keys()
                .filter_map(|p| Some((p.clone(), self.ws.get(p)?.doc.clone())))
                .collect();
            *self = fresh;
            for (path, doc) in open {
                self.open_document(&path, &doc.text(), doc.version());
            }
            return Ok(());
        }
        let cap = self.config().index.max_file_size;
        let mut seen = std::collections::HashSet::new();
        for path in &scanned.markdown {
            seen.insert(path.as_str());
            if self.parsers.contains_key(path) {
                continue;
            }
            let abs = root.join(path);
            let now = stamp(&abs);
            if now.is_some() && self.stamps.get(path) == now.as_ref() {
                continue;
            }
            match read_markdown_lossy_in(&root, path, cap) {
                Ok((text, _)) => {
                    self.set_document(path, Document::new(&text, 0), Origin::Disk);
                    if let Some(s) = now {
                        self.stamps.insert(path.clone(), s);
                    }
                }
                Err(_) => {
                    // Now too large, binary or unreadable: it still exists, as a file.
                    self.remove_document(path);
                    self.ws.add_other(path);
                }
            }
        }
        // Every document the walk no longer finds, whether or not its stamp is known.
        let vanished: Vec<String> = self
            .ws
            .document_paths()
            .filter(|p| !seen.contains(p) && !self.parsers.contains_key(*p))
            .map(str::to_string)
            .collect();
        for path in vanished {
            self.remove_document(&path);
        }
        Ok(())
    }

    /// Forgets what is known of `path` on disk, so the next [`Model::refresh_from_disk`]
    /// reads it again (after a write, or a temporary [`Model::set_document`] of an
    /// editor's buffer).
    pub fn forget_stamp(&mut self, path: &str) {
        self.stamps.remove(path);
    }
}

/// Why an editor's change could not be applied. Nothing changed.
#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    /// The document is not in the model.
    #[error("change to `{0}`, which is not open")]
    NotOpen(String),
    /// A range is outside the document.
    #[error(transparent)]
    Edit(#[from] EditError),
}

impl super::Host {
    /// Runs `f` on the live model, loaded on first use and brought up to date with the
    /// disk first ([`Model::refresh_from_disk`]).
    pub(crate) fn with_workspace<T>(
        &self,
        f: impl FnOnce(&Workspace) -> super::HostResult<T>,
    ) -> super::HostResult<T> {
        let mut guard = self.model.lock().map_err(super::HostError::internal)?;
        match guard.as_mut() {
            Some(model) => model
                .refresh_from_disk()
                .map_err(super::HostError::internal)?,
            None => {
                let (model, _) = Model::load(&self.root, self.config.clone())
                    .map_err(super::HostError::internal)?;
                *guard = Some(model);
            }
        }
        f(guard.as_ref().expect("loaded above").workspace())
    }

    /// [`super::Host::with_workspace`] with some documents' text replaced (editor
    /// buffers, by path). Those documents are read from disk again on the next use.
    pub(crate) fn with_workspace_overlay<T>(
        &self,
        overlay: &HashMap<String, String>,
        f: impl FnOnce(&Workspace) -> super::HostResult<T>,
    ) -> super::HostResult<T> {
        if overlay.is_empty() {
            return self.with_workspace(f);
        }
        self.with_workspace(|_| Ok(()))?;
        let mut guard = self.model.lock().map_err(super::HostError::internal)?;
        let model = guard.as_mut().expect("loaded above");
        for (path, text) in overlay {
            if model.workspace().get(path).is_some() {
                model.set_document(path, Document::new(text, 0), Origin::Editor);
                model.forget_stamp(path);
            }
        }
        f(model.workspace())
    }

    /// Forgets what the live model knows of `path` on disk, so its next use reads it.
    pub(crate) fn invalidate(&self, path: &str) {
        if let Ok(mut guard) = self.model.lock()
            && let Some(model) = guard.as_mut()
        {
            model.forget_stamp(path);
        }
    }
}
