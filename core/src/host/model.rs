//! The parsed model of every document, kept between calls for link queries and moves.
//!
//! The first use loads the whole workspace; later uses walk the root again (cheap: no
//! reads) and re-read only files whose size or modification time changed, so edits
//! made by other programs are seen. A change in the set of other files (assets, folders)
//! reloads everything, since link resolution depends on it.

use std::collections::HashMap;
use std::time::SystemTime;

use crate::workspace::{DocEntry, Origin, Workspace, read_markdown, scan};

use super::{Host, HostError, HostResult};

/// A file's size and modification time, to notice changes without reading it.
type Stamp = (u64, Option<SystemTime>);

/// The cached model.
#[derive(Debug)]
pub struct Model {
    ws: Workspace,
    stamps: HashMap<String, Stamp>,
    others: Vec<String>,
}

fn stamp(path: &std::path::Path) -> Option<Stamp> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()))
}

impl Host {
    /// Runs `f` on the current model of the workspace (refreshed first).
    pub(crate) fn with_workspace<T>(
        &self,
        f: impl FnOnce(&Workspace) -> HostResult<T>,
    ) -> HostResult<T> {
        let mut guard = self.model.lock().map_err(HostError::internal)?;
        let scanned = scan(&self.root, &self.config).map_err(HostError::internal)?;
        let reload = match guard.as_ref() {
            None => true,
            Some(m) => m.others != scanned.other,
        };
        if reload {
            let (ws, _) =
                Workspace::load(&self.root, self.config.clone()).map_err(HostError::internal)?;
            let stamps = scanned
                .markdown
                .iter()
                .filter_map(|p| Some((p.clone(), stamp(&self.root.join(p))?)))
                .collect();
            *guard = Some(Model {
                ws,
                stamps,
                others: scanned.other,
            });
        } else if let Some(model) = guard.as_mut() {
            let cap = self.config.index.max_file_size;
            let mut seen = std::collections::HashSet::new();
            for path in &scanned.markdown {
                seen.insert(path.as_str());
                let abs = self.root.join(path);
                let now = stamp(&abs);
                if now.is_some() && model.stamps.get(path) == now.as_ref() {
                    continue;
                }
                match read_markdown(&abs, cap) {
                    Ok(text) => {
                        model
                            .ws
                            .insert(path.clone(), DocEntry::new(&text, 0, Origin::Disk));
                        if let Some(s) = now {
                            model.stamps.insert(path.clone(), s);
                        }
                    }
                    Err(_) => {
                        // Now too large, binary or unreadable: it still exists, as a file.
                        model.ws.remove(path);
                        model.ws.add_other(path);
                        model.stamps.remove(path);
                    }
                }
            }
            // Every document the scan no longer finds, including those whose stamp
            // `invalidate` dropped after a write (a moved or deleted file).
            let vanished: Vec<String> = model
                .ws
                .document_paths()
                .filter(|p| !seen.contains(p))
                .map(str::to_string)
                .collect();
            for path in vanished {
                model.ws.remove(&path);
                model.stamps.remove(&path);
            }
        }
        f(&guard.as_ref().expect("loaded above").ws)
    }

    /// [`Host::with_workspace`] with some documents' text replaced (editor buffers, by
    /// path). Those documents are re-read from disk on the next use.
    pub(crate) fn with_workspace_overlay<T>(
        &self,
        overlay: &HashMap<String, String>,
        f: impl FnOnce(&Workspace) -> HostResult<T>,
    ) -> HostResult<T> {
        if overlay.is_empty() {
            return self.with_workspace(f);
        }
        self.with_workspace(|_| Ok(()))?;
        let mut guard = self.model.lock().map_err(HostError::internal)?;
        let model = guard.as_mut().expect("loaded above");
        for (path, text) in overlay {
            if model.ws.get(path).is_some() {
                model
                    .ws
                    .insert(path.clone(), DocEntry::new(text, 0, Origin::Editor));
                model.stamps.remove(path);
            }
        }
        f(&model.ws)
    }

    /// Forgets what is known about `path` so the next use re-reads it.
    pub(crate) fn invalidate(&self, path: &str) {
        if let Ok(mut guard) = self.model.lock()
            && let Some(model) = guard.as_mut()
        {
            model.stamps.remove(path);
        }
    }
}
