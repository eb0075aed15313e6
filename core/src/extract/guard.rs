//! The budgets around a parser: time (a thread of its own), panics, and the inflated
//! size of a ZIP container read from its central directory before anything is inflated.

use std::io::Cursor;
use std::time::Duration;

use crate::formats::{ExtractError, Format};

/// The stack of an extraction thread: 64 MiB.
const STACK_BYTES: usize = 64 * 1024 * 1024;

/// Runs `job` on a thread of its own and waits at most `budget` for it. A job that runs
/// over is left to finish on its thread (its result is thrown away); a job that panics
/// is [`ExtractError::Panicked`].
pub(super) fn with_budget<T: Send + 'static>(
    format: Format,
    budget: Duration,
    job: impl FnOnce() -> Result<T, ExtractError> + Send + 'static,
) -> Result<T, ExtractError> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name(format!("folio-extract-{}", format.name()))
        // Parsers recurse over a document's structure: room for deep (but finite) nesting.
        // The stack is reserved, not used: pages are touched only as it grows.
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            let _ = tx.send(outcome);
        });
    if let Err(err) = spawned {
        return Err(ExtractError::Malformed {
            format: format.name(),
            message: format!("no thread to read it on: {err}"),
        });
    }
    match rx.recv_timeout(budget) {
        Ok(Ok(result)) => result,
        Ok(Err(_)) => Err(ExtractError::Panicked(format.name())),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            Err(ExtractError::TimedOut(budget.as_millis()))
        }
        // The sender went without sending: the thread ended in a panic the catch missed
        // (an abort would have ended the process).
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            Err(ExtractError::Panicked(format.name()))
        }
    }
}

/// Checks a ZIP container (DOCX, PPTX, XLSX, ODS) before any part of it is inflated:
/// the sizes its central directory declares must sum to at most `budget` bytes, and no
/// part may declare a ratio of inflated to stored size above 1000 (a ZIP bomb's mark;
/// ordinary XML compresses by 5–20×). An encrypted part makes the file
/// [`ExtractError::Encrypted`]; an Office file encrypted as a whole is not a ZIP file but
/// a Compound File, reported the same way.
///
/// A spreadsheet in the older binary formats (`.xls`) is no ZIP file and passes as it is.
/// The largest ratio of a ZIP part's inflated size to its stored size that is read.
pub(super) const MAX_RATIO: u64 = 1000;

pub(super) fn check_zip(bytes: &[u8], budget: u64) -> Result<(), ExtractError> {
    const CFB_MAGIC: &[u8] = &[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];
    if bytes.starts_with(CFB_MAGIC) {
        // A Compound File: an `.xls` workbook, or an encrypted OOXML package (which keeps
        // an `EncryptionInfo` stream beside its encrypted package).
        return if contains(bytes, &utf16("EncryptionInfo")) {
            Err(ExtractError::Encrypted)
        } else {
            Ok(())
        };
    }
    let mut archive =
        zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| ExtractError::Malformed {
            format: "ZIP".into(),
            message: e.to_string(),
        })?;
    let mut declared: u64 = 0;
    for i in 0..archive.len() {
        let part = archive
            .by_index_raw(i)
            .map_err(|e| ExtractError::Malformed {
                format: "ZIP".into(),
                message: e.to_string(),
            })?;
        if part.encrypted() {
            return Err(ExtractError::Encrypted);
        }
        let (size, stored) = (part.size(), part.compressed_size());
        if size > stored.max(1).saturating_mul(MAX_RATIO) {
            return Err(ExtractError::InflationRatio {
                part: part.name().map(|n| n.into_owned()).unwrap_or_default(),
                inflated: size,
                stored,
            });
        }
        declared = declared.saturating_add(size);
        if declared > budget {
            return Err(ExtractError::DecompressionBudget { declared, budget });
        }
    }
    Ok(())
}

fn utf16(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
