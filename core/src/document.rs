//! The live text of one Markdown document: a rope, a version and byte-offset edits.
//!
//! Internal positions are UTF-8 byte offsets into the document's exact bytes, BOM and
//! line endings included. Line/column conversions in UTF-8, UTF-16 and UTF-32 code units
//! live here so every front end converts the same way; only the LSP edge chooses a unit.
//!
//! Line breaks follow the LSP specification (`\n`, `\r\n` and a lone `\r`), which is
//! also what CommonMark section 2.1 calls a line ending.

use std::ops::Range;

use ropey::Rope;

use crate::packed_text::PackedText;

/// Texts shorter than this stay compact when [`Document::pack`] is asked to pack them:
/// below it, the block table and the DEFLATE stream's own overhead eat the saving.
pub const PACK_MIN_BYTES: usize = 256;

/// A unit in which a column is counted (LSP `PositionEncodingKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Encoding {
    /// UTF-8 code units (bytes).
    Utf8,
    /// UTF-16 code units; the LSP default.
    #[default]
    Utf16,
    /// UTF-32 code units (Unicode scalar values).
    Utf32,
}

/// A zero-based line and a column counted in some [`Encoding`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct LineCol {
    /// Zero-based line number.
    pub line: u32,
    /// Zero-based column, in the units of the encoding it was made with.
    pub col: u32,
}

/// Replace the bytes `range` of a text with `new_text`.
///
/// A sequence of edits is applied in order, each against the result of the one
/// before, like the content changes of an LSP `didChange` notification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextEdit {
    /// Byte range in the text the edit applies to.
    pub range: Range<usize>,
    /// Replacement text.
    pub new_text: String,
}

/// Rewrites a replacement that reaches the end of `text` so that, when the text ends with
/// a line break and the replacement keeps one there, it no longer touches that final
/// line break: an insertion after the last line becomes an insertion at the end of the
/// last line. The resulting text is the same.
///
/// Why: a position after the final line break is the start of a line that does not
/// exist in a line-based editor. Neovim 0.11 applies an LSP edit there by first adding
/// an empty line, so appending `"\nMore.\n"` to `"Text.\n"` gives `"Text.\n\nMore.\n\n"`;
/// an edit that stays inside the last line is applied exactly by every client.
/// `range` is a byte range of `text`; edits that do not reach its end come back unchanged.
pub fn keep_final_line_break(
    text: &str,
    range: Range<usize>,
    new_text: &str,
) -> (Range<usize>, String) {
    let eol = if text.ends_with("\r\n") {
        "\r\n"
    } else if text.ends_with('\n') {
        "\n"
    } else {
        return (range, new_text.to_string());
    };
    let last_line_end = text.len() - eol.len();
    if range.end != text.len() || !new_text.ends_with(eol) || range.start > text.len() {
        return (range, new_text.to_string());
    }
    if range.start == text.len() {
        // An insertion after the final line break: rotate it before that line break.
        let body = &new_text[..new_text.len() - eol.len()];
        return (last_line_end..last_line_end, format!("{eol}{body}"));
    }
    if range.start <= last_line_end {
        // The replaced bytes end with the final line break and so does the new text:
        // leave that line break out of both.
        let body = &new_text[..new_text.len() - eol.len()];
        return (range.start..last_line_end, body.to_string());
    }
    (range, new_text.to_string())
}

/// Errors from applying edits.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EditError {
    /// The range ends past the text or starts after it ends.
    #[error("edit range {start}..{end} is outside the document (length {len} bytes)")]
    OutOfBounds {
        /// Start byte of the range.
        start: usize,
        /// End byte of the range.
        end: usize,
        /// Length of the text in bytes.
        len: usize,
    },
    /// The range would split a UTF-8 character.
    #[error("edit range {start}..{end} does not fall on character boundaries")]
    NotCharBoundary {
        /// Start byte of the range.
        start: usize,
        /// End byte of the range.
        end: usize,
    },
}

