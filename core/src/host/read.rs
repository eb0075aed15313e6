//! `kb_read` and `kb_outline`: the current source, parsed directly (not the index).

use crate::edit::table::{TableView, read_table};
use crate::features::outline::{OutlineNode, outline};
use crate::parse::{ElementKind, Parsed, parse};
use crate::parse::{Resolution, resolve_pointer as resolve};
use crate::pointer::{Pointer, hash_bytes, hex};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ErrorCode, Host, HostError, HostResult};

/// Default page size of `kb_read` in bytes.
pub const DEFAULT_MAX_BYTES: usize = 20_000;

/// `kb_read` arguments.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// KB-relative path of a document, `/`-separated, exactly as search returns it: a Markdown document, or a PDF, Office file, spreadsheet, text or source file folio indexes (its extracted text).
    pub path: String,
    /// Concrete pointer `logical~selfHash~subtreeHash` from kb_search, kb_read or kb_outline; reads what the element owns (a heading: its whole section). A hit in another format has a pointer `L<start>-<end>~hash~hash`: its lines. Omit to read the whole document.
    #[serde(default)]
    pub pointer: Option<String>,
    /// Byte offset into the selected text to start from (use `next_offset` of the previous page). Default 0.
    #[serde(default)]
    pub offset: Option<usize>,
    /// Maximum bytes of text to return (default 20000, at most 200000); pages end at a line break.
    #[serde(default)]
    pub max_bytes: Option<usize>,
}

/// One element in the returned text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ElementInfo {
    /// Concrete pointer for kb_patch / kb_read.
    pub pointer: String,
    /// Element kind: heading, paragraph, list_item, table, block_quote, code, html, thematic_break, frontmatter, definition, footnote_definition, math.
    pub kind: String,
    /// Heading level (headings only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<u8>,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
}

/// A table's structured projection (with a table pointer).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TableInfo {
    /// Columns: name, index and alignment (none, left, center, right).
    pub columns: Vec<ColumnInfo>,
    /// Data rows: 0-based index and displayed cell texts.
    pub rows: Vec<RowInfo>,
}

/// One table column.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ColumnInfo {
    /// Header text.
    pub name: String,
    /// 0-based index.
    pub index: usize,
    /// none, left, center or right.
    pub alignment: String,
}

/// One table row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RowInfo {
    /// 0-based data row index.
    pub index: usize,
    /// Cell texts as displayed.
    pub cells: Vec<String>,
}

impl From<TableView> for TableInfo {
    fn from(t: TableView) -> TableInfo {
        TableInfo {
            columns: t
                .columns
                .into_iter()
                .map(|c| ColumnInfo {
                    name: c.name,
                    index: c.index,
                    alignment: serde_json::to_value(c.alignment)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default(),
                })
                .collect(),
            rows: t
                .rows
                .into_iter()
                .map(|r| RowInfo {
                    index: r.index,
                    cells: r.cells,
                })
                .collect(),
        }
    }
}

/// `kb_read` output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ReadOutput {
    /// The document's path.
    pub path: String,
    /// Set when the file is not valid UTF-8: the text shows U+FFFD for each invalid
    /// sequence, and the file is read-only (writes are refused, its bytes never rewritten).
    #[serde(rename = "readOnly", skip_serializing_if = "Option::is_none")]
    pub read_only: Option<String>,
    /// XxHash64 of the whole file as it is now (16 hex digits).
    #[serde(rename = "sourceHash")]
    pub source_hash: String,
    /// The element read, with its current pointer (absent for whole-document reads).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// True when the given pointer's address had moved and it was re-anchored by kind + selfHash.
    pub reanchored: bool,
    /// The text of this page.
    pub text: String,
    /// Byte offset of this page in the selected text.
    pub offset: usize,
    /// Offset of the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// Bytes of the selected text (element or document).
    pub total_bytes: usize,
    /// First line of this page's text in the document, 1-based.
    pub start_line: u32,
    /// Last line of this page's text in the document, 1-based, inclusive (a final line
    /// break does not start another line).
    pub end_line: u32,
    /// Elements that start in this page, with their pointers.
    pub elements: Vec<ElementInfo>,
    /// Columns and rows when the pointer names a table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<TableInfo>,
    /// For a document other than Markdown: its format (`pdf`, `docx`, `code:rust`, ...);
    /// the text is then its extracted text (`text/plain`), whose lines search hits cite.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
}

