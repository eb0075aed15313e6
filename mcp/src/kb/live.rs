//! The live bridge, MCP side: documents open in an editor running `folio lsp` on this
//! root are read from the editor's buffer (unsaved changes included) and edited through
//! it (core `bridge`, DESIGN.md "The live bridge").
//!
//! Endpoints are looked up on every call (core `live_endpoints`: a folder listing and a
//! connect per socket), so an editor started or closed after this server is seen at
//! once; without a live `folio lsp` nothing here touches anything and every tool works
//! on disk as before. A write to an open document becomes one byte edit against the
//! buffer version that was read; the language server checks that version, sends a
//! versioned `workspace/applyEdit`, and answers only once the editor's buffer holds the
//! result. A refusal or a moved version is `CONFLICT` with nothing changed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use folio_core::bridge::{
    ApplyEditParams, BridgeClient, BridgeError, ByteEdit, ERR_NOT_OPEN, ERR_REFUSED, ERR_VERSION_CONFLICT,
    live_endpoints,
};
use folio_core::edit::fs::write_atomic;

use super::{ErrorCode, Kb, ToolError, ToolResult};

/// How long a bridge call may take. The language server gives the editor 5 s to answer
/// and 3 s more to report the change, so this only fires when `folio lsp` itself hangs.
pub const BRIDGE_TIMEOUT: Duration = Duration::from_secs(10);

/// A document open in an editor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buffer {
    /// The endpoint of the `folio lsp` serving that editor.
    pub endpoint: PathBuf,
    /// The editor's name (LSP `clientInfo.name`), e.g. `Neovim`.
    pub editor: String,
    /// The buffer's version.
    pub version: i32,
    /// The buffer's text.
    pub text: String,
}

/// Where a write landed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Landed {
    /// Written atomically to the file.
    Disk,
    /// Applied to the buffer of the named editor (the file is the editor's to save).
    Editor(String),
}

impl Landed {
    /// `"disk"` or `"editor"`, for `appliedTo`.
    pub fn applied_to(&self) -> String {
        match self {
            Landed::Disk => "disk".to_string(),
            Landed::Editor(_) => "editor".to_string(),
        }
    }

    /// The editor's name, for `editor`.
    pub fn editor(&self) -> Option<String> {
        match self {
            Landed::Disk => None,
            Landed::Editor(name) => Some(name.clone()),
        }
    }
}

fn unreachable_bridge(err: &BridgeError) -> ToolError {
    ToolError::new(
        ErrorCode::Busy,
        format!("an editor's folio lsp did not answer ({err}); nothing was changed, try again or close that editor"),
    )
}

impl Kb {
    /// The live endpoints of this root.
    fn endpoints(&self) -> Vec<PathBuf> {
        live_endpoints(&self.bridge_dir, &self.root)
    }

    fn connect(&self, endpoint: &Path) -> ToolResult<BridgeClient> {
        BridgeClient::connect(endpoint, &self.root, BRIDGE_TIMEOUT).map_err(|e| match e {
            BridgeError::Remote { .. } => ToolError::new(ErrorCode::Internal, format!("editor bridge: {e}")),
            other => unreachable_bridge(&other),
        })
    }

    /// The editor buffer of `path` when an editor has it open (the first editor found
    /// when several do).
    ///
    /// Errors: an endpoint exists but does not answer within [`BRIDGE_TIMEOUT`] (`BUSY`):
    /// without its answer the disk copy may be stale.
    pub(crate) fn buffer(&self, path: &str) -> ToolResult<Option<Buffer>> {
        for endpoint in self.endpoints() {
            let mut client = self.connect(&endpoint)?;
            let open = client.open_documents().map_err(|e| unreachable_bridge(&e))?;
            if !open.iter().any(|d| d.path == path) {
                continue;
            }
            match client.read(path) {
                Ok(read) => {
                    return Ok(Some(Buffer {
                        endpoint,
                        editor: client.hello.editor.clone(),
                        version: read.version,
                        text: read.text,
                    }));
                }
                // Closed since the listing: the disk copy is current.
                Err(BridgeError::Remote { code: ERR_NOT_OPEN, .. }) => continue,
                Err(e) => return Err(unreachable_bridge(&e)),
            }
        }
        Ok(None)
    }