/// The text of one document and its version.
///
/// The text is kept in one of three forms that behave the same: compact (the exact text
/// and its line starts, what a document nobody edits keeps: a rope costs about twice
/// the text for small documents); packed (the same, compressed in blocks, what
/// [`Document::pack`] makes of a compact document a language server holds for no
/// editor: [`crate::packed_text`]); or a rope, which [`Document::editable`] makes for a
/// document an editor opens and the first [`Document::apply_edits`] makes of the
/// others, so that edits cost O(log n) from then on.
#[derive(Clone, Debug)]
pub struct Document {
    text: Text,
    version: i32,
}

/// The three forms of a document's text.
#[derive(Clone, Debug)]
enum Text {
    /// The exact text and its line index.
    Compact { text: Box<str>, lines: LineIndex },
    /// The exact text compressed in blocks, and its line index.
    Packed { text: PackedText, lines: LineIndex },
    /// A rope (with `cr_lines`: the same line breaks as [`LineIndex`]).
    Rope(Rope),
}

impl Document {
    /// Creates a document from its exact text, in the compact form; `version` is the
    /// editor's version, or 0.
    pub fn new(text: &str, version: i32) -> Document {
        Document::with_lines(text, LineIndex::new(text), version)
    }

    /// [`Document::new`] with `lines`, the line index of `text` made elsewhere (a
    /// parse's, [`crate::parse::Parsed::lines`]), which the two then share.
    pub fn with_lines(text: &str, lines: LineIndex, version: i32) -> Document {
        debug_assert_eq!(lines.len_lines(), LineIndex::new(text).len_lines());
        Document {
            text: Text::Compact {
                text: text.into(),
                lines,
            },
            version,
        }
    }

    /// [`Document::with_lines`], packed ([`Document::pack`]) without a compact copy first.
    pub fn packed_with_lines(text: &str, lines: LineIndex, version: i32) -> Document {
        match packed(text, &lines) {
            Some(text) => Document { text, version },
            None => Document::with_lines(text, lines, version),
        }
    }

    /// Creates a document that is about to be edited (open in an editor): the text goes
    /// into a rope right away, so the first edit does not pay for making it.
    pub fn editable(text: &str, version: i32) -> Document {
        Document {
            text: Text::Rope(Rope::from_str(text)),
            version,
        }
    }

    /// True while the text is in the compact form (no edit applied since
    /// [`Document::new`]); false for a rope or a packed text.
    pub fn is_compact(&self) -> bool {
        matches!(self.text, Text::Compact { .. })
    }

    /// True while the text is packed ([`Document::pack`]).
    pub fn is_packed(&self) -> bool {
        matches!(self.text, Text::Packed { .. })
    }

    /// Compresses a compact text of [`PACK_MIN_BYTES`] or more in blocks
    /// ([`crate::packed_text::PackedText`]); every answer stays the same, and one about a
    /// place in a line with non-ASCII characters, or about the text itself, unpacks the
    /// block that holds it. Does nothing to a rope, a packed text or a shorter text.
    pub fn pack(&mut self) {
        if let Text::Compact { text, lines } = &self.text
            && let Some(packed) = packed(text, lines)
        {
            self.text = packed;
        }
    }

    /// Makes a compact document use `lines` (an index of the same text, such as
    /// [`crate::parse::Parsed::lines`]) instead of its own, so that both share one
    /// allocation. Does nothing for a rope or when `lines` is not this text's index.
    pub fn share_lines(&mut self, lines: &LineIndex) {
        if let Text::Compact { lines: own, .. } | Text::Packed { lines: own, .. } = &mut self.text
            && !own.same_allocation(lines)
            && *own == *lines
        {
            *own = lines.clone();
        }
    }

    /// The version: the editor's version while open in an editor, else a counter.
    pub fn version(&self) -> i32 {
        self.version
    }

    /// Sets the version (an LSP `didChange` carries the new one).
    pub fn set_version(&mut self, version: i32) {
        self.version = version;
    }

    /// Length in bytes.
    pub fn len_bytes(&self) -> usize {
        match &self.text {
            Text::Compact { text, .. } => text.len(),
            Text::Packed { text, .. } => text.len(),
            Text::Rope(rope) => rope.len_bytes(),
        }
    }