/// `kb_outline` arguments.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct OutlineArgs {
    /// KB-relative path of a Markdown document.
    pub path: String,
}

/// One heading of an outline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct OutlineHeading {
    /// Concrete pointer of the heading (use with replace_section and kb_read).
    pub pointer: String,
    /// Level 1–6.
    pub level: u8,
    /// Heading text.
    pub text: String,
    /// GitHub-style anchor slug.
    pub slug: String,
    /// Line of the heading, 1-based.
    pub start_line: u32,
    /// Last line of its section, 1-based.
    pub end_line: u32,
    /// Headings nested under this one.
    pub children: Vec<OutlineHeading>,
}

/// `kb_outline` output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct OutlineOutput {
    /// The document's path.
    pub path: String,
    /// Set when the file is not valid UTF-8: the text shows U+FFFD for each invalid
    /// sequence, and the file is read-only (writes are refused, its bytes never rewritten).
    #[serde(rename = "readOnly", skip_serializing_if = "Option::is_none")]
    pub read_only: Option<String>,
    /// XxHash64 of the file.
    #[serde(rename = "sourceHash")]
    pub source_hash: String,
    /// Document title (frontmatter `title`, else the first level-1 heading).
    pub title: Option<String>,
    /// Top-level headings with their nested headings: every heading that starts a section (one nested in a block quote or list item does not, and is not listed).
    pub headings: Vec<OutlineHeading>,
}

pub(crate) fn element_info(e: &crate::parse::Element) -> ElementInfo {
    ElementInfo {
        pointer: e.pointer().to_string(),
        kind: e.kind.as_str().to_string(),
        level: (e.kind == ElementKind::Heading).then_some(e.level),
        start_line: e.start_line,
        end_line: e.end_line,
    }
}

/// Resolves a pointer string against a parse, as an MCP error on failure.
pub(crate) fn resolve_pointer(parsed: &Parsed, pointer: &str) -> HostResult<(usize, bool)> {
    let p = Pointer::parse(pointer).map_err(|e| HostError::invalid(e.to_string()))?;
    let r = resolve(parsed, &p, false)
        .map_err(|e| HostError::new(ErrorCode::Conflict, e.to_string()))?;
    Ok((r.index(), matches!(r, Resolution::Reanchored(_))))
}

impl Host {
    /// `kb_read`: a Markdown document, or the extracted text of a document of a format
    /// `[parsers].enabled` turns on (its extracted text, as [`Host::read_extracted`] reads
    /// it; a hit's `L<start>-<end>~…` pointer selects its lines).
    pub fn read(&self, args: &ReadArgs) -> HostResult<ReadOutput> {
        if let Some(format) = self.extracted_format(&args.path) {
            return self.read_extracted_page(args, format);
        }
        let (_, text, read_only) = self.read_document_noted(&args.path)?;
        let parsed = parse(&text);
        let (range, pointer, reanchored, table) =
            match args.pointer.as_deref().filter(|p| *p != "document") {
                None => (0..text.len(), None, false, None),
                Some(p) => {
                    let (i, moved) = resolve_pointer(&parsed, p)?;
                    let e = &parsed.elements[i];
                    let table = (e.kind == ElementKind::Table)
                        .then(|| TableInfo::from(read_table(&text[e.range.clone()])));
                    (
                        e.subtree.clone(),
                        Some(e.pointer().to_string()),
                        moved,
                        table,
                    )
                }
            };
        let selected = &text[range.clone()];
        let (offset, end) = page_of(selected, args)?;
        let page_start = range.start + offset;
        let page_end = range.start + end;
        let elements = parsed
            .elements
            .iter()
            .filter(|e| {
                e.kind != ElementKind::Document
                    && e.range.start >= page_start
                    && e.range.start < page_end.max(page_start + 1)
            })
            .map(element_info)
            .collect();
        let page = text[page_start..page_end].trim_end_matches(['\n', '\r']);
        let start_line = parsed.line_of(page_start);
        let end_line = if page.is_empty() {
            start_line
        } else {
            parsed.line_of(page_start + page.len() - 1)
        };
        Ok(ReadOutput {
            path: args.path.clone(),
            read_only,
            start_line,
            end_line,
            source_hash: hex(hash_bytes(text.as_bytes())),
            pointer,
            reanchored,
            text: selected[offset..end].to_string(),
            offset,
            next_offset: (end < selected.len()).then_some(end),
            total_bytes: selected.len(),
            elements,
            table,
            format: None,
        })
    }

