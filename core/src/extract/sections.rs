//! Sections to search chunks: the lines of each section cut under the byte budget at
//! blank lines (else at line ends), a definition kept whole up to a hard cap; and the
//! sections of plain text.

use crate::pointer::{hash_bytes, hex};

use crate::formats::{Extracted, Section};
use crate::store::{ChunkRecord, Citation};

/// The pointer of a chunk of lines `start..=end` holding `text`:
/// `L<start>-<end>~<hash>~<hash>`, the XxHash64 of the text twice (the shape of an
/// element pointer). A read given it returns those lines while they still hash the same.
pub fn lines_pointer(start: u32, end: u32, text: &str) -> String {
    let hash = hex(hash_bytes(text.as_bytes()));
    format!("L{start}-{end}~{hash}~{hash}")
}

/// The lines a [`lines_pointer`] names, and its hash; `None` for any other string.
pub fn parse_lines_pointer(pointer: &str) -> Option<(u32, u32, &str)> {
    let rest = pointer.strip_prefix('L')?;
    let (lines, hashes) = rest.split_once('~')?;
    let (start, end) = lines.split_once('-')?;
    let (hash, again) = hashes.split_once('~')?;
    let (start, end): (u32, u32) = (start.parse().ok()?, end.parse().ok()?);
    (hash == again && hash.len() == 16 && start >= 1 && start <= end).then_some((start, end, hash))
}

/// How many times the budget a whole section (a definition) may take before it is cut.
const WHOLE_CAP_FACTOR: usize = 8;

/// Cuts each section of `extracted` into chunks of at most about `budget` bytes, as the
/// index stores them: each chunk's pointer is a [`lines_pointer`], its text its lines
/// (each ending in `\n` but the last), its heading path, page and definition its
/// section's. Lines outside every section (blank lines between them) belong to no chunk.
/// A section marked `whole` is one chunk up to `8 × budget` bytes, and cut like any other
/// beyond that.
pub fn chunk_sections(extracted: &Extracted, budget: usize) -> Vec<ChunkRecord> {
    let lines: Vec<&str> = extracted.text.split_inclusive('\n').collect();
    let mut out = Vec::new();
    for section in &extracted.sections {
        let first = section.start_line.max(1) as usize - 1;
        let last = (section.end_line as usize).min(lines.len());
        if first >= last {
            continue;
        }
        let cap = if section.whole {
            budget.saturating_mul(WHOLE_CAP_FACTOR)
        } else {
            budget
        };
        for (from, to) in cut(&lines[first..last], cap) {
            let text: String = lines[first + from..first + to].concat();
            let text = text.trim_end_matches(['\n', '\r']).to_string();
            if text.trim().is_empty() {
                continue;
            }
            let (start, end) = ((first + from + 1) as u32, (first + to) as u32);
            out.push(ChunkRecord {
                seq: out.len() as u32,
                pointer: lines_pointer(start, end, &text),
                heading_path: section.heading_path.clone(),
                start_line: start,
                end_line: end,
                text,
                citation: Citation {
                    page: section.page,
                    symbol_kind: section.symbol_kind.clone(),
                    symbol: section.symbol.clone(),
                },
            });
        }
    }
    out
}

/// Cuts `lines` into runs `[from, to)` of at most `cap` bytes: at the last blank line that
/// keeps a run under the cap, else at the last line that does; a single line over the cap
/// is a run of its own. Leading blank lines of a run are skipped.
fn cut(lines: &[&str], cap: usize) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        while i < lines.len() && lines[i].trim().is_empty() {
            i += 1;
        }
        if i == lines.len() {
            break;
        }
        let mut bytes = 0;
        let mut end = i;
        let mut last_blank = None;
        while end < lines.len() && (end == i || bytes + lines[end].len() <= cap) {
            bytes += lines[end].len();
            if lines[end].trim().is_empty() {
                last_blank = Some(end);
            }
            end += 1;
        }
        if end < lines.len()
            && let Some(blank) = last_blank.filter(|&b| b > i)
        {
            end = blank;
        }
        runs.push((i, end));
        i = end;
    }
    runs
}

/// Plain text as one section (the chunks are cut at its blank lines), lines ending in
/// `\n`.
pub(super) fn plain_text(text: &str) -> Extracted {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text).to_string();
    let lines = text.lines().count() as u32;
    Extracted {
        text,
        title: None,
        sections: vec![Section {
            start_line: 1,
            end_line: lines,
            ..Section::default()
        }],
    }
}

/// Joins `parts` (each a text and its sections, lines counted from 1 within it) into one
/// text, a blank line between two parts, the sections' lines shifted to the joined text.
pub(super) fn join(parts: Vec<(String, Vec<Section>)>) -> (String, Vec<Section>) {
    let mut text = String::new();
    let mut sections = Vec::new();
    let mut lines = 0u32;
    for (part, part_sections) in parts {
        let part = part.trim_end_matches('\n');
        if part.trim().is_empty() {
            continue;
        }
        if !text.is_empty() {
            text.push('\n');
            lines += 1;
        }
        let offset = lines;
        text.push_str(part);
        text.push('\n');
        lines += part.lines().count() as u32;
        sections.extend(part_sections.into_iter().map(|mut s| {
            s.start_line += offset;
            s.end_line += offset;
            s
        }));
    }
    (text, sections)
}