    /// Number of lines; a final line ending starts one more, empty, line (as in LSP).
    pub fn len_lines(&self) -> usize {
        match &self.text {
            Text::Compact { lines, .. } | Text::Packed { lines, .. } => lines.len_lines(),
            Text::Rope(rope) => rope.len_lines(),
        }
    }

    /// The whole text, exactly as stored.
    pub fn text(&self) -> String {
        match &self.text {
            Text::Compact { text, .. } => text.to_string(),
            Text::Packed { text, .. } => text.unpack(),
            Text::Rope(rope) => rope.to_string(),
        }
    }

    /// The bytes `range` as a string; `None` when the range is out of bounds or splits a character.
    pub fn slice(&self, range: Range<usize>) -> Option<String> {
        match &self.text {
            Text::Compact { text, .. } => text.get(range).map(str::to_string),
            Text::Packed { text, .. } => text.get(range),
            Text::Rope(rope) => rope.get_byte_slice(range).map(|s| s.to_string()),
        }
    }

    /// Applies edits in order, each against the result of the previous one.
    ///
    /// All edits are checked before any is applied against the text they will meet,
    /// so on error the document is unchanged. A compact or packed document becomes a rope.
    pub fn apply_edits(&mut self, edits: &[TextEdit]) -> Result<(), EditError> {
        let mut rope = match &self.text {
            Text::Compact { text, .. } => Rope::from_str(text),
            Text::Packed { text, .. } => Rope::from_str(&text.unpack()),
            Text::Rope(rope) => rope.clone(),
        };
        for edit in edits {
            apply_one(&mut rope, edit)?;
        }
        self.text = Text::Rope(rope);
        Ok(())
    }

    /// Converts a byte offset to a line and column in `encoding`.
    ///
    /// An offset past the end is clamped to the end; an offset inside a character or
    /// inside a `\r\n` pair is moved back to the character's start.
    pub fn offset_to_line_col(&self, offset: usize, encoding: Encoding) -> LineCol {
        match &self.text {
            Text::Compact { text, lines } => {
                compact_offset_to_line_col(text, lines, offset, encoding)
            }
            Text::Packed { text, lines } => {
                packed_offset_to_line_col(text, lines, offset, encoding)
            }
            Text::Rope(rope) => rope_offset_to_line_col(rope, offset, encoding),
        }
    }

    /// Converts a line and column in `encoding` to a byte offset.
    ///
    /// Following the LSP specification and common clients, a line past the end maps to the
    /// end of the text and a column past the end of its line (or inside a character or
    /// line ending) is clamped to the end of the line's content.
    pub fn line_col_to_offset(&self, pos: LineCol, encoding: Encoding) -> usize {
        match &self.text {
            Text::Compact { text, lines } => compact_line_col_to_offset(text, lines, pos, encoding),
            Text::Packed { text, lines } => packed_line_col_to_offset(text, lines, pos, encoding),
            Text::Rope(rope) => rope_line_col_to_offset(rope, pos, encoding),
        }
    }
}

/// The packed form of `text` with its line index `lines`; `None` below [`PACK_MIN_BYTES`]
/// (or for a text [`PackedText::new`] cannot hold).
fn packed(text: &str, lines: &LineIndex) -> Option<Text> {
    if text.len() < PACK_MIN_BYTES {
        return None;
    }
    Some(Text::Packed {
        text: PackedText::new(text)?,
        lines: lines.clone(),
    })
}

/// [`Document::offset_to_line_col`] of a compact text.
fn compact_offset_to_line_col(
    text: &str,
    lines: &LineIndex,
    offset: usize,
    encoding: Encoding,
) -> LineCol {
    let offset = floor_char_boundary(text, offset.min(text.len()));
    let line = lines.line_of(offset);
    let line_start = lines.line_start(line).unwrap_or(0);
    LineCol {
        line: line as u32,
        col: width_of(&text[line_start..offset], encoding) as u32,
    }
}