    /// `kb_outline`.
    pub fn outline(&self, args: &OutlineArgs) -> HostResult<OutlineOutput> {
        let (_, text, read_only) = self.read_document_noted(&args.path)?;
        let parsed = parse(&text);
        let headings = outline_headings(&parsed, &outline(&parsed));
        Ok(OutlineOutput {
            path: args.path.clone(),
            read_only,
            source_hash: hex(hash_bytes(text.as_bytes())),
            title: Some(parsed.title_for(&args.path, self.is_vault())),
            headings,
        })
    }
}

/// The outline's nodes as `kb_outline` lists them.
fn outline_headings(parsed: &Parsed, nodes: &[OutlineNode]) -> Vec<OutlineHeading> {
    nodes
        .iter()
        .map(|node| {
            let (h, e) = (
                &parsed.headings[node.heading],
                &parsed.elements[node.element],
            );
            OutlineHeading {
                pointer: e.pointer().to_string(),
                level: h.level,
                text: h.text.clone(),
                slug: h.slug.clone(),
                start_line: e.start_line,
                end_line: parsed
                    .line_of(node.section.end.saturating_sub(1).max(node.section.start)),
                children: outline_headings(parsed, &node.children),
            }
        })
        .collect()
}

/// Where a page of at most `max` bytes of `text` that starts at `offset` (a character
/// boundary) ends, in bytes: after the last line break in it when there is one, else at
/// the last character boundary, and never before the end of the first character (so a
/// `max` smaller than one character still moves on).
/// The page of `selected` that `args` asks for, as byte offsets `(start, end)`: from
/// `offset` (default 0), at most `max_bytes` (default [`DEFAULT_MAX_BYTES`], at most
/// 200,000), ending at a line break.
///
/// Errors: `INVALID_ARGUMENT` for `max_bytes` 0, an offset past the end or inside a
/// character.
pub(crate) fn page_of(selected: &str, args: &ReadArgs) -> HostResult<(usize, usize)> {
    let max = args.max_bytes.unwrap_or(DEFAULT_MAX_BYTES);
    if max == 0 {
        return Err(HostError::invalid("`max_bytes` must be at least 1"));
    }
    let max = max.min(200_000);
    let offset = args.offset.unwrap_or(0);
    if offset > selected.len() {
        return Err(HostError::invalid(format!(
            "offset {offset} is past the end ({} bytes)",
            selected.len()
        )));
    }
    if !selected.is_char_boundary(offset) {
        return Err(HostError::invalid(format!(
            "offset {offset} is inside a character; pass the `next_offset` of the previous page"
        )));
    }
    Ok((offset, page_end(selected, offset, max)))
}

fn page_end(text: &str, offset: usize, max: usize) -> usize {
    let mut end = offset.saturating_add(max).min(text.len());
    if end == text.len() {
        return end;
    }
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[offset..end].rfind('\n') {
        Some(i) => offset + i + 1,
        None if end > offset => end,
        None => text[offset..]
            .chars()
            .next()
            .map_or(text.len(), |c| offset + c.len_utf8()),
    }
}
