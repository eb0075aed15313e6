//! Reading the text of a link: label normalisation (CommonMark 4.7), URL schemes and
//! percent-decoding of destinations.

/// Normalises a link label for matching (CommonMark 4.7): trims, collapses inner
/// whitespace to one space and case-folds (lower, upper, lower — as markdown-rs does,
/// so `ß` matches `SS`).
pub fn normalize_label(label: &str) -> String {
    let collapsed = label.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed.to_lowercase().to_uppercase().to_lowercase()
}

/// True when `url` starts with a URL scheme (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":")
/// or is protocol-relative (`//host`).
pub fn has_scheme(url: &str) -> bool {
    if url.starts_with("//") {
        return true;
    }
    let Some(colon) = url.find(':') else {
        return false;
    };
    let scheme = &url[..colon];
    // One letter would be a Windows drive; treat it as a path.
    scheme.len() > 1
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Percent-decodes a destination (RFC 3986); invalid UTF-8 after decoding keeps the input.
pub fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8()
        .map_or_else(|_| s.to_string(), |c| c.into_owned())
}

/// True when an odd number of backslashes stands right before byte `at` of `text`: the
/// character there is escaped (CommonMark 2.4).
pub(super) fn is_escaped(text: &str, at: usize) -> bool {
    let preceding = text.as_bytes()[..at]
        .iter()
        .rev()
        .take_while(|&&b| b == b'\\')
        .count();
    preceding % 2 == 1
}