/// [`Document::offset_to_line_col`] of a packed text: a block of ASCII is answered from
/// the line index alone, any other from the block's text.
fn packed_offset_to_line_col(
    text: &PackedText,
    lines: &LineIndex,
    offset: usize,
    encoding: Encoding,
) -> LineCol {
    let offset = offset.min(text.len());
    if text.is_ascii_at(offset) {
        let line = lines.line_of(offset);
        let line_start = lines.line_start(line).unwrap_or(0);
        return LineCol {
            line: line as u32,
            col: (offset - line_start) as u32,
        };
    }
    text.with_text_at(offset, |block, base| {
        // The line lies whole in the block: blocks start at line starts.
        let within = floor_char_boundary(block, offset - base);
        let line = lines.line_of(base + within);
        let line_start = lines.line_start(line).unwrap_or(0);
        LineCol {
            line: line as u32,
            col: width_of(&block[line_start - base..within], encoding) as u32,
        }
    })
}

/// Units of `encoding` in `text`.
fn width_of(text: &str, encoding: Encoding) -> usize {
    match encoding {
        Encoding::Utf8 => text.len(),
        Encoding::Utf32 => text.chars().count(),
        Encoding::Utf16 => text.chars().map(char::len_utf16).sum(),
    }
}

/// [`Document::line_col_to_offset`] of a compact text.
fn compact_line_col_to_offset(
    text: &str,
    lines: &LineIndex,
    pos: LineCol,
    encoding: Encoding,
) -> usize {
    match line_span(lines, pos.line, text.len()) {
        Some(span) => span.start + offset_in_line(&text[span], pos.col as usize, encoding),
        None => text.len(),
    }
}

/// The bytes of zero-based `line` with its line break, in a text of `len` bytes; `None`
/// past the last line.
fn line_span(lines: &LineIndex, line: u32, len: usize) -> Option<Range<usize>> {
    let start = lines.line_start(line as usize)?;
    Some(start..lines.line_start(line as usize + 1).unwrap_or(len))
}

/// [`Document::line_col_to_offset`] of a packed text.
fn packed_line_col_to_offset(
    text: &PackedText,
    lines: &LineIndex,
    pos: LineCol,
    encoding: Encoding,
) -> usize {
    let Some(span) = line_span(lines, pos.line, text.len()) else {
        return text.len();
    };
    text.with_text_at(span.start, |block, base| {
        // The line lies whole in the block: blocks start at line starts.
        let line_text = &block[span.start - base..span.end - base];
        span.start + offset_in_line(line_text, pos.col as usize, encoding)
    })
}

/// The byte offset in `line` (one line with its line break, if any) of column `col` in
/// `encoding`: the start of the character holding unit `col`; past the end clamps to the
/// end of the content (before the line break), inside a character rounds down to its start.
fn offset_in_line(line: &str, col: usize, encoding: Encoding) -> usize {
    let content = line.strip_suffix('\n').unwrap_or(line);
    let content = content.strip_suffix('\r').unwrap_or(content);
    let width = |c: char| match encoding {
        Encoding::Utf8 => c.len_utf8(),
        Encoding::Utf16 => c.len_utf16(),
        Encoding::Utf32 => 1,
    };
    let mut units = 0;
    for (at, c) in content.char_indices() {
        let w = width(c);
        if units + w > col {
            return at;
        }
        units += w;
    }
    content.len()
}

/// The largest character boundary of `text` at or before `offset` (`offset <= text.len()`).
fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// [`Document::offset_to_line_col`] of a rope.
fn rope_offset_to_line_col(rope: &Rope, offset: usize, encoding: Encoding) -> LineCol {
    let offset = rope_floor_char_boundary(rope, offset.min(rope.len_bytes()));
    let line = rope.byte_to_line(offset);
    let line_start = rope.line_to_byte(line);
    let col = match encoding {
        Encoding::Utf8 => offset - line_start,
        Encoding::Utf32 => rope.byte_to_char(offset) - rope.byte_to_char(line_start),
        Encoding::Utf16 => {
            let c = rope.byte_to_char(offset);
            let c0 = rope.byte_to_char(line_start);
            rope.char_to_utf16_cu(c) - rope.char_to_utf16_cu(c0)
        }
    };
    LineCol {
        line: line as u32,
        col: col as u32,
    }
}

