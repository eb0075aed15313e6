//! PDF through `pdf-extract` (on `lopdf`): the text of each page in reading order, one
//! section per page carrying its page number, the pages joined by a blank line.
//!
//! Why this library: it is pure Rust (it builds offline, with no system library such as
//! Poppler, MuPDF or PDFium), has been kept since 2016, reads pages separately, and maps
//! glyphs to text through each font's ToUnicode map and encodings, which CJK text needs;
//! `lopdf` beneath it is the most used PDF object reader in Rust. A document encrypted
//! with a user password is refused; one encrypted with the empty password only (many are,
//! to carry permission flags) is read.

use super::{ExtractError, Extracted, Section};

pub(super) fn extract(bytes: &[u8]) -> Result<Extracted, ExtractError> {
    let malformed = |message: String| ExtractError::Malformed {
        format: "pdf".into(),
        message,
    };
    let document = lopdf::Document::load_mem(bytes).map_err(|e| malformed(e.to_string()))?;
    if document.is_encrypted() {
        let mut copy = document.clone();
        if copy.decrypt("").is_err() {
            return Err(ExtractError::Encrypted);
        }
    }
    let title = document_title(&document);
    drop(document);
    let pages = pdf_extract::extract_text_from_mem_by_pages(bytes).map_err(|e| match e {
        pdf_extract::OutputError::PdfError(lopdf::Error::Decryption(_)) => ExtractError::Encrypted,
        other => malformed(other.to_string()),
    })?;
    let parts = pages
        .into_iter()
        .enumerate()
        .map(|(i, page)| {
            let page = tidy(&page);
            let lines = page.lines().count() as u32;
            let section = Section {
                start_line: 1,
                end_line: lines,
                page: Some(i as u32 + 1),
                ..Section::default()
            };
            (page, vec![section])
        })
        .collect();
    let (text, sections) = super::sections::join(parts);
    Ok(Extracted {
        text,
        title,
        sections,
    })
}

/// A page's text with trailing spaces cut from each line, spaces between two Chinese or
/// Japanese characters removed (the extractor puts one between two runs of glyphs, which
/// those scripts do not write; Korean does, and keeps them), runs of blank lines made
/// one, and no blank lines at its ends.
fn tidy(page: &str) -> String {
    let mut out = String::with_capacity(page.len());
    let mut blank_run = false;
    for line in page.lines().map(str::trim_end).map(join_ideographs) {
        let line = line.as_str();
        if line.trim().is_empty() {
            blank_run = !out.is_empty();
            continue;
        }
        if blank_run {
            out.push('\n');
            blank_run = false;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The document information dictionary's `Title`, when it has a readable one.
fn document_title(document: &lopdf::Document) -> Option<String> {
    let info = document.trailer.get(b"Info").ok()?;
    let info = match info {
        lopdf::Object::Reference(id) => document.get_dictionary(*id).ok()?,
        lopdf::Object::Dictionary(d) => d,
        _ => return None,
    };
    let title = info.get(b"Title").ok()?;
    let text = lopdf::decode_text_string(title).ok()?;
    let text = text.trim().to_string();
    (!text.is_empty()).then_some(text)
}

/// `line` without the spaces that stand between two ideographic characters (Han, kana,
/// CJK punctuation and full-width forms).
fn join_ideographs(line: &str) -> String {
    let ideographic = |c: char| {
        (crate::store::cjk::is_cjk(c) && !crate::store::cjk::is_hangul(c))
            || ('\u{3000}'..='\u{303F}').contains(&c)
            || ('\u{FF00}'..='\u{FFEF}').contains(&c)
    };
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == ' ' {
            let mut j = i;
            while j < chars.len() && chars[j] == ' ' {
                j += 1;
            }
            let joined =
                i > 0 && j < chars.len() && ideographic(chars[i - 1]) && ideographic(chars[j]);
            if !joined {
                out.extend(&chars[i..j]);
            }
            i = j;
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}
