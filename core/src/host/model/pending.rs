//! An editor's change to an open document in three steps, so that a front end can parse
//! a large document without holding the model: [`Model::prepare_change`] makes the new
//! text (cheap: rope edits), [`PendingChange::parse`] parses it (the costly part, with no
//! access to the model), and [`Model::finish_change`] installs the parse — or, when the
//! document changed in between, applies the change again to what the model now has.
//! Opening a document goes the same way: [`PendingOpen::parse`], then
//! [`Model::finish_open`].

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{ChangeError, Model};
use crate::document::{Document, TextEdit};
use crate::parse::incremental::IncrementalParser;
use crate::parse::{Parsed, parse};
use crate::workspace::Origin;

/// A change whose new text is made and whose parse is not: the result of
/// [`Model::prepare_change`]. Holds the new text, the text and parse it was made from, and
/// the document's incremental parser (the model keeps an empty one meanwhile).
#[derive(Debug)]
pub struct PendingChange {
    path: String,
    /// The replacements as byte ranges of the text before each (`None`: the whole text),
    /// to apply again when the model's document changed before [`Model::finish_change`].
    edits: Vec<(Option<std::ops::Range<usize>>, String)>,
    version: i32,
    text: Document,
    source: String,
    old_source: String,
    previous: Arc<Parsed>,
    parser: Option<IncrementalParser>,
}

/// A document an editor opened, not parsed yet: [`PendingOpen::parse`] (on any thread),
/// then [`Model::finish_open`]. The model is unchanged until then.
#[derive(Debug)]
pub struct PendingOpen {
    path: String,
    text: String,
    version: i32,
    /// Texts longer than this keep no syntax trees ([`Model::keep_blocks_up_to`]).
    keep_blocks_up_to: usize,
}

/// A parsed open document, ready for [`Model::finish_open`].
#[derive(Debug)]
pub struct ParsedOpen {
    pending: PendingOpen,
    parser: IncrementalParser,
    parsed: Parsed,
}

impl PendingOpen {
    /// The editor's buffer `text` at `version` for the document `path` (relative to the
    /// root).
    pub fn new(path: &str, text: &str, version: i32) -> PendingOpen {
        PendingOpen {
            path: path.to_string(),
            text: text.to_string(),
            version,
            keep_blocks_up_to: usize::MAX,
        }
    }

    /// The text's length in bytes.
    pub fn len(&self) -> usize {
        self.text.len()
    }

    /// True when the text is empty.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Parses the whole text, keeping its blocks for later edits unless it is longer than
    /// the model's limit (linear in its length; needs no model).
    pub fn parse(self) -> ParsedOpen {
        let (parser, parsed) =
            IncrementalParser::keeping_blocks_up_to(&self.text, self.keep_blocks_up_to);
        ParsedOpen {
            pending: self,
            parser,
            parsed,
        }
    }
}

impl ParsedOpen {
    /// The document's path, relative to the root.
    pub fn path(&self) -> &str {
        &self.pending.path
    }
}

/// A parsed change, ready for [`Model::finish_change`].
#[derive(Debug)]
pub struct ParsedChange {
    pending: PendingChange,
    parsed: Parsed,
}

impl ParsedChange {
    /// The document's path, relative to the root.
    pub fn path(&self) -> &str {
        &self.pending.path
    }
}

impl PendingChange {
    /// The document's path, relative to the root.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The new text's length in bytes.
    pub fn len(&self) -> usize {
        self.source.len()
    }

    /// True when the new text is empty.
    pub fn is_empty(&self) -> bool {
        self.source.is_empty()
    }

    /// Parses the new text: only the top-level blocks the change touched when the
    /// document's incremental parser could be used, else the whole text. Linear in the
    /// length of the text; needs no model, so it can run on another thread.
    pub fn parse(mut self) -> ParsedChange {
        let parsed = match &mut self.parser {
            Some(parser) => parser.update(&self.old_source, &self.source, &self.previous),
            None => parse(&self.source),
        };
        ParsedChange {
            pending: self,
            parsed,
        }
    }
}

impl Model {
    /// The longest text (bytes) whose top-level blocks an open document keeps for
    /// incremental parsing: `[index] max_file_size` (16 MiB by default), the size above
    /// which the index leaves a file out. A longer buffer is parsed whole at every change
    /// and keeps no syntax trees, which would otherwise take many times its size.
    pub fn keep_blocks_up_to(&self) -> usize {
        usize::try_from(self.ws.config().index.max_file_size).unwrap_or(usize::MAX)
    }

