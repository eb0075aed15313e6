//! What the server knows while its workspace folders load: first only that they are
//! being read, then the outline of every document (core `parse::outline`, a line scan of
//! headings and titles), until the full parse is in the session.
//!
//! Loading a folder is a walk and a read (tens to hundreds of milliseconds), then the full
//! parse and link index (seconds of CPU on thousands of notes). `workspace/symbol`
//! answers from the outlines as soon as the read is done instead of waiting for the parse;
//! every other request waits for the session, which the loader holds until the parse is
//! in. Outline answers match the full ones on more than 99% of headings of real folders
//! (`examples/outline_agreement`) but carry no tags.

use std::path::PathBuf;
use std::sync::Arc;

use folio_core::document::Encoding;
use folio_core::parse::outline::{Outline, outline};
use folio_core::workspace::{Preread, parallel_map};

use crate::session::ReadRoot;

/// How far loading the workspace folders named in `initialize` is.
#[derive(Clone, Debug, Default)]
pub enum Phase {
    /// Nothing loads (the folders are in the session, or there were none).
    #[default]
    Ready,
    /// The folders are being walked and read.
    Reading,
    /// Read and outlined; the full parse runs.
    Outlined(Arc<Outlines>),
}

/// The outlines of every document of the folders being loaded.
#[derive(Debug)]
pub struct Outlines {
    /// The negotiated position encoding.
    pub encoding: Encoding,
    /// Per folder: its path, its texts as read, and per document read (in the order of
    /// `texts.scan.markdown`, skipped files left out) its index there and its outline.
    pub roots: Vec<OutlinedRoot>,
}

/// One folder's outlines.
#[derive(Debug)]
pub struct OutlinedRoot {
    /// The root folder.
    pub folder: PathBuf,
    /// The walk and the texts (shared with the loader, which parses them).
    pub texts: Arc<Preread>,
    /// Per document read: its index in `texts.scan.markdown` and its outline.
    pub documents: Vec<(usize, Outline)>,
    /// Whether the folder is an Obsidian vault (its notes are titled by file name).
    pub vault: bool,
}

impl OutlinedRoot {
    /// The KB-relative path of document `i` of `documents`.
    pub fn path(&self, i: usize) -> &str {
        &self.texts.scan.markdown[self.documents[i].0]
    }
}

impl Outlines {
    /// Outlines the documents of `reads` (in parallel; the texts are shared, not copied).
    pub fn new(reads: &[&ReadRoot], encoding: Encoding) -> Outlines {
        let roots = reads
            .iter()
            .map(|read| {
                let read_ok: Vec<(usize, &str)> = read
                    .texts
                    .texts
                    .iter()
                    .enumerate()
                    .filter_map(|(i, r)| Some((i, r.as_ref().ok()?.0.as_str())))
                    .collect();
                let documents = parallel_map(&read_ok, |(i, text)| (*i, outline(text)));
                OutlinedRoot {
                    folder: read.folder.clone(),
                    texts: Arc::clone(&read.texts),
                    documents,
                    vault: read.vault,
                }
            })
            .collect();
        Outlines { encoding, roots }
    }
}
