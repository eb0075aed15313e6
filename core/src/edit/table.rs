//! GFM pipe tables: reading columns and rows, and source-aware edits.
//!
//! A table element's lines are split into cells on unescaped pipes. Rows an edit does
//! not change keep their exact bytes; changed rows are written as `| a | b |`. Literal
//! values are escaped so they stay one cell of plain text; `markdown` values only have
//! their pipes escaped.

use crate::document::TextEdit;
use crate::parse::{ElementKind, Parsed, parse};
use crate::parse::{Resolution, resolve_pointer as resolve};
use crate::pointer::{Pointer, hash_bytes, hex};

use super::{EditError, Expect, apply_edits, dominant_eol, verify};

/// Column alignment from the delimiter row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Alignment {
    /// `---`
    None,
    /// `:--`
    Left,
    /// `:-:`
    Center,
    /// `--:`
    Right,
}

/// One column of a table.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Column {
    /// Header text (escapes removed).
    pub name: String,
    /// 0-based index.
    pub index: usize,
    /// Alignment.
    pub alignment: Alignment,
}

/// One data row.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Row {
    /// 0-based index among data rows.
    pub index: usize,
    /// Cell texts as displayed (escaped pipes unescaped), one per column.
    pub cells: Vec<String>,
}

/// A table read from source.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TableView {
    /// Columns in order.
    pub columns: Vec<Column>,
    /// Data rows in order.
    pub rows: Vec<Row>,
}

struct Grid {
    /// Raw cell sources per line (header, delimiter, rows).
    lines: Vec<Vec<String>>,
    /// Whether each line was changed by the edit.
    dirty: Vec<bool>,
    /// Original line texts (without line endings) and their indentation.
    original: Vec<String>,
    indent: String,
}

fn split_cells(line: &str) -> Vec<String> {
    let mut s = line.trim();
    if let Some(rest) = s.strip_prefix('|') {
        s = rest;
    }
    let bytes = s.as_bytes();
    // A trailing pipe that is not escaped closes the row.
    if s.ends_with('|') && !(bytes.len() >= 2 && bytes[bytes.len() - 2] == b'\\') {
        s = &s[..s.len() - 1];
    }
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                cur.push(c);
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '|' => cells.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    cells.push(cur.trim().to_string());
    cells
}

/// A cell's text with backslash escapes of ASCII punctuation removed (CommonMark 2.4),
/// so a literal value written by an edit reads back as given.
fn display(cell: &str) -> String {
    let mut out = String::with_capacity(cell.len());
    let mut chars = cell.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek().is_some_and(|n| n.is_ascii_punctuation()) {
            out.push(chars.next().expect("peeked"));
        } else {
            out.push(c);
        }
    }
    out
}

fn alignment_of(delim: &str) -> Alignment {
    let d = delim.trim();
    match (d.starts_with(':'), d.ends_with(':') && d.len() > 1) {
        (true, true) => Alignment::Center,
        (true, false) => Alignment::Left,
        (false, true) => Alignment::Right,
        _ => Alignment::None,
    }
}

fn delimiter(a: Alignment) -> String {
    match a {
        Alignment::None => "---".into(),
        Alignment::Left => ":---".into(),
        Alignment::Center => ":---:".into(),
        Alignment::Right => "---:".into(),
    }
}

impl Grid {
    fn parse(source: &str) -> Grid {
        let original: Vec<String> = source
            .lines()
            .map(|l| l.trim_end_matches('\r').to_string())
            .collect();
        let indent: String = original
            .get(1)
            .map(|l| l.chars().take_while(|c| *c == ' ').collect())
            .unwrap_or_default();
        let lines: Vec<Vec<String>> = original.iter().map(|l| split_cells(l)).collect();
        let dirty = vec![false; lines.len()];
        Grid {
            lines,
            dirty,
            original,
            indent,
        }
    }

    fn width(&self) -> usize {
        self.lines.first().map_or(0, Vec::len)
    }

