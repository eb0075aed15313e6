//! The formats folio reads besides Markdown, registered by file extension, and what
//! reading one gives: the registry (`[parsers].enabled` names its extensions), the
//! budgets of an extraction, the extracted text with its sections, and why an
//! extraction failed. Plain data: the parsers are [`crate::extract`].

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

    /// The format [`Format::name`] names.
    pub fn from_name(name: &str) -> Option<Format> {
        REGISTERED
            .iter()
            .map(|(_, f)| *f)
            .find(|f| f.name() == name)
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
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    /// large it is, up to the hard cap ([`crate::extract::chunk_sections`]).
    pub whole: bool,
}

/// Why a file's text could not be extracted; the reason an index summary lists
/// (`SkipReason::NotExtracted`) and a read refuses with.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum ExtractError {
    /// Larger than its format's size cap, or its extracted text larger than the text cap.
    #[error("{size} bytes, larger than the {cap}-byte limit for {what}")]
    TooLarge {
        /// The file's size in bytes.
        size: u64,
        /// The cap in bytes.
        cap: u64,
        /// `text files`, `binary documents` or `extracted text`.
        what: String,
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
    /// The parser's process died without a result: out of its memory limit, its stack
    /// overflowed, it could not be started ([`crate::extract::use_worker`]).
    #[error("the {format} parser failed on this file: {why}")]
    Crashed {
        /// The format's name.
        format: String,
        /// How it ended.
        why: String,
    },
    /// The file is not a valid document of its format.
    #[error("not a readable {format} file: {message}")]
    Malformed {
        /// The format's name.
        format: String,
        /// The parser's message.
        message: String,
    },
}

/// A programming language with a grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Language {
    /// Rust (`tree-sitter-rust`).
    Rust,
    /// Python (`tree-sitter-python`).
    Python,
    /// TypeScript (`tree-sitter-typescript`, its `typescript` grammar).
    TypeScript,
    /// TypeScript with JSX (`tree-sitter-typescript`, its `tsx` grammar).
    Tsx,
    /// JavaScript, JSX included (`tree-sitter-javascript`).
    JavaScript,
    /// Go (`tree-sitter-go`).
    Go,
    /// Java (`tree-sitter-java`).
    Java,
    /// C (`tree-sitter-c`).
    C,
    /// C++ (`tree-sitter-cpp`).
    Cpp,
}

impl Language {
    /// The language's name in a format name (`code:<name>`).
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::JavaScript => "javascript",
            Language::Go => "go",
            Language::Java => "java",
            Language::C => "c",
            Language::Cpp => "cpp",
        }
    }
}
