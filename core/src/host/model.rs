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

use crate::config::{Config, WikiStyle};
use crate::document::{Document, EditError};
use crate::links::graph::{LinkGraph, TargetKey, wiki_key};
use crate::parse::incremental::{IncrementalParser, update_destinations};
use crate::parse::{Parsed, parse};
use crate::pointer::hash_bytes;
use crate::workspace::outline_cache::{OutlineCache, OutlineSave};
use crate::workspace::{
    DiskState, DocEntry, FileStamp, LoadReport, Origin, Preread, SkipReason, Workspace,
    WorkspaceError, is_markdown, read_markdown_stamped_in,
};

mod pending;
pub use pending::{ParsedChange, ParsedOpen, PendingChange, PendingOpen};

/// A Markdown file as read from disk: its stamp when the read began, and its text, the
/// text's hash and, when the model had another text for it, its parse; or why it is not
/// read as a document.
type ReadFile = (
    Option<FileStamp>,
    Result<(String, u64, Option<Parsed>), SkipReason>,
);

/// What links into a document can name: headings (slug, text, custom id), anchor ids,
/// block ids, the title and the frontmatter aliases.
#[derive(PartialEq, Eq)]
struct Surface(
    Vec<(String, String, Option<String>)>,
    Vec<String>,
    Vec<String>,
    Option<String>,
    Vec<String>,
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
        parsed.aliases(),
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
    /// Size and modification time of the Markdown files read from disk, taken when each
    /// read began.
    stamps: HashMap<String, FileStamp>,
    /// The other files and folders as the last walk found them.
    others: Vec<String>,
    /// Keep the documents read from disk as outlines ([`Model::keep_closed_as_outlines`]).
    outlines: bool,
}

impl Model {
    /// Walks `root`, reads and parses every Markdown file (in parallel) and links them.
    ///
    /// Errors: the root is missing. Unreadable files are skipped and reported.
    pub fn load(root: &Path, config: Config) -> Result<(Model, LoadReport), WorkspaceError> {
        let pre = Preread::read(root, &config)?;
        Ok(Model::from_preread(root, config, &pre, false))
    }

    /// Parses the texts of `pre` and links them: the second half of [`Model::load`].
    /// With `outlines`, the model keeps the documents read from disk as outlines from
    /// the start ([`Model::keep_closed_as_outlines`]).
    pub fn from_preread(
        root: &Path,
        config: Config,
        pre: &Preread,
        outlines: bool,
    ) -> (Model, LoadReport) {
        Model::build(root, config, pre, outlines, &OutlineCache::none())
    }

    /// The model of an editor's workspace: closed documents kept as outlines, each
    /// taken from the root's outline cache when it holds one for the document's text
    /// (`report.from_cache` counts them) and parsed otherwise
    /// ([`crate::workspace::outline_cache`]). Also what to write to the cache, when the
    /// load changed what it should hold: write it on another thread.
    pub fn for_editor(
        root: &Path,
        config: Config,
        pre: &Preread,
    ) -> (Model, LoadReport, Option<OutlineSave>) {
        let cache = OutlineCache::for_preread(root, pre);
        let (model, report) = Model::build(root, config, pre, true, &cache);
        let save = cache.save(model.ws.disk_outlines());
        (model, report, save)
    }

