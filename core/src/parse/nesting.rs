//! The nesting limits: which texts are too deeply nested for markdown-rs to parse safely.

/// Most container markers (`>`, list markers) at the start of one line that folio parses.
pub const MAX_CONTAINER_MARKERS: usize = 100;
/// Most columns of indentation before a list marker or `>` that folio parses.
pub const MAX_CONTAINER_INDENT: usize = 256;
/// Longest run of emphasis delimiters (`*`, `_`) or of `[` that folio parses.
pub const MAX_DELIMITER_RUN: usize = 1000;

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