    fn view(&self) -> TableView {
        let width = self.width();
        let aligns: Vec<Alignment> = self
            .lines
            .get(1)
            .map(|d| d.iter().map(|c| alignment_of(c)).collect())
            .unwrap_or_default();
        let columns = self.lines[0]
            .iter()
            .enumerate()
            .map(|(index, name)| Column {
                name: display(name),
                index,
                alignment: aligns.get(index).copied().unwrap_or(Alignment::None),
            })
            .collect();
        let rows = self.lines[2..]
            .iter()
            .enumerate()
            .map(|(index, cells)| {
                let mut cells: Vec<String> = cells.iter().take(width).map(|c| display(c)).collect();
                cells.resize(width, String::new());
                Row { index, cells }
            })
            .collect();
        TableView { columns, rows }
    }

    fn render(&self, eol: &str) -> String {
        let width = self.width();
        let out: Vec<String> = self
            .lines
            .iter()
            .enumerate()
            .map(|(i, cells)| {
                if !self.dirty[i] {
                    return self.original[i].clone();
                }
                let mut cells = cells.clone();
                cells.resize(width, String::new());
                format!("{}| {} |", self.indent, cells.join(" | "))
            })
            .collect();
        out.join(eol)
    }
}

/// Reads the table at `range` of `text`.
pub fn read_table(source: &str) -> TableView {
    Grid::parse(source).view()
}

/// How a cell value is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueFormat {
    /// Literal text: Markdown punctuation is escaped.
    #[default]
    Text,
    /// Inline Markdown: only pipes are escaped.
    Markdown,
}

/// Picks a row: by `where` (exact, case-sensitive match of a column's displayed text) or index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowSelector {
    /// `(column name, value)`.
    pub where_eq: Option<(String, String)>,
    /// 0-based data row index.
    pub index: Option<usize>,
}

/// Picks a column: by header name or index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ColumnSelector {
    /// Header text.
    pub name: Option<String>,
    /// 0-based index.
    pub index: Option<usize>,
}

/// One table edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableAction {
    /// Set cells; all updates apply together.
    UpdateCells(Vec<(RowSelector, ColumnSelector, String)>),
    /// Insert a row at `at` (default: at the end); values by column name, or in column order.
    InsertRow {
        at: Option<usize>,
        by_name: Vec<(String, String)>,
        in_order: Vec<String>,
    },
    /// Delete a row.
    DeleteRow(RowSelector),
    /// Insert a column at `at` (default: at the end) with a default value for every row.
    InsertColumn {
        name: String,
        at: Option<usize>,
        alignment: Alignment,
        default: String,
    },
    /// Delete a column.
    DeleteColumn(ColumnSelector),
    /// Rename a column.
    RenameColumn(ColumnSelector, String),
    /// Set a column's alignment.
    SetAlignment(ColumnSelector, Alignment),
}

/// The result of a table edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableOutcome {
    /// The new document text.
    pub text: String,
    /// The edit against the original text.
    pub edit: TextEdit,
    /// The table's new pointer.
    pub pointer: String,
    /// XxHash64 of the new text.
    pub source_hash: String,
    /// True when the pointer was re-anchored.
    pub reanchored: bool,
    /// The table after the edit.
    pub table: TableView,
}

/// Escapes a value for a cell.
pub fn escape_cell(value: &str, format: ValueFormat) -> Result<String, EditError> {
    if value.contains(['\n', '\r']) {
        return Err(EditError::InvalidArgument(
            "a table cell cannot hold a line break".into(),
        ));
    }
    let mut out = String::with_capacity(value.len());
    let mut prev_backslash = false;
    for c in value.chars() {
        match format {
            ValueFormat::Text => {
                if matches!(
                    c,
                    '\\' | '|' | '*' | '_' | '`' | '[' | ']' | '<' | '>' | '~' | '!' | '&' | '#'
                ) {
                    out.push('\\');
                }
            }
            ValueFormat::Markdown => {
                if c == '|' && !prev_backslash {
                    out.push('\\');
                }
            }
        }
        prev_backslash = c == '\\' && !prev_backslash;
        out.push(c);
    }
    Ok(out.trim().to_string())
}