    fn build(
        root: &Path,
        config: Config,
        pre: &Preread,
        outlines: bool,
        cache: &OutlineCache,
    ) -> (Model, LoadReport) {
        let scanned = &pre.scan;
        let (mut ws, report) = Workspace::from_preread_with(root, config, pre, outlines, cache);
        ws.add_other("");
        let mut graph = LinkGraph::default();
        for path in ws.document_paths() {
            if let Some(parsed) = ws.parsed(path) {
                graph.update(path, &parsed);
            }
        }
        // Taken when each read began, not now: a file changed since is then noticed by
        // the next comparison with the disk ([`Model::drift`]).
        let stamps = scanned
            .markdown
            .iter()
            .zip(&pre.stamps)
            .filter_map(|(p, s)| Some((p.clone(), (*s)?)))
            .collect();
        let model = Model {
            ws,
            graph,
            parsers: HashMap::new(),
            stamps,
            others: scanned.other.clone(),
            outlines,
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
            outlines: false,
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

    /// From now on, keeps the parse of every document read from disk (not open in an
    /// editor) as an outline: its headings and links, without the other block elements
    /// ([`crate::parse::Parsed::keep_outline`]), and its text packed
    /// ([`crate::document::Document::pack`]); opening a document parses it whole.
    /// For a language server, which holds every document but reads those elements only
    /// for open ones; callers that need them for a closed document use
    /// [`DocEntry::full_parsed`].
    pub fn keep_closed_as_outlines(&mut self) {
        self.outlines = true;
        self.ws.keep_disk_documents_as_outlines();
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
        mut text: Document,
        source: &str,
        mut parsed: Parsed,
        origin: Origin,
    ) -> BTreeSet<String> {
        if self.outlines && origin == Origin::Disk {
            parsed.keep_outline();
        }
        if let Some(lines) = &parsed.lines {
            text.share_lines(lines);
        }
        if self.outlines && origin == Origin::Disk {
            text.pack();
        }
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
            let (old_title, old_aliases) = old_surface.map_or((None, Vec::new()), |s| (s.3, s.4));
            if self.ws.config().wiki.style == WikiStyle::Title && old_title != new_surface.3 {
                for title in old_title.iter().chain(new_surface.3.iter()) {
                    let key = TargetKey::Wiki(wiki_key(title));
                    affected.extend(self.graph.dependents(&key).map(str::to_string));
                }
            }
            // `[[alias]]` links depend on the aliases.
            if old_aliases != new_surface.4 {
                for alias in old_aliases.iter().chain(new_surface.4.iter()) {
                    let key = TargetKey::Wiki(wiki_key(alias));
                    affected.extend(self.graph.dependents(&key).map(str::to_string));
                }
            }
        }
        affected
    }

    /// Removes a document (gone from disk); returns the documents that linked to it.
    pub fn remove_document(&mut self, path: &str) -> BTreeSet<String> {
        let aliases = self
            .ws
            .parsed(path)
            .map(|p| p.aliases())
            .unwrap_or_default();
        self.ws.remove(path);
        self.graph.remove(path);
        self.parsers.remove(path);
        self.stamps.remove(path);
        let mut affected = self.graph.affected_by(path);
        for alias in &aliases {
            let key = TargetKey::Wiki(wiki_key(alias));
            affected.extend(self.graph.dependents(&key).map(str::to_string));
        }
        affected
    }

    /// A document opened in an editor: its buffer (`text` at `version`) overrides the
    /// disk copy until [`Model::close_document`].
    ///
    /// The same as [`PendingOpen::parse`] and [`Model::finish_open`] in a row.
    pub fn open_document(&mut self, path: &str, text: &str, version: i32) -> BTreeSet<String> {
        self.finish_open(self.prepare_open(path, text, version).parse())
    }

    /// Applies an editor's changes in order, each against the result of the one before
    /// (LSP `didChange`), then re-parses only the top-level blocks they touched. A change
    /// is a replacement of a range (`Some`) or of the whole text (`None`); `to_bytes` turns
    /// a front end's range into a byte range of the text as it is at that change (the
    /// language server's position converter).
    ///
    /// The same as [`Model::prepare_change`], [`PendingChange::parse`] and
    /// [`Model::finish_change`] in a row.
    ///
    /// Errors: the document is not in the model, or a byte range is outside it.
    pub fn change_document<R>(
        &mut self,
        path: &str,
        version: i32,
        changes: &[(Option<R>, String)],
        to_bytes: impl Fn(&Document, &R) -> std::ops::Range<usize>,
    ) -> Result<BTreeSet<String>, ChangeError> {
        let pending = self.prepare_change(path, version, changes, to_bytes)?;
        Ok(self.finish_change(pending.parse()))
    }

    /// A document closed in the editor: the disk copy is current again, or the document
    /// is gone when there is none.
    pub fn close_document(&mut self, path: &str) -> BTreeSet<String> {
        self.parsers.remove(path);
        let (stamp, read) =
            read_markdown_stamped_in(self.root(), path, self.config().index.max_file_size);
        match read {
            Ok((text, _)) => {
                if let Some(s) = stamp {
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
        self.file_event_with(path, exists, &mut HashMap::new())
    }

    /// Several [`Model::file_event`]s in order, with the same result, but the Markdown
    /// files among them read and parsed first, in parallel: when a heading rename has
    /// rewritten the links of a dozen closed documents, their parses are shared among the
    /// cores instead of made one after another. Returns the union of the documents whose
    /// diagnostics may have changed.
    pub fn file_events(&mut self, events: &[(String, bool)]) -> BTreeSet<String> {
        let mut ready = self.read_in_parallel(events);
        let mut affected = BTreeSet::new();
        for (path, exists) in events {
            affected.extend(self.file_event_with(path, *exists, &mut ready));
        }
        affected
    }

    /// The Markdown files of `events` that [`Model::file_event`] would read (existing,
    /// not open, not a folder), each read once, and parsed when its text is not the one
    /// the model has.
    fn read_in_parallel(&self, events: &[(String, bool)]) -> HashMap<String, ReadFile> {
        let mut paths: Vec<&str> = events
            .iter()
            .filter(|(path, exists)| {
                *exists && is_markdown(path) && !self.parsers.contains_key(path.as_str())
            })
            .map(|(path, _)| path.as_str())
            .collect();
        paths.sort_unstable();
        paths.dedup();
        // One file is read where it is needed; threads pay off from two.
        if paths.len() < 2 {
            return HashMap::new();
        }
        let read = crate::workspace::parallel_map(&paths, |path| {
            if self.root().join(path).is_dir() {
                return None;
            }
            let (stamp, read) = self.read_from_disk(path);
            let read = read.map(|(text, hash, _)| {
                let known = self.ws.get(path).is_some_and(|e| e.source_hash == hash);
                let parsed = (!known).then(|| self.reparse(path, &text));
                (text, hash, parsed)
            });
            Some((stamp, read))
        });
        paths
            .into_iter()
            .zip(read)
            .filter_map(|(path, read)| Some((path.to_string(), read?)))
            .collect()
    }

    /// The Markdown file `path` read from disk: its stamp when the read began, and its
    /// text with the text's hash (not parsed), or why it is skipped.
    fn read_from_disk(&self, path: &str) -> ReadFile {
        let cap = self.config().index.max_file_size;
        let (stamp, read) = read_markdown_stamped_in(self.root(), path, cap);
        let read = read.map(|(text, _)| {
            let hash = hash_bytes(text.as_bytes());
            (text, hash, None)
        });
        (stamp, read)
    }

    /// The parse of `text`, read from disk for `path`: made from the model's parse of the
    /// text it had when the two differ only in link destinations (a heading renamed or a
    /// file moved rewrote its links, [`update_destinations`]), else parsed whole.
    fn reparse(&self, path: &str, text: &str) -> Parsed {
        self.ws
            .get(path)
            .and_then(|e| update_destinations(&e.doc.text(), text, &e.parsed))
            .unwrap_or_else(|| parse(text))
    }

    /// [`Model::file_event`], taking a Markdown file's text (and parse) from `ready` when
    /// [`Model::read_in_parallel`] read it; each is taken once, so a path that comes again
    /// in the same batch is read again.
    fn file_event_with(
        &mut self,
        path: &str,
        exists: bool,
        ready: &mut HashMap<String, ReadFile>,
    ) -> BTreeSet<String> {
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
            let (stamp, read) = ready
                .remove(path)
                .unwrap_or_else(|| self.read_from_disk(path));
            match read {
                Ok((text, hash, parsed)) => {
                    let unchanged = self.ws.get(path).is_some_and(|e| e.source_hash == hash);
                    if !unchanged {
                        let parsed = parsed.unwrap_or_else(|| self.reparse(path, &text));
                        affected.extend(self.set_parsed(
                            path,
                            Document::new(&text, 0),
                            &text,
                            parsed,
                            Origin::Disk,
                        ));
                    }
                    if let Some(s) = stamp {
                        self.stamps.insert(path.to_string(), s);
                    }
                }
                Err(reason) => {
                    tracing::info!("skipped {path}: {reason}");
                    affected.extend(self.remove_document(path));
                    self.ws.add_other(path);
                    // Skipped as it is now: read again only when it changes.
                    if let Some(s) = stamp {
                        self.stamps.insert(path.to_string(), s);
                    }
                }
            }
            self.add_parent_folders(path);
        } else if exists {
            if !self.ws.contains_other_path(path) {
                self.ws.add_other(path);
                affected.extend(self.graph.affected_by(path));
            }
            if crate::site::docfx::is_redirection_file(path) && self.ws.redirections_changed() {
                // Which pages are redirected changed: any link may resolve differently.
                affected.extend(self.ws.document_paths().map(str::to_owned));
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
    /// changed, drops the ones that are gone ([`Model::drift`], applied as
    /// [`Model::file_events`]), and reloads everything when the set of other files and
    /// folders changed (links to them resolve differently). Documents open in an editor
    /// keep their buffer.
    ///
    /// Errors: the root is gone.
    pub fn refresh_from_disk(&mut self) -> Result<(), WorkspaceError> {
        let root = self.root().to_path_buf();
        let disk = DiskState::read(&root, self.config())?;
        if self.others != disk.scan.other {
            let pre = Preread::read(&root, self.config())?;
            let (fresh, _) = Model::from_preread(&root, self.config().clone(), &pre, self.outlines);
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
        let events = self.drift(&disk);
        self.file_events(&events);
        Ok(())
    }

    /// The file events (`(path, exists)`, as [`Model::file_events`] takes them) that
    /// bring the model to `disk`, a walk of its root taken after the model read it:
    /// each Markdown file whose stamp differs from the one taken when the model read it
    /// (or that it never read), each document no longer there, and each other file or
    /// folder added or gone since the model's walk. Documents open in an editor are left
    /// out: their buffer is the text.
    ///
    /// A front end that starts watching only after the load (so that its own reads do
    /// not come back as events) applies these once the watch is live: a change made
    /// between the read and the watch is then not lost.
    pub fn drift(&self, disk: &DiskState) -> Vec<(String, bool)> {
        let mut events = Vec::new();
        for (path, now) in disk.scan.markdown.iter().zip(&disk.stamps) {
            let known = self.stamps.get(path);
            if self.parsers.contains_key(path) || (now.is_some() && known == now.as_ref()) {
                continue;
            }
            events.push((path.clone(), now.is_some()));
        }
        let found: std::collections::HashSet<&str> =
            disk.scan.markdown.iter().map(String::as_str).collect();
        events.extend(
            self.ws
                .document_paths()
                .filter(|p| !found.contains(p) && !self.parsers.contains_key(*p))
                .map(|p| (p.to_string(), false)),
        );
        let before: std::collections::HashSet<&str> =
            self.others.iter().map(String::as_str).collect();
        let now: std::collections::HashSet<&str> =
            disk.scan.other.iter().map(String::as_str).collect();
        events.extend(
            disk.scan
                .other
                .iter()
                .filter(|p| !before.contains(p.as_str()))
                .map(|p| (p.clone(), true)),
        );
        events.extend(
            self.others
                .iter()
                .filter(|p| !now.contains(p.as_str()))
                .map(|p| (p.clone(), false)),
        );
        // A Markdown file the walk found but the read skipped (gone by then, too large,
        // unreadable) is held as another file; gone now, it must go from there too.
        events.extend(
            self.ws
                .other_paths()
                .filter(|p| is_markdown(p) && !found.contains(p) && !now.contains(p))
                .filter(|p| !before.contains(p))
                .map(|p| (p.to_string(), false)),
        );
        events
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

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        std::fs::write(root.join(path), text).unwrap();
    }

    /// The documents of a model with their text hashes, headings and links.
    fn state(model: &Model) -> Vec<(String, u64, String)> {
        let ws = model.workspace();
        ws.document_paths()
            .map(|p| {
                let e = ws.get(p).unwrap();
                let parsed = format!("{:?} {:?}", e.parsed.headings, e.parsed.links);
                (p.to_string(), e.source_hash, parsed)
            })
            .collect()
    }

    #[test]
    fn a_batch_of_file_events_is_the_events_one_by_one() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "a.md", "# A\n\n## Old\n");
        write(root, "b.md", "[x](a.md#old)\n");
        write(root, "c.md", "[y](a.md#old) [e](e.md)\n");
        write(root, "d.md", "# D\n\n[a](a.md)\n");
        let (mut one_by_one, _) = Model::load(root, Config::default()).unwrap();
        let (mut batched, _) = Model::load(root, Config::default()).unwrap();

        // The heading renamed and one link with it; c.md written again as it was; d.md
        // deleted; e.md, a folder and a picture created; b.md reported twice.
        write(root, "a.md", "# A\n\n## New\n");
        write(root, "b.md", "[x](a.md#new)\n");
        write(root, "c.md", "[y](a.md#old) [e](e.md)\n");
        std::fs::remove_file(root.join("d.md")).unwrap();
        write(root, "e.md", "# E\n");
        std::fs::create_dir(root.join("sub")).unwrap();
        write(root, "sub/pic.png", "png");
        let events: Vec<(String, bool)> = [
            ("a.md", true),
            ("b.md", true),
            ("c.md", true),
            ("d.md", false),
            ("e.md", true),
            ("sub", true),
            ("sub/pic.png", true),
            ("b.md", true),
        ]
        .iter()
        .map(|(p, e)| (p.to_string(), *e))
        .collect();

        let mut expected = BTreeSet::new();
        for (path, exists) in &events {
            expected.extend(one_by_one.file_event(path, *exists));
        }
        let affected = batched.file_events(&events);
        // d.md was affected by the heading's rename before it was deleted.
        assert_eq!(
            affected.iter().map(String::as_str).collect::<Vec<_>>(),
            ["a.md", "b.md", "c.md", "d.md", "e.md"]
        );
        assert_eq!(affected, expected);
        assert_eq!(state(&batched), state(&one_by_one));
        assert_eq!(batched.graph(), one_by_one.graph());
        assert_eq!(
            batched.workspace().document_paths().collect::<Vec<_>>(),
            ["a.md", "b.md", "c.md", "e.md"]
        );
        assert!(batched.workspace().contains_other_path("sub/pic.png"));
    }

    /// Adding, changing or removing a note's aliases re-checks the notes that link by
    /// them, as a fresh load would.
    #[test]
    fn alias_changes_reach_the_notes_that_link_by_alias() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "task.md", "# Task\n");
        write(root, "a.md", "[[Chore]]\n");
        let (mut model, _) = Model::load(root, Config::default()).unwrap();
        let codes = |model: &Model| -> Vec<String> {
            crate::links::diagnostics(model.workspace(), "a.md")
                .iter()
                .map(|d| d.code.to_string())
                .collect()
        };
        assert_eq!(codes(&model), ["missing-wiki-target"]);
        let affected = model.set_document(
            "task.md",
            Document::new("---\naliases: [chore]\n---\n# Task\n", 0),
            Origin::Disk,
        );
        assert_eq!(
            affected.iter().map(String::as_str).collect::<Vec<_>>(),
            ["a.md", "task.md"]
        );
        assert!(codes(&model).is_empty());
        let affected = model.remove_document("task.md");
        assert_eq!(
            affected.iter().map(String::as_str).collect::<Vec<_>>(),
            ["a.md"]
        );
        assert_eq!(codes(&model), ["missing-wiki-target"]);
    }

    /// A heading renamed and the links to it rewritten on disk, as a rename's workspace
    /// edit does: the closed documents, updated from their old parse, hold the same parse,
    /// link graph and diagnostics as a model loaded afresh from the new files.
    #[test]
    fn rewritten_destinations_update_closed_documents_as_a_fresh_load() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let guide = "# Guide\n\nSign the [CLA][cla], then [read on](a.md#sign).\n\n\
                     ## Next\n\nSee [the top](#guide) and [missing](a.md#nowhere).\n\n\
                     [cla]: a.md#sign\n";
        write(root, "a.md", "# A\n\n## Sign\n");
        write(root, "b.md", guide);
        write(root, "c.md", "[x](a.md#sign)\n");
        let (mut model, _) = Model::load(root, Config::default()).unwrap();
        let old_b = parse(guide);

        let new_guide = guide.replace("a.md#sign", "a.md#sign-it");
        write(root, "a.md", "# A\n\n## Sign it\n");
        write(root, "b.md", &new_guide);
        write(root, "c.md", "[x](a.md#sign-it)\n");
        // b.md is the case the update serves: its old text and parse give the new one.
        let updated = update_destinations(guide, &new_guide, &old_b).unwrap();
        assert!(updated.same_content(&parse(&new_guide)));
        let events: Vec<(String, bool)> = ["a.md", "b.md", "c.md"]
            .iter()
            .map(|p| (p.to_string(), true))
            .collect();
        let affected = model.file_events(&events);
        assert_eq!(
            affected.iter().map(String::as_str).collect::<Vec<_>>(),
            ["a.md", "b.md", "c.md"]
        );

        let (fresh, _) = Model::load(root, Config::default()).unwrap();
        assert_eq!(state(&model), state(&fresh));
        assert_eq!(model.graph(), fresh.graph());
        for path in ["b.md", "c.md"] {
            let (ours, theirs) = (
                model.workspace().get(path).unwrap(),
                fresh.workspace().get(path).unwrap(),
            );
            assert!(ours.parsed.same_content(&theirs.parsed), "{path}");
            assert_eq!(ours.parsed.lines, theirs.parsed.lines, "{path}");
            assert_eq!(ours.doc.text(), theirs.doc.text(), "{path}");
            assert_eq!(
                crate::links::diagnostics(model.workspace(), path),
                crate::links::diagnostics(fresh.workspace(), path),
                "{path}"
            );
        }
        let codes: Vec<String> = crate::links::diagnostics(model.workspace(), "b.md")
            .iter()
            .map(|d| format!("{:?} {}", d.code, d.message))
            .collect();
        assert_eq!(codes.len(), 1, "{codes:?}");
        assert!(codes[0].contains("nowhere"), "{codes:?}");
    }

    /// Sets a file's modification time `secs` seconds after the epoch, so a rewrite of the
    /// same size within the file system's clock tick still counts as a change.
    fn touch(root: &Path, path: &str, secs: u64) {
        let file = std::fs::File::options()
            .write(true)
            .open(root.join(path))
            .unwrap();
        file.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
            .unwrap();
    }

    /// A file changed after the read but before the model was built from it (while a
    /// front end parses, before its watch is live) is in the drift: the stamps are the
    /// ones taken when the read began, not after the parse.
    #[test]
    fn a_change_between_the_read_and_the_model_is_in_the_drift() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "a.md", "# A\n");
        write(root, "b.md", "[a](a.md#a)\n");
        touch(root, "a.md", 1_000_000);
        touch(root, "b.md", 1_000_000);
        let pre = Preread::read(root, &Config::default()).unwrap();
        // Same size, another time: only the stamp tells.
        write(root, "a.md", "# Z\n");
        touch(root, "a.md", 2_000_000);
        let (mut model, _) = Model::from_preread(root, Config::default(), &pre, false);
        assert_eq!(
            model.workspace().get("a.md").unwrap().parsed.headings[0].text,
            "A"
        );

        let disk = DiskState::read(root, model.config()).unwrap();
        let events = model.drift(&disk);
        assert_eq!(events, [("a.md".to_string(), true)]);
        let affected = model.file_events(&events);
        assert_eq!(
            affected.iter().map(String::as_str).collect::<Vec<_>>(),
            ["a.md", "b.md"]
        );
        let (fresh, _) = Model::load(root, Config::default()).unwrap();
        assert_eq!(state(&model), state(&fresh));
        // Applied, the model has nothing left to catch up on.
        let disk = DiskState::read(root, model.config()).unwrap();
        assert_eq!(model.drift(&disk), []);
    }

