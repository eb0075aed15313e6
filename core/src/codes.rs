//! The stable codes folio reports, in one place: the link diagnostic codes with their
//! severities (docs/diagnostics.md), and the error codes of operations
//! ([`ErrorCode`], docs/mcp.md). The LSP, `folio check`, MCP `kb_links`, the VS
//! Code extension's settings and the docs all take their lists from here; a test checks
//! the copies that cannot import it (docs/diagnostics, editors/vscode/package.json).
//!
//! A leaf module: it names no other module of the crate.

use std::fmt;
use std::str::FromStr;

/// A stable diagnostic code.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum DiagnosticCode {
    /// A link to a relative path where no file or folder exists.
    MissingFile,
    /// A link fragment that names no heading or anchor of its target (own file or other file).
    MissingHeading,
    /// `[text][label]`, `[label][]` or `[^label]` whose label has no definition.
    UndefinedReference,
    /// A link reference or footnote definition no link uses.
    UnusedDefinition,
    /// A second definition of a label; CommonMark 4.7 uses the first.
    DuplicateDefinition,
    /// A wiki link whose target matches no document or file.
    MissingWikiTarget,
    /// A wiki link whose target matches several documents.
    AmbiguousWikiTarget,
    /// A link whose file exists under a path that differs only in letter case.
    CaseMismatch,
    /// In an Obsidian vault, a Markdown link whose file name matches several files.
    AmbiguousFile,
    /// A frontmatter block that is not valid YAML (or TOML): its metadata is not read.
    InvalidFrontmatter,
    /// An `http(s)` link whose server answers an error status, or does not answer
    /// (`folio check --external` only).
    BrokenExternalLink,
    /// An `http(s)` link whose server still asks to come back later after the retries
    /// (`folio check --external` only).
    RateLimitedExternalLink,
}

impl DiagnosticCode {
    /// All codes, in a stable order.
    pub const ALL: [DiagnosticCode; 12] = [
        DiagnosticCode::MissingFile,
        DiagnosticCode::MissingHeading,
        DiagnosticCode::UndefinedReference,
        DiagnosticCode::UnusedDefinition,
        DiagnosticCode::DuplicateDefinition,
        DiagnosticCode::MissingWikiTarget,
        DiagnosticCode::AmbiguousWikiTarget,
        DiagnosticCode::CaseMismatch,
        DiagnosticCode::AmbiguousFile,
        DiagnosticCode::InvalidFrontmatter,
        DiagnosticCode::BrokenExternalLink,
        DiagnosticCode::RateLimitedExternalLink,
    ];

    /// The code's name, e.g. `missing-file`.
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticCode::MissingFile => "missing-file",
            DiagnosticCode::MissingHeading => "missing-heading",
            DiagnosticCode::UndefinedReference => "undefined-reference",
            DiagnosticCode::UnusedDefinition => "unused-definition",
            DiagnosticCode::DuplicateDefinition => "duplicate-definition",
            DiagnosticCode::MissingWikiTarget => "missing-wiki-target",
            DiagnosticCode::AmbiguousWikiTarget => "ambiguous-wiki-target",
            DiagnosticCode::CaseMismatch => "case-mismatch",
            DiagnosticCode::AmbiguousFile => "ambiguous-file",
            DiagnosticCode::InvalidFrontmatter => "invalid-frontmatter",
            DiagnosticCode::BrokenExternalLink => "broken-external-link",
            DiagnosticCode::RateLimitedExternalLink => "rate-limited-external-link",
        }
    }

    /// One sentence saying what the code reports, for schemas, settings and docs.
    pub fn description(self) -> &'static str {
        match self {
            DiagnosticCode::MissingFile => {
                "A link to a relative path where no file or folder exists."
            }
            DiagnosticCode::MissingHeading => {
                "A link fragment that names no heading or anchor of its target (own file or other file)."
            }
            DiagnosticCode::UndefinedReference => {
                "A reference link or footnote whose label has no definition."
            }
            DiagnosticCode::UnusedDefinition => {
                "A link reference or footnote definition that no link uses."
            }
            DiagnosticCode::DuplicateDefinition => {
                "A second definition of a label (CommonMark uses the first)."
            }
            DiagnosticCode::MissingWikiTarget => {
                "A wiki link whose target matches no document or file."
            }
            DiagnosticCode::AmbiguousWikiTarget => {
                "A wiki link whose target matches several documents."
            }
            DiagnosticCode::CaseMismatch => {
                "A link whose file exists under a path that differs only in letter case (found on Windows and macOS, not on Linux or GitHub)."
            }
            DiagnosticCode::AmbiguousFile => {
                "In an Obsidian vault, a Markdown link whose file name matches several files."
            }
            DiagnosticCode::InvalidFrontmatter => {
                "Frontmatter that is not valid YAML (or TOML): its title, tags, aliases and dates are not read, so filters miss the note."
            }
            DiagnosticCode::BrokenExternalLink => {
                "An http(s) link whose server answers an error status (4xx, 5xx), a redirect loop or more than 10 redirects, or no answer (host not found, connection or TLS failure, timeout); `folio check --external` only."
            }
            DiagnosticCode::RateLimitedExternalLink => {
                "An http(s) link whose server still answers HTTP 429 (or 503 with Retry-After) after the retries: not known to work or to be broken; `folio check --external` only."
            }
        }
    }

    /// Default severity: broken links are errors, ambiguity and unused or duplicate definitions warnings.
    pub fn severity(self) -> Severity {
        match self {
            DiagnosticCode::MissingFile
            | DiagnosticCode::MissingHeading
            | DiagnosticCode::UndefinedReference
            | DiagnosticCode::MissingWikiTarget
            | DiagnosticCode::BrokenExternalLink => Severity::Error,
            DiagnosticCode::UnusedDefinition
            | DiagnosticCode::DuplicateDefinition
            | DiagnosticCode::AmbiguousWikiTarget
            | DiagnosticCode::CaseMismatch
            | DiagnosticCode::AmbiguousFile
            | DiagnosticCode::InvalidFrontmatter
            | DiagnosticCode::RateLimitedExternalLink => Severity::Warning,
        }
    }
}

