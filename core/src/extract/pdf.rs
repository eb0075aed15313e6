//! PDF through `pdf-extract` (on `lopdf`): the text of each page in reading order, one
//! section per page carrying its page number, the pages joined by a blank line.
//!
//! Why this library: it is pure Rust (it builds offline, with no system library such as
//! Poppler, MuPDF or PDFium), has been kept since 2016, reads pages separately, and maps
//! glyphs to text through each font's ToUnicode map and encodings, which CJK text needs;
//! `lopdf` beneath it is the most used PDF object reader in Rust. A document encrypted
//! with a user password is refused; one encrypted with the empty password only (many are,
//! to carry permission flags) is read.

use crate::formats::{ExtractError, Extracted, Section};

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
    check_forms(&document)?;
    let extracted = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem_by_pages(bytes));
    let pages = match extracted {
        Ok(Ok(pages)) => pages,
        Ok(Err(pdf_extract::OutputError::PdfError(lopdf::Error::Decryption(_)))) => {
            return Err(ExtractError::Encrypted);
        }
        // pdf-extract stops at the first font it cannot map (it panics on a CJK font
        // with a predefined CMap such as UniJIS-UCS2-H): lopdf's own text reader, page
        // by page, keeps the pages it can read.
        Ok(Err(_)) | Err(_) => pages_by_lopdf(&document)
            .ok_or_else(|| malformed("no page's text could be read".into()))?,
    };
    drop(document);
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

/// The text of each page as `lopdf` reads it (an empty page where it fails), or `None`
/// when it reads no page at all.
fn pages_by_lopdf(document: &lopdf::Document) -> Option<Vec<String>> {
    let numbers: Vec<u32> = document.get_pages().into_keys().collect();
    let pages: Vec<Option<String>> = numbers
        .iter()
        .map(|&n| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| document.extract_text(&[n])))
                .ok()
                .and_then(Result::ok)
        })
        .collect();
    pages
        .iter()
        .any(Option::is_some)
        .then(|| pages.into_iter().map(Option::unwrap_or_default).collect())
}

/// How deep form XObjects may nest in one another (drawn inside each other) before a
/// document is refused: the extractor follows them by recursion.
const MAX_FORM_DEPTH: usize = 32;

/// Refuses a document whose form XObjects draw themselves, directly or through others,
/// or nest deeper than [`MAX_FORM_DEPTH`]: the extractor draws a form by recursion and
/// would never return (its thread's stack overflows, which ends the process, not the
/// thread). Read from the pages' and forms' `/Resources /XObject` dictionaries.
fn check_forms(document: &lopdf::Document) -> Result<(), ExtractError> {
    let mut checked = std::collections::HashSet::new();
    for page in document.get_pages().into_values() {
        let Ok((own, inherited)) = document.get_page_resources(page) else {
            continue;
        };
        let inherited = inherited
            .into_iter()
            .filter_map(|id| document.get_dictionary(id).ok());
        for resources in own.into_iter().chain(inherited) {
            for form in xobjects(document, resources) {
                check_form(document, form, &mut Vec::new(), &mut checked)?;
            }
        }
    }
    Ok(())
}

/// The object ids of the XObjects a `/Resources` dictionary names.
fn xobjects(document: &lopdf::Document, resources: &lopdf::Dictionary) -> Vec<lopdf::ObjectId> {
    let Ok(entry) = resources.get(b"XObject") else {
        return Vec::new();
    };
    let Ok((_, dict)) = document.dereference(entry) else {
        return Vec::new();
    };
    let Ok(dict) = dict.as_dict() else {
        return Vec::new();
    };
    dict.iter()
        .filter_map(|(_, v)| v.as_reference().ok())
        .collect()
}

fn check_form(
    document: &lopdf::Document,
    id: lopdf::ObjectId,
    path: &mut Vec<lopdf::ObjectId>,
    checked: &mut std::collections::HashSet<lopdf::ObjectId>,
) -> Result<(), ExtractError> {
    if checked.contains(&id) {
        return Ok(());
    }
    let refuse = |why: String| ExtractError::Malformed {
        format: "pdf".into(),
        message: why,
    };
    if path.contains(&id) {
        return Err(refuse(format!(
            "its form XObject {} {} R draws itself (an object loop)",
            id.0, id.1
        )));
    }
    if path.len() >= MAX_FORM_DEPTH {
        return Err(refuse(format!(
            "its form XObjects nest more than {MAX_FORM_DEPTH} deep"
        )));
    }
    let Ok(stream) = document.get_object(id).and_then(lopdf::Object::as_stream) else {
        return Ok(());
    };
    let resources = stream
        .dict
        .get(b"Resources")
        .ok()
        .and_then(|r| document.dereference(r).ok())
        .and_then(|(_, r)| r.as_dict().ok());
    if let Some(resources) = resources {
        path.push(id);
        for inner in xobjects(document, resources) {
            check_form(document, inner, path, checked)?;
        }
        path.pop();
    }
    checked.insert(id);
    Ok(())
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
