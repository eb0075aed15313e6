//! Documents that are not Markdown: a parser per format family of
//! [`crate::formats`], each turning a file's bytes into plain text and the sections the
//! index cuts into chunks ([`Extracted`]).
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
mod worker;

pub use sections::{chunk_sections, lines_pointer, parse_lines_pointer};
pub use worker::{WORKER_ARG, memory_limit, run_worker, use_worker};

use crate::formats::{ExtractError, Extracted, Format, Limits};

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
        return Err(ExtractError::TooLarge {
            size,
            cap,
            what: what.into(),
        });
    }
    if let Some(text) = text_problem(format, &bytes) {
        return Err(text);
    }
    let limits = *limits;
    let extracted = match worker::worker().filter(|_| format.is_binary()) {
        Some(executable) => worker::extract_in_worker(executable, format, bytes, &limits)?,
        None => guard::with_budget(format, limits.time_budget, move || {
            extract_now(format, &bytes, &limits)
        })?,
    };
    let size = extracted.text.len() as u64;
    if size > limits.max_text_size {
        return Err(ExtractError::TooLarge {
            size,
            cap: limits.max_text_size,
            what: "extracted text".into(),
        });
    }
    Ok(extracted)
}

/// Why the bytes of a text format (plain text, CSV, source code) are not text: NUL bytes
/// (a binary file with a text name, or UTF-16, which folio does not decode), as a
/// Markdown file with NUL bytes is skipped.
fn text_problem(format: Format, bytes: &[u8]) -> Option<ExtractError> {
    (!format.is_binary() && bytes.contains(&0)).then(|| ExtractError::Malformed {
        format: format.name(),
        message: "binary content (NUL bytes; a UTF-16 file is read only as UTF-8)".into(),
    })
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
