//! Frontmatter: the YAML (`---`) or TOML (`+++`) block at the start of a document, read
//! as JSON metadata.

/// How the message of a frontmatter that does not parse begins ([`crate::parse::Parsed::frontmatter_problem`]).
pub(crate) const NOT_VALID: &str = "frontmatter is not valid";

/// Reads YAML frontmatter: a mapping is the document's metadata, any other value (a bare
/// string or list) is none; the error says why the YAML is not valid.
pub(super) fn read_yaml(source: &str) -> Result<Option<serde_json::Value>, String> {
    match serde_norway::from_str::<serde_json::Value>(source) {
        Ok(v) if v.is_object() => Ok(Some(v)),
        Ok(_) => Ok(None),
        Err(e) if e.location().is_some() => Err(format!(
            "{NOT_VALID} YAML: {e} (lines counted from the one after the opening `---`)"
        )),
        Err(e) => Err(format!("{NOT_VALID} YAML: {e}")),
    }
}

/// Reads TOML frontmatter (a TOML document is always a table); the error says why the
/// TOML is not valid.
pub(super) fn read_toml(source: &str) -> Result<Option<serde_json::Value>, String> {
    match toml::from_str::<serde_json::Value>(source) {
        Ok(v) => Ok(Some(v)),
        Err(e) => Err(format!("{NOT_VALID} TOML: {e}")),
    }
}

/// The quote around a wiki link that is a YAML frontmatter property's whole quoted value
/// (`up: "[[Home]]"`, `- '[[Project A]]'`, `[ "[[A]]", "[[B]]" ]`), as Obsidian reads
/// properties: `Some('"')` or `Some('\'')` when the link at `range` of `text` lies in the
/// document's YAML frontmatter (`frontmatter`, its byte range), the same quote stands right
/// before and right after it, that quote opens a value (after `key:`, `-`, `[` or `,`, or
/// alone on its line), its line is not a YAML comment, and its own text holds
/// neither that quote nor a backslash (which YAML would read as escapes). `None` for any
/// other `[[…]]` in frontmatter: in a comment, in an unquoted or block value (a YAML list
/// there), or among other words of a string.
pub fn property_link_quote(
    text: &str,
    frontmatter: &std::ops::Range<usize>,
    range: &std::ops::Range<usize>,
) -> Option<char> {
    if range.start <= frontmatter.start || range.end >= frontmatter.end {
        return None;
    }
    let bytes = text.as_bytes();
    let quote = bytes[range.start - 1];
    if !matches!(quote, b'"' | b'\'') || bytes.get(range.end) != Some(&quote) {
        return None;
    }
    // The value must open where a YAML value does: after `key:`, a list's `-`, or `[` or
    // `,` of a flow sequence (not inside a comment or a block scalar's text).
    let line_start = text[..range.start].rfind('\n').map_or(0, |i| i + 1);
    let before = text[line_start..range.start - 1].trim();
    if !(before.is_empty() || before.ends_with([':', '-', '[', ','])) || before.starts_with('#') {
        return None;
    }
    let inner = &text[range.clone()];
    if inner.contains(quote as char) || inner.contains('\\') {
        return None;
    }
    Some(quote as char)
}

/// The byte range of a YAML frontmatter block that opens `text`: from its first `---`
/// line through its closing `---` line (without the line break after it), as markdown-rs
/// reads one; `None` when the text does not start with one.
pub fn yaml_range(text: &str) -> Option<std::ops::Range<usize>> {
    let first_end = text.find('\n')?;
    if text[..first_end].trim_end() != "---" {
        return None;
    }
    let mut pos = first_end + 1;
    while pos < text.len() {
        let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
        if text[pos..end].trim_end() == "---" {
            return Some(0..end);
        }
        pos = end + 1;
    }
    None
}