impl fmt::Display for DiagnosticCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for DiagnosticCode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DiagnosticCode::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown diagnostic code `{s}` (known: {})",
                    DiagnosticCode::ALL.map(|c| c.as_str()).join(", ")
                )
            })
    }
}

/// How serious a diagnostic is.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// A broken link.
    Error,
    /// Probably a mistake.
    Warning,
}

/// The stable error codes of an operation that ran and failed (docs/mcp.md):
/// MCP tools report them as `{code, message}`, the language server maps them to JSON-RPC
/// errors, the CLI to messages and exit codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// The path is not a name the index could hold.
    InvalidPath,
    /// Nothing under that exact spelling (or a link folio does not follow).
    NotFound,
    /// The target changed since it was read, or the edit would break untouched structure.
    Conflict,
    /// Writes are off, the caller's token is read-only, or a download address is not public.
    PermissionDenied,
    /// The target path exists.
    AlreadyExists,
    /// Not a Markdown file, or not text; not an image of a supported format.
    UnsupportedFormat,
    /// A malformed or contradictory argument.
    InvalidArgument,
    /// The feature needs configuration this server does not have.
    NotConfigured,
    /// Another operation holds what this one needs.
    Busy,
    /// A service the operation needs (the KnowledgePulse registry) could not be reached.
    Unavailable,
    /// An unexpected failure inside the server (a bug, or an I/O error).
    Internal,
}

impl ErrorCode {
    /// All codes, in a stable order.
    pub const ALL: [ErrorCode; 11] = [
        ErrorCode::InvalidPath,
        ErrorCode::NotFound,
        ErrorCode::Conflict,
        ErrorCode::PermissionDenied,
        ErrorCode::AlreadyExists,
        ErrorCode::UnsupportedFormat,
        ErrorCode::InvalidArgument,
        ErrorCode::NotConfigured,
        ErrorCode::Busy,
        ErrorCode::Unavailable,
        ErrorCode::Internal,
    ];

    /// One sentence saying when an operation fails with this code, for docs.
    pub fn description(self) -> &'static str {
        match self {
            ErrorCode::InvalidPath => {
                "The path is not a name the knowledge base could hold (the path policy refused it before any disk access)."
            }
            ErrorCode::NotFound => {
                "Nothing exists under that exact spelling, or it is a link folio does not follow."
            }
            ErrorCode::Conflict => {
                "The target changed since it was read (by another writer, an editor or the user), or the edit would break structure it did not touch; nothing was changed."
            }
            ErrorCode::PermissionDenied => {
                "Writes are off (start `folio mcp --allow-writes`), the caller's token is read-only (`folio mcp --http`), or a download's address is not public (kb_save_image)."
            }
            ErrorCode::AlreadyExists => "The target path exists; nothing was overwritten.",
            ErrorCode::UnsupportedFormat => {
                "Not a Markdown file, or not text; for the image tools, not a PNG, JPEG, WebP or GIF whose bytes match its name and declared type."
            }
            ErrorCode::InvalidArgument => "A malformed or contradictory argument.",
            ErrorCode::NotConfigured => {
                "The operation needs something this server does not have (embeddings, a setting); the message says what."
            }
            ErrorCode::Busy => {
                "Another writer or an editor held what the operation needs for too long; nothing was changed, try again."
            }
            ErrorCode::Unavailable => {
                "A service the operation needs did not answer (the KnowledgePulse registry is unreachable, refused the connection or timed out); nothing was written locally, try again later (a request that timed out may have reached the registry: a retried contribution then answers `ALREADY_EXISTS`)."
            }
            ErrorCode::Internal => {
                "An unexpected failure inside folio (a bug, or an I/O error); the server goes on."
            }
        }
    }

    /// The code as it is written on the wire, e.g. `INVALID_PATH`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidPath => "INVALID_PATH",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::Conflict => "CONFLICT",
            ErrorCode::PermissionDenied => "PERMISSION_DENIED",
            ErrorCode::AlreadyExists => "ALREADY_EXISTS",
            ErrorCode::UnsupportedFormat => "UNSUPPORTED_FORMAT",
            ErrorCode::InvalidArgument => "INVALID_ARGUMENT",
            ErrorCode::NotConfigured => "NOT_CONFIGURED",
            ErrorCode::Busy => "BUSY",
            ErrorCode::Unavailable => "UNAVAILABLE",
            ErrorCode::Internal => "INTERNAL",
        }
    }
}