/// [`Document::line_col_to_offset`] of a rope.
fn rope_line_col_to_offset(rope: &Rope, pos: LineCol, encoding: Encoding) -> usize {
    let line = pos.line as usize;
    if line >= rope.len_lines() {
        return rope.len_bytes();
    }
    let line_start = rope.line_to_byte(line);
    let content_end = line_start + rope_line_content_len(rope, line);
    let col = pos.col as usize;
    let offset = match encoding {
        Encoding::Utf8 => line_start + col,
        Encoding::Utf32 => {
            let c0 = rope.byte_to_char(line_start);
            let c_end = rope.byte_to_char(content_end);
            rope.char_to_byte((c0 + col).min(c_end))
        }
        Encoding::Utf16 => {
            let c0 = rope.byte_to_char(line_start);
            let u0 = rope.char_to_utf16_cu(c0);
            let u_end = rope.char_to_utf16_cu(rope.byte_to_char(content_end));
            let u = (u0 + col).min(u_end);
            // A column inside a surrogate pair rounds down to the character's start.
            rope.char_to_byte(rope.utf16_cu_to_char(u))
        }
    };
    rope_floor_char_boundary(rope, offset.min(content_end))
}

/// Bytes of line `line` of a rope without its line ending.
fn rope_line_content_len(rope: &Rope, line: usize) -> usize {
    let slice = rope.line(line);
    let mut len = slice.len_bytes();
    if len > 0 && slice.byte(len - 1) == b'\n' {
        len -= 1;
    }
    if len > 0 && slice.byte(len - 1) == b'\r' {
        len -= 1;
    }
    len
}

fn rope_floor_char_boundary(rope: &Rope, offset: usize) -> usize {
    // `byte_to_char` maps an offset inside a character to that character.
    rope.char_to_byte(rope.byte_to_char(offset))
}

fn apply_one(rope: &mut Rope, edit: &TextEdit) -> Result<(), EditError> {
    let (start, end) = (edit.range.start, edit.range.end);
    let len = rope.len_bytes();
    if start > end || end > len {
        return Err(EditError::OutOfBounds { start, end, len });
    }
    let start_char = rope.byte_to_char(start);
    let end_char = rope.byte_to_char(end);
    if rope.char_to_byte(start_char) != start || rope.char_to_byte(end_char) != end {
        return Err(EditError::NotCharBoundary { start, end });
    }
    rope.remove(start_char..end_char);
    rope.insert(start_char, &edit.new_text);
    Ok(())
}

/// Line starts of a `&str` under the same rules as [`Document`]: `\n`, `\r\n`, lone `\r`.
///
/// Used where a parse result needs line numbers without a rope, and by a compact
/// [`Document`]. The starts are kept in 32 bits when the text is shorter than 4 GiB, in
/// an exactly sized shared allocation: a clone costs a reference count, and a
/// [`crate::parse::Parsed`] and the compact [`Document`] of the same text share one index.
#[derive(Clone, Debug)]
pub struct LineIndex {
    starts: Starts,
}

/// The byte offsets where lines start, the first being 0.
#[derive(Clone, Debug)]
enum Starts {
    /// Every start fits in 32 bits.
    Narrow(std::sync::Arc<[u32]>),
    /// A text of 4 GiB or more.
    Wide(std::sync::Arc<[usize]>),
}

/// The byte offsets where the lines of `text` start, from 0.
fn line_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    let bytes = text.as_bytes();
    let breaks = bytes.iter().enumerate().filter_map(|(i, &b)| match b {
        b'\n' => Some(i + 1),
        // A `\r` before `\n` is the first half of one line break.
        b'\r' if bytes.get(i + 1) != Some(&b'\n') => Some(i + 1),
        _ => None,
    });
    std::iter::once(0).chain(breaks)
}

impl PartialEq for LineIndex {
    fn eq(&self, other: &LineIndex) -> bool {
        self.len_lines() == other.len_lines()
            && (0..self.len_lines()).all(|i| self.line_start(i) == other.line_start(i))
    }
}

impl Eq for LineIndex {}

impl LineIndex {
    /// Builds the index of `text` (one pass over its bytes).
    pub fn new(text: &str) -> LineIndex {
        let starts = match u32::try_from(text.len()) {
            Ok(_) => Starts::Narrow(line_starts(text).map(|s| s as u32).collect()),
            Err(_) => Starts::Wide(line_starts(text).collect()),
        };
        LineIndex { starts }
    }

