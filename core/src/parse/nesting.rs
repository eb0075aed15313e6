//! The nesting limits: which texts are too deeply nested, or hold too many inline
//! constructs in one block, for markdown-rs to parse safely.

/// Most container markers (`>`, list markers) at the start of one line that folio parses.
pub const MAX_CONTAINER_MARKERS: usize = 100;
/// Most columns of indentation before a list marker or `>` that folio parses.
pub const MAX_CONTAINER_INDENT: usize = 256;
/// Longest run of emphasis delimiters (`*`, `_`) or of `[` that folio parses.
pub const MAX_DELIMITER_RUN: usize = 1000;

/// Most inline openers (`[`, `*`, `_`, `` ` ``, `<`) in one block of lines without a
/// blank line, outside code fences. markdown-rs's inline pass takes time that grows with
/// the square of the constructs in one paragraph: 16,000 links in one paragraph took
/// 4.5 s in a debug build, 100,000 did not finish in 10 minutes. The largest block of the
/// corpora here holds 1,800 (foam-docs' index.md).
pub const MAX_INLINE_OPENERS_PER_BLOCK: usize = 20_000;

/// Why `text` is too deeply nested to parse safely, if it is.
///
/// markdown-rs recurses once per level of nesting and takes time that grows faster than
/// the nesting depth, so a small file with thousands of levels (`>>>>…`, `- - - …`,
/// hundreds of indented list levels, `****…x****…`) would exhaust a thread's stack or
/// take minutes. Real documents stay far below these limits; such a file is reported
/// instead of parsed.
pub fn nesting_problem(text: &str) -> Option<String> {
    for (n, line) in text.lines().enumerate() {
        let bytes = line.as_bytes();
        let (mut i, mut col, mut markers) = (0usize, 0usize, 0usize);
        loop {
            while i < bytes.len() && matches!(bytes[i], b' ' | b'\t') {
                col += if bytes[i] == b'\t' { 4 - col % 4 } else { 1 };
                i += 1;
            }
            let Some(&b) = bytes.get(i) else { break };
            let marker_len = match b {
                b'>' => 1,
                b'-' | b'*' | b'+' if matches!(bytes.get(i + 1), Some(b' ' | b'\t') | None) => 1,
                b'0'..=b'9' => {
                    let digits = bytes[i..].iter().take_while(|c| c.is_ascii_digit()).count();
                    match bytes.get(i + digits) {
                        Some(b'.' | b')')
                            if digits <= 9
                                && matches!(
                                    bytes.get(i + digits + 1),
                                    Some(b' ' | b'\t') | None
                                ) =>
                        {
                            digits + 1
                        }
                        _ => 0,
                    }
                }
                _ => 0,
            };
            if marker_len == 0 {
                break;
            }
            if col > MAX_CONTAINER_INDENT {
                return Some(format!(
                    "line {} is indented {col} columns before a list marker or `>` (limit {MAX_CONTAINER_INDENT})",
                    n + 1
                ));
            }
            markers += 1;
            if markers > MAX_CONTAINER_MARKERS {
                return Some(format!(
                    "line {} opens more than {MAX_CONTAINER_MARKERS} nested block quotes or lists",
                    n + 1
                ));
            }
            i += marker_len;
            col += marker_len;
        }
    }
    if let Some(reason) = crowded_block(text) {
        return Some(reason);
    }
    let mut run = 0usize;
    let mut prev = 0u8;
    for &b in text.as_bytes() {
        if matches!(b, b'*' | b'_' | b'[') && (b == prev || (b == b'[' && prev == b'!')) {
            run += 1;
        } else if matches!(b, b'*' | b'_' | b'[') {
            run = 1;
        } else if !(b == b'!' && prev == b'[') {
            run = 0;
        }
        if run > MAX_DELIMITER_RUN {
            return Some(format!(
                "a run of more than {MAX_DELIMITER_RUN} `*`, `_` or `[` characters"
            ));
        }
        prev = b;
    }
    None
}

/// The first block of lines (between blank lines, outside ``` and ~~~ fences) with more
/// than [`MAX_INLINE_OPENERS_PER_BLOCK`] inline openers, as a reason.
fn crowded_block(text: &str) -> Option<String> {
    let (mut fence, mut openers, mut first_line) = (None::<u8>, 0usize, 1usize);
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(&c) = trimmed.as_bytes().first()
            && matches!(c, b'`' | b'~')
            && trimmed.bytes().take_while(|&b| b == c).count() >= 3
        {
            fence = match fence {
                None => Some(c),
                Some(open) if open == c => None,
                other => other,
            };
            continue;
        }
        if fence.is_some() {
            continue;
        }
        if trimmed.is_empty() {
            (openers, first_line) = (0, n + 2);
            continue;
        }
        openers += line
            .bytes()
            .filter(|b| matches!(b, b'[' | b'*' | b'_' | b'`' | b'<'))
            .count();
        if openers > MAX_INLINE_OPENERS_PER_BLOCK {
            return Some(format!(
                "the block of lines from line {first_line} holds more than \
                 {MAX_INLINE_OPENERS_PER_BLOCK} links, emphasis or code spans without a blank line"
            ));
        }
    }
    None
}
