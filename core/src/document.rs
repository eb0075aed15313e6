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
#[derive(Clone, Debug)]
pub struct Document {
    rope: Rope,
    version: i32,
}

impl Document {
    /// Creates a document from its exact text; `version` is the editor's version, or 0.
    pub fn new(text: &str, version: i32) -> Document {
        Document {
            rope: Rope::from_str(text),
            version,
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
        self.rope.len_bytes()
    }

    /// Number of lines; a final line ending starts one more, empty, line (as in LSP).
    pub fn len_lines(&self) -> usize {
        self.rope.len_lines()
    }

    /// The whole text, exactly as stored.
    pub fn text(&self) -> String {
        self.rope.to_string()
    }

    /// The bytes `range` as a string; `None` when the range is out of bounds or splits a character.
    pub fn slice(&self, range: Range<usize>) -> Option<String> {
        self.rope.get_byte_slice(range).map(|s| s.to_string())
    }

    /// Applies edits in order, each against the result of the previous one.
    ///
    /// All edits are checked before any is applied against the text they will meet,
    /// so on error the document is unchanged.
    pub fn apply_edits(&mut self, edits: &[TextEdit]) -> Result<(), EditError> {
        let mut rope = self.rope.clone();
        for edit in edits {
            apply_one(&mut rope, edit)?;
        }
        self.rope = rope;
        Ok(())
    }

    /// Converts a byte offset to a line and column in `encoding`.
    ///
    /// An offset past the end is clamped to the end; an offset inside a character or
    /// inside a `\r\n` pair is moved back to the character's start.
    pub fn offset_to_line_col(&self, offset: usize, encoding: Encoding) -> LineCol {
        let offset = self.floor_char_boundary(offset.min(self.rope.len_bytes()));
        let line = self.rope.byte_to_line(offset);
        let line_start = self.rope.line_to_byte(line);
        let col = match encoding {
            Encoding::Utf8 => offset - line_start,
            Encoding::Utf32 => self.rope.byte_to_char(offset) - self.rope.byte_to_char(line_start),
            Encoding::Utf16 => {
                let c = self.rope.byte_to_char(offset);
                let c0 = self.rope.byte_to_char(line_start);
                self.rope.char_to_utf16_cu(c) - self.rope.char_to_utf16_cu(c0)
            }
        };
        LineCol {
            line: line as u32,
            col: col as u32,
        }
    }

    /// Converts a line and column in `encoding` to a byte offset.
    ///
    /// Following the LSP specification and common clients, a line past the end maps to the
    /// end of the text and a column past the end of its line (or inside a character or
    /// line ending) is clamped to the end of the line's content.
    pub fn line_col_to_offset(&self, pos: LineCol, encoding: Encoding) -> usize {
        let line = pos.line as usize;
        if line >= self.rope.len_lines() {
            return self.rope.len_bytes();
        }
        let line_start = self.rope.line_to_byte(line);
        let content_end = line_start + self.line_content_len(line);
        let col = pos.col as usize;
        let offset = match encoding {
            Encoding::Utf8 => line_start + col,
            Encoding::Utf32 => {
                let c0 = self.rope.byte_to_char(line_start);
                let c_end = self.rope.byte_to_char(content_end);
                self.rope.char_to_byte((c0 + col).min(c_end))
            }
            Encoding::Utf16 => {
                let c0 = self.rope.byte_to_char(line_start);
                let u0 = self.rope.char_to_utf16_cu(c0);
                let u_end = self
                    .rope
                    .char_to_utf16_cu(self.rope.byte_to_char(content_end));
                let u = (u0 + col).min(u_end);
                // A column inside a surrogate pair rounds down to the character's start.
                self.rope.char_to_byte(self.rope.utf16_cu_to_char(u))
            }
        };
        self.floor_char_boundary(offset.min(content_end))
    }

    /// Bytes of line `line` without its line ending.
    fn line_content_len(&self, line: usize) -> usize {
        let slice = self.rope.line(line);
        let mut len = slice.len_bytes();
        if len > 0 && slice.byte(len - 1) == b'\n' {
            len -= 1;
        }
        if len > 0 && slice.byte(len - 1) == b'\r' {
            len -= 1;
        }
        len
    }

    fn floor_char_boundary(&self, offset: usize) -> usize {
        // `byte_to_char` maps an offset inside a character to that character.
        self.rope.char_to_byte(self.rope.byte_to_char(offset))
    }
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
/// Used where a parse result needs line numbers without a rope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// Builds the index of `text` (one pass over its bytes).
    pub fn new(text: &str) -> LineIndex {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => starts.push(i + 1),
                b'\r' => {
                    if bytes.get(i + 1) == Some(&b'\n') {
                        i += 1;
                    }
                    starts.push(i + 1);
                }
                _ => {}
            }
            i += 1;
        }
        LineIndex { starts }
    }

    /// Zero-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset) - 1
    }

    /// Byte offset where zero-based `line` starts; `None` past the last line.
    pub fn line_start(&self, line: usize) -> Option<usize> {
        self.starts.get(line).copied()
    }

    /// Number of lines (a final line ending starts one more line).
    pub fn len_lines(&self) -> usize {
        self.starts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