    /// An editor's buffer `text` at `version` of the document `path` to open, under this
    /// model's limit for keeping blocks ([`Model::keep_blocks_up_to`]); parse it with
    /// [`PendingOpen::parse`], then install it with [`Model::finish_open`].
    pub fn prepare_open(&self, path: &str, text: &str, version: i32) -> PendingOpen {
        PendingOpen {
            keep_blocks_up_to: self.keep_blocks_up_to(),
            ..PendingOpen::new(path, text, version)
        }
    }

    /// True when the open document `path` is longer than [`Model::keep_blocks_up_to`], so
    /// each of its changes is parsed whole.
    pub fn parses_whole_at_each_change(&self, path: &str) -> bool {
        let len = self.ws.get(path).map_or(0, |e| e.doc.len_bytes());
        self.parsers.get(path).is_some_and(|p| p.over_limit(len))
    }

    /// Installs a document an editor opened: its buffer overrides the disk copy until
    /// [`Model::close_document`]. Returns the documents whose diagnostics may have
    /// changed.
    pub fn finish_open(&mut self, opened: ParsedOpen) -> BTreeSet<String> {
        let ParsedOpen {
            pending,
            parser,
            parsed,
        } = opened;
        let PendingOpen {
            path,
            text,
            version,
            ..
        } = pending;
        self.parsers.insert(path.clone(), parser);
        self.stamps.remove(&path);
        self.set_parsed(
            &path,
            Document::editable(&text, version),
            &text,
            parsed,
            Origin::Editor,
        )
    }

    /// Makes the text of an editor's change to the open document `path` (the changes of
    /// one LSP `didChange`, as in [`Model::change_document`]) without parsing it. The
    /// model is unchanged but for the document's incremental parser, which the pending
    /// change carries until [`Model::finish_change`].
    ///
    /// Errors: the document is not in the model, or a byte range is outside it.
    pub fn prepare_change<R>(
        &mut self,
        path: &str,
        version: i32,
        changes: &[(Option<R>, String)],
        to_bytes: impl Fn(&Document, &R) -> std::ops::Range<usize>,
    ) -> Result<PendingChange, ChangeError> {
        let entry = self
            .ws
            .get(path)
            .ok_or_else(|| ChangeError::NotOpen(path.to_string()))?;
        let previous = Arc::clone(&entry.parsed);
        let mut text = entry.doc.clone();
        let old_source = text.text();
        let mut edits = Vec::with_capacity(changes.len());
        for (range, new_text) in changes {
            let range = range.as_ref().map(|r| to_bytes(&text, r));
            apply(&mut text, range.clone(), new_text, version)?;
            edits.push((range, new_text.clone()));
        }
        text.set_version(version);
        let source = text.text();
        let parser = self.parsers.get_mut(path).map(std::mem::take);
        Ok(PendingChange {
            path: path.to_string(),
            edits,
            version,
            text,
            source,
            old_source,
            previous,
            parser,
        })
    }

    /// Installs a parsed change; returns the documents whose diagnostics may have
    /// changed. When the model's document is no longer the one the change was made from
    /// (the root was loaded again meanwhile, say), the change's edits are applied again
    /// to the document as it is now and parsed whole; when the document is gone, nothing
    /// changes.
    pub fn finish_change(&mut self, change: ParsedChange) -> BTreeSet<String> {
        let ParsedChange { pending, parsed } = change;
        let path = pending.path.as_str();
        let current = self.ws.get(path).map(|e| Arc::clone(&e.parsed));
        match current {
            Some(current) if Arc::ptr_eq(&current, &pending.previous) => {
                if let (Some(parser), Some(slot)) = (pending.parser, self.parsers.get_mut(path)) {
                    *slot = parser;
                }
                self.set_parsed(path, pending.text, &pending.source, parsed, Origin::Editor)
            }
            Some(_) => self.redo_change(&pending).unwrap_or_default(),
            None => BTreeSet::new(),
        }
    }

    /// Applies `pending`'s edits again to the document as the model has it now, and
    /// parses it whole.
    fn redo_change(&mut self, pending: &PendingChange) -> Result<BTreeSet<String>, ChangeError> {
        let path = pending.path.as_str();
        let mut text = self
            .ws
            .get(path)
            .ok_or_else(|| ChangeError::NotOpen(path.to_string()))?
            .doc
            .clone();
        for (range, new_text) in &pending.edits {
            apply(&mut text, range.clone(), new_text, pending.version)?;
        }
        text.set_version(pending.version);
        let source = text.text();
        let (parser, parsed) =
            IncrementalParser::keeping_blocks_up_to(&source, self.keep_blocks_up_to());
        if let Some(slot) = self.parsers.get_mut(path) {
            *slot = parser;
        }
        Ok(self.set_parsed(path, text, &source, parsed, Origin::Editor))
    }
}

