//! The only place that sees LSP positions: byte offsets ↔ `Position`/`Range` in the
//! negotiated encoding, and paths ↔ URIs.
//!
//! Core offsets count the exact bytes of a document, a leading byte order mark
//! included. Editors do not show the BOM and do not count it in columns, so on the
//! first line of a document that starts with U+FEFF the BOM's width is removed from
//! outgoing columns and added to incoming ones.

use std::ops::Range;
use std::path::{Path, PathBuf};

use folio_core::document::{Document, Encoding, LineCol};
use tower_lsp_server::ls_types::{Position, PositionEncodingKind, Range as LspRange, Uri};

/// Picks the position encoding from the client's offer: UTF-8, then UTF-32, else UTF-16.
pub fn negotiate(offered: Option<&[PositionEncodingKind]>) -> Encoding {
    let offered = offered.unwrap_or(&[]);
    if offered.contains(&PositionEncodingKind::UTF8) {
        Encoding::Utf8
    } else if offered.contains(&PositionEncodingKind::UTF32) {
        Encoding::Utf32
    } else {
        Encoding::Utf16
    }
}

/// The wire name of an encoding.
pub fn encoding_kind(encoding: Encoding) -> PositionEncodingKind {
    match encoding {
        Encoding::Utf8 => PositionEncodingKind::UTF8,
        Encoding::Utf16 => PositionEncodingKind::UTF16,
        Encoding::Utf32 => PositionEncodingKind::UTF32,
    }
}

/// Width of a leading BOM in `encoding` units, 0 when the document has none.
fn bom_width(doc: &Document, encoding: Encoding) -> u32 {
    if doc.len_bytes() >= 3 && doc.slice(0..3).as_deref() == Some("\u{feff}") {
        match encoding {
            Encoding::Utf8 => 3,
            Encoding::Utf16 | Encoding::Utf32 => 1,
        }
    } else {
        0
    }
}

/// A byte offset as an LSP position.
pub fn position(doc: &Document, offset: usize, encoding: Encoding) -> Position {
    let lc = doc.offset_to_line_col(offset, encoding);
    let col = if lc.line == 0 {
        lc.col.saturating_sub(bom_width(doc, encoding))
    } else {
        lc.col
    };
    Position {
        line: lc.line,
        character: col,
    }
}

/// A byte range as an LSP range.
pub fn range(doc: &Document, bytes: &Range<usize>, encoding: Encoding) -> LspRange {
    LspRange {
        start: position(doc, bytes.start, encoding),
        end: position(doc, bytes.end, encoding),
    }
}

/// An LSP position as a byte offset; columns past the line end are clamped.
pub fn offset(doc: &Document, pos: Position, encoding: Encoding) -> usize {
    let col = if pos.line == 0 {
        pos.character.saturating_add(bom_width(doc, encoding))
    } else {
        pos.character
    };
    doc.line_col_to_offset(
        LineCol {
            line: pos.line,
            col,
        },
        encoding,
    )
}

/// An LSP range as a byte range (start and end ordered).
pub fn byte_range(doc: &Document, r: LspRange, encoding: Encoding) -> Range<usize> {
    let start = offset(doc, r.start, encoding);
    let end = offset(doc, r.end, encoding);
    start.min(end)..start.max(end)
}

/// The absolute file path of a `file:` URI.
pub fn uri_to_path(uri: &Uri) -> Option<PathBuf> {
    if uri.scheme().as_str() != "file" {
        return None;
    }
    uri.to_file_path().map(|p| p.into_owned())
}

/// The `file:` URI of an absolute path.
pub fn path_to_uri(path: &Path) -> Option<Uri> {
    Uri::from_file_path(path)
}

/// A host operation's error as a JSON-RPC error, the one place the language server maps
/// them: a bad request (`INVALID_ARGUMENT`, `INVALID_PATH`) is invalid params, everything
/// else an internal error whose message starts with the code (`NOT_CONFIGURED: …`).
pub fn host_error(err: folio_core::host::HostError) -> tower_lsp_server::jsonrpc::Error {
    use folio_core::host::ErrorCode;
    use tower_lsp_server::jsonrpc::{Error, ErrorCode as RpcCode};
    match err.code {
        ErrorCode::InvalidArgument | ErrorCode::InvalidPath => Error::invalid_params(err.message),
        code => Error {
            code: RpcCode::InternalError,
            message: format!("{}: {}", code.as_str(), err.message).into(),
            data: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_is_not_counted_on_the_first_line() {
        let doc = Document::new("\u{feff}a😀[x](y)\nb\n", 0);
        let at = "\u{feff}a😀".len();
        assert_eq!(
            position(&doc, at, Encoding::Utf16),
            Position {
                line: 0,
                character: 3
            }
        );
        assert_eq!(
            position(&doc, at, Encoding::Utf8),
            Position {
                line: 0,
                character: 5
            }
        );
        assert_eq!(
            offset(
                &doc,
                Position {
                    line: 0,
                    character: 3
                },
                Encoding::Utf16
            ),
            at
        );
        assert_eq!(
            offset(
                &doc,
                Position {
                    line: 0,
                    character: 5
                },
                Encoding::Utf8
            ),
            at
        );
        assert_eq!(
            offset(
                &doc,
                Position {
                    line: 1,
                    character: 0
                },
                Encoding::Utf8
            ),
            at + "[x](y)\n".len()
        );
    }

    #[test]
    fn negotiation_prefers_utf8_then_utf32() {
        assert_eq!(negotiate(None), Encoding::Utf16);
        assert_eq!(
            negotiate(Some(&[
                PositionEncodingKind::UTF16,
                PositionEncodingKind::UTF32
            ])),
            Encoding::Utf32
        );
        assert_eq!(
            negotiate(Some(&[
                PositionEncodingKind::UTF16,
                PositionEncodingKind::UTF8
            ])),
            Encoding::Utf8
        );
    }
}
