//! `kb_create_pdf_book`: a Markdown document typeset as a PDF book ([`crate::book`]),
//! written under the root. The output path is checked before anything is rendered; an
//! earlier PDF there is replaced atomically, any other file never.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[cfg(feature = "pdf-book")]
use crate::book::{BookOptions, PageFormat, Profile, Style, default_output, render};
#[cfg(feature = "pdf-book")]
use crate::path_policy::{check_syntax, resolve_new};
#[cfg(feature = "pdf-book")]
use crate::write::WriteError;

use super::{ErrorCode, Host, HostError, HostResult};

/// Writes a string enum as `{"type": "string", "enum": [...]}` (what every MCP client
/// understands) instead of a `oneOf` of documented constants; the field's description
/// names the values.
fn string_enum(schema: &mut schemars::Schema) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    let Some(serde_json::Value::Array(options)) = obj.get("oneOf") else {
        return;
    };
    let values: Option<Vec<serde_json::Value>> =
        options.iter().map(|o| o.get("const").cloned()).collect();
    if let Some(values) = values {
        obj.remove("oneOf");
        obj.insert("type".into(), "string".into());
        obj.insert("enum".into(), serde_json::Value::Array(values));
    }
}

/// Paper size.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema)]
#[schemars(inline, transform = string_enum)]
#[serde(rename_all = "lowercase")]
pub enum PageFormatArg {
    /// ISO A4, 210 × 297 mm.
    A4,
    /// ISO A5, 148 × 210 mm.
    #[default]
    A5,
    /// ISO A6, 105 × 148 mm.
    A6,
    /// ISO B5, 176 × 250 mm.
    B5,
    /// US Letter, 8.5 × 11 in.
    Letter,
}

/// Typographic style.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema)]
#[schemars(inline, transform = string_enum)]
#[serde(rename_all = "lowercase")]
pub enum StyleArg {
    /// Small margins and type, sans-serif.
    #[default]
    Compact,
    /// Serif, justified, centred chapter headings.
    Classic,
    /// Sans-serif with coloured headings.
    Modern,
    /// Sans-serif, numbered headings, framed code.
    Technical,
    /// Computer Modern, justified, indented paragraphs, numbered headings.
    Academic,
}

/// Image preset.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema)]
#[schemars(inline, transform = string_enum)]
#[serde(rename_all = "lowercase")]
pub enum ProfileArg {
    /// 96 DPI, JPEG quality 65.
    Screen,
    /// 150 DPI, JPEG quality 82.
    #[default]
    Standard,
    /// 300 DPI, JPEG quality 95.
    Print,
}

/// `kb_create_pdf_book` arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct PdfBookArgs {
    /// KB-relative path of the Markdown document.
    pub path: String,
    /// KB-relative path of the PDF (must end with .pdf). Default: the document's path with .pdf. An earlier PDF there is replaced; any other file is not.
    #[serde(default, rename = "outputPath")]
    pub output_path: Option<String>,
    /// a4, a5 (default), a6, b5 or letter.
    #[serde(default, rename = "pageFormat")]
    pub page_format: Option<PageFormatArg>,
    /// compact (default), classic, modern, technical or academic.
    #[serde(default)]
    pub style: Option<StyleArg>,
    /// Images: screen (96 DPI, JPEG 65), standard (default: 150 DPI, JPEG 82) or print (300 DPI, JPEG 95).
    #[serde(default)]
    pub profile: Option<ProfileArg>,
}

/// `kb_create_pdf_book` output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PdfBookOutput {
    /// KB-relative path of the PDF.
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Problems: missing, remote or unreadable images (printed as placeholders), raw HTML left out, scripts without a font.
    pub warnings: Vec<String>,
}