    /// Zero-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        match &self.starts {
            Starts::Narrow(starts) => {
                // An offset past 4 GiB is past every start of a narrow index.
                let offset = u32::try_from(offset).unwrap_or(u32::MAX);
                starts.partition_point(|&s| s <= offset) - 1
            }
            Starts::Wide(starts) => starts.partition_point(|&s| s <= offset) - 1,
        }
    }

    /// Byte offset where zero-based `line` starts; `None` past the last line.
    pub fn line_start(&self, line: usize) -> Option<usize> {
        match &self.starts {
            Starts::Narrow(starts) => starts.get(line).map(|&s| s as usize),
            Starts::Wide(starts) => starts.get(line).copied(),
        }
    }

    /// Number of lines (a final line ending starts one more line).
    pub fn len_lines(&self) -> usize {
        match &self.starts {
            Starts::Narrow(starts) => starts.len(),
            Starts::Wide(starts) => starts.len(),
        }
    }

    /// True when both are clones of one index (and so share their allocation).
    fn same_allocation(&self, other: &LineIndex) -> bool {
        match (&self.starts, &other.starts) {
            (Starts::Narrow(a), Starts::Narrow(b)) => std::sync::Arc::ptr_eq(a, b),
            (Starts::Wide(a), Starts::Wide(b)) => std::sync::Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Text made of line breaks of every kind, multi-byte characters and a BOM.
    fn mixed_text() -> impl Strategy<Value = String> {
        let pieces = prop::sample::select(vec![
            "a", "bc", " ", "\n", "\r\n", "\r", "\r\r\n", "é", "😀", "中", "\u{feff}", "\t",
        ]);
        prop::collection::vec(pieces, 0..40).prop_map(|p| p.concat())
    }

    proptest! {
        /// A compact document, a packed one (in blocks of any size) and a rope of the
        /// same text answer every question the same.
        #[test]
        fn compact_packed_and_rope_documents_agree(text in mixed_text(), block in 1usize..12) {
            let rope = Document::editable(&text, 3);
            prop_assert!(!rope.is_compact());
            for compact in [Document::new(&text, 3), packed(&text, block)] {
                prop_assert!(compact.is_compact() != compact.is_packed());
                agree(&compact, &rope, &text)?;
            }
        }
    }

    /// A document whose text is packed in blocks of about `block` bytes.
    fn packed(text: &str, block: usize) -> Document {
        Document {
            text: Text::Packed {
                text: PackedText::with_block_bytes(text, block).unwrap(),
                lines: LineIndex::new(text),
            },
            version: 3,
        }
    }

    /// Asserts that `compact` answers every question about `text` as `rope` does.
    fn agree(compact: &Document, rope: &Document, text: &str) -> Result<(), TestCaseError> {
        prop_assert_eq!(compact.len_bytes(), rope.len_bytes());
        prop_assert_eq!(compact.len_lines(), rope.len_lines());
        prop_assert_eq!(compact.text(), rope.text());
        prop_assert_eq!(LineIndex::new(text).len_lines(), rope.len_lines());
        for encoding in [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32] {
            for offset in 0..=text.len() + 2 {
                prop_assert_eq!(
                    compact.offset_to_line_col(offset, encoding),
                    rope.offset_to_line_col(offset, encoding),
                    "offset {} in {:?}",
                    offset,
                    encoding
                );
            }
            for line in 0..rope.len_lines() as u32 + 2 {
                for col in 0..text.len() as u32 + 3 {
                    let pos = LineCol { line, col };
                    prop_assert_eq!(
                        compact.line_col_to_offset(pos, encoding),
                        rope.line_col_to_offset(pos, encoding),
                        "{:?} in {:?}",
                        pos,
                        encoding
                    );
                }
            }
        }
        for start in 0..=text.len() + 1 {
            for end in 0..=text.len() + 1 {
                prop_assert_eq!(compact.slice(start..end), rope.slice(start..end));
            }
        }
        Ok(())
    }

    #[test]
    fn pack_compresses_a_long_compact_text_only_and_an_edit_makes_a_rope() {
        let long = "# Title\n\nSome text, é and 😀.\r\n".repeat(20);
        let mut doc = Document::new(&long, 2);
        doc.pack();
        assert!(doc.is_packed());
        assert_eq!((doc.text(), doc.version()), (long.clone(), 2));
        doc.apply_edits(&[TextEdit {
            range: 2..7,
            new_text: "Name".into(),
        }])
        .unwrap();
        assert!(!doc.is_packed() && !doc.is_compact());
        assert_eq!(doc.text(), long.replacen("Title", "Name", 1));
        doc.pack();
        assert!(!doc.is_packed(), "a rope stays a rope");
        let mut short = Document::new("# Short\n", 0);
        short.pack();
        assert!(short.is_compact(), "below PACK_MIN_BYTES");
    }

    #[test]
    fn an_edit_turns_a_compact_document_into_a_rope_and_a_failed_one_does_not() {
        let mut doc = Document::new("one\ntwo\n", 1);
        assert!(doc.is_compact());
        let bad = doc.apply_edits(&[TextEdit {
            range: 0..99,
            new_text: String::new(),
        }]);
        assert!(bad.is_err());
        assert!(doc.is_compact());
        assert_eq!(doc.text(), "one\ntwo\n");
        doc.apply_edits(&[TextEdit {
            range: 4..7,
            new_text: "2".into(),
        }])
        .unwrap();
        assert!(!doc.is_compact());
        assert_eq!(doc.text(), "one\n2\n");
        assert_eq!(doc.version(), 1);
    }

    #[test]
    fn a_compact_document_shares_only_its_own_texts_line_index() {
        let text = "a\nb\r\nc";
        let parse_lines = LineIndex::new(text);
        let mut doc = Document::new(text, 0);
        doc.share_lines(&LineIndex::new("a\nb"));
        let Text::Compact { lines, .. } = &doc.text else {
            panic!("compact");
        };
        assert!(!lines.same_allocation(&parse_lines));
        doc.share_lines(&parse_lines);
        let Text::Compact { lines, .. } = &doc.text else {
            panic!("compact");
        };
        assert!(lines.same_allocation(&parse_lines));
        assert_eq!(doc.len_lines(), 3);
        assert_eq!(
            doc.offset_to_line_col(5, Encoding::Utf16),
            LineCol { line: 2, col: 0 }
        );
    }

    #[test]
    fn edits_at_the_end_keep_off_the_final_line_break() {
        let apply = |text: &str, range: Range<usize>, new: &str| {
            format!("{}{new}{}", &text[..range.start], &text[range.end..])
        };
        // Text, edit range, new text, and the expected rewritten range and new text.
        type Case = (
            &'static str,
            Range<usize>,
            &'static str,
            Range<usize>,
            &'static str,
        );
        let cases: [Case; 6] = [
            // An append after the last line becomes an insertion at its end.
            ("Text.\n", 6..6, "\nMore.\n", 5..5, "\n\nMore."),
            ("Text.\r\n", 7..7, "More.\r\n", 5..5, "\r\nMore."),
            // A replacement of the last line keeps its line break out.
            ("A\nold\n", 2..6, "new\n", 2..5, "new"),
            // Edits that do not reach the end, or drop the final line break, stay.
            ("A\nold\n", 2..5, "new", 2..5, "new"),
            ("A\nold\n", 2..6, "new", 2..6, "new"),
            ("No break", 8..8, "\n", 8..8, "\n"),
        ];
        for (text, range, new, want_range, want_new) in cases {
            let (got_range, got_new) = keep_final_line_break(text, range.clone(), new);
            assert_eq!(
                (got_range.clone(), got_new.as_str()),
                (want_range, want_new),
                "{text:?}"
            );
            assert_eq!(
                apply(text, got_range, &got_new),
                apply(text, range, new),
                "{text:?}"
            );
        }
    }

    #[test]
    fn utf16_columns_count_surrogate_pairs() {
        // "😀" is one char, two UTF-16 code units, four UTF-8 bytes.
        let doc = Document::new("a😀b [x](y.md)\n", 0);
        let at_bracket = "a😀b ".len();
        assert_eq!(at_bracket, 7);
        assert_eq!(
            doc.offset_to_line_col(at_bracket, Encoding::Utf16),
            LineCol { line: 0, col: 5 }
        );
        assert_eq!(
            doc.offset_to_line_col(at_bracket, Encoding::Utf8),
            LineCol { line: 0, col: 7 }
        );
        assert_eq!(
            doc.offset_to_line_col(at_bracket, Encoding::Utf32),
            LineCol { line: 0, col: 4 }
        );
        assert_eq!(
            doc.line_col_to_offset(LineCol { line: 0, col: 5 }, Encoding::Utf16),
            7
        );
        assert_eq!(
            doc.line_col_to_offset(LineCol { line: 0, col: 4 }, Encoding::Utf32),
            7
        );
        // Column 2 is inside the surrogate pair: rounds down to the emoji's start.
        assert_eq!(
            doc.line_col_to_offset(LineCol { line: 0, col: 2 }, Encoding::Utf16),
            1
        );
    }

    #[test]
    fn crlf_and_lone_cr_are_line_breaks_and_columns_clamp() {
        let doc = Document::new("ab\r\ncd\ref\n", 0);
        assert_eq!(doc.len_lines(), 4);
        assert_eq!(
            doc.offset_to_line_col(4, Encoding::Utf16),
            LineCol { line: 1, col: 0 }
        );
        assert_eq!(
            doc.offset_to_line_col(7, Encoding::Utf16),
            LineCol { line: 2, col: 0 }
        );
        // Past the line end clamps before the "\r\n".
        assert_eq!(
            doc.line_col_to_offset(LineCol { line: 0, col: 99 }, Encoding::Utf16),
            2
        );
        assert_eq!(
            doc.line_col_to_offset(LineCol { line: 9, col: 0 }, Encoding::Utf16),
            10
        );
        let index = LineIndex::new("ab\r\ncd\ref\n");
        assert_eq!(index.line_of(4), 1);
        assert_eq!(index.line_of(7), 2);
        assert_eq!(index.len_lines(), 4);
    }

    #[test]
    fn mixed_line_endings_survive_edits_byte_for_byte() {
        let original = "one\ntwo\r\nthree\rfour\n";
        let mut doc = Document::new(original, 0);
        assert_eq!(doc.len_lines(), 5);
        // Replace "three" using a UTF-16 position, as an editor would send it.
        let start = doc.line_col_to_offset(LineCol { line: 2, col: 0 }, Encoding::Utf16);
        let end = doc.line_col_to_offset(LineCol { line: 2, col: 5 }, Encoding::Utf16);
        doc.apply_edits(&[TextEdit {
            range: start..end,
            new_text: "3".into(),
        }])
        .unwrap();
        assert_eq!(doc.text().as_bytes(), b"one\ntwo\r\n3\rfour\n");
    }

    #[test]
    fn edits_apply_in_order_and_preserve_untouched_bytes() {
        let original = "\u{feff}# T\r\n\r\nbody\nmore\r\n";
        let mut doc = Document::new(original, 1);
        let body = original.find("body").unwrap();
        doc.apply_edits(&[
            TextEdit {
                range: body..body + 4,
                new_text: "BODY!".into(),
            },
            // Applied against the result of the first edit.
            TextEdit {
                range: body + 5..body + 5,
                new_text: "?".into(),
            },
        ])
        .unwrap();
        assert_eq!(doc.text(), "\u{feff}# T\r\n\r\nBODY!?\nmore\r\n");
        let err = doc.apply_edits(&[
            TextEdit {
                range: 0..0,
                new_text: "x".into(),
            },
            TextEdit {
                range: 1..2,
                new_text: String::new(),
            },
        ]);
        // Byte 1 is inside the BOM after the first edit shifted it: nothing changes.
        assert_eq!(err, Err(EditError::NotCharBoundary { start: 1, end: 2 }));
        assert_eq!(doc.text(), "\u{feff}# T\r\n\r\nBODY!?\nmore\r\n");
        assert_eq!(
            doc.apply_edits(&[TextEdit {
                range: 5..500,
                new_text: String::new()
            }]),
            Err(EditError::OutOfBounds {
                start: 5,
                end: 500,
                len: doc.len_bytes()
            })
        );
    }
}