    /// The drift names every kind of change since the read: a document changed, created
    /// and deleted, another file and a folder created and deleted; an open document is
    /// left alone. Applied, it gives the model a fresh load gives.
    #[test]
    fn the_drift_names_every_change_and_brings_the_model_to_a_fresh_load() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "a.md", "# A\n\n[pic](old.png) [b](b.md)\n");
        write(root, "b.md", "# B\n");
        write(root, "open.md", "# Open\n");
        write(root, "old.png", "png");
        std::fs::create_dir(root.join("gone")).unwrap();
        let (mut model, _) = Model::load(root, Config::default()).unwrap();
        model.open_document("open.md", "# Buffer\n", 3);

        write(root, "a.md", "# A\n\n[pic](new.png) [c](c.md) [b](b.md)\n");
        std::fs::remove_file(root.join("b.md")).unwrap();
        write(root, "c.md", "# C\n");
        write(root, "open.md", "# Disk\n");
        std::fs::remove_file(root.join("old.png")).unwrap();
        write(root, "new.png", "png");
        std::fs::remove_dir(root.join("gone")).unwrap();
        std::fs::create_dir(root.join("docs")).unwrap();

        let mut events = model.drift(&DiskState::read(root, model.config()).unwrap());
        events.sort();
        let expected: Vec<(String, bool)> = [
            ("a.md", true),
            ("b.md", false),
            ("c.md", true),
            ("docs", true),
            ("gone", false),
            ("new.png", true),
            ("old.png", false),
        ]
        .iter()
        .map(|(p, e)| (p.to_string(), *e))
        .collect();
        assert_eq!(events, expected);
        model.file_events(&events);
        assert_eq!(
            model.workspace().get("open.md").unwrap().doc.text(),
            "# Buffer\n"
        );
        model.close_document("open.md");
        let (fresh, _) = Model::load(root, Config::default()).unwrap();
        assert_eq!(state(&model), state(&fresh));
        assert_eq!(model.graph(), fresh.graph());
        for path in ["a.md", "c.md", "open.md"] {
            assert_eq!(
                crate::links::diagnostics(model.workspace(), path),
                crate::links::diagnostics(fresh.workspace(), path),
                "{path}"
            );
        }
        assert!(model.workspace().contains_other_path("new.png"));
        assert!(!model.workspace().contains_other_path("old.png"));
        assert!(!model.workspace().contains_other_path("gone"));
    }

    /// Closed documents kept as outlines give every document the same diagnostics as
    /// whole parses, on the fixture vaults; an opened document is parsed whole, and
    /// closing it (or a change on disk) makes it an outline again.
    #[test]
    fn outlines_of_closed_documents_give_the_same_diagnostics() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
        for name in [
            "every-link",
            "foam-docs",
            "k8s-community",
            "rust-book",
            "vscode-kb",
            "kb-eval",
        ] {
            let root = fixtures.join(name);
            let (full, _) = Model::load(&root, Config::default()).unwrap();
            let (mut outlined, _) = Model::load(&root, Config::default()).unwrap();
            outlined.keep_closed_as_outlines();
            let paths: Vec<String> = full
                .workspace()
                .document_paths()
                .map(str::to_string)
                .collect();
            assert!(paths.len() >= 2, "{name}");
            let (mut kept, mut all, mut packed) = (0, 0, 0);
            for path in &paths {
                let (f, o) = (
                    full.workspace().get(path).unwrap(),
                    outlined.workspace().get(path).unwrap(),
                );
                assert!(o.parsed.outline_only && !f.parsed.outline_only, "{path}");
                assert!(o.full_parsed().same_content(&f.parsed), "{path}");
                // The text is packed from PACK_MIN_BYTES on, and reads the same.
                let long = f.doc.len_bytes() >= crate::document::PACK_MIN_BYTES;
                assert_eq!(
                    (o.doc.is_packed(), f.doc.is_packed()),
                    (long, false),
                    "{path}"
                );
                assert_eq!(o.doc.text(), f.doc.text(), "{path}");
                packed += usize::from(long);
                (kept, all) = (
                    kept + o.parsed.elements.len(),
                    all + f.parsed.elements.len(),
                );
                assert_eq!(
                    crate::links::diagnostics(outlined.workspace(), path),
                    crate::links::diagnostics(full.workspace(), path),
                    "{name}/{path}"
                );
            }
            assert!(kept * 2 < all, "{name}: {kept} of {all} elements kept");
            assert!(packed >= 1, "{name}: {packed} texts packed");
        }

        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "a.md", "# A\n\n- one\n- [b](b.md)\n");
        let (mut model, _) = Model::load(root, Config::default()).unwrap();
        model.keep_closed_as_outlines();
        let kinds = |m: &Model| -> Vec<crate::parse::ElementKind> {
            let e = m.workspace().get("a.md").unwrap();
            e.parsed.elements.iter().map(|e| e.kind).collect()
        };
        use crate::parse::ElementKind::{Document as Doc, Heading, ListItem, Paragraph};
        // A tight list's items hold no paragraph element.
        assert_eq!(kinds(&model), [Heading]);
        model.open_document("a.md", "# A\n\n- one\n- [b](b.md)\n", 1);
        assert_eq!(kinds(&model), [Doc, Heading, ListItem, ListItem]);
        model.close_document("a.md");
        assert_eq!(kinds(&model), [Heading]);
        write(root, "a.md", "# A\n\n[b](b.md)\n");
        model.file_event("a.md", true);
        assert_eq!(kinds(&model), [Heading, Paragraph]);

        // A text long enough is packed while closed, whole while open.
        let long = format!("# C\n\n{}", "Text with é. ".repeat(40));
        write(root, "c.md", &long);
        model.file_event("c.md", true);
        let packed = |m: &Model| m.workspace().get("c.md").unwrap().doc.is_packed();
        assert!(packed(&model));
        model.open_document("c.md", &long, 1);
        assert!(!packed(&model));
        model.close_document("c.md");
        assert!(packed(&model));
        assert_eq!(model.workspace().get("c.md").unwrap().doc.text(), long);
    }

    /// A load of `root` (as `pre` read it) through the cache file `file`, with what the
    /// load would write to it.
    fn load_cached(
        root: &Path,
        pre: &Preread,
        file: &Path,
    ) -> (Model, LoadReport, Option<OutlineSave>) {
        let cache = OutlineCache::at(file.to_path_buf(), root);
        let (model, report) = Model::build(root, Config::default(), pre, true, &cache);
        let save = cache.save(model.workspace().disk_outlines());
        (model, report, save)
    }

    /// A load with the outline cache: the first one parses every document and writes the
    /// cache; an unchanged workspace reopened takes every outline from it and gives the
    /// same model as the parse (documents, outlines with their line index, diagnostics);
    /// the same load again writes nothing.
    #[test]
    fn an_unchanged_workspace_reopened_starts_from_the_outline_cache() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
        let cache_dir = tempfile::tempdir().unwrap();
        for name in ["every-link", "foam-docs", "k8s-community", "rust-book"] {
            let root = fixtures.join(name).canonicalize().unwrap();
            let file = cache_dir.path().join(format!("{name}.bin"));
            let pre = Preread::read(&root, &Config::default()).unwrap();
            let load = || load_cached(&root, &pre, &file);
            let (parsed, report, save) = load();
            assert_eq!(report.from_cache, 0, "{name}");
            let save = save.expect("a first load writes the cache");
            // One entry per distinct text.
            let texts: std::collections::HashSet<u64> = parsed
                .workspace()
                .document_paths()
                .map(|p| parsed.workspace().get(p).unwrap().source_hash)
                .collect();
            assert_eq!(save.len(), texts.len(), "{name}");
            save.write().unwrap();

            let (cached, report, save) = load();
            assert_eq!(report.from_cache, report.loaded, "{name}");
            assert!(save.is_none(), "{name}: nothing changed, nothing to write");
            let paths: Vec<&str> = parsed.workspace().document_paths().collect();
            assert_eq!(
                cached.workspace().document_paths().collect::<Vec<_>>(),
                paths,
                "{name}"
            );
            for path in paths {
                let (p, c) = (
                    parsed.workspace().get(path).unwrap(),
                    cached.workspace().get(path).unwrap(),
                );
                assert!(c.parsed.outline_only, "{name}/{path}");
                assert!(c.parsed.same_content(&p.parsed), "{name}/{path}");
                assert_eq!(
                    format!("{:?}", c.parsed.lines),
                    format!("{:?}", p.parsed.lines),
                    "{name}/{path}"
                );
                assert_eq!(c.source_hash, p.source_hash, "{name}/{path}");
                assert_eq!(c.doc.text(), p.doc.text(), "{name}/{path}");
                assert_eq!(
                    crate::links::diagnostics(cached.workspace(), path),
                    crate::links::diagnostics(parsed.workspace(), path),
                    "{name}/{path}"
                );
            }
        }
    }

    /// The outline cache is used for exactly the texts it holds: a changed document is
    /// parsed again (and the cache written again), and a damaged cache file, one written
    /// for another root or one cut short is not used at all.
    #[test]
    fn the_outline_cache_holds_texts_not_files_and_refuses_damaged_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("kb");
        std::fs::create_dir(&root).unwrap();
        let root = root.canonicalize().unwrap();
        write(
            &root,
            "a.md",
            "---\ntitle: A\n---\n# A\n\n[b](b.md#two) [[c]]\n",
        );
        write(&root, "b.md", "# B\n\n## Two\n\n[gone](gone.md)\n");
        write(&root, "c.md", "# C\n\n[x]: b.md\n");
        let file = dir.path().join("cache.bin");
        let load = |root: &Path, file: &Path| {
            let pre = Preread::read(root, &Config::default()).unwrap();
            let (model, report, save) = load_cached(root, &pre, file);
            (model, report.from_cache, save)
        };
        load(&root, &file).2.unwrap().write().unwrap();
        assert_eq!(load(&root, &file).1, 3);

        // b.md changed: parsed again, its new heading there; a.md's fragment now broken.
        write(&root, "b.md", "# B\n\n## Three\n");
        let (model, hits, save) = load(&root, &file);
        assert_eq!(hits, 2);
        let headings: Vec<&str> = model
            .workspace()
            .get("b.md")
            .unwrap()
            .parsed
            .headings
            .iter()
            .map(|h| h.text.as_str())
            .collect();
        assert_eq!(headings, ["B", "Three"]);
        let codes: Vec<&str> = crate::links::diagnostics(model.workspace(), "a.md")
            .iter()
            .map(|d| d.code.as_str())
            .collect();
        assert_eq!(codes, ["missing-heading"]);
        save.unwrap().write().unwrap();
        // A file renamed keeps its text, so its outline.
        std::fs::rename(root.join("c.md"), root.join("d.md")).unwrap();
        assert_eq!(load(&root, &file).1, 3);

        let good = std::fs::read(&file).unwrap();
        let mut damaged = good.clone();
        let last = damaged.len() - 1;
        damaged[last] ^= 0x20;
        std::fs::write(&file, &damaged).unwrap();
        assert_eq!(load(&root, &file).1, 0, "a damaged file");
        std::fs::write(&file, &good[..good.len() - 10]).unwrap();
        assert_eq!(load(&root, &file).1, 0, "a file cut short");
        std::fs::write(&file, &good).unwrap();
        let other = dir.path().join("other");
        std::fs::create_dir(&other).unwrap();
        std::fs::copy(root.join("a.md"), other.join("a.md")).unwrap();
        assert_eq!(
            load(&other.canonicalize().unwrap(), &file).1,
            0,
            "another root"
        );
        assert_eq!(load(&root, &file).1, 3, "the good file again");
    }

    /// A load whose every text is in the cache writes nothing, also when two documents
    /// share a text, and marks the file used (pruning goes by that time); a FIFO or a
    /// folder where the cache file should be is not waited on or read: everything is
    /// parsed.
    #[test]
    fn an_unchanged_cache_is_kept_and_marked_used_and_a_fifo_is_never_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("kb");
        std::fs::create_dir(&root).unwrap();
        let root = root.canonicalize().unwrap();
        write(&root, "a.md", "# Same\n");
        write(&root, "b.md", "# Same\n");
        write(&root, "c.md", "# C\n\n[a](a.md)\n");
        let file = dir.path().join("cache.bin");
        let load = |file: &Path| {
            let pre = Preread::read(&root, &Config::default()).unwrap();
            let (_, report, save) = load_cached(&root, &pre, file);
            (report.from_cache, save)
        };
        let (_, save) = load(&file);
        let save = save.unwrap();
        assert_eq!(save.len(), 2, "one entry per distinct text");
        save.write().unwrap();
        let month_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(40 * 86400);
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(month_ago)
            .unwrap();
        let (hits, save) = load(&file);
        assert_eq!(hits, 3);
        assert!(save.is_none(), "nothing changed: nothing to write");
        let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
        assert!(modified.elapsed().unwrap() < std::time::Duration::from_secs(600));

        let fifo = dir.path().join("fifo.bin");
        let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo reads the NUL-terminated path only.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        assert_eq!(load(&fifo).0, 0);
        let folder = dir.path().join("folder.bin");
        std::fs::create_dir(&folder).unwrap();
        assert_eq!(load(&folder).0, 0);
    }

    /// The table-of-contents marker `[[toc]]` is not a broken link when it is a paragraph
    /// of its own, also in a closed document kept as an outline; inside a sentence it is.
    #[test]
    fn an_outline_keeps_the_table_of_contents_marker() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            "b.md",
            "# B\n\n[[toc]]\n\n## Part\n\nSee [[toc]] here.\n",
        );
        let (mut model, _) = Model::load(root, Config::default()).unwrap();
        let whole = crate::links::diagnostics(model.workspace(), "b.md");
        model.keep_closed_as_outlines();
        let outlined = crate::links::diagnostics(model.workspace(), "b.md");
        assert_eq!(outlined, whole);
        // Only the one in the sentence, on its target `toc`.
        assert_eq!(outlined.len(), 1);
        assert_eq!(outlined[0].range, 29..32);
    }

    /// A Markdown file the read skipped (here too large; also one deleted between the
    /// walk and the read) is held as another file, so links to it are not broken; when
    /// it is deleted, the drift says so and the links to it break.
    #[test]
    fn a_skipped_markdown_file_that_goes_is_in_the_drift() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "a.md", "[big](big.md)\n");
        write(root, "big.md", &"x".repeat(100));
        let mut config = Config::default();
        config.index.max_file_size = 50;
        let (mut model, report) = Model::load(root, config).unwrap();
        assert_eq!(report.skipped.len(), 1);
        assert!(model.workspace().contains_other_path("big.md"));
        assert_eq!(crate::links::diagnostics(model.workspace(), "a.md"), []);

        std::fs::remove_file(root.join("big.md")).unwrap();
        let events = model.drift(&DiskState::read(root, model.config()).unwrap());
        assert_eq!(events, [("big.md".to_string(), false)]);
        model.file_events(&events);
        assert!(!model.workspace().contains_other_path("big.md"));
        assert_eq!(
            crate::links::diagnostics(model.workspace(), "a.md").len(),
            1
        );
    }
}
