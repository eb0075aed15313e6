//! Documents other than Markdown, as the host reads them: `kb_read` and `kb://doc/` of
//! their extracted text (`text/plain`), and whether a search hit in one still holds.

use crate::document::LineIndex;
use crate::extract::extract;
use crate::formats::{Extracted, Format};
use crate::index::extracted::{read_bytes, source_hash};
use crate::path_policy::resolve_existing;
use crate::workspace::is_markdown;

use super::read::{ReadArgs, ReadOutput, page_of};
use super::{ErrorCode, Host, HostError, HostResult};

/// A document's extracted text and the hash of the bytes it came from.
pub struct ExtractedText {
    /// The extraction: text and sections.
    pub extracted: Extracted,
    /// XxHash64 of the file's bytes (16 hex digits), as the index records it.
    pub source_hash: String,
}

impl Host {
    /// The format of `path` when it is not Markdown and `[parsers].enabled` turns its
    /// parser on; `None` for Markdown and for files folio does not read.
    pub fn extracted_format(&self, path: &str) -> Option<Format> {
        (!is_markdown(path))
            .then(|| self.config.parsers.format_of(path))
            .flatten()
    }

    /// Reads and extracts the document at `path` of `format` as the index does, within
    /// the same budgets.
    ///
    /// Errors: `NOT_FOUND` (no such file, or outside the root), `INVALID_ARGUMENT` (over
    /// its size cap), `UNSUPPORTED_FORMAT` (its text could not be extracted: encrypted,
    /// malformed, over a budget; the reason is in the message).
    pub fn read_extracted(&self, path: &str, format: Format) -> HostResult<ExtractedText> {
        resolve_existing(&self.root, path)?;
        let bytes = read_bytes(&self.root, path, format, &self.config)
            .map_err(|reason| super::skip_error(path, reason))?;
        let hash = source_hash(&bytes);
        let not_extracted = |e: String| {
            HostError::new(
                ErrorCode::UnsupportedFormat,
                format!("`{path}`: its text could not be extracted: {e}"),
            )
        };
        // A failure the index recorded for these bytes, under these budgets, is not
        // paid for again.
        if let Some(why) = self.recorded_failure(path, &hash) {
            return Err(not_extracted(why));
        }
        let limits = self.config.parsers.limits(&self.config.index);
        let extracted =
            extract(format, bytes, &limits).map_err(|e| not_extracted(e.to_string()))?;
        Ok(ExtractedText {
            extracted,
            source_hash: hash,
        })
    }

    /// Why the index could not extract the document at `path` when its bytes hashed to
    /// `hash`, under the budgets in force; `None` when it recorded no such failure.
    fn recorded_failure(&self, path: &str, hash: &str) -> Option<String> {
        let key = crate::index::extracted::limits_key(&self.config);
        self.with_store(|store| {
            let same_limits = store
                .meta(crate::index::extracted::LIMITS_META)
                .ok()
                .flatten()
                == Some(key);
            let failures = store.unextracted().unwrap_or_default();
            Ok(failures
                .get(path)
                .filter(|(h, _)| same_limits && h == hash)
                .map(|(_, why)| why.clone()))
        })
        .ok()
        .flatten()
    }

    /// `kb_read` of a document of `format`: a page of its extracted text, or of the lines
    /// a hit's pointer (`L<start>-<end>~hash~hash`) names while they still hold the text
    /// the pointer was made from.
    ///
    /// Errors: as [`Host::read_extracted`]; `INVALID_ARGUMENT` for a pointer of another
    /// shape or a bad page; `CONFLICT` when the named lines changed since.
    pub(crate) fn read_extracted_page(
        &self,
        args: &ReadArgs,
        format: Format,
    ) -> HostResult<ReadOutput> {
        let ExtractedText {
            extracted,
            source_hash,
        } = self.read_extracted(&args.path, format)?;
        let text = extracted.text;
        let lines = LineIndex::new(&text);
        let range = match args.pointer.as_deref().filter(|p| *p != "document") {
            None => 0..text.len(),
            Some(pointer) => lines_range(&text, &lines, pointer)?,
        };
        let selected = &text[range.clone()];
        let (offset, end) = page_of(selected, args)?;
        let page_start = range.start + offset;
        let page = text[page_start..range.start + end].trim_end_matches(['\n', '\r']);
        let start_line = lines.line_of(page_start) as u32 + 1;
        let end_line = if page.is_empty() {
            start_line
        } else {
            lines.line_of(page_start + page.len() - 1) as u32 + 1
        };
        Ok(ReadOutput {
            path: args.path.clone(),
            read_only: Some(format!(
                "the text extracted from a {} document: read-only",
                format.name()
            )),
            source_hash,
            pointer: args.pointer.clone().filter(|p| p != "document"),
            reanchored: false,
            text: selected[offset..end].to_string(),
            offset,
            next_offset: (end < selected.len()).then_some(end),
            total_bytes: selected.len(),
            start_line,
            end_line,
            elements: Vec::new(),
            table: None,
            format: Some(format.name()),
        })
    }

    /// Whether a hit in the document of `path`, indexed from bytes hashing to
    /// `indexed_hash`, still holds: the file is still read and its bytes are unchanged.
    pub(crate) fn extracted_unchanged(&self, path: &str, indexed_hash: &str) -> bool {
        self.extracted_format(path)
            .and_then(|format| read_bytes(&self.root, path, format, &self.config).ok())
            .is_some_and(|bytes| source_hash(&bytes) == indexed_hash)
    }
}

/// The byte range of the lines a lines pointer names in `text`, with its line breaks.
fn lines_range(text: &str, lines: &LineIndex, pointer: &str) -> HostResult<std::ops::Range<usize>> {
    let (start, end, hash) = crate::extract::parse_lines_pointer(pointer).ok_or_else(|| {
        HostError::invalid(format!(
            "pointer `{pointer}` does not name lines of this document; pass a pointer `L<start>-<end>~hash~hash` from kb_search, or none"
        ))
    })?;
    let line_start = |line: u32| lines.line_start(line as usize - 1).unwrap_or(text.len());
    let from = line_start(start);
    let to = lines.line_start(end as usize).unwrap_or(text.len());
    let held = text[from..to].trim_end_matches(['\n', '\r']);
    if from >= text.len()
        || crate::pointer::hex(crate::pointer::hash_bytes(held.as_bytes())) != hash
    {
        return Err(HostError::new(
            ErrorCode::Conflict,
            format!(
                "lines {start}–{end} no longer hold the text pointer `{pointer}` was made from: the document changed since it was indexed; search again"
            ),
        ));
    }
    Ok(from..to)
}
