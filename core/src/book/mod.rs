//! PDF books from Markdown documents (`kb_create_pdf_book`).
//!
//! A document is turned into Typst source ([`markup`]) under a preamble for the page
//! format and style ([`style`]), compiled by Typst used as a library with the document's
//! images as virtual files ([`world`]), and exported with Typst's PDF exporter (krilla):
//! text stays text (fonts subset and embedded), headings become PDF bookmarks and a
//! table of contents, links to headings are clickable, streams are compressed and an
//! image used twice is embedded once. Images are prepared for the profile first
//! ([`images`]).
//!
//! `host::book` writes the PDF through the root's writer: the output must be a `.pdf`
//! path under the root, and an earlier export there is replaced atomically (a file that
//! is not a PDF is never replaced). Markdown, assets and the index are not touched.

pub mod images;
pub mod markup;
pub mod style;
pub mod world;

use typst::layout::PagedDocument;

pub use style::{BookOptions, PageFormat, Profile, Style};

/// A rendered book.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Book {
    /// The PDF file.
    pub pdf: Vec<u8>,
    /// Problems worth telling the reader (missing or remote images, raw HTML left out,
    /// no font for some script), one sentence each.
    pub warnings: Vec<String>,
}

/// A script that needs fonts beyond the embedded Latin ones: its name, a sample
/// character a font must cover, and which characters belong to it.
type Script = (&'static str, char, fn(char) -> bool);

/// The scripts [`font_warnings`] checks.
const SCRIPTS: [Script; 3] = [
    ("Japanese kana", 'あ', |c| {
        matches!(c as u32, 0x3040..=0x30ff)
    }),
    (
        "Chinese and Japanese kanji",
        '漢',
        |c| matches!(c as u32, 0x4e00..=0x9fff | 0x3400..=0x4dbf),
    ),
    ("Korean", '한', |c| matches!(c as u32, 0xac00..=0xd7af)),
];

/// Warnings for scripts in `text` that no installed font covers.
fn font_warnings(text: &str, book: &typst::text::FontBook) -> Vec<String> {
    let mut out = Vec::new();
    for (name, sample, is) in SCRIPTS {
        if !text.chars().any(is) {
            continue;
        }
        let covered = (0..)
            .map_while(|i| book.info(i))
            .any(|info| info.coverage.contains(sample as u32));
        if !covered {
            out.push(format!(
                "no installed font covers {name}; that text is missing from the PDF (install a CJK font, e.g. Debian's fonts-noto-cjk)"
            ));
        }
    }
    out
}

/// Renders the Markdown `text` of document `path` (KB-relative; images are read
/// relative to it, through the path policy) as a PDF.
///
/// Errors: Typst rejected the generated source or could not write the PDF (a bug in
/// folio), in words.
pub fn render(
    root: &std::path::Path,
    path: &str,
    text: &str,
    options: &BookOptions,
) -> Result<Book, String> {
    let generated = markup::generate(root, path, text, options);
    let lang = style::Lang::detect(text);
    let stacks = style::font_stacks(options.style, lang);
    let (book, _) = world::fonts();
    let installed = |names: &[&'static str]| -> Vec<&'static str> {
        names
            .iter()
            .copied()
            .filter(|n| book.contains_family(&n.to_lowercase()))
            .collect()
    };
    let mut body_fonts = installed(&stacks.body);
    let mut mono_fonts = installed(&stacks.mono);
    // The embedded fonts are always there; keep the lists non-empty regardless.
    if body_fonts.is_empty() {
        body_fonts.push("Libertinus Serif");
    }
    if mono_fonts.is_empty() {
        mono_fonts.push("DejaVu Sans Mono");
    }
    let source = format!(
        "{}\n{}",
        style::preamble(options, &generated.title, lang, &body_fonts, &mono_fonts),
        generated.body
    );
    let world = world::BookWorld::new(source, generated.files);
    let compiled = typst::compile::<PagedDocument>(&world);
    let document = compiled.output.map_err(|errors| {
        let messages: Vec<String> = errors.iter().map(|e| e.message.to_string()).collect();
        tracing::error!(errors = ?messages, "typst rejected the generated book source");
        format!(
            "the PDF could not be typeset ({}); this is a bug in folio",
            messages.join("; ")
        )
    })?;
    let pdf = typst_pdf::pdf(&document, &typst_pdf::PdfOptions::default()).map_err(|errors| {
        let messages: Vec<String> = errors.iter().map(|e| e.message.to_string()).collect();
        format!(
            "the PDF could not be written ({}); this is a bug in folio",
            messages.join("; ")
        )
    })?;
    let mut warnings = generated.warnings;
    warnings.extend(font_warnings(text, book));
    for warning in compiled.warnings.iter() {
        let message = warning.message.to_string();
        // Font families are filtered to installed ones above; fallback is reported by
        // `font_warnings` in words a reader can act on.
        if !message.contains("unknown font family") {
            warnings.push(message);
        }
    }
    Ok(Book { pdf, warnings })
}

/// The keyword every book's metadata carries (the PDF's XMP `pdf:Keywords`, written as
/// plain text): an export replaces only a PDF that holds it, so a PDF folio did not make
/// is never overwritten.
pub const BOOK_MARK: &str = "folio-pdf-book";

/// Whether the PDF `bytes` is a book folio made and nobody changed since: [`BOOK_MARK`]
/// as the keywords of its XMP metadata, and one cross-reference section (a viewer that
/// saves annotations or form fields appends an incremental update, with its own
/// `startxref`; PDF 1.7, 7.5.6).
pub fn is_folio_book(bytes: &[u8]) -> bool {
    let count = |needle: &[u8]| bytes.windows(needle.len()).filter(|w| *w == needle).count();
    let keywords = format!("<pdf:Keywords>{BOOK_MARK}</pdf:Keywords>");
    bytes.starts_with(b"%PDF-") && count(keywords.as_bytes()) == 1 && count(b"startxref") == 1
}

/// The default output of a book: the document's path with `.pdf` in place of its
/// Markdown extension.
pub fn default_output(path: &str) -> String {
    let stem = path
        .strip_suffix(".md")
        .or_else(|| path.strip_suffix(".markdown"))
        .or_else(|| {
            let lower = path.to_ascii_lowercase();
            [".md", ".markdown"]
                .iter()
                .find(|ext| lower.ends_with(*ext))
                .map(|ext| &path[..path.len() - ext.len()])
        })
        .unwrap_or(path);
    format!("{stem}.pdf")
}

#[cfg(test)]
mod tests;