/// Replaces `range` of `text` (the whole text when `None`) with `new_text`.
fn apply(
    text: &mut Document,
    range: Option<std::ops::Range<usize>>,
    new_text: &str,
    version: i32,
) -> Result<(), ChangeError> {
    match range {
        None => *text = Document::new(new_text, version),
        Some(range) => text.apply_edits(&[TextEdit {
            range,
            new_text: new_text.to_string(),
        }])?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    /// A model of an empty folder with `a.md` open at version 1 with `text`.
    fn model_with(dir: &std::path::Path, text: &str) -> Model {
        let mut model = Model::single_folder(dir, Config::default());
        model.open_document("a.md", text, 1);
        model
    }

    fn headings(model: &Model) -> Vec<String> {
        let parsed = model.workspace().parsed("a.md").unwrap();
        parsed.headings.iter().map(|h| h.text.clone()).collect()
    }

    fn source(model: &Model) -> String {
        model.workspace().get("a.md").unwrap().doc.text()
    }

    /// Byte ranges as the front end's ranges, for these tests.
    fn bytes(_: &Document, r: &std::ops::Range<usize>) -> std::ops::Range<usize> {
        r.clone()
    }

    #[test]
    fn a_parsed_change_installs_the_new_text_and_its_parse() {
        let dir = tempfile::tempdir().unwrap();
        let mut model = model_with(dir.path(), "# One\n\ntext\n");
        let pending = model
            .prepare_change("a.md", 2, &[(Some(2..5), "Two".to_string())], bytes)
            .unwrap();
        assert_eq!((pending.path(), pending.len()), ("a.md", 12));
        // Nothing changed before the change is finished.
        assert_eq!(headings(&model), ["One"]);
        let affected = model.finish_change(pending.parse());
        assert_eq!(affected, BTreeSet::from(["a.md".to_string()]));
        assert_eq!(headings(&model), ["Two"]);
        assert_eq!(source(&model), "# Two\n\ntext\n");
        assert_eq!(model.workspace().get("a.md").unwrap().doc.version(), 2);
        assert!(model.is_open("a.md"));
    }

    #[test]
    fn a_change_to_a_document_replaced_meanwhile_is_applied_again_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut model = model_with(dir.path(), "# One\n\ntext\n");
        let pending = model
            .prepare_change("a.md", 3, &[(Some(2..5), "Two".to_string())], bytes)
            .unwrap();
        // The buffer is put in again (a configuration change reloads the root, say).
        model.open_document("a.md", "# Six\n\nmore text\n", 2);
        model.finish_change(pending.parse());
        assert_eq!(source(&model), "# Two\n\nmore text\n");
        assert_eq!(headings(&model), ["Two"]);
        // Its parser works on from the text it now has.
        let next = model
            .prepare_change("a.md", 4, &[(Some(0..0), "## Top\n\n".to_string())], bytes)
            .unwrap();
        model.finish_change(next.parse());
        assert_eq!(headings(&model), ["Top", "Two"]);
    }

    #[test]
    fn a_change_to_a_document_gone_meanwhile_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut model = model_with(dir.path(), "# One\n");
        let pending = model
            .prepare_change("a.md", 2, &[(None, "# Two\n".to_string())], bytes)
            .unwrap();
        model.remove_document("a.md");
        assert_eq!(model.finish_change(pending.parse()), BTreeSet::new());
        assert!(model.workspace().get("a.md").is_none());
    }

    #[test]
    fn a_range_outside_the_document_is_an_error_and_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut model = model_with(dir.path(), "# One\n");
        let err = model
            .prepare_change("a.md", 2, &[(Some(3..99), "x".to_string())], bytes)
            .unwrap_err();
        assert!(matches!(err, ChangeError::Edit(_)), "{err}");
        assert_eq!(source(&model), "# One\n");
        let err = model
            .prepare_change("b.md", 2, &[(None, "x".to_string())], bytes)
            .unwrap_err();
        assert_eq!(err.to_string(), "change to `b.md`, which is not open");
    }
}
