//! Tables: CSV through `csv`, workbooks (XLSX, XLSM, XLS, ODS) through `calamine`.
//!
//! A CSV file is read as the text it is (its lines are the file's lines), one section
//! named by its header row. A workbook becomes text: per sheet a `# <sheet>` line and
//! its rows as a Markdown pipe table (the first row as the header), blank rows left
//! out; each sheet is a section named by the sheet and its header row.

use std::io::Cursor;

use calamine::{Data, Reader};

use crate::formats::{ExtractError, Extracted, Section};

/// The longest header row, in characters, kept as a section's name.
const HEADER_CHARS: usize = 200;

pub(super) fn csv(bytes: &[u8]) -> Result<Extracted, ExtractError> {
    let text = String::from_utf8_lossy(bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text).to_string();
    let first = text.lines().next().unwrap_or("");
    let delimiter = if first.contains('\t') && !first.contains(',') {
        b'\t'
    } else {
        b','
    };
    let mut reader = ::csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let header = match reader.records().next() {
        Some(Ok(record)) => header_name(record.iter()),
        Some(Err(e)) => {
            return Err(ExtractError::Malformed {
                format: "csv".into(),
                message: e.to_string(),
            });
        }
        None => None,
    };
    let lines = text.lines().count() as u32;
    Ok(Extracted {
        sections: vec![Section {
            heading_path: header.into_iter().collect(),
            start_line: 1,
            end_line: lines,
            ..Section::default()
        }],
        text,
        title: None,
    })
}

pub(super) fn workbook(bytes: &[u8]) -> Result<Extracted, ExtractError> {
    let malformed = |e: calamine::Error| match e {
        calamine::Error::Xlsx(calamine::XlsxError::Password)
        | calamine::Error::Xls(calamine::XlsError::Password) => ExtractError::Encrypted,
        other => ExtractError::Malformed {
            format: "spreadsheet".into(),
            message: other.to_string(),
        },
    };
    let mut workbook =
        calamine::open_workbook_auto_from_rs(Cursor::new(bytes)).map_err(malformed)?;
    let mut parts = Vec::new();
    for name in workbook.sheet_names() {
        let range = workbook.worksheet_range(&name).map_err(malformed)?;
        let rows: Vec<Vec<String>> = range
            .rows()
            .map(|row| row.iter().map(cell_text).collect::<Vec<_>>())
            .filter(|row| row.iter().any(|c| !c.is_empty()))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let mut text = format!("# {name}\n\n");
        let width = rows.iter().map(Vec::len).max().unwrap_or(0);
        for (i, row) in rows.iter().enumerate() {
            text.push('|');
            for c in 0..width {
                text.push(' ');
                text.push_str(row.get(c).map_or("", String::as_str));
                text.push_str(" |");
            }
            text.push('\n');
            if i == 0 {
                text.push('|');
                text.push_str(&" --- |".repeat(width));
                text.push('\n');
            }
        }
        let lines = text.lines().count() as u32;
        let heading: Vec<String> = std::iter::once(name.clone())
            .chain(header_name(rows[0].iter().map(String::as_str)))
            .collect();
        parts.push((
            text,
            vec![Section {
                heading_path: heading,
                start_line: 1,
                end_line: lines,
                ..Section::default()
            }],
        ));
    }
    let (text, sections) = super::sections::join(parts);
    Ok(Extracted {
        text,
        title: None,
        sections,
    })
}

/// A cell as table text: its value, `|` escaped and line breaks as spaces.
fn cell_text(cell: &Data) -> String {
    let text = match cell {
        Data::Empty => return String::new(),
        Data::String(s) => s.clone(),
        // A date is a day count to Excel: written as the date it is, so that it reads and
        // searches as one (`2024-03-05`, `2024-03-05 14:30:00`).
        Data::DateTime(dt) if dt.is_datetime() => {
            let (y, mo, d, h, mi, sec, _) = dt.to_ymd_hms_milli();
            if (h, mi, sec) == (0, 0, 0) {
                format!("{y:04}-{mo:02}-{d:02}")
            } else {
                format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{sec:02}")
            }
        }
        other => other.to_string(),
    };
    text.replace('|', "\\|")
        .replace(['\r', '\n'], " ")
        .trim()
        .to_string()
}

/// A header row as a section name: its non-empty cells, comma-separated, shortened.
fn header_name<'a>(cells: impl Iterator<Item = &'a str>) -> Option<String> {
    let joined = cells
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect::<Vec<_>>()
        .join(", ");
    (!joined.is_empty()).then(|| joined.chars().take(HEADER_CHARS).collect())
}
