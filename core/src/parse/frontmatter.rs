//! Frontmatter: the YAML (`---`) or TOML (`+++`) block at the start of a document, read
//! as JSON metadata.

/// Reads YAML frontmatter: a mapping is the document's metadata, any other value (a bare
/// string or list) is none; the error says why the YAML is not valid.
pub(super) fn read_yaml(source: &str) -> Result<Option<serde_json::Value>, String> {
    match serde_norway::from_str::<serde_json::Value>(source) {
        Ok(v) if v.is_object() => Ok(Some(v)),
        Ok(_) => Ok(None),
        Err(e) => Err(format!("frontmatter is not valid YAML: {e}")),
    }
}

/// Reads TOML frontmatter (a TOML document is always a table); the error says why the
/// TOML is not valid.
pub(super) fn read_toml(source: &str) -> Result<Option<serde_json::Value>, String> {
    match toml::from_str::<serde_json::Value>(source) {
        Ok(v) => Ok(Some(v)),
        Err(e) => Err(format!("frontmatter is not valid TOML: {e}")),
    }
}
