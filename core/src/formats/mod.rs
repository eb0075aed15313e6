//! Documents that are not Markdown: a parser per format family, registered by file
//! extension, each turning a file's bytes into plain text and the sections the index
//! cuts into chunks ([`Extracted`]).
//!
//! Every format is read by a maintained library; folio writes no format parser of its
//! own: PDF by `pdf-extract` (on `lopdf`), Word and PowerPoint by `undoc` (rendered to
//! Markdown, which folio's own parser then cuts by heading), spreadsheets by `calamine`,
//! CSV by `csv`, source code by tree-sitter and each language's grammar crate.
//!
//! Positions: the extracted text is what a read returns (`text/plain`), and a section's
//! lines are 1-based lines of that text. For plain text, CSV and source code the
//! extracted text is the file's own text, so the lines are the file's lines; for a PDF
//! they are lines of the extracted pages, each section also carrying its page.
//!
//! Budgets ([`Limits`]): a file over `max_binary_size` is not read; a ZIP container
//! (DOCX, PPTX, XLSX, ODS) whose parts declare more than `max_decompressed_size` bytes
//! when inflated is refused before any part is inflated; an extraction that takes longer
//! than `time_budget` is given up (it finishes on its own thread, its result thrown
//! away); a parser that panics is caught. Each refusal is an [`ExtractError`] whose
//! reason an index summary lists.

mod code;
mod guard;
mod office;
mod pdf;
mod sections;
mod sheet;

pub use code::Language;
pub use sections::{SectionChunk, chunk_sections, lines_pointer, parse_lines_pointer};

use std::time::Duration;

/// A format family folio reads besides Markdown, as registered by extension
/// ([`Format::of_extension`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Plain text (`.txt`): read as it is, cut at blank lines.
    Text,
    /// Comma-separated values (`.csv`, `.tsv`): one section, a row per line.
    Csv,
    /// A workbook (`.xlsx`, `.xlsm`, `.xls`, `.ods`): each sheet a section, a row per line.
    Spreadsheet,
    /// A Word document (`.docx`): paragraphs, headings by style, tables as tables.
    Word,
    /// A PowerPoint presentation (`.pptx`): each slide a section.
    Presentation,
    /// A PDF (`.pdf`): the text of each page in reading order, chunks carrying their page.
    Pdf,
    /// Source code in a language with a tree-sitter grammar: a chunk per definition.
    Code(Language),
}

/// Every extension with a parser, with its format, in the order documentation lists them.
pub const REGISTERED: &[(&str, Format)] = &[
    ("txt", Format::Text),
    ("csv", Format::Csv),
    ("tsv", Format::Csv),
    ("xlsx", Format::Spreadsheet),
    ("xlsm", Format::Spreadsheet),
    ("xls", Format::Spreadsheet),
    ("ods", Format::Spreadsheet),
    ("docx", Format::Word),
    ("pptx", Format::Presentation),
    ("pdf", Format::Pdf),
    ("rs", Format::Code(Language::Rust)),
    ("py", Format::Code(Language::Python)),
    ("pyi", Format::Code(Language::Python)),
    ("ts", Format::Code(Language::TypeScript)),
    ("mts", Format::Code(Language::TypeScript)),
    ("cts", Format::Code(Language::TypeScript)),
    ("tsx", Format::Code(Language::Tsx)),
    ("js", Format::Code(Language::JavaScript)),
    ("mjs", Format::Code(Language::JavaScript)),
    ("cjs", Format::Code(Language::JavaScript)),
    ("jsx", Format::Code(Language::JavaScript)),
    ("go", Format::Code(Language::Go)),
    ("java", Format::Code(Language::Java)),
    ("c", Format::Code(Language::C)),
    ("h", Format::Code(Language::C)),
    ("cc", Format::Code(Language::Cpp)),
    ("cpp", Format::Code(Language::Cpp)),
    ("cxx", Format::Code(Language::Cpp)),
    ("hh", Format::Code(Language::Cpp)),
    ("hpp", Format::Code(Language::Cpp)),
    ("hxx", Format::Code(Language::Cpp)),
];