fn column_index(grid: &Grid, sel: &ColumnSelector) -> Result<usize, EditError> {
    let view = grid.view();
    if let Some(name) = &sel.name {
        let hits: Vec<usize> = view
            .columns
            .iter()
            .filter(|c| &c.name == name)
            .map(|c| c.index)
            .collect();
        return match hits.as_slice() {
            [i] => Ok(*i),
            [] => Err(EditError::InvalidArgument(format!(
                "no column named `{name}`"
            ))),
            _ => Err(EditError::InvalidArgument(format!(
                "several columns are named `{name}`; use columnIndex"
            ))),
        };
    }
    match sel.index {
        Some(i) if i < view.columns.len() => Ok(i),
        Some(i) => Err(EditError::InvalidArgument(format!(
            "column index {i} is out of range (the table has {} columns)",
            view.columns.len()
        ))),
        None => Err(EditError::InvalidArgument(
            "name a column (`column`) or give `columnIndex`".into(),
        )),
    }
}

fn row_index(grid: &Grid, sel: &RowSelector) -> Result<usize, EditError> {
    let view = grid.view();
    if let Some((col, value)) = &sel.where_eq {
        let c = column_index(
            grid,
            &ColumnSelector {
                name: Some(col.clone()),
                index: None,
            },
        )?;
        let hits: Vec<usize> = view
            .rows
            .iter()
            .filter(|r| &r.cells[c] == value)
            .map(|r| r.index)
            .collect();
        return match hits.as_slice() {
            [i] => Ok(*i),
            [] => Err(EditError::InvalidArgument(format!(
                "no row has `{col}` equal to `{value}`"
            ))),
            _ => Err(EditError::InvalidArgument(format!(
                "{} rows have `{col}` equal to `{value}`; use rowIndex",
                hits.len()
            ))),
        };
    }
    match sel.index {
        Some(i) if i < view.rows.len() => Ok(i),
        Some(i) => Err(EditError::InvalidArgument(format!(
            "row index {i} is out of range (the table has {} rows)",
            view.rows.len()
        ))),
        None => Err(EditError::InvalidArgument(
            "select a row with `where` or `rowIndex`".into(),
        )),
    }
}

/// Edits the table that `pointer` names in `text`.
///
/// Errors: [`EditError::Conflict`] when the table changed since it was read;
/// [`EditError::InvalidArgument`] for a pointer that is not a table, unknown rows or
/// columns, or values with line breaks.
pub fn edit_table(
    text: &str,
    pointer: &str,
    action: &TableAction,
    format: ValueFormat,
) -> Result<TableOutcome, EditError> {
    let parsed = parse(text);
    let resolution = resolve_table(&parsed, pointer)?;
    let el = &parsed.elements[resolution.index()];
    let eol = dominant_eol(text);
    let mut grid = Grid::parse(&text[el.range.clone()]);
    let width = grid.width();
    if grid.lines.len() < 2 || grid.lines.iter().skip(2).any(|r| r.len() > width) {
        return Err(EditError::InvalidArgument(
            "this table has rows with extra cells and cannot be edited safely".into(),
        ));
    }
    grid.apply(action, format)?;
    let rendered = grid.render(eol);
    let rendered = rendered
        .strip_prefix(grid.indent.as_str())
        .unwrap_or(&rendered)
        .to_string();
    let edit = TextEdit {
        range: el.range.clone(),
        new_text: rendered,
    };
    let reanchored = matches!(resolution, Resolution::Reanchored(_));
    edited_table(text, &parsed, edit, reanchored)
}

