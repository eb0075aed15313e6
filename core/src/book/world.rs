//! The Typst world of one export: one generated source, the book's images as virtual
//! files, and the fonts of this machine.
//!
//! Nothing outside is reachable from the generated source: [`BookWorld::file`] answers
//! only the image files the export registered, and there are no packages. Fonts are the
//! ones `fontdb` finds on the system (fontconfig's folders, `~/.local/share/fonts`) plus
//! those embedded in the binary (Libertinus Serif, New Computer Modern, DejaVu Sans Mono
//! from `typst-assets`); the search runs once per process.

use std::collections::HashMap;
use std::sync::OnceLock;

use typst::diag::{FileError, FileResult};
use typst::foundations::{Bytes, Datetime};
use typst::syntax::{FileId, Source, VirtualPath};
use typst::text::{Font, FontBook};
use typst::utils::LazyHash;
use typst::{Library, LibraryExt, World};
use typst_kit::fonts::{FontSearcher, Fonts};

/// The fonts of this machine and the embedded ones, searched once.
pub fn fonts() -> &'static (LazyHash<FontBook>, Fonts) {
    static FONTS: OnceLock<(LazyHash<FontBook>, Fonts)> = OnceLock::new();
    FONTS.get_or_init(|| {
        let fonts = FontSearcher::new()
            .include_system_fonts(true)
            .include_embedded_fonts(true)
            .search();
        (LazyHash::new(fonts.book.clone()), fonts)
    })
}

fn library() -> &'static LazyHash<Library> {
    static LIBRARY: OnceLock<LazyHash<Library>> = OnceLock::new();
    LIBRARY.get_or_init(|| LazyHash::new(Library::builder().build()))
}

/// One export's world.
pub struct BookWorld {
    main: Source,
    files: HashMap<FileId, Bytes>,
}

impl BookWorld {
    /// A world whose main file holds `source`, with `files` (virtual path, bytes)
    /// readable by the source.
    pub fn new(source: String, files: Vec<(String, Vec<u8>)>) -> BookWorld {
        let main_id = FileId::new(None, VirtualPath::new("/book.typ"));
        BookWorld {
            main: Source::new(main_id, source),
            files: files
                .into_iter()
                .map(|(path, bytes)| {
                    (
                        FileId::new(None, VirtualPath::new(&path)),
                        Bytes::new(bytes),
                    )
                })
                .collect(),
        }
    }

    /// The generated source.
    pub fn source_text(&self) -> &str {
        self.main.text()
    }
}

impl World for BookWorld {
    fn library(&self) -> &LazyHash<Library> {
        library()
    }

    fn book(&self) -> &LazyHash<FontBook> {
        &fonts().0
    }

    fn main(&self) -> FileId {
        self.main.id()
    }

    fn source(&self, id: FileId) -> FileResult<Source> {
        if id == self.main.id() {
            Ok(self.main.clone())
        } else {
            Err(FileError::NotFound(id.vpath().as_rootless_path().into()))
        }
    }

    fn file(&self, id: FileId) -> FileResult<Bytes> {
        self.files
            .get(&id)
            .cloned()
            .ok_or_else(|| FileError::NotFound(id.vpath().as_rootless_path().into()))
    }

    fn font(&self, index: usize) -> Option<Font> {
        fonts().1.fonts.get(index)?.get()
    }

    fn today(&self, _offset: Option<i64>) -> Option<Datetime> {
        None
    }
}