/// The extensions `[parsers].enabled` holds by default: every document format
/// (plain text, CSV, spreadsheets, Word, PowerPoint, PDF). Source code is read only when
/// its extensions are listed: a knowledge base kept beside a code base would otherwise
/// index the code base.
pub const DEFAULT_ENABLED: &[&str] = &[
    "txt", "csv", "tsv", "xlsx", "xlsm", "xls", "ods", "docx", "pptx", "pdf",
];

impl Format {
    /// The format registered for `extension` (without the dot, ASCII case-insensitive).
    pub fn of_extension(extension: &str) -> Option<Format> {
        let lower = extension.to_ascii_lowercase();
        REGISTERED
            .iter()
            .find(|(ext, _)| *ext == lower)
            .map(|(_, f)| *f)
    }

    /// The format of a KB-relative path by its extension, if one is registered.
    pub fn of_path(path: &str) -> Option<Format> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let (stem, ext) = name.rsplit_once('.')?;
        if stem.is_empty() {
            return None;
        }
        Format::of_extension(ext)
    }

    /// The format's name as the index records it and hits report it: `text`, `csv`,
    /// `spreadsheet`, `docx`, `pptx`, `pdf`, or `code:<language>` (`code:rust`, ...).
    pub fn name(self) -> String {
        match self {
            Format::Text => "text".into(),
            Format::Csv => "csv".into(),
            Format::Spreadsheet => "spreadsheet".into(),
            Format::Word => "docx".into(),
            Format::Presentation => "pptx".into(),
            Format::Pdf => "pdf".into(),
            Format::Code(lang) => format!("code:{}", lang.name()),
        }
    }

    /// True for formats whose files are binary containers (PDF, Office, workbooks): their
    /// size cap is [`Limits::max_binary_size`], and their text exists only as extracted.
    pub fn is_binary(self) -> bool {
        matches!(
            self,
            Format::Spreadsheet | Format::Word | Format::Presentation | Format::Pdf
        )
    }
}

/// The budgets of one extraction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest text file read, in bytes (`[index].max_file_size`).
    pub max_text_size: u64,
    /// Largest binary document read, in bytes (`[index].max_binary_file_size`).
    pub max_binary_size: u64,
    /// Most bytes a ZIP container's parts may inflate to (`[index].max_decompressed_size`).
    pub max_decompressed_size: u64,
    /// Longest one extraction may take (`[parsers].time_budget_ms`).
    pub time_budget: Duration,
}

/// The built-in budget for binary documents and their inflated parts: 50 MiB.
pub const DEFAULT_BINARY_BUDGET: u64 = 50 * 1024 * 1024;

/// The built-in time budget of one extraction: 30 seconds.
pub const DEFAULT_TIME_BUDGET: Duration = Duration::from_secs(30);

/// A file's text as folio reads it, with its sections.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extracted {
    /// The text a read returns (`text/plain`), lines ending in `\n`.
    pub text: String,
    /// The document's title when the format has one (a PDF's or Office file's metadata
    /// title, a first heading); `None` titles the document by its file name.
    pub title: Option<String>,
    /// Sections in text order, covering the text's non-blank lines.
    pub sections: Vec<Section>,
}

/// A run of lines of [`Extracted::text`] that belongs together: a page, a sheet, a
/// slide, a heading's section, a definition in source code.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Section {
    /// Names above the lines, outermost first: a sheet's or slide's name, headings, an
    /// enclosing class or `impl`.
    pub heading_path: Vec<String>,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
    /// The PDF page the lines are on, 1-based.
    pub page: Option<u32>,
    /// For a definition in source code: its kind as the grammar names it
    /// (`function_item`, `class_definition`, `method_declaration`, ...).
    pub symbol_kind: Option<String>,
    /// For a definition in source code: its name.
    pub symbol: Option<String>,
    /// When the section is one whole unit (a definition) that should be one chunk however
    /// large it is, up to the hard cap ([`chunk_sections`]).
    pub whole: bool,
}