/// Parses `pointer`, which must name a table, and resolves it in `parsed`.
fn resolve_table(parsed: &Parsed, pointer: &str) -> Result<Resolution, EditError> {
    let p = Pointer::parse(pointer).map_err(|e| EditError::InvalidArgument(e.to_string()))?;
    if p.kind() != Some(ElementKind::Table) {
        return Err(EditError::InvalidArgument(format!(
            "`{pointer}` is not a table pointer (tN)"
        )));
    }
    resolve(parsed, &p, false).map_err(|e| EditError::Conflict(e.to_string()))
}

/// Applies `edit` (the rewritten table) to `text`, checks that only the table changed
/// and that it is still one table, and reads it back.
fn edited_table(
    text: &str,
    parsed: &Parsed,
    edit: TextEdit,
    reanchored: bool,
) -> Result<TableOutcome, EditError> {
    let new_text = apply_edits(text, std::slice::from_ref(&edit))?;
    let new_parsed = parse(&new_text);
    verify(
        text,
        parsed,
        &new_parsed,
        &new_text,
        std::slice::from_ref(&edit),
        &[Expect::One(ElementKind::Table, 0)],
    )?;
    let new_el = new_parsed
        .elements
        .iter()
        .find(|e| e.kind == ElementKind::Table && e.range.start == edit.range.start)
        .ok_or_else(|| {
            EditError::Conflict(
                "the edited table no longer parses as a table; nothing was written".into(),
            )
        })?;
    let table = read_table(&new_text[new_el.range.clone()]);
    Ok(TableOutcome {
        pointer: new_el.pointer().to_string(),
        source_hash: hex(hash_bytes(new_text.as_bytes())),
        text: new_text,
        edit,
        reanchored,
        table,
    })
}

/// The table actions, on the grid of a table whose rows have no extra cells.
impl Grid {
    /// Applies one action; values are escaped as `format` says.
    fn apply(&mut self, action: &TableAction, format: ValueFormat) -> Result<(), EditError> {
        match action {
            TableAction::UpdateCells(updates) => self.update_cells(updates, format),
            TableAction::InsertRow {
                at,
                by_name,
                in_order,
            } => self.insert_row(*at, by_name, in_order, format),
            TableAction::DeleteRow(sel) => self.delete_row(sel),
            TableAction::InsertColumn {
                name,
                at,
                alignment,
                default,
            } => self.insert_column(name, *at, *alignment, default, format),
            TableAction::DeleteColumn(sel) => self.delete_column(sel),
            TableAction::RenameColumn(sel, new_name) => self.rename_column(sel, new_name),
            TableAction::SetAlignment(sel, alignment) => self.set_alignment(sel, *alignment),
        }
    }

    /// Sets cells, all of them or none: every cell is found and escaped first, and named once.
    fn update_cells(
        &mut self,
        updates: &[(RowSelector, ColumnSelector, String)],
        format: ValueFormat,
    ) -> Result<(), EditError> {
        let width = self.width();
        if updates.is_empty() {
            return Err(EditError::InvalidArgument(
                "`updates` must not be empty".into(),
            ));
        }
        let mut planned: Vec<(usize, usize, String)> = Vec::new();
        for (row, col, value) in updates {
            let (r, c) = (row_index(self, row)?, column_index(self, col)?);
            if planned.iter().any(|p| (p.0, p.1) == (r, c)) {
                return Err(EditError::InvalidArgument(format!(
                    "two updates name the same cell (row {r}, column {c}); give each cell once"
                )));
            }
            planned.push((r, c, escape_cell(value, format)?));
        }
        for (r, c, v) in planned {
            let line = &mut self.lines[r + 2];
            line.resize(width, String::new());
            line[c] = v;
            self.dirty[r + 2] = true;
        }
        Ok(())
    }

