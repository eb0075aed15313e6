//! Multi-file writes a killed folio process left half done (a move whose links were
//! rewritten in some notes only): the language server can write, so it finishes them
//! when it opens a folder, before reading it, and tells the user what it did.

use std::path::PathBuf;

use folio_core::write::Writer;
use tower_lsp_server::ls_types::MessageType;

/// Finishes the interrupted writes of each of `folders` (the core journal's roll
/// forward, [`Writer::finish_interrupted`]); returns the window messages that say so.
/// Blocking: call it off the async threads.
pub(crate) fn finish(folders: &[PathBuf]) -> Vec<(MessageType, String)> {
    let mut messages = Vec::new();
    for folder in folders.iter().filter(|f| f.is_dir()) {
        match Writer::new(folder).finish_interrupted() {
            Ok((found, report)) => {
                for op in &found {
                    messages.push((
                        MessageType::INFO,
                        format!(
                            "folio finished what an interrupted folio process left half done in {}: {}",
                            folder.display(),
                            op.describe()
                        ),
                    ));
                }
                if !report.left.is_empty() {
                    messages.push((
                        MessageType::WARNING,
                        format!(
                            "folio left {} as it found it while finishing an interrupted move: \
                             it was changed after the interruption; check its links",
                            report.left.join(", ")
                        ),
                    ));
                }
            }
            Err(e) => messages.push((
                MessageType::WARNING,
                format!(
                    "folio could not finish an interrupted move in {}: {e}",
                    folder.display()
                ),
            )),
        }
    }
    messages
}