/// Why a file's text could not be extracted; the reason an index summary lists
/// (`SkipReason::NotExtracted`) and a read refuses with.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExtractError {
    /// Larger than its format's size cap, or its extracted text larger than the text cap.
    #[error("{size} bytes, larger than the {cap}-byte limit for {what}")]
    TooLarge {
        /// The file's size in bytes.
        size: u64,
        /// The cap in bytes.
        cap: u64,
        /// `text files`, `binary documents` or `extracted text`.
        what: &'static str,
    },
    /// A ZIP container whose parts would inflate past the decompression budget.
    #[error(
        "its parts inflate to {declared} bytes, more than the {budget}-byte decompression budget ([index].max_decompressed_size)"
    )]
    DecompressionBudget {
        /// Bytes the parts declare.
        declared: u64,
        /// The budget.
        budget: u64,
    },
    /// A ZIP part that declares an inflated size over 1000 times its stored size: a ZIP
    /// bomb's mark (ordinary XML compresses 5–20-fold).
    #[error(
        "its part `{part}` inflates {stored} bytes to {inflated}, more than 1000-fold (a ZIP bomb's mark)"
    )]
    InflationRatio {
        /// The part's name in the archive.
        part: String,
        /// Its declared inflated size in bytes.
        inflated: u64,
        /// Its stored size in bytes.
        stored: u64,
    },
    /// An encrypted document (a password-protected PDF or Office file).
    #[error("encrypted: folio reads no password-protected document")]
    Encrypted,
    /// The parser did not finish within the time budget.
    #[error("extraction took longer than {0} ms ([parsers].time_budget_ms)")]
    TimedOut(u128),
    /// The parser panicked (a bug in it, met on this file).
    #[error("the {0} parser failed on this file")]
    Panicked(String),
    /// The file is not a valid document of its format.
    #[error("not a readable {format} file: {message}")]
    Malformed {
        /// The format's name.
        format: String,
        /// The parser's message.
        message: String,
    },
}

/// Extracts `bytes`, the content of a file of `format`, within `limits`, on a thread of
/// its own so that the time budget holds whatever the parser does.
///
/// Errors: [`ExtractError`]; never panics.
pub fn extract(format: Format, bytes: Vec<u8>, limits: &Limits) -> Result<Extracted, ExtractError> {
    let size = bytes.len() as u64;
    let (cap, what) = if format.is_binary() {
        (limits.max_binary_size, "binary documents")
    } else {
        (limits.max_text_size, "text files")
    };
    if size > cap {
        return Err(ExtractError::TooLarge { size, cap, what });
    }
    let limits = *limits;
    let extracted = guard::with_budget(format, limits.time_budget, move || {
        extract_now(format, &bytes, &limits)
    })?;
    let size = extracted.text.len() as u64;
    if size > limits.max_text_size {
        return Err(ExtractError::TooLarge {
            size,
            cap: limits.max_text_size,
            what: "extracted text",
        });
    }
    Ok(extracted)
}

/// [`extract`] on the calling thread, with no time budget.
fn extract_now(format: Format, bytes: &[u8], limits: &Limits) -> Result<Extracted, ExtractError> {
    match format {
        Format::Text => Ok(sections::plain_text(&String::from_utf8_lossy(bytes))),
        Format::Csv => sheet::csv(bytes),
        Format::Spreadsheet => {
            guard::check_zip(bytes, limits.max_decompressed_size)?;
            sheet::workbook(bytes)
        }
        Format::Word | Format::Presentation => {
            guard::check_zip(bytes, limits.max_decompressed_size)?;
            office::extract(format, bytes)
        }
        Format::Pdf => pdf::extract(bytes),
        Format::Code(language) => Ok(code::extract(language, &String::from_utf8_lossy(bytes))),
    }
}

#[cfg(test)]
mod tests;