#[cfg(feature = "pdf-book")]
impl PdfBookArgs {
    fn options(&self) -> BookOptions {
        BookOptions {
            page_format: match self.page_format.unwrap_or_default() {
                PageFormatArg::A4 => PageFormat::A4,
                PageFormatArg::A5 => PageFormat::A5,
                PageFormatArg::A6 => PageFormat::A6,
                PageFormatArg::B5 => PageFormat::B5,
                PageFormatArg::Letter => PageFormat::Letter,
            },
            style: match self.style.unwrap_or_default() {
                StyleArg::Compact => Style::Compact,
                StyleArg::Classic => Style::Classic,
                StyleArg::Modern => Style::Modern,
                StyleArg::Technical => Style::Technical,
                StyleArg::Academic => Style::Academic,
            },
            profile: match self.profile.unwrap_or_default() {
                ProfileArg::Screen => Profile::Screen,
                ProfileArg::Standard => Profile::Standard,
                ProfileArg::Print => Profile::Print,
            },
        }
    }
}

#[cfg(not(feature = "pdf-book"))]
impl Host {
    /// `kb_create_pdf_book` in a folio built without the `pdf-book` feature: refused with
    /// `NOT_CONFIGURED`, naming the feature.
    pub fn create_pdf_book(&self, _args: &PdfBookArgs) -> HostResult<PdfBookOutput> {
        Err(HostError::new(
            ErrorCode::NotConfigured,
            "this folio was built without PDF books (the Cargo feature `pdf-book`); \
             install a release build, which has them",
        ))
    }
}

#[cfg(feature = "pdf-book")]
impl Host {
    /// `kb_create_pdf_book`. The document is read as it is now (an editor's buffer when
    /// open in one); its images through the path policy; remote images never.
    pub fn create_pdf_book(&self, args: &PdfBookArgs) -> HostResult<PdfBookOutput> {
        self.require_writes()?;
        let output = args
            .output_path
            .clone()
            .unwrap_or_else(|| default_output(&args.path));
        check_syntax(&output)?;
        if !output.to_ascii_lowercase().ends_with(".pdf") {
            return Err(HostError::invalid(format!(
                "`outputPath` `{output}` must end with .pdf"
            )));
        }
        let (_, text) = self.read_document(&args.path)?;
        let earlier = self.earlier_pdf(&output)?;
        let book =
            render(&self.root, &args.path, &text, &args.options()).map_err(HostError::internal)?;
        let guard = self.writer.lock()?;
        match &earlier {
            Some(bytes) => guard.replace(&output, bytes, &book.pdf)?,
            None => guard.create(&output, &book.pdf).map_err(|e| match e {
                // It appeared while the book was typeset.
                WriteError::AlreadyExists { path } => WriteError::Changed { path },
                e => e,
            })?,
        }
        drop(guard);
        tracing::info!(path = %args.path, output = %output, bytes = book.pdf.len(), "PDF book written");
        Ok(PdfBookOutput {
            path: output,
            bytes: book.pdf.len() as u64,
            warnings: book.warnings,
        })
    }

    /// The PDF at `output` that an export replaces, `None` when nothing is there.
    ///
    /// Errors: the path policy's; `ALREADY_EXISTS` when the file there is not a PDF
    /// folio made ([`crate::book::is_folio_book`]).
    fn earlier_pdf(&self, output: &str) -> HostResult<Option<Vec<u8>>> {
        let abs = resolve_new(&self.root, output)?;
        if std::fs::symlink_metadata(&abs).is_err() {
            return Ok(None);
        }
        let bytes = crate::workspace::beneath::read(&self.root, output, 1 << 31)
            .map_err(|e| HostError::new(ErrorCode::NotFound, format!("`{output}`: {e}")))?;
        if !bytes.starts_with(b"%PDF-") {
            return Err(HostError::new(
                ErrorCode::AlreadyExists,
                format!("`{output}` exists and is not a PDF; it is not replaced"),
            ));
        }
        if !crate::book::is_folio_book(&bytes) {
            return Err(HostError::new(
                ErrorCode::AlreadyExists,
                format!(
                    "`{output}` exists and is not a book kb_create_pdf_book made, or was changed since (annotations are saved into the file); it is not replaced (choose another `outputPath`)"
                ),
            ));
        }
        Ok(Some(bytes))
    }
}