    /// The buffers of every document open in an editor on this root, by path.
    pub(crate) fn buffers(&self) -> ToolResult<std::collections::HashMap<String, Buffer>> {
        let mut out = std::collections::HashMap::new();
        for endpoint in self.endpoints() {
            let mut client = self.connect(&endpoint)?;
            for doc in client.open_documents().map_err(|e| unreachable_bridge(&e))? {
                if out.contains_key(&doc.path) {
                    continue;
                }
                match client.read(&doc.path) {
                    Ok(read) => {
                        let buffer = Buffer {
                            endpoint: endpoint.clone(),
                            editor: client.hello.editor.clone(),
                            version: read.version,
                            text: read.text,
                        };
                        out.insert(doc.path, buffer);
                    }
                    Err(BridgeError::Remote { code: ERR_NOT_OPEN, .. }) => {}
                    Err(e) => return Err(unreachable_bridge(&e)),
                }
            }
        }
        Ok(out)
    }

    /// Writes `new` as the content of `path`: into the editor's buffer when `buffer` is
    /// the document's open buffer (as read, `buffer.text` being the old content), else
    /// atomically to `abs`.
    ///
    /// Errors: `CONFLICT` when the editor refuses or its buffer moved since it was read
    /// (nothing changed), `BUSY` when the bridge stops answering.
    pub(crate) fn write_text(
        &self,
        path: &str,
        abs: &Path,
        buffer: Option<&Buffer>,
        new: &str,
        label: &str,
    ) -> ToolResult<Landed> {
        let Some(buffer) = buffer else {
            write_atomic(abs, new.as_bytes())
                .map_err(|e| ToolError::internal(format!("`{path}`: {e}")))?;
            return Ok(Landed::Disk);
        };
        let mut client = self.connect(&buffer.endpoint)?;
        let params = ApplyEditParams {
            path: path.to_string(),
            version: buffer.version,
            edits: minimal_edit(&buffer.text, new).into_iter().collect(),
            label: Some(format!("folio {label}")),
        };
        let editor = &buffer.editor;
        match client.apply_edit(&params) {
            Ok(result) if result.applied => Ok(Landed::Editor(editor.clone())),
            Ok(result) => Err(ToolError::new(
                ErrorCode::Conflict,
                format!(
                    "{editor} refused the edit of `{path}` ({}); nothing was changed",
                    result.failure_reason.as_deref().unwrap_or("no reason given")
                ),
            )),
            Err(BridgeError::Remote { code: ERR_VERSION_CONFLICT | ERR_NOT_OPEN | ERR_REFUSED, message, .. }) => {
                Err(ToolError::new(
                    ErrorCode::Conflict,
                    format!("`{path}` is open in {editor} and the edit could not be applied there: {message}; nothing was changed, read it again"),
                ))
            }
            Err(e @ BridgeError::Remote { .. }) => Err(ToolError::internal(format!("editor bridge: {e}"))),
            Err(e) => Err(unreachable_bridge(&e)),
        }
    }
}

/// The one replacement that turns `old` into `new`: the span between their common
/// prefix and common suffix (on character boundaries); `None` when they are equal.
pub fn minimal_edit(old: &str, new: &str) -> Option<ByteEdit> {
    if old == new {
        return None;
    }
    let mut prefix = old.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
    while !old.is_char_boundary(prefix) || !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let max_suffix = old.len().min(new.len()) - prefix;
    let mut suffix = old.bytes().rev().zip(new.bytes().rev()).take(max_suffix).take_while(|(a, b)| a == b).count();
    while !old.is_char_boundary(old.len() - suffix) || !new.is_char_boundary(new.len() - suffix) {
        suffix -= 1;
    }
    Some(ByteEdit { start: prefix, end: old.len() - suffix, new_text: new[prefix..new.len() - suffix].to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(old: &str, edit: &ByteEdit) -> String {
        format!("{}{}{}", &old[..edit.start], edit.new_text, &old[edit.end..])
    }

    #[test]
    fn minimal_edit_spans_only_the_difference() {
        assert_eq!(minimal_edit("abc", "abc"), None);
        let cases = [
            ("# A\n\nold\n", "# A\n\nnew\n"),
            ("aaa", "aaaa"),
            ("aaaa", "aa"),
            ("", "x"),
            ("x", ""),
            ("é😀z", "é😁z"),
            ("😀", "😁😀"),
        ];
        for (old, new) in cases {
            let edit = minimal_edit(old, new).unwrap();
            assert_eq!(apply(old, &edit), new, "{old:?} -> {new:?}: {edit:?}");
        }
        assert_eq!(
            minimal_edit("# A\n\nold\n", "# A\n\nnew\n"),
            Some(ByteEdit { start: 5, end: 8, new_text: "new".into() })
        );
    }
}