    /// Inserts a row at data row `at` (default: at the end), its values by column name or
    /// in column order.
    fn insert_row(
        &mut self,
        at: Option<usize>,
        by_name: &[(String, String)],
        in_order: &[String],
        format: ValueFormat,
    ) -> Result<(), EditError> {
        let width = self.width();
        let mut cells = vec![String::new(); width];
        if !by_name.is_empty() {
            for (name, v) in by_name {
                let c = column_index(
                    self,
                    &ColumnSelector {
                        name: Some(name.clone()),
                        index: None,
                    },
                )?;
                cells[c] = escape_cell(v, format)?;
            }
        } else {
            if in_order.len() > width {
                return Err(EditError::InvalidArgument(format!(
                    "{} values for {width} columns",
                    in_order.len()
                )));
            }
            for (i, v) in in_order.iter().enumerate() {
                cells[i] = escape_cell(v, format)?;
            }
        }
        let n_rows = self.lines.len() - 2;
        let at = at.unwrap_or(n_rows);
        if at > n_rows {
            return Err(EditError::InvalidArgument(format!(
                "row index {at} is out of range (0..={n_rows})"
            )));
        }
        self.lines.insert(at + 2, cells);
        self.dirty.insert(at + 2, true);
        self.original.insert(at + 2, String::new());
        Ok(())
    }

    /// Deletes the selected row.
    fn delete_row(&mut self, sel: &RowSelector) -> Result<(), EditError> {
        let r = row_index(self, sel)?;
        self.lines.remove(r + 2);
        self.dirty.remove(r + 2);
        self.original.remove(r + 2);
        Ok(())
    }

    /// Inserts a column at `at` (default: at the end) with `default` in every row.
    fn insert_column(
        &mut self,
        name: &str,
        at: Option<usize>,
        alignment: Alignment,
        default: &str,
        format: ValueFormat,
    ) -> Result<(), EditError> {
        let width = self.width();
        let at = at.unwrap_or(width);
        if at > width {
            return Err(EditError::InvalidArgument(format!(
                "column index {at} is out of range (0..={width})"
            )));
        }
        let name = escape_cell(name, ValueFormat::Text)?;
        let default = escape_cell(default, format)?;
        for (i, line) in self.lines.iter_mut().enumerate() {
            line.resize(width, String::new());
            let v = match i {
                0 => name.clone(),
                1 => delimiter(alignment),
                _ => default.clone(),
            };
            line.insert(at, v);
        }
        self.dirty.iter_mut().for_each(|d| *d = true);
        Ok(())
    }

    /// Deletes the selected column, unless it is the only one.
    fn delete_column(&mut self, sel: &ColumnSelector) -> Result<(), EditError> {
        let width = self.width();
        let c = column_index(self, sel)?;
        if width == 1 {
            return Err(EditError::InvalidArgument(
                "cannot delete the only column; delete the table with kb_patch".into(),
            ));
        }
        for line in self.lines.iter_mut() {
            line.resize(width, String::new());
            line.remove(c);
        }
        self.dirty.iter_mut().for_each(|d| *d = true);
        Ok(())
    }

    /// Renames the selected column; column names stay unique.
    fn rename_column(&mut self, sel: &ColumnSelector, new_name: &str) -> Result<(), EditError> {
        let c = column_index(self, sel)?;
        let escaped = escape_cell(new_name, ValueFormat::Text)?;
        if self.lines[0]
            .iter()
            .enumerate()
            .any(|(i, h)| i != c && h.trim() == escaped.trim())
        {
            return Err(EditError::InvalidArgument(format!(
                "another column is already named `{new_name}`; column names must stay unique"
            )));
        }
        self.lines[0][c] = escaped;
        self.dirty[0] = true;
        Ok(())
    }

    /// Sets the selected column's alignment in the delimiter row.
    fn set_alignment(
        &mut self,
        sel: &ColumnSelector,
        alignment: Alignment,
    ) -> Result<(), EditError> {
        let width = self.width();
        let c = column_index(self, sel)?;
        self.lines[1].resize(width, "---".into());
        self.lines[1][c] = delimiter(alignment);
        self.dirty[1] = true;
        Ok(())
    }
}
